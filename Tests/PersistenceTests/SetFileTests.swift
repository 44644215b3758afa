import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// `MutableSet` properties in snapshots and journals: the schema says `"set": true`, members
/// are stored as a list's elements, a file that holds a member twice is refused, and a `List`
/// migrated to a set keeps each member once.
@Suite struct SetFileTests {
    static func schema(tagsAreSet: Bool = true) -> Schema {
        Schema([
            ObjectSchema(
                name: "Box",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true),
                    Property(name: "tags", type: .string, isList: true, isSet: tagsAreSet),
                    Property(name: "sizes", type: .double, isOptional: true, isSet: true),
                    .set("friends", of: "Box"),
                ])
        ])
    }

    static func values(_ realm: Realm) async throws -> [[PropertyValue]] {
        try await realm.read { realm in
            try realm.dynamicObjects("Box").map { [$0["id"], $0["tags"], $0["sizes"], $0["friends"]] }
                .sorted { $0[0].description < $1[0].description }
        }
    }

    @Test func setsSurviveSnapshotAndJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("boxes.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: Self.schema(), options: options)
        let keys = try await withRealm(configuration) { realm in
            let a = try await realm.write { r in
                try r.dynamicCreate(
                    "Box", value: ["id": 1, "tags": .list(["b", "a", "b"]), "sizes": .list([.null, 2.5, .null])]
                ).key
            }
            try await realm.save()
            // In the journal only: a new box, and the first box's sets given again with duplicates.
            let b = try await realm.write { r in
                let b = try r.dynamicCreate(
                    "Box", value: ["id": 2, "tags": .list(["x"]), "friends": .list([.object(a), .object(a)])])
                let first = try #require(try r.dynamicObject(ofType: "Box", forPrimaryKey: 1))
                first["tags"] = .list(["b", "a", "c", "a"])
                first["friends"] = .list([.object(b.key)])
                return b.key
            }
            let journal = String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal")), as: UTF8.self)
            #expect(journal.contains(#"["b","a","c"]"#), "\(journal)")
            return [a, b]
        }
        let snapshot = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(snapshot.contains(#""name": "tags", "type": "string", "set": true"#), "\(snapshot)")
        let expected: [[PropertyValue]] = [
            [1, .list(["b", "a", "c"]), .list([.null, 2.5]), .list([.object(keys[1])])],
            [2, .list(["x"]), .list([]), .list([.object(keys[0])])],
        ]
        for _ in 0..<2 {
            #expect(try await withRealm(configuration) { try await Self.values($0) } == expected)
        }
        let reopened = try await withRealm(configuration) { realm in realm.schema["Box"]?["tags"] }
        #expect(reopened?.isSet == true && reopened?.isList == true)
    }

    static func snapshot(_ objects: String) -> String {
        let schema =
            #"[{"name": "Box", "properties": [{"name": "id", "type": "int", "primaryKey": true}, {"name": "tags", "type": "string", "set": true}, {"name": "sizes", "type": "double", "optional": true, "set": true}, {"name": "friends", "type": "object", "set": true, "objectType": "Box"}]}]"#
        return BadFileTests.file(version: 1, schema: schema, objects: objects)
    }

    @Test func aMemberGivenTwiceIsRefused() throws {
        let good = #"{"Box": [{"$id": 0, "id": 1, "tags": ["a", "b"], "sizes": [null, 1], "friends": [0]}]}"#
        let loaded = try FileStorage.decode(snapshot: Array(Self.snapshot(good).utf8), journal: nil)
        #expect(try loaded.store.table(named: "Box").liveCount == 1)
        for (bad, twice) in [
            (#""tags": ["a", "b"]"#, #""tags": ["a", "b", "a"]"#),
            (#""sizes": [null, 1]"#, #""sizes": [null, 1, 1.0]"#),
            (#""sizes": [null, 1]"#, #""sizes": [null, null]"#), (#""friends": [0]"#, #""friends": [0, 0]"#),
        ] {
            let text = Self.snapshot(good.replacingOccurrences(of: bad, with: twice))
            #expect("\(twice)") {
                _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
            } throws: { error in
                let error = error as? LiveObjectsError
                return error?.code == .corruptFile && error?.property == String(bad.dropFirst().prefix { $0 != "\"" })
            }
        }
        // In a journal line too.
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":3,"schemaVersion":0,"base":0}"#)
        let twice = sealedLine(#"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"tags":["c","c"]}]}}}"#)
        let once = sealedLine(#"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"tags":["c","d"]}]}}}"#)
        let snapshot = Array(Self.snapshot(good).utf8)
        #expect(throws: LiveObjectsError.self) {
            _ = try FileStorage.decode(snapshot: snapshot, journal: Array((header + twice).utf8))
        }
        let replayed = try FileStorage.decode(snapshot: snapshot, journal: Array((header + once).utf8))
        let table = try replayed.store.table(named: "Box")
        #expect(table.value(0, 1) == .list(["c", "d"]))
    }

    /// Every single-byte change of a snapshot holding sets is refused, or opens with exactly the
    /// same content; a snapshot cut short is refused.
    @Test func everySingleByteChangeIsCaught() throws {
        let objects =
            #"{"Box": [{"$id": 0, "id": 1, "tags": ["a", "b"], "sizes": [null, 1], "friends": [0, 1]}, {"$id": 1, "id": 2, "tags": [], "sizes": [], "friends": []}]}"#
        try expectEverySingleByteChangeCaught(Self.snapshot(objects), truncationStride: 5)
    }

    @Test func aListMigratedToASetKeepsEachMemberOnce() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("migrated.json")
        try await withRealm(Realm.Configuration(file: url, schema: Self.schema(tagsAreSet: false))) { realm in
            try await realm.write { r in
                _ = try r.dynamicCreate("Box", value: ["id": 1, "tags": .list(["b", "a", "b", "c", "a"])])
            }
        }
        let configuration = Realm.Configuration(
            file: url, schema: Self.schema(), schemaVersion: 1, options: .init(migration: { _ in }))
        let tags = try await withRealm(configuration) { realm in
            try await realm.read { r in try r.dynamicObjects("Box").map { $0["tags"] } }
        }
        #expect(tags == [.list(["b", "a", "c"])])
    }
}
