import Foundation
import LiveObjects
import Persistence

/// `migration`: a file realm through three schema versions without losing data.
enum MigrationWalkthrough: Walkthrough {
    static let name = "migration"
    static let summary = "Product v1 in a file, v2 adds note (nothing lost), v3 renames title in a migration closure"

    /// Version 1.
    final class ProductV1: Object {
        override class var className: String { "Product" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted var title = ""
        @Persisted var price = 0.0
    }

    /// Version 2: adds `note`.
    final class ProductV2: Object {
        override class var className: String { "Product" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted var title = ""
        @Persisted var price = 0.0
        @Persisted var note = ""
    }

    /// Version 3: `title` is now `name`.
    final class ProductV3: Object {
        override class var className: String { "Product" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var price = 0.0
        @Persisted var note = ""
    }

    /// A product's values, outside the realm.
    struct Row: Equatable, Sendable, CustomStringConvertible {
        var id: Int
        var title: String
        var price: Double
        var note: String

        var description: String { "#\(id) \(title) \(price)" + (note.isEmpty ? "" : " (\(note))") }
    }

    static let products = [
        Row(id: 1, title: "Green tea", price: 4.5, note: ""),
        Row(id: 2, title: "Rye bread", price: 3.2, note: ""),
        Row(id: 3, title: "Blue cheese", price: 7.95, note: ""),
    ]

    static func run(_ narrator: Narrator) async throws {
        let directory = try makeTemporaryDirectory("migration")
        defer { removeTemporaryDirectory(directory) }
        let file = directory.appendingPathComponent("shop.liveobjects")

        try await saveVersion1(narrator, file: file)
        narrator.step("A changed model needs a higher schema version.")
        narrator.say("Open the file with a Product that has a note, still saying version 1:")
        let before = try Data(contentsOf: file)
        try await narrator.expectError(.schemaVersionMismatch, "the open is refused") {
            _ = try await Realm.open(.init(file: file, objectTypes: [ProductV2.self], schemaVersion: 1))
        }
        try narrator.check(try Data(contentsOf: file) == before, "the file is unchanged")

        try await openVersion2(narrator, file: file)
        try await migrateToVersion3(narrator, file: file)

        narrator.step("Schema versions only go up.")
        try await narrator.expectError(.schemaVersionMismatch, "opening the file at version 2 again is refused") {
            _ = try await Realm.open(.init(file: file, objectTypes: [ProductV2.self], schemaVersion: 2))
        }
    }

    /// Version 1: three products saved to the file.
    static func saveVersion1(_ narrator: Narrator, file: URL) async throws {
        narrator.step("Version 1: save three products to a file.")
        narrator.code(
            """
            final class Product: Object {
                @Persisted(primaryKey: true) var id = 0
                @Persisted var title = ""
                @Persisted var price = 0.0
            }
            let shop = try await Realm.open(.init(file: file, objectTypes: [Product.self], schemaVersion: 1))
            """)
        var shop: Realm? = try await Realm.open(.init(file: file, objectTypes: [ProductV1.self], schemaVersion: 1))
        try await shop!.write { shop in
            for product in products {
                _ = try shop.create(
                    ProductV1.self, value: ["id": product.id, "title": product.title, "price": product.price])
            }
        }
        try await shop!.save()
        shop = nil
        let v1 = try FileStorage.header(ofFile: file)
        narrator.say("The file's header: schema version \(v1.schemaVersion), Product { \(describe(v1.schema)) }")
        try narrator.check(v1.schemaVersion == 1 && v1.schema["Product"]?["title"] != nil, "the file holds version 1")
    }

    /// Version 2 adds a property: no migration code.
    static func openVersion2(_ narrator: Narrator, file: URL) async throws {
        narrator.step("Version 2 adds note: open at schema version 2, no migration code needed.")
        narrator.code(
            """
            final class Product: Object {
                ...
                @Persisted var note = ""                   // new
            }
            let shop = try await Realm.open(.init(file: file, objectTypes: [Product.self], schemaVersion: 2))
            """)
        var shop: Realm? = try await Realm.open(.init(file: file, objectTypes: [ProductV2.self], schemaVersion: 2))
        let afterV2 = try await shop!.read { shop in
            shop.objects(ProductV2.self).sorted(by: \.id).map {
                Row(id: $0.id, title: $0.title, price: $0.price, note: $0.note)
            }
        }
        for row in afterV2 { narrator.say("\(row)") }
        try narrator.expect(afterV2, products, "every product kept its title and price; note is empty")
        try await shop!.write { shop in
            shop.object(ofType: ProductV2.self, forPrimaryKey: 3)?.note = "keep cold"
        }
        narrator.say("Write a note on the cheese and close.")
        shop = nil
    }

    /// Version 3 renames a property: the migration closure says so.
    static func migrateToVersion3(_ narrator: Narrator, file: URL) async throws {
        narrator.step("Version 3 renames title to name: the migration closure carries the values over.")
        narrator.say(
            """
            The automatic step alone would see `title` removed and `name` added: the titles would be
            dropped and every name empty. The closure says it is a rename.
            """)
        narrator.code(
            """
            final class Product: Object {
                @Persisted(primaryKey: true) var id = 0
                @Persisted var name = ""                   // was title
                @Persisted var price = 0.0
                @Persisted var note = ""
            }
            let options = FileStorage.Options(migration: { migration in
                try migration.renameProperty(onType: "Product", from: "title", to: "name")
            })
            let shop = try await Realm.open(.init(file: file, objectTypes: [Product.self], schemaVersion: 3,
                                                  options: options))
            """)
        let options = FileStorage.Options(migration: { migration in
            narrator.say(
                "The migration closure runs: version \(migration.oldSchemaVersion) → \(migration.newSchemaVersion).")
            try migration.renameProperty(onType: "Product", from: "title", to: "name")
            migration.enumerateObjects(ofType: "Product") { old, new in
                narrator.say("  Product \(old["id"]): title \(old["title"]) → name \(new?["name"] ?? .null)")
            }
        })
        var shop: Realm? = try await Realm.open(
            .init(file: file, objectTypes: [ProductV3.self], schemaVersion: 3, options: options))
        let afterV3 = try await shop!.read { shop in
            shop.objects(ProductV3.self).sorted(by: \.id).map {
                Row(id: $0.id, title: $0.name, price: $0.price, note: $0.note)
            }
        }
        var expected = products
        expected[2].note = "keep cold"
        try narrator.expect(afterV3, expected, "every name is the old title; prices and the note are kept")
        try await shop!.save()
        try await shop!.close()
        shop = nil
        let v3 = try FileStorage.header(ofFile: file)
        narrator.say("The file's header: schema version \(v3.schemaVersion), Product { \(describe(v3.schema)) }")
        try narrator.check(
            v3.schemaVersion == 3 && v3.schema["Product"]?["name"] != nil && v3.schema["Product"]?["title"] == nil,
            "the file now holds version 3")
    }

    /// "id: Int primary, title: String, …" for the Product type of a schema.
    static func describe(_ schema: Schema) -> String {
        (schema["Product"]?.properties ?? []).map(\.description).joined(separator: ", ")
    }
}
