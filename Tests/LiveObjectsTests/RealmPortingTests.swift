import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// A card with a local id made by its declaration, as an offline-first app makes them.
final class LocalCard: Object {
    @Persisted(primaryKey: true) var localId = UUID().uuidString
    @Persisted var title = ""
    @Persisted var tags: List<String>
}

/// Code written for Realm that ports with one word changed, or none.
@Suite struct RealmPortingTests {
    /// `create` without a primary key uses the declaration's default, made afresh per object.
    @Test func aDeclaredPrimaryKeyDefaultIsUsedPerObject() async throws {
        let realm = try await openFreshRealm("cards", objectTypes: [LocalCard.self])
        let ids = try await realm.write { realm in
            let a = try realm.create(LocalCard.self, value: ["title": "a"])
            let b = try realm.create(LocalCard.self, value: ["title": "b"])
            return [a.localId, b.localId]
        }
        #expect(ids.count == 2 && ids[0] != ids[1] && UUID(uuidString: ids[0]) != nil)
        #expect(try await realm.read { $0.objects(LocalCard.self).count } == 2)
        // A key that is given still wins.
        let given = try await realm.write {
            try $0.create(LocalCard.self, value: ["localId": "x", "title": "c"]).localId
        }
        #expect(given == "x")
    }

    /// A constant default is no key (two objects made without one would collide): the key
    /// must be given.
    @Test func aConstantPrimaryKeyDefaultIsNotAKey() async throws {
        let realm = try await openPets()
        do {
            try await realm.write { realm in _ = try realm.create(Dog.self, value: ["name": "Rex"]) }
            Issue.record("expected an error")
        } catch let error as LiveObjectsError {
            #expect(error.code == .missingValue && error.property == "id", "\(error)")
        }
    }

    /// A schema given as data has no declaration to take a default from: a missing key is an
    /// error, as before.
    @Test func aSchemaWithoutModelClassesStillNeedsTheKey() async throws {
        let realm = try await Realm.open(
            .init(
                identifier: "porting-\(UUID())",
                schema: Schema([
                    ObjectSchema(
                        name: "Card",
                        properties: [Property(name: "id", type: .string, isPrimaryKey: true)])
                ])))
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { realm in _ = try realm.dynamicCreate("Card", value: [:]) }
        }
    }

    @Test func appendObjectsInIsAppendContentsOf() async throws {
        let realm = try await openPets()
        let names = try await realm.write { realm in
            let ann = try realm.create(Person.self, value: ["id": 1, "name": "Ann"])
            let dogs = try (1...3).map { try realm.create(Dog.self, value: ["id": $0, "name": "d\($0)"]) }
            ann.dogs.append(objectsIn: dogs)
            return ann.dogs.map(\.name)
        }
        #expect(names == ["d1", "d2", "d3"])
    }

    /// `update: .all` reports every given property as modified, an unchanged list included.
    @Test func updateAllReportsAnUnchangedList() async throws {
        let realm = try await openPets()
        try await realm.write { realm in
            let ann = try realm.create(Person.self, value: ["id": 1, "name": "Ann"])
            ann.dogs.append(try realm.create(Dog.self, value: ["id": 1, "name": "Rex"]))
        }
        let changes = try await realm.read { $0.object(ofType: Person.self, forPrimaryKey: 1)!.changes() }
        var iterator = changes.makeAsyncIterator()
        _ = await iterator.next()
        try await realm.write { realm in
            _ = try realm.create(Person.self, value: ["id": 1, "name": "Ann", "dogs": [1]], update: .all)
        }
        guard case .changed(_, let properties)? = await iterator.next() else {
            Issue.record("expected a change")
            return
        }
        #expect(Set(properties.map(\.name)) == ["name", "dogs"])
        // `.modified` reports neither.
        let cards = try await realm.read { $0.objects(Dog.self).changes() }
        var cardIterator = cards.makeAsyncIterator()
        _ = await cardIterator.next()
        try await realm.write { realm in
            _ = try realm.create(Dog.self, value: ["id": 1, "name": "Rex"], update: .modified)
            _ = try realm.create(Dog.self, value: ["id": 2, "name": "Max"])
        }
        let next = try #require(await cardIterator.next())
        #expect(next.modifications.isEmpty && next.insertions == [1])
    }

    /// The dynamic API reads values as Swift types and sets them by subscript.
    @Test func dynamicObjectsReadTypedAndSetBySubscript() async throws {
        let realm = try await openPets()
        try await realm.write { realm in
            _ = try realm.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 3])
        }
        let read = try await realm.write { realm in
            let rex = try realm.dynamicObjects("Dog")[0]
            rex["name"] = "Max"
            return (
                rex["name", as: String.self], rex["age", as: Int.self], rex["age", as: String.self],
                rex["nope", as: Int.self]
            )
        }
        #expect(read.0 == "Max" && read.1 == 3 && read.2 == nil && read.3 == nil)
        // A failing set by subscript fails the write, which changes nothing.
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { realm in
                let rex = try realm.dynamicObjects("Dog")[0]
                rex["age"] = 4
                rex["name"] = 12
            }
        }
        #expect(try await realm.read { $0.object(ofType: Dog.self, forPrimaryKey: 1)!.age } == 3)
    }

    /// `Object(value:)` makes an unmanaged object from a dictionary or an array in property
    /// order, with linked objects given as objects, dictionaries or arrays.
    @Test func objectsAreMadeFromValues() async throws {
        let rex = try Dog(value: ["id": 1, "name": "Rex", "age": 3])
        #expect(!rex.isManaged && rex.name == "Rex" && rex.age == 3 && rex.owner == nil)
        let jane = try Person(value: [123, "Jane", 40, [rex, ["id": 2, "name": "Max"]]])
        #expect(jane.id == 123 && jane.name == "Jane" && jane.age == 40)
        #expect(jane.dogs.map(\.name) == ["Rex", "Max"] && jane.dogs[0] === rex)
        let owned = try Dog(value: ["id": 3, "owner": ["id": 9, "name": "Ann"]])
        #expect(owned.owner?.name == "Ann")
        // Added to a realm as any unmanaged object is.
        let realm = try await openPets()
        let names = try await realm.write { realm in
            try realm.add(try Person(value: [1, "Ann", 30, [[7, "Bo"]]]))
            return realm.objects(Dog.self).map(\.name)
        }
        #expect(names == ["Bo"])
        // Bad input is a typed error naming the property.
        #expect(throws: LiveObjectsError.self) { try Dog(value: ["id": 1, "nme": "Rex"]) }
        do {
            _ = try Dog(value: ["id": "one"])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .typeMismatch && error.property == "id")
        }
        #expect(throws: LiveObjectsError.self) { try Dog(value: [1, "Rex", 3, nil, [], 9]) }
    }
}
