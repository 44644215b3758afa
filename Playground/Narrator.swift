import LiveObjects
import Synchronization

/// A check that did not hold: the walkthrough stops, and the Playground prints
/// `Check failed: <message>` and exits with status 1.
struct CheckFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Tells a walkthrough as it runs: numbered steps, explanations, values, and checks.
///
/// ```
/// 2. Add an object with extreme values.
///    Int8.min, Int64.max, …
///    ✓ every value reads back unchanged
/// ```
///
/// Sendable: the step counter is behind a mutex, so a walkthrough's tasks can all narrate.
final class Narrator: Sendable {
    private let steps = Mutex(0)

    /// The heading of a walkthrough.
    func title(_ walkthrough: WalkthroughEntry) {
        Output.line("Playground: \(walkthrough.name) — \(walkthrough.summary)")
    }

    /// The closing line of a walkthrough that passed.
    func finish(_ walkthrough: WalkthroughEntry) {
        let count = steps.withLock { $0 }
        Output.line("\nDone: \(walkthrough.name), \(count) steps, every check passed.")
    }

    /// Starts a numbered step.
    func step(_ text: String) {
        let number = steps.withLock { (n: inout Int) -> Int in
            n += 1
            return n
        }
        Output.line("\n\(number). \(text)")
    }

    /// Explains or shows something within the current step; each line is indented.
    func say(_ text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            Output.line("   \(line)")
        }
    }

    /// Shows source code within the current step.
    func code(_ text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            Output.line("   │ \(line)")
        }
    }

    /// Checks a condition: prints `✓ description` when it holds.
    ///
    /// - Throws: ``CheckFailure`` naming the description (and `detail`, if any) when it does not.
    func check(_ condition: Bool, _ description: String, detail: @autoclosure () -> String = "") throws(CheckFailure) {
        guard condition else {
            let detail = detail()
            throw CheckFailure(message: detail.isEmpty ? description : "\(description) (\(detail))")
        }
        Output.line("   ✓ \(description)")
    }

    /// Checks that a value is the expected one: prints `✓ description` when it is.
    ///
    /// - Throws: ``CheckFailure`` with both values when it is not.
    func expect<T: Equatable>(_ actual: T, _ expected: T, _ description: String) throws(CheckFailure) {
        try check(actual == expected, description, detail: "expected \(expected), got \(actual)")
    }

    /// Checks that an optional holds a value, and returns it: prints `✓ description` when it does.
    ///
    /// - Throws: ``CheckFailure`` when it is nil.
    func unwrap<T>(_ value: T?, _ description: String) throws(CheckFailure) -> T {
        guard let value else { throw CheckFailure(message: "\(description) (got nil)") }
        Output.line("   ✓ \(description)")
        return value
    }

    /// Checks that `body` fails with a `LiveObjectsError` of the given code, and shows the error.
    ///
    /// - Returns: The error.
    /// - Throws: ``CheckFailure`` when `body` does not throw, or throws another error.
    @discardableResult
    func expectError(
        _ code: LiveObjectsError.Code, _ description: String, _ body: () async throws -> Void
    ) async throws(CheckFailure) -> LiveObjectsError {
        do {
            try await body()
        } catch let error as LiveObjectsError where error.code == code {
            Output.line("   ✓ \(description)")
            say("  \(error)")
            return error
        } catch {
            throw CheckFailure(message: "\(description) (expected a \(code) error, got: \(error))")
        }
        throw CheckFailure(message: "\(description) (expected a \(code) error, but nothing was thrown)")
    }
}
