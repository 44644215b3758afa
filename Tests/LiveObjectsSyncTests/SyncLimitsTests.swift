import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncProtocol
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

/// A fake server with limits: it advertises them, and records the size of every push as the
/// HTTP transport would send it.
actor LimitedServer: SyncTransport {
    let server: FakeServer
    let advertised: SyncLimits
    private(set) var pushes: [(changes: Int, bytes: Int)] = []

    init(_ server: FakeServer, _ limits: SyncLimits) {
        self.server = server
        advertised = limits
    }

    func limits() async throws -> SyncLimits { advertised }

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
        let body = try WirePushRequest(changes: changes.map(WireChange.init)).jsonBytes()
        pushes.append((changes.count, body.count))
        return try await server.push(changes)
    }

    func pull(after cursor: String?) async throws -> SyncPull { try await server.pull(after: cursor) }
}

@Suite("Sync limits and text")
struct SyncLimitsTests {
    @Test func changesOverTheLimitsOrHoldingNULAreRefusedOnTheDeviceAndHoldNothingBack() async throws {
        let fake = FakeServer()
        let limits = SyncLimits(
            maximumPushBytes: 64 << 10, maximumChangesPerPush: 3, maximumNameBytes: 512, maximumIDBytes: 100)
        let server = LimitedServer(fake, limits)
        let realm = try await openSyncRealm("limits")
        let engine = try await SyncEngine(
            realm: realm, transport: server, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 1, sleep: { _ in }))
        // In one write: a card too large, a card holding NUL (in its name), a holder with NUL
        // in its id, a photo too large (a large payload: its card's other values still go), and
        // twenty cards of 10 kB that fit only a few to a push.
        try await realm.write { r in
            _ = try r.create(Card.self, value: ["id": "big", "name": String(repeating: "x", count: 100_000)])
            _ = try r.create(Card.self, value: ["id": "nul", "name": "a\u{0}b"])
            _ = try r.create(Holder.self, value: ["id": "h\u{0}", "name": "Ann"])
            _ = try r.create(Holder.self, value: ["id": String(repeating: "h", count: 101), "name": "Long"])
            _ = try r.create(Card.self, value: ["id": "photo", "name": "Photo", "photo": Data(count: 70_000)])
            for i in 0..<20 {
                _ = try r.create(Card.self, value: ["id": "c\(i)", "name": String(repeating: "y", count: 10_000)])
            }
        }
        let report = try await engine.sync()
        #expect(report.pushed == 21)
        #expect(report.rejections[card("big")]?.code == .tooLarge)
        #expect(report.rejections[card("big")]?.message.contains(#"Card["big"]"#) == true)
        #expect(report.rejections[card("nul")]?.code == .invalidText)
        #expect(report.rejections[holder("h\u{0}")]?.code == .invalidText)
        #expect(report.rejections[card("photo")]?.code == .tooLarge)
        #expect(report.rejections[holder(String(repeating: "h", count: 101))]?.code == .tooLarge)
        #expect(report.rejections.count == 5)
        for refused in [card("big"), card("nul"), holder("h\u{0}"), card("photo")] {
            #expect(await engine.status(of: refused) == .failed)
        }
        #expect(await engine.status(of: card("c19")) == .synced)
        // Nothing refused reached the server; the card of the photo did, without it.
        let records = await fake.records
        #expect(records[card("big")] == nil && records[card("nul")] == nil && records[holder("h\u{0}")] == nil)
        #expect(records[card("photo")]?.values["name"] == .value(.string("Photo")))
        // Every push fits the limits.
        let pushes = await server.pushes
        #expect(pushes.allSatisfy { $0.changes <= 3 && $0.bytes <= 64 << 10 }, "\(pushes)")
        #expect(pushes.count >= 7, "\(pushes)")

        // Held for the app like a refusal of the server: not sent again unedited.
        #expect(try await engine.rejectedChanges().count == 5)
        let unedited = try await engine.sync()
        #expect(unedited.pushed == 0 && unedited.rejections.isEmpty)

        // Made to fit: an edit is a retry, sent at the next sync.
        try await realm.write { r in
            r.object(ofType: Card.self, forPrimaryKey: "big")!.name = "Bakery"
            r.object(ofType: Card.self, forPrimaryKey: "nul")!.name = "ab"
            r.object(ofType: Card.self, forPrimaryKey: "photo")!.photo = Data(count: 10)
        }
        let second = try await engine.sync()
        #expect(second.rejections.isEmpty)
        #expect(second.pushed == 3)  // big and nul whole, and the photo
        #expect(await fake.records[card("big")]?.values["name"] == .value(.string("Bakery")))
        #expect(await fake.records[card("photo")]?.values["photo"] == .value(.data(Data(count: 10))))
        for fitted in [card("big"), card("nul"), card("photo")] {
            #expect(await engine.status(of: fitted) == .synced)
        }
        // The holders' ids keep their NUL and their length: still held, and an edit of one is
        // refused again.
        #expect(try await engine.rejectedChanges().count == 2)
        try await realm.write { r in
            r.object(ofType: Holder.self, forPrimaryKey: "h\u{0}")!.name = "Bea"
        }
        let third = try await engine.sync()
        #expect(third.rejections[holder("h\u{0}")]?.code == .invalidText)
        #expect(third.pushed == 0)
        #expect(await fake.records[holder("h\u{0}")] == nil)
    }

    @Test func aTransportWithoutLimitsSendsEveryChange() async throws {
        let fake = FakeServer()
        let realm = try await openSyncRealm("unlimited")
        let engine = try await SyncEngine(
            realm: realm, transport: fake, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 1, sleep: { _ in }))
        try await realm.write { r in
            _ = try r.create(Card.self, value: ["id": "big", "name": String(repeating: "x", count: 100_000)])
        }
        #expect(try await fake.limits() == SyncLimits())
        #expect(try await engine.sync().pushed == 1)
    }

    @Test func theSchemaOfTheSyncedTypesIsWrittenForTheServer() async throws {
        let realm = try await openSyncRealm("schema")
        let schema = try SyncSchema(realm.schema, types: [Holder.self, Card.self])
        let json = String(decoding: schema.jsonData(), as: UTF8.self)
        let compact = json.filter { !$0.isWhitespace }
        #expect(
            compact
                == #"{"types":[{"name":"Card","primaryKey":{"name":"id","type":"string"},"properties":["#
                + #"{"name":"discount","type":"int"},{"name":"name","type":"string"},"#
                + #"{"name":"owner","optional":true,"target":"Holder","type":"link"},{"name":"photo","type":"data"}]},"#
                + #"{"name":"Holder","primaryKey":{"name":"id","type":"string"},"properties":[{"name":"name","type":"string"}]}]}"#,
            "\(json)")
        // Holder alone: the link to an unsynced type is not part of it.
        let holders = try SyncSchema(realm.schema, types: [Holder.self])
        #expect(holders.types.map(\.name) == ["Holder"])
        #expect(throws: LiveObjectsError.self) { try SyncSchema(Schema([]), types: [Card.self]) }
    }
}
