import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class Place: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var street = ""
}

final class Traveller: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var places: Map<String, Place?>
    @Persisted var visited: List<Place>
}

let mapOfEmbeddedTypes: [Object.Type] = [Traveller.self, Place.self]

/// `Map<String, Place?>` of an embedded type: each value is owned by its key, so replacing or
/// removing it (or deleting the owner) deletes the object, and an object owned elsewhere cannot
/// be set.
@Suite struct MapOfEmbeddedTests {
    static func place(_ city: String) -> Place {
        let place = Place()
        place.city = city
        return place
    }

    static func traveller(_ r: isolated Realm, _ id: Int) throws -> Traveller {
        let found = r.object(ofType: Traveller.self, forPrimaryKey: id)
        return try #require(found)
    }

    static func cities(_ r: isolated Realm) -> [String] {
        r.dynamicObjectsOrEmpty("Place").compactMap { object -> String? in
            if case .string(let city) = object["city"] { city } else { nil }
        }
        .sorted()
    }

    @Test func theSchemaAcceptsAMapOfEmbeddedObjects() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfEmbeddedTypes)
        let places = try #require(realm.schema["Traveller"]?["places"])
        #expect(places.isMap && places.isOptional && places.objectType == "Place")
        let embedded = ObjectSchema(name: "E", properties: [Property(name: "x", type: .int)], isEmbedded: true)
        try Schema([embedded, ObjectSchema(name: "H", properties: [.map("m", of: "E")])]).validate()
    }

    @Test func replacingRemovingAndClearingAKeyDeletesItsObject() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfEmbeddedTypes)
        try await realm.write { r in
            let t = Traveller()
            t.id = 1
            t.places["home"] = Self.place("Oslo")
            t.places["work"] = Self.place("Bergen")
            try r.add(t)
            #expect(t.places["home"]??.isManaged == true)
        }
        try await realm.write { r in
            let t = try Self.traveller(r, 1)
            #expect(Self.cities(r) == ["Bergen", "Oslo"])
            t.places["home"] = Self.place("Trondheim")
            #expect(Self.cities(r) == ["Bergen", "Trondheim"], "the replaced object is deleted")
            t.places["work"] = .some(nil)
            #expect(Self.cities(r) == ["Trondheim"], "a key set to nil keeps the key, its object goes")
            #expect(t.places.keys == ["home", "work"])
            t.places["away"] = Self.place("Tromsø")
            t.places.removeObject(for: "home")
            #expect(Self.cities(r) == ["Tromsø"])
            let away = try #require(t.places["away"] ?? nil)
            away.street = "Storgata"
            #expect(r.objects(Traveller.self).where { $0.places["away"].street == "Storgata" }.count == 1)
            t.places.removeAll()
            #expect(Self.cities(r).isEmpty && t.places.isEmpty)
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func deletingTheOwnerDeletesItsObjectsAndAThrownWriteKeepsThem() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfEmbeddedTypes)
        struct Stop: Error {}
        try await realm.write { r in
            _ = try r.create(
                Traveller.self, value: ["id": 1, "places": ["a": ["city": "Oslo"], "b": ["city": "Rome"], "c": nil]])
            _ = try r.create(Traveller.self, value: ["id": 2, "places": ["a": ["city": "Lima"]]])
        }
        await #expect(throws: Stop.self) {
            try await realm.write { r in
                let t = try Self.traveller(r, 1)
                t.places["a"] = Self.place("Paris")
                t.places.removeObject(for: "b")
                try r.delete(try Self.traveller(r, 2))
                throw Stop()
            }
        }
        try await realm.write { r in
            #expect(Self.cities(r) == ["Lima", "Oslo", "Rome"], "the thrown write changed nothing")
            let t = try Self.traveller(r, 1)
            #expect(t.places.keys == ["a", "b", "c"] && t.places["c"] == .some(nil))
            try r.delete(t)
            #expect(Self.cities(r) == ["Lima"])
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func anObjectOwnedElsewhereCannotBeSet() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfEmbeddedTypes)
        try await realm.write { r in
            _ = try r.create(
                Traveller.self, value: ["id": 1, "places": ["a": ["city": "Oslo"]], "visited": [["city": "Rome"]]])
        }
        for move in ["another key", "from a list", "whole map, twice"] {
            await #expect("\(move)") {
                try await realm.write { r in
                    let t = try Self.traveller(r, 1)
                    switch move {
                    case "another key": t.places["b"] = t.places["a"] ?? nil
                    case "from a list": t.places["b"] = t.visited[0]
                    default:
                        let oslo = t.places["a"] ?? nil
                        try r.create(
                            Traveller.self, value: ["id": 1, "places": ["a": oslo as Any, "b": oslo as Any]],
                            update: .modified)
                    }
                }
            } throws: { error in
                (error as? LiveObjectsError)?.code == .embeddedObjectAlreadyOwned
            }
        }
        try await realm.write { r in
            let t = try Self.traveller(r, 1)
            // The same object kept under its own key in a whole-map update is no second parent.
            let oslo = t.places["a"] ?? nil
            try r.create(
                Traveller.self, value: ["id": 1, "places": ["a": oslo as Any, "z": ["city": "Nice"]]], update: .modified
            )
            #expect(Self.cities(r) == ["Nice", "Oslo", "Rome"])
            try r.create(Traveller.self, value: ["id": 1, "places": ["z": nil]], update: .modified)
            #expect(Self.cities(r) == ["Rome"], "a whole-map update deletes the objects it drops")
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func queriesFrozenCopiesAndDetachedCopiesReadThem() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfEmbeddedTypes)
        try await realm.write { r in
            _ = try r.create(
                Traveller.self, value: ["id": 1, "places": ["home": ["city": "Oslo", "street": "Kirkeveien"]]])
            _ = try r.create(Traveller.self, value: ["id": 2, "places": ["home": ["city": "Rome"], "work": nil]])
        }
        let (frozen, detached) = try await realm.read { r in
            #expect(try r.objects(Traveller.self).filter("places['home'].city == 'Oslo'").map(\.id) == [1])
            #expect(try r.objects(Traveller.self).filter("ANY places.@values.city == 'Rome'").map(\.id) == [2])
            #expect(r.objects(Traveller.self).where { $0.places["home"].city == "Rome" }.map(\.id) == [2])
            let t = try Self.traveller(r, 1)
            return (try #require(t.freeze()), t.detached())
        }
        try await realm.write { r in
            r.object(ofType: Traveller.self, forPrimaryKey: 1)?.places["home"] = Self.place("Paris")
        }
        #expect(frozen.places["home"]??.city == "Oslo", "the frozen copy keeps what it saw")
        #expect(detached.places["home"]??.city == "Oslo" && detached.places["home"]??.isManaged == false)
    }

    @Test func aChangeOfAnObjectInTheMapModifiesItsOwner() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfEmbeddedTypes)
        try await realm.write { r in
            _ = try r.create(Traveller.self, value: ["id": 1, "places": ["home": ["city": "Oslo"]]])
            _ = try r.create(Traveller.self, value: ["id": 2])
        }
        let changes = try await realm.read { r in r.objects(Traveller.self).changes() }
        var iterator = changes.makeAsyncIterator()
        #expect(try #require(await iterator.next()).isInitial)
        try await realm.write { r in try Self.traveller(r, 1).places["home"]??.city = "Bergen" }
        #expect(try #require(await iterator.next()).modifications == [0])
        try await realm.write { r in try Self.traveller(r, 2).places["work"] = Self.place("Rome") }
        #expect(try #require(await iterator.next()).modifications == [1])
    }

    @Test func codableRoundTripsTheObjectsInline() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfEmbeddedTypes)
        let json = try await realm.write { r in
            let t = try r.create(Traveller.self, value: ["id": 1, "places": ["home": ["city": "Oslo"], "none": nil]])
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return String(decoding: try encoder.encode(t), as: UTF8.self)
        }
        #expect(json == #"{"id":1,"places":{"home":{"city":"Oslo","street":""},"none":null},"visited":[]}"#)
        let copy = try await openFreshRealm("codableCopy", objectTypes: mapOfEmbeddedTypes)
        try await copy.write { r in
            let decoded = try JSONDecoder().decode(Traveller.self, from: Data(json.utf8))
            #expect(decoded.places["home"]??.city == "Oslo")
            try r.add(decoded)
            let t = try Self.traveller(r, 1)
            #expect(t.places["home"]??.city == "Oslo" && t.places["none"] == .some(nil))
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }
}

extension Realm {
    /// The objects of a type by name, or none when the type is unknown.
    fileprivate func dynamicObjectsOrEmpty(_ type: String) -> [DynamicObject] {
        (try? dynamicObjects(type).map { $0 }) ?? []
    }
}
