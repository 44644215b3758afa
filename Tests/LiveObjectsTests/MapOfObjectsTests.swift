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
        let embedded = ObjectSchema(name: "E", properties: [Property(name: "x", type: .int)], isEmbedded: true)
        let toEmbedded = ObjectSchema(name: "H", properties: [.map("m", of: "E")])
        #expect(throws: LiveObjectsError.self) { try Schema([embedded, toEmbedded]).validate() }
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
