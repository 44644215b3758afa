import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncProtocol
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

/// One device of the set tests: a realm in memory and its engine, on a shared server.
typealias SetDevice = SyncTestDevice<Bin>

extension SyncTestDevice where Root == Bin {
    init(_ name: String, _ server: FakeServer) async throws {
        try await self.init(
            name, transport: server, types: [Holder.self, Bin.self], rootID: "b1",
            configuration: .init(sleep: SleepRecorder().sleep))
    }

    /// The bin's labels and keepers, in the set's order.
    var members: (labels: [String], keepers: [String]) {
        get async throws { try await read { bin in bin.map { (Array($0.labels), $0.keepers.map(\.id)) } ?? ([], []) } }
    }
}

@Suite("Sync sets merged per member")
struct SyncSetTests {
    /// Three devices with the bin b1 (labels, holders h1 to h3) synced on each, on a server
    /// whose schema declares the two sets.
    func devices(labels: [String], keepers: [String] = []) async throws -> (FakeServer, [SetDevice]) {
        let server = FakeServer()
        await server.declareSets(["labels", "keepers"])
        let a = try await SetDevice("a", server)
        try await a.realm.write { r in
            let bin = try r.create(Bin.self, value: ["id": "b1"])
            bin.labels.insert(objectsIn: labels)
            for id in ["h1", "h2", "h3"] {
                let holder = try r.create(Holder.self, value: ["id": id, "name": id])
                if keepers.contains(id) { bin.keepers.insert(holder) }
            }
        }
        try await a.sync()
        let b = try await SetDevice("b", server)
        let c = try await SetDevice("c", server)
        try await b.sync()
        try await c.sync()
        return (server, [a, b, c])
    }

    /// Syncs every device twice (the second round pulls what the others pushed in the first).
    func syncAll(_ devices: [SetDevice]) async throws {
        for _ in 0..<2 {
            for device in devices {
                let report = try await device.sync()
                #expect(report.failed.isEmpty && report.pullFailure == nil, "\(report)")
            }
        }
    }

    @Test func membersAddedOnDifferentDevicesAreAllKept() async throws {
        let (_, devices) = try await devices(labels: ["red"])
        try await devices[0].edit { bin, _ in bin.labels.insert("green") }
        try await devices[1].edit { bin, _ in bin.labels.insert("blue") }
        try await devices[2].edit { bin, holder in bin.keepers.insert(holder("h2")) }
        try await devices[1].edit { bin, holder in bin.keepers.insert(holder("h3")) }
        try await syncAll(devices)
        for device in devices {
            let (labels, keepers) = try await device.members
            #expect(Set(labels) == ["red", "green", "blue"])
            #expect(Set(keepers) == ["h2", "h3"])
        }
    }

    @Test func aMemberTwoDevicesAddIsHeldOnce() async throws {
        let (server, devices) = try await devices(labels: [], keepers: [])
        for device in devices {
            try await device.edit { bin, holder in
                bin.labels.insert("shared")
                bin.keepers.insert(holder("h1"))
            }
        }
        try await syncAll(devices)
        let bin = SyncObjectID(Bin.self, .string("b1"))
        let (labels, keepers) = (await server.listValue(bin, "labels"), await server.listValue(bin, "keepers"))
        #expect(labels == [#""shared""#] && keepers == [#""h1""#], "\(labels ?? []) \(keepers ?? [])")
        for device in devices {
            let (labels, keepers) = try await device.members
            #expect(labels == ["shared"] && keepers == ["h1"])
        }
        // One device then removes it: it leaves every device, not one of two copies.
        try await devices[2].edit { bin, holder in
            bin.labels.remove("shared")
            bin.keepers.remove(holder("h1"))
        }
        try await syncAll(devices)
        for device in devices {
            let (labels, keepers) = try await device.members
            #expect(labels.isEmpty && keepers.isEmpty)
        }
    }

    @Test func aRemovalAndAnAdditionMadeAtOnceBothApply() async throws {
        let (_, devices) = try await devices(labels: ["a", "b", "c"], keepers: ["h1", "h2"])
        try await devices[0].edit { bin, holder in
            bin.labels.remove("b")
            bin.keepers.remove(holder("h1"))
        }
        try await devices[1].edit { bin, holder in
            bin.labels.insert("d")
            bin.keepers.insert(holder("h3"))
        }
        try await syncAll(devices)
        for device in devices {
            let (labels, keepers) = try await device.members
            #expect(labels == ["a", "c", "d"])
            #expect(keepers == ["h2", "h3"])
        }
    }

    @Test func withoutASetInTheServersSchemaTheListMergeCanDoubleAMember() async throws {
        // The documented limit of a space without a schema: the server merges a set as a list.
        let (server, devices) = try await devices(labels: [])
        await server.declareSets([])
        for device in devices.prefix(2) { try await device.edit { bin, _ in bin.labels.insert("x") } }
        try await syncAll(devices)
        let labels = await server.listValue(SyncObjectID(Bin.self, .string("b1")), "labels")
        #expect(labels == [#""x""#, #""x""#])
        // Each device still reads a set.
        for device in devices { #expect(try await device.members.labels == ["x"]) }
    }

    @Test func theSchemaMarksASet() async throws {
        let device = try await SetDevice("schema", FakeServer())
        let schema = try SyncSchema(device.realm.schema, types: [Holder.self, Bin.self])
        let bin = try #require(schema.types.first { $0.name == "Bin" })
        #expect(bin.properties.map(\.name) == ["keepers", "labels"])
        #expect(bin.properties.allSatisfy { $0.list == true && $0.set == true })
        let json = String(decoding: schema.jsonData(), as: UTF8.self)
        #expect(json.contains("\"set\" : true") || json.contains("\"set\": true"), "\(json)")
    }

    /// Three devices insert and remove labels of a small pool and keepers, and sync at random,
    /// through a server that loses answers and applies pushes twice; at the end every device
    /// holds the server's sets, no member doubled, none that no device removed lost, none that
    /// no device added present. Five seeds from `SYNC_SETS_SEED` (default 0x5EED_0031).
    @Test(arguments: 0..<5)
    func randomEditsConverge(run: Int) async throws {
        let seed = (TestEnvironment.seed("SYNC_SETS_SEED") ?? 0x5EED_0031) &+ UInt64(run)
        var random = SeededRandomNumberGenerator(seed: seed)
        var operations: [String] = []
        func context() -> Comment {
            Comment(
                rawValue: "seed \(seed) (SYNC_SETS_SEED=\(seed) replays it); operations:\n"
                    + operations.joined(separator: "\n"))
        }
        let (server, devices) = try await devices(labels: ["l0", "l1"], keepers: ["h1"])
        await server.setFaults(Faults(failBefore: 0.1, failAfter: 0.2, duplicate: 0.2))
        var added: Set<String> = ["l0", "l1", "h1"]
        var removed = Set<String>()
        for _ in 0..<60 {
            let d = random.below(devices.count)
            let device = devices[d]
            let (labels, keepers) = try await device.members
            let onKeepers = random.chance(30)
            let member = onKeepers ? "h\(1 + random.below(3))" : "l\(random.below(6))"
            let held = (onKeepers ? keepers : labels).contains(member)
            if random.chance(30) {
                let report = try await device.engine.sync()
                operations.append("device \(d) syncs: \(report.failed.isEmpty ? "done" : "failed")")
            } else if held {
                removed.insert(member)
                operations.append("device \(d) removes \(member) from \(onKeepers ? keepers : labels)")
                try await device.edit { bin, holder in
                    if onKeepers { bin.keepers.remove(holder(member)) } else { bin.labels.remove(member) }
                }
            } else {
                added.insert(member)
                operations.append("device \(d) inserts \(member) into \(onKeepers ? keepers : labels)")
                try await device.edit { bin, holder in
                    if onKeepers { bin.keepers.insert(holder(member)) } else { bin.labels.insert(member) }
                }
            }
        }
        await server.setFaults(.none)
        operations.append("every device syncs, twice, without faults")
        try await syncAll(devices)
        let (labels, keepers) = try await devices[0].members
        operations.append("device 0: labels \(labels), keepers \(keepers)")
        let stored = await server.listValue(SyncObjectID(Bin.self, .string("b1")), "labels")
        #expect(stored == labels.map { PropertyValue.string($0).description }, context())
        for (d, device) in devices.enumerated() {
            let members = try await device.members
            #expect(members == (labels, keepers), "device \(d): \(members); \(context())")
        }
        for list in [labels, keepers] {
            #expect(Set(list).count == list.count, "a member doubled; \(context())")
            let lost = added.subtracting(removed).filter { m in
                (m.hasPrefix("h") ? keepers : labels).contains(m) == false
            }
            #expect(lost.isEmpty, "lost \(lost.sorted()); \(context())")
            #expect(list.allSatisfy(added.contains), "a member no device added; \(context())")
        }
    }

    @Test(arguments: [
        (["a", "b"], ["a", "b", "x"], ["a", "b", "y"], ["a", "b", "y", "x"]),
        (["a", "b"], ["a", "b", "x"], ["x", "a", "b"], ["x", "a", "b"]),
        (["a", "b", "c"], ["a", "c"], ["c", "b", "a", "d"], ["c", "a", "d"]),
        (["a", "b"], ["b", "a"], ["a", "b"], ["a", "b"]),
        (["a"], [], ["b"], ["b"]),
        ([], ["x", "x"], ["x", "y", "y"], ["x", "y"]),
    ])
    func mergeRule(base: [String], edited: [String], current: [String], expected: [String]) {
        #expect(
            ListMerge.mergeSet(base: base, edited: edited, current: current, key: { $0 }) == expected,
            "base \(base) edited \(edited) current \(current)")
    }
}
