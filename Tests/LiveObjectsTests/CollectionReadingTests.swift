import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Observation
import Testing

/// Iterating `Results` and `LinkingObjects`, and reading values with `values(_:)`, give what
/// reading element by element through the subscript gives: after deletions (slots reused by
/// later generations), inside a write, with nil links, across links, and when the read keeps
/// the object.
@Suite struct CollectionReadingTests {
    /// Dogs 1…n with owners 1…(n / 4) (every fifth dog has none); returns the realm.
    private func fill(_ n: Int, name: String = #function) async throws -> Realm {
        let realm = try await openPets(name)
        try await realm.write { realm in
            for p in 1...max(1, n / 4) {
                let person = try realm.create(Person.self, value: ["id": p, "name": "p\(p)", "age": 20 + p])
                if p % 2 == 0 { person.address = try Address(value: ["city": "c\(p % 3)"]) }
            }
            for d in 1...n {
                let owner = d % 5 == 0 ? nil : realm.object(ofType: Person.self, forPrimaryKey: 1 + d % max(1, n / 4))
                let dog = try realm.create(Dog.self, value: ["id": d, "name": "d\(d % 7)", "age": d % 13])
                dog.owner = owner
            }
        }
        return realm
    }

    /// What every way of reading a collection gives, one row of strings per element.
    private typealias Row = [String]

    private static func dogRow(_ dog: Dog) -> Row { [String(dog.id), String(dog.age), dog.owner?.name ?? "-"] }
    private static func personRow(_ person: Person) -> Row { [String(person.id), person.name, String(person.age)] }

    private func bySubscript<C: RandomAccessCollection>(_ c: C, _ row: (C.Element) -> Row) -> [Row]
    where C.Index == Int {
        (c.startIndex..<c.endIndex).map { row(c[$0]) }
    }

    private func byIteration<S: Sequence>(_ s: S, _ row: (S.Element) -> Row) -> [Row] {
        var rows: [Row] = []
        for element in s { rows.append(row(element)) }
        return rows
    }

    /// Checks every way of reading every collection of the realm against the subscript.
    private func checkAll(_ realm: isolated Realm, _ label: String) {
        let all = realm.objects(Dog.self)
        let filtered = all.where { $0.age > 4 }
        let lookup = all.where { $0.name == "d3" }
        let sorted = all.where { $0.age < 9 }.sorted(by: \.name)
        for (name, results) in [("all", all), ("filtered", filtered), ("lookup", lookup), ("sorted", sorted)] {
            let expected = bySubscript(results, Self.dogRow)
            #expect(byIteration(results, Self.dogRow) == expected, "\(label): \(name) iteration")
            #expect(results.values(Self.dogRow) == expected, "\(label): \(name) values")
            #expect(results.values(\.id) == results.map(\.id), "\(label): \(name) key path")
        }
        for person in realm.objects(Person.self) {
            let expected = bySubscript(person.dogs, Self.dogRow)
            #expect(person.dogs.values(Self.dogRow) == expected, "\(label): \(person.name).dogs values")
            #expect(person.dogs.values(\.owner?.id) == person.dogs.map(\.owner?.id))
        }
        for dog in all {
            // A to-one link read from its column agrees with its stored value.
            let stored = try? dog.value(forKey: "owner")
            #expect(
                dog.owner?.objectKey.map { PropertyValue.object($0) } ?? .null == stored,
                "\(label): dog \(dog.id) owner")
            if let owner = dog.owner {
                #expect(owner.isInvalidated == false)
                #expect(
                    owner.address?.city
                        == (try? owner.value(forKey: "address")).flatMap { value in
                            value == .null ? nil : "c\(owner.id % 3)"
                        })
            }
            let expected = bySubscript(dog.walkers, Self.personRow)
            #expect(byIteration(dog.walkers, Self.personRow) == expected, "\(label): dog \(dog.id) walkers iteration")
            #expect(dog.walkers.values(Self.personRow) == expected, "\(label): dog \(dog.id) walkers values")
            #expect(dog.walkers.values(\.age) == dog.walkers.map(\.age))
        }
    }

    @Test func readingAgreesWithSubscript() async throws {
        let realm = try await fill(60)
        // Lists hold some dogs twice.
        try await realm.write { realm in
            for person in realm.objects(Person.self) {
                for dog in realm.objects(Dog.self).where({ $0.age == person.id % 13 }) {
                    person.dogs.append(dog)
                    person.dogs.append(dog)
                }
            }
        }
        try await realm.read { realm in self.checkAll(realm, "fresh") }
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func readingAgreesAfterDeletionsAndReuse(seed: UInt64) async throws {
        print("CollectionReadingTests seed \(seed)")
        let realm = try await fill(80, name: "reuse-\(seed)")
        var rng = SeededRandomNumberGenerator(seed: seed)
        var nextID = 1000
        for round in 0..<6 {
            let deletions = (0..<10).map { _ in 1 + Int(rng.next() % 80) }
            let creations = Int(rng.next() % 12)
            let id = nextID
            try await realm.write { realm in
                for d in deletions {
                    if let dog = realm.object(ofType: Dog.self, forPrimaryKey: d) { try realm.delete(dog) }
                }
                // Embedded addresses are replaced (their slots reused), and some removed.
                for person in realm.objects(Person.self) where person.id % 3 == Int(round % 3) {
                    person.address = person.id % 2 == 0 ? try Address(value: ["city": "c\(person.id % 3)"]) : nil
                }
                // New dogs take the freed slots (later generations).
                for k in 0..<creations {
                    let dog = try realm.create(Dog.self, value: ["id": id + k, "name": "d\(k % 7)", "age": k % 13])
                    dog.owner = realm.object(ofType: Person.self, forPrimaryKey: 1 + k % 20)
                }
                // Inside the write, after the changes.
                self.checkAll(realm, "seed \(seed) round \(round) in write")
            }
            nextID += creations
            try await realm.read { realm in self.checkAll(realm, "seed \(seed) round \(round)") }
        }
    }

    @Test(arguments: [21, 22] as [UInt64])
    func frozenReadsAgreeWithLiveReads(seed: UInt64) async throws {
        print("CollectionReadingTests seed \(seed)")
        let realm = try await fill(60, name: "frozen-\(seed)")
        // A whole table without a free slot, frozen before the changes below.
        let whole = await realm.freeze()
        let filtered = try await realm.read { realm in realm.objects(Dog.self).where { $0.age < 5 }.freeze() }
        var rng = SeededRandomNumberGenerator(seed: seed)
        // Deletions and new dogs in the freed slots (later generations), then a freeze.
        let deletions = (0..<15).map { _ in 1 + Int(rng.next() % 60) }
        try await realm.write { realm in
            for d in deletions {
                if let dog = realm.object(ofType: Dog.self, forPrimaryKey: d) { try realm.delete(dog) }
            }
            for k in 0..<8 {
                let dog = try realm.create(Dog.self, value: ["id": 500 + k, "name": "d\(k)", "age": k])
                dog.owner = realm.object(ofType: Person.self, forPrimaryKey: 1 + k % 15)
            }
        }
        let frozen = await realm.freeze()
        let live = try await realm.read { realm in
            realm.objects(Dog.self).values { [String($0.id), String($0.age), $0.owner.map { String($0.id) } ?? "-"] }
        }
        let frozenRows = frozen.objects(Dog.self).map { dog in
            [String(dog.id), String(dog.age), dog.link(\.owner).map { String($0.id) } ?? "-"]
        }
        #expect(frozenRows == live)
        // Later writes do not reach the frozen copy.
        try await realm.write { realm in
            for dog in realm.objects(Dog.self).where({ $0.age < 3 }) { try realm.delete(dog) }
        }
        let again = frozen.objects(Dog.self).map { dog in
            [String(dog.id), String(dog.age), dog.link(\.owner).map { String($0.id) } ?? "-"]
        }
        #expect(again == live)
        #expect(whole.objects(Dog.self).map(\.id) == Array(1...60))
        #expect(whole.objects(Dog.self).keys.count == 60)
        #expect(filtered.map(\.id) == (1...60).filter { $0 % 13 < 5 })
        #expect(filtered.keys == filtered.indices.map { filtered.key(at: $0) })
    }

    /// Links added with new objects reach the backlink lists when they are next read, inside
    /// the write, and leave them when the write rolls back.
    @Test func backlinksOfNewObjectsAreSeenInTheWriteAndRolledBack() async throws {
        struct Rollback: Error {}
        let realm = try await fill(10)
        try await realm.write { realm in
            _ = try realm.create(Person.self, value: ["id": 100, "name": "new", "dogs": [["id": 200, "name": "pup"]]])
            let pup = realm.object(ofType: Dog.self, forPrimaryKey: 200)!
            #expect(pup.walkers.values(\.id) == [100])
            _ = try realm.create(Person.self, value: ["id": 101, "name": "other", "dogs": [pup]])
            _ = try realm.create(Person.self, value: ["id": 102, "name": "third", "dogs": [pup, pup]])
            #expect(pup.walkers.map(\.id) == [100, 101, 102, 102])
        }
        await #expect(throws: Rollback.self) {
            try await realm.write { realm in
                let rex = realm.object(ofType: Dog.self, forPrimaryKey: 3)!
                for id in 300..<340 {
                    _ = try realm.create(Person.self, value: ["id": id, "name": "p\(id)", "dogs": [rex]])
                }
                #expect(rex.walkers.count == 40)
                throw Rollback()
            }
        }
        try await realm.read { realm in
            #expect(realm.object(ofType: Dog.self, forPrimaryKey: 3)!.walkers.isEmpty)
            #expect(realm.object(ofType: Dog.self, forPrimaryKey: 200)!.walkers.map(\.id) == [100, 101, 102, 102])
        }
    }

    @Test func valuesThatKeepTheObjectGetDistinctObjects() async throws {
        let realm = try await fill(20)
        try await realm.write { realm in
            let rex = realm.object(ofType: Dog.self, forPrimaryKey: 4)!
            for person in realm.objects(Person.self) { person.dogs.append(rex) }
        }
        try await realm.read { realm in
            let dogs = realm.objects(Dog.self).where { $0.age > 2 }
            let kept = dogs.values { $0 }
            #expect(kept.map(\.id) == dogs.map(\.id))
            #expect(Set(kept.map(ObjectIdentifier.init)).count == kept.count)
            #expect(kept == Array(dogs))
            let owners = dogs.values(\.owner)
            #expect(owners.map { $0?.id } == dogs.map { $0.owner?.id })
            let walked = realm.objects(Dog.self).first { $0.walkers.count > 1 }!
            let linked = walked.walkers.values { $0 }
            #expect(linked == Array(walked.walkers))
            #expect(Set(linked.map(ObjectIdentifier.init)).count == linked.count)
        }
    }

    @Test func valuesOfEmptyAndUnmanagedCollections() async throws {
        let realm = try await fill(8)
        try await realm.read { realm in
            #expect(realm.objects(Dog.self).where { $0.age > 100 }.values(\.id).isEmpty)
            #expect(realm.objects(Dog.self).where { $0.name == "none" }.values(\.id).isEmpty)
            #expect(realm.objects(Dog.self).where { $0.id == 3 }.values(\.name) == ["d3"])
        }
        let person = Person()
        #expect(Dog().walkers.values(\.id).isEmpty)
        let rex = Dog()
        rex.id = 7
        person.dogs.append(rex)
        #expect(person.dogs.values(\.id) == [7])
    }

    @Test func valuesThrowWhatTheReadThrows() async throws {
        struct Stop: Error {}
        let realm = try await fill(10)
        try await realm.read { realm in
            var seen = 0
            #expect(throws: Stop.self) {
                _ = try realm.objects(Dog.self).values { dog throws(Stop) -> Int in
                    seen += 1
                    if seen == 4 { throw Stop() }
                    return dog.id
                }
            }
            #expect(seen == 4)
            // A failed first read leaves nothing recording the reads.
            #expect(throws: Stop.self) {
                _ = try realm.objects(Dog.self).values { _ throws(Stop) -> Int in throw Stop() }
            }
            #expect(realm.objects(Dog.self).values(\.id) == Array(1...10))
        }
    }

    @Test func valuesReadUnderObservationTrackingAreTracked() async throws {
        let realm = try await fill(6)
        let changed = try await realm.read { realm -> Bool in
            let dogs = realm.objects(Dog.self)
            nonisolated(unsafe) var fired = false
            let ages = withObservationTracking {
                dogs.values { $0.age }
            } onChange: {
                fired = true
            }
            #expect(ages == dogs.map(\.age))
            return fired
        }
        #expect(!changed)
    }
}
