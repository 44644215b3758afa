import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// The store's last frozen copy (`Store.frozenCache`) across writes: let go when a write begins
/// if nothing else holds it (so that the write changes the columns in place), kept while a
/// frozen result holds it, and a held copy reads the values it was made with.
@Suite struct FrozenCacheTests {
    /// A realm with dogs 1...5 (names "Dog 1"...), ages 1...5.
    func openDogs() async throws -> Realm {
        let realm = try await openPets()
        try await realm.write { r in
            for id in 1...5 { _ = try r.create(Dog.self, value: ["id": id, "name": "Dog \(id)", "age": id]) }
        }
        return realm
    }

    @Test func anUnsharedFrozenCopyIsLetGoWhenAWriteBegins() async throws {
        let realm = try await openDogs()
        do {
            let frozen = await realm.freeze()
            #expect(frozen.object(ofType: Dog.self, forPrimaryKey: 1)?.age == 1)
        }
        #expect(try await realm.read { $0.store.frozenCache != nil }, "freezing keeps the copy for reuse")
        let cachedInWrite = try await realm.write { r in
            let cached = r.store.frozenCache != nil
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 10
            return cached
        }
        #expect(!cachedInWrite, "nothing else held the copy: the write began without it")
        let frozen = await realm.freeze()
        #expect(frozen.object(ofType: Dog.self, forPrimaryKey: 1)?.age == 10)
    }

    @Test func aHeldFrozenCopyStaysAndReadsAsItWas() async throws {
        let realm = try await openDogs()
        let held = await realm.freeze()
        let cachedInWrite = try await realm.write { r in
            let cached = r.store.frozenCache != nil
            for id in 1...5 { r.object(ofType: Dog.self, forPrimaryKey: id)!.age += 100 }
            return cached
        }
        #expect(cachedInWrite, "a held copy stays the cache")
        #expect((1...5).map { held.object(ofType: Dog.self, forPrimaryKey: $0)?.age } == (1...5).map { $0 })
        let now = await realm.freeze()
        #expect((1...5).map { now.object(ofType: Dog.self, forPrimaryKey: $0)?.age } == (101...105).map { $0 })
    }

    /// The commit's frozen state, as a sorted subscription delivers it: a change's snapshot
    /// still held keeps the copy (and reads its version after later writes); once the changes
    /// are dropped, the next write begins without it.
    @Test func aSubscriptionsSnapshotsAcrossWrites() async throws {
        let realm = try await openDogs()
        let changes = try await realm.read { r in
            try r.objects(Dog.self).where { $0.age > 2 }.sorted(byKeyPath: "name").changes()
        }
        var iterator = changes.makeAsyncIterator()
        _ = await iterator.next()
        /// Moves a dog across the filter; returns whether the store had a frozen copy when the
        /// write began, and the change delivered.
        func flip(_ id: Int) async throws -> (Bool, CollectionChange<Dog>) {
            let cached = try await realm.write { r in
                let cached = r.store.frozenCache != nil
                let dog = r.object(ofType: Dog.self, forPrimaryKey: id)!
                dog.age = dog.age > 2 ? 1 : 3
                return cached
            }
            return (cached, try #require(await iterator.next()))
        }
        let (_, first) = try await flip(1)
        let held = first.snapshot
        #expect(held.map(\.name) == ["Dog 1", "Dog 3", "Dog 4", "Dog 5"])
        do {
            let (cachedWhileHeld, second) = try await flip(2)
            #expect(cachedWhileHeld, "the first change's snapshot holds the copy")
            #expect(second.insertions == [1])
        }
        let (cachedAfterDropped, third) = try await flip(3)
        #expect(!cachedAfterDropped, "the second change's snapshot was dropped: nothing held the copy")
        #expect(third.deletions == [2])
        #expect(third.snapshot.map(\.name) == ["Dog 1", "Dog 2", "Dog 4", "Dog 5"])
        #expect(held.map(\.name) == ["Dog 1", "Dog 3", "Dog 4", "Dog 5"], "a held snapshot reads its version")
        #expect(held.map(\.age) == [3, 3, 4, 5])
    }
}
