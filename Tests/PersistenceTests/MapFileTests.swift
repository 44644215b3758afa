import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// `Map` properties in snapshots and journals: the schema says `"map": true`, a map is stored
/// as an array of `[key, value]` pairs in key order, a file with a key given twice, keys out of
/// order, a bad key or a malformed pair is refused, and a property added as a map starts empty.
@Suite struct MapFileTests {
    static func schema(withMap: Bool = true) -> Schema {
        var properties = [Property(name: "id", type: .int, isPrimaryKey: true)]
        if withMap {
            properties.append(Property(name: "settings", type: .string, isMap: true))
            properties.append(Property(name: "scores", type: .int, isOptional: true, isMap: true))
        }
        return Schema([ObjectSchema(name: "Box", properties: properties)])
    }

    static func pairs(_ entries: KeyValuePairs<String, PropertyValue>) -> PropertyValue {
        .list(entries.map { .list([.string($0.key), $0.value]) })
    }

    static func values(_ realm: Realm) async throws -> [[PropertyValue]] {
        try await realm.read { realm in
            try realm.dynamicObjects("Box").map { [$0["id"], $0["settings"], $0["scores"]] }
                .sorted { $0[0].description < $1[0].description }
        }
    }

    @Test func mapsSurviveSnapshotAndJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("boxes.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: Self.schema(), options: options)
        try await withRealm(configuration) { realm in
            try await realm.write { r in
                _ = try r.dynamicCreate(
                    "Box",
                    value: [
                        "id": 1, "settings": Self.pairs(["theme": "dark", "font": "serif"]),
                        "scores": Self.pairs(["a": .null, "b": 2]),
                    ])
            }
            try await realm.save()
            // In the journal only: a new box, and the first box's map given again.
            try await realm.write { r in
                _ = try r.dynamicCreate("Box", value: ["id": 2, "settings": Self.pairs(["x": "1"])])
                let first = try #require(try r.dynamicObject(ofType: "Box", forPrimaryKey: 1))
                first["settings"] = Self.pairs(["theme": "light", "size": "12"])
            }
            let journal = String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal")), as: UTF8.self)
            #expect(journal.contains(#"[["size","12"],["theme","light"]]"#), "\(journal)")
        }
        let snapshot = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(snapshot.contains(#""name": "settings", "type": "string", "map": true"#), "\(snapshot)")
        #expect(snapshot.contains(#""settings": [["size", "12"], ["theme", "light"]]"#), "\(snapshot)")
        let expected: [[PropertyValue]] = [
            [1, Self.pairs(["size": "12", "theme": "light"]), Self.pairs(["a": .null, "b": 2])],
            [2, Self.pairs(["x": "1"]), .list([])],
        ]
        for _ in 0..<2 {
            #expect(try await withRealm(configuration) { try await Self.values($0) } == expected)
        }
        let reopened = try await withRealm(configuration) { realm in realm.schema["Box"]?["settings"] }
        #expect(reopened?.isMap == true && reopened?.isList == true && reopened?.isSet == false)
    }

    static func snapshot(_ objects: String) -> String {
        let schema =
            #"[{"name": "Box", "properties": [{"name": "id", "type": "int", "primaryKey": true}, {"name": "settings", "type": "string", "map": true}, {"name": "scores", "type": "int", "optional": true, "map": true}]}]"#
        return BadFileTests.file(version: 1, schema: schema, objects: objects)
    }

    @Test func badMapsAreRefused() throws {
        let good = #"{"Box": [{"$id": 0, "id": 1, "settings": [["a", "1"], ["b", "2"]], "scores": [["x", null]]}]}"#
        let loaded = try FileStorage.decode(snapshot: Array(Self.snapshot(good).utf8), journal: nil)
        let table = try loaded.store.table(named: "Box")
        #expect(table.value(0, 1) == Self.pairs(["a": "1", "b": "2"]))
        let settings = #""settings": [["a", "1"], ["b", "2"]]"#
        for bad in [
            #""settings": [["a", "1"], ["a", "2"]]"#, #""settings": [["b", "1"], ["a", "2"]]"#,
            #""settings": [["a.b", "1"]]"#, #""settings": [["$a", "1"]]"#, #""settings": [["", "1"]]"#,
            #""settings": [["a"]]"#, #""settings": [["a", "1", "2"]]"#, #""settings": [["a", 1]]"#,
            #""settings": ["a", "1"]"#, #""settings": [[1, "1"]]"#, #""settings": [["a", null]]"#,
        ] {
            let text = Self.snapshot(good.replacingOccurrences(of: settings, with: bad))
            #expect("\(bad)") {
                _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
            } throws: { error in
                // A value of the wrong JSON kind is the JSON reader's error, which names no property.
                let error = error as? LiveObjectsError
                return error?.code == .corruptFile && (error?.property == "settings" || error?.property == nil)
            }
        }
        // In a journal line too.
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":3,"schemaVersion":0,"base":0}"#)
        let twice = sealedLine(
            #"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"settings":[["c","1"],["c","2"]]}]}}}"#)
        let once = sealedLine(
            #"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"settings":[["c","1"],["d","2"]]}]}}}"#)
        let snapshot = Array(Self.snapshot(good).utf8)
        #expect(throws: LiveObjectsError.self) {
            _ = try FileStorage.decode(snapshot: snapshot, journal: Array((header + twice).utf8))
        }
        let replayed = try FileStorage.decode(snapshot: snapshot, journal: Array((header + once).utf8))
        #expect(try replayed.store.table(named: "Box").value(0, 1) == Self.pairs(["c": "1", "d": "2"]))
    }

    /// Every single-byte change of a snapshot holding maps is refused, or opens with exactly the
    /// same content; a snapshot cut short is refused.
    @Test func everySingleByteChangeIsCaught() throws {
        let objects =
            #"{"Box": [{"$id": 0, "id": 1, "settings": [["a", "1"], ["b", "2"]], "scores": [["x", null], ["y", 3]]}, {"$id": 1, "id": 2, "settings": [], "scores": []}]}"#
        try expectEverySingleByteChangeCaught(Self.snapshot(objects), truncationStride: 5)
    }

    @Test func aMapAddedByAMigrationStartsEmpty() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("migrated.json")
        try await withRealm(Realm.Configuration(file: url, schema: Self.schema(withMap: false))) { realm in
            try await realm.write { r in _ = try r.dynamicCreate("Box", value: ["id": 1]) }
        }
        let configuration = Realm.Configuration(
            file: url, schema: Self.schema(), schemaVersion: 1, options: .init(migration: { _ in }))
        let values = try await withRealm(configuration) { realm in
            try await realm.write { r in
                let box = try #require(try r.dynamicObject(ofType: "Box", forPrimaryKey: 1))
                #expect(box["settings"] == .list([]))
                box["settings"] = Self.pairs(["k": "v"])
            }
            return try await Self.values(realm)
        }
        #expect(values == [[1, Self.pairs(["k": "v"]), .list([])]])
        #expect(try await withRealm(configuration) { try await Self.values($0) } == values)
    }
}
