import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

/// A transport in front of a fake server that refuses, change by change, the changes of some
/// objects (as a server refuses a writer's change of an object another user created), and can
/// fail its pulls.
actor RefusingObjectsTransport: SyncTransport {
    let server: FakeServer
    private var refused: [SyncObjectID: Set<SyncChange.Kind>] = [:]
    private(set) var sent: [SyncChange] = []
    private(set) var refusals = 0
    var failsPulls = false

    init(_ server: FakeServer) { self.server = server }

    /// Refuses the changes of an object of the kinds given (none: allows it again).
    func refuse(_ object: SyncObjectID, _ kinds: Set<SyncChange.Kind> = [.create, .update, .delete]) {
        refused[object] = kinds.isEmpty ? nil : kinds
    }

    func setFailsPulls(_ fails: Bool) { failsPulls = fails }

    func isRefused(_ change: SyncChange) -> Bool { refused[change.object]?.contains(change.kind) == true }

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
        sent += changes
        var receipts = try await server.push(changes.filter { !isRefused($0) })
        for change in changes where isRefused(change) {
            refusals += 1
            receipts.append(
                SyncReceipt(
                    idempotencyKey: change.idempotencyKey, serverID: "", serverVersion: 0,
                    outcome: .rejected(SyncRejection(code: .forbidden, message: "not yours"))))
        }
        return receipts
    }

    func pull(after cursor: String?) async throws -> SyncPull {
        if failsPulls { throw ServerUnavailable() }
        return try await server.pull(after: cursor)
    }
}

@Suite("Sync engine: changes the server refuses")
struct SyncRejectionTests {
    func engine(_ realm: Realm, _ transport: any SyncTransport) async throws -> SyncEngine {
        try await SyncEngine(
            realm: realm, transport: transport, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 2, sleep: { _ in }))
    }

    func discount(_ realm: Realm, _ id: String) async throws -> Int? {
        try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: id)?.discount }
    }

    @Test func aDiscardedUpdateShowsTheServersVersionAndItsLaterCorrections() async throws {
        let realm = try await openSyncRealm("discard-update")
        let server = FakeServer()
        let transport = RefusingObjectsTransport(server)
        let engine = try await engine(realm, transport)
        try await realm.write { _ = try $0.create(Card.self, value: ["id": "c1", "name": "Bakery", "discount": 5]) }
        #expect(try await engine.sync().pushed == 1)

        // The user may not change c1 any more: the edit is refused.
        await transport.refuse(card("c1"), [.update])
        try await realm.write { $0.object(ofType: Card.self, forPrimaryKey: "c1")!.discount = 50 }
        let refused = try await engine.sync()
        #expect(refused.rejections[card("c1")]?.code == .forbidden)
        let waiting = try await engine.rejectedChanges()
        #expect(waiting.count == 1)
        #expect(waiting.first?.kind == .update)
        let localValues: [String: SyncValue] = waiting.first?.localValues ?? [:]
        let expectedValues: [String: SyncValue] = ["discount": SyncValue.value(PropertyValue.int(50))]
        #expect(localValues == expectedValues)
        #expect(await engine.status(of: card("c1")) == .failed)

        // An admin corrects the card; while the refused change waits, the local value stays and
        // the change is not sent again.
        await server.edit(card("c1"), ["discount": .value(.int(7)), "name": .value(.string("Bakery (fixed)"))])
        _ = try await engine.sync()
        #expect(await transport.refusals == 1)
        #expect(try await discount(realm, "c1") == 50)
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c1")?.name } == "Bakery (fixed)")

        // Discarded: the server's version comes back, and so do its later corrections.
        try await engine.discard(card("c1"))
        #expect(try await engine.rejectedChanges().isEmpty)
        let restored = try await engine.sync()
        #expect(restored.failed.isEmpty)
        #expect(try await discount(realm, "c1") == 7)
        #expect(await engine.status(of: card("c1")) == .synced)
        await server.edit(card("c1"), ["discount": .value(.int(8))])
        _ = try await engine.sync()
        #expect(try await discount(realm, "c1") == 8)
        #expect(await transport.refusals == 1)
        #expect(await server.records[card("c1")]?.values["discount"] == .value(.int(8)))
        await #expect(throws: LiveObjectsError.self) { try await engine.discard(card("c1")) }
    }

    @Test func aRefusedChangeHoldsBackNothingElse() async throws {
        let realm = try await openSyncRealm("no-block")
        let server = FakeServer()
        let transport = RefusingObjectsTransport(server)
        let engine = try await engine(realm, transport)
        await transport.refuse(card("c2"))
        try await realm.write { r in
            for id in ["c1", "c2", "c3"] { _ = try r.create(Card.self, value: ["id": id, "name": id]) }
        }
        let first = try await engine.sync()
        #expect(first.pushed == 2)
        #expect(first.failed == [card("c2")])
        // The round ended: a later edit of c1 is sent alone, and c2 is not sent again.
        try await realm.write { $0.object(ofType: Card.self, forPrimaryKey: "c1")!.discount = 3 }
        let before = await transport.sent.count
        let second = try await engine.sync()
        #expect(second.pushed == 1)
        let sent = await transport.sent.dropFirst(before).map(\.object)
        #expect(sent == [card("c1")])
        #expect(await server.records[card("c1")]?.values["discount"] == .value(.int(3)))
        #expect(await engine.status(of: card("c1")) == .synced)
        #expect(await engine.status(of: card("c2")) == .failed)

        // Later local edits of c2 wait with its refused creation and go with its retry.
        try await realm.write { $0.object(ofType: Card.self, forPrimaryKey: "c2")!.discount = 9 }
        _ = try await engine.sync()
        #expect(await transport.refusals == 1)
        await transport.refuse(card("c2"), [])
        try await engine.retry(card("c2"))
        #expect(try await engine.sync().pushed == 1)
        #expect(await server.records[card("c2")]?.values["discount"] == .value(.int(9)))
        #expect(try await engine.rejectedChanges().isEmpty)
        #expect(await server.applications.values.allSatisfy { $0 == 1 })
    }

    @Test func aDiscardedCreationGoesAndADiscardedDeletionComesBack() async throws {
        let realm = try await openSyncRealm("discard-kinds")
        let server = FakeServer()
        let transport = RefusingObjectsTransport(server)
        let engine = try await engine(realm, transport)
        // Created by another device: a creation carries every property.
        await server.edit(
            card("theirs"),
            [
                "name": .value(.string("Theirs")), "discount": .value(.int(4)), "owner": .reference(nil),
                "photo": .value(.data(Data())),
            ])
        _ = try await engine.sync()
        await transport.refuse(card("new"), [.create])
        await transport.refuse(card("theirs"), [.delete])
        try await realm.write { r in
            _ = try r.create(Card.self, value: ["id": "new", "name": "New"])
            try r.delete(r.object(ofType: Card.self, forPrimaryKey: "theirs")!)
        }
        let report = try await engine.sync()
        #expect(report.failed == [card("new"), card("theirs")])
        let refusedChanges: [SyncRejectedChange] = try await engine.rejectedChanges()
        let kinds: [SyncChange.Kind] = refusedChanges.map(\.kind)
        #expect(refusedChanges.map(\.object) == [card("new"), card("theirs")])
        #expect(kinds == [SyncChange.Kind.create, SyncChange.Kind.delete])

        try await engine.discard(card("new"))
        try await engine.discard(card("theirs"))
        _ = try await engine.sync()
        let gone: String? = try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "new")?.id }
        #expect(gone == nil)
        #expect(try await discount(realm, "theirs") == 4)
        #expect(await server.records[card("new")] == nil)
        #expect(await server.liveRecords[card("theirs")] != nil)
        #expect(await transport.refusals == 2)
        let local = try await localState(realm)
        let remote = await serverState(server)
        #expect(differences(local, remote).isEmpty, "\(differences(local, remote))")
    }

    @Test func refusedChangesAreKeptAcrossRestarts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("refused-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Realm.Configuration(
            file: directory.appendingPathComponent("cards.json"), objectTypes: syncTypes)
        configuration.keepsHistory = true
        let server = FakeServer()
        let transport = RefusingObjectsTransport(server)
        await transport.refuse(card("c1"))
        var realm = try await Realm.open(configuration)
        var engine = try await engine(realm, transport)
        try await realm.write { _ = try $0.create(Card.self, value: ["id": "c1", "name": "Mine", "discount": 2]) }
        #expect(try await engine.sync().failed == [card("c1")])
        try await realm.close()

        realm = try await Realm.open(configuration)
        engine = try await self.engine(realm, transport)
        #expect(try await engine.rejectedChanges().map(\.object) == [card("c1")])
        #expect(try await engine.rejectedChanges().first?.rejection.message == "not yours")
        #expect(await engine.status(of: card("c1")) == .failed)
        _ = try await engine.sync()
        #expect(await transport.refusals == 1)
        try await engine.retry(card("c1"))
        try await realm.close()

        // The retry asked for before the restart is still asked for.
        realm = try await Realm.open(configuration)
        engine = try await self.engine(realm, transport)
        #expect(await engine.status(of: card("c1")) == .pending)
        await transport.refuse(card("c1"), [])
        #expect(try await engine.sync().pushed == 1)
        #expect(await server.records[card("c1")]?.values["discount"] == .value(.int(2)))
        #expect(await engine.status(of: card("c1")) == .synced)
        try await realm.close()
    }

    @Test func aFailedPullIsReportedAsAFailedPushIs() async throws {
        let realm = try await openSyncRealm("pull-failure")
        let server = FakeServer()
        let transport = RefusingObjectsTransport(server)
        let engine = try await engine(realm, transport)
        await server.edit(card("theirs"), ["name": .value(.string("Theirs"))])
        await transport.setFailsPulls(true)
        try await realm.write { _ = try $0.create(Card.self, value: ["id": "mine", "name": "Mine"]) }
        let report = try await engine.sync()
        #expect(report.pushed == 1)
        #expect(report.pullFailure?.code == .network)
        #expect(report.pullFailure?.message.contains("ServerUnavailable") == true)
        let notYet: String? = try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "theirs")?.id }
        #expect(notYet == nil)
        await transport.setFailsPulls(false)
        let next = try await engine.sync()
        #expect(next.pullFailure == nil)
        #expect(next.pulled >= 1)
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "theirs")?.name } == "Theirs")
    }
}
