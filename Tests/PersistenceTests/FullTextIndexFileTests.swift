import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// A full-text index in a file realm: the schema keeps the property's flag, the index itself is
/// not written, and a reopened file (snapshot and journal) answers `TEXT` from an index built
/// again from its data.
@Suite struct FullTextIndexFileTests {
    static let schema = Schema([
        ObjectSchema(
            name: "Note",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "body", type: .string, isFullTextIndexed: true),
            ])
    ])

    /// The ids of the notes a full-text query finds (one count per note: the dynamic results
    /// of a filter are counted here, not read).
    static func ids(_ realm: Realm, _ query: String) async throws -> [Int] {
        try await realm.read { r in
            try (0..<4).filter { id in
                try r.dynamicResults("Note").filter("body TEXT '\(query)' AND id == \(id)").count == 1
            }
        }
    }

    @Test func aReopenedFileKeepsTheFlagAndRebuildsTheIndex() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("notes.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: Self.schema, options: options)
        let bodies = ["Café crème", "Пятёрочка у дома", "東京のコーヒー", "decaf coffee"]
        try await withRealm(configuration) { realm in
            try await realm.write { r in
                for (i, body) in bodies.enumerated() {
                    try r.dynamicCreate("Note", value: ["id": .int(Int64(i)), "body": .string(body)])
                }
            }
            #expect(try await Self.ids(realm, "cafe") == [0])
            try await realm.save()
            // In the journal only: replayed at the next open.
            try await realm.write { r in
                try r.dynamicObject(ofType: "Note", forPrimaryKey: .int(3))?.set("body", to: .string("café au lait"))
            }
            #expect(try await Self.ids(realm, "cafe") == [0, 3])
        }
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains(#""fullText":true"#) || text.contains(#""fullText": true"#))
        try await withRealm(configuration) { realm in
            let property = realm.schema["Note"]?.properties.first { $0.name == "body" }
            #expect(property?.isFullTextIndexed == true)
            #expect(try await Self.ids(realm, "cafe") == [0, 3])
            #expect(try await Self.ids(realm, "дом* -decaf") == [1])
            #expect(try await Self.ids(realm, #""東京""#) == [2])
            #expect(try await Self.ids(realm, "coffee") == [])
            let violations = try await realm.read { StoreInvariants.violations(in: $0.store) }
            #expect(violations.isEmpty, "\(violations)")
        }
    }

    /// A migration adds the index to an existing property, and a later one drops it: the
    /// answers stay the same, from the index and then by a scan.
    @Test func aMigrationAddsAndDropsTheIndex() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("notes.json")
        var plain = Self.schema
        plain.objectSchemas[0].properties[1].isFullTextIndexed = false
        try await withRealm(Realm.Configuration(file: url, schema: plain)) { realm in
            try await realm.write { r in
                for (i, body) in ["Café crème", "Пятёрочка у дома", "東京のコーヒー", "decaf coffee"].enumerated() {
                    try r.dynamicCreate("Note", value: ["id": .int(Int64(i)), "body": .string(body)])
                }
            }
            #expect(try await Self.ids(realm, "cafe* -decaf") == [0])
        }
        try await withRealm(Realm.Configuration(file: url, schema: Self.schema, schemaVersion: 1)) {
            realm async throws in
            #expect(realm.schema["Note"]?.properties[1].isFullTextIndexed == true)
            #expect(try await Self.ids(realm, "cafe* -decaf") == [0])
            #expect(try await Self.ids(realm, "coffee") == [3])
        }
        try await withRealm(Realm.Configuration(file: url, schema: plain, schemaVersion: 2)) { realm async throws in
            #expect(realm.schema["Note"]?.properties[1].isFullTextIndexed == false)
            #expect(try await Self.ids(realm, "cafe* -decaf") == [0])
        }
    }
}
