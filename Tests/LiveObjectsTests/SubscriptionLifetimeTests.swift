import LiveObjects
import Testing

final class Ticket: Object {
    @Persisted(primaryKey: true) var id = 0
}

/// A `changes()` sequence that is dropped without ever being iterated ends its subscription:
/// with room for two subscriptions, a dozen dropped ones never hit the limit.
@Suite struct SubscriptionLifetimeTests {
    @Test func droppedSequencesThatWereNeverIteratedFreeTheirSubscription() async throws {
        var configuration = Realm.Configuration(identifier: "subscription-lifetime", objectTypes: [Ticket.self])
        configuration.maximumSubscriptions = 2
        let realm = try await Realm.open(configuration)
        for i in 0..<6 {
            do {
                _ = try await realm.changes()
                _ = try await realm.read { r in _ = r.objects(Ticket.self).changes() }
            } catch {
                Issue.record("round \(i): a dropped subscription still counted: \(error)")
            }
            try await realm.write { r in _ = try r.create(Ticket.self, value: ["id": i]) }
        }
        // Two kept ones still fit after all that.
        let kept = try await realm.changes()
        let keptResults = try await realm.read { r in r.objects(Ticket.self).changes() }
        var iterator = keptResults.makeAsyncIterator()
        #expect(await iterator.next()?.snapshot.count == 6)
        _ = kept
    }
}
