import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import PostgresNIO
import Testing

@testable import LiveObjectsSyncServer

/// One device of the map tests: a realm in memory, its engine through HTTP.
typealias PanelDevice = SyncTestDevice<Panel>

extension SyncTestDevice where Root == Panel {
    init(_ name: String, _ server: ServerHarness, token: String) async throws {
        try await self.init(
            name, transport: server.transport(token), types: [Holder.self, Panel.self], rootID: "p1",
            configuration: .init(maxAttempts: 2, initialBackoff: .milliseconds(10)))
    }

    /// The panel's settings.
    var settings: [String: String] {
        get async throws { try await read { $0?.settings.dictionary ?? [:] } }
    }
}

/// Maps merged per key by the real server (docs/SYNC-PROTOCOL.md, "Maps").
@Suite("Sync server maps", .serialized)
struct MapMergeTests {
    /// A server whose space declares the panel's schema (or none), and three devices with the
    /// panel p1 synced.
    func start(
        _ name: String = #function, settings: [String: String], schema: Bool = true
    ) async throws -> (ServerHarness, [PanelDevice]) {
        let server = try await ServerHarness.start(name, types: ["Holder", "Panel"])
        if schema { try await server.declareSchema([Holder.self, Panel.self]) }
        var devices: [PanelDevice] = []
        for name in ["ann", "bob", "eve"] {
            devices.append(try await PanelDevice(name, server, token: try await server.user(name, .admin)))
        }
        try await devices[0].realm.write { r in
            let panel = try r.create(Panel.self, value: ["id": "p1"])
            panel.settings.merge(settings)
        }
        for device in devices { try await device.checkedSync() }
        return (server, devices)
    }

    /// The panel's settings as the database holds them: the JSON of the map's pairs.
    func storedSettings(_ server: ServerHarness) async throws -> String {
        let rows = try await server.client.query(
            """
            SELECT ("values" -> 'settings')::text FROM objects
            WHERE type = 'Panel' AND space_id = (SELECT id FROM spaces WHERE name = \(server.space))
            """)
        for try await (text) in rows.decode(String.self) { return text }
        return ""
    }

    @Test(arguments: [true, false])
    func twoDevicesSettingDifferentKeysBothKeepTheirs(schema: Bool) async throws {
        let (server, devices) = try await start(settings: ["theme": "dark", "font": "serif"], schema: schema)
        defer { Task { await server.stop() } }
        if schema {
            #expect(
                try await server.withStore { try await $0.schema(of: server.space) }?.schema.json.contains("\"map\"")
                    == true)
        }
        try await devices[0].edit { panel, _ in panel.settings["size"] = "12" }
        try await devices[1].edit { panel, _ in panel.settings["lang"] = "fr" }
        try await devices[2].edit { panel, _ in panel.settings.removeObject(for: "font") }
        for _ in 0..<2 {
            for device in devices { try await device.checkedSync() }
        }
        #expect(
            try await storedSettings(server)
                == #"{"map": [["lang", {"string": "fr"}], ["size", {"string": "12"}], ["theme", {"string": "dark"}]]}"#)
        for device in devices {
            #expect(try await device.settings == ["theme": "dark", "size": "12", "lang": "fr"])
        }
    }

    @Test func twoDevicesEditingOneMapAndOneSetBothKeepTheirEdits() async throws {
        let server = try await ServerHarness.start(types: ["Holder", "Bin", "Panel"])
        defer { Task { await server.stop() } }
        try await server.declareSchema([Holder.self, Bin.self, Panel.self])
        var devices: [PanelDevice] = []
        for name in ["ann", "bob"] {
            devices.append(
                try await PanelDevice(
                    name, transport: server.transport(try await server.user(name, .admin)),
                    types: [Holder.self, Bin.self, Panel.self], rootID: "p1",
                    configuration: .init(maxAttempts: 2, initialBackoff: .milliseconds(10))))
        }
        try await devices[0].realm.write { r in
            try r.create(Panel.self, value: ["id": "p1", "settings": ["theme": "dark"]])
            try r.create(Bin.self, value: ["id": "b1", "labels": ["red"]])
        }
        for device in devices { try await device.checkedSync() }
        for (device, name) in zip(devices, ["ann", "bob"]) {
            try await device.realm.write { r in
                let panel = r.object(ofType: Panel.self, forPrimaryKey: "p1")!
                panel.settings[name] = "here"
                panel.limits[name] = name.count
                r.object(ofType: Bin.self, forPrimaryKey: "b1")!.labels.insert(name)
            }
        }
        for _ in 0..<2 {
            for device in devices { try await device.checkedSync() }
        }
        for device in devices {
            let (settings, limits, labels) = try await device.realm.read { r in
                let panel = r.object(ofType: Panel.self, forPrimaryKey: "p1")
                return (
                    panel?.settings.dictionary, panel?.limits.dictionary,
                    r.object(ofType: Bin.self, forPrimaryKey: "b1").map { Set($0.labels) }
                )
            }
            #expect(settings == ["theme": "dark", "ann": "here", "bob": "here"])
            #expect(limits == ["ann": 3, "bob": 3])
            #expect(labels == ["red", "ann", "bob"])
        }
    }

    @Test func whenTwoDevicesChangeOneKeyTheLaterPushWins() async throws {
        let (server, devices) = try await start(settings: ["theme": "dark"])
        defer { Task { await server.stop() } }
        try await devices[0].edit { panel, _ in panel.settings["theme"] = "light" }
        try await devices[1].edit { panel, _ in panel.settings["theme"] = "sepia" }
        try await devices[0].checkedSync()
        try await devices[1].checkedSync()
        for device in devices { try await device.checkedSync() }
        for device in devices { #expect(try await device.settings == ["theme": "sepia"]) }
    }

    @Test(arguments: [
        (#"[["a", {"string": "x"}], ["a", {"string": "y"}]]"#, "a map holds the key"),
        (#"[["", {"string": "x"}]]"#, "empty"),
        (#"[["a.b", {"string": "x"}]]"#, "of a map holds a"),
        (#"[["$a", {"string": "x"}]]"#, "of a map starts with"),
        (#"[["a", {"int": 1}]]"#, "where the schema has string"),
        (#"[["a", {"null": true}]]"#, "nil"),
        (#"[["a"]]"#, "badRequest"),
    ])
    func aBadMapIsRefused(pairs: String, reason: String) async throws {
        let (server, devices) = try await start(settings: ["k": "v"])
        defer { Task { await server.stop() } }
        let token = try await server.user("raw", .admin)
        let body = Data(
            #"{"changes": [{"key": "bad", "object": {"type": "Panel", "id": {"string": "p1"}}, "kind": "update", "values": {"settings": {"map": \#(pairs)}}}]}"#
                .utf8)
        let (status, answer) = try await server.raw("POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
        if reason == "badRequest" {
            #expect(status == 400, "\(answer)")
        } else {
            #expect(status == 200 && answer.contains("rejected") && answer.contains("invalidValue"), "\(answer)")
            #expect(answer.contains(reason), "\(answer)")
        }
        #expect(try await storedSettings(server) == #"{"map": [["k", {"string": "v"}]]}"#)
        #expect(try await devices[1].settings == ["k": "v"])
    }

    @Test func aRuleCannotReadAMap() async throws {
        let (server, _) = try await start(settings: [:])
        defer { Task { await server.stop() } }
        let space = server.space
        do {
            try await server.withStore {
                try await $0.setRules(
                    of: space, to: try SpaceRules.parse(Data(#"{"Panel": {"read": "settings == $user"}}"#.utf8)))
            }
            Issue.record("a rule reading a map was accepted")
        } catch let error as SyncServerError {
            #expect(error.code == .badRequest && error.message.contains("Panel.settings is a map"), "\(error)")
        }
    }

    @Test func aMapCannotBecomeAList() async throws {
        var schema = try await ServerHarness.appSchema([Holder.self, Panel.self])
        let panel = schema.types.firstIndex { $0.name == "Panel" }!
        let settings = schema.types[panel].properties.firstIndex { $0.name == "settings" }!
        let limits = schema.types[panel].properties.firstIndex { $0.name == "limits" }!
        #expect(schema.types[panel].properties[settings].summary == "settings: [String: string]")
        #expect(schema.types[panel].properties[limits].summary == "limits: [String: int?]")
        let map = schema
        schema.types[panel].properties[settings].isMap = false
        schema.types[panel].properties[settings].isList = true
        #expect(
            map.breakingChanges(to: schema)
                == ["property Panel.settings changes from settings: [String: string] to settings: [string]"])
        // A map of links whose values are not optional, or a map that is a list too, is not a schema.
        var links = map
        links.types[panel].properties[settings].type = "link"
        links.types[panel].properties[settings].target = "Holder"
        #expect(throws: SyncServerError.self) { try links.checked() }
        var both = map
        both.types[panel].properties[settings].isList = true
        #expect(throws: SyncServerError.self) { try both.checked() }
    }
}
