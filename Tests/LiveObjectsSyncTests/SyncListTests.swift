import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncProtocol
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

func shelf(_ id: String) -> SyncObjectID { SyncObjectID(Shelf.self, .string(id)) }

/// One device of the list tests: a realm in memory and its engine, on a shared server.
typealias ListDevice = SyncTestDevice<Shelf>

extension SyncTestDevice where Root == Shelf {
    init(_ name: String, _ server: FakeServer) async throws {
        try await self.init(
            name, transport: server, types: [Holder.self, Shelf.self], rootID: "s1",
            configuration: .init(sleep: SleepRecorder().sleep))
    }

    var tags: [String] {
        get async throws { try await read { $0.map { Array($0.tags) } ?? [] } }
    }

    var holders: [String] {
        get async throws { try await read { $0?.holders.map(\.id) ?? [] } }
    }
}

@Suite("Sync lists merged per operation")
struct SyncListTests {
    /// Three devices with the shelf s1 (tags, holders h1 to h3) synced on each.
    func devices(tags: [String], holders: [String] = []) async throws -> (FakeServer, [ListDevice]) {
        let server = FakeServer()
        let a = try await ListDevice("a", server)
        try await a.realm.write { r in
            let shelf = try r.create(Shelf.self, value: ["id": "s1"])
            shelf.tags.append(contentsOf: tags)
            for id in ["h1", "h2", "h3"] {
                let holder = try r.create(Holder.self, value: ["id": id, "name": id])
                if holders.contains(id) { shelf.holders.append(holder) }
            }
        }
        try await a.sync()
        let b = try await ListDevice("b", server)
        let c = try await ListDevice("c", server)
        try await b.sync()
        try await c.sync()
        return (server, [a, b, c])
    }

    /// Syncs every device twice (the second round pulls what the others pushed in the first).
    func syncAll(_ devices: [ListDevice]) async throws {
        for _ in 0..<2 {
            for device in devices {
                let report = try await device.sync()
                #expect(report.failed.isEmpty && report.pullFailure == nil, "\(report)")
            }
        }
    }

    @Test func concurrentAppendsAllSurvive() async throws {
        let (server, devices) = try await devices(tags: ["start"], holders: ["h1"])
        for (i, device) in devices.enumerated() {
            try await device.edit { shelf, holder in
                shelf.tags.append("from \(i)")
                shelf.holders.append(holder("h\(i + 1)"))
            }
        }
        try await syncAll(devices)
        // Each appended after the same anchor: in the order they reached the server.
        let tags = ["start", "from 0", "from 1", "from 2"]
        #expect(await server.listValue(shelf("s1"), "tags") == tags.map { PropertyValue.string($0).description })
        for device in devices {
            #expect(try await device.tags == tags)
            #expect(try await device.holders == ["h1", "h1", "h2", "h3"])
        }
    }

    @Test func aRemovalRemovesOneElement() async throws {
        let (server, devices) = try await devices(tags: ["x", "y", "x"])
        try await devices[0].edit { shelf, _ in shelf.tags.remove(at: 2) }
        try await devices[1].edit { shelf, _ in shelf.tags.append("z") }
        try await devices[2].edit { shelf, _ in shelf.tags.remove(at: 0) }
        try await syncAll(devices)
        // Device 0 removed the last "x", device 2 the first: both went, and "z" stayed.
        for device in devices { #expect(try await device.tags == ["y", "z"]) }
        #expect(await server.listValue(shelf("s1"), "tags")?.count == 2)
    }

    @Test func concurrentReordersConvergeToOneOrder() async throws {
        let (server, devices) = try await devices(tags: ["a", "b", "c", "d"], holders: ["h1", "h2", "h3"])
        try await devices[0].edit { shelf, _ in
            shelf.tags.move(from: 3, to: 0)
            shelf.holders.move(from: 2, to: 0)
        }
        try await devices[1].edit { shelf, _ in
            shelf.tags.move(from: 0, to: 3)
            shelf.holders.move(from: 0, to: 2)
        }
        try await devices[2].edit { shelf, _ in
            shelf.tags.move(from: 1, to: 2)
            shelf.tags.append("e")
            shelf.holders.move(from: 1, to: 0)
        }
        try await syncAll(devices)
        let tags = try await devices[0].tags
        let holders = try await devices[0].holders
        for device in devices {
            #expect(try await device.tags == tags)
            #expect(try await device.holders == holders)
        }
        // Moves lose and duplicate nothing; the append is there.
        // In arrival order: d to the front; a after c, its base neighbour still there; b moved
        // after c and past a (an insertion device 2 did not know of), e with it.
        #expect(tags == ["d", "c", "a", "b", "e"])
        #expect(holders.sorted() == ["h1", "h2", "h3"])
        #expect(await server.listValue(shelf("s1"), "tags") == tags.map { PropertyValue.string($0).description })
    }

    @Test func aDeletedObjectLeavesEveryList() async throws {
        let (server, devices) = try await devices(tags: [], holders: ["h1", "h2"])
        // Offline on device 0: h3 appended; on device 1: h2 deleted.
        try await devices[0].edit { shelf, holder in shelf.holders.append(holder("h3")) }
        try await devices[1].realm.write { r in try r.delete(r.object(ofType: Holder.self, forPrimaryKey: "h2")!) }
        try await devices[1].sync()
        #expect(await server.listValue(shelf("s1"), "holders") == ["\"h1\""])
        try await syncAll(devices)
        #expect(await server.listValue(shelf("s1"), "holders") == ["\"h1\"", "\"h3\""])
        for device in devices { #expect(try await device.holders == ["h1", "h3"]) }
        // A list pushed naming a deleted object stores it without.
        let receipts = try await server.push([
            SyncChange(
                idempotencyKey: "old/1", object: shelf("s1"), serverID: nil, kind: .update,
                values: ["holders": .references([holder("h2"), holder("h1")].map { SyncReference(object: $0) })])
        ])
        #expect(receipts.map(\.outcome) == [.applied])
        #expect(await server.listValue(shelf("s1"), "holders") == ["\"h1\""])
    }

    @Test func aWholeListWithoutBaseReplaces() async throws {
        let (server, devices) = try await devices(tags: ["a", "b"])
        try await devices[0].edit { shelf, _ in shelf.tags.append("c") }
        try await devices[0].sync()
        // An older engine sends the list alone: it replaces the server's list, the append too.
        let receipts = try await server.push([
            SyncChange(
                idempotencyKey: "old/1", object: shelf("s1"), serverID: nil, kind: .update,
                values: ["tags": .value(.list([.string("b"), .string("a")]))])
        ])
        #expect(receipts.map(\.outcome) == [.applied])
        try await syncAll(devices)
        for device in devices { #expect(try await device.tags == ["b", "a"]) }
    }

    @Test func aChangeCarriesItsBase() async throws {
        let (server, devices) = try await devices(tags: ["a"])
        try await devices[1].edit { shelf, _ in shelf.tags.append("b") }
        try await devices[1].sync()
        let sent = await server.applied.last
        #expect(sent?.bases["tags"] == .value(.list([.string("a")])))
        #expect(sent?.values["tags"] == .value(.list([.string("a"), .string("b")])))
        // Acknowledged, the list sent is the next base, before any pull.
        try await devices[1].edit { shelf, _ in shelf.tags.append("c") }
        _ = try await devices[1].engine.push()
        #expect(await server.applied.last?.bases["tags"] == .value(.list([.string("a"), .string("b")])))
    }

    @Test func aBaseTravelsOnTheWire() throws {
        let change = SyncChange(
            idempotencyKey: "d/Shelf[\"s1\"]@4", object: shelf("s1"), serverID: "9", kind: .update,
            values: ["tags": .value(.list([.string("a"), .string("b")]))],
            bases: ["tags": .value(.list([.string("a")]))])
        let text = String(decoding: try WireChange(change).jsonBytes(), as: UTF8.self)
        #expect(text.contains(#""bases":{"tags":{"list":[{"string":"a"}]}}"#), "\(text)")
        #expect(try WireChange(jsonBytes: Array(text.utf8)).change() == change)
        // Without bases, no member: an older server reads the change as before.
        var plain = change
        plain.bases = [:]
        #expect(!String(decoding: try WireChange(plain).jsonBytes(), as: UTF8.self).contains("bases"))
    }

    @Test func theBasesOutliveARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-lists-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Realm.Configuration(
            file: directory.appendingPathComponent("shelves.json"), objectTypes: [Holder.self, Shelf.self])
        configuration.keepsHistory = true
        let server = FakeServer()
        func engine(_ realm: Realm) async throws -> SyncEngine {
            try await SyncEngine(
                realm: realm, transport: server, types: [Holder.self, Shelf.self],
                configuration: .init(sleep: { _ in }))
        }
        var realm = try await Realm.open(configuration)
        try await realm.write { r in try r.create(Shelf.self, value: ["id": "s1"]).tags.append("a") }
        let first = try await engine(realm)
        _ = try await first.sync()
        await server.edit(shelf("s1"), ["tags": .value(.list([.string("a"), .string("x")]))])
        _ = try await first.sync()
        try await realm.close()

        // Restarted: another device appends y meanwhile, this one appends b.
        realm = try await Realm.open(configuration)
        let restarted = try await engine(realm)
        await server.edit(shelf("s1"), ["tags": .value(.list([.string("a"), .string("x"), .string("y")]))])
        try await realm.write { r in r.object(ofType: Shelf.self, forPrimaryKey: "s1")!.tags.append("b") }
        _ = try await restarted.push()
        #expect(await server.applied.last?.bases["tags"] == .value(.list([.string("a"), .string("x")])))
        #expect(await server.listValue(shelf("s1"), "tags") == ["a", "x", "y", "b"].map { "\"\($0)\"" })
        _ = try await restarted.pull()
        #expect(
            try await realm.read { Array($0.object(ofType: Shelf.self, forPrimaryKey: "s1")!.tags) } == [
                "a", "x", "y", "b",
            ])
        try await realm.close()
    }

    @Test func aChangeAppliedWithoutAnswerIsNotMergedTwice() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-lists-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Realm.Configuration(
            file: directory.appendingPathComponent("shelves.json"), objectTypes: [Holder.self, Shelf.self])
        configuration.keepsHistory = true
        let server = FakeServer()
        func engine(_ realm: Realm) async throws -> SyncEngine {
            try await SyncEngine(
                realm: realm, transport: server, types: [Holder.self, Shelf.self],
                configuration: .init(maxAttempts: 2, sleep: { _ in }))
        }
        var realm = try await Realm.open(configuration)
        let first = try await engine(realm)
        try await realm.write { r in try r.create(Shelf.self, value: ["id": "s1"]).tags.append("a") }
        _ = try await first.sync()
        // Applied, every answer lost: the round fails.
        await server.setFaults(Faults(failAfter: 1))
        try await realm.write { r in r.object(ofType: Shelf.self, forPrimaryKey: "s1")!.tags.append("b") }
        #expect(try await first.push().failed == [shelf("s1")])
        #expect(await server.listValue(shelf("s1"), "tags") == ["\"a\"", "\"b\""])
        try await realm.close()

        // Restarted, edited again: the unanswered change goes first, with its key, so that b
        // is not appended twice.
        await server.setFaults(.none)
        realm = try await Realm.open(configuration)
        let restarted = try await engine(realm)
        try await realm.write { r in r.object(ofType: Shelf.self, forPrimaryKey: "s1")!.tags.append("c") }
        let report = try await restarted.sync()
        #expect(report.failed.isEmpty)
        #expect(await server.listValue(shelf("s1"), "tags") == ["\"a\"", "\"b\"", "\"c\""])
        #expect(
            try await realm.read { Array($0.object(ofType: Shelf.self, forPrimaryKey: "s1")!.tags) } == ["a", "b", "c"])
        let twice = await server.applications.filter { $0.value != 1 }
        #expect(twice.isEmpty, "applied more than once: \(twice)")
        try await realm.close()
    }

    /// Devices append, remove and move tags and holders at random and sync in a random order,
    /// through a server that loses answers and applies pushes twice; at the end every device
    /// holds the server's lists, no element that no device removed is lost, none is doubled.
    /// Five seeds from `SYNC_LISTS_SEED` (default 0x5EED_0027).
    @Test(arguments: 0..<5)
    func randomEditsConverge(run: Int) async throws {
        let seed = (TestEnvironment.seed("SYNC_LISTS_SEED") ?? 0x5EED_0027) &+ UInt64(run)
        var random = SeededRandomNumberGenerator(seed: seed)
        var operations: [String] = []
        func context() -> Comment {
            Comment(
                rawValue: "seed \(seed) (SYNC_LISTS_SEED=\(seed) replays it); operations:\n"
                    + operations.joined(separator: "\n"))
        }
        let initialTags = ["t0", "t1", "t2", "t3"]
        let initialHolders = ["h1", "h2", "h3"]
        let (server, devices) = try await devices(tags: initialTags, holders: initialHolders)
        await server.setFaults(Faults(failBefore: 0.1, failAfter: 0.2, duplicate: 0.2))
        var removed = Set<String>()
        var appended: [String] = []
        for step in 0..<60 {
            let d = random.below(devices.count)
            let device = devices[d]
            let tags = try await device.tags
            let holders = try await device.holders
            let onHolders = random.chance(30)
            let list = onHolders ? holders : tags
            let name = onHolders ? "holders" : "tags"
            switch random.below(10) {
            case 0..<3 where !onHolders:
                let value = "d\(d)-\(step)"
                appended.append(value)
                operations.append("device \(d) appends \(value) to \(tags)")
                try await device.edit { shelf, _ in shelf.tags.append(value) }
            case 3..<5 where !list.isEmpty:
                let index = random.below(list.count)
                removed.insert(list[index])
                operations.append("device \(d) removes \(list[index]) at \(index) of \(name) \(list)")
                try await device.edit { shelf, _ in
                    if onHolders { shelf.holders.remove(at: index) } else { shelf.tags.remove(at: index) }
                }
            case 5..<7 where list.count > 1:
                let from = random.below(list.count)
                let to = random.below(list.count)
                operations.append("device \(d) moves \(list[from]) from \(from) to \(to) in \(name) \(list)")
                try await device.edit { shelf, _ in
                    if onHolders { shelf.holders.move(from: from, to: to) } else { shelf.tags.move(from: from, to: to) }
                }
            default:
                let report = try await device.sync()
                operations.append("device \(d) syncs: \(report.failed.isEmpty ? "done" : "failed")")
            }
        }
        await server.setFaults(.none)
        operations.append("every device syncs, twice, without faults")
        try await syncAll(devices)
        let tags = try await devices[0].tags
        let holders = try await devices[0].holders
        operations.append("device 0: tags \(tags), holders \(holders)")
        #expect(
            await server.listValue(shelf("s1"), "tags") == tags.map { PropertyValue.string($0).description }, context())
        for (d, device) in devices.enumerated() {
            let (localTags, localHolders) = (try await device.tags, try await device.holders)
            #expect(
                localTags == tags && localHolders == holders, "device \(d): \(localTags) \(localHolders); \(context())")
        }
        for (all, list) in [(initialTags + appended, tags), (initialHolders, holders)] {
            #expect(Set(list).count == list.count, "an element doubled; \(context())")
            let lost = all.filter { !removed.contains($0) && !list.contains($0) }
            #expect(lost.isEmpty, "lost \(lost); \(context())")
            #expect(list.allSatisfy(all.contains), "unknown elements; \(context())")
        }
    }

    @Test(arguments: [
        (["a", "b"], ["a", "b", "x"], ["a", "b", "y"], ["a", "b", "y", "x"]),
        (["a", "b", "a"], ["a", "b"], ["a", "b", "a", "c"], ["a", "b", "c"]),
        (["a", "b", "c"], ["c", "a", "b"], ["a", "c", "b"], ["c", "a", "b"]),
        (["a", "b", "c"], ["b", "c"], ["a", "x", "b", "c"], ["x", "b", "c"]),
        (["a", "b", "c"], ["a", "c", "b"], ["a", "b"], ["a", "b"]),
        ([], ["x"], ["y"], ["y", "x"]),
    ])
    func mergeRule(base: [String], edited: [String], current: [String], expected: [String]) {
        #expect(
            ListMerge.merge(base: base, edited: edited, current: current, key: { $0 }) == expected,
            "base \(base) edited \(edited) current \(current)")
    }
}
