import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

@Suite("Sync engine: a server that compacted its history")
struct SyncResetTests {
    func names(_ realm: Realm) async throws -> [String] {
        try await realm.read { $0.objects(Card.self).map(\.id).sorted() }
    }

    @Test func aDeviceOlderThanTheHorizonPullsAgainAndForgetsWhatTheServerDeleted() async throws {
        let server = FakeServer()
        for id in ["c1", "c2", "c3"] { await server.edit(card(id), ["name": .value(.string(id))]) }
        let realm = try await openSyncRealm("reset")
        let engine = try await SyncEngine(
            realm: realm, transport: server, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 2, sleep: { _ in }))
        #expect(try await engine.sync().pulled == 3)

        // Offline, the device makes a card and edits c3; meanwhile the server deletes c2 and
        // c3, edits c1 and forgets the deletions.
        try await realm.write { realm in
            _ = try realm.create(Card.self, value: ["id": "mine", "name": "new here"])
            realm.object(ofType: Card.self, forPrimaryKey: "c3")!.name = "edited here"
        }
        await server.delete(card("c2"))
        await server.delete(card("c3"))
        await server.edit(card("c1"), ["name": .value(.string("c1 again"))])
        await server.compactDeletions()

        let report = try await engine.sync()
        #expect(report.didReset && report.pullFailure == nil, "\(report)")
        // c2 is gone; c3, edited here, is a conflict with the server's deletion, kept for the
        // app; the new card reached the server.
        let cards = try await names(realm)
        #expect(!cards.contains("c2"), "\(cards)")
        #expect(cards.contains("mine") && cards.contains("c1"), "\(cards)")
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c1")?.name } == "c1 again")
        #expect(await server.liveRecords[card("mine")] != nil)

        // The next sync is an ordinary one.
        let next = try await engine.sync()
        #expect(!next.didReset && next.pullFailure == nil, "\(next)")
    }
}
