import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@Suite struct NotificationTests {
    /// Reads the next element of an iterator.
    func next<I: AsyncIteratorProtocol>(_ iterator: inout I) async throws -> I.Element? {
        try await iterator.next()
    }

    /// A key-path filter that names no property is a typed error naming it, for results and
    /// for lists; the sequence ends at once instead of never reporting a modification.
    @Test func aMisspelledKeyPathFilterIsATypedError() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            let ann = try r.create(Person.self, value: ["id": 1, "name": "Ann"])
            ann.dogs.append(try r.create(Dog.self, value: ["id": 1, "name": "Rex"]))
        }
        func expectUnknown(_ label: String, _ subscribe: @Sendable (isolated Realm) -> Void) async {
            do {
                try await realm.read { r in subscribe(r) }
                Issue.record("\(label): expected an error")
            } catch let error as LiveObjectsError {
                #expect(error.code == .unknownProperty, "\(label): \(error)")
                #expect(error.objectType == "Dog", "\(label)")
                #expect(error.property?.hasSuffix("nme") == true, "\(label): \(error)")
            } catch {
                Issue.record("\(label): \(error)")
            }
        }
        await expectUnknown("results") { r in _ = r.objects(Dog.self).changes(keyPaths: ["nme"]) }
        await expectUnknown("list") { r in
            _ = r.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.changes(keyPaths: ["owner.nme"])
        }
        // A correct filter still works, and the realm took no subscription for the bad ones.
        let changes = try await realm.read { r in r.objects(Dog.self).changes(keyPaths: ["name"]) }
        var iterator = changes.makeAsyncIterator()
        #expect(try #require(await iterator.next()).isInitial)
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "Max" }
        #expect(try #require(await iterator.next()).modifications == [0])
    }

    /// Change sets print as a person reads them, not as nested type names.
    @Test func changeSetsDescribeThemselves() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            for (id, name) in [(1, "Bo"), (2, "Cy"), (3, "Al")] {
                _ = try r.create(Dog.self, value: ["id": id, "name": name])
            }
        }
        let changes = try await realm.read { r in r.objects(Dog.self).sorted(by: \.name).changes() }
        var iterator = changes.makeAsyncIterator()
        #expect(try #require(await iterator.next()).description == "initial (3 objects)")
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 3)!.name = "Di" }
        let change = try #require(await iterator.next())
        #expect(change.moves.map(\.description) == ["0 → 2"])
        #expect(change.description == "modifications [0], moves [0 → 2] (3 objects)", "\(change)")
        let objectChanges = try await realm.read { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.changes() }
        var objectIterator = objectChanges.makeAsyncIterator()
        _ = await objectIterator.next()
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "Ed" }
        guard case .changed(_, let properties)? = await objectIterator.next() else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.description) == [#"name: "Bo" → "Ed""#])
    }

    @Test func queryChangesAreExactAndIncremental() async throws {
        let realm = try await openQueryRealm()
        let changes = try await realm.read { r in
            r.objects(Dog.self).where { $0.age > 10 }.sorted(by: \.name).changes()
        }
        var iterator = changes.makeAsyncIterator()
        let initial = try #require(await iterator.next())
        #expect(initial.isInitial && initial.snapshot.map(\.name) == ["Banana", "Crème Brûlée", "fido"])
        var keys = initial.snapshot.keys

        // Rex (3) becomes 20: inserted at index 2 (Banana, Crème, Rex, fido).
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 20 }
        var change = try #require(await iterator.next())
        #expect(change.insertions == [2] && change.deletions.isEmpty && change.moves.isEmpty)
        #expect(change.applied(to: keys) == change.snapshot.keys)
        keys = change.snapshot.keys

        // Renaming fido to Aaron moves it to the front; Banana is deleted (age 1) in the same write.
        try await realm.write { r in
            r.object(ofType: Dog.self, forPrimaryKey: 2)!.name = "Aaron"
            r.object(ofType: Dog.self, forPrimaryKey: 8)!.age = 1
        }
        change = try #require(await iterator.next())
        #expect(change.deletions == [0])
        #expect(change.moves == [.init(from: 3, to: 0)])
        #expect(change.applied(to: keys) == change.snapshot.keys)
        #expect(change.snapshot.map(\.name) == ["Aaron", "Crème Brûlée", "Rex"])
        keys = change.snapshot.keys

        // A write that does not touch the results yields nothing; the next one does.
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 5)!.age = 2 }
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 4)!.age = 13 }
        change = try #require(await iterator.next())
        #expect(change.modifications == [1] && change.modificationsInNewIndices == [1])
        #expect(change.insertions.isEmpty && change.deletions.isEmpty)
        #expect(change.snapshot[1].age == 13)

        // Deep: renaming the owner of a dog in the results reports the dog as modified.
        try await realm.write { r in r.object(ofType: Person.self, forPrimaryKey: 3)!.name = "Emil" }
        change = try #require(await iterator.next())
        #expect(change.modifications == [1])
        let fresh = try await realm.read { r in r.objects(Dog.self).where { $0.age > 10 }.sorted(by: \.name).map(\.id) }
        #expect(change.snapshot.map(\.id) == fresh)
    }

    @Test func withoutNotifyingSkipsButKeepsState() async throws {
        let realm = try await openQueryRealm()
        let changes = try await realm.read { r in r.objects(Dog.self).where { $0.age > 10 }.changes() }
        var iterator = changes.makeAsyncIterator()
        let initial = try #require(await iterator.next())
        try await realm.write(withoutNotifying: [changes.token]) { r in
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 30
        }
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 3)!.age = 30 }
        let change = try #require(await iterator.next())
        #expect(change.insertions.count == 1)
        #expect(change.snapshot.count == initial.snapshot.count + 2)
    }

    @Test func objectChangesCarryOldAndNewValues() async throws {
        let realm = try await openQueryRealm()
        let changes = try await realm.read { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.changes() }
        var iterator = changes.makeAsyncIterator()
        guard case .initial(let frozen)? = await iterator.next() else {
            Issue.record("expected the initial state")
            return
        }
        #expect(frozen.name == "Rex")
        try await realm.write { r in
            let rex = r.object(ofType: Dog.self, forPrimaryKey: 1)!
            rex.name = "Max"
            rex.age = 4
        }
        guard case .changed(let after, let properties)? = await iterator.next() else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.name) == ["name", "age"])
        #expect(properties[0].oldValue == "Rex" && properties[0].newValue == "Max")
        #expect(properties[1].oldValue == 3 && properties[1].newValue == 4)
        #expect(after.name == "Max" && frozen.name == "Rex")
        try await realm.write { r in try r.delete(r.object(ofType: Dog.self, forPrimaryKey: 1)!) }
        guard case .deleted? = await iterator.next() else {
            Issue.record("expected deleted")
            return
        }
        #expect(await iterator.next() == nil)
        #expect(frozen.name == "Rex")  // frozen values stay valid
    }

    @Test func listAndLinkingObjectsChanges() async throws {
        let realm = try await openQueryRealm()
        let changes = try await realm.read { r in r.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.changes() }
        var iterator = changes.makeAsyncIterator()
        let initial = try #require(await iterator.next())
        #expect(initial.snapshot.map(\.id) == [1, 2])
        try await realm.write { r in
            let ann = r.object(ofType: Person.self, forPrimaryKey: 1)!
            ann.dogs.append(r.object(ofType: Dog.self, forPrimaryKey: 5)!)
            ann.dogs.move(from: 0, to: 1)
        }
        let change = try #require(await iterator.next())
        #expect(change.applied(to: initial.snapshot.keys) == change.snapshot.keys)
        #expect(change.snapshot.map(\.id) == [2, 1, 5])
    }

    @Test func realmChangesAndFreeze() async throws {
        let realm = try await openQueryRealm()
        let changes = try await realm.changes()
        var iterator = changes.makeAsyncIterator()
        let frozen = await realm.freeze()
        try await realm.write { r in _ = try r.create(Dog.self, value: ["id": 100, "name": "New"]) }
        let change = try #require(await iterator.next())
        #expect(change.tables["Dog"]?.insertions.count == 1)
        #expect(frozen.objects(Dog.self).count == 8)
        #expect(await realm.freeze().objects(Dog.self).count == 9)
        #expect(try frozen.objects(Dog.self, where: "age > 10").map(\.name) == ["fido", "Crème Brûlée", "Banana"])
    }

    @Test func subscribingDuringAWriteStartsAtTheCommit() async throws {
        let realm = try await openQueryRealm()
        let changes = try await realm.write { r -> CollectionChanges<Dog> in
            _ = try r.create(Dog.self, value: ["id": 50, "age": 50])
            return r.objects(Dog.self).where { $0.age > 40 }.changes()
        }
        var iterator = changes.makeAsyncIterator()
        let initial = try #require(await iterator.next())
        #expect(initial.isInitial && initial.snapshot.map(\.id) == [50])
    }
}
