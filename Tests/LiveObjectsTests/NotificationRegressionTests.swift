import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// A model with a list of strings, for old values of primitive lists.
final class Tagged: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var tags: List<String>
}

/// A weak reference handed out of a realm's isolation, read only after the realm is gone.
final class WeakReference: @unchecked Sendable {
    weak var object: AnyObject?
}

/// Focused tests for notification bugs found by the property test. Elements are read with
/// `drainBuffered` (every element of a commit is buffered when the write returns), so a missing
/// element fails the test instead of hanging it.
@Suite struct NotificationRegressionTests {
    func collect<T: Object>(_ changes: CollectionChanges<T>) async -> [CollectionChange<T>] {
        await drainBuffered(changes) { $0 }
    }

    func collect<T: Object>(_ changes: ObjectChanges<T>) async -> [ObjectChange<T>] {
        await drainBuffered(changes) { $0 }
    }

    /// Ann walks Rex and Fido; Bob walks Rex.
    func openWalkers() async throws -> Realm {
        let realm = try await openPets()
        try await realm.write { r in
            let ann = try r.create(Person.self, value: ["id": 1, "name": "Ann"])
            let bob = try r.create(Person.self, value: ["id": 2, "name": "Bob"])
            let rex = try r.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 1])
            let fido = try r.create(Dog.self, value: ["id": 2, "name": "Fido", "age": 2])
            _ = try r.create(Dog.self, value: ["id": 3, "name": "Max", "age": 3])
            ann.dogs.append(rex)
            ann.dogs.append(fido)
            bob.dogs.append(rex)
        }
        return realm
    }

    // A list operation changed the `LinkingObjects` of every element of the list, not only of
    // the element linked or unlinked; a move changed them all although no link changed.
    @Test func linkingObjectsChangeOnlyForTheObjectLinkedOrUnlinked() async throws {
        let realm = try await openWalkers()
        let (rex, walkers) = try await realm.read { r in
            let dogs = r.objects(Dog.self)
            return (
                r.object(ofType: Dog.self, forPrimaryKey: 1)!.changes(),
                try dogs.sorted(byKeyPath: "id").changes(keyPaths: ["walkers"])
            )
        }
        try await realm.write { r in
            let ann = r.object(ofType: Person.self, forPrimaryKey: 1)!
            ann.dogs.append(r.object(ofType: Dog.self, forPrimaryKey: 3)!)  // Max gains a walker
            ann.dogs.move(from: 0, to: 2)  // no walker changes
        }
        let rexChanges = await collect(rex)
        #expect(rexChanges.count == 1)  // the initial state only
        let changes = await collect(walkers)
        #expect(changes.count == 2)
        #expect(changes.last?.modifications == [2])  // Max only
    }

    // Object changes of a `LinkingObjects` property carried `nil` as the old value.
    @Test func linkingObjectsOldValues() async throws {
        let realm = try await openWalkers()
        let rex = try await realm.read { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.changes() }
        let (annKey, bobKey) = try await realm.read { r in
            (
                r.object(ofType: Person.self, forPrimaryKey: 1)!.objectKey!,
                r.object(ofType: Person.self, forPrimaryKey: 2)!.objectKey!
            )
        }
        try await realm.write { r in
            r.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.remove(at: 0)
        }
        let changes = await collect(rex)
        guard changes.count == 2, case .changed(_, let properties) = changes[1] else {
            Issue.record("expected a change, got \(changes)")
            return
        }
        #expect(properties.map(\.name) == ["walkers"])
        #expect(properties.first?.oldValue == .list([.object(annKey), .object(bobKey)]))
        #expect(properties.first?.newValue == .list([.object(bobKey)]))
    }

    // The old value of a list changed element by element and then set as a whole was the list
    // between the two changes.
    @Test func listOldValueBeforeEveryKindOfChange() async throws {
        let realm = try await openFreshRealm("tags", objectTypes: [Tagged.self])
        try await realm.write { r in
            let tagged = try r.create(Tagged.self, value: ["id": 1])
            tagged.tags.append("a")
        }
        let changes = try await realm.read { r in r.object(ofType: Tagged.self, forPrimaryKey: 1)!.changes() }
        try await realm.write { r in
            let tagged = r.object(ofType: Tagged.self, forPrimaryKey: 1)!
            tagged.tags.append("b")
            try tagged.setValue(["x", "y"], forKey: "tags")
            tagged.tags.insert("z", at: 0)
        }
        let elements = await collect(changes)
        guard elements.count == 2, case .changed(_, let properties) = elements[1] else {
            Issue.record("expected a change, got \(elements)")
            return
        }
        #expect(properties.first?.oldValue == ["a"])
        #expect(properties.first?.newValue == ["z", "x", "y"])
    }

    // With a key-path filter, changes of the properties the predicate or the sort read were
    // reported as modifications; `"owner"` counted changes of the owner's properties.
    @Test func keyPathFilterReportsOnlyTheNamedPaths() async throws {
        let realm = try await openQueryRealm()
        let (byAge, byOwner) = try await realm.read { r in
            (
                try r.objects(Dog.self).filter("age > 3").sorted(byKeyPath: "id").changes(keyPaths: ["name"]),
                try r.objects(Dog.self).sorted(byKeyPath: "id").changes(keyPaths: ["owner"])
            )
        }
        try await realm.write { r in
            r.object(ofType: Dog.self, forPrimaryKey: 2)!.age = 12  // stays in the results
            r.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Anna"  // Rex's and fido's owner
        }
        try await realm.write { r in
            r.object(ofType: Dog.self, forPrimaryKey: 2)!.name = "Fido"
            r.object(ofType: Dog.self, forPrimaryKey: 5)!.owner = r.object(ofType: Person.self, forPrimaryKey: 1)
        }
        let ageChanges = await collect(byAge)
        #expect(ageChanges.count == 2)
        #expect(ageChanges.last?.modifications == [0])  // fido renamed, in the second write
        let ownerChanges = await collect(byOwner)
        #expect(ownerChanges.count == 2)
        #expect(ownerChanges.last?.modifications == [4])  // file10's owner set
    }

    // Unfiltered subscriptions are deep one level; a change deeper along a predicate's path
    // that leaves membership alone is not a modification.
    @Test func deepPredicatePathsDoNotReportModifications() async throws {
        let realm = try await openWalkers()
        try await realm.write { r in
            let c1 = try r.create(DogClub.self, value: ["name": "c1"])
            let c2 = try r.create(DogClub.self, value: ["name": "c2"])
            c1.members.append(r.object(ofType: Person.self, forPrimaryKey: 1)!)
            c2.members.append(r.object(ofType: Person.self, forPrimaryKey: 1)!)
            _ = try r.create(Person.self, value: ["id": 3, "name": "Cy"])
        }
        let changes = try await realm.read { r in
            try r.objects(Dog.self).filter("ANY walkers.clubs.name == 'c1'").sorted(byKeyPath: "id").changes()
        }
        try await realm.write { r in
            // Two links away from the dogs: Ann's clubs' president.
            r.object(ofType: DogClub.self, forPrimaryKey: "c2")!.president = r.object(
                ofType: Person.self, forPrimaryKey: 3)
        }
        try await realm.write { r in
            r.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Anna"  // one link away
        }
        let elements = await collect(changes)
        #expect(elements.count == 2)
        #expect(elements.last?.modifications == [0, 1])
    }

    // A re-sorted row that kept its place was reported as a move (from i to i).
    @Test func reSortedRowsThatKeepTheirPlaceAreNotMoves() async throws {
        let realm = try await openWalkers()
        let changes = try await realm.read { r in try r.objects(Dog.self).sorted(byKeyPath: "age").changes() }
        try await realm.write { r in
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 0  // Rex stays first
            r.object(ofType: Dog.self, forPrimaryKey: 3)!.age = 9  // Max stays last
        }
        try await realm.write { r in
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 5  // Rex still sorts before Max
            try r.delete(r.object(ofType: Dog.self, forPrimaryKey: 2)!)
        }
        let elements = await collect(changes)
        #expect(elements.count == 3)
        #expect(elements[1].moves.isEmpty && elements[1].modifications == [0, 2])
        // Fido is deleted; Rex keeps its order relative to Max, the only other remaining dog.
        #expect(elements[2].deletions == [1] && elements[2].moves.isEmpty && elements[2].modifications == [0])
        #expect(elements[2].applied(to: elements[1].snapshot.keys) == elements[2].snapshot.keys)
    }

    // Results with a limit were not re-evaluated when a sort key outside the key-path filter
    // changed, so they missed objects moving in and out of the slice.
    @Test func slicedResultsFollowTheirSortKeys() async throws {
        let realm = try await openWalkers()
        let changes = try await realm.read { r in
            try r.objects(Dog.self).sorted(byKeyPath: "age").limit(2).changes(keyPaths: ["name"])
        }
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 3)!.age = 0 }
        let elements = await collect(changes)
        #expect(elements.count == 2)
        #expect(elements.last?.snapshot.map(\.id) == [3, 1])
        let fresh = try await realm.read { r in try r.objects(Dog.self).sorted(byKeyPath: "age").limit(2).map(\.id) }
        #expect(elements.last?.snapshot.map(\.id) == fresh)
    }

    // A rolled-back write that removed a link put the origin back at the end of the
    // `LinkingObjects`, so their order changed without any commit.
    @Test func linkingObjectsOrderSurvivesRollback() async throws {
        let realm = try await openWalkers()
        let before = try await realm.read { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.walkers.map(\.id) }
        #expect(before == [1, 2])
        await #expect(throws: CancellationError.self) {
            try await realm.write { r in
                r.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.remove(at: 0)
                throw CancellationError()
            }
        }
        let after = try await realm.read { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.walkers.map(\.id) }
        #expect(after == before)
    }

    // A realm subscription made during a write received that write's changeset, unlike every
    // other subscription, which starts after the commit.
    @Test func realmChangesSubscribedDuringAWriteStartAfterIt() async throws {
        let realm = try await openWalkers()
        let changes = try await realm.write { r -> RealmChanges in
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 7
            return try r.changes()
        }
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 8 }
        let elements = await drainBuffered(changes) { $0 }
        #expect(elements.map(\.version) == [await realm.version])
    }

    // An object created by a rolled-back write lent its key (slot and generation) to the next
    // object created, so a subscription made during that write followed an unrelated object.
    @Test func rolledBackObjectsDoNotLendTheirKeys() async throws {
        let realm = try await openWalkers()
        try await realm.beginWrite()
        let (key, changes) = try await realm.read { r in
            let cy = try r.create(Person.self, value: ["id": 3, "name": "Cy"])
            return (cy.objectKey!, cy.dogs.changes())
        }
        await realm.cancelWrite()
        let (newKey, found) = try await realm.write { r in
            let dan = try r.create(Person.self, value: ["id": 4, "name": "Dan"])
            dan.dogs.append(r.object(ofType: Dog.self, forPrimaryKey: 1)!)
            return (dan.objectKey!, try r.dynamicObject(ofType: "Person", key: key) != nil)
        }
        #expect(newKey != key)
        #expect(!found)
        let elements = await collect(changes)
        #expect(elements.count == 1 && elements[0].snapshot.isEmpty)
    }

    // A list holding an object twice reports both places as modified.
    @Test func listWithAnObjectTwice() async throws {
        let realm = try await openWalkers()
        let changes = try await realm.write { r in
            let ann = r.object(ofType: Person.self, forPrimaryKey: 1)!
            ann.dogs.append(r.object(ofType: Dog.self, forPrimaryKey: 1)!)  // Rex, Fido, Rex
            return ann.dogs.changes()
        }
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 4 }
        try await realm.write { r in r.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.remove(at: 0) }
        let elements = await collect(changes)
        #expect(elements.count == 3)
        #expect(elements[1].modifications == [0, 2] && elements[1].modificationsInNewIndices == [0, 2])
        #expect(elements[2].applied(to: elements[1].snapshot.keys) == elements[2].snapshot.keys)
        #expect(elements[2].snapshot.map(\.id) == [2, 1])
    }

    // Subscriptions were never finished when their realm went away (and, holding the storage,
    // kept it alive forever): a consumer waited for ever.
    @Test func droppingTheRealmEndsItsSubscriptions() async throws {
        var realm: Realm? = try await openWalkers()
        let (changes, storage) = try await realm!.read { r in
            let reference = WeakReference()
            reference.object = r.store
            return (r.objects(Dog.self).changes(), reference)
        }
        realm = nil
        // The realm's deinit runs on its executor, a moment later: it ends the subscription.
        let consumer = Task {
            var count = 0
            for await _ in changes { count += 1 }
            return count
        }
        let deadline = Date().addingTimeInterval(600)
        while storage.object != nil && Date() < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(storage.object == nil)
        guard storage.object == nil else {
            consumer.cancel()  // iterating would wait for ever
            return
        }
        #expect(await consumer.value == 1)
    }

    // Freezing the realm during a write copied the uncommitted state, labelled with the
    // version of the last commit.
    @Test func freezingDuringAWriteShowsTheCommittedState() async throws {
        let realm = try await openWalkers()
        let version = await realm.version
        try await realm.beginWrite()
        try await realm.read { r in
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 30
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "Rexy"  // an indexed property
            try r.delete(r.object(ofType: Dog.self, forPrimaryKey: 2)!)
            _ = try r.create(Dog.self, value: ["id": 9, "name": "New"])
            r.object(ofType: Person.self, forPrimaryKey: 2)!.dogs.append(r.object(ofType: Dog.self, forPrimaryKey: 3)!)
        }
        let frozen = await realm.freeze()
        #expect(frozen.version == version)
        #expect(frozen.objects(Dog.self).map(\.id).sorted() == [1, 2, 3])
        #expect(frozen.object(ofType: Dog.self, forPrimaryKey: 1)?.age == 1)
        #expect(frozen.object(ofType: Person.self, forPrimaryKey: 2)?.list(\.dogs).map(\.id) == [1])
        #expect(frozen.object(ofType: Dog.self, forPrimaryKey: 1)?.list(\.walkers).map(\.id) == [1, 2])
        #expect(try frozen.objects(Dog.self, where: "name == 'Rex'").map(\.id) == [1])
        #expect(try frozen.objects(Dog.self, where: "name == 'Rexy'").isEmpty)
        #expect(try frozen.objects(Dog.self, where: "name IN {'Fido', 'New'}").map(\.id) == [2])
        #expect(frozen.object(ofType: Dog.self, forPrimaryKey: 9) == nil)
        try await realm.commitWrite()
        let after = await realm.freeze()
        #expect(after.objects(Dog.self).map(\.id).sorted() == [1, 3, 9])
        #expect(frozen.objects(Dog.self).map(\.id).sorted() == [1, 2, 3])
    }
}
