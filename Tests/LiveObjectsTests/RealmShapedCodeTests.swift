import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Functions an app keeps beside its models, passed to `write` and `read` as they are.
private func addKennel(_ realm: isolated Realm) throws -> Int {
    let ann = try realm.create(Person.self, value: ["id": 1, "name": "Ann"])
    for (id, name) in [(1, "Rex"), (2, "Fido")] {
        let dog = try realm.create(Dog.self, value: ["id": id, "name": name, "owner": ann])
        ann.dogs.append(dog)
    }
    return realm.objects(Dog.self).count
}

private func makeFido(_ realm: isolated Realm) throws -> Dog {
    try realm.create(Dog.self, value: ["id": 2, "name": "Fido"])
}

private func dogNames(_ realm: isolated Realm) -> [String] {
    realm.objects(Dog.self).sorted(by: \.id).map(\.name)
}

/// A player whose team is looked up by a synchronous getter, through the object's realm.
final class RosterPlayer: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var teamName = ""
    var team: RosterTeam? {
        realm?.access { [teamName] in $0.object(ofType: RosterTeam.self, forPrimaryKey: teamName) }
    }
}

final class RosterTeam: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var city = ""
}

/// Shapes of Realm code that compile as a Realm user writes them.
@Suite struct RealmShapedCodeTests {
    @Test func functionValuesAreWritesAndReads() async throws {
        let realm = try await openPets()
        #expect(try await realm.write(addKennel) == 2)
        #expect(try await realm.read(dogNames) == ["Rex", "Fido"])
    }

    /// `results.detached()` hands copies out of the realm together; objects that several of
    /// them link to are copied once.
    @Test func resultsAreDetachedTogether() async throws {
        let realm = try await openPets()
        _ = try await realm.write(addKennel)
        let dogs = try await realm.read { $0.objects(Dog.self).sorted(by: \.id).detached() }
        #expect(dogs.map(\.name) == ["Rex", "Fido"])
        #expect(dogs.allSatisfy { !$0.isManaged })
        let owners = dogs.compactMap(\.owner)
        #expect(owners.count == 2 && owners[0] === owners[1])
        #expect(owners[0].dogs.map(\.name) == ["Rex", "Fido"])
        #expect(owners[0].dogs[0] === dogs[0])
    }

    /// Copying between realms: a frozen object's detached copy is added to the other realm,
    /// with what it links to (Rex's owner, and her other dog).
    @Test func aFrozenObjectIsCopiedToAnotherRealm() async throws {
        let realm = try await openPets()
        _ = try await realm.write(addKennel)
        let frozen = try await realm.read { $0.object(ofType: Dog.self, forPrimaryKey: 1)?.freeze() }
        let rex = try #require(frozen)
        let other = try await openPets("other")
        try await other.write(adding: [rex.detached()])
        let copied = try await other.read { realm in
            realm.objects(Dog.self).map { "\($0.name) of \($0.owner?.name ?? "-")" }
        }
        #expect(copied == ["Rex of Ann", "Fido of Ann"])
        #expect(try await other.read { $0.objects(Person.self).first?.dogs.count } == 2)
    }

    /// Realm's copy between realms, `other.create(Dog.self, value: original)`: a frozen
    /// object is `Sendable`, so the write captures it; its links come along, and `.modified`
    /// updates a copy made before.
    @Test func createTakesAFrozenObjectFromAnotherRealm() async throws {
        let realm = try await openPets()
        _ = try await realm.write(addKennel)
        let rex = try #require(await realm.read { $0.object(ofType: Dog.self, forPrimaryKey: 1)?.freeze() })
        let other = try await openPets("other")
        let name = try await other.write { try $0.create(Dog.self, value: rex).owner?.name }
        #expect(name == "Ann")
        #expect(try await other.read { $0.objects(Dog.self).map(\.name).sorted() } == ["Fido", "Rex"])
        try await realm.write { $0.object(ofType: Dog.self, forPrimaryKey: 1)?.age = 9 }
        let older = try #require(await realm.read { $0.object(ofType: Dog.self, forPrimaryKey: 1)?.freeze() })
        try await other.write { try $0.create(Dog.self, value: older, update: .modified) }
        #expect(try await other.read { $0.object(ofType: Dog.self, forPrimaryKey: 1)?.age } == 9)
        await #expect(throws: LiveObjectsError.self) {
            try await other.write { try $0.create(Dog.self, value: older) }
        }
        // As a link inside a dictionary.
        let ann = try #require(await realm.read { $0.object(ofType: Person.self, forPrimaryKey: 1)?.freeze() })
        try await other.write { realm in
            _ = try realm.create(Dog.self, value: ["id": 3, "name": "Bolt", "owner": ann], update: .modified)
        }
        #expect(try await other.read { $0.object(ofType: Dog.self, forPrimaryKey: 3)?.owner?.name } == "Ann")
    }

    /// Realm's `realm.write { realm.create(…) }`: a body that ends with the object it made
    /// compiles, commits, and returns nothing; a body of several statements that returns
    /// nothing is still a plain write.
    @Test func aWriteEndingWithTheObjectItMadeCommits() async throws {
        let realm = try await openPets()
        try await realm.write { try $0.create(Dog.self, value: ["id": 1, "name": "Rex"]) }
        try await realm.write { realm in try realm.create(Person.self, value: ["id": 1, "name": "Ann"]) }
        try await realm.write { realm in
            let rex = realm.object(ofType: Dog.self, forPrimaryKey: 1)
            rex?.owner = realm.object(ofType: Person.self, forPrimaryKey: 1)
        }
        try await realm.write(makeFido)
        #expect(try await realm.read { $0.objects(Dog.self).sorted(by: \.id).map(\.name) } == ["Rex", "Fido"])
        #expect(try await realm.read { $0.object(ofType: Dog.self, forPrimaryKey: 1)?.owner?.name } == "Ann")
        // A body that throws after making its object changes nothing.
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { try $0.create(Dog.self, value: ["id": 1, "name": "again"]) }
        }
        #expect(try await realm.read { $0.objects(Dog.self).count } == 2)
    }

    /// Realm's `self.realm` in a model's getter: a live object finds its realm and reads it
    /// synchronously, on a realm of its own executor and on a main-actor one alike.
    @Test func aModelsGetterReadsItsRealmSynchronously() async throws {
        let configuration = Realm.Configuration(
            identifier: "roster-\(UUID())", objectTypes: [RosterPlayer.self, RosterTeam.self])
        let realm = try await Realm.open(configuration)
        let city = try await realm.write { realm in
            try realm.create(RosterTeam.self, value: ["name": "Mets", "city": "New York"])
            let ann = try realm.create(RosterPlayer.self, value: ["name": "Ann", "teamName": "Mets"])
            #expect(ann.realm === realm)
            return ann.team?.city
        }
        #expect(city == "New York")
        #expect(RosterPlayer().realm == nil)
        let frozen = try await realm.read { $0.object(ofType: RosterPlayer.self, forPrimaryKey: "Ann")?.freeze() }
        #expect(frozen?.teamName == "Mets")
        try await realm.close()

        let main = try await Realm.open(configuration, on: MainActor.shared)
        let team = await MainActor.run {
            main.access { realm in
                realm.objects(RosterPlayer.self).first.flatMap { $0.team?.name }
            }
        }
        #expect(team == nil, "a closed in-memory realm starts empty")
        try await main.write { realm in
            try realm.create(RosterTeam.self, value: ["name": "Cubs", "city": "Chicago"])
            try realm.create(RosterPlayer.self, value: ["name": "Bea", "teamName": "Cubs"])
        }
        let mainCity = await MainActor.run {
            main.access { $0.object(ofType: RosterPlayer.self, forPrimaryKey: "Bea")?.team?.city }
        }
        #expect(mainCity == "Chicago")
    }

    /// A frozen object reads every property as a member, as a frozen Realm object does: links
    /// as frozen targets (`rex.owner?.name`), lists and backlinks as frozen results, embedded
    /// objects as frozen objects.
    @Test func aFrozenObjectReadsLinksAndListsAsMembers() async throws {
        let realm = try await openPets()
        _ = try await realm.write(addKennel)
        try await realm.write { realm in
            let ann = realm.object(ofType: Person.self, forPrimaryKey: 1)
            let address = Address()
            address.city = "Oslo"
            ann?.address = address
            let toy = try realm.create(DogToy.self, value: ["id": 7, "name": "ball"])
            realm.object(ofType: Dog.self, forPrimaryKey: 1)?.toys.append(toy)
        }
        let frozen = try await realm.read { $0.object(ofType: Dog.self, forPrimaryKey: 1)?.freeze() }
        let rex = try #require(frozen)
        #expect(rex.owner?.name == "Ann")
        #expect(rex.owner?.dogs.map(\.name) == ["Rex", "Fido"])
        #expect(rex.owner?.address?.city == "Oslo")
        #expect(rex.toys.map(\.name) == ["ball"])
        #expect(rex.walkers.map(\.id) == [1])
        #expect(rex.toys.first?.dogs.map(\.id) == [1])
        let fido = try #require(await realm.read { $0.object(ofType: Dog.self, forPrimaryKey: 2)?.freeze() })
        #expect(fido.toys.isEmpty && fido.owner?.id == 1)
        try await realm.write { $0.object(ofType: Dog.self, forPrimaryKey: 1)?.owner = nil }
        #expect(rex.owner?.name == "Ann", "a frozen object keeps its version")
    }

    /// Detached objects handed to a `@Sendable` completion handler through a `Handoff`, taken
    /// once.
    @Test func detachedObjectsGoThroughASendableHandler() async throws {
        let realm = try await openPets()
        _ = try await realm.write(addKennel)
        let handoff = Handoff(try await realm.read { $0.objects(Dog.self).sorted(by: \.id).detached() })
        let names = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            let handler: @Sendable () -> Void = {
                let dogs = handoff.take() ?? []
                continuation.resume(returning: dogs.map(\.name))
            }
            Thread { handler() }.start()
        }
        #expect(names == ["Rex", "Fido"])
        #expect(handoff.take() == nil)
    }
}
