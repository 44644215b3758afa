import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// The model-based property test: random sequences of writes against a realm and a plain-Swift
/// reference model, checked after every operation. See "Property-based tests" in the README for
/// running more sequences or replaying a seed.
@Suite struct PropertyTests {
    @Test func randomOperationSequences() async {
        let configuration = PropertyTestConfiguration.fromEnvironment()
        let report = await PropertyHarness.runSequences(configuration)
        if let failure = report.failure {
            print(failure)
            Issue.record(Comment(rawValue: failure.description))
        }
        #expect(report.sequencesRun == configuration.sequences)
    }
}
