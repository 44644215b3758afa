import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSync
import LiveObjectsSyncProtocol
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Persistence
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The mixed values of a panel with each link written as the string `→id` of its holder (a
/// link to another object as `→?`), so that devices compare them.
struct NamedMixedValues: Equatable, CustomStringConvertible {
    var style: AnyValue
    var items: [AnyValue]
    var marks: Set<AnyValue>
    var extras: [String: AnyValue]

    var description: String { "style \(style), items \(items), marks \(marks), extras \(extras)" }

    static func of(_ realm: Realm, _ id: String = "p1") async throws -> NamedMixedValues? {
        try await realm.read { r in
            guard let panel = r.object(ofType: Panel.self, forPrimaryKey: id) else { return nil }
            return NamedMixedValues(
                style: named(panel.style, r), items: Array(panel.items).map { named($0, r) },
                marks: Set(panel.marks.map { named($0, r) }), extras: panel.extras.dictionary.mapValues { named($0, r) }
            )
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
}

/// Links inside `AnyValue`s through the engine (docs/SYNC-PROTOCOL.md, "Mixed values"): a link
/// travels as a reference to its target's type and primary key and arrives as a link to the same
/// object; a target not here yet is null until it arrives (kept in the state log meanwhile).
@Suite("Sync links inside AnyValues")
struct SyncMixedLinkTests {
    static let panel = SyncObjectID(Panel.self, .string("p1"))
    static func holder(_ id: String) -> SyncObjectID { SyncObjectID(Holder.self, .string(id)) }
    static func reference(_ id: String) -> SyncMixedValue { .reference(SyncReference(object: holder(id))) }

    /// Two devices with the panel p1 and the holders h0 and h1 synced on both.
    func devices(server: FakeServer = FakeServer()) async throws -> (FakeServer, [MapDevice]) {
        let a = try await MapDevice("a", server)
        try await a.realm.write { r in
            for i in 0..<2 { _ = try r.create(Holder.self, value: ["id": "h\(i)", "name": "Holder \(i)"]) }
            _ = try r.create(Panel.self, value: ["id": "p1"])
        }
        try await a.sync()
        let b = try await MapDevice("b", server)
        try await b.sync()
        return (server, [a, b])
    }

    func syncAll(_ devices: [MapDevice]) async throws {
        for _ in 0..<2 {
            for device in devices {
                let report = try await device.sync()
                #expect(report.failed.isEmpty && report.pullFailure == nil && report.unreadable.isEmpty, "\(report)")
            }
        }
    }

    /// Sets a link in the style, in the list, in the set and in the map of AnyValues (nested
    /// too) on device a.
    func setLinks(on device: MapDevice) async throws {
        try await device.edit { panel, holder in
            panel.style = .list(["x", try .object(holder("h0")), .dictionary(["by": try .object(holder("h1"))])])
            panel.items.append(objectsIn: [try .object(holder("h1")), 1, .list([try .object(holder("h0"))])])
            panel.marks.insert(try .object(holder("h0")))
            panel.marks.insert("m")
            panel.extras["lead"] = try .object(holder("h1"))
            panel.extras["nested"] = .dictionary(["k": try .object(holder("h0"))])
            panel.extras["n"] = 2
        }
    }

    static let expected = NamedMixedValues(
        style: ["x", "→h0", ["by": "→h1"]], items: ["→h1", 1, ["→h0"]], marks: ["→h0", "m"],
        extras: ["lead": "→h1", "nested": ["k": "→h0"], "n": 2])

    @Test func aLinkInEveryKindOfMixedPropertyArrivesAsALinkToTheSameObject() async throws {
        let (server, devices) = try await devices()
        try await setLinks(on: devices[0])
        try await syncAll(devices)
        for device in devices {
            #expect(try await NamedMixedValues.of(device.realm) == Self.expected, "\(device.realm)")
        }
        // On the server: references, by the target's type and primary key.
        let style = await server.records[Self.panel]?.values["style"]
        let expectedStyle: SyncMixedValue = ["x", Self.reference("h0"), ["by": Self.reference("h1")]]
        #expect(
            style.flatMap { if case .mixed(let value) = $0 { value.withoutServerIDs } else { nil } } == expectedStyle,
            "\(String(describing: style))")
        let pushed = await server.applied.filter { $0.object == Self.panel }.flatMap(\.values.values)
        #expect(pushed.contains { $0.linkTargetIDs == [Self.holder("h1"), Self.holder("h0")] }, "\(pushed)")
    }

    @Test func aValueCreatedWithItsTargetInOneRoundIsPushedAfterIt() async throws {
        let server = FakeServer()
        let device = try await MapDevice("a", server)
        // p1 changed last before p2: read in that order, it links to p2, which goes first.
        try await device.realm.write { r in _ = try r.create(Panel.self, value: ["id": "p1"]) }
        try await device.realm.write { r in _ = try r.create(Panel.self, value: ["id": "p2"]) }
        try await device.realm.write { r in
            let p2 = r.object(ofType: Panel.self, forPrimaryKey: "p2")!
            r.object(ofType: Panel.self, forPrimaryKey: "p1")!.items.append(.list([try .object(p2)]))
        }
        try await device.realm.write { r in r.object(ofType: Panel.self, forPrimaryKey: "p2")!.style = "late" }
        try await device.sync()
        let order = await server.applied.map(\.object)
        #expect(order == [SyncObjectID(Panel.self, .string("p2")), Self.panel], "\(order)")
    }

    @Test func aTargetArrivingAfterTheHolderIsNullUntilItArrives() async throws {
        let server = FakeServer()
        await server.edit(
            Self.panel,
            [
                "style": .mixed(["a", Self.reference("h9")]), "items": .mixedList([Self.reference("h9"), 1]),
                "marks": .mixedList([Self.reference("h9")]),
                "extras": .mixedMap(["k": Self.reference("h9"), "n": ["x": Self.reference("h9")]]),
            ])
        let device = try await MapDevice("late", server)
        var report = try await device.sync()
        #expect(report.unreadable.isEmpty && report.failed.isEmpty, "\(report)")
        let waiting = NamedMixedValues(
            style: ["a", nil], items: [nil, 1], marks: [nil], extras: ["k": nil, "n": ["x": nil]])
        #expect(try await NamedMixedValues.of(device.realm) == waiting)
        // Nothing is pushed back: the nulls are the engine's, not an edit.
        let pushes = await server.applied.count
        report = try await device.sync()
        #expect(await server.applied.count == pushes)
        await server.edit(Self.holder("h9"), ["name": .value(.string("Nine"))])
        report = try await device.sync()
        #expect(report.unreadable.isEmpty && report.failed.isEmpty, "\(report)")
        let arrived = NamedMixedValues(
            style: ["a", "→h9"], items: ["→h9", 1], marks: ["→h9"], extras: ["k": "→h9", "n": ["x": "→h9"]])
        #expect(try await NamedMixedValues.of(device.realm) == arrived)
        #expect(await server.applied.count == pushes)
        // The list's base is the list as the server has it now: an append merges after it.
        try await device.edit { panel, _ in panel.items.append("mine") }
        try await device.sync()
        let items = await server.records[Self.panel]?.values["items"]
        #expect(items == .mixedList([Self.reference("h9"), 1, "mine"]), "\(String(describing: items))")
    }

    @Test func aTargetDeletedOnOneDeviceTurnsTheOthersValueNull() async throws {
        let (_, devices) = try await devices()
        try await setLinks(on: devices[0])
        try await syncAll(devices)
        try await devices[0].realm.write { r in try r.delete(r.object(ofType: Holder.self, forPrimaryKey: "h0")!) }
        try await syncAll(devices)
        // As each store keeps it: a link made null, a set's member gone.
        let expected = NamedMixedValues(
            style: ["x", nil, ["by": "→h1"]], items: ["→h1", 1, [nil]], marks: ["m"],
            extras: ["lead": "→h1", "nested": ["k": nil], "n": 2])
        for device in devices {
            let values = try await NamedMixedValues.of(device.realm)
            #expect(values == expected, "\(String(describing: values))")
        }
    }

    @Test(arguments: ["style", "items", "extras"])
    func aLinkToATypeThatIsNotSyncedIsRefused(property: String) async throws {
        let server = FakeServer()
        var configuration = Realm.Configuration(
            identifier: "unsynced-\(UUID())", objectTypes: [Holder.self, Panel.self, Card.self])
        configuration.keepsHistory = true
        let realm = try await Realm.open(configuration)
        let engine = try await SyncEngine(
            realm: realm, transport: server, types: [Holder.self, Panel.self], configuration: .init(sleep: { _ in }))
        try await realm.write { r in
            let card = try r.create(Card.self, value: ["id": "c1"])
            let panel = try r.create(Panel.self, value: ["id": "p1"])
            switch property {
            case "style": panel.style = .list([1, try .object(card)])
            case "items": panel.items.append(.dictionary(["card": try .object(card)]))
            default: panel.extras["card"] = try .object(card)
            }
        }
        do {
            try await engine.sync()
            Issue.record("a link to a Card, which is not synced, was pushed")
        } catch let error as LiveObjectsError {
            #expect(error.code == .typeMismatch && error.property == property, "\(error)")
            #expect(error.message.contains("Card"), "\(error)")
        }
        #expect(await server.records[Self.panel] == nil)
    }

    /// A pulled link to a type this device does not sync, or by an id of another kind, is a
    /// state the model cannot read: reported, the object left as it was.
    @Test func aPulledLinkToAnUnsyncedTypeOrByAnIdOfAnotherKindIsUnreadable() async throws {
        let (server, devices) = try await devices()
        try await devices[0].edit { panel, _ in panel.style = "kept" }
        try await syncAll(devices)
        let card = SyncMixedValue.reference(SyncReference(object: SyncObjectID(Card.self, .string("c1"))))
        let byInt = SyncMixedValue.reference(SyncReference(object: SyncObjectID(Holder.self, .int(3))))
        let others: [SyncObjectID: [String: SyncValue]] = [
            Self.panel: ["style": .mixed(["x", card]), "settings": .map(["k": .string("v")])],
            SyncObjectID(Panel.self, .string("p2")): ["items": .mixedList([1, byInt])],
        ]
        for (id, values) in others { await server.edit(id, values) }
        let report = try await devices[1].sync()
        #expect(Set(report.unreadable.keys) == Set(others.keys), "\(report.unreadable)")
        #expect(report.unreadable.values.allSatisfy { $0.code == .typeMismatch }, "\(report.unreadable)")
        // Never half applied: the settings of the unreadable state are not set either.
        #expect(try await devices[1].style == "kept")
        #expect(try await devices[1].entries.settings == [:])
    }

    @Test func aLinkInAnAnyValueHasThePlainLinksFormOnTheWire() throws {
        let target = SyncMixedValue.reference(SyncReference(object: Self.holder("h1"), serverID: "17"))
        let text = String(decoding: try WireSyncValue(.mixed(["x", target])).json().jsonBytes(), as: UTF8.self)
        #expect(text == #"{"list":[{"string":"x"},{"ref":{"id":{"string":"h1"},"serverID":"17","type":"Holder"}}]}"#)
        // Each form reads back as the engine's value (a link at the top, or a map of links and
        // nulls only, comes as a plain link or map of objects: the engine reads it by the model).
        let values: [SyncValue] = [
            .mixed(["x", target]), .mixed(target), .mixed(["k": [target]]), .mixedList([target, 1]),
            .mixedMap(["a": target, "b": 1]), .mixedMap(["a": target, "b": nil]),
        ]
        for value in values {
            let read = try WireSyncValue(json: JSONValue(parsing: WireSyncValue(value).json().jsonBytes())).value
            switch value {
            case .mixed(let mixed): #expect(read.mixedValue == mixed, "\(read)")
            case .mixedList(let elements): #expect(read.mixedListElements == elements, "\(read)")
            default: #expect(read.mixedMapEntries == value.mixedMapEntries, "\(read)")
            }
        }
        for bad in [#"{"list":[{"ref":null}]}"#, #"{"list":[{"list":[]},{"ref":{"type":"Holder"}}]}"#] {
            #expect(throws: SyncWireFormatError.self, "\(bad)") {
                try WireSyncValue(json: try JSONValue(parsing: Array(bad.utf8)))
            }
        }
    }

    /// A value waiting for its target is in the state log: an engine started again sets it when
    /// the target comes. The line that holds it is checked as any other: a flipped byte is a
    /// typed error that leaves the log as it was, a torn line takes the engine back to the state
    /// before (it pulls the value again), and a write the disk refuses fails the sync and
    /// changes nothing.
    @Test(arguments: ["intact", "flipped", "torn", "refused"])
    func aWaitingLinkOutlivesARestart(damage: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-mixed-links-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Realm.Configuration(
            file: directory.appendingPathComponent("panels.json"), objectTypes: [Holder.self, Panel.self])
        configuration.keepsHistory = true
        let statePath = directory.appendingPathComponent("panels.json").path + ".sync"
        let server = FakeServer()
        func engine(_ realm: Realm) async throws -> SyncEngine {
            try await SyncEngine(
                realm: realm, transport: server, types: [Holder.self, Panel.self],
                configuration: .init(maxAttempts: 1, sleep: { _ in }))
        }
        await server.edit(
            Self.panel, ["style": .mixed(["a", Self.reference("h9")]), "items": .mixedList([Self.reference("h9")])])
        var realm = try await Realm.open(configuration)
        var first = try await engine(realm)
        if damage == "refused" {
            let before = try? Data(contentsOf: URL(fileURLWithPath: statePath))
            let plan = FileFaults.install(
                FileFaults.Plan(directory: statePath, failing: (.write, 1, ENOSPC), times: .max))
            let error = await #expect(throws: LiveObjectsError.self) { try await first.sync() }
            FileFaults.remove(plan)
            #expect(error?.code == .io, "\(String(describing: error))")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: statePath))) == before)
            try await realm.close()
            realm = try await Realm.open(configuration)
            first = try await engine(realm)
        }
        _ = try await first.sync()
        #expect(try await NamedMixedValues.of(realm).map { [$0.style] + $0.items } == [["a", nil], nil])
        try await realm.close()
        let whole = try Data(contentsOf: URL(fileURLWithPath: statePath))
        let text = String(decoding: whole, as: UTF8.self)
        let waiting = try #require(text.range(of: #""mixed":{"#), "the log holds no waiting AnyValue: \(text)")
        let at = text.utf8.distance(from: text.startIndex, to: waiting.lowerBound)
        switch damage {
        case "flipped":
            var flipped = whole
            flipped[at + 3] ^= 0x01
            try flipped.write(to: URL(fileURLWithPath: statePath))
            realm = try await Realm.open(configuration)
            let error = await #expect(throws: LiveObjectsError.self) { _ = try await engine(realm) }
            #expect(error?.code == .corruptFile, "\(String(describing: error))")
            #expect(try Data(contentsOf: URL(fileURLWithPath: statePath)) == flipped)
            try await realm.close()
            return
        case "torn":
            try whole.prefix(at + 6).write(to: URL(fileURLWithPath: statePath))
        default:
            break
        }
        realm = try await Realm.open(configuration)
        let restarted = try await engine(realm)
        await server.edit(Self.holder("h9"), ["name": .value(.string("Nine"))])
        let report = try await restarted.sync()
        #expect(report.unreadable.isEmpty && report.pullFailure == nil, "\(report)")
        #expect(try await NamedMixedValues.of(realm).map { [$0.style] + $0.items } == [["a", "→h9"], "→h9"])
        try await realm.close()
    }

    /// A state log of the format before links in AnyValues (4), with a waiting map of objects,
    /// still loads.
    @Test func aLogOfTheFormatBeforeLoads() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-mixed-links-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Realm.Configuration(
            file: directory.appendingPathComponent("panels.json"), objectTypes: [Holder.self, Panel.self])
        configuration.keepsHistory = true
        let statePath = directory.appendingPathComponent("panels.json").path + ".sync"
        let server = FakeServer()
        await server.edit(Self.holder("h9"), ["name": .value(.string("Nine"))])
        let realm = try await Realm.open(configuration)
        try await realm.write { r in _ = try r.create(Panel.self, value: ["id": "p1"]) }
        // The panel came from the server (the log's synced token covers its creation), and its
        // keeper waits for h9.
        let token = await realm.currentHistoryToken.rawValue
        let panel = #"{"key":{"string":"p1"},"type":"Panel"}"#
        let line =
            #"{"device":"old","format":"LiveObjects sync state","links":[{"map":{"map":[["lead",{"ref":"#
            + #"{"id":{"string":"h9"},"type":"Holder"}}]]},"object":\#(panel),"property":"keepers"}],"#
            + #""objects":[{"object":\#(panel),"serverID":"S0","serverVersion":1}],"#
            + #""realmToken":\#(token),"syncedToken":\#(token),"version":4}"#
        try SidecarLog(path: statePath, syncs: true).replace(with: [Array(line.utf8)])
        let engine = try await SyncEngine(
            realm: realm, transport: server, types: [Holder.self, Panel.self],
            configuration: .init(maxAttempts: 1, sleep: { _ in }))
        let report = try await engine.sync()
        #expect(report.unreadable.isEmpty && report.pullFailure == nil, "\(report)")
        let keepers = try await realm.read { r in
            r.object(ofType: Panel.self, forPrimaryKey: "p1")?.keepers.dictionary.mapValues { $0?.id }
        }
        #expect(keepers == ["lead": "h9"])
        try await realm.close()
    }
}

extension SyncValue {
    /// The objects a value links to, in order (a map's by key).
    var linkTargetIDs: [SyncObjectID] {
        switch self {
        case .mixed(let value): value.references.map(\.object)
        case .mixedList(let elements): elements.flatMap(\.references).map(\.object)
        case .mixedMap(let entries): entries.sorted { $0.key < $1.key }.flatMap(\.value.references).map(\.object)
        default: []
        }
    }
}
