import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// The loader gathers the values of integer and string columns and appends them a chunk at a
/// time (`ColumnTargets`): whatever else happens between two appends of a column (a property
/// missing or given out of order, a free slot, a record placed by row, a primary key indexed,
/// the end of a table), every row ends with its own values, as in a plain Swift model of the
/// records, and every slot (gathered too, added a run at a time) with its object's generation,
/// live (seeded; the seed and the records around a difference are in the message).
@Suite struct GatheredColumnLoadTests {
    /// The seeds; `LIVEOBJECTS_LOAD_SEED` replays one.
    static let seeds: [UInt64] = TestEnvironment.seed("LIVEOBJECTS_LOAD_SEED").map { [$0] } ?? [1, 2, 3, 4, 5, 6]

    static let schemaText =
        #"[{"name": "Item", "properties": [{"name": "id", "type": "int", "primaryKey": true}, "#
        + #"{"name": "name", "type": "string", "indexed": true}, {"name": "count", "type": "int", "optional": true}, "#
        + #"{"name": "level", "type": "int"}, {"name": "note", "type": "string"}, "#
        + #"{"name": "next", "type": "object", "optional": true, "objectType": "Item"}]}, "#
        + #"{"name": "Tag", "properties": [{"name": "label", "type": "string"}, {"name": "weight", "type": "int"}]}]"#

    /// What a record gives (nil: the member is left out, and the property's default loads).
    struct Record {
        var slot: Int
        /// The generation of the object's key (not 0 for an object in a reused slot).
        var generation: UInt32 = 0
        var id: Int64
        var name: String?
        var count: Int64??
        var level: Int64?
        var note: String?
        /// The id of the object linked to, or null.
        var next: Int64??

        /// The object's id: its generation and slot.
        var objectID: Int64 { Int64(generation) << 32 | Int64(slot) }

        /// The values the object loads with, by property, its link as the linked object's id.
        var loaded: [PropertyValue] {
            [
                .int(id), .string(name ?? ""), (count ?? nil).map { .int($0) } ?? .null, .int(level ?? 0),
                .string(note ?? ""), (next ?? nil).map { .int(Int64($0)) } ?? .null,
            ]
        }
    }

    /// A JSON string literal of `text`.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for c in text.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    /// A string of one of the forms a name takes: short, long (not a small string), non-ASCII,
    /// with escapes.
    static func draw(_ rng: inout SeededRandomNumberGenerator) -> String {
        switch rng.below(8) {
        case 0...3: "n\(rng.below(300))"
        case 4: "a name longer than fifteen bytes \(rng.below(50))"
        case 5: "é\(rng.below(40))ß"
        case 6: "q\"\\\n\(rng.below(20))"
        default: ""
        }
    }

    /// An integer of a random width.
    static func drawInt(_ rng: inout SeededRandomNumberGenerator) -> Int64 {
        switch rng.below(6) {
        case 0...2: Int64(rng.int(in: -100...100))
        case 3: Int64(rng.int(in: -40_000...40_000))
        case 4: Int64(rng.int(in: -3_000_000_000...3_000_000_000))
        default: [Int64.min, .max, Int64(Int32.min), 128, -129][rng.below(5)]
        }
    }

    /// A record's text: members sometimes shuffled, the `$id` sometimes after the others.
    static func text(_ r: Record, _ rng: inout SeededRandomNumberGenerator) -> String {
        var members = [#""id": \#(r.id)"#]
        if let name = r.name { members.append(#""name": \#(quoted(name))"#) }
        if let count = r.count { members.append(#""count": \#(count.map(String.init) ?? "null")"#) }
        if let level = r.level { members.append(#""level": \#(level)"#) }
        if let note = r.note { members.append(#""note": \#(quoted(note))"#) }
        if let next = r.next { members.append(#""next": \#(next.map(String.init) ?? "null")"#) }
        if rng.below(6) == 0 { members.shuffle(using: &rng) }
        let id = #""$id": \#(r.objectID)"#
        if rng.below(40) == 0 {
            members.insert(id, at: rng.below(members.count + 1))
        } else {
            members.insert(id, at: 0)
        }
        return "{" + members.joined(separator: ", ") + "}"
    }

    /// Records of about 1,500 to 9,000 objects (across several gathers and chunks), with free
    /// slots between them and some moved later in the file than their slot.
    static func records(_ rng: inout SeededRandomNumberGenerator) -> [Record] {
        let n = rng.int(in: 1_500...9_000)
        var records: [Record] = []
        var slot = 0
        for i in 0..<n {
            if rng.below(12) == 0 { slot += rng.int(in: 1...3) }
            func maybe<T>(_ value: T) -> T? { rng.below(9) == 0 ? nil : value }
            let count: Int64? = rng.below(3) == 0 ? nil : drawInt(&rng)
            records.append(
                Record(
                    slot: slot, generation: rng.below(8) == 0 ? UInt32(rng.int(in: 1...70_000)) : 0,
                    id: Int64(i) * 7 - 5_000, name: maybe(draw(&rng)), count: maybe(count),
                    level: maybe(drawInt(&rng)), note: maybe(draw(&rng))))
            slot += 1
        }
        // Links to objects placed before and after.
        for i in records.indices where rng.below(3) > 0 {
            records[i].next = rng.below(5) == 0 ? .some(nil) : records[rng.below(records.count)].objectID
        }
        for i in records.indices.reversed() where rng.below(50) == 0 && i + 1 < records.count {
            let record = records.remove(at: i)
            records.insert(record, at: rng.int(in: i + 1...records.count))
        }
        return records
    }

    @Test(arguments: seeds)
    func gatheredColumnsLoadEveryRowsOwnValues(seed: UInt64) throws {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let records = Self.records(&rng)
        let texts = records.map { Self.text($0, &rng) }
        // A second table after the first: its columns gathered on their own.
        let tagValues = (0..<rng.int(in: 0...3_000)).map { _ in (Self.draw(&rng), Self.drawInt(&rng)) }
        let tags = tagValues.enumerated().map { i, tag in
            #"{"$id": \#(i), "label": \#(Self.quoted(tag.0)), "weight": \#(tag.1)}"#
        }
        let text =
            #"{"format": "LiveObjects", "formatVersion": 1, "schemaVersion": 0, "commit": 0, "schema": "#
            + Self.schemaText + #", "objects": {"Item": ["# + texts.joined(separator: ",\n") + #"], "Tag": ["#
            + tags.joined(separator: ",\n") + "]}}\n"
        func context(_ i: Int) -> String {
            let moved = zip(records, records.dropFirst()).filter { $0.slot > $1.slot }.map { "\($1.slot)" }
            return "seed \(seed), \(records.count) records, slots placed after a later one: "
                + "\(moved.joined(separator: " ")); records \(max(0, i - 2)) to \(i + 2):\n"
                + texts[max(0, i - 2)..<min(texts.count, i + 3)].joined(separator: "\n")
        }
        let loaded: (store: Store, schemaVersion: UInt64, commit: UInt64)
        do {
            loaded = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
        } catch {
            Issue.record("\(error); \(context(0))")
            return
        }
        let table = try #require(loaded.store.tablesByName["Item"])
        #expect(table.liveCount == records.count, "\(context(0))")
        for (i, record) in records.enumerated() {
            let row = Int32(record.slot)
            var values = (0..<5).map { table.value(row, $0) }
            values.append(
                table.value(row, 5).objectKey.map { .int(Int64($0.generation) << 32 | Int64($0.row)) } ?? .null)
            guard values == record.loaded, table.row(forPrimaryKey: .int(record.id)) == row else {
                Issue.record("row \(row): \(values), expected \(record.loaded); \(context(i))")
                return
            }
            let key = ObjectKey(row: UInt32(record.slot), generation: record.generation)
            guard table.isLive(row), table.key(row) == key, table.row(for: key) == row else {
                Issue.record(
                    "slot \(row): live \(table.isLive(row)), key \(table.key(row)), expected \(key); \(context(i))")
                return
            }
        }
        #expect(table.slotBookkeepingIsConsistent, "\(context(0))")
        let slots = Set(records.map(\.slot))
        let free = (0..<(slots.max()! + 1)).filter { !slots.contains($0) }.map(Int32.init)
        #expect(table.freeRows.sorted() == free, "\(context(0))")
        // The name index, built from the column, finds each name's rows.
        var byName: [String: [Int32]] = [:]
        for record in records { byName[record.name ?? "", default: []].append(Int32(record.slot)) }
        for (name, rows) in byName.prefix(20) {
            #expect(table.valueIndexes[1]?.rows[.string(name)] == rows.sorted(), "\(name): \(context(0))")
        }
        let tagTable = try #require(loaded.store.tablesByName["Tag"])
        #expect(tagTable.liveCount == tags.count, "\(context(0))")
        for (i, tag) in tagValues.enumerated() {
            let values = [tagTable.value(Int32(i), 0), tagTable.value(Int32(i), 1)]
            guard values == [.string(tag.0), .int(tag.1)] else {
                Issue.record("seed \(seed): tag \(i) is \(values), expected \(tag)")
                return
            }
        }
    }
}
