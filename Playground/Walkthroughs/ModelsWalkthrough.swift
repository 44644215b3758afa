import Foundation
import LiveObjects

/// `models`: declaring model classes and what managed objects do.
enum ModelsWalkthrough: Walkthrough {
    static let name = "models"
    static let summary =
        "every property type, keys, indexes, live objects, links, lists, backlinks, embedded objects, copies"

    /// One stored property of every type, a primary key, an index and a property that is not stored.
    final class Sample: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted(indexed: true) var label = ""
        @Persisted var flag = false
        @Persisted var int8: Int8 = 0
        @Persisted var int16: Int16 = 0
        @Persisted var int32: Int32 = 0
        @Persisted var int64: Int64 = 0
        @Persisted var float: Float = 0
        @Persisted var double = 0.0
        @Persisted var date = Date(timeIntervalSince1970: 0)
        @Persisted var data = Data()
        @Persisted var uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
        @Persisted var maybeFlag: Bool?
        @Persisted var maybeInt: Int?
        @Persisted var maybeDouble: Double?
        @Persisted var maybeText: String?
        @Persisted var maybeDate: Date?
        @Persisted var maybeData: Data?
        @Persisted var maybeUUID: UUID?
        @Persisted var tags: List<String>
        /// Not `@Persisted`: a plain Swift property, never stored.
        var isSelected = false
    }

    final class Person: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var dogs: List<Dog>
        @Persisted var address: Address?
    }

    final class Dog: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted var owner: Person?
        @Persisted(originProperty: "dogs") var walkers: LinkingObjects<Person>
    }

    final class Address: EmbeddedObject {
        @Persisted var street = ""
        @Persisted var city = ""
    }

    static let types: [Object.Type] = [Sample.self, Person.self, Dog.self, Address.self]

    static func run(_ narrator: Narrator) async throws {
        let realm = try await Realm.open(.init(identifier: "playground.models", objectTypes: types))
        try declare(narrator, realm)
        try await storeEveryType(narrator, realm)
        try await keysAndIndexes(narrator, realm)
        try await liveObjects(narrator, in: realm)
        try await relationships(narrator, realm)
        try await embeddedObjects(narrator, realm)
        try await copyToAnotherRealm(narrator, realm)
        try await deleting(narrator, realm)
    }

    static func declare(_ narrator: Narrator, _ realm: Realm) throws {
        narrator.step("Declare a model class: an Object subclass with @Persisted properties.")
        narrator.code(
            """
            final class Sample: Object {
                @Persisted(primaryKey: true) var id = 0
                @Persisted(indexed: true) var label = ""
                @Persisted var flag = false                  // Bool
                @Persisted var int8: Int8 = 0                // Int8, Int16, Int32, Int64 too
                @Persisted var float: Float = 0              // Float and Double
                @Persisted var date = Date(timeIntervalSince1970: 0)
                @Persisted var data = Data()
                @Persisted var uuid = UUID(...)
                @Persisted var maybeText: String?            // every type can be optional
                @Persisted var tags: List<String>            // a list of values
                var isSelected = false                       // not @Persisted: not stored
            }
            """)
        let schema = try narrator.unwrap(realm.schema["Sample"], "the realm's schema has the type Sample")
        narrator.say("Opening a realm with the model classes reads their schema once:")
        for property in schema.properties { narrator.say("  \(property)") }
        let types = Set(schema.properties.map(\.type))
        try narrator.expect(
            types,
            [.int, .string, .bool, .int8, .int16, .int32, .int64, .float, .double, .date, .data, .uuid],
            "every property type is in the schema")
        try narrator.check(
            schema.properties.filter(\.isOptional).count == 7, "seven properties are optional")
        try narrator.check(schema["tags"]?.isList == true, "tags is a list of strings")
        try narrator.check(schema["isSelected"] == nil, "isSelected is not part of the schema: it is not stored")
        try narrator.expect(schema.primaryKey?.name, "id", "id is the primary key")
        try narrator.check(schema["label"]?.isIndexed == true, "label is indexed")
    }

    static func storeEveryType(_ narrator: Narrator, _ realm: Realm) async throws {
        narrator.step("Add an unmanaged object with extreme values, then read it back.")
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let sample = Sample()
        sample.id = 1
        sample.label = "first ✓ Ünïcødé"
        sample.flag = true
        sample.int8 = .min
        sample.int16 = .max
        sample.int32 = .min
        sample.int64 = .max
        sample.float = 1.5e-30
        sample.double = -.pi
        sample.date = date
        sample.data = Data([0, 1, 2, 254, 255])
        sample.uuid = uuid
        sample.maybeInt = 42
        sample.maybeText = nil
        sample.maybeDate = date
        sample.tags.append(contentsOf: ["new", "sale"])
        sample.isSelected = true
        narrator.code(
            """
            let sample = Sample()
            sample.id = 1; sample.int8 = .min; sample.int64 = .max; sample.double = -.pi; ...
            sample.isSelected = true
            try await realm.write(adding: [sample])
            """)
        try await realm.write(adding: [sample])
        let copy = try await realm.read { realm in
            realm.object(ofType: Sample.self, forPrimaryKey: 1)?.detached()
        }
        let back = try narrator.unwrap(copy, "the object is found by its primary key")
        narrator.say(
            "Read back: int8 = \(back.int8), int64 = \(back.int64), double = \(back.double), data = \(Array(back.data))"
        )
        try narrator.check(
            back.label == "first ✓ Ünïcødé" && back.flag && back.int8 == .min && back.int16 == .max
                && back.int32 == .min && back.int64 == .max && back.float == 1.5e-30 && back.double == -.pi
                && back.date == date && back.data == Data([0, 1, 2, 254, 255]) && back.uuid == uuid,
            "every value reads back exactly as it was written")
        try narrator.check(
            back.maybeInt == 42 && back.maybeText == nil && back.maybeDate == date && back.maybeFlag == nil
                && back.maybeDouble == nil && back.maybeData == nil && back.maybeUUID == nil,
            "optionals keep their values and their nils")
        try narrator.expect(Array(back.tags), ["new", "sale"], "the list of tags keeps its values in order")
        try narrator.check(!back.isSelected, "isSelected was true when added but comes back false: it is not stored")
    }

    static func keysAndIndexes(_ narrator: Narrator, _ realm: Realm) async throws {
        narrator.step("Primary keys are unique; an indexed property answers equality queries from its index.")
        try await narrator.expectError(.duplicatePrimaryKey, "creating a second Sample with id 1 fails") {
            try await realm.write { _ = try $0.create(Sample.self, value: ["id": 1, "label": "again"]) }
        }
        try await realm.write { realm in
            _ = try realm.create(Sample.self, value: ["id": 1, "double": 2.5], update: .modified)
            _ = try realm.create(Sample.self, value: ["id": 2, "label": "second"])
        }
        narrator.say("create(_:value:update: .modified) updates the object with that key instead (an upsert).")
        let (count, double, label, found) = try await realm.read { realm in
            let samples = realm.objects(Sample.self)
            let first = realm.object(ofType: Sample.self, forPrimaryKey: 1)
            return (
                samples.count, first?.double, first?.label,
                samples.where { $0.label == "second" }.map(\.id)
            )
        }
        try narrator.expect(count, 2, "there are two samples")
        try narrator.check(
            double == 2.5 && label == "first ✓ Ünïcødé", "the upsert changed double and kept the other values")
        try narrator.expect(found, [2], "the query label == \"second\" finds sample 2")
    }

    /// Runs inside the realm's isolation, where live objects can be kept in variables.
    static func liveObjects(_ narrator: Narrator, in realm: isolated Realm) throws {
        narrator.step("Managed objects are live: a handle read before a write sees its result.")
        narrator.code(
            """
            let sample = realm.object(ofType: Sample.self, forPrimaryKey: 2)!   // read it first
            try realm.write { realm in
                realm.objects(Sample.self).where { $0.label == "second" }.first!.int32 = 7
            }
            sample.int32   // 7
            """)
        guard let sample = realm.object(ofType: Sample.self, forPrimaryKey: 2) else {
            throw CheckFailure(message: "sample 2 is found")
        }
        let before = sample.int32
        try realm.write { realm in
            realm.objects(Sample.self).where { $0.label == "second" }.first?.int32 = 7
        }
        narrator.say("sample.int32 was \(before) and is now \(sample.int32), without reading the object again.")
        try narrator.check(before == 0 && sample.int32 == 7, "the object read before the write shows the new value")
        try narrator.check(sample.isManaged && !sample.isInvalidated, "it is managed and valid")
    }

    static func relationships(_ narrator: Narrator, _ realm: Realm) async throws {
        narrator.step("Link objects: a to-one link, a List, and the LinkingObjects that follow them back.")
        narrator.code(
            """
            final class Person: Object {
                @Persisted(primaryKey: true) var id = 0
                @Persisted var name = ""
                @Persisted var dogs: List<Dog>
                @Persisted var address: Address?
            }
            final class Dog: Object {
                @Persisted(primaryKey: true) var id = 0
                @Persisted var name = ""
                @Persisted var age = 0
                @Persisted var owner: Person?
                @Persisted(originProperty: "dogs") var walkers: LinkingObjects<Person>
            }
            """)
        try await realm.write { realm in
            let ann = try realm.create(Person.self, value: ["id": 1, "name": "Ann"])
            let bob = try realm.create(Person.self, value: ["id": 2, "name": "Bob"])
            let rex = try realm.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 3, "owner": ann])
            let fido = try realm.create(Dog.self, value: ["id": 2, "name": "Fido", "age": 5])
            fido.owner = ann
            ann.dogs.append(rex)
            ann.dogs.append(fido)
            bob.dogs.append(rex)
        }
        narrator.say("Ann owns Rex and Fido and walks both; Bob walks Rex.")
        let (owner, annDogs, rexWalkers, fidoWalkers) = try await realm.read { realm in
            let rex = realm.object(ofType: Dog.self, forPrimaryKey: 1)
            let fido = realm.object(ofType: Dog.self, forPrimaryKey: 2)
            let ann = realm.object(ofType: Person.self, forPrimaryKey: 1)
            return (
                rex?.owner?.name, ann?.dogs.map(\.name), rex?.walkers.map(\.name).sorted(),
                fido?.walkers.map(\.name)
            )
        }
        try narrator.expect(owner, "Ann", "rex.owner is Ann")
        try narrator.expect(annDogs, ["Rex", "Fido"], "ann.dogs lists Rex and Fido, in order")
        try narrator.expect(rexWalkers, ["Ann", "Bob"], "rex.walkers (LinkingObjects) finds Ann and Bob")
        try narrator.expect(fidoWalkers, ["Ann"], "fido.walkers finds Ann only")

        try await realm.write { realm in
            realm.object(ofType: Person.self, forPrimaryKey: 1)?.dogs.move(from: 1, to: 0)
            realm.object(ofType: Person.self, forPrimaryKey: 2)?.dogs.removeAll()
        }
        let (reordered, walkersAfter) = try await realm.read { realm in
            (
                realm.object(ofType: Person.self, forPrimaryKey: 1)?.dogs.map(\.name),
                realm.object(ofType: Dog.self, forPrimaryKey: 1)?.walkers.map(\.name)
            )
        }
        narrator.say("Move Fido to the front of Ann's list; empty Bob's.")
        try narrator.expect(reordered, ["Fido", "Rex"], "ann.dogs is now Fido, Rex")
        try narrator.expect(walkersAfter, ["Ann"], "rex.walkers follows: Ann only")
    }

    static func embeddedObjects(_ narrator: Narrator, _ realm: Realm) async throws {
        narrator.step("Embedded objects live inside their one parent.")
        narrator.code(
            """
            final class Address: EmbeddedObject {
                @Persisted var street = ""
                @Persisted var city = ""
            }
            ann.address = Address()          // or a dictionary: ["street": ..., "city": ...]
            """)
        try await realm.write { realm in
            let ann = realm.object(ofType: Person.self, forPrimaryKey: 1)
            let address = Address()
            address.street = "1 Elm Street"
            address.city = "Springfield"
            ann?.address = address
            ann?.address?.city = "Shelbyville"
        }
        let (city, street) = try await realm.read { realm in
            let address = realm.object(ofType: Person.self, forPrimaryKey: 1)?.address
            return (address?.city, address?.street)
        }
        try narrator.check(
            city == "Shelbyville" && street == "1 Elm Street", "ann.address is stored and edited in place")
        try await narrator.expectError(.invalidOperation, "an embedded object cannot be created on its own") {
            try await realm.write { realm in
                try realm.add(Address())
            }
        }
    }

    static func copyToAnotherRealm(_ narrator: Narrator, _ realm: Realm) async throws {
        narrator.step("Copy an object to another realm: detached() makes an unmanaged deep copy.")
        narrator.code(
            """
            let copy = try await realm.read { $0.object(ofType: Person.self, forPrimaryKey: 1)!.detached() }
            try await archive.write(adding: [copy])
            """)
        let archive = try await Realm.open(.init(identifier: "playground.models.archive", objectTypes: types))
        let copy = try await realm.read { realm in
            realm.object(ofType: Person.self, forPrimaryKey: 1)?.detached()
        }
        let ann = try narrator.unwrap(copy, "Ann is found")
        try narrator.check(!ann.isManaged && ann.dogs.count == 2, "the copy is unmanaged and holds copies of her dogs")
        try await archive.write(adding: [ann])
        try await realm.write { realm in
            realm.object(ofType: Dog.self, forPrimaryKey: 1)?.name = "Rex (renamed in the first realm)"
        }
        let (people, dogs, rexName, rexOwner, city) = try await archive.read { archive in
            (
                archive.objects(Person.self).map(\.name), archive.objects(Dog.self).map(\.name).sorted(),
                archive.object(ofType: Dog.self, forPrimaryKey: 1)?.name,
                archive.object(ofType: Dog.self, forPrimaryKey: 1)?.owner?.name,
                archive.object(ofType: Person.self, forPrimaryKey: 1)?.address?.city
            )
        }
        narrator.say("The archive realm now holds \(people) with the dogs \(dogs).")
        try narrator.expect(people, ["Ann"], "the archive holds Ann (Bob does not link from her, so he stays behind)")
        try narrator.expect(dogs, ["Fido", "Rex"], "her dogs came along")
        try narrator.check(
            rexOwner == "Ann" && city == "Shelbyville", "links and the embedded address came along too")
        try narrator.expect(rexName, "Rex", "renaming Rex in the first realm leaves the archive's Rex alone")
    }

    static func deleting(_ narrator: Narrator, _ realm: Realm) async throws {
        narrator.step("Delete Ann: links to her are removed and her embedded address goes with her.")
        try await realm.write { realm in
            if let ann = realm.object(ofType: Person.self, forPrimaryKey: 1) { try realm.delete(ann) }
        }
        let (people, owner, walkers, dogs) = try await realm.read { realm in
            let rex = realm.object(ofType: Dog.self, forPrimaryKey: 1)
            return (
                realm.objects(Person.self).map(\.name), rex?.owner?.name, rex?.walkers.count,
                realm.objects(Dog.self).count
            )
        }
        try narrator.expect(people, ["Bob"], "only Bob is left")
        try narrator.check(owner == nil && walkers == 0, "rex.owner is nil and nobody walks Rex")
        try narrator.expect(dogs, 2, "the dogs themselves stay (the default delete rule, nullify)")
    }
}
