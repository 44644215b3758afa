import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import PostgresNIO
import Testing

@testable import LiveObjectsSyncServer

/// One device of the set tests: a realm in memory, its engine through HTTP.
typealias BinDevice = SyncTestDevice<Bin>

extension SyncTestDevice where Root == Bin {
    init(_ name: String, _ server: ServerHarness, token: String) async throws {
        try await self.init(
            name, transport: server.transport(token), types: [Holder.self, Bin.self], rootID: "b1",
            configuration: .init(maxAttempts: 2, initialBackoff: .milliseconds(10)))
    }

    /// The bin's labels and keepers' ids, sorted.
    var members: [String] {
        get async throws {
            try await read { bin in bin.map { (Array($0.labels) + $0.keepers.map(\.id)).sorted() } ?? [] }
        }
    }
}

/// Sets merged per member by the real server (docs/SYNC-PROTOCOL.md, "Sets").
@Suite("Sync server sets", .serialized)
struct SetMergeTests {
    /// A server whose space declares the bin's schema, and three devices with the bin b1 synced.
    func start(_ name: String = #function, labels: [String]) async throws -> (ServerHarness, [BinDevice]) {
        let server = try await ServerHarness.start(name, types: ["Holder", "Bin"])
        try await server.declareSchema([Holder.self, Bin.self])
        var devices: [BinDevice] = []
        for name in ["ann", "bob", "eve"] {
            devices.append(try await BinDevice(name, server, token: try await server.user(name, .admin)))
        }
        try await devices[0].realm.write { r in
            let bin = try r.create(Bin.self, value: ["id": "b1"])
            bin.labels.insert(objectsIn: labels)
            for id in ["h1", "h2", "h3"] { _ = try r.create(Holder.self, value: ["id": id, "name": id]) }
        }
        for device in devices { try await device.checkedSync() }
        return (server, devices)
    }

    /// The bin's labels as the database holds them.
    func storedLabels(_ server: ServerHarness) async throws -> [String] {
        let rows = try await server.client.query(
            """
            SELECT jsonb_path_query_array("values", '$.labels.list[*].string')::text FROM objects
            WHERE type = 'Bin' AND space_id = (SELECT id FROM spaces WHERE name = \(server.space))
            """)
        for try await (text) in rows.decode(String.self) {
            return try JSONDecoder().decode([String].self, from: Data(text.utf8))
        }
        return []
    }

    @Test func twoDevicesAddingMembersBothKeepTheirs() async throws {
        let (server, devices) = try await start(labels: ["red"])
        defer { Task { await server.stop() } }
        #expect(
            try await server.withStore { try await $0.schema(of: server.space) }?.schema.json.contains("\"set\"")
                == true)
        try await devices[0].edit { bin, holder in
            bin.labels.insert("green")
            bin.labels.insert("both")
            bin.keepers.insert(holder("h1"))
        }
        try await devices[1].edit { bin, holder in
            bin.labels.insert("blue")
            bin.labels.insert("both")
            bin.keepers.insert(holder("h1"))
            bin.keepers.insert(holder("h2"))
        }
        try await devices[2].edit { bin, _ in bin.labels.remove("red") }
        for _ in 0..<2 {
            for device in devices { try await device.checkedSync() }
        }
        #expect(try await storedLabels(server) == ["green", "both", "blue"])
        for device in devices {
            #expect(try await device.members == ["blue", "both", "green", "h1", "h2"])
        }
    }

    @Test func aSetWithAMemberTwiceIsRefusedPerChange() async throws {
        let (server, _) = try await start(labels: ["a"])
        defer { Task { await server.stop() } }
        let token = try await server.user("raw", .admin)
        let body = Data(
            #"{"changes": [{"key": "twice", "object": {"type": "Bin", "id": {"string": "b1"}}, "kind": "update", "values": {"labels": {"list": [{"string": "a"}, {"string": "a"}]}}}]}"#
                .utf8)
        let (status, answer) = try await server.raw("POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
        #expect(status == 200 && answer.contains("rejected") && answer.contains("invalidValue"), "\(answer)")
        #expect(answer.contains("twice"), "\(answer)")
        #expect(try await storedLabels(server) == ["a"])
    }

    @Test func aListCannotBecomeASet() async throws {
        var schema = try await ServerHarness.appSchema([Holder.self, Bin.self])
        let bin = schema.types.firstIndex { $0.name == "Bin" }!
        let labels = schema.types[bin].properties.firstIndex { $0.name == "labels" }!
        #expect(schema.types[bin].properties[labels].summary == "labels: {string}")
        let set = schema
        schema.types[bin].properties[labels].isSet = false
        #expect(
            schema.breakingChanges(to: set) == ["property Bin.labels changes from labels: [string] to labels: {string}"]
        )
    }
}
