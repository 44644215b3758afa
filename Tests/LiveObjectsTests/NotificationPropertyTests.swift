import LiveObjects
import LiveObjectsTestSupport
import Testing

/// The randomized notification test: many seeded scenarios of subscriptions and writes, each
/// element checked against the scenario's own record (`NotificationScenario` says what is
/// checked). `LIVEOBJECTS_NOTIFY_SEED`, `LIVEOBJECTS_NOTIFY_ITERATIONS` and
/// `LIVEOBJECTS_NOTIFY_WRITES` change the run; a failure prints the seed to rerun.
@Suite struct NotificationPropertyTests {
    @Test func randomWritesProduceExactNotifications() async throws {
        let config = NotificationPropertyConfiguration.fromEnvironment()
        var master = SeededRandomNumberGenerator(seed: config.seed)
        for iteration in 0..<config.iterations {
            let scenarioSeed = master.next()
            let failures = try await NotificationScenario.run(seed: scenarioSeed, writes: config.writes)
            if !failures.isEmpty {
                Issue.record(
                    """
                    notification property failed: LIVEOBJECTS_NOTIFY_SEED=\(config.seed), iteration \(iteration) \
                    (scenario seed \(scenarioSeed)); rerun with LIVEOBJECTS_NOTIFY_SEED=\(config.seed)
                    \(failures.prefix(40).joined(separator: "\n"))
                    """)
                print("LIVEOBJECTS_NOTIFY_SEED=\(config.seed) failed at iteration \(iteration)")
                return
            }
        }
    }
}
