/// The frame of a seeded randomized test: a seed from an environment variable (or the test's
/// own), a number of steps by ``TestEnvironment/isLong``, and on failure the seed, the variable
/// that replays it and every operation, printed.
package enum SeededRun {
    /// Runs `body` with a generator and a log of operations; returns what went wrong (nil when
    /// nothing did), after printing the seed and the log.
    ///
    /// - Parameters:
    ///   - name: The test's name, for the printed line.
    ///   - variable: The environment variable that replays a run (a number, or `random`).
    ///   - seed: The seed when the variable is not set.
    ///   - steps: The steps of a quick run and of a long one.
    ///   - body: Takes the steps, the generator and the log; returns a description of the
    ///     failure, or nil.
    package static func run(
        _ name: String, variable: String, seed defaultSeed: UInt64, steps: (quick: Int, long: Int),
        _ body: (Int, inout SeededRandomNumberGenerator, inout [String]) async throws -> String?
    ) async throws -> String? {
        let seed = TestEnvironment.seed(variable) ?? defaultSeed
        var rng = SeededRandomNumberGenerator(seed: seed)
        var log: [String] = []
        let failure = try await body(TestEnvironment.isLong ? steps.long : steps.quick, &rng, &log)
        if failure != nil {
            print("\(name): seed \(seed) (\(variable)); operations:\n  " + log.joined(separator: "\n  "))
        }
        return failure
    }
}
