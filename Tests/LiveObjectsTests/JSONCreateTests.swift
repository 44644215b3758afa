import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

private func json(_ text: String) -> Data { Data(text.utf8) }

@Suite struct JSONCreateTests {
    private func petsWithAnn(_ name: String = #function) async throws -> Realm {
        let realm = try await openPets("json-\(name)")
        try await realm.write { realm in
            _ = try realm.create(Person.self, value: ["id": 7, "name": "Ann", "age": 40])
        }
        return realm
    }

    /// Reads back a dog, its owner and toys as one line.
    private func dog(_ realm: Realm, _ id: Int) async throws -> String {
        try await realm.read { realm in
            guard let dog = realm.object(ofType: Dog.self, forPrimaryKey: id) else { return "none" }
            let owner = dog.owner.map { "\($0.id):\($0.name):\($0.age)" } ?? "nil"
            return "\(dog.name) age=\(dog.age) owner=\(owner) toys=\(dog.toys.map(\.name))"
        }
    }

    @Test func linkByPrimaryKeyAndByNestedObject() async throws {
        let realm = try await petsWithAnn()
        try await realm.write { realm in
            let rex = try realm.create(Dog.self, json: json(#"{"id": 1, "name": "Rex", "age": 3, "owner": 7}"#))
            #expect(rex.isManaged && rex.owner?.name == "Ann")
            _ = try realm.create(
                Dog.self,
                json: json(
                    #"{"id": 2, "name": "Fido", "owner": {"id": 8, "name": "Bob"}, "toys": [{"id": 1, "name": "ball"}]}"#
                ))
        }
        #expect(try await dog(realm, 1) == #"Rex age=3 owner=7:Ann:40 toys=[]"#)
        #expect(try await dog(realm, 2) == #"Fido age=0 owner=8:Bob:0 toys=["ball"]"#)
        // A list of links by primary key.
        try await realm.write { realm in
            _ = try realm.create(Person.self, json: json(#"{"id": 9, "name": "Cy", "dogs": [1, 2, 1]}"#))
        }
        let dogs = try await realm.read { $0.object(ofType: Person.self, forPrimaryKey: 9)!.dogs.map(\.name) }
        #expect(dogs == ["Rex", "Fido", "Rex"])
    }

    @Test func updatePolicyError() async throws {
        let realm = try await petsWithAnn()
        try await realm.write { realm in
            _ = try realm.create(Dog.self, json: json(#"{"id": 1, "name": "Rex", "age": 3}"#))
        }
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { realm in
                _ = try realm.create(Dog.self, json: json(#"{"id": 1, "name": "Other"}"#), update: .error)
            }
        }
        #expect(try await dog(realm, 1) == "Rex age=3 owner=nil toys=[]")
    }

    @Test func updatePolicyModifiedChangesOnlyGivenKeys() async throws {
        let realm = try await petsWithAnn()
        try await realm.write { realm in
            _ = try realm.create(Dog.self, json: json(#"{"id": 1, "name": "Rex", "age": 3, "owner": 7}"#))
        }
        try await realm.write { realm in
            _ = try realm.create(
                Dog.self, json: json(#"{"id": 1, "age": 4, "owner": {"id": 7, "age": 41}}"#), update: .modified)
        }
        // The name is kept, the age and the nested owner's age updated, the owner's name kept.
        #expect(try await dog(realm, 1) == "Rex age=4 owner=7:Ann:41 toys=[]")
        let count = try await realm.read { $0.objects(Person.self).count }
        #expect(count == 1)
    }

    @Test func updatePolicyAllSetsEveryGivenKey() async throws {
        let realm = try await petsWithAnn()
        try await realm.write { realm in
            _ = try realm.create(Dog.self, json: json(#"{"id": 1, "name": "Rex", "age": 3}"#))
        }
        try await realm.write { realm in
            _ = try realm.create(Dog.self, json: json(#"{"id": 1, "name": "Rex", "owner": null}"#), update: .all)
        }
        #expect(try await dog(realm, 1) == "Rex age=3 owner=nil toys=[]")
    }

    @Test func arrayFormIsAllOrNothing() async throws {
        let realm = try await petsWithAnn()
        let names = try await realm.write { realm in
            try realm.create(
                Dog.self, jsonArray: json(#"[{"id": 1, "name": "A"}, {"id": 2, "name": "B", "owner": 7}]"#)
            )
            .map(\.name)
        }
        #expect(names == ["A", "B"])
        do {
            try await realm.write { realm in
                _ = try realm.create(Dog.self, jsonArray: json(#"[{"id": 3, "name": "C"}, {"id": 1, "name": "dup"}]"#))
            }
            Issue.record("a duplicate primary key was accepted")
        } catch let error as LiveObjectsError {
            #expect(error.code == .duplicatePrimaryKey && error.message.hasPrefix("element 1: "))
        }
        let count = try await realm.read { $0.objects(Dog.self).count }
        #expect(count == 2)
        // Updating through the array form.
        try await realm.write { realm in
            _ = try realm.create(Dog.self, jsonArray: json(#"[{"id": 1, "age": 9}]"#), update: .modified)
        }
        #expect(try await dog(realm, 1) == "A age=9 owner=nil toys=[]")
    }

    @Test(arguments: [
        (#"{"id": 1, "age": "three"}"#, LiveObjectsError.Code.typeMismatch, "Dog", "age" as String?),
        (#"{"id": 1, "name": null}"#, .typeMismatch, "Dog", "name"),
        (#"{"name": "no key"}"#, .missingValue, "Dog", "id"),
        (#"{"id": 1, "colour": "red"}"#, .unknownProperty, "Dog", "colour"),
        // A link to a primary key that does not exist names the target type (and the key).
        (#"{"id": 1, "owner": 99}"#, .missingValue, "Person", nil),
        (#"{"id": 1, "owner": {"id": 8, "name": 5}}"#, .typeMismatch, "Person", "name"),
        (#"{"id": 1, "toys": {"id": 1}}"#, .typeMismatch, "Dog", "toys"),
        (#"{"id": 1, "owner": "7"}"#, .typeMismatch, "Dog", "owner"),
        (#"[{"id": 1}]"#, .typeMismatch, "Dog", nil),
        (#"{"id": 1, "name": "Rex""#, .corruptFile, "Dog", nil),
    ])
    func badJSONThrowsATypedErrorAndCreatesNothing(
        text: String, code: LiveObjectsError.Code, type: String, property: String?
    ) async throws {
        let realm = try await petsWithAnn("bad-\(text.hashValue)")
        do {
            try await realm.write { realm in _ = try realm.create(Dog.self, json: json(text)) }
            Issue.record("accepted \(text)")
        } catch let error as LiveObjectsError {
            #expect(error.code == code, "\(error)")
            #expect(error.objectType == type, "\(error)")
            #expect(error.property == property, "\(error)")
        }
        let counts = try await realm.read { realm in
            [realm.objects(Dog.self).count, realm.objects(Person.self).count]
        }
        #expect(counts == [0, 1])
    }

    @Test func createNeedsAWrite() async throws {
        let realm = try await petsWithAnn()
        let code = try await realm.read { realm -> LiveObjectsError.Code? in
            do {
                _ = try realm.create(Dog.self, json: json(#"{"id": 1}"#))
                return nil
            } catch {
                return (error as? LiveObjectsError)?.code
            }
        }
        #expect(code == .notInWriteTransaction)
    }

    @Test func encodedObjectsCreateTheSameObjects() async throws {
        let source = try await Realm.open(
            .init(
                identifier: "json-src-\(UUID())", objectTypes: [CodedEverything.self, CodedNode.self, CodedPlace.self]))
        let target = try await Realm.open(
            .init(
                identifier: "json-dst-\(UUID())", objectTypes: [CodedEverything.self, CodedNode.self, CodedPlace.self]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let data = try await source.write { realm in
            let object = CodedEverything()
            object.id = 1
            object.date = Date(timeIntervalSince1970: 1_700_000_000)
            object.dates.append(Date(timeIntervalSince1970: 0))
            object.data = Data([1, 2, 3])
            object.optUUID = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")
            object.float = 0.25
            object.maybeStrings.append(nil)
            let node = CodedNode()
            node.name = "n"
            node.next = node
            object.friend = node
            let place = CodedPlace()
            place.city = "Paris"
            object.stops.append(place)
            try realm.add(object)
            return try encoder.encode(object)
        }
        let copied = try await target.write { realm in
            try encoder.encode(realm.create(CodedEverything.self, json: data, decoder: decoder))
        }
        #expect(copied == data)
        #expect(String(decoding: data, as: UTF8.self).contains(#""date":"2023-11-14T22:13:20Z""#))
    }
}
