import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

/// Idempotency keys across devices, and a change whose answer was lost while another device
/// wrote after it (both found by the end-to-end test of the sync server, SyncServer/), and
/// refusals that are not tried again.
@Suite("Sync keys, lost answers and refusals")
struct SyncKeyTests {
    func engine(_ realm: Realm, _ server: FakeServer) async throws -> SyncEngine {
        try await SyncEngine(
            realm: realm, transport: server, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 1, sleep: { _ in }))
    }

    func name(_ realm: Realm, _ id: String) async throws -> String? {
        try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: id)?.name }
    }

    @Test func twoDevicesWithTheSameHistoryMakeDifferentKeys() async throws {
        // Both devices create the same card in their first commit: same object, same history
        // token. The second is a later write, not a repeat of the first.
        let server = FakeServer()
        let phone = try await openSyncRealm("phone")
        let tablet = try await openSyncRealm("tablet")
        let phoneEngine = try await engine(phone, server)
        let tabletEngine = try await engine(tablet, server)
        try await phone.write { _ = try $0.create(Card.self, value: ["id": "c1", "name": "Phone"]) }
        try await tablet.write { _ = try $0.create(Card.self, value: ["id": "c1", "name": "Tablet"]) }
        #expect(try await phoneEngine.sync().pushed == 1)
        #expect(try await tabletEngine.sync().pushed == 1)
        #expect(await server.applications.count == 2)
        #expect(await server.records[card("c1")]?.values["name"] == .value(.string("Tablet")))
        try await phoneEngine.sync()
        #expect(try await name(phone, "c1") == "Tablet")
    }

    @Test func aChangeWhoseAnswerWasLostDoesNotOutliveALaterWrite() async throws {
        let server = FakeServer()
        let phone = try await openSyncRealm("phone")
        let engine = try await engine(phone, server)
        try await phone.write { _ = try $0.create(Card.self, value: ["id": "c1", "name": "First"]) }
        try await engine.sync()

        // The rename reaches the server, but its answer is lost.
        try await phone.write { $0.object(ofType: Card.self, forPrimaryKey: "c1")!.name = "Phone" }
        await server.setFaults(Faults(failAfter: 1))
        #expect(try await engine.push().failed == [card("c1")])
        await server.setFaults(.none)
        #expect(await server.records[card("c1")]?.values["name"] == .value(.string("Phone")))
        // Another device renames it after that.
        await server.edit(card("c1"), ["name": .value(.string("Tablet"))])

        // The phone pulls first: its rename looks unsent, so its name stays. Then the rename is
        // sent again and answered with its first receipt, older than the tablet's write: the
        // tablet's name is the last write, on the server and then on the phone.
        try await engine.pull()
        try await engine.sync()
        #expect(await server.records[card("c1")]?.values["name"] == .value(.string("Tablet")))
        #expect(try await name(phone, "c1") == "Tablet")
    }

    @Test func aDeletionWhoseAnswerWasLostDoesNotOutliveALaterRecreation() async throws {
        let server = FakeServer()
        let phone = try await openSyncRealm("phone")
        let engine = try await engine(phone, server)
        try await phone.write { _ = try $0.create(Card.self, value: ["id": "c1", "name": "First"]) }
        try await engine.sync()

        // The deletion reaches the server, but its answer is lost.
        try await phone.write { try $0.delete($0.object(ofType: Card.self, forPrimaryKey: "c1")!) }
        await server.setFaults(Faults(failAfter: 1))
        #expect(try await engine.push().failed == [card("c1")])
        await server.setFaults(.none)
        #expect(await server.records[card("c1")]?.isDeleted == true)
        // Another device keeps the card after that (a conflict resolved with keepLocal).
        await server.edit(card("c1"), ["name": .value(.string("Kept"))])

        // The phone pulls first: its deletion looks unsent, so the card stays deleted here. The
        // deletion's first receipt is older than the re-creation: the card comes back.
        try await engine.pull()
        try await engine.sync()
        #expect(await server.records[card("c1")]?.isDeleted == false)
        #expect(try await name(phone, "c1") == "Kept")
    }

    /// A transport whose server refuses, or cannot be reached, on every request.
    actor Refusing: SyncTransport {
        let error: SyncHTTPError
        private(set) var pushes = 0
        private(set) var pulls = 0

        init(_ error: SyncHTTPError) { self.error = error }

        func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
            pushes += 1
            throw error
        }

        func pull(after cursor: String?) async throws -> SyncPull {
            pulls += 1
            throw error
        }
    }

    @Test(arguments: [SyncHTTPError.Code.forbidden, .unauthorized, .badRequest])
    func aRefusalIsNotTriedAgain(code: SyncHTTPError.Code) async throws {
        let realm = try await openSyncRealm("refused")
        let transport = Refusing(SyncHTTPError(code, "no", status: 403))
        let engine = try await SyncEngine(
            realm: realm, transport: transport, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 5, sleep: { _ in }))
        try await realm.write { _ = try $0.create(Card.self, value: ["id": "c1"]) }
        let report = try await engine.push()
        #expect(await transport.pushes == 1)
        #expect(report.failed == [card("c1")])
        #expect(report.rejections[card("c1")]?.code == code)
        #expect(await engine.status(of: card("c1")) == .failed)
        // A refused pull is reported as a refused push is, not thrown.
        let pulled = try await engine.pull()
        #expect(pulled.pullFailure?.code == code)
        #expect(await transport.pulls == 1)
        let synced = try await engine.sync()
        #expect(synced.failed == [card("c1")])
        #expect(synced.pullFailure?.code == code)
    }

    @Test func aNetworkFailureIsTriedAgain() async throws {
        let realm = try await openSyncRealm("unreachable")
        let transport = Refusing(SyncHTTPError(.network, "down"))
        let engine = try await SyncEngine(
            realm: realm, transport: transport, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 5, sleep: { _ in }))
        try await realm.write { _ = try $0.create(Card.self, value: ["id": "c1"]) }
        #expect(try await engine.push().failed == [card("c1")])
        #expect(await transport.pushes == 5)
        #expect(try await engine.pull().pullFailure?.code == .network)
        #expect(await transport.pulls == 5)
    }
}

@Suite("Sync idempotency keys")
struct SyncIdempotencyKeyTests {
    actor KeyRecorder: SyncTransport {
        let server = FakeServer()
        private(set) var keys: [String] = []
        func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
            keys += changes.map(\.idempotencyKey)
            return try await server.push(changes)
        }
        func pull(after cursor: String?) async throws -> SyncPull { try await server.pull(after: cursor) }
    }

    @Test func aLongPrimaryKeyStillMakesAShortKeyOfItsOwn() async throws {
        let realm = try await openSyncRealm("long")
        let transport = KeyRecorder()
        let engine = try await SyncEngine(
            realm: realm, transport: transport, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 1, sleep: { _ in }))
        let long = String(repeating: "ключ", count: 200)
        try await realm.write { realm in
            _ = try realm.create(Card.self, value: ["id": long + "a", "name": "A"])
            _ = try realm.create(Card.self, value: ["id": long + "b", "name": "B"])
            _ = try realm.create(Card.self, value: ["id": "short", "name": "C"])
        }
        #expect(try await engine.sync().pushed == 3)
        let keys = await transport.keys
        #expect(keys.count == 3 && Set(keys).count == 3, "\(keys)")
        #expect(keys.allSatisfy { $0.utf8.count <= 256 }, "\(keys.map(\.utf8.count))")
        #expect(keys.contains { $0.contains(#"Card["short"]@"#) })
    }
}
