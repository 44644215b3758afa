import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@Suite struct RealmBasicsTests {
    @Test func schemaIsDiscoveredFromModels() async throws {
        let realm = try await openPets()
        let dog = try #require(realm.schema["Dog"])
        #expect(dog.properties.map(\.name) == ["id", "name", "age", "owner", "toys", "walkers"])
        #expect(dog.primaryKey?.name == "id")
        #expect(dog["name"]?.isIndexed == true)
        #expect(dog["owner"]?.type == .object && dog["owner"]?.objectType == "Person")
        #expect(dog["toys"]?.isList == true && dog["toys"]?.deleteRule == .cascade)
        #expect(dog["walkers"]?.type == .linkingObjects && dog["walkers"]?.originProperty == "dogs")
        #expect(realm.schema["Address"]?.isEmbedded == true)
    }

    @Test func createReadUpdateDelete() async throws {
        let realm = try await openPets()
        try await realm.write { realm in
            let ann = try realm.create(Person.self, value: ["id": 1, "name": "Ann", "age": 30])
            let rex = try realm.create(Dog.self, value: ["id": 10, "name": "Rex", "age": 3, "owner": ann])
            ann.dogs.append(rex)
        }
        let summary = try await realm.read { realm -> String in
            let rex = realm.object(ofType: Dog.self, forPrimaryKey: 10)!
            return "\(rex.name) \(rex.age) \(rex.owner?.name ?? "-") \(rex.walkers.map(\.name))"
        }
        #expect(summary == "Rex 3 Ann [\"Ann\"]")
        try await realm.write { realm in
            let rex = realm.object(ofType: Dog.self, forPrimaryKey: 10)!
            rex.age = 4
            try realm.delete(realm.object(ofType: Person.self, forPrimaryKey: 1)!)
            #expect(rex.owner == nil)
        }
        let (age, people) = try await realm.read {
            ($0.object(ofType: Dog.self, forPrimaryKey: 10)!.age, $0.objects(Person.self).count)
        }
        #expect(age == 4 && people == 0)
    }

    @Test func objectsAreAutoUpdating() async throws {
        let realm = try await openPets()
        try await realm.write { realm in
            try realm.create(Dog.self, value: ["id": 1, "name": "Rex"])
            let a = realm.object(ofType: Dog.self, forPrimaryKey: 1)!
            let b = realm.objects(Dog.self)[0]
            a.name = "Max"
            #expect(b.name == "Max")
            #expect(a == b)
        }
    }

    @Test func thrownErrorRollsBackEverything() async throws {
        struct Boom: Error {}
        let realm = try await openPets()
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 1, "name": "Rex"]) }
        await #expect(throws: Boom.self) {
            try await realm.write { realm in
                let rex = realm.object(ofType: Dog.self, forPrimaryKey: 1)!
                rex.name = "Changed"
                rex.toys.append(DogToy())
                try realm.create(Dog.self, value: ["id": 2])
                throw Boom()
            }
        }
        let state = try await realm.read { realm in
            (realm.objects(Dog.self).map(\.name), realm.objects(DogToy.self).count)
        }
        #expect(state.0 == ["Rex"] && state.1 == 0)
    }

    @Test func duplicatePrimaryKeyAndUpsert() async throws {
        let realm = try await openPets()
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 2]) }
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { _ = try $0.create(Dog.self, value: ["id": 1]) }
        }
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 1, "age": 5], update: .modified) }
        let dog = try await realm.read { r in r.objects(Dog.self).map { "\($0.name) \($0.age)" } }
        #expect(dog == ["Rex 5"])
    }

    @Test func settingOutsideWriteIsTypedError() async throws {
        let realm = try await openPets()
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 1, "name": "Rex"]) }
        do {
            try await realm.read { realm in realm.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "X" }
            Issue.record("expected an error")
        } catch let error as LiveObjectsError {
            #expect(error.code == .notInWriteTransaction)
            #expect(error.property == "name")
        }
        let name = try await realm.read { $0.object(ofType: Dog.self, forPrimaryKey: 1)!.name }
        #expect(name == "Rex")
    }

    @Test func deletedObjectIsInvalidated() async throws {
        let realm = try await openPets()
        let result = try await realm.write { realm -> (Bool, Bool) in
            let rex = try realm.create(Dog.self, value: ["id": 1, "name": "Rex"])
            try realm.delete(rex)
            return (rex.isInvalidated, realm.objects(Dog.self).isEmpty)
        }
        #expect(result == (true, true))
    }

    /// A read of a deleted object's property never makes up a value: the program stops with
    /// a message naming the type and property (as Realm does).
    @Test func readingADeletedObjectStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! await openPets()
            try! await realm.write { realm in
                let rex = try realm.create(Dog.self, value: ["id": 2, "name": "Rex"])
                try realm.delete(rex)
                _ = rex.name
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Dog.name was read on an object that was deleted"), "\(message)")
    }

    /// Setting a deleted object's property records the error, which the write throws; the
    /// write changes nothing.
    @Test func settingADeletedObjectFailsTheWrite() async throws {
        let realm = try await openPets()
        do {
            try await realm.write { realm in
                let rex = try realm.create(Dog.self, value: ["id": 2, "name": "Rex"])
                try realm.delete(rex)
                rex.name = "Max"
            }
            Issue.record("expected an error")
        } catch let error as LiveObjectsError {
            #expect(error.code == .objectInvalidated)
            #expect(error.property == "name")
        }
        #expect(try await realm.read { $0.objects(Dog.self).count } == 0)
    }

    @Test func addUnmanagedGraphAndEmbedded() async throws {
        let realm = try await openPets()
        let ann = Person()
        ann.id = 1
        ann.name = "Ann"
        let rex = Dog()
        rex.id = 7
        rex.name = "Rex"
        rex.owner = ann
        ann.dogs.append(rex)
        let address = Address()
        address.city = "Oslo"
        ann.address = address
        try await realm.write(adding: [ann])
        let state = try await realm.read { realm -> String in
            let ann = realm.object(ofType: Person.self, forPrimaryKey: 1)!
            return
                "\(ann.dogs.map(\.name)) \(ann.address?.city ?? "-") \(realm.objects(Dog.self).count) \(realm.objects(Address.self).count)"
        }
        #expect(state == "[\"Rex\"] Oslo 1 1")
        // Replacing the embedded object deletes the old one; deleting the parent deletes it.
        try await realm.write { realm in
            let ann = realm.object(ofType: Person.self, forPrimaryKey: 1)!
            let other = Address()
            other.city = "Bergen"
            ann.address = other
        }
        #expect(try await realm.read { $0.objects(Address.self).map(\.city) } == ["Bergen"])
        try await realm.write { try $0.delete($0.object(ofType: Person.self, forPrimaryKey: 1)!) }
        #expect(try await realm.read { $0.objects(Address.self).count } == 0)
    }

    @Test func deleteRules() async throws {
        let realm = try await openPets()
        try await realm.write { realm in
            let ann = try realm.create(Person.self, value: ["id": 1, "name": "Ann"])
            try realm.create(DogClub.self, value: ["name": "Barkers", "members": [ann], "president": ann])
            try realm.create(
                Dog.self, value: ["id": 1, "toys": [["id": 1, "name": "ball"], ["id": 2, "name": "rope"]]])
        }
        do {
            try await realm.write { try $0.delete($0.object(ofType: Person.self, forPrimaryKey: 1)!) }
            Issue.record("expected deleteDenied")
        } catch let error as LiveObjectsError {
            #expect(error.code == .deleteDenied)
        }
        #expect(try await realm.read { $0.objects(Person.self).count } == 1)
        try await realm.write { try $0.delete($0.object(ofType: Dog.self, forPrimaryKey: 1)!) }
        #expect(try await realm.read { $0.objects(DogToy.self).count } == 0)
        // Deleting the club and the president together is allowed.
        try await realm.write { realm in
            try realm.delete(
                [
                    realm.object(ofType: Person.self, forPrimaryKey: 1)!,
                    realm.object(ofType: DogClub.self, forPrimaryKey: "Barkers")!,
                ] as [Object])
        }
        #expect(try await realm.read { $0.objects(Person.self).count } == 0)
    }

    @Test func sameIdentifierSharesData() async throws {
        let id = "shared-\(UUID())"
        let a = try await Realm.open(.init(identifier: id, objectTypes: petModelTypes))
        let b = try await Realm.open(.init(identifier: id, objectTypes: petModelTypes))
        try await a.write { _ = try $0.create(Dog.self, value: ["id": 1]) }
        #expect(try await b.read { $0.objects(Dog.self).count } == 1)
        let other = try await openPets()
        #expect(try await other.read { $0.objects(Dog.self).count } == 0)
    }

    @Test func copyBetweenRealms() async throws {
        let a = try await openPets()
        let b = try await openPets()
        try await a.write { realm in
            let ann = try realm.create(Person.self, value: ["id": 1, "name": "Ann"])
            ann.dogs.append(try realm.create(Dog.self, value: ["id": 5, "name": "Rex", "owner": ann]))
        }
        let copy = try await a.read { $0.object(ofType: Person.self, forPrimaryKey: 1)!.detached() }
        #expect(!copy.isManaged && copy.dogs.first?.owner === copy)
        try await b.write(adding: [copy])
        let names = try await b.read { realm in realm.objects(Dog.self).map { "\($0.name)/\($0.owner?.name ?? "")" } }
        #expect(names == ["Rex/Ann"])
    }
}
