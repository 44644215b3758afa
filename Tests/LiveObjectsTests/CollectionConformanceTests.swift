import LiveObjects
import LiveObjectsTestSupport
import Testing

/// `Results`, `List` and `LinkingObjects` keep the rules of `RandomAccessCollection`, empty,
/// with one element and with many, filtered and sorted.
@Suite struct CollectionConformanceTests {
    /// A realm of people 1...5 and dogs 1...12; person 1 has dogs 12, 3 and 7 (in that order),
    /// walked by people 1 and 2; dog 5 has no walker.
    static func makeRealm() async throws -> Realm {
        let realm = try await openPets("conformance")
        try await realm.write { realm in
            for id in 1...5 { _ = try realm.create(Person.self, value: ["id": id, "name": "p\(id)", "age": 20 + id]) }
            for id in 1...12 {
                _ = try realm.create(Dog.self, value: ["id": id, "name": "d\(id % 4)", "age": id % 5])
            }
            let ann = realm.object(ofType: Person.self, forPrimaryKey: 1)!
            let bob = realm.object(ofType: Person.self, forPrimaryKey: 2)!
            for id in [12, 3, 7] { ann.dogs.append(realm.object(ofType: Dog.self, forPrimaryKey: id)!) }
            bob.dogs.append(realm.object(ofType: Dog.self, forPrimaryKey: 7)!)
        }
        return realm
    }

    @Test func results() async throws {
        let realm = try await Self.makeRealm()
        let problems = try await realm.read { realm in
            let dogs = realm.objects(Dog.self)
            return [
                ("all", collectionViolations(dogs, expected: Array(1...12)) { $0.id }),
                ("none", collectionViolations(dogs.where { $0.age > 10 }, expected: []) { $0.id }),
                ("one", collectionViolations(dogs.where { $0.id == 5 }, expected: [5]) { $0.id }),
                ("filtered", collectionViolations(try dogs.filter("age == 2"), expected: [2, 7, 12]) { $0.id }),
                (
                    "sorted",
                    collectionViolations(
                        try dogs.sorted(byKeyPath: "age", ascending: false).limit(4), expected: [4, 9, 3, 8]
                    ) { $0.id }
                ),
            ].flatMap { name, problems in problems.map { "\(name): \($0)" } }
        }
        #expect(problems == [])
    }

    @Test func listsAndLinkingObjects() async throws {
        let realm = try await Self.makeRealm()
        let problems = try await realm.read { realm in
            let ann = realm.object(ofType: Person.self, forPrimaryKey: 1)!
            let carl = realm.object(ofType: Person.self, forPrimaryKey: 3)!
            let seven = realm.object(ofType: Dog.self, forPrimaryKey: 7)!
            let five = realm.object(ofType: Dog.self, forPrimaryKey: 5)!
            return [
                ("list", collectionViolations(ann.dogs, expected: [12, 3, 7]) { $0.id }),
                ("empty list", collectionViolations(carl.dogs, expected: []) { $0.id }),
                ("linking objects", collectionViolations(seven.walkers, expected: [1, 2]) { $0.id }),
                ("no linking objects", collectionViolations(five.walkers, expected: []) { $0.id }),
                ("unmanaged list", collectionViolations(Person().dogs, expected: []) { $0.id }),
            ].flatMap { name, problems in problems.map { "\(name): \($0)" } }
        }
        #expect(problems == [])
    }

    /// The checker itself finds a collection that breaks the rules.
    @Test func theCheckerNoticesAWrongCollection() {
        #expect(!collectionViolations([1, 2, 3], expected: [1, 3, 2]) { $0 }.isEmpty)
        #expect(!collectionViolations([1, 2], expected: [1, 2, 3]) { $0 }.isEmpty)
        #expect(collectionViolations([1, 2, 3, 4], expected: [1, 2, 3, 4]) { $0 }.isEmpty)
    }
}
