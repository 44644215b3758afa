import Foundation
import LiveObjects
import Testing

@testable import Persistence

/// The snapshot loader on records it does not write itself: properties in any order, missing or
/// given twice, objects out of slot order and with gaps between their ids; and its checks
/// (duplicate primary keys among thousands of objects, links to missing objects) wherever they
/// fall.
@Suite struct SnapshotLoadTests {
    static let schemaText =
        #"[{"name": "Item", "properties": [{"name": "id", "type": "int", "primaryKey": true}, "#
        + #"{"name": "name", "type": "string", "indexed": true}, {"name": "score", "type": "double"}, "#
        + #"{"name": "count", "type": "int", "optional": true}, {"name": "flag", "type": "bool"}, "#
        + #"{"name": "small", "type": "int8"}, {"name": "tags", "type": "string", "list": true}, "#
        + #"{"name": "next", "type": "object", "optional": true, "objectType": "Item"}, "#
        + #"{"name": "friends", "type": "object", "list": true, "objectType": "Item"}, "#
        + #"{"name": "parents", "type": "linkingObjects", "list": true, "objectType": "Item", "originProperty": "next"}]}]"#

    static func file(_ records: [String], freeSlots: String? = nil) -> [UInt8] {
        var text =
            #"{"format": "LiveObjects", "formatVersion": 1, "schemaVersion": 0, "commit": 0, "schema": "#
            + schemaText + #", "objects": {"Item": ["# + records.joined(separator: ",\n") + "]}"
        if let freeSlots { text += #", "freeSlots": {"Item": ["# + freeSlots + "]}" }
        return Array((text + "}\n").utf8)
    }

    /// The snapshot the writer makes of what `records` load into.
    static func resaved(_ records: [String], freeSlots: String? = nil) throws -> String {
        let loaded = try FileStorage.decode(snapshot: file(records, freeSlots: freeSlots), journal: nil)
        return String(decoding: try FileStorage.encode(loaded.store, schemaVersion: 0, commit: 0), as: UTF8.self)
    }

    static func error(_ records: [String]) -> LiveObjectsError? {
        do {
            _ = try FileStorage.decode(snapshot: file(records), journal: nil)
            return nil
        } catch {
            return error
        }
    }

    @Test func recordsInAnyOrderLoadAsTheWriterWouldWriteThem() throws {
        let scrambled = [
            // Properties out of schema order, some missing.
            #"{"$id": 0, "score": 2.5, "id": 1, "tags": ["a"], "name": "a", "next": 3, "small": -3}"#,
            // The $id after other properties.
            #"{"name": "c", "$id": 3, "id": 4, "friends": [0, 0], "count": 7, "flag": true}"#,
            // A slot before one already placed; slot 2 stays free.
            #"{"$id": 1, "id": 2, "next": 0, "name": "b", "score": "-Infinity"}"#,
            #"{"$id": 4294967301, "id": 6, "next": 0, "count": null, "friends": [3]}"#,
        ]
        let canonical = [
            #"{"$id": 0, "id": 1, "name": "a", "score": 2.5, "count": null, "flag": false, "small": -3, "tags": ["a"], "next": 3, "friends": []}"#,
            #"{"$id": 1, "id": 2, "name": "b", "score": "-Infinity", "count": null, "flag": false, "small": 0, "tags": [], "next": 0, "friends": []}"#,
            #"{"$id": 3, "id": 4, "name": "c", "score": 0, "count": 7, "flag": true, "small": 0, "tags": [], "next": null, "friends": [0, 0]}"#,
            #"{"$id": 4294967301, "id": 6, "name": "", "score": 0, "count": null, "flag": false, "small": 0, "tags": [], "next": 0, "friends": [3]}"#,
        ]
        let saved = try Self.resaved(scrambled)
        #expect(saved == (try Self.resaved(canonical)))
        // What was written reads back the same.
        let loaded = try FileStorage.decode(snapshot: Array(saved.utf8), journal: nil)
        #expect(
            String(decoding: try FileStorage.encode(loaded.store, schemaVersion: 0, commit: 0), as: UTF8.self) == saved)

        // Indexes and backlinks: by row, whatever the order in the file.
        let table = loaded.store.tablesByName["Item"]!
        #expect(table.freeRows.sorted() == [2, 4])
        #expect(table.row(forPrimaryKey: .int(6)) == 5)
        #expect(table.row(forPrimaryKey: .int(3)) == nil)
        #expect(table.valueIndexes[1]?.rows[.string("")] == [5])
        #expect(table.valueIndexes[1]?.rows[.string("a")] == [0])
        #expect(table.value(0, 9) == .list([.object(table.key(1)), .object(table.key(5))]))
        #expect(table.value(3, 9) == .list([.object(table.key(0))]))
    }

    @Test func backlinksOfObjectsOutOfSlotOrderAreInRowOrder() throws {
        let loaded = try FileStorage.decode(
            snapshot: Self.file([
                #"{"$id": 2, "id": 3, "next": 0}"#, #"{"$id": 0, "id": 1, "next": 0}"#,
                #"{"$id": 1, "id": 2, "next": 0}"#,
            ]), journal: nil)
        let table = loaded.store.tablesByName["Item"]!
        #expect(table.value(0, 9) == .list((0...2).map { .object(table.key($0)) }))
    }

    @Test func manyObjectsLoadWithTheirKeysAndLinks() throws {
        let n = 10_000
        let records = (0..<n).map { i in
            #"{"$id": \#(i), "id": \#(i * 7), "name": "n\#(i % 100)", "next": \#(i % 2 == 0 ? String((i * 31) % n) : "null")}"#
        }
        let loaded = try FileStorage.decode(snapshot: Self.file(records), journal: nil)
        let table = loaded.store.tablesByName["Item"]!
        #expect(table.liveCount == n)
        for i in stride(from: 0, to: n, by: 97) {
            #expect(table.row(forPrimaryKey: .int(Int64(i * 7))) == Int32(i))
            #expect(table.value(Int32(i), 7) == (i % 2 == 0 ? .object(table.key(Int32((i * 31) % n))) : .null))
        }
        #expect(table.valueIndexes[1]?.rows[.string("n42")] == (0..<(n / 100)).map { Int32($0 * 100 + 42) })
    }

    /// Files of a megabyte or more are mapped rather than read: the same objects, the same
    /// errors, the file untouched.
    @Test func largeFilesOpenAndLargeBadFilesAreRefusedUntouched() async throws {
        let n = 12_000
        let records = (0..<n).map { i in
            #"{"$id": \#(i), "id": \#(i), "name": "a name long enough to pass a megabyte \#(i)", "next": \#((i + 1) % n)}"#
        }
        let bytes = Self.file(records)
        #expect(bytes.count > FileIO.mappedSize)
        let schema = try FileStorage.decode(snapshot: bytes, journal: nil).store.schema
        let directory = try makeTemporaryDirectory()
        let url = directory.appendingPathComponent("large.json")
        try Data(bytes).write(to: url)
        let names = try await withRealm(Realm.Configuration(file: url, schema: schema, options: .init(journal: false)))
        {
            realm in
            try await realm.read { realm in
                try realm.dynamicObjects("Item").map { try $0.linkedObject("next")?["name"] ?? .null }
            }
        }
        #expect(names.count == n)
        #expect(names.first == .string("a name long enough to pass a megabyte 1"))

        let truncated = directory.appendingPathComponent("truncated.json")
        try Data(bytes.prefix(bytes.count - 100)).write(to: truncated)
        let before = fileBytes(truncated)
        await #expect {
            _ = try await Realm.open(Realm.Configuration(file: truncated, schema: schema))
        } throws: { ($0 as! LiveObjectsError).code == .corruptFile }
        #expect(fileBytes(truncated) == before)
    }

    @Test func duplicatePrimaryKeyFarIntoTheFileNamesTheObjectAndWhereItEnds() throws {
        var records = (0..<6000).map { #"{"$id": \#($0), "id": \#($0)}"# }
        records[5000] = #"{"$id": 5000, "id": 17}"#
        let error = try #require(Self.error(records))
        #expect(error.code == .corruptFile)
        #expect(error.objectType == "Item")
        #expect(error.primaryKey == .int(17))
        let text = String(decoding: Self.file(records), as: UTF8.self)
        let end = text.utf8.count - text[text.range(of: records[5000])!.upperBound...].utf8.count
        #expect(error.message.contains("primary key 17 (before byte \(end), line 5001, column "), "\(error)")
    }

    @Test func duplicatePrimaryKeyComesBeforeALaterSyntaxError() throws {
        var records = (0..<100).map { #"{"$id": \#($0), "id": \#($0)}"# }
        records[50] = #"{"$id": 50, "id": 3}"#
        records[90] = #"{"$id": 90, "id": 90, "name": nope}"#
        let error = try #require(Self.error(records))
        #expect(error.primaryKey == .int(3), "\(error)")
        // Without the duplicate, the syntax error.
        records[50] = #"{"$id": 50, "id": 50}"#
        #expect(Self.error(records)?.message.contains("invalid JSON") == true)
    }

    @Test func badRecordsAreCorrupt() {
        let cases: [(String, [String], String)] = [
            ("$id twice", [#"{"$id": 0, "id": 1, "$id": 1}"#], "$id is given twice"),
            (
                "$id twice, second placed by row", [#"{"$id": 1, "id": 2}"#, #"{"$id": 0, "$id": 0}"#],
                "$id is given twice"
            ),
            ("no $id", [#"{}"#], "without $id"),
            ("no $id after properties", [#"{"id": 1, "name": "a"}"#], "without $id"),
            ("link to a missing object", [#"{"$id": 0, "id": 1, "next": 1}"#], "does not exist"),
            ("link to a free slot", [#"{"$id": 1, "id": 1, "next": 0}"#], "does not exist"),
            (
                "link to an older generation", [#"{"$id": 0, "id": 1}"#, #"{"$id": 4294967297, "id": 2, "next": 1}"#],
                "does not exist"
            ),
            ("link given twice", [#"{"$id": 0, "id": 1, "next": 0, "next": 0}"#], "given twice"),
            ("property given twice", [#"{"$id": 0, "id": 1, "name": "x", "name": "a"}"#], "given twice"),
            ("property given twice, out of order", [#"{"$id": 0, "name": "x", "id": 1, "name": "a"}"#], "given twice"),
            (
                "property given twice, placed by row", [#"{"$id": 1, "id": 2}"#, #"{"$id": 0, "id": 1, "id": 1}"#],
                "given twice"
            ),
            ("list given twice", [#"{"$id": 0, "id": 1, "friends": [], "friends": [0]}"#], "given twice"),
            ("null for a string", [#"{"$id": 0, "id": 1, "name": null}"#], "not optional"),
            ("null for a double", [#"{"$id": 0, "id": 1, "score": null}"#], "not optional"),
            ("null for a bool", [#"{"$id": 0, "id": 1, "flag": null}"#], "not optional"),
            ("string for a double", [#"{"$id": 0, "id": 1, "score": "1.5"}"#], "is not a number"),
            ("int8 out of range", [#"{"$id": 0, "id": 1, "small": 128}"#], "out of range"),
            ("unknown property", [#"{"$id": 0, "id": 1, "color": 1}"#], "unknown property"),
            ("linking objects given", [#"{"$id": 0, "id": 1, "parents": []}"#], "not stored"),
            ("slot used twice", [#"{"$id": 0, "id": 1}"#, #"{"$id": 0, "id": 2}"#], "two objects have the id"),
        ]
        for (name, records, message) in cases {
            let error = Self.error(records)
            #expect(error?.code == .corruptFile, "\(name): \(String(describing: error))")
            #expect(error?.message.contains(message) == true, "\(name): \(String(describing: error))")
            #expect(error?.message.contains("byte ") == true, "\(name): \(String(describing: error))")
        }
    }
}
