import Foundation
import LiveObjects
import LiveObjectsJSON
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

extension SyncTestDevice where Root == Panel {
    /// The panel's keepers, each as its holder's id (nil for a key with no holder).
    var keepers: [String: String?] {
        get async throws {
            try await read { panel in panel?.keepers.dictionary.mapValues { $0?.id } ?? [:] }
        }
    }
}

extension FakeServer {
    /// A map of objects as the server stores it, each key's target as its id; nil when the
    /// object or the property is not there or is not a map of objects.
    func keepers(_ id: SyncObjectID) -> [String: String?]? {
        switch records[id]?.values["keepers"] {
        case .referenceMap(let entries)?: return entries.mapValues { $0?.object.primaryKey.stringValue }
        case .map(let entries)? where entries.values.allSatisfy({ $0 == .null }): return entries.mapValues { _ in nil }
        default: return nil
        }
    }
}

@Suite("Sync maps of objects merged per key")
struct SyncObjectMapTests {
    static let panel = SyncObjectID(Panel.self, .string("p1"))
    static func holder(_ id: String) -> SyncObjectID { SyncObjectID(Holder.self, .string(id)) }
    static func reference(_ id: String) -> SyncReference? { SyncReference(object: holder(id)) }
    /// A key with no holder, in the maps the tests compare.
    static let none: String? = nil
    static let noReference: SyncReference? = nil

    /// Devices with the panel p1 and the holders h0, h1 and h2 synced on each.
    func devices(_ count: Int = 2, server: FakeServer = FakeServer()) async throws -> (FakeServer, [MapDevice]) {
        let first = try await MapDevice("a", server)
        try await first.realm.write { r in
            for i in 0..<3 { _ = try r.create(Holder.self, value: ["id": "h\(i)", "name": "Holder \(i)"]) }
            _ = try r.create(Panel.self, value: ["id": "p1"])
        }
        try await first.sync()
        var devices = [first]
        for d in 1..<count {
            let device = try await MapDevice("device\(d)", server)
            try await device.sync()
            devices.append(device)
        }
        return (server, devices)
    }

    func syncAll(_ devices: [MapDevice]) async throws {
        for _ in 0..<2 {
            for device in devices {
                let report = try await device.sync()
                #expect(report.failed.isEmpty && report.pullFailure == nil && report.unreadable.isEmpty, "\(report)")
            }
        }
    }

    @Test func keysSetOnTwoDevicesAreBothKept() async throws {
        let (server, devices) = try await devices()
        try await devices[0].edit { panel, holder in panel.keepers["lead"] = holder("h0") }
        try await devices[1].edit { panel, holder in
            panel.keepers["spare"] = holder("h1")
            panel.keepers["none"] = .some(nil)
        }
        try await syncAll(devices)
        let expected: [String: String?] = ["lead": "h0", "spare": "h1", "none": Self.none]
        #expect(await server.keepers(Self.panel) == expected)
        for device in devices { #expect(try await device.keepers == expected) }
        // Every push after the panel's creation carried its base.
        let updates = await server.applied.filter { $0.object == Self.panel && $0.kind == .update }
        #expect(!updates.isEmpty && updates.allSatisfy { $0.bases["keepers"] != nil }, "\(updates)")
    }

    @Test func whenTwoDevicesChangeOneKeyTheLaterPushWins() async throws {
        let (server, devices) = try await devices()
        try await devices[0].edit { panel, holder in panel.keepers["lead"] = holder("h0") }
        try await syncAll(devices)
        try await devices[0].edit { panel, holder in panel.keepers["lead"] = holder("h1") }
        try await devices[1].edit { panel, holder in panel.keepers["lead"] = holder("h2") }
        try await devices[0].sync()
        try await devices[1].sync()
        try await syncAll(devices)
        #expect(await server.keepers(Self.panel) == ["lead": "h2"])
        for device in devices { #expect(try await device.keepers == ["lead": "h2"]) }
    }

    @Test func aTargetDeletedOnOneDeviceReachesTheOtherAsNil() async throws {
        let (server, devices) = try await devices()
        try await devices[0].edit { panel, holder in
            panel.keepers["lead"] = holder("h0")
            panel.keepers["spare"] = holder("h1")
        }
        try await syncAll(devices)
        #expect(try await devices[1].keepers == ["lead": "h0", "spare": "h1"])
        try await devices[0].realm.write { r in try r.delete(r.object(ofType: Holder.self, forPrimaryKey: "h0")!) }
        #expect(try await devices[0].keepers == ["lead": Self.none, "spare": "h1"])
        try await syncAll(devices)
        #expect(await server.keepers(Self.panel) == ["lead": Self.none, "spare": "h1"])
        for device in devices { #expect(try await device.keepers == ["lead": Self.none, "spare": "h1"]) }
    }

    @Test func aTargetDeletedByAPushThatDoesNotTouchTheMapReachesEveryDeviceAsNil() async throws {
        let (server, devices) = try await devices()
        try await devices[0].edit { panel, holder in panel.keepers["lead"] = holder("h0") }
        try await syncAll(devices)
        let deletion = SyncChange(
            idempotencyKey: "elsewhere/h0", object: Self.holder("h0"), serverID: nil, kind: .delete, values: [:])
        _ = try await server.push([deletion])
        #expect(await server.keepers(Self.panel) == ["lead": Self.none])
        try await syncAll(devices)
        for device in devices { #expect(try await device.keepers == ["lead": Self.none]) }
    }

    @Test func aKeyWhoseTargetComesLaterWaitsForIt() async throws {
        let server = FakeServer()
        await server.edit(
            Self.panel, ["keepers": .referenceMap(["lead": Self.reference("h9"), "none": Self.noReference])])
        let device = try await MapDevice("late", server)
        var report = try await device.sync()
        #expect(report.unreadable.isEmpty, "\(report)")
        #expect(try await device.keepers == ["lead": Self.none, "none": Self.none])
        await server.edit(Self.holder("h9"), ["name": .value(.string("Nine"))])
        report = try await device.sync()
        #expect(report.unreadable.isEmpty, "\(report)")
        #expect(try await device.keepers == ["lead": "h9", "none": Self.none])
        // The base of the next edit is the map as the server has it: the other key's edit
        // leaves lead to the server.
        try await device.edit { panel, _ in panel.keepers["none"] = nil }
        try await device.sync()
        #expect(
            await server.applied.last?.bases["keepers"]
                == .referenceMap(["lead": Self.reference("h9"), "none": Self.noReference]))
        #expect(await server.keepers(Self.panel) == ["lead": "h9"])
    }

    @Test func aMapOfObjectsOnTheWireIsItsPairsOfReferencesInKeyOrder() throws {
        let value = SyncValue.referenceMap([
            "b": SyncReference(object: Self.holder("h1"), serverID: "7"), "a": Self.noReference,
        ])
        let json = try WireSyncValue(value).json()
        #expect(
            String(decoding: json.jsonBytes(), as: UTF8.self)
                == #"{"map":[["a",{"null":true}],["b",{"ref":{"id":{"string":"h1"},"serverID":"7","type":"Holder"}}]]}"#
        )
        #expect(try WireSyncValue(json: json).value == value)
        // A map whose keys are all nil reads as a map of plain values; the engine reads it by the
        // model.
        let nils = try JSONValue(parsing: Array(#"{"map":[["a",{"null":true}]]}"#.utf8))
        #expect(try WireSyncValue(json: nils).value.readAsMapOfObjects == .referenceMap(["a": Self.noReference]))
        // A reference beside a plain value is a Map<String, AnyValue>'s, a link inside an AnyValue.
        let mixed = #"{"map":[["a",{"int":1}],["b",{"ref":{"id":{"string":"h1"},"type":"Holder"}}]]}"#
        #expect(
            try WireSyncValue(json: try JSONValue(parsing: Array(mixed.utf8))).value
                == .mixedMap(["a": 1, "b": .reference(SyncReference(object: Self.holder("h1")))]))
    }

    @Test func aPulledMapOfObjectsTheModelCannotHoldIsUnreadable() async throws {
        let server = FakeServer()
        let plain = SyncObjectID(Panel.self, .string("plain"))
        let otherType = SyncObjectID(Panel.self, .string("other-type"))
        let intoSettings = SyncObjectID(Panel.self, .string("into-settings"))
        await server.edit(plain, ["keepers": .map(["a": .string("x")])])
        await server.edit(
            otherType, ["keepers": .referenceMap(["a": SyncReference(object: SyncObjectID(Panel.self, .string("p1")))])]
        )
        await server.edit(intoSettings, ["settings": .referenceMap(["a": Self.reference("h0")])])
        await server.edit(Self.panel, ["keepers": .referenceMap(["a": Self.noReference])])
        let device = try await MapDevice("unreadable", server)
        let report = try await device.sync()
        #expect(Set(report.unreadable.keys) == [plain, otherType, intoSettings], "\(report.unreadable)")
        #expect(report.unreadable.values.allSatisfy { $0.code == .typeMismatch }, "\(report.unreadable)")
        #expect(try await device.keepers == ["a": Self.none])
    }

    /// A key waiting for its target is in the state log: an engine started again sets it when
    /// the target comes. The line that holds it is checked as any other: a flipped byte is a
    /// typed error that leaves the log as it was, a torn line takes the engine back to the state
    /// before (it pulls the map again), and a write the disk refuses fails the sync and changes
    /// nothing.
    @Test(arguments: ["intact", "flipped", "torn", "refused"])
    func aWaitingKeyOutlivesARestart(damage: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-object-maps-\(UUID())")
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
        func keepers(_ realm: Realm) async throws -> [String: String?] {
            try await realm.read { r in
                r.object(ofType: Panel.self, forPrimaryKey: "p1")?.keepers.dictionary.mapValues { $0?.id } ?? [:]
            }
        }
        await server.edit(
            Self.panel, ["keepers": .referenceMap(["lead": Self.reference("h9"), "none": Self.noReference])])
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
        #expect(try await keepers(realm) == ["lead": Self.none, "none": Self.none])
        try await realm.close()
        let whole = try Data(contentsOf: URL(fileURLWithPath: statePath))
        let text = String(decoding: whole, as: UTF8.self)
        let waiting = try #require(text.range(of: #""map":{"map":"#), "the log holds no waiting map: \(text)")
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
        #expect(try await keepers(realm) == ["lead": "h9", "none": Self.none])
        try await realm.close()
    }
}
