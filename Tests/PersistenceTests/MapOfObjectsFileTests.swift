import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// Maps of objects in snapshots and journals: a map is stored as `[key, id or null]` pairs in
/// key order; a file naming a missing object, a key twice, keys out of order or a malformed
/// pair is refused; every single-byte change is caught.
@Suite struct MapOfObjectsFileTests {
    static let schema = Schema([
        ObjectSchema(
            name: "Box",
            properties: [Property(name: "id", type: .int, isPrimaryKey: true), .map("friends", of: "Dog")]),
        ObjectSchema(
            name: "Dog",
            properties: [Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "name", type: .string)]),
    ])

    static func pairs(_ entries: KeyValuePairs<String, PropertyValue>) -> PropertyValue {
        .list(entries.map { .list([.string($0.key), $0.value]) })
    }

    /// Each box's id and its map with every object named by its dog's id.
    static func boxes(_ realm: Realm) async throws -> [[PropertyValue]] {
        try await realm.read { realm in
            var dogIDs: [ObjectKey: PropertyValue] = [:]
            for dog in try realm.dynamicObjects("Dog") { dogIDs[dog.key] = dog["id"] }
            return try realm.dynamicObjects("Box").map { box -> [PropertyValue] in
                guard case .list(let entries) = box["friends"] else { return [box["id"], .null] }
                let named: [PropertyValue] = entries.map { entry in
                    guard case .list(let pair) = entry, let key = pair[1].objectKey else { return entry }
                    return .list([pair[0], dogIDs[key] ?? "missing"])
                }
                return [box["id"], .list(named)]
            }
            .sorted { $0[0].description < $1[0].description }
        }
    }

    @Test func mapsOfObjectsSurviveSnapshotAndJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("boxes.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: Self.schema, options: options)
        let before = try await withRealm(configuration) { realm in
            try await realm.write { r in
                _ = try r.dynamicCreate("Dog", value: ["id": 1, "name": "Rex"])
                _ = try r.dynamicCreate("Dog", value: ["id": 2, "name": "Max"])
                _ = try r.dynamicCreate("Box", value: ["id": 1, "friends": Self.pairs(["b": .null, "a": 1])])
            }
            try await realm.save()
            // In the journal only: a new box, an entry added, and a target deleted.
            try await realm.write { r in
                _ = try r.dynamicCreate("Box", value: ["id": 2, "friends": Self.pairs(["x": 2])])
                let first = try #require(try r.dynamicObject(ofType: "Box", forPrimaryKey: 1))
                first["friends"] = Self.pairs(["a": 1, "b": .null, "c": 2])
                try r.delete(try #require(try r.dynamicObject(ofType: "Dog", forPrimaryKey: 1)))
            }
            let journal = String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal")), as: UTF8.self)
            #expect(journal.contains(#""friends":[["a",null],["b",null],["c",1]]"#), "\(journal)")
            #expect(journal.contains(#""friends":[["x",1]]"#), "\(journal)")
            return try await Self.boxes(realm)
        }
        #expect(before == [[1, Self.pairs(["a": .null, "b": .null, "c": 2])], [2, Self.pairs(["x": 2])]])
        let snapshot = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(
            snapshot.contains(
                #""name": "friends", "type": "object", "optional": true, "map": true, "objectType": "Dog""#),
            "\(snapshot)")
        #expect(snapshot.contains(#""friends": [["a", null], ["b", null], ["c", 1]]"#), "\(snapshot)")
        for _ in 0..<2 {
            // The first open replays the journal; the second reads the snapshot the first folded.
            #expect(try await withRealm(configuration) { try await Self.boxes($0) } == before)
        }
        try await withRealm(configuration) { realm in
            try await realm.read { r in #expect(StoreInvariants.violations(in: r.store).isEmpty) }
        }
    }

    static func snapshot(_ objects: String) -> String {
        let schema =
            #"[{"name": "Box", "properties": [{"name": "id", "type": "int", "primaryKey": true}, {"name": "friends", "type": "object", "optional": true, "map": true, "objectType": "Dog"}]}, {"name": "Dog", "properties": [{"name": "id", "type": "int", "primaryKey": true}]}]"#
        return BadFileTests.file(version: 1, schema: schema, objects: objects)
    }

    static let good =
        #"{"Box": [{"$id": 0, "id": 1, "friends": [["a", 0], ["b", null], ["c", 1]]}], "Dog": [{"$id": 0, "id": 7}, {"$id": 1, "id": 8}]}"#

    @Test func badMapsOfObjectsAreRefused() throws {
        let loaded = try FileStorage.decode(snapshot: Array(Self.snapshot(Self.good).utf8), journal: nil)
        let box = try loaded.store.table(named: "Box")
        let dog = try loaded.store.table(named: "Dog")
        #expect(box.value(0, 1) == Self.pairs(["a": .object(dog.key(0)), "b": .null, "c": .object(dog.key(1))]))
        #expect(StoreInvariants.violations(in: loaded.store).isEmpty)
        let friends = #""friends": [["a", 0], ["b", null], ["c", 1]]"#
        for bad in [
            #""friends": [["a", 5]]"#, #""friends": [["a", 0], ["a", 1]]"#, #""friends": [["b", 0], ["a", 1]]"#,
            #""friends": [["a.b", 0]]"#, #""friends": [["a"]]"#, #""friends": [["a", 0, 1]]"#,
            #""friends": [["a", "x"]]"#, #""friends": [0, 1]"#, #""friends": [[1, 0]]"#, #""friends": null"#,
        ] {
            let text = Self.snapshot(Self.good.replacingOccurrences(of: friends, with: bad))
            #expect("\(bad)") {
                _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
            } throws: { error in
                (error as? LiveObjectsError)?.code == .corruptFile
            }
        }
        // In a journal line too: a missing target or a key twice is refused, a good line replays.
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":3,"schemaVersion":0,"base":0}"#)
        let snapshot = Array(Self.snapshot(Self.good).utf8)
        for bad in [#"[["c",9]]"#, #"[["c",0],["c",1]]"#, #"[["d",0],["c",1]]"#] {
            let line = sealedLine(#"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"friends":\#(bad)}]}}}"#)
            #expect(throws: LiveObjectsError.self, "\(bad)") {
                _ = try FileStorage.decode(snapshot: snapshot, journal: Array((header + line).utf8))
            }
        }
        let once = sealedLine(#"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"friends":[["c",0],["d",null]]}]}}}"#)
        let replayed = try FileStorage.decode(snapshot: snapshot, journal: Array((header + once).utf8))
        let replayedDog = try replayed.store.table(named: "Dog")
        #expect(
            try replayed.store.table(named: "Box").value(0, 1)
                == Self.pairs(["c": .object(replayedDog.key(0)), "d": .null]))
        #expect(StoreInvariants.violations(in: replayed.store).isEmpty)
    }

    /// Every single-byte change of a snapshot holding a map of objects is refused, or opens with
    /// exactly the same content; a snapshot cut short is refused.
    @Test func everySingleByteChangeIsCaught() throws {
        try expectEverySingleByteChangeCaught(Self.snapshot(Self.good), truncationStride: 5)
    }

    static func schema(mapName: String?, label: Bool = false) -> Schema {
        var box = [Property(name: "id", type: .int, isPrimaryKey: true)]
        if let mapName { box.append(.map(mapName, of: "Dog")) }
        if label { box.append(Property(name: "label", type: .string)) }
        return Schema([
            ObjectSchema(name: "Box", properties: box),
            ObjectSchema(
                name: "Dog",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "name", type: .string),
                ]),
        ])
    }

    /// A migration renames the map (deleting a target on the way: its key stays, with null),
    /// another keeps it as it is, and a third removes it.
    @Test func aMigrationRenamesAndRemovesAMapOfObjects() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("migrated.json")
        try await withRealm(Realm.Configuration(file: url, schema: Self.schema(mapName: "friends"))) { realm in
            try await realm.write { r in
                _ = try r.dynamicCreate("Dog", value: ["id": 1, "name": "Rex"])
                _ = try r.dynamicCreate("Dog", value: ["id": 2, "name": "Max"])
                _ = try r.dynamicCreate("Box", value: ["id": 1, "friends": Self.pairs(["a": 1, "b": 2, "c": .null])])
            }
        }
        let renamed = Realm.Configuration(
            file: url, schema: Self.schema(mapName: "pals"), schemaVersion: 1,
            options: .init(migration: { migration in
                try migration.renameProperty(onType: "Box", from: "friends", to: "pals")
                try migration.enumerateObjects(ofType: "Dog") { old, new in
                    if old["id"] == 2, let new { try migration.delete(new) }
                }
            }))
        @Sendable func boxes(_ realm: Realm) async throws -> [[PropertyValue]] {
            try await realm.read { r in
                #expect(StoreInvariants.violations(in: r.store).isEmpty)
                return try r.dynamicObjects("Box").map { box in
                    guard case .list(let pairs) = box["pals"] else { return [PropertyValue]() }
                    return pairs.map { pair -> PropertyValue in
                        guard case .list(let entry) = pair, let key = entry[1].objectKey,
                            let dog = try? r.dynamicObject(ofType: "Dog", key: key)
                        else { return pair }
                        return .list([entry[0], dog["name"]])
                    }
                }
            }
        }
        // Each entry with its dog's name: dog 2 was deleted, so "b" keeps null.
        let expected: [[PropertyValue]] = [[.list(["a", "Rex"]), .list(["b", .null]), .list(["c", .null])]]
        #expect(try await withRealm(renamed) { try await boxes($0) } == expected)
        let kept = Realm.Configuration(
            file: url, schema: Self.schema(mapName: "pals", label: true), schemaVersion: 2,
            options: .init(migration: { _ in }))
        #expect(try await withRealm(kept) { try await boxes($0) } == expected)
        let removed = Realm.Configuration(
            file: url, schema: Self.schema(mapName: nil), schemaVersion: 3, options: .init(migration: { _ in }))
        let dogs = try await withRealm(removed) { realm in
            try await realm.read { r in
                #expect(StoreInvariants.violations(in: r.store).isEmpty)
                return try r.dynamicObjects("Dog").map { $0["name"] }
            }
        }
        #expect(dogs == ["Rex"])
    }
}
