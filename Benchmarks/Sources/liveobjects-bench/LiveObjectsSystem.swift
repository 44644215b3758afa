import LiveObjects
import Synchronization

/// The LiveObjects models of the benchmark.
final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "owner") var dogs: LinkingObjects<Dog>
}

final class Dog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var owner: Person?
}

/// LiveObjects, used as its README shows: an in-memory realm, model objects added in one
/// write, reads inside `realm.read { }`.
final class LiveObjectsSystem: BenchSystem {
    static let name = "liveobjects"
    private static let counter = Counter()
    private(set) var realm: Realm?

    /// Opens a new, empty realm (a fresh identifier each time).
    private func openEmpty() async throws -> Realm {
        try await Realm.open(
            .init(identifier: "bench-\(Self.counter.next())", objectTypes: [Person.self, Dog.self]))
    }

    /// Inserts everything in one write. Timed around the whole `write` call, commit included.
    private static func insert(_ data: Dataset, into realm: Realm) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await realm.write { realm in
            var persons: [Person] = []
            persons.reserveCapacity(data.personCount)
            for i in 0..<data.personCount {
                let p = Person()
                p.id = i + 1
                p.name = data.personNames[i]
                p.age = data.personAges[i]
                try realm.add(p)
                persons.append(p)
            }
            for i in 0..<data.dogCount {
                let d = Dog()
                d.id = i + 1
                d.name = data.dogNames[i]
                d.age = data.dogAges[i]
                d.owner = persons[data.dogOwners[i] - 1]
                try realm.add(d)
            }
        }
        return seconds(start.duration(to: clock.now))
    }

    func insertAll(_ data: Dataset) async throws -> Sample {
        let realm = try await openEmpty()
        let elapsed = try await Self.insert(data, into: realm)
        let count = try await realm.read { $0.objects(Dog.self).count + $0.objects(Person.self).count }
        return Sample(seconds: elapsed, checksum: count)
    }

    func load(_ data: Dataset) async throws {
        let realm = try await openEmpty()
        _ = try await Self.insert(data, into: realm)
        self.realm = realm
    }

    func unload() { realm = nil }

    func pkLookup(_ data: Dataset) async throws -> Sample {
        try await realm!.read { realm in
            let clock = ContinuousClock()
            let start = clock.now
            var checksum = 0
            for id in data.pkLookupIds {
                let dog = realm.object(ofType: Dog.self, forPrimaryKey: id)!
                checksum &+= dog.age &+ dog.name.utf8.count
            }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }

    func filterUnindexed(_ data: Dataset) async throws -> Sample {
        try await realm!.read { realm in
            let clock = ContinuousClock()
            let start = clock.now
            let results = realm.objects(Dog.self).where {
                $0.age > 10 && $0.name.contains("a", options: .caseInsensitive)
            }
            let count = results.count
            let rows = results.values { (id: $0.id, name: $0.name) }
            let elapsed = seconds(start.duration(to: clock.now))
            return Sample(seconds: elapsed, checksum: filterChecksum(count: count, rows))
        }
    }

    func filterIndexedEq(_ data: Dataset) async throws -> Sample {
        try await realm!.read { realm in
            let clock = ContinuousClock()
            let start = clock.now
            let dogs = realm.objects(Dog.self)
            var checksum = 0
            for name in data.eqLookupNames {
                for id in dogs.where({ $0.name == name }).values(\.id) { checksum &+= id }
            }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }

    func indexedEqCount(_ data: Dataset) async throws -> Sample {
        try await realm!.read { realm in
            let clock = ContinuousClock()
            let start = clock.now
            let dogs = realm.objects(Dog.self)
            var checksum = 0
            for name in data.eqLookupNames { checksum &+= dogs.where { $0.name == name }.count }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }

    func toMany(_ data: Dataset) async throws -> Sample {
        try await realm!.read { realm in
            let clock = ContinuousClock()
            let start = clock.now
            var checksum = 0
            for id in data.toManyPersonIds {
                let person = realm.object(ofType: Person.self, forPrimaryKey: id)!
                for age in person.dogs.values(\.age) { checksum &+= age &+ 1 }
            }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }

    func inverse(_ data: Dataset) async throws -> Sample {
        try await realm!.read { realm in
            let clock = ContinuousClock()
            let start = clock.now
            var checksum = 0
            for id in data.inverseDogIds {
                let owner = realm.object(ofType: Dog.self, forPrimaryKey: id)!.owner!
                checksum &+= owner.id &+ owner.name.utf8.count
            }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }
}

extension LiveObjectsSystem {
    /// `realm.freeze()`: a `FrozenRealm`, read here from outside the realm's isolation.
    func freeze(_ data: Dataset) async throws -> Sample {
        let clock = ContinuousClock()
        let start = clock.now
        let frozen = await realm!.freeze()
        let count = await Task.detached { frozen.objects(Dog.self).count }.value
        return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: count)
    }
}

/// A thread-safe counter, for unique realm identifiers.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
}
