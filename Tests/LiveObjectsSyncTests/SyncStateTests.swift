import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Persistence
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A transport in front of a fake server that writes down what the engine asked for, and can
/// fail every push after the first few.
actor RecordingTransport: SyncTransport {
    let server: FakeServer
    private(set) var pushedKeys: [String] = []
    private(set) var pullCursors: [String?] = []
    private var pushesLeft: Int

    init(_ server: FakeServer, failingPushesAfter pushes: Int = .max) {
        self.server = server
        pushesLeft = pushes
    }

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
        guard pushesLeft > 0 else { throw ServerUnavailable() }
        pushesLeft -= 1
        pushedKeys += changes.map(\.idempotencyKey)
        return try await server.push(changes)
    }

    func pull(after cursor: String?) async throws -> SyncPull {
        pullCursors.append(cursor)
        return try await server.pull(after: cursor)
    }
}

@Suite("Sync engine state kept beside the realm")
struct SyncStateTests {
    let directory: URL
    let url: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        url = directory.appendingPathComponent("cards.json")
    }

    var statePath: String { url.path + ".sync" }

    func open() async throws -> Realm {
        var configuration = Realm.Configuration(file: url, objectTypes: syncTypes)
        configuration.keepsHistory = true
        return try await Realm.open(configuration)
    }

    func engine(_ realm: Realm, _ transport: any SyncTransport, batchSize: Int = 100) async throws -> SyncEngine {
        try await SyncEngine(
            realm: realm, transport: transport, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 1, batchSize: batchSize, sleep: { _ in }))
    }

    func addCards(_ realm: Realm, _ ids: [String]) async throws {
        try await realm.write { r in
            for id in ids { _ = try r.create(Card.self, value: ["id": id, "name": "Card \(id)", "discount": 5]) }
        }
    }

    @Test func aRestartedEngineNeitherResendsNorPullsFromTheBeginning() async throws {
        let server = FakeServer()
        var realm = try await open()
        let first = RecordingTransport(server)
        var engine = try await engine(realm, first)
        try await addCards(realm, ["a", "b", "c"])
        #expect(try await engine.sync().pushed == 3)
        await server.edit(card("a"), ["discount": .value(.int(20))])
        #expect(try await engine.sync().pulled == 1)
        // The cursor the server gave last.
        let lastCursor = try await server.pull(after: nil).cursor
        #expect(lastCursor != nil)
        #expect(FileManager.default.fileExists(atPath: statePath))
        try await realm.close()

        realm = try await open()
        let second = RecordingTransport(server)
        engine = try await self.engine(realm, second)
        let report = try await engine.sync()
        #expect(report.pushed == 0 && report.pulled == 0)
        #expect(await second.pushedKeys.isEmpty)
        #expect(await second.pullCursors.first == lastCursor)
        // The server ids learned before the restart are still known.
        try await realm.write { $0.object(ofType: Card.self, forPrimaryKey: "b")!.discount = 7 }
        #expect(try await engine.sync().pushed == 1)
        #expect(await server.records[card("b")]?.values["discount"] == .value(.int(7)))
        let twice = await server.applications.filter { $0.value != 1 }
        #expect(twice.isEmpty, "applied more than once: \(twice)")
        #expect(await server.records.count == 3)
        try await realm.close()
    }

    @Test func aRoundCutShortSendsOnlyWhatWasNotAcknowledged() async throws {
        let server = FakeServer()
        var realm = try await open()
        // Batches of two; the second push never arrives.
        let first = RecordingTransport(server, failingPushesAfter: 1)
        var engine = try await engine(realm, first, batchSize: 2)
        try await addCards(realm, ["a", "b", "c", "d", "e"])
        let report = try await engine.sync()
        #expect(report.pushed == 2)
        #expect(report.failed.count == 2)
        let acknowledged = Set(await first.pushedKeys)
        #expect(acknowledged.count == 2)
        try await realm.close()

        realm = try await open()
        let second = RecordingTransport(server)
        engine = try await self.engine(realm, second, batchSize: 2)
        #expect(try await engine.sync().pushed == 3)
        let resent = Set(await second.pushedKeys)
        #expect(resent.count == 3)
        #expect(
            resent.isDisjoint(with: acknowledged), "acknowledged keys sent again: \(resent.intersection(acknowledged))")
        #expect(await server.records.count == 5)
        let perKey = await server.requestsPerKey.filter { $0.value != 1 }
        #expect(perKey.isEmpty, "keys sent more than once: \(perKey)")
        try await realm.close()
    }

    @Test func aLineNewerThanTheRealmIsNotUsed() async throws {
        let server = FakeServer()
        var realm = try await open()
        let first = RecordingTransport(server)
        var engine = try await engine(realm, first)
        try await addCards(realm, ["a"])
        try await engine.sync()
        let cursor = try await server.pull(after: nil).cursor
        let token = await realm.currentHistoryToken.rawValue
        try await realm.close()

        // A line written after commits that the realm no longer has (a journal that was not
        // synced, then a power cut).
        let log = SidecarLog(path: statePath, syncs: true)
        _ = try log.read()
        try log.append(Array(#"{"realmToken":\#(token + 5),"syncedToken":\#(token),"cursor":"999"}"#.utf8))
        let lines = try log.read().count

        realm = try await open()
        let second = RecordingTransport(server)
        engine = try await self.engine(realm, second)
        try await engine.sync()
        #expect(await second.pullCursors.first == cursor)
        // The log was rewritten without that line.
        let after = try SidecarLog(path: statePath, syncs: true).read()
        #expect(after.count < lines)
        #expect(!after.contains { String(decoding: $0.bytes, as: UTF8.self).contains("\"999\"") })
        try await realm.close()
    }

    @Test func aDamagedLogIsATypedErrorAndIsLeftAsItWas() async throws {
        let server = FakeServer()
        let realm = try await open()
        let engine = try await engine(realm, RecordingTransport(server))
        try await addCards(realm, ["a", "b"])
        try await engine.sync()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: statePath))
        let i = try #require(bytes.firstIndex(of: UInt8(ascii: "a")))
        bytes[i] = UInt8(ascii: "q")
        try bytes.write(to: URL(fileURLWithPath: statePath))

        let error = await #expect(throws: LiveObjectsError.self) {
            _ = try await self.engine(realm, RecordingTransport(server))
        }
        #expect(error?.code == .corruptFile)
        #expect(error?.file == statePath)
        #expect(try Data(contentsOf: URL(fileURLWithPath: statePath)) == bytes)
        try await realm.close()
    }

    @Test func aLogCutInsideItsFirstLineOrWithADamagedLastLineBreakIsKeptAndRefused() async throws {
        let server = FakeServer()
        let realm = try await open()
        let engine = try await engine(realm, RecordingTransport(server))
        try await addCards(realm, ["a", "b"])
        try await engine.sync()
        await server.edit(card("a"), ["discount": .value(.int(20))])
        try await engine.sync()
        let whole = try Data(contentsOf: URL(fileURLWithPath: statePath))
        let firstLine = try #require(whole.firstIndex(of: 0x0A))
        #expect(firstLine < whole.count - 1, "the log has one line")
        var lastBreakDamaged = whole
        lastBreakDamaged[whole.count - 1] = UInt8(ascii: "}")
        // A torn first line would have the engine start again under a new device id, and a
        // damaged last line break would take the state back by a line: both are refused.
        for damaged in [whole.prefix(firstLine / 2), whole.prefix(firstLine), lastBreakDamaged] {
            try damaged.write(to: URL(fileURLWithPath: statePath))
            let error = await #expect(throws: LiveObjectsError.self) {
                _ = try await self.engine(realm, RecordingTransport(server))
            }
            #expect(error?.code == .corruptFile, "\(String(describing: error))")
            #expect(error?.message.contains("(at byte ") == true, "\(String(describing: error))")
            #expect(try Data(contentsOf: URL(fileURLWithPath: statePath)) == damaged)
        }
        try await realm.close()
    }

    @Test func aStateWriteTheDiskRefusesFailsTheSyncAndLosesNothing() async throws {
        let server = FakeServer()
        var realm = try await open()
        let transport = RecordingTransport(server)
        var engine = try await engine(realm, transport)
        try await addCards(realm, ["a"])
        try await engine.sync()
        let before = try Data(contentsOf: URL(fileURLWithPath: statePath))

        try await addCards(realm, ["b"])
        // Every write to the log fails, as on a full disk.
        let plan = FileFaults.install(
            FileFaults.Plan(directory: statePath, failing: (.write, 1, ENOSPC), times: .max))
        let error = await #expect(throws: LiveObjectsError.self) { try await engine.sync() }
        FileFaults.remove(plan)
        #expect(error?.code == .io)
        #expect(try Data(contentsOf: URL(fileURLWithPath: statePath)) == before)
        #expect(await server.records[card("b")] != nil)

        // The disk has room again: the next sync writes the state, and sends nothing twice.
        try await engine.sync()
        try await realm.close()
        realm = try await open()
        let second = RecordingTransport(server)
        engine = try await self.engine(realm, second)
        #expect(try await engine.sync().pushed == 0)
        #expect(await second.pushedKeys.isEmpty)
        let perKey = await server.requestsPerKey.filter { $0.value != 1 }
        #expect(perKey.isEmpty, "keys sent more than once: \(perKey)")
        try await realm.close()
    }

    /// Subscriptions are part of the state: kept across a restart; a line torn by a crash takes
    /// the engine back to the ones before; a state the disk refuses leaves the old ones.
    @Test func subscriptionsAreKeptInTheStateLog() async throws {
        let server = FakeServer()
        var realm = try await open()
        var engine = try await engine(realm, RecordingTransport(server))
        let cheap = SyncSubscription(name: "cheap", Card.self, where: "discount == 5")
        let holders = SyncSubscription(name: "holders", typeName: "Holder")
        try await engine.subscribe(cheap)
        try await engine.subscribe(holders)
        #expect(await engine.subscriptions == [cheap, holders])
        try await realm.close()

        realm = try await open()
        engine = try await self.engine(realm, RecordingTransport(server))
        #expect(await engine.subscriptions == [cheap, holders])
        #expect(await engine.downloadProgress == nil, "a restart starts no download by itself")

        // The last line cut in the middle (a crash during its append): the line before counts.
        let before = try Data(contentsOf: URL(fileURLWithPath: statePath))
        #expect(try await engine.unsubscribe(named: "holders"))
        let after = try Data(contentsOf: URL(fileURLWithPath: statePath))
        #expect(after.count > before.count)
        try after.prefix(before.count + (after.count - before.count) / 2).write(to: URL(fileURLWithPath: statePath))
        try await realm.close()
        realm = try await open()
        engine = try await self.engine(realm, RecordingTransport(server))
        #expect(await engine.subscriptions == [cheap, holders])

        // The disk refuses: the call throws, the engine keeps what it had, and the log its whole
        // lines (the torn bytes after them go, as any append first cuts them off).
        let plan = FileFaults.install(
            FileFaults.Plan(directory: statePath, failing: (.write, 1, ENOSPC), times: .max))
        let error = await #expect(throws: LiveObjectsError.self) { try await engine.setSubscriptions(nil) }
        FileFaults.remove(plan)
        #expect(error?.code == .io)
        #expect(await engine.subscriptions == [cheap, holders])
        #expect(try Data(contentsOf: URL(fileURLWithPath: statePath)) == before)

        // Refused before anything changes: a type the engine does not sync, a name twice.
        await #expect(throws: LiveObjectsError.self) {
            try await engine.subscribe(SyncSubscription(name: "x", typeName: "Nothing"))
        }
        await #expect(throws: LiveObjectsError.self) { try await engine.setSubscriptions([cheap, cheap]) }
        #expect(await engine.subscriptions == [cheap, holders])
        try await realm.close()
    }

    @Test func aRewriteACrashStoppedIsRemovedAndTheLogKept() async throws {
        let server = FakeServer()
        var realm = try await open()
        let engine = try await engine(realm, RecordingTransport(server))
        try await addCards(realm, ["a"])
        try await engine.sync()
        let log = try Data(contentsOf: URL(fileURLWithPath: statePath))
        try await realm.close()
        try Data("{\"half".utf8).write(to: URL(fileURLWithPath: statePath + ".tmp"))

        realm = try await open()
        let second = RecordingTransport(server)
        _ = try await self.engine(realm, second)
        #expect(!FileManager.default.fileExists(atPath: statePath + ".tmp"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: statePath)) == log)
        try await realm.close()
    }

    /// A log as the versions before LiveObjectsJSON wrote it (Foundation's encoder, sorted keys,
    /// a whole-number double without its fraction) still loads, and is written on in today's form.
    @Test func aLogWrittenByTheEarlierEncoderLoads() async throws {
        var realm = try await open()
        try await addCards(realm, ["a", "b"])
        let token = await realm.currentHistoryToken.rawValue
        try await realm.close()
        let a = #"{"key":{"string":"a"},"type":"Card"}"#
        let b = #"{"key":{"string":"b"},"type":"Card"}"#
        let first =
            #"{"acknowledged":["old-device/x@1"],"conflicts":[{"localChanges":["discount"],"object":\#(b),"serverID":"2"}],"#
            + #""cursor":"4","device":"old-device","format":"LiveObjects sync state","links":[],"#
            + #""objects":[{"object":\#(a),"pushedVersion":\#(token),"serverID":"1","serverVersion":3},"#
            + #"{"object":\#(b),"serverID":"2","serverVersion":1}],"realmToken":\#(token),"recreate":[],"#
            + #""rejected":[{"code":"forbidden","kind":"update","message":"not yours","object":\#(a),"#
            + #""properties":["discount"]}],"syncedToken":\#(token),"unconfirmed":[{"key":"old-device/u@1","kind":"update","#
            + #""object":{"id":{"string":"z"},"type":"Card"},"values":{"discount":{"double":3}}}],"version":2}"#
        let second = #"{"acknowledgedReset":true,"cursor":"5","realmToken":\#(token),"syncedToken":\#(token)}"#
        try SidecarLog(path: statePath, syncs: true).replace(with: [Array(first.utf8), Array(second.utf8)])

        for reopening in 0..<2 {
            realm = try await open()
            let transport = RecordingTransport(FakeServer())
            let engine = try await engine(realm, transport)
            let rejected = try await engine.rejectedChanges()
            #expect(rejected.map(\.object) == [card("a")], "reopening \(reopening)")
            #expect(rejected.first?.rejection == SyncRejection(code: .forbidden, message: "not yours"))
            if reopening == 0 {
                #expect(await engine.conflictsToResolve.map(\.object) == [card("b")])
                #expect(await engine.conflictsToResolve.first?.localChanges == ["discount"])
                try await addCards(realm, ["c"])
                _ = try await engine.sync()
                #expect(await transport.pullCursors.first == "5")
                // The change sent without an answer goes again, with its key; the new one is made
                // with the device's id.
                #expect(await transport.pushedKeys == ["old-device/u@1", #"old-device/Card["c"]@2"#])
            }
            try await realm.close()
        }
    }

    @Test func aRealmInMemoryWritesNoState() async throws {
        let realm = try await openSyncRealm("memory")
        let engine = try await engine(realm, RecordingTransport(FakeServer()))
        try await addCards(realm, ["a"])
        #expect(try await engine.sync().pushed == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
