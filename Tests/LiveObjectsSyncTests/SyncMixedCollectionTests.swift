import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSync
import LiveObjectsSyncProtocol
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

extension SyncTestDevice where Root == Panel {
    /// The panel's items, marks and extras (empty before the panel reached this device), each
    /// link as the string `→id` of its holder (``NamedMixedValues``).
    var mixedCollections: (items: [AnyValue], marks: Set<AnyValue>, extras: [String: AnyValue]) {
        get async throws {
            guard let named = try await NamedMixedValues.of(realm, rootID) else { return ([], [], [:]) }
            return (named.items, named.marks, named.extras)
        }
    }
}

extension FakeServer {
    /// A list or set of AnyValues as the server stores it, each link as the string `→id` of its
    /// target; nil when it is not one.
    func mixedList(_ id: SyncObjectID, _ property: String) -> [AnyValue]? {
        guard case .mixedList(let elements)? = records[id]?.values[property] else { return nil }
        return elements.map(\.named)
    }

    /// A map of AnyValues as the server stores it, each link as the string `→id` of its target;
    /// nil when it is not one.
    func mixedMap(_ id: SyncObjectID, _ property: String) -> [String: AnyValue]? {
        guard case .mixedMap(let entries)? = records[id]?.values[property] else { return nil }
        return entries.mapValues(\.named)
    }
}

extension SyncMixedValue {
    /// The value with each link as the string `→id` of its target, as ``NamedMixedValues``
    /// names a device's links.
    var named: AnyValue {
        switch self {
        case .reference(let target): .string("→" + (target.object.primaryKey.stringValue ?? "?"))
        case .list(let items): .list(items.map(\.named))
        case .dictionary(let entries): .dictionary(entries.mapValues(\.named))
        default: anyValue ?? .null
        }
    }
}

extension AnyValue {
    /// The value with each string `→id` made a link to the holder of that id (the inverse of
    /// ``NamedMixedValues``' naming), on a device.
    func linked(_ holder: (String) -> Holder) throws -> AnyValue {
        switch self {
        case .string(let text) where text.hasPrefix("→"): try .object(holder(String(text.dropFirst())))
        case .list(let items): .list(try items.map { try $0.linked(holder) })
        case .dictionary(let entries): .dictionary(try entries.mapValues { try $0.linked(holder) })
        default: self
        }
    }
}

/// `List<AnyValue>`, `MutableSet<AnyValue>` and `Map<String, AnyValue>` through the engine
/// (docs/SYNC-PROTOCOL.md, "Collections of mixed values"): each element in the form of an
/// `AnyValue` property's value, a list merged per operation, a set per member, a map per key.
@Suite("Sync lists, sets and maps of AnyValue")
struct SyncMixedCollectionTests {
    static let panel = SyncObjectID(Panel.self, .string("p1"))

    /// Two devices with the panel p1 (its items, marks and extras given) synced on both.
    func devices(
        items: [AnyValue] = [], marks: [AnyValue] = [], extras: [String: AnyValue] = [:],
        server: FakeServer = FakeServer()
    ) async throws -> (FakeServer, [MapDevice]) {
        let a = try await MapDevice("a", server)
        try await a.realm.write { r in
            let panel = try r.create(Panel.self, value: ["id": "p1"])
            panel.items.append(contentsOf: items)
            for mark in marks { panel.marks.insert(mark) }
            panel.extras.merge(extras)
        }
        try await a.sync()
        let b = try await MapDevice("b", server)
        try await b.sync()
        return (server, [a, b])
    }

    /// Syncs every device twice (the second round pulls what the others pushed in the first).
    func syncAll(_ devices: [MapDevice]) async throws {
        for _ in 0..<2 {
            for device in devices {
                let report = try await device.sync()
                #expect(report.failed.isEmpty && report.pullFailure == nil, "\(report)")
            }
        }
    }

    @Test func everyKindTravelsTheWireInAListAndAMapAndReadsBackAsItself() throws {
        let elements = SyncMixedTests.everyKind
        let entries = Dictionary(uniqueKeysWithValues: elements.enumerated().map { ("k\($0.offset)", $0.element) })
        // The engine reads a pulled value by the property's type.
        let list = try WireSyncValue(.mixedList(elements.synced)).json().jsonBytes()
        let listRead = try WireSyncValue(json: JSONValue(parsing: list)).value
        #expect(
            listRead.mixedListElements == elements.synced,
            "\(String(decoding: list, as: UTF8.self)) read as \(listRead)")
        let map = try WireSyncValue(.mixedMap(entries.synced)).json().jsonBytes()
        let mapRead = try WireSyncValue(json: JSONValue(parsing: map)).value
        #expect(mapRead.mixedMapEntries == entries.synced, "\(String(decoding: map, as: UTF8.self)) read as \(mapRead)")
        // Only scalars and flat lists: the wire cannot tell it from a map of values.
        let flat: [String: SyncMixedValue] = ["a": 1, "b": 1.0, "c": ["x", nil]]
        let flatRead = try WireSyncValue(json: JSONValue(parsing: WireSyncValue(.mixedMap(flat)).json().jsonBytes()))
        #expect(flatRead.value.mixedMapEntries == flat)
        // The elements are in the form of an AnyValue property's value.
        let text = String(
            decoding: try WireSyncValue(.mixedMap(["b": .list([1, 2.5]), "a": .dictionary(["k": nil])])).json()
                .jsonBytes(), as: UTF8.self)
        #expect(
            text
                == #"{"map":[["a",{"dictionary":[["k",{"null":true}]]}],["b",{"list":[{"int":1},{"double":2.5}]}]]}"#)
    }

    @Test func anElementNestsAsDeepAsAnAnyValueProperty() throws {
        func nested(_ depth: Int) -> String {
            String(repeating: #"{"list":["#, count: depth) + String(repeating: "]}", count: depth)
        }
        // An element nested 100 deep, inside the list of a List<AnyValue>: 101 levels in all.
        let list = try WireSyncValue(json: JSONValue(parsing: Array(#"{"list":[\#(nested(100))]}"#.utf8))).value
        #expect(list.mixedListElements?.count == 1)
        let map = try WireSyncValue(json: JSONValue(parsing: Array(#"{"map":[["k",\#(nested(100))]]}"#.utf8))).value
        #expect(map.mixedMapEntries?.count == 1)
        #expect(throws: SyncWireFormatError.self) {
            try WireSyncValue(json: JSONValue(parsing: Array(#"{"map":[["k",\#(nested(101))]]}"#.utf8)))
        }
    }

    @Test func theSchemaDeclaresTheCollectionsAsMixed() async throws {
        let device = try await MapDevice("schema", FakeServer())
        let schema = try SyncSchema(device.realm.schema, types: [Holder.self, Panel.self])
        let properties = try #require(schema.types.first { $0.name == "Panel" }?.properties)
        let items = try #require(properties.first { $0.name == "items" })
        let marks = try #require(properties.first { $0.name == "marks" })
        let extras = try #require(properties.first { $0.name == "extras" })
        #expect(items.type == "mixed" && items.list == true && items.set == nil && items.map == nil)
        #expect(marks.type == "mixed" && marks.list == true && marks.set == true && marks.map == nil)
        #expect(extras.type == "mixed" && extras.list == nil && extras.set == nil && extras.map == true)
    }

    @Test func appendsOfTwoDevicesAreBothKept() async throws {
        let (server, devices) = try await devices(items: ["first"])
        try await devices[0].edit { panel, _ in panel.items.append(.dictionary(["by": "a", "at": [1, 2.5]])) }
        try await devices[1].edit { panel, _ in panel.items.append(contentsOf: [1, 1.0]) }
        try await syncAll(devices)
        let expected: [AnyValue] = ["first", .dictionary(["by": "a", "at": [1, 2.5]]), 1, 1.0]
        #expect(await server.mixedList(Self.panel, "items") == expected)
        let changes = await server.applied.filter { $0.values["items"] != nil && $0.kind == .update }
        #expect(changes.allSatisfy { $0.bases["items"] == .mixedList(["first"]) }, "\(changes)")
        for device in devices {
            let items = try await device.mixedCollections.items
            #expect(items == expected)
            // 1 and 1.0 stay two elements of their kinds.
            #expect(items.count == 4 && items[2] == .int(1) && items[3] == .double(1))
        }
    }

    @Test func membersAddedOnTwoDevicesAreBothKeptAndARemovalLeavesEveryDevice() async throws {
        let server = FakeServer()
        await server.declareSets(["marks"])
        let (_, devices) = try await devices(marks: ["old", 7], server: server)
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
        // pushed stays).
        let expected: Set<AnyValue> = [7, 1, .list(["x"])]
        let stored = try #require(await server.mixedList(Self.panel, "marks"))
        #expect(Set(stored) == expected && stored.count == expected.count, "\(stored)")
        for device in devices { #expect(try await device.mixedCollections.marks == expected) }
    }

    @Test func differentKeysAreBothKeptAndForOneKeyTheLaterPushWins() async throws {
        let (server, devices) = try await devices(extras: ["level": 1, "tags": ["a"]])
        try await devices[0].edit { panel, _ in
            panel.extras["font"] = .dictionary(["name": "serif", "size": 12.5])
            panel.extras["level"] = 2
        }
        try await devices[1].edit { panel, _ in
            panel.extras["lang"] = "fr"
            panel.extras["level"] = .list([3, .decimal(Decimal(string: "3.50")!)])
            panel.extras.removeObject(for: "tags")
        }
        try await devices[0].sync()
        try await devices[1].sync()
        try await devices[0].sync()
        let expected: [String: AnyValue] = [
            "font": .dictionary(["name": "serif", "size": 12.5]), "lang": "fr",
            "level": .list([3, .decimal(Decimal(string: "3.50")!)]),
        ]
        #expect(await server.mixedMap(Self.panel, "extras") == expected)
        for device in devices { #expect(try await device.mixedCollections.extras == expected) }
    }

    @Test func aPulledValueOfAnotherShapeIsUnreadableAndChangesNothing() async throws {
        let (server, devices) = try await devices(items: ["kept"])
        for other in [SyncValue.map(["a": .int(1)]), .reference(nil), .mixed(.dictionary([:]))] {
            await server.edit(Self.panel, ["items": other])
            let report = try await devices[1].sync()
            #expect(report.unreadable[Self.panel]?.property == "items", "\(other): \(report)")
            // The engine's own check names the model's type (the realm would refuse some too).
            #expect(report.unreadable[Self.panel]?.message.contains("a list of AnyValues") == true, "\(report)")
            #expect(try await devices[1].mixedCollections.items == ["kept"])
        }
        // The wire reads a list nested 101 deep (a List<AnyValue>'s may be); an AnyValue
        // property cannot hold it.
        var deep: AnyValue = 1
        for _ in 0..<101 { deep = .list([deep]) }
        await server.edit(Self.panel, ["items": .mixedList(["kept"]), "style": .mixed(deep.synced)])
        let deepReport = try await devices[1].sync()
        #expect(deepReport.unreadable[Self.panel]?.property == "style", "\(deepReport)")
    }

    /// The bases of the collections, and a change sent without an answer, outlive a restart:
    /// read back from the state log, they are merged as before it.
    @Test func basesAndAnUnansweredChangeOutliveARestart() async throws {
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
        let nested: AnyValue = .dictionary(["at": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "n": [1, 1.0]])
        var realm = try await Realm.open(configuration)
        let first = try await engine(realm)
        try await realm.write { r in
            let panel = try r.create(Panel.self, value: ["id": "p1"])
            panel.items.append(nested)
            panel.marks.insert(.data(Data([1])))
            panel.extras["a"] = nested
        }
        _ = try await first.sync()
        // Another device's edits, pulled: the bases are now these values.
        await server.edit(
            Self.panel,
            [
                "items": .mixedList([nested.synced, .objectID(ObjectID(hex: "507f1f77bcf86cd799439011")!)]),
                "extras": .mixedMap(["a": [1, 2.5], "b": .decimal(Decimal(string: "0.10")!)]),
            ])
        _ = try await first.sync()
        // Applied, every answer lost: the round fails, the change waits in the state log (the
        // bases of items and extras are the ones pulled, in the log too).
        await server.setFaults(Faults(failAfter: 1))
        try await realm.write { r in r.object(ofType: Panel.self, forPrimaryKey: "p1")!.marks.insert(2) }
        #expect(try await first.push().failed == [Self.panel])
        try await realm.close()

        // Restarted; another device appends and sets a key meanwhile, this one edits again.
        await server.setFaults(.none)
        var stored = try #require(await server.mixedList(Self.panel, "items"))
        await server.edit(
            Self.panel,
            [
                "items": .mixedList((stored + ["theirs"]).synced),
                "extras": .mixedMap(["a": [1, 2.5], "b": .decimal(Decimal(string: "0.10")!), "c": 3]),
            ])
        realm = try await Realm.open(configuration)
        let restarted = try await engine(realm)
        try await realm.write { r in
            let panel = r.object(ofType: Panel.self, forPrimaryKey: "p1")!
            panel.items.append(.list([.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)]))
            panel.extras["d"] = .dictionary([:])
        }
        let report = try await restarted.sync()
        #expect(report.failed.isEmpty, "\(report)")
        stored = try #require(await server.mixedList(Self.panel, "items"))
        let expected: [AnyValue] = [
            nested, .objectID(ObjectID(hex: "507f1f77bcf86cd799439011")!), "theirs",
            .list([.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)]),
        ]
        #expect(stored == expected)
        #expect(
            await server.mixedMap(Self.panel, "extras") == [
                "a": [1, 2.5], "b": .decimal(Decimal(string: "0.10")!), "c": 3, "d": .dictionary([:]),
            ])
        #expect(try await realm.read { Array($0.object(ofType: Panel.self, forPrimaryKey: "p1")!.items) } == expected)
        #expect(
            try await realm.read { Set($0.object(ofType: Panel.self, forPrimaryKey: "p1")!.marks) } == [
                .data(Data([1])), 2,
            ])
        let twice = await server.applications.filter { $0.value != 1 }
        #expect(twice.isEmpty, "applied more than once: \(twice)")
        try await realm.close()
    }
}

/// The reference of the panel's items, marks and extras in a randomized run
/// (`SyncMapTests.randomEditsConverge`): what devices appended, inserted and set, and what they
/// removed, to check the end against.
struct MixedCollectionModel {
    /// Each value is new (a counter in it): an element lost or doubled shows.
    private var counter = 0
    private var appended: [AnyValue] = []
    private var removedItems = Set<AnyValue>()
    /// The marks inserted and removed, as a set compares members (numbers by value).
    private var inserted = Set<PropertyValue>()
    private var removedMarks = Set<PropertyValue>()
    private var givenExtras: [String: [AnyValue]] = [:]
    private var removedExtras = Set<String>()

    /// A new value of a kind drawn at random: an int and a double of one number are two values.
    private mutating func newValue(_ random: inout SeededRandomNumberGenerator) -> AnyValue {
        counter += 1
        let n = counter
        switch random.below(8) {
        case 0: return .int(n)
        case 1: return .double(Double(n))
        case 2: return .string("v\(n)")
        case 3: return .list([.int(n), .decimal(Decimal(n) / 100), .null])
        case 4: return .dictionary(["n": .int(n), "at": .date(Date(timeIntervalSinceReferenceDate: Double(n) / 4))])
        // Links to the holders h0, h1 and h2, written as `→id` (each device links its own copy).
        case 5: return .list([.int(n), .string("→h\(n % 3)")])
        case 6: return .dictionary(["n": .int(n), "to": .string("→h\(n % 3)"), "in": [.string("→h\((n + 1) % 3)")]])
        default: return .data(Data([UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF)]))
        }
    }

    /// Appends to or removes from the items, inserts or removes a mark (a small pool, so that
    /// devices add the same member), or sets or removes an extra, on one device.
    ///
    /// - Returns: The operation, as the failure message lists it.
    mutating func edit(_ device: MapDevice, _ d: Int, _ random: inout SeededRandomNumberGenerator) async throws
        -> String
    {
        let current = try await device.mixedCollections
        switch random.below(3) {
        case 0:
            if !current.items.isEmpty && random.chance(35) {
                let index = random.below(current.items.count)
                removedItems.insert(current.items[index])
                try await device.edit { panel, _ in panel.items.remove(at: index) }
                return "device \(d) removes item \(current.items[index])"
            }
            let value = newValue(&random)
            appended.append(value)
            try await device.edit { panel, holder in panel.items.append(try value.linked(holder)) }
            return "device \(d) appends item \(value)"
        case 1:
            let pool: [AnyValue] = [1, 1.0, "1", .list([1]), .dictionary(["k": 1]), nil, "→h0", ["→h1"]]
            let member = pool[random.below(pool.count)]
            if current.marks.contains(member) && random.chance(40) {
                removedMarks.insert(member.propertyValue.mixedMemberKey)
                try await device.edit { panel, holder in panel.marks.remove(try member.linked(holder)) }
                return "device \(d) removes mark \(member)"
            }
            inserted.insert(member.propertyValue.mixedMemberKey)
            try await device.edit { panel, holder in panel.marks.insert(try member.linked(holder)) }
            return "device \(d) inserts mark \(member)"
        default:
            let key = "x\(random.below(8))"
            if current.extras[key] != nil && random.chance(20) {
                removedExtras.insert(key)
                try await device.edit { panel, _ in panel.extras.removeObject(for: key) }
                return "device \(d) removes extra \(key)"
            }
            let value = newValue(&random)
            givenExtras[key, default: []].append(value)
            try await device.edit { panel, holder in panel.extras[key] = try value.linked(holder) }
            return "device \(d) sets extra \(key) to \(value)"
        }
    }

    /// What is wrong at the end of a run, or nothing: every device holds the server's items,
    /// marks and extras; an item appended and never removed is there once, no item is one no
    /// device appended; a mark inserted and never removed is there, none other; an extra set
    /// and never removed is there, with a value some device gave it.
    func problems(_ server: FakeServer, _ devices: [MapDevice]) async throws -> [String] {
        var found: [String] = []
        let first = try await devices[0].mixedCollections
        if await server.mixedList(SyncMixedCollectionTests.panel, "items") ?? [] != first.items {
            found.append("the server's items are not device 0's \(first.items)")
        }
        let marks = await server.mixedList(SyncMixedCollectionTests.panel, "marks") ?? []
        if Set(marks) != first.marks || marks.count != first.marks.count {
            found.append("the server's marks \(marks) are not device 0's \(first.marks)")
        }
        if await server.mixedMap(SyncMixedCollectionTests.panel, "extras") ?? [:] != first.extras {
            found.append("the server's extras are not device 0's \(first.extras)")
        }
        for (d, device) in devices.enumerated().dropFirst() {
            let state = try await device.mixedCollections
            if state.items != first.items || state.marks != first.marks || state.extras != first.extras {
                found.append("device \(d) holds \(state), device 0 \(first)")
            }
        }
        for value in appended where !removedItems.contains(value) && first.items.filter({ $0 == value }).count != 1 {
            found.append("item \(value) is there \(first.items.filter { $0 == value }.count) times")
        }
        for value in first.items where !appended.contains(value) { found.append("item \(value) no device appended") }
        let held = Set(first.marks.map(\.propertyValue.mixedMemberKey))
        for member in inserted.subtracting(removedMarks) where !held.contains(member) {
            found.append("lost mark \(member)")
        }
        for member in first.marks where !inserted.contains(member.propertyValue.mixedMemberKey) {
            found.append("mark \(member) no device inserted")
        }
        for key in Set(givenExtras.keys).subtracting(removedExtras) where first.extras[key] == nil {
            found.append("lost extra \(key)")
        }
        for (key, value) in first.extras where givenExtras[key]?.contains(value) != true {
            found.append("extra \(key) holds \(value), which no device gave it")
        }
        return found
    }
}
