import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// Decimal and ObjectID values in snapshots and journals (format 3): exact text, 24 hex
/// digits, files of format 2 still load, damaged values are refused at their byte.
@Suite struct DecimalFileTests {
    static let schema = Schema([
        ObjectSchema(
            name: "Price",
            properties: [
                Property(name: "_id", type: .objectID, isPrimaryKey: true),
                Property(name: "amount", type: .decimal, isIndexed: true),
                Property(name: "tax", type: .decimal, isOptional: true),
                Property(name: "history", type: .decimal, isList: true),
                Property(name: "parent", type: .objectID, isOptional: true),
            ])
    ])

    static let id1 = ObjectID(hex: "507f1f77bcf86cd799439011")!
    static let id2 = ObjectID(hex: "507f1f77bcf86cd799439012")!

    static func values(_ realm: Realm) async throws -> [[PropertyValue]] {
        try await realm.read { realm in
            try realm.dynamicObjects("Price").map {
                [$0["_id"], $0["amount"], $0["tax"], $0["history"], $0["parent"]]
            }.sorted { $0[0].description < $1[0].description }
        }
    }

    static func decimal(_ text: String) -> PropertyValue { .decimal(Decimal(string: text)!) }

    @Test func valuesSurviveSnapshotAndJournalExactly() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("prices.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: Self.schema, options: options)
        try await withRealm(configuration) { realm in
            try await realm.write { r in
                _ = try r.dynamicCreate(
                    "Price",
                    value: [
                        "_id": .objectID(Self.id1), "amount": Self.decimal("0.1000000000000000000000001"),
                        "history": .list([Self.decimal("1.5"), Self.decimal("-2e-5")]),
                    ])
            }
            try await realm.save()
            // In the journal only.
            try await realm.write { r in
                _ = try r.dynamicCreate(
                    "Price",
                    value: [
                        "_id": .objectID(Self.id2), "amount": Self.decimal("12345678901234567890.123456789"),
                        "tax": Self.decimal("0.07"), "parent": .objectID(Self.id1),
                    ])
            }
            let journal = try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal"))
            #expect(String(decoding: journal, as: UTF8.self).contains(#""12345678901234567890.123456789""#))
        }
        let snapshot = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(snapshot.contains(#""formatVersion": 3"#))
        #expect(snapshot.contains(#""0.1000000000000000000000001""#))
        #expect(snapshot.contains(#""507f1f77bcf86cd799439011""#))
        let expected: [[PropertyValue]] = [
            [
                .objectID(Self.id1), Self.decimal("0.1000000000000000000000001"), .null,
                [Self.decimal("1.5"), Self.decimal("-0.00002")], .null,
            ],
            [
                .objectID(Self.id2), Self.decimal("12345678901234567890.123456789"), Self.decimal("0.07"), [],
                .objectID(Self.id1),
            ],
        ]
        for _ in 0..<2 {
            #expect(try await withRealm(configuration) { try await Self.values($0) } == expected)
        }
        // Queries on the loaded index.
        let found = try await withRealm(configuration) { realm in
            try await realm.read { r in
                try r.dynamicResults("Price").filter("amount == 0.1000000000000000000000001").count
            }
        }
        #expect(found == 1)
    }

    static func snapshot(version: Int, objects: String) -> String {
        let schema =
            #"[{"name": "Price", "properties": [{"name": "_id", "type": "objectID", "primaryKey": true}, {"name": "amount", "type": "decimal", "indexed": true}, {"name": "tax", "type": "decimal", "optional": true}, {"name": "history", "type": "decimal", "list": true}, {"name": "parent", "type": "objectID", "optional": true}]}]"#
        return BadFileTests.file(version: version, schema: schema, objects: objects)
    }

    @Test func damagedValuesAreRefusedAtTheirByte() throws {
        let good =
            #"{"Price": [{"$id": 0, "_id": "507f1f77bcf86cd799439011", "amount": "1.25", "tax": null, "history": ["2"], "parent": null}]}"#
        let loaded = try FileStorage.decode(
            snapshot: Array(Self.snapshot(version: 1, objects: good).utf8), journal: nil)
        #expect(try loaded.store.table(named: "Price").liveCount == 1)
        for (bad, fragment) in [
            (#""amount": "1.25""#, #""amount": "1.2x5""#), (#""amount": "1.25""#, #""amount": 1.25"#),
            (#""_id": "507f1f77bcf86cd799439011""#, #""_id": "507f1f77bcf86cd79943901""#),
            (#""history": ["2"]"#, #""history": ["1e999"]"#),
        ] {
            let text = Self.snapshot(version: 1, objects: good.replacingOccurrences(of: bad, with: fragment))
            #expect(throws: LiveObjectsError.self, "\(fragment)") {
                _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
            }
        }
    }

    /// Every single-byte change of a snapshot holding the new values is refused, or opens with
    /// exactly the same content.
    @Test func everySingleByteChangeIsCaught() throws {
        let objects =
            #"{"Price": [{"$id": 0, "_id": "507f1f77bcf86cd799439011", "amount": "-0.5", "tax": "3", "history": ["2", "1e-3"], "parent": "507f1f77bcf86cd799439011"}]}"#
        try expectEverySingleByteChangeCaught(Self.snapshot(version: 1, objects: objects), truncationStride: 7)
    }

    @Test func formatTwoFilesStillLoadAndAreSavedAsFormatThree() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("v2.json")
        try Data(sealedSnapshot(BadFileTests.file(objects: BadFileTests.items(BadFileTests.good1, BadFileTests.good2))))
            .write(to: url)
        #expect(String(decoding: try Data(contentsOf: url), as: UTF8.self).contains(#""formatVersion": 2"#))
        let configuration = Realm.Configuration(file: url, schema: BadFileTests.schema)
        let names = try await withRealm(configuration) { realm in
            try await realm.write { r in try r.dynamicObjects("Item").first?["name"] = "changed" }
            try await realm.save()
            return try await realm.read { r in try r.dynamicObjects("Item").map { $0["name"] } }.prefix(1)
        }
        #expect(names == [.string("changed")])
        #expect(String(decoding: try Data(contentsOf: url), as: UTF8.self).contains(#""formatVersion": 3"#))
        #expect(
            try await withRealm(configuration) { r in try await r.read { try $0.dynamicObjects("Item").count } } == 2)
    }
    /// A String property becomes a Decimal: the migration sets the old text, converted exactly;
    /// a text that is no number fails the migration (naming the text), and the file stays as
    /// it was.
    @Test func migrationConvertsStringToDecimal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("migrated.json")
        func schema(_ type: PropertyType) -> Schema {
            Schema([
                ObjectSchema(
                    name: "Item",
                    properties: [
                        Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "price", type: type),
                    ])
            ])
        }
        let options = FileStorage.Options(migration: { migration in
            try migration.enumerateObjects(ofType: "Item") { old, new in
                try new?.set("price", to: old["price"])
            }
        })
        for (texts, succeeds) in [(["12.50", "0.30000000000000000000000000001"], true), (["1.5", "twelve"], false)] {
            let file = url.deletingLastPathComponent().appendingPathComponent("\(succeeds)-\(url.lastPathComponent)")
            try await withRealm(Realm.Configuration(file: file, schema: schema(.string), schemaVersion: 1)) { realm in
                try await realm.write { realm in
                    for (i, text) in texts.enumerated() {
                        _ = try realm.dynamicCreate("Item", value: ["id": .int(Int64(i)), "price": .string(text)])
                    }
                }
            }
            let before = try Data(contentsOf: file)
            let configuration = Realm.Configuration(
                file: file, schema: schema(.decimal), schemaVersion: 2, options: options)
            if succeeds {
                let prices = try await withRealm(configuration) { realm in
                    try await realm.read { realm in try realm.dynamicObjects("Item").map { $0["price"] } }
                }
                #expect(prices == [Self.decimal("12.5"), Self.decimal("0.30000000000000000000000000001")])
            } else {
                await #expect {
                    try await withRealm(configuration) { _ in }
                } throws: { error in
                    (error as? LiveObjectsError)?.code == .schemaVersionMismatch
                        && "\(error)".contains("twelve")
                }
                #expect(try Data(contentsOf: file) == before)
            }
        }
    }
}
