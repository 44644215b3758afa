import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import PostgresNIO
import Testing

/// One device of the list tests: a realm in memory, its engine through HTTP.
typealias ShelfDevice = SyncTestDevice<Shelf>

extension SyncTestDevice where Root == Shelf {
    init(_ name: String, _ server: ServerHarness, token: String) async throws {
        try await self.init(
            name, transport: server.transport(token), types: [Holder.self, Shelf.self], rootID: "s1",
            configuration: .init(maxAttempts: 2, initialBackoff: .milliseconds(10)))
    }

    var tags: [String] {
        get async throws { try await read { $0.map { Array($0.tags) } ?? [] } }
    }

    var holders: [String] {
        get async throws { try await read { $0?.holders.map(\.id) ?? [] } }
    }
}

extension SyncTestDevice {
    /// Syncs once, expecting every change sent and the pull done.
    func checkedSync() async throws {
        let report = try await engine.sync()
        #expect(report.failed.isEmpty && report.pullFailure == nil, "\(report)")
    }
}

/// Lists merged per operation by the real server (docs/SYNC-PROTOCOL.md, "Lists").
@Suite("Sync server lists", .serialized)
struct ListMergeTests {
    /// A server, and three admin devices with the shelf s1 (tags, holders h1 to h3) synced on each.
    func start(_ name: String = #function, tags: [String], holders: [String] = []) async throws
        -> (ServerHarness, [ShelfDevice])
    {
        let server = try await ServerHarness.start(name, types: ["Holder", "Shelf"])
        var devices: [ShelfDevice] = []
        for name in ["ann", "bob", "eve"] {
            devices.append(try await ShelfDevice(name, server, token: try await server.user(name, .admin)))
        }
        try await devices[0].realm.write { r in
            let shelf = try r.create(Shelf.self, value: ["id": "s1"])
            shelf.tags.append(contentsOf: tags)
            for id in ["h1", "h2", "h3"] {
                let holder = try r.create(Holder.self, value: ["id": id, "name": id])
                if holders.contains(id) { shelf.holders.append(holder) }
            }
        }
        for device in devices { try await device.checkedSync() }
        return (server, devices)
    }

    /// Syncs every device twice (the second round pulls what the others pushed in the first).
    func syncAll(_ devices: [ShelfDevice]) async throws {
        for _ in 0..<2 {
            for device in devices { try await device.checkedSync() }
        }
    }

    /// The shelf's list as the database holds it: tags' strings, or holders' ids.
    func stored(_ server: ServerHarness, _ property: String) async throws -> [String] {
        let path = property == "tags" ? "$.tags.list[*].string" : "$.holders.refs[*].id.string"
        let rows = try await server.client.query(
            """
            SELECT jsonb_path_query_array("values", \(path)::jsonpath)::text FROM objects
            WHERE type = 'Shelf' AND space_id = (SELECT id FROM spaces WHERE name = \(server.space))
            """)
        for try await (text) in rows.decode(String.self) {
            return try JSONDecoder().decode([String].self, from: Data(text.utf8))
        }
        return []
    }

    @Test func concurrentAppendsAllSurvive() async throws {
        let (server, devices) = try await start(tags: ["start"], holders: ["h1"])
        defer { Task { await server.stop() } }
        for (i, device) in devices.enumerated() {
            try await device.edit { shelf, holder in
                shelf.tags.append("from \(i)")
                shelf.holders.append(holder("h\(i + 1)"))
            }
        }
        try await syncAll(devices)
        let tags = ["start", "from 0", "from 1", "from 2"]
        #expect(try await stored(server, "tags") == tags)
        #expect(try await stored(server, "holders") == ["h1", "h1", "h2", "h3"])
        for device in devices {
            #expect(try await device.tags == tags)
            #expect(try await device.holders == ["h1", "h1", "h2", "h3"])
        }
    }

    @Test func aRemovalRemovesOneElement() async throws {
        let (server, devices) = try await start(tags: ["x", "y", "x"])
        defer { Task { await server.stop() } }
        try await devices[0].edit { shelf, _ in shelf.tags.remove(at: 2) }
        try await devices[1].edit { shelf, _ in shelf.tags.append("z") }
        try await devices[2].edit { shelf, _ in shelf.tags.remove(at: 0) }
        try await syncAll(devices)
        #expect(try await stored(server, "tags") == ["y", "z"])
        for device in devices { #expect(try await device.tags == ["y", "z"]) }
    }

    @Test func concurrentReordersConvergeToOneOrder() async throws {
        let (server, devices) = try await start(tags: ["a", "b", "c", "d"], holders: ["h1", "h2", "h3"])
        defer { Task { await server.stop() } }
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
        let tags = try await stored(server, "tags")
        let holders = try await stored(server, "holders")
        // In arrival order: d to the front; a after c, its base neighbour still there; b moved
        // after c and past a (an insertion device 2 did not know of), e with it.
        #expect(tags == ["d", "c", "a", "b", "e"])
        #expect(holders.sorted() == ["h1", "h2", "h3"])
        for device in devices {
            #expect(try await device.tags == tags)
            #expect(try await device.holders == holders)
        }
    }

    @Test func aDeletedObjectLeavesEveryList() async throws {
        let (server, devices) = try await start(tags: [], holders: ["h1", "h2"])
        defer { Task { await server.stop() } }
        try await devices[0].edit { shelf, holder in shelf.holders.append(holder("h3")) }
        try await devices[1].realm.write { r in try r.delete(r.object(ofType: Holder.self, forPrimaryKey: "h2")!) }
        try await devices[1].checkedSync()
        #expect(try await stored(server, "holders") == ["h1"])
        try await syncAll(devices)
        #expect(try await stored(server, "holders") == ["h1", "h3"])
        for device in devices { #expect(try await device.holders == ["h1", "h3"]) }
        // A list pushed whole, naming the deleted object, is stored without it.
        let token = try await server.user("old", .admin)
        let receipts = try await server.transport(token).push([
            SyncChange(
                idempotencyKey: "old/1", object: SyncObjectID(Shelf.self, .string("s1")), serverID: nil, kind: .update,
                values: [
                    "holders": .references(
                        ["h2", "h1"].map { SyncReference(object: SyncObjectID(Holder.self, .string($0))) })
                ])
        ])
        #expect(receipts.map(\.outcome) == [.applied])
        #expect(try await stored(server, "holders") == ["h1"])
    }

    @Test func aWholeListWithoutBaseReplaces() async throws {
        let (server, devices) = try await start(tags: ["a", "b"])
        defer { Task { await server.stop() } }
        try await devices[0].edit { shelf, _ in shelf.tags.append("c") }
        try await devices[0].checkedSync()
        #expect(try await stored(server, "tags") == ["a", "b", "c"])
        // An older device's push: the list without a base.
        let token = try await server.user("old", .admin)
        let body = Data(
            #"{"changes": [{"key": "old/1", "object": {"type": "Shelf", "id": {"string": "s1"}}, "kind": "update", "values": {"tags": {"list": [{"string": "b"}, {"string": "a"}]}}}]}"#
                .utf8)
        let (status, answer) = try await server.raw("POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
        #expect(status == 200, "\(answer)")
        #expect(try await stored(server, "tags") == ["b", "a"])
        try await syncAll(devices)
        for device in devices { #expect(try await device.tags == ["b", "a"]) }
    }

    @Test func aBaseIsCheckedLikeAValue() async throws {
        let (server, _) = try await start(tags: ["a"])
        defer { Task { await server.stop() } }
        let token = try await server.user("old", .admin)
        func push(_ bases: String) async throws -> (Int, String) {
            let body = Data(
                #"{"changes": [{"key": "k\#(bases.count)", "object": {"type": "Shelf", "id": {"string": "s1"}}, "kind": "update", "values": {"tags": {"list": [{"string": "a"}, {"string": "b"}]}}, "bases": \#(bases)}]}"#
                    .utf8)
            return try await server.raw("POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
        }
        // Not a value of the protocol: the whole request is refused.
        let (status, answer) = try await push(#"{"tags": {"list": 5}}"#)
        #expect(status == 400 && answer.contains("the base of tags"), "\(answer)")
        // NUL: this change is refused.
        let (nulStatus, nulAnswer) = try await push(#"{"tags": {"list": [{"string": "\u0000"}]}}"#)
        #expect(nulStatus == 200 && nulAnswer.contains("invalidText"), "\(nulAnswer)")
        #expect(try await stored(server, "tags") == ["a"])
        // A base of another kind than the list: the list replaces the stored one.
        let (otherStatus, otherAnswer) = try await push(#"{"tags": {"refs": []}}"#)
        #expect(otherStatus == 200 && otherAnswer.contains("applied"), "\(otherAnswer)")
        #expect(try await stored(server, "tags") == ["a", "b"])
    }

    /// Devices append, remove and move tags and holders, and delete holders, at random and sync
    /// in a random order; at the end every device holds the server's lists, no element that no
    /// device removed is lost and none is doubled. Two runs, each
    /// with its own seed (`SYNC_LISTS_SEED` replays one: the seed of the first run).
    @Test(arguments: 0..<2)
    func randomEditsConverge(run: Int) async throws {
        let base =
            ProcessInfo.processInfo.environment["SYNC_LISTS_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...999_999)
        let seed = base + UInt64(run)
        var random = SyncSeededGenerator(seed: seed)
        var operations: [String] = []
        func context() -> Comment {
            Comment(
                rawValue: "seed \(seed) (replay: SYNC_LISTS_SEED=\(seed)); operations:\n"
                    + operations.joined(separator: "\n"))
        }
        let initialTags = ["t0", "t1", "t2", "t3"]
        let initialHolders = ["h1", "h2", "h3"]
        let (server, devices) = try await start(
            "randomEditsConverge\(run)", tags: initialTags, holders: initialHolders)
        defer { Task { await server.stop() } }
        var removed = Set<String>()
        var appended: [String] = []
        for step in 0..<40 {
            let d = Int.random(in: 0..<devices.count, using: &random)
            let device = devices[d]
            let tags = try await device.tags
            let holders = try await device.holders
            let onHolders = Int.random(in: 0..<10, using: &random) < 3
            let list = onHolders ? holders : tags
            let name = onHolders ? "holders" : "tags"
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3 where !onHolders:
                let value = "d\(d)-\(step)"
                appended.append(value)
                operations.append("device \(d) appends \(value) to \(tags)")
                try await device.edit { shelf, _ in shelf.tags.append(value) }
            case 3..<5 where !list.isEmpty:
                let index = Int.random(in: 0..<list.count, using: &random)
                removed.insert(list[index])
                operations.append("device \(d) removes \(list[index]) at \(index) of \(name) \(list)")
                try await device.edit { shelf, _ in
                    if onHolders { shelf.holders.remove(at: index) } else { shelf.tags.remove(at: index) }
                }
            case 5..<7 where list.count > 1:
                let from = Int.random(in: 0..<list.count, using: &random)
                let to = Int.random(in: 0..<list.count, using: &random)
                operations.append("device \(d) moves \(list[from]) from \(from) to \(to) in \(name) \(list)")
                try await device.edit { shelf, _ in
                    if onHolders { shelf.holders.move(from: from, to: to) } else { shelf.tags.move(from: from, to: to) }
                }
            case 7 where onHolders && !holders.isEmpty:
                // A deleted holder leaves the list on every device.
                let id = holders[Int.random(in: 0..<holders.count, using: &random)]
                removed.insert(id)
                operations.append("device \(d) deletes the holder \(id)")
                try await device.realm.write { r in
                    if let holder = r.object(ofType: Holder.self, forPrimaryKey: id) { try r.delete(holder) }
                }
            default:
                operations.append("device \(d) syncs")
                try await device.checkedSync()
            }
        }
        operations.append("every device syncs, twice")
        try await syncAll(devices)
        let storedTags = try await stored(server, "tags")
        let storedHolders = try await stored(server, "holders")
        operations.append("stored: \(storedTags) \(storedHolders)")
        for (d, device) in devices.enumerated() {
            let (tags, holders) = (try await device.tags, try await device.holders)
            #expect(tags == storedTags && holders == storedHolders, "device \(d): \(tags) \(holders); \(context())")
        }
        for (all, stored) in [(initialTags + appended, storedTags), (initialHolders, storedHolders)] {
            #expect(Set(stored).count == stored.count, "an element doubled; \(context())")
            let lost = all.filter { !removed.contains($0) && !stored.contains($0) }
            #expect(lost.isEmpty, "lost \(lost); \(context())")
            let unknown = stored.filter { !all.contains($0) }
            #expect(unknown.isEmpty, "unknown \(unknown); \(context())")
        }
    }
}
