import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class MapDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "friends") var owners: LinkingObjects<MapOwner>
}

final class MapOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var friends: Map<String, MapDog?>
}

let mapOfObjectsTypes: [Object.Type] = [MapOwner.self, MapDog.self]

@Suite struct MapOfObjectsTests {
    @Test func theSchemaSaysAMapOfOptionalLinks() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        let friends = try #require(realm.schema["MapOwner"]?["friends"])
        #expect(friends.isMap && friends.isList && friends.isOptional && friends.type == .object)
        #expect(friends.objectType == "MapDog" && friends.description == "friends: [String: MapDog?]")
        #expect(Property.map("friends", of: "MapDog") == friends)
        let dog = ObjectSchema(name: "D", properties: [Property(name: "x", type: .int)])
        let required = ObjectSchema(
            name: "H", properties: [Property(name: "m", type: .object, objectType: "D", isMap: true)])
        #expect(throws: LiveObjectsError.self) { try Schema([dog, required]).validate() }
        try Schema([dog, ObjectSchema(name: "H", properties: [.map("m", of: "D")])]).validate()
    }

    @Test func setGetRemoveAndUnmanagedMembersAreAdded() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        try await realm.write { r in
            let owner = MapOwner()
            owner.id = 1
            let rex = MapDog()
            rex.id = 1
            rex.name = "Rex"
            owner.friends["b"] = rex
            owner.friends["a"] = .some(nil)
            try r.add(owner)
            #expect(owner.friends.isManaged && rex.isManaged, "the unmanaged member is added with its owner")
            #expect(owner.friends.keys == ["a", "b"] && owner.friends.count == 2)
            let max = MapDog()
            max.id = 2
            max.name = "Max"
            owner.friends["c"] = max
            #expect(max.isManaged)
            owner.friends["d"] = r.object(ofType: MapDog.self, forPrimaryKey: 1)
        }
        try await realm.read { r in
            let foundOwner = r.object(ofType: MapOwner.self, forPrimaryKey: 1)
            let owner = try #require(foundOwner)
            #expect(owner.friends.keys == ["a", "b", "c", "d"])
            #expect(owner.friends["a"] == .some(nil), "a key with no object")
            #expect(owner.friends["b"]??.name == "Rex" && owner.friends["d"]??.name == "Rex")
            #expect(owner.friends["z"] == nil)
            #expect(owner.friends.values.map { $0?.name } == [nil, "Rex", "Max", "Rex"])
            let foundRex = r.object(ofType: MapDog.self, forPrimaryKey: 1)
            let rex = try #require(foundRex)
            #expect(rex.owners.map(\.id) == [1, 1], "one backlink per entry")
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
        try await realm.write { r in
            let foundOwner = r.object(ofType: MapOwner.self, forPrimaryKey: 1)
            let owner = try #require(foundOwner)
            owner.friends.removeObject(for: "b")
            owner.friends["d"] = nil
            owner.friends.merge(["e": r.object(ofType: MapDog.self, forPrimaryKey: 2)])
        }
        try await realm.read { r in
            let foundOwner = r.object(ofType: MapOwner.self, forPrimaryKey: 1)
            let owner = try #require(foundOwner)
            #expect(owner.friends.keys == ["a", "c", "e"])
            #expect(r.object(ofType: MapDog.self, forPrimaryKey: 1)!.owners.isEmpty)
            #expect(r.object(ofType: MapDog.self, forPrimaryKey: 2)!.owners.count == 2)
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
        try await realm.write { r in r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.friends.removeAll() }
        try await realm.read { r in
            #expect(r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.friends.isEmpty)
            #expect(r.object(ofType: MapDog.self, forPrimaryKey: 2)!.owners.isEmpty)
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func deletingATargetKeepsItsKeyWithNil() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        try await realm.write { r in
            _ = try r.create(MapDog.self, value: ["id": 1, "name": "Rex"])
            _ = try r.create(MapDog.self, value: ["id": 2, "name": "Max"])
            _ = try r.create(MapOwner.self, value: ["id": 1, "friends": ["a": 1, "b": 2, "c": 1]])
        }
        let changes = try await realm.read { r in r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.friends.changes() }
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next() == .initial(keys: ["a", "b", "c"]))
        try await realm.write { r in try r.delete(r.object(ofType: MapDog.self, forPrimaryKey: 1)!) }
        #expect(await iterator.next() == .changed(MapChange(modifications: ["a", "c"])))
        try await realm.read { r in
            let foundOwner = r.object(ofType: MapOwner.self, forPrimaryKey: 1)
            let owner = try #require(foundOwner)
            #expect(owner.friends.keys == ["a", "b", "c"])
            #expect(owner.friends["a"] == .some(nil) && owner.friends["c"] == .some(nil))
            #expect(owner.friends["b"]??.name == "Max")
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func deleteRulesApplyToAMapsObjects() async throws {
        func schema(_ rule: DeleteRule) -> Schema {
            Schema([
                ObjectSchema(
                    name: "Kennel",
                    properties: [
                        Property(name: "id", type: .int, isPrimaryKey: true), .map("dogs", of: "Pup", deleteRule: rule),
                    ]),
                ObjectSchema(name: "Pup", properties: [Property(name: "id", type: .int, isPrimaryKey: true)]),
            ])
        }
        let cascade = try await Realm.open(
            Realm.Configuration(identifier: "cascade-\(UUID())", schema: schema(.cascade)))
        try await cascade.write { r in
            _ = try r.dynamicCreate("Pup", value: ["id": 1])
            _ = try r.dynamicCreate(
                "Kennel", value: ["id": 1, "dogs": .list([.list(["a", 1]), .list(["b", .null])])])
            _ = try r.dynamicCreate("Pup", value: ["id": 2])
        }
        try await cascade.write { r in
            // The whole map given again, naming its objects by primary key.
            try #require(try r.dynamicObject(ofType: "Kennel", forPrimaryKey: 1))["dogs"] = .list([
                .list(["a", 1]), .list(["b", .null]), .list(["c", 2]),
            ])
        }
        await #expect(throws: LiveObjectsError.self) {
            try await cascade.write { r in
                _ = try r.dynamicCreate("Kennel", value: ["id": 2, "dogs": .list([.list(["a", 9])])])
            }
        }
        try await cascade.write { r in
            try r.delete(try #require(try r.dynamicObject(ofType: "Kennel", forPrimaryKey: 1)))
        }
        try await cascade.read { r in
            let pups = try r.dynamicObjects("Pup")
            #expect(pups.isEmpty, "cascade deletes the map's objects")
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
        let deny = try await Realm.open(Realm.Configuration(identifier: "deny-\(UUID())", schema: schema(.deny)))
        try await deny.write { r in
            _ = try r.dynamicCreate("Pup", value: ["id": 1])
            _ = try r.dynamicCreate("Kennel", value: ["id": 1, "dogs": .list([.list(["a", 1])])])
        }
        let error = await #expect(throws: LiveObjectsError.self) {
            try await deny.write { r in try r.delete(try #require(try r.dynamicObject(ofType: "Pup", forPrimaryKey: 1)))
            }
        }
        #expect(error?.code == .deleteDenied)
        let left = try await deny.read { r in try r.dynamicObjects("Pup").count }
        #expect(left == 1)
    }

    @Test func aCancelledWriteRestoresEntriesAndBacklinks() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        try await realm.write { r in
            _ = try r.create(MapDog.self, value: ["id": 1, "name": "Rex"])
            _ = try r.create(MapOwner.self, value: ["id": 1, "friends": ["a": 1, "b": nil]])
        }
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await realm.write { r in
                let owner = r.object(ofType: MapOwner.self, forPrimaryKey: 1)!
                owner.friends["c"] = r.object(ofType: MapDog.self, forPrimaryKey: 1)
                owner.friends["b"] = try r.create(MapDog.self, value: ["id": 2])
                try r.delete(r.object(ofType: MapDog.self, forPrimaryKey: 1)!)
                owner.friends.removeObject(for: "a")
                throw Stop()
            }
        }
        try await realm.read { r in
            let foundOwner = r.object(ofType: MapOwner.self, forPrimaryKey: 1)
            let owner = try #require(foundOwner)
            #expect(owner.friends.keys == ["a", "b"] && owner.friends["a"]??.name == "Rex")
            #expect(owner.friends["b"] == .some(nil))
            #expect(r.objects(MapDog.self).count == 1)
            #expect(r.object(ofType: MapDog.self, forPrimaryKey: 1)!.owners.map(\.id) == [1])
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func aDeletedObjectIsRefusedAndChangesNothing() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        try await realm.write { r in
            _ = try r.create(MapOwner.self, value: ["id": 1])
            _ = try r.create(MapDog.self, value: ["id": 1])
        }
        do {
            try await realm.write { r in
                let dog = r.object(ofType: MapDog.self, forPrimaryKey: 1)!
                try r.delete(dog)
                r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.friends["x"] = dog
            }
            Issue.record("a deleted object was accepted")
        } catch let error as LiveObjectsError {
            #expect(error.code == .objectInvalidated)
        }
        try await realm.read { r in
            #expect(r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.friends.isEmpty)
            #expect(r.objects(MapDog.self).count == 1)
        }
    }

    @Test func aFrozenCopyKeepsTheEntries() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        try await realm.write { r in
            _ = try r.create(MapOwner.self, value: ["id": 1, "friends": ["a": ["id": 1, "name": "Rex"], "b": nil]])
        }
        let frozen = await realm.freeze()
        try await realm.write { r in
            r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.friends["c"] = try r.create(
                MapDog.self, value: ["id": 2])
            try r.delete(r.object(ofType: MapDog.self, forPrimaryKey: 1)!)
        }
        let owner = try #require(frozen.object(ofType: MapOwner.self, forPrimaryKey: 1)).detached()
        #expect(!owner.friends.isManaged && owner.friends.keys == ["a", "b"] && owner.friends["a"]??.name == "Rex")
        #expect(owner.friends["b"] == .some(nil))
    }
}

/// Queries over a map of objects against a plain-Swift evaluation of the same data.
@Suite struct MapOfObjectsQueryTests {
    /// A seeded data set: dogs with ages and names, owners whose maps name dogs (or nil).
    static func data(seed: UInt64) -> (dogs: [(name: String, age: Int)], maps: [[String: Int?]]) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let names = ["Rex", "Max", "Bo"]
        let dogs = (0..<8).map { _ in (name: rng.element(of: names), age: rng.int(in: 0...6)) }
        let maps: [[String: Int?]] = (0..<40).map { _ in
            var map: [String: Int?] = [:]
            for _ in 0..<rng.int(in: 0...3) {
                map[rng.element(of: ["a", "b", "c"])] = rng.int(in: 0...4) == 0 ? .some(nil) : rng.int(in: 0...7)
            }
            return map
        }
        return (dogs, maps)
    }

    @Test func stringAndTypedQueriesMatchAPlainEvaluation() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_MAP_QUERY_SEED") ?? 0x3a9_0b1
        let (dogs, maps) = Self.data(seed: seed)
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        try await realm.write { r in
            for (id, dog) in dogs.enumerated() {
                _ = try r.create(MapDog.self, value: ["id": id, "name": dog.name, "age": dog.age])
            }
            for (id, map) in maps.enumerated() {
                let entries: [String: Any?] = map.mapValues { $0.map { $0 as Any } }
                _ = try r.create(MapOwner.self, value: ["id": id, "friends": entries])
            }
        }
        @Sendable func dog(_ map: [String: Int?], _ key: String) -> (name: String, age: Int)? {
            map[key].flatMap { $0 }.map { dogs[$0] }
        }
        @Sendable func linked(_ map: [String: Int?]) -> [(name: String, age: Int)] {
            map.values.compactMap { $0.map { dogs[$0] } }
        }
        @Sendable func expected(_ keep: ([String: Int?]) -> Bool) -> [Int] { maps.indices.filter { keep(maps[$0]) } }
        try await realm.read { r in
            let owners = r.objects(MapOwner.self)
            let cases: [(String, ([String: Int?]) -> Bool)] = [
                ("friends['a'].name == 'Rex'", { dog($0, "a")?.name == "Rex" }),
                ("friends['b'].age > 3", { (dog($0, "b")?.age ?? -1) > 3 }),
                ("friends['a'] == nil", { dog($0, "a") == nil }),
                ("ANY friends.@values.age > 3", { linked($0).contains { $0.age > 3 } }),
                ("ANY friends.name == 'Max'", { linked($0).contains { $0.name == "Max" } }),
                ("ALL friends.age < 5", { linked($0).allSatisfy { $0.age < 5 } }),
                ("friends.@count == 2", { $0.count == 2 }),
                ("ANY friends.@keys == 'c'", { $0["c"] != nil }),
                ("SUBQUERY(friends, $d, $d.age > 3).@count > 0", { linked($0).contains { $0.age > 3 } }),
                (
                    "SUBQUERY(friends, $d, $d.name == 'Bo').@count == 2",
                    { linked($0).filter { $0.name == "Bo" }.count == 2 }
                ),
                ("friends.@sum.age > 6", { linked($0).map(\.age).reduce(0, +) > 6 }),
            ]
            for (predicate, keep) in cases {
                let found = try owners.filter(predicate).map(\.id)
                #expect(found == expected(keep), "\(predicate), seed \(seed) (LIVEOBJECTS_MAP_QUERY_SEED)")
            }
            #expect(
                owners.where { $0.friends["a"].name == "Rex" }.map(\.id) == expected { dog($0, "a")?.name == "Rex" })
            #expect(owners.where { $0.friends.age > 3 }.map(\.id) == expected { linked($0).contains { $0.age > 3 } })
            #expect(owners.where { $0.friends.count == 2 }.map(\.id) == expected { $0.count == 2 })
            #expect(owners.where { $0.friends.keys.contains("c") }.map(\.id) == expected { $0["c"] != nil })
            #expect(
                owners.where { $0.friends.where { $0.age > 3 }.count > 0 }.map(\.id)
                    == expected { linked($0).contains { $0.age > 3 } })
        }
    }
}

/// What a write to a map of objects tells subscribers: the owner's change names the keys, a
/// key-path filter through the map follows the objects, and the targets' `LinkingObjects` change.
@Suite struct MapOfObjectsNotificationTests {
    static func seeded() async throws -> Realm {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        try await realm.write { r in
            _ = try r.create(MapDog.self, value: ["id": 1, "name": "Rex"])
            _ = try r.create(MapDog.self, value: ["id": 2, "name": "Max"])
            _ = try r.create(MapDog.self, value: ["id": 3, "name": "Bo"])
            _ = try r.create(MapOwner.self, value: ["id": 1, "friends": ["a": 1, "b": nil]])
            _ = try r.create(MapOwner.self, value: ["id": 2, "friends": ["z": 3]])
        }
        return realm
    }

    @Test func anOwnersChangeNamesTheKeys() async throws {
        let realm = try await Self.seeded()
        let changes = try await realm.read { r in r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.changes() }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        try await realm.write { r in
            let owner = r.object(ofType: MapOwner.self, forPrimaryKey: 1)!
            owner.friends["a"] = r.object(ofType: MapDog.self, forPrimaryKey: 2)
            owner.friends["b"] = nil
            owner.friends["c"] = .some(nil)
        }
        guard case .changed(_, let properties) = try #require(await iterator.next()) else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.name) == ["friends"])
        let change = try #require(MapChange(properties[0]))
        #expect(change == MapChange(insertions: ["c"], modifications: ["a"], deletions: ["b"]))
        // A change of a target's own property is not a change of the map.
        try await realm.write { r in r.object(ofType: MapDog.self, forPrimaryKey: 2)!.name = "Maxi" }
        try await realm.write { r in r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.name = "x" }
        guard case .changed(_, let next) = try #require(await iterator.next()) else {
            Issue.record("expected a change")
            return
        }
        #expect(next.map(\.name) == ["name"])
    }

    @Test func aKeyPathThroughTheMapFollowsTheObjects() async throws {
        let realm = try await Self.seeded()
        let changes = try await realm.read { r in
            try r.objects(MapOwner.self).sorted(byKeyPath: "id").changes(keyPaths: ["friends.name"])
        }
        var iterator = changes.makeAsyncIterator()
        #expect(try #require(await iterator.next()).isInitial)
        // The age of a dog is not observed; its name is, through owner 1's map only.
        try await realm.write { r in r.object(ofType: MapDog.self, forPrimaryKey: 1)!.age = 5 }
        try await realm.write { r in r.object(ofType: MapDog.self, forPrimaryKey: 2)!.name = "Unmapped" }
        try await realm.write { r in r.object(ofType: MapDog.self, forPrimaryKey: 1)!.name = "Rexy" }
        #expect(try #require(await iterator.next()).modifications == [0])
        try await realm.write { r in r.object(ofType: MapDog.self, forPrimaryKey: 3)!.name = "Boo" }
        #expect(try #require(await iterator.next()).modifications == [1])
    }

    @Test func theTargetsLinkingObjectsChange() async throws {
        let realm = try await Self.seeded()
        let changes = try await realm.read { r in r.object(ofType: MapDog.self, forPrimaryKey: 2)!.changes() }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        try await realm.write { r in
            r.object(ofType: MapOwner.self, forPrimaryKey: 2)!.friends["y"] = r.object(
                ofType: MapDog.self, forPrimaryKey: 2)
        }
        guard case .changed(_, let properties) = try #require(await iterator.next()) else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.name) == ["owners"])
        try await realm.read { r in
            #expect(r.object(ofType: MapDog.self, forPrimaryKey: 2)!.owners.map(\.id) == [2])
        }
    }
}

/// A map of objects from dictionaries, JSON and `Codable`.
@Suite struct MapOfObjectsInputTests {
    @Test func createFromADictionaryOfObjectsKeysAndNil() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        try await realm.write { r in
            let owner = try r.create(
                MapOwner.self,
                value: ["id": 1, "friends": ["a": ["id": 5, "name": "Rex"], "b": nil, "c": 5] as [String: Any?]])
            #expect(owner.friends.keys == ["a", "b", "c"] && owner.friends["b"] == .some(nil))
            #expect(owner.friends["a"]??.name == "Rex" && owner.friends["c"]??.id == 5)
            #expect(r.objects(MapDog.self).count == 1, "the primary key names the dog the first entry made")
            let unmanaged = try MapOwner(value: ["id": 2, "friends": ["x": MapDog(value: ["id": 6])]])
            #expect(!unmanaged.isManaged && unmanaged.friends["x"]??.id == 6)
            try r.add(unmanaged)
            #expect(r.object(ofType: MapDog.self, forPrimaryKey: 6)?.owners.map(\.id) == [2])
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { r in
                _ = try r.create(MapOwner.self, value: ["id": 3, "friends": ["a": 99]])
            }
        }
    }

    @Test func addingWithUpdateReplacesTheMap() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        try await realm.write { r in
            _ = try r.create(MapOwner.self, value: ["id": 1, "friends": ["a": ["id": 1], "b": ["id": 2]]])
            let empty = MapOwner()
            empty.id = 1
            try r.add(empty, update: .modified)
            #expect(r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.friends.isEmpty)
            let other = MapOwner()
            other.id = 1
            other.friends["c"] = r.object(ofType: MapDog.self, forPrimaryKey: 2)
            try r.add(other, update: .modified)
            #expect(r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.friends.keys == ["c"])
            #expect(r.object(ofType: MapDog.self, forPrimaryKey: 1)!.owners.isEmpty)
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func jsonInputAndCodableRoundTrip() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes)
        let json = #"{"id":1,"name":"","friends":{"a":{"id":5,"name":"Rex","age":3},"b":null}}"#
        try await realm.write { r in
            let owner = try r.create(MapOwner.self, json: Data(json.utf8))
            #expect(owner.friends.keys == ["a", "b"] && owner.friends["a"]??.age == 3)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let managed = try await realm.read { r in
            String(decoding: try encoder.encode(r.object(ofType: MapOwner.self, forPrimaryKey: 1)!), as: UTF8.self)
        }
        #expect(managed == #"{"friends":{"a":{"age":3,"id":5,"name":"Rex"},"b":null},"id":1,"name":""}"#)
        let decoded = try JSONDecoder().decode(MapOwner.self, from: Data(managed.utf8))
        #expect(!decoded.isManaged && decoded.friends["a"]??.name == "Rex" && decoded.friends["b"] == .some(nil))
        #expect(String(decoding: try encoder.encode(decoded), as: UTF8.self) == managed)
    }
}
