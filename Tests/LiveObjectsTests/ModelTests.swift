import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class AllTypes: Object {
    @Persisted(primaryKey: true) var id = UUID()
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double = 0.0
    @Persisted var string = "default"
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var data = Data()
    @Persisted var uuid = UUID()
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optInt8: Int8?
    @Persisted var optInt16: Int16?
    @Persisted var optInt32: Int32?
    @Persisted var optInt64: Int64?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optDate: Date?
    @Persisted var optData: Data?
    @Persisted var optUUID: UUID?
    @Persisted var ints: List<Int>
    @Persisted var strings: List<String?>
    var ignored = 42
}

final class StringKeyed: Object {
    @Persisted(primaryKey: true) var code = ""
    @Persisted(indexed: true) var label = ""
}

@Suite struct ModelTests {
    func open(_ types: [Object.Type]) async throws -> Realm {
        try await openFreshRealm("models", objectTypes: types)
    }

    @Test func everyPropertyTypeRoundTrips() async throws {
        let realm = try await open([AllTypes.self])
        let schema = try #require(realm.schema["AllTypes"])
        #expect(schema.properties.count == 27)
        #expect(schema["ignored"] == nil)
        #expect(schema["int8"]?.type == .int8 && schema["optUUID"]?.isOptional == true)
        #expect(schema["strings"]?.isList == true && schema["strings"]?.isOptional == true)
        let id = UUID()
        let date = Date(timeIntervalSince1970: 1_234_567.891)
        let blob = Data([0, 1, 2, 255])
        let other = UUID()
        try await realm.write { realm in
            let o = AllTypes()
            o.id = id
            o.bool = true
            o.int = .max
            o.int8 = .min
            o.int16 = -300
            o.int32 = 70_000
            o.int64 = .min
            o.float = 1.5
            o.double = -.infinity
            o.string = "Пятёрочка"
            o.date = date
            o.data = blob
            o.uuid = other
            o.optInt = 5
            o.optString = "x"
            o.ints.append(contentsOf: [3, 1, 2])
            o.strings.append(nil)
            o.strings.append("s")
            try realm.add(o)
        }
        let ok = try await realm.read { realm -> Bool in
            let o = realm.object(ofType: AllTypes.self, forPrimaryKey: id)!
            return o.bool && o.int == .max && o.int8 == .min && o.int16 == -300 && o.int32 == 70_000
                && o.int64 == .min && o.float == 1.5 && o.double == -.infinity && o.string == "Пятёрочка"
                && o.date == date && o.data == blob && o.uuid == other && o.optBool == nil
                && o.optInt == 5 && o.optString == "x" && o.optDate == nil && Array(o.ints) == [3, 1, 2]
                && Array(o.strings) == [nil, "s"] && o.ignored == 42
        }
        #expect(ok)
        // Defaults come from the model's declarations.
        let defaults = try await realm.write { realm -> String in
            let o = try realm.create(AllTypes.self, value: ["id": UUID()])
            return "\(o.string) \(o.date.timeIntervalSince1970) \(o.optInt as Any)"
        }
        #expect(defaults == "default 0.0 nil")
    }

    @Test func integerRangesAreChecked() async throws {
        let realm = try await open([AllTypes.self])
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { realm in _ = try realm.create(AllTypes.self, value: ["id": UUID(), "int8": 300]) }
        }
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { realm in _ = try realm.create(AllTypes.self, value: ["id": UUID(), "string": 3]) }
        }
        #expect(try await realm.read { $0.objects(AllTypes.self).count } == 0)
    }

    @Test func listOperations() async throws {
        let realm = try await openPets()
        let names = try await realm.write { realm -> [String] in
            let ann = try realm.create(Person.self, value: ["id": 1])
            for i in 1...4 { ann.dogs.append(try realm.create(Dog.self, value: ["id": i, "name": "d\(i)"])) }
            ann.dogs.append(ann.dogs[0])  // duplicates are allowed
            ann.dogs.move(from: 0, to: 3)  // d2 d3 d4 d1 d1
            ann.dogs.remove(at: 1)  // d2 d4 d1 d1
            ann.dogs.insert(realm.object(ofType: Dog.self, forPrimaryKey: 3)!, at: 0)  // d3 d2 d4 d1 d1
            ann.dogs[1] = realm.object(ofType: Dog.self, forPrimaryKey: 4)!  // d3 d4 d4 d1 d1
            return ann.dogs.map(\.name)
        }
        #expect(names == ["d3", "d4", "d4", "d1", "d1"])
        let walkers = try await realm.read { realm in
            realm.object(ofType: Dog.self, forPrimaryKey: 4)!.walkers.count
        }
        #expect(walkers == 2)
        // Deleting a dog removes every entry of it.
        try await realm.write { try $0.delete($0.object(ofType: Dog.self, forPrimaryKey: 1)!) }
        #expect(
            try await realm.read { $0.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.map(\.name) } == [
                "d3", "d4", "d4",
            ])
    }

    @Test func listIndexOutOfBoundsIsTypedError() async throws {
        let realm = try await openPets()
        do {
            try await realm.write { realm in
                let ann = try realm.create(Person.self, value: ["id": 1])
                ann.dogs.remove(at: 3)
            }
            Issue.record("expected an error")
        } catch let error as LiveObjectsError {
            #expect(error.code == .indexOutOfBounds)
        }
        #expect(try await realm.read { $0.objects(Person.self).count } == 0)
    }

    @Test func primaryKeyCannotChange() async throws {
        let realm = try await open([StringKeyed.self])
        do {
            try await realm.write { realm in
                let o = try realm.create(StringKeyed.self, value: ["code": "a"])
                o.code = "b"
            }
            Issue.record("expected an error")
        } catch let error as LiveObjectsError {
            #expect(error.code == .primaryKeyChange)
        }
    }

    @Test func createFromArrayAndUpdatePolicies() async throws {
        let realm = try await openPets()
        try await realm.write { realm in
            _ = try realm.create(Person.self, value: [7, "Ann", 30])
            _ = try realm.create(Person.self, value: ["id": 7, "age": 31], update: .modified)
        }
        let s = try await realm.read { r in r.objects(Person.self).map { "\($0.id) \($0.name) \($0.age)" } }
        #expect(s == ["7 Ann 31"])
    }

    @Test func linksByPrimaryKeyAndNestedCreation() async throws {
        let realm = try await openPets()
        try await realm.write { realm in
            _ = try realm.create(Person.self, value: ["id": 1, "name": "Ann"])
            _ = try realm.create(Dog.self, value: ["id": 1, "name": "Rex", "owner": 1])
            _ = try realm.create(Dog.self, value: ["id": 2, "name": "Fido", "owner": ["id": 2, "name": "Bob"]])
        }
        let owners = try await realm.read { r in r.objects(Dog.self).map { $0.owner?.name ?? "-" } }
        #expect(owners == ["Ann", "Bob"])
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { _ = try $0.create(Dog.self, value: ["id": 3, "owner": 99]) }
        }
    }

    @Test func embeddedObjectCannotHaveTwoParents() async throws {
        let realm = try await openPets()
        do {
            try await realm.write { realm in
                let a = try realm.create(Person.self, value: ["id": 1, "address": ["city": "Oslo"]])
                let b = try realm.create(Person.self, value: ["id": 2])
                b.address = a.address
            }
            Issue.record("expected an error")
        } catch let error as LiveObjectsError {
            #expect(error.code == .embeddedObjectAlreadyOwned)
        }
    }

    @Test func nestedWriteIsTypedError() async throws {
        let realm = try await openPets()
        do {
            try await realm.write { realm in try realm.write { _ in } }
            Issue.record("expected an error")
        } catch let error as LiveObjectsError {
            #expect(error.code == .alreadyInWriteTransaction)
        }
    }

}

extension ModelTests {
    @Test func explicitTransactions() async throws {
        let realm = try await openPets()
        try await realm.beginWrite()
        try await realm.read { realm in _ = try realm.create(Dog.self, value: ["id": 1]) }
        await realm.cancelWrite()
        #expect(try await realm.read { $0.objects(Dog.self).count } == 0)
        try await realm.beginWrite()
        try await realm.read { realm in _ = try realm.create(Dog.self, value: ["id": 1]) }
        try await realm.commitWrite()
        #expect(try await realm.read { $0.objects(Dog.self).count } == 1)
        #expect(await realm.version == 1)
    }
}

extension ModelTests {
    @Test func failedOperationInsideWriteUndoesOnlyItself() async throws {
        let realm = try await openPets()
        let caught = try await realm.write { realm -> Bool in
            _ = try realm.create(Dog.self, value: ["id": 1])
            _ = try realm.create(Dog.self, value: ["id": 2])
            do {
                _ = try realm.create(
                    Dog.self, value: ["id": 3, "owner": ["id": 5], "toys": [["id": 1], ["id": 1]]])
                return false
            } catch {
                return (error as? LiveObjectsError)?.code == .duplicatePrimaryKey
            }
        }
        #expect(caught)
        let counts = try await realm.read { r in
            [r.objects(Dog.self).map(\.id), [r.objects(Person.self).count, r.objects(DogToy.self).count]]
        }
        #expect(counts == [[1, 2], [0, 0]])
        // The slots freed by the rollback are reused cleanly.
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 3]) }
        #expect(try await realm.read { r in r.objects(Dog.self).map(\.id) } == [1, 2, 3])
    }
}
