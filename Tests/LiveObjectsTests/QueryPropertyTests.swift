import LiveObjects
import LiveObjectsTestSupport
import Testing

@Suite struct QueryPropertyTests {
    /// Random data, random predicates and sorts; every answer must equal the reference's
    /// (`QueryPropertyRun` says what is asked and how).
    ///
    /// `LIVEOBJECTS_QUERY_SEED` (a number, or `random`) and `LIVEOBJECTS_QUERY_ITERATIONS`
    /// change the seed and the number of data sets.
    @Test func randomQueriesMatchTheReferenceModel() async throws {
        let configuration = QueryPropertyConfiguration.fromEnvironment()
        print(
            "QueryPropertyTests: seed \(configuration.seed), \(configuration.iterations) iterations (LIVEOBJECTS_QUERY_SEED, LIVEOBJECTS_QUERY_ITERATIONS)"
        )
        let report = try await QueryPropertyRun.run(configuration)
        for problem in report.problems { Issue.record(Comment(rawValue: problem)) }
        let checked = report.counts
        print(
            "QueryPropertyTests: checked \(checked.text) text queries (\(checked.selective) matching some but not all "
                + "objects), \(checked.typed) typed, \(checked.foundation) as Foundation predicates, \(checked.descriptors) with "
                + "sort descriptors")
        if report.failedQueries == 0 {
            #expect(checked.text == configuration.iterations * 2 * configuration.queriesPerRound)
            #expect(checked.typed > checked.text / 3)
            #expect(checked.foundation > checked.text / 5)
            // The predicates are not mostly trivially true or false.
            #expect(checked.selective > checked.text / 3)
        }
    }
}
