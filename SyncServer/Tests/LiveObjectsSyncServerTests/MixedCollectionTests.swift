import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import PostgresNIO
import Testing

@testable import LiveObjectsSyncServer

extension SyncTestDevice where Root == Panel {
    /// The panel's items, marks and extras (empty before the panel reached this device).
    var mixedCollections: (items: [AnyValue], marks: Set<AnyValue>, extras: [String: AnyValue]) {
        get async throws {
            try await read { panel in
                guard let panel else { return ([], [], [:]) }
                return (Array(panel.items), Set(panel.marks), panel.extras.dictionary)
            }
        }
    }
}

/// `List<AnyValue>`, `MutableSet<AnyValue>` and `Map<String, AnyValue>` through the real server
/// (docs/SYNC-PROTOCOL.md, "Collections of mixed values"): merged per operation, member and
/// key; every element checked as an `AnyValue` property's value, a bad one refused per change.
@Suite("Sync server collections of AnyValue", .serialized)
struct MixedCollectionTests {
    /// A server whose space declares the panel's schema (or none), and two devices with the
    /// panel p1 (its items, marks and extras given) synced.
    func start(
        _ name: String = #function, schema: Bool = true, items: [AnyValue] = [], marks: [AnyValue] = [],
        extras: [String: AnyValue] = [:]
    ) async throws -> (ServerHarness, [PanelDevice]) {
        let server = try await ServerHarness.start(name, types: ["Holder", "Panel"])
        if schema { try await server.declareSchema([Holder.self, Panel.self]) }
        var devices: [PanelDevice] = []
        for name in ["ann", "bob"] {
            devices.append(try await PanelDevice(name, server, token: try await server.user(name, .admin)))
        }
        try await devices[0].realm.write { r in
            let panel = try r.create(Panel.self, value: ["id": "p1"])
            panel.items.append(contentsOf: items)
            for mark in marks { panel.marks.insert(mark) }
            panel.extras.merge(extras)
        }
        for device in devices { try await device.checkedSync() }
        return (server, devices)
    }

    /// A property of a panel as the database holds it.
    func stored(_ server: ServerHarness, _ property: String, _ id: String = "p1") async throws -> String {
        let rows = try await server.client.query(
            """
            SELECT ("values" -> \(property))::text FROM objects
            WHERE type = 'Panel' AND local_id = \(#"{"string": "\#(id)"}"#)::jsonb
            AND space_id = (SELECT id FROM spaces WHERE name = \(server.space))
            """)
        for try await (text) in rows.decode(String.self) { return text }
        return ""
    }

    /// Syncs both devices twice (the second round pulls what the other pushed in the first).
    func syncAll(_ devices: [PanelDevice]) async throws {
        for _ in 0..<2 {
            for device in devices { try await device.checkedSync() }
        }
    }

    @Test(arguments: [true, false])
    func appendsOfTwoDevicesToOneListAreBothKept(schema: Bool) async throws {
        let (server, devices) = try await start(schema: schema, items: ["first"])
        defer { Task { await server.stop() } }
        try await devices[0].edit { panel, _ in panel.items.append(.dictionary(["by": "ann", "at": [1, 2.5]])) }
        try await devices[1].edit { panel, _ in panel.items.append(contentsOf: [1, 1.0]) }
        try await syncAll(devices)
        let expected: [AnyValue] = ["first", .dictionary(["by": "ann", "at": [1, 2.5]]), 1, 1.0]
        #expect(
            try await stored(server, "items")
                == #"{"list": [{"string": "first"}, {"dictionary": [["at", {"list": [{"int": 1}, {"double": 2.5}]}], ["by", {"string": "ann"}]]}, {"int": 1}, {"double": 1}]}"#
        )
        for device in devices { #expect(try await device.mixedCollections.items == expected) }
    }

    @Test func membersAddedOnTwoDevicesAreBothKept() async throws {
        let (server, devices) = try await start(marks: ["old", 7])
        defer { Task { await server.stop() } }
        try await devices[0].edit { panel, _ in
            panel.marks.insert(1)
            panel.marks.insert(.list(["x"]))
        }
        try await devices[1].edit { panel, _ in
            panel.marks.insert(1.0)
            panel.marks.insert(.list(["x"]))
            panel.marks.remove("old")
        }
        try await syncAll(devices)
        // The list ["x"], added on both, is held once; so are 1 and 1.0, one number (the first
        // pushed stays), on the server as on the devices.
        let expected: Set<AnyValue> = [7, 1, .list(["x"])]
        for device in devices { #expect(try await device.mixedCollections.marks == expected) }
        let marks = try JSONValue(parsing: Array(try await stored(server, "marks").utf8))
        #expect(marks["list"]?.arrayValue?.count == 3, "\(marks)")
        #expect(marks["list"]?.arrayValue?.contains(.object([(key: "int", value: .int(1))])) == true, "\(marks)")
    }

    /// A set's merge holds one member per number, whatever its kind, as a device's set does;
    /// other values of different kinds stay apart.
    @Test func aSetMergeHoldsANumberOnceWhateverItsKind() throws {
        func list(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }
        let merged = SyncStore.mergedList(
            base: try list(#"{"list": [{"int": 7}]}"#),
            edited: try list(
                #"{"list": [{"int": 7}, {"double": 1}, {"decimal": "0.10"}, {"string": "1"}, {"bool": true}]}"#),
            current: try list(#"{"list": [{"int": 7}, {"int": 1}, {"double": 0.1}, {"double": "NaN"}]}"#),
            isSet: true)
        #expect(
            merged
                == (try list(
                    #"{"list": [{"int": 7}, {"int": 1}, {"double": 0.1}, {"double": "NaN"}, {"string": "1"}, {"bool": true}]}"#
                )))
        // A list keeps both: only sets compare numbers across kinds.
        let appended = SyncStore.mergedList(
            base: try list(#"{"list": []}"#), edited: try list(#"{"list": [{"double": 1}]}"#),
            current: try list(#"{"list": [{"int": 1}]}"#))
        #expect(appended == (try list(#"{"list": [{"int": 1}, {"double": 1}]}"#)))
    }

    @Test(arguments: [true, false])
    func differentKeysAreBothKeptAndForOneKeyTheLaterPushWins(schema: Bool) async throws {
        let (server, devices) = try await start(schema: schema, extras: ["level": 1, "tags": ["a"]])
        defer { Task { await server.stop() } }
        try await devices[0].edit { panel, _ in
            panel.extras["font"] = .dictionary(["name": "serif", "size": 12.5])
            panel.extras["level"] = 2
        }
        try await devices[1].edit { panel, _ in
            panel.extras["lang"] = "fr"
            panel.extras["level"] = .list([3, .decimal(Decimal(string: "3.50")!)])
            panel.extras.removeObject(for: "tags")
        }
        try await devices[0].checkedSync()
        try await devices[1].checkedSync()
        try await devices[0].checkedSync()
        let expected: [String: AnyValue] = [
            "font": .dictionary(["name": "serif", "size": 12.5]), "lang": "fr",
            "level": .list([3, .decimal(Decimal(string: "3.50")!)]),
        ]
        for device in devices { #expect(try await device.mixedCollections.extras == expected) }
        #expect(
            try await stored(server, "extras")
                == #"{"map": [["font", {"dictionary": [["name", {"string": "serif"}], ["size", {"double": 12.5}]]}], ["lang", {"string": "fr"}], ["level", {"list": [{"int": 3}, {"decimal": "3.5"}]}]]}"#
        )
    }

    @Test func nestedValuesRoundTripExactly() async throws {
        let (server, devices) = try await start()
        defer { Task { await server.stop() } }
        let kinds = MixedValueTests.everyKind
        let entries = Dictionary(uniqueKeysWithValues: kinds.enumerated().map { ("k\($0.offset)", $0.element) })
        try await devices[0].edit { panel, _ in
            panel.items.append(contentsOf: kinds)
            for kind in kinds { panel.marks.insert(kind) }
            panel.extras.merge(entries)
        }
        try await syncAll(devices)
        let pulled = try await devices[1].mixedCollections
        #expect(pulled.items.count == kinds.count)
        for (sent, received) in zip(kinds, pulled.items) { #expect(received == sent, "\(sent)") }
        #expect(pulled.marks == Set(kinds))
        #expect(pulled.extras == entries)
    }

    /// Bad collections, pushed by hand in one push with a good change: each bad change gets a
    /// rejected receipt naming the problem, the good one is applied, and what devices pull is
    /// unchanged.
    @Test(arguments: [
        ("items", #"{"list": [{"int": 1}, {"color": 1}]}"#, "\"color\" is not a kind of AnyValue", true),
        ("items", #"{"list": [{"dictionary": [["k", {"int": 1}], ["k", {"int": 2}]]}]}"#, "twice", true),
        ("items", #"{"list": [{"list": [{"ref": null}]}]}"#, "the nil of an AnyValue is {\"null\": true}", true),
        ("marks", #"{"list": [{"list": [{"int": 1}]}, {"list": [{"int": 1}]}]}"#, "a set holds", false),
        ("extras", #"{"map": [["k", {"dictionary": [["a"]]}]]}"#, "is not a [key, value] pair", true),
        ("extras", #"{"map": [["k", {"list": [{"double": "big"}]}]]}"#, "is not a value of its kind", true),
        ("extras", #"{"map": [["k", {"ref": null}]]}"#, "the nil of an AnyValue is {\"null\": true}", false),
        ("extras", #"{"map": [["a.b", {"int": 1}]]}"#, "a.b", false),
        ("items", #"{"map": [["k", {"int": 1}]]}"#, "not {\"list\": […]}", false),
        (
            "items",
            "{\"list\": [" + String(repeating: #"{"list": ["#, count: 101) + String(repeating: "]}", count: 101)
                + "]}", "at most 100 deep", true
        ),
    ])
    func aMalformedCollectionIsRefusedPerChange(
        property: String, value: String, reason: String, withoutSchema: Bool
    ) async throws {
        for schema in [true, false] where schema || withoutSchema {
            let (server, devices) = try await start("malformed-\(schema)", schema: schema, items: ["kept"])
            defer { Task { await server.stop() } }
            let before = try await stored(server, property)
            let token = try await server.user("raw", .admin)
            let body = Data(
                #"""
                {"changes": [
                 {"key": "bad", "object": {"type": "Panel", "id": {"string": "p1"}}, "kind": "update",
                  "values": {"\#(property)": \#(value)}},
                 {"key": "good", "object": {"type": "Panel", "id": {"string": "p2"}}, "kind": "create",
                  "values": {"items": {"list": [{"int": 1}, {"dictionary": []}]},
                             "extras": {"map": [["d", {"dictionary": [["x", {"list": []}]]}]]}}}]}
                """#.utf8)
            let (status, answer) = try await server.raw(
                "POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
            #expect(status == 200, "\(answer)")
            let receipts = try JSONValue(parsing: Array(answer.utf8))["receipts"]?.arrayValue ?? []
            let bad = receipts.first { $0["key"]?.stringValue == "bad" }
            let good = receipts.first { $0["key"]?.stringValue == "good" }
            #expect(bad?["outcome"]?.stringValue == "rejected", "schema \(schema): \(answer)")
            #expect(bad?["error"]?["code"]?.stringValue == "invalidValue", "schema \(schema): \(answer)")
            #expect(bad?["error"]?["message"]?.stringValue?.contains(reason) == true, "schema \(schema): \(answer)")
            #expect(good?["outcome"]?.stringValue == "applied", "schema \(schema): \(answer)")
            #expect(try await stored(server, property) == before)
            #expect(try await stored(server, "items", "p2") == #"{"list": [{"int": 1}, {"dictionary": []}]}"#)
            try await devices[1].checkedSync()
            #expect(try await devices[1].mixedCollections.items == ["kept"])
            let p2 = try await devices[1].realm.read { r in
                r.object(ofType: Panel.self, forPrimaryKey: "p2").map { (Array($0.items), $0.extras.dictionary) }
            }
            #expect(p2?.0 == [1, .dictionary([:])] && p2?.1 == ["d": .dictionary(["x": .list([])])])
        }
    }

    @Test func aMalformedPushIsRefusedWhole() async throws {
        let (server, _) = try await start()
        defer { Task { await server.stop() } }
        let token = try await server.user("raw", .admin)
        for value in [#"{"list": [1]}"#, #"{"map": [["k", 1]]}"#, #"{"map": [["k"]]}"#, #"{"map": {"k": {"int": 1}}}"#]
        {
            let body = Data(
                #"""
                {"changes": [{"key": "bad", "object": {"type": "Panel", "id": {"string": "p1"}}, "kind": "update",
                  "values": {"extras": \#(value)}}]}
                """#.utf8)
            let (status, answer) = try await server.raw(
                "POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
            #expect(status == 400 && answer.contains("badRequest"), "\(value): \(status) \(answer)")
        }
    }

    @Test func theSchemaDeclaresTheCollectionsAsMixed() async throws {
        let schema = try await ServerHarness.appSchema([Holder.self, Panel.self])
        let panel = try #require(schema.types.first { $0.name == "Panel" })
        let summaries = panel.properties.filter { ["items", "marks", "extras"].contains($0.name) }.map(\.summary)
        #expect(summaries == ["extras: [String: mixed]", "items: [mixed]", "marks: {mixed}"])
        #expect(try schema.checked() == schema)
        // A list of AnyValues becomes neither a single one nor a set in a later version.
        var single = schema
        let index = try #require(schema.types.firstIndex { $0.name == "Panel" })
        single.types[index].properties = single.types[index].properties.map { property in
            var property = property
            if property.name == "items" { property.isList = false }
            if property.name == "marks" { property.isSet = false }
            return property
        }
        #expect(schema.breakingChanges(to: single).count == 2, "\(schema.breakingChanges(to: single))")
    }

    @Test func rulesReadAListOfAnyValuesThroughAQuantifierAndNoMap() async throws {
        let schema = try await ServerHarness.appSchema([Holder.self, Panel.self])
        let rules = try SpaceRules.parse(Data(#"{"Panel": {"read": "ANY items == $user OR ANY marks == 3"}}"#.utf8))
        try rules.checked(against: schema)
        func values(_ items: String, _ marks: String = #"{"list": []}"#) throws -> [String: JSONValue] {
            [
                "items": try JSONValue.canonical(parsing: items, "items"),
                "marks": try JSONValue.canonical(parsing: marks, "marks"),
            ]
        }
        for (items, marks, readable) in [
            (#"{"list": [{"int": 1}, {"string": "ann"}]}"#, #"{"list": []}"#, true),
            (#"{"list": [{"string": "bob"}, {"list": [{"string": "ann"}]}]}"#, #"{"list": []}"#, false),
            (#"{"list": []}"#, #"{"list": [{"double": 3.5}, {"int": 3}]}"#, true),
            (#"{"list": []}"#, #"{"list": [{"double": 3.5}]}"#, false),
        ] {
            #expect(
                try rules.mayRead("Panel", values(items, marks), user: "ann", resolve: { _ in nil }) == readable,
                "\(items) \(marks)")
        }
        for refused in [#"{"Panel": {"read": "items == $user"}}"#, #"{"Panel": {"read": "extras == $user"}}"#] {
            #expect(throws: SyncServerError.self, "\(refused)") {
                try SpaceRules.parse(Data(refused.utf8)).checked(against: schema)
            }
        }
    }
}
