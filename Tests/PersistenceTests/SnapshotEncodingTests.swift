import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import LiveObjectsJSON
@testable import Persistence

/// Scalars, optional scalars and links only: the shape that snapshots write through
/// `FlatRecords`. `Target` reuses slots, so links into it carry generations.
let flatSchema = Schema([
    ObjectSchema(
        name: "Flat",
        properties: [
            Property(name: "id", type: .int, isPrimaryKey: true),
            Property(name: "b", type: .bool),
            Property(name: "i", type: .int),
            Property(name: "d", type: .double),
            Property(name: "s", type: .string),
            Property(name: "ob", type: .bool, isOptional: true),
            Property(name: "oi", type: .int, isOptional: true),
            Property(name: "od", type: .double, isOptional: true),
            Property(name: "os", type: .string, isOptional: true),
            .link("next", to: "Flat"),
            .link("target", to: "Target"),
        ]),
    ObjectSchema(name: "Target", properties: [Property(name: "name", type: .string)]),
])

@Suite struct SnapshotEncodingTests {
    /// Fills a realm of ``flatSchema`` with awkward values: every kind of double (NaN payloads
    /// included), strings that need escapes, non-ASCII and long ones, nil, links with and without
    /// generations, free slots; more rows than one chunk.
    static func fill(_ realm: Realm, seed: UInt64) async throws {
        try await realm.write { realm in
            for t in 0..<50 { _ = try realm.dynamicCreate("Target", value: ["name": .string("t\(t)")]) }
            for (t, target) in try realm.dynamicObjects("Target").enumerated() where t % 3 == 0 {
                try realm.delete(target)
            }
        }
        // Slots freed by a committed write are taken again: the new objects' keys have
        // generation 1.
        try await realm.write { try fillFlat($0, seed: seed) }
        #expect(try await realm.read { try $0.dynamicObjects("Target").contains { $0.key.generation > 0 } })
    }

    private static func fillFlat(_ realm: isolated Realm, seed: UInt64) throws {
        var generator = SeededRandomNumberGenerator(seed: seed)
        for t in 0..<10 { _ = try realm.dynamicCreate("Target", value: ["name": .string("again\(t)")]) }
        let targets = try realm.dynamicObjects("Target").map { $0 }
        let strings = [
            "", "a", "Rex", "exactly16bytes!!", "quote \" and backslash \\", "line\nbreak\ttab\u{0}\u{1F}",
            "é😀 non-ASCII", String(repeating: "long ", count: 40),
        ]
        var made: [DynamicObject] = []
        for i in 0..<5_000 {
            let random = generator.next()
            let d = i < awkwardDoubles.count ? awkwardDoubles[i] : Double(bitPattern: random)
            let s = strings[i % strings.count]
            made.append(
                try realm.dynamicCreate(
                    "Flat",
                    value: [
                        "id": .int(i == 0 ? .min : i == 1 ? .max : Int64(i) - 100),
                        "b": .bool(random & 1 == 0), "i": .int(Int64(bitPattern: random) >> (random % 64)),
                        "d": .double(d), "s": .string(s),
                        "ob": i % 3 == 0 ? .null : .bool(i % 2 == 0), "oi": i % 4 == 0 ? .null : .int(Int64(i) * -7),
                        "od": i % 5 == 0 ? .null : .double(-d), "os": i % 2 == 0 ? .null : .string(s + "?"),
                    ]))
        }
        for (i, object) in made.enumerated() {
            if i % 2 == 0 { try object.set("next", to: .object(made[Int(generator.next() % 5_000)].key)) }
            if i % 3 != 1 { try object.set("target", to: .object(targets[i % targets.count].key)) }
        }
        for i in stride(from: 7, to: 5_000, by: 97) { try realm.delete(made[i]) }
    }

    /// Each table's records written through the fast path and through the general one, record by
    /// record: the same bytes.
    @Test(arguments: [JSONWriter.Options.records, .compact])
    func flatRecordsAreWrittenLikeTheGeneralPath(options: JSONWriter.Options) async throws {
        let realm = try await Realm.open(.init(identifier: "flat-\(UUID())", schema: flatSchema))
        try await Self.fill(realm, seed: 0xF1A7)
        let comparisons = try await realm.read { realm -> [(String, Int, Bool)] in
            let store = realm.store
            let encoder = RecordEncoder(store: store, inlineEmbedded: true)
            var result: [(String, Int, Bool)] = []
            for table in store.tables {
                guard encoder.flatRecords(table, writer: JSONWriter(options: options)) != nil else {
                    Issue.record("\(table.name) does not take the fast path")
                    continue
                }
                var general = JSONWriter(options: options)
                general.beginArray()
                var rows = 0
                for row in 0..<table.rowCount where table.isLive(Int32(row)) {
                    try encoder.write(table, Int32(row), into: &general, depth: 0)
                    rows += 1
                }
                general.endArray()
                var fast = JSONWriter(options: options)
                fast.beginArray()
                var flushed: [UInt8] = []
                try encoder.writeAll(table, into: &fast) { (writer) throws(LiveObjectsError) in
                    flushed += writer.takeBytes()
                }
                fast.endArray()
                result.append((table.name, rows, general.takeBytes() == flushed + fast.takeBytes()))
            }
            return result
        }
        try await realm.close()
        #expect(comparisons.map(\.0) == ["Flat", "Target"])
        for (name, rows, same) in comparisons {
            #expect(rows > 0, "\(name)")
            #expect(same, "\(name): the fast path wrote other bytes")
        }
    }

    /// Saved to a file and opened again: every value bit for bit, every link to the same key.
    @Test func flatRecordsRoundTripThroughAFile() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("flat.json")
        let configuration = Realm.Configuration(
            file: url, schema: flatSchema, options: .init(savePolicy: .manual, journal: false))
        let written = try await withRealm(configuration) { realm in
            try await Self.fill(realm, seed: 0x5A7E)
            try await realm.save()
            return try await realm.read { try Self.values($0) }
        }
        let read = try await withRealm(configuration) { realm in try await realm.read { try Self.values($0) } }
        #expect(read.count == written.count)
        var mismatches = 0
        for (a, b) in zip(written, read) {
            for (name, value) in a where !sameBits(value, b[name] ?? .null) {
                mismatches += 1
                if mismatches < 5 { Issue.record("\(name): \(value) != \(b[name] ?? .null)") }
            }
        }
        #expect(mismatches == 0)
    }

    /// Every object's values with its key, in key order.
    static func values(_ realm: isolated Realm) throws -> [[String: PropertyValue]] {
        var result: [[String: PropertyValue]] = []
        for type in realm.schema.objectSchemas {
            for object in try realm.dynamicObjects(type.name).sorted(by: { $0.key < $1.key }) {
                var values = object.values
                values["$key"] = .string("\(type.name) \(object.key)")
                result.append(values)
            }
        }
        return result
    }
}
