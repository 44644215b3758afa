import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSync
import LiveObjectsSyncProtocol
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

extension SyncTestDevice where Root == Panel {
    /// The panel's style (null before the panel reached this device).
    var style: AnyValue {
        get async throws { try await read { $0?.style ?? .null } }
    }
}

/// `AnyValue` properties through the engine (docs/SYNC-PROTOCOL.md, "Mixed values"): every
/// kind on the wire, replaced whole, the later push winning.
@Suite("Sync AnyValue properties")
struct SyncMixedTests {
    static let panel = SyncObjectID(Panel.self, .string("p1"))

    /// One value of every kind, and nested lists and dictionaries.
    static let everyKind: [AnyValue] = [
        .null, .bool(true), .int(-7), .int(.max), .float(1.5), .double(0.1), .double(-.infinity), .string("é\u{301}"),
        .date(Date(timeIntervalSinceReferenceDate: 752_000_000.25)), .data(Data([0, 1, 2, 255])),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), .decimal(Decimal(string: "12.50")!),
        .objectID(ObjectID(hex: "507f1f77bcf86cd799439011")!), .list([]), .dictionary([:]),
        .list([1, "a", .list([2, .dictionary(["k": nil])])]),
        .dictionary(["b": 1, "a": [true, .data(Data([7]))], "": .dictionary(["x": .list([])])]),
    ]

    /// Two devices with the panel p1 synced on both.
    func devices(server: FakeServer = FakeServer()) async throws -> (FakeServer, [MapDevice]) {
        let a = try await MapDevice("a", server)
        try await a.realm.write { r in _ = try r.create(Panel.self, value: ["id": "p1"]) }
        try await a.sync()
        let b = try await MapDevice("b", server)
        try await b.sync()
        return (server, [a, b])
    }

    @Test(arguments: everyKind)
    func everyKindTravelsTheWireAndReadsBackAsItself(value: AnyValue) throws {
        let bytes = try WireSyncValue(.mixed(value.synced)).json().jsonBytes()
        let read = try WireSyncValue(json: JSONValue(parsing: bytes)).value
        // The engine reads a pulled value by the property's type: plain or mixed, one value.
        #expect(read.mixedValue == value.synced, "\(String(decoding: bytes, as: UTF8.self)) read as \(read)")
    }

    @Test func aNestedValueHasTheDocumentedShape() throws {
        let value: SyncMixedValue = .dictionary(["b": 1, "a": [true, .dictionary([:])], "é": nil])
        let text = String(decoding: try WireSyncValue(.mixed(value)).json().jsonBytes(), as: UTF8.self)
        #expect(
            text
                == #"{"dictionary":[["a",{"list":[{"bool":true},{"dictionary":[]}]}],["b",{"int":1}],["é",{"null":true}]]}"#
        )
        // A flat list reads as a plain list (a server without the schema cannot tell), a list
        // holding a container as an AnyValue.
        let flat = try WireSyncValue(json: JSONValue(parsing: Array(#"{"list":[{"int":1}]}"#.utf8))).value
        #expect(flat == .value(.list([.int(1)])))
        let nested = try WireSyncValue(json: JSONValue(parsing: Array(#"{"list":[{"list":[]}]}"#.utf8))).value
        #expect(nested == .mixed(.list([.list([])])))
    }

    @Test func aMalformedMixedValueOnTheWireIsRefused() throws {
        func nested(_ depth: Int) -> String {
            String(repeating: #"{"list":["#, count: depth) + String(repeating: "]}", count: depth)
        }
        let deepest = try WireSyncValue(json: JSONValue(parsing: Array(nested(100).utf8))).value
        #expect(deepest.mixedValue != nil)
        // The list at the top may be a List<AnyValue>'s, whose elements nest 100 deep each: a
        // model with an AnyValue property refuses such a value when it reads it (see
        // SyncMixedCollectionTests).
        for bad in [
            nested(102), #"{"dictionary":[["k",{"int":1}],["k",{"int":2}]]}"#, #"{"dictionary":[["k"]]}"#,
            #"{"dictionary":{"k":{"int":1}}}"#, #"{"dictionary":[["k",{"color":1}]]}"#,
            #"{"list":[{"dictionary":[]},{"int":"1"}]}"#,
        ] {
            #expect(throws: SyncWireFormatError.self, "\(bad.prefix(80))") {
                try WireSyncValue(json: try JSONValue(parsing: Array(bad.utf8)))
            }
        }
        #expect(SyncProtocolLimits.maximumMixedNestingDepth == AnyValue.maximumNestingDepth)
    }

    @Test func theSchemaDeclaresAMixedProperty() async throws {
        let device = try await MapDevice("schema", FakeServer())
        let schema = try SyncSchema(device.realm.schema, types: [Holder.self, Panel.self])
        let style = try #require(schema.types.first { $0.name == "Panel" }?.properties.first { $0.name == "style" })
        #expect(style.type == "mixed" && style.list == nil && style.map == nil && style.optional == nil)
    }

    @Test func whenTwoDevicesSetTheStyleTheLaterPushWins() async throws {
        let (server, devices) = try await devices()
        try await devices[0].edit { panel, _ in panel.style = .dictionary(["font": "serif", "sizes": [10, 12.5]]) }
        try await devices[1].edit { panel, _ in panel.style = .list(["dark", .dictionary(["contrast": true])]) }
        try await devices[0].sync()
        let first = try #require(await server.applied.last)
        #expect(first.values["style"] == .mixed(.dictionary(["font": "serif", "sizes": [10, 12.5]])))
        #expect(first.bases.isEmpty)
        try await devices[1].sync()
        try await devices[0].sync()
        let expected: AnyValue = .list(["dark", .dictionary(["contrast": true])])
        for device in devices { #expect(try await device.style == expected) }
        #expect(await server.records[Self.panel]?.values["style"] == .mixed(expected.synced))
    }

    @Test func aStylePulledAsAPlainListIsANestedListAndHasNoBase() async throws {
        let (server, devices) = try await devices()
        // As the HTTP transport reads a flat list: a plain value, not marked as an AnyValue.
        await server.edit(Self.panel, ["style": .value(.list([.int(1), .string("a")]))])
        try await devices[0].sync()
        #expect(try await devices[0].style == [1, "a"])
        try await devices[0].edit { panel, _ in panel.style = [1, "a", "b"] }
        try await devices[0].sync()
        let change = try #require(await server.applied.last)
        #expect(change.kind == .update && change.values["style"] == .mixed([1, "a", "b"]))
        // An AnyValue is replaced whole: a base would make a server merge it as a list.
        #expect(change.bases.isEmpty, "\(change.bases)")
    }

    @Test func aStyleSentWithAMapWhoseAnswerWasLostHasNoBaseAfterARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-mixed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Realm.Configuration(
            file: directory.appendingPathComponent("panels.json"), objectTypes: [Holder.self, Panel.self])
        configuration.keepsHistory = true
        let server = FakeServer()
        func engine(_ realm: Realm) async throws -> SyncEngine {
            try await SyncEngine(
                realm: realm, transport: server, types: [Holder.self, Panel.self],
                configuration: .init(maxAttempts: 2, sleep: { _ in }))
        }
        var realm = try await Realm.open(configuration)
        try await realm.write { r in try r.create(Panel.self, value: ["id": "p1", "settings": ["a": "1"]]) }
        _ = try await engine(realm).sync()
        // One change with a map (so a base) and a flat list in the style; its answers are lost,
        // so the engine keeps it, unconfirmed, in its state log.
        try await realm.write { r in
            let panel = r.object(ofType: Panel.self, forPrimaryKey: "p1")!
            panel.settings["b"] = "2"
            panel.style = [1, "a"]
        }
        await server.setFaults(Faults(failAfter: 1))
        _ = try await engine(realm).push()
        try await realm.close()
        await server.setFaults(.none)
        realm = try await Realm.open(configuration)
        let restarted = try await engine(realm)
        _ = try await restarted.push()
        try await realm.write { r in r.object(ofType: Panel.self, forPrimaryKey: "p1")!.style = [1, "a", "b"] }
        _ = try await restarted.push()
        let change = try #require(await server.applied.last)
        #expect(change.values["style"] == .mixed([1, "a", "b"]))
        #expect(change.bases["style"] == nil, "\(change.bases)")
        try await realm.close()
    }

    @Test func aPulledStyleTheModelCannotHoldIsUnreadable() async throws {
        let (server, devices) = try await devices()
        try await devices[0].edit { panel, _ in panel.style = "kept" }
        try await devices[0].sync()
        let others = [
            SyncObjectID(Panel.self, .string("map")): SyncValue.map(["a": .int(1)]),
            SyncObjectID(Panel.self, .string("link")): .reference(nil),
        ]
        for (id, value) in others { await server.edit(id, ["style": value]) }
        let report = try await devices[1].sync()
        #expect(Set(report.unreadable.keys) == Set(others.keys), "\(report.unreadable)")
        #expect(report.unreadable.values.allSatisfy { $0.code == .typeMismatch && $0.property == "style" })
        #expect(try await devices[1].style == "kept")
    }

    @Test func aTypeWithACollectionOfAnyValuesIsSynced() async throws {
        final class Scrapbook: Object, SyncableObject {
            @Persisted(primaryKey: true) var id = 0
            @Persisted var serverID: String?
            @Persisted var entries: List<AnyValue>
            @Persisted var marks: MutableSet<AnyValue>
            @Persisted var fields: Map<String, AnyValue>
        }
        var configuration = Realm.Configuration(
            identifier: "mixed-collections-\(UUID())", objectTypes: [Scrapbook.self])
        configuration.keepsHistory = true
        let realm = try await Realm.open(configuration)
        let server = FakeServer()
        let engine = try await SyncEngine(realm: realm, transport: server, types: [Scrapbook.self])
        try await realm.write { r in
            let book = try r.create(Scrapbook.self, value: ["id": 1])
            book.entries.append(contentsOf: [1, [2.5]])
            book.marks.insert("m")
            book.fields["k"] = .dictionary(["x": nil])
        }
        #expect(try await engine.sync().pushed == 1)
        let values = try #require(await server.applied.last?.values)
        #expect(values["entries"] == .mixedList([1, [2.5]]))
        #expect(values["marks"] == .mixedList(["m"]))
        #expect(values["fields"] == .mixedMap(["k": .dictionary(["x": nil])]))
    }
}
