import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import PostgresNIO
import Testing

@testable import LiveObjectsSyncServer

/// Links inside `AnyValue`s through the real server (docs/SYNC-PROTOCOL.md, "Mixed values"): a
/// link travels as `{"ref": …}` inside the value and reaches another device as a link to the
/// same object; with a schema, a link must name a type of the space by an id of its key's kind,
/// else its change is refused alone.
@Suite("Sync server links inside AnyValues", .serialized)
struct MixedLinkTests {
    /// A server whose space declares the panel's schema (or none), and two devices with the
    /// holders h0 and h1 and the panel p1 synced.
    func start(_ name: String = #function, schema: Bool = true) async throws -> (ServerHarness, [PanelDevice]) {
        let server = try await ServerHarness.start(name, types: ["Holder", "Panel"])
        if schema { try await server.declareSchema([Holder.self, Panel.self]) }
        var devices: [PanelDevice] = []
        for name in ["ann", "bob"] {
            devices.append(try await PanelDevice(name, server, token: try await server.user(name, .admin)))
        }
        try await devices[0].realm.write { r in
            for i in 0..<2 { _ = try r.create(Holder.self, value: ["id": "h\(i)", "name": "Holder \(i)"]) }
            _ = try r.create(Panel.self, value: ["id": "p1"])
        }
        for device in devices { try await device.checkedSync() }
        return (server, devices)
    }

    /// The panel's mixed values on a device, each link as the string `→id` of its holder.
    func named(_ device: PanelDevice) async throws -> [String: AnyValue] {
        try await device.realm.read { r in
            guard let panel = r.object(ofType: Panel.self, forPrimaryKey: "p1") else { return [:] }
            return [
                "style": Self.named(panel.style, r), "items": .list(panel.items.map { Self.named($0, r) }),
                "marks": .list(panel.marks.map { Self.named($0, r) }.sorted { $0.description < $1.description }),
                "extras": .dictionary(panel.extras.dictionary.mapValues { Self.named($0, r) }),
            ]
        }
    }

    private static func named(_ value: AnyValue, _ r: isolated Realm) -> AnyValue {
        switch value {
        case .link(let link): .string("→" + (r.object(ofType: Holder.self, for: link)?.id ?? "?"))
        case .list(let items): .list(items.map { named($0, r) })
        case .dictionary(let entries): .dictionary(entries.mapValues { named($0, r) })
        default: value
        }
    }

    /// A property of the panel p1 as the database holds it.
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

    @Test(arguments: [true, false])
    func aLinkInEveryKindOfMixedPropertyIsPulledAsALinkToTheSameObject(schema: Bool) async throws {
        let (server, devices) = try await start(schema: schema)
        defer { Task { await server.stop() } }
        try await devices[0].edit { panel, holder in
            panel.style = .list(["x", try .object(holder("h0")), .dictionary(["by": try .object(holder("h1"))])])
            panel.items.append(objectsIn: [try .object(holder("h1")), 1])
            panel.marks.insert(try .object(holder("h0")))
            panel.extras["lead"] = try .object(holder("h1"))
            panel.extras["n"] = .list([try .object(holder("h0"))])
        }
        try await devices[0].checkedSync()
        try await devices[1].checkedSync()
        let expected: [String: AnyValue] = [
            "style": ["x", "→h0", ["by": "→h1"]], "items": ["→h1", 1], "marks": ["→h0"],
            "extras": ["lead": "→h1", "n": ["→h0"]],
        ]
        for device in devices { #expect(try await named(device) == expected) }
        // The link is stored as a plain link's reference.
        let style = try await stored(server, "style")
        #expect(style.hasPrefix(#"{"list": [{"string": "x"}, {"ref": {"id": {"string": "h0"}, "#), "\(style)")
        // Both devices add the same holder to the marks: one member (compared by its target;
        // a space without a schema merges a set as a list, see Sets).
        guard schema else { return }
        try await devices[1].edit { panel, holder in panel.marks.insert(try .object(holder("h1"))) }
        try await devices[0].edit { panel, holder in panel.marks.insert(try .object(holder("h1"))) }
        for _ in 0..<2 { for device in devices { try await device.checkedSync() } }
        for device in devices { #expect(try await named(device)["marks"] == ["→h0", "→h1"]) }
        let marks = try await stored(server, "marks")
        #expect(marks.components(separatedBy: #""h1""#).count == 2, "\(marks)")
    }

    /// A device that subscribes to the panels fetches the holders their AnyValues link to, and
    /// keeps them: a link inside an AnyValue keeps its target in the device's view, as a link
    /// property does.
    @Test func aSubscribedDeviceKeepsTheTargetsOfLinksInsideAnyValues() async throws {
        let (server, devices) = try await start()
        defer { Task { await server.stop() } }
        try await devices[0].edit { panel, holder in
            panel.style = .dictionary(["by": try .object(holder("h0"))])
            panel.extras["lead"] = try .object(holder("h1"))
        }
        try await devices[0].checkedSync()
        let carol = try await PanelDevice("carol", server, token: try await server.user("carol", .admin))
        try await carol.engine.subscribe(SyncSubscription(name: "panels", Panel.self))
        for _ in 0..<2 { try await carol.checkedSync() }
        let values = try await named(carol)
        #expect(values["style"] == ["by": "→h0"] && values["extras"] == ["lead": "→h1"], "\(values)")
        let holders = try await carol.realm.read { r in Set(r.objects(Holder.self).map(\.id)) }
        #expect(holders == ["h0", "h1"])
    }

    /// A link inside a mixed value, pushed by hand beside a good change: refused per change with
    /// a schema when it names a type the space does not declare or an id of another kind, with
    /// or without one when it is not a reference; the good change is applied.
    @Test(arguments: [
        ("style", #"{"list": [{"ref": {"type": "Coupon", "id": {"string": "c1"}}}]}"#, "not a type of the schema"),
        ("style", #"{"ref": {"type": "Holder", "id": {"int": 3}}}"#, "by an id: "),
        ("items", #"{"list": [{"ref": {"type": "Holder", "id": {"int": 3}}}]}"#, "by an id: "),
        (
            "extras",
            #"{"map": [["k", {"dictionary": [["to", {"ref": {"type": "Coupon", "id": {"string": "c"}}}]]}]]}"#,
            "not a type of the schema"
        ),
        ("style", #"{"list": [{"ref": {"type": "Holder"}}]}"#, "is not a reference"),
        ("items", #"{"list": [{"dictionary": [["k", {"ref": {"id": {"string": "h0"}}}]]}]}"#, "is not a reference"),
        ("style", #"{"list": [{"ref": null}]}"#, "the nil of an AnyValue"),
        ("style", #"{"dictionary": [["k", {"refs": []}]]}"#, "is no AnyValue"),
    ])
    func aBadLinkInsideAMixedValueIsRefusedPerChange(property: String, value: String, reason: String) async throws {
        for schema in [true, false] {
            let (server, devices) = try await start("bad-link-\(schema)", schema: schema)
            defer { Task { await server.stop() } }
            let token = try await server.user("raw", .admin)
            let body = Data(
                #"""
                {"changes": [
                 {"key": "bad", "object": {"type": "Panel", "id": {"string": "p1"}}, "kind": "update",
                  "values": {"\#(property)": \#(value)}},
                 {"key": "good", "object": {"type": "Panel", "id": {"string": "p2"}}, "kind": "create",
                  "values": {"style": {"list": [{"ref": {"type": "Holder", "id": {"string": "h1"}}}]}}}]}
                """#.utf8)
            let (status, answer) = try await server.raw(
                "POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
            #expect(status == 200, "\(answer)")
            let receipts = try JSONValue(parsing: Array(answer.utf8))["receipts"]?.arrayValue ?? []
            let bad = receipts.first { $0["key"]?.stringValue == "bad" }
            let good = receipts.first { $0["key"]?.stringValue == "good" }
            #expect(good?["outcome"]?.stringValue == "applied", "schema \(schema): \(answer)")
            // Without a schema the server checks the shape only: a well-formed link is stored
            // (a top-level one is a link of its own), a malformed one refused.
            let checkedWithoutSchema =
                !["not a type of the schema", "by an id: "].contains(reason)
                && !value.hasPrefix(#"{"ref""#) && !(property == "extras")
            guard schema || checkedWithoutSchema else {
                #expect(bad?["outcome"]?.stringValue == "applied", "schema \(schema): \(answer)")
                continue
            }
            #expect(bad?["outcome"]?.stringValue == "rejected", "schema \(schema): \(answer)")
            #expect(bad?["error"]?["code"]?.stringValue == "invalidValue", "schema \(schema): \(answer)")
            let message = bad?["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains(reason) && message.contains(property), "schema \(schema): \(answer)")
            #expect(try await stored(server, property) != value)
            try await devices[1].checkedSync()
            let pulled = try await devices[1].realm.read { r in
                r.object(ofType: Panel.self, forPrimaryKey: "p2").map { Self.named($0.style, r) }
            }
            #expect(pulled == ["→h1"], "schema \(schema)")
        }
    }

    /// A link at the top of a mixed value that is not a reference is malformed, as a plain
    /// link's: the whole push is refused.
    @Test func aMalformedLinkAtTheTopOfAMixedValueRefusesThePush() async throws {
        let (server, _) = try await start()
        defer { Task { await server.stop() } }
        let token = try await server.user("raw", .admin)
        let body = Data(
            #"""
            {"changes": [{"key": "bad", "object": {"type": "Panel", "id": {"string": "p1"}}, "kind": "update",
              "values": {"style": {"ref": {"type": 1, "id": {"string": "h0"}}}}}]}
            """#.utf8)
        let (status, answer) = try await server.raw("POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
        #expect(status == 400 && answer.contains("badRequest"), "\(answer)")
    }

    /// Links in a set of AnyValues are members by their target, not the server id they carry;
    /// a list's elements too.
    @Test func theMergesCompareALinkByItsTarget() throws {
        func value(_ text: String) throws -> JSONValue { try JSONValue.canonical(parsing: text, "a value") }
        let bare = #"{"ref": {"type": "Holder", "id": {"string": "h1"}}}"#
        let known = #"{"ref": {"type": "Holder", "id": {"string": "h1"}, "serverID": "7"}}"#
        let merged = SyncStore.mergedList(
            base: try value(#"{"list": []}"#), edited: try value(#"{"list": [\#(bare)]}"#),
            current: try value(#"{"list": [\#(known)]}"#), isSet: true)
        #expect(merged == (try value(#"{"list": [\#(known)]}"#)), "\(String(describing: merged))")
        // A removal of a nested link, sent without the server id the stored one carries.
        let removed = SyncStore.mergedList(
            base: try value(#"{"list": [{"list": [\#(bare)]}, {"int": 1}]}"#),
            edited: try value(#"{"list": [{"int": 1}]}"#),
            current: try value(#"{"list": [{"list": [\#(known)]}, {"int": 1}]}"#))
        #expect(removed == (try value(#"{"list": [{"int": 1}]}"#)), "\(String(describing: removed))")
        let map = SyncStore.mergedMap(
            base: try value(#"{"map": [["a", \#(bare)]]}"#),
            edited: try value(#"{"map": [["a", \#(bare)], ["b", {"int": 2}]]}"#),
            current: try value(#"{"map": [["a", \#(known)]]}"#))
        #expect(map == (try value(#"{"map": [["a", \#(known)], ["b", {"int": 2}]]}"#)), "\(String(describing: map))")
    }

    /// A rule does not read a link inside an AnyValue: it matches none but `!=`, and `== nil`
    /// when its target is deleted or not on the server, as a link does.
    @Test func aRuleComparesALinkInAnAnyValueAsALink() throws {
        let rules = try SpaceRules.parse(
            Data(#"{"Panel": {"read": "style == $user OR style == 3 OR style == nil OR style != 'x'"}}"#.utf8))
        let equalOnly = try SpaceRules.parse(Data(#"{"Panel": {"read": "style == 'x' OR style == nil"}}"#.utf8))
        let style = try JSONValue.canonical(
            parsing: #"{"ref": {"type": "Holder", "id": {"string": "ann"}}}"#, "a style")
        let holder: [String: JSONValue] = ["name": .object([(key: "string", value: .string("ann"))])]
        #expect(rules.mayRead("Panel", ["style": style], user: "ann", resolve: { _ in holder }))
        #expect(!equalOnly.mayRead("Panel", ["style": style], user: "ann", resolve: { _ in holder }))
        #expect(equalOnly.mayRead("Panel", ["style": style], user: "ann", resolve: { _ in nil }))
        let items = try SpaceRules.parse(Data(#"{"Panel": {"read": "ANY items == 'ann' OR ANY items == nil"}}"#.utf8))
        let list = try JSONValue.canonical(parsing: #"{"list": [\#(style.text)]}"#, "items")
        #expect(!items.mayRead("Panel", ["items": list], user: "ann", resolve: { _ in holder }))
    }
}
