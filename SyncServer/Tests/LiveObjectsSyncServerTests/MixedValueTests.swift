import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import PostgresNIO
import Testing

@testable import LiveObjectsSyncServer

/// `AnyValue` properties through the real server (docs/SYNC-PROTOCOL.md, "Mixed values"): every
/// kind stored and pulled back, the later push winning, a malformed value refused per change.
@Suite("Sync server AnyValue properties", .serialized)
struct MixedValueTests {
    /// One value of every kind, and nested lists and dictionaries.
    static let everyKind: [AnyValue] = [
        .null, .bool(false), .int(.min), .float(-2.5), .double(1e300), .double(.infinity), .string("café"),
        .date(Date(timeIntervalSinceReferenceDate: -1.5)), .data(Data([1, 2, 3])),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), .decimal(Decimal(string: "-0.001")!),
        .objectID(ObjectID(hex: "507f1f77bcf86cd799439011")!), .list([]), .dictionary([:]),
        .list([1, "a", .list([2.5, .dictionary(["k": nil])])]),
        .dictionary(["b": 1, "a": [true, .decimal(Decimal(string: "9.99")!)], "": .dictionary(["x": .list([])])]),
    ]

    /// A server whose space declares the panel's schema (or none), and two devices with the
    /// panel p1 synced.
    func start(_ name: String = #function, schema: Bool = true) async throws -> (ServerHarness, [PanelDevice]) {
        let server = try await ServerHarness.start(name, types: ["Holder", "Panel"])
        if schema { try await server.declareSchema([Holder.self, Panel.self]) }
        var devices: [PanelDevice] = []
        for name in ["ann", "bob"] {
            devices.append(try await PanelDevice(name, server, token: try await server.user(name, .admin)))
        }
        try await devices[0].realm.write { r in _ = try r.create(Panel.self, value: ["id": "p1"]) }
        for device in devices { try await device.checkedSync() }
        return (server, devices)
    }

    /// A panel's style as the database holds it.
    func storedStyle(_ server: ServerHarness, _ id: String = "p1") async throws -> String {
        let rows = try await server.client.query(
            """
            SELECT ("values" -> 'style')::text FROM objects
            WHERE type = 'Panel' AND local_id = \(#"{"string": "\#(id)"}"#)::jsonb
            AND space_id = (SELECT id FROM spaces WHERE name = \(server.space))
            """)
        for try await (text) in rows.decode(String.self) { return text }
        return ""
    }

    @Test(arguments: [true, false])
    func whenTwoDevicesSetTheStyleTheLaterPushWins(schema: Bool) async throws {
        let (server, devices) = try await start(schema: schema)
        defer { Task { await server.stop() } }
        try await devices[0].edit { panel, _ in panel.style = .dictionary(["font": "serif", "sizes": [10, 12.5]]) }
        try await devices[1].edit { panel, _ in panel.style = .list(["dark", .dictionary(["contrast": true])]) }
        try await devices[0].checkedSync()
        try await devices[1].checkedSync()
        try await devices[0].checkedSync()
        #expect(
            try await storedStyle(server)
                == #"{"list": [{"string": "dark"}, {"dictionary": [["contrast", {"bool": true}]]}]}"#)
        for device in devices {
            #expect(try await device.read { $0?.style } == .list(["dark", .dictionary(["contrast": true])]))
        }
    }

    @Test func everyKindRoundTripsThroughTheServer() async throws {
        let (server, devices) = try await start()
        defer { Task { await server.stop() } }
        let kinds = Self.everyKind
        try await devices[0].realm.write { r in
            for (i, style) in kinds.enumerated() {
                try r.create(Panel.self, value: ["id": "k\(i)"]).style = style
            }
        }
        try await devices[0].checkedSync()
        try await devices[1].checkedSync()
        let pulled = try await devices[1].realm.read { r in
            kinds.indices.map { r.object(ofType: Panel.self, forPrimaryKey: "k\($0)")?.style }
        }
        for (sent, received) in zip(kinds, pulled) { #expect(received == sent, "\(sent)") }
        #expect(try await storedStyle(server, "k8") == #"{"data": "AQID"}"#)
    }

    /// A bad mixed value, pushed by hand in one push with a good change: the bad change gets a
    /// rejected receipt naming the problem, the good one is applied.
    @Test(arguments: [
        (#"{"dictionary": [["k", {"color": 1}]]}"#, "\"color\" is not a kind of AnyValue"),
        (#"{"list": [{"int": "1"}]}"#, "is not a value of its kind"),
        (#"{"list": [{"double": "big"}]}"#, "is not a value of its kind"),
        (#"{"dictionary": [["k", {"int": 1}], ["k", {"int": 2}]]}"#, "twice"),
        (#"{"dictionary": [["caf\u00e9", {"int": 1}], ["cafe\u0301", {"int": 2}]]}"#, "twice"),
        (#"{"dictionary": [["k"]]}"#, "is not a [key, value] pair"),
        (#"{"list": [{"ref": null}]}"#, "the nil of an AnyValue is {\"null\": true}"),
        (#"{"ref": null}"#, "the nil of an AnyValue is {\"null\": true}"),
        (#"{"map": []}"#, "\"map\" is not a kind of AnyValue"),
        // Past the depth: checked in linear time (a check that doubled its work per level
        // never answered this push).
        (String(repeating: #"{"list": ["#, count: 101) + String(repeating: "]}", count: 101), "at most 100 deep"),
    ])
    func aMalformedMixedValueIsRefusedPerChange(value: String, reason: String) async throws {
        for schema in [true, false] {
            let (server, devices) = try await start("malformed-\(schema)", schema: schema)
            defer { Task { await server.stop() } }
            try await devices[0].edit { panel, _ in panel.style = "kept" }
            try await devices[0].checkedSync()
            let token = try await server.user("raw", .admin)
            let body = Data(
                #"""
                {"changes": [
                 {"key": "bad", "object": {"type": "Panel", "id": {"string": "p1"}}, "kind": "update",
                  "values": {"style": \#(value)}},
                 {"key": "good", "object": {"type": "Panel", "id": {"string": "p2"}}, "kind": "create",
                  "values": {"style": {"list": [{"int": 1}, {"dictionary": []}]}}}]}
                """#.utf8)
            let (status, answer) = try await server.raw(
                "POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
            // Without a schema, a top-level link or map is a value of its own, not a mixed one.
            let refusedWithoutSchema = !value.hasPrefix(#"{"ref""#) && !value.hasPrefix(#"{"map""#)
            guard schema || refusedWithoutSchema else { continue }
            #expect(status == 200, "\(answer)")
            let receipts = try JSONValue(parsing: Array(answer.utf8))["receipts"]?.arrayValue ?? []
            let bad = receipts.first { $0["key"]?.stringValue == "bad" }
            let good = receipts.first { $0["key"]?.stringValue == "good" }
            #expect(bad?["outcome"]?.stringValue == "rejected", "schema \(schema): \(answer)")
            #expect(bad?["error"]?["code"]?.stringValue == "invalidValue", "schema \(schema): \(answer)")
            #expect(bad?["error"]?["message"]?.stringValue?.contains(reason) == true, "schema \(schema): \(answer)")
            #expect(good?["outcome"]?.stringValue == "applied", "schema \(schema): \(answer)")
            #expect(try await storedStyle(server) == #"{"string": "kept"}"#)
            #expect(try await storedStyle(server, "p2") == #"{"list": [{"int": 1}, {"dictionary": []}]}"#)
            try await devices[1].checkedSync()
            #expect(try await devices[1].read { $0?.style } == "kept")
        }
    }

    @Test func nestingPastTheDepthOfAnAnyValueIsRefused() {
        func nested(_ depth: Int) -> JSONValue {
            var value: JSONValue = .object([(key: "int", value: .int(1))])
            for _ in 0..<depth { value = .object([(key: "list", value: .array([value]))]) }
            return value
        }
        #expect(PushedChange.mixedProblem(nested(100)) == nil)
        #expect(PushedChange.mixedProblem(nested(101))?.contains("at most 100 deep") == true)
        #expect(PushedChange.isMixedShape(nested(101)))
    }

    @Test func aMixedValueHasNoBase() async throws {
        let (server, _) = try await start()
        defer { Task { await server.stop() } }
        let token = try await server.user("raw", .admin)
        let body = Data(
            #"""
            {"changes": [{"key": "based", "object": {"type": "Panel", "id": {"string": "p1"}}, "kind": "update",
              "values": {"style": {"list": [{"int": 1}]}}, "bases": {"style": {"list": []}}}]}
            """#.utf8)
        let (status, answer) = try await server.raw("POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
        #expect(status == 200 && answer.contains("rejected") && answer.contains("it has no base"), "\(answer)")
    }

    @Test func theSchemaDeclaresAMixedProperty() async throws {
        let schema = try await ServerHarness.appSchema([Holder.self, Panel.self])
        let panel = try #require(schema.types.firstIndex { $0.name == "Panel" })
        let style = try #require(schema.types[panel].properties.firstIndex { $0.name == "style" })
        #expect(schema.types[panel].properties[style].summary == "style: mixed")
        #expect(schema.json.contains(#""type" : "mixed""#) || schema.json.contains(#""type": "mixed""#))
        // A list, set or map of them is declared as such (MixedCollectionTests); a target is
        // refused.
        for change in [\SpaceSchema.Property.isList, \.isMap] {
            var collection = schema
            collection.types[panel].properties[style][keyPath: change] = true
            #expect(throws: Never.self) { try collection.checked() }
        }
        var broken = schema
        broken.types[panel].properties[style].target = "Holder"
        #expect(throws: SyncServerError.self) { try broken.checked() }
    }

    @Test func rulesAndSubscriptionsCompareAMixedPropertyByItsKind() async throws {
        let schema = try await ServerHarness.appSchema([Holder.self, Panel.self])
        let rules = try SpaceRules.parse(
            Data(#"{"Panel": {"read": "style == $user OR style == 3 OR style == true", "write": "style == nil"}}"#.utf8)
        )
        try rules.checked(against: schema)
        func values(_ style: String) throws -> [String: JSONValue] {
            ["style": try JSONValue.canonical(parsing: style, "a style")]
        }
        for (style, readable) in [
            (#"{"string": "ann"}"#, true), (#"{"string": "bob"}"#, false), (#"{"int": 3}"#, true),
            (#"{"double": 3.5}"#, false), (#"{"bool": true}"#, true), (#"{"list": [{"string": "ann"}]}"#, false),
            (#"{"null": true}"#, false),
        ] {
            #expect(
                try rules.mayRead("Panel", values(style), user: "ann", resolve: { _ in nil }) == readable, "\(style)")
        }
        let subscriptions = try PullSubscriptions.parse(
            #"[{"type": "Panel", "where": "style == 'dark' OR style == nil"}]"#, schema: schema)
        let query = try #require(subscriptions.queries(of: "Panel")?.first ?? nil)
        #expect(try query.allows(values(#"{"string": "dark"}"#), user: "ann", resolve: { _ in nil }))
        #expect(try query.allows(values(#"{"null": true}"#), user: "ann", resolve: { _ in nil }))
        #expect(try !query.allows(values(#"{"dictionary": []}"#), user: "ann", resolve: { _ in nil }))
        // A mixed property is not a list: a quantifier over it is refused.
        #expect(throws: SyncServerError.self) {
            try PullSubscriptions.parse(#"[{"type": "Panel", "where": "ANY style == 'dark'"}]"#, schema: schema)
        }
    }
}
