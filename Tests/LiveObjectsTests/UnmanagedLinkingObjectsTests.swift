import LiveObjects
import LiveObjectsTestSupport
import Testing

final class ShareOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(originProperty: "owner") var dogs: LinkingObjects<ShareDog>
    @Persisted(originProperty: "owner") var cats: LinkingObjects<ShareCat>
    @Persisted(originProperty: "sitter") var sat: LinkingObjects<ShareDog>
}

final class ShareDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var owner: ShareOwner?
    @Persisted var sitter: ShareOwner?
}

final class ShareCat: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var owner: ShareOwner?
}

/// The `LinkingObjects` of unmanaged objects are shared (one per element type and origin
/// property), and sharing them changes nothing a model object reads.
@Suite struct UnmanagedLinkingObjectsTests {
    @Test func unmanagedObjectsShareOneEmptyLinkingObjectsPerTypeAndOrigin() {
        let a = ShareOwner()
        let b = ShareOwner()
        #expect(a.dogs === b.dogs && a.cats === b.cats && a.sat === b.sat)
        // Same origin name, other element type; same element type, other origin.
        #expect(ObjectIdentifier(a.dogs) != ObjectIdentifier(a.cats))
        #expect(a.dogs !== a.sat)
        #expect(a.dogs.propertyName == "owner" && a.cats.propertyName == "owner" && a.sat.propertyName == "sitter")
        #expect(a.dogs.isEmpty && a.cats.isEmpty && a.sat.isEmpty && Array(a.dogs).isEmpty)
        #expect(a.dogs.description == "LinkingObjects<ShareDog>[]")
    }

    @Test func theSchemaAndManagedReadsAreUnchanged() async throws {
        let realm = try await openFreshRealm(objectTypes: [ShareOwner.self, ShareDog.self, ShareCat.self])
        #expect(realm.schema["ShareOwner"]?["dogs"]?.originProperty == "owner")
        #expect(realm.schema["ShareOwner"]?["cats"]?.objectType == "ShareCat")
        #expect(realm.schema["ShareOwner"]?["sat"]?.originProperty == "sitter")
        try await realm.write { r in
            let owners = (1...2).map { i in
                let o = ShareOwner()
                o.id = i
                return o
            }
            let unmanagedDogs = owners[1].dogs
            for (i, o) in owners.enumerated() {
                try r.add(o)
                let dog = ShareDog()
                dog.id = i + 1
                dog.owner = o
                dog.sitter = owners[0]
                try r.add(dog)
            }
            let cat = ShareCat()
            cat.id = 1
            cat.owner = owners[1]
            try r.add(cat)
            #expect(owners[0].dogs.map(\.id) == [1] && owners[1].dogs.map(\.id) == [2])
            #expect(owners[0].sat.map(\.id) == [1, 2] && owners[1].sat.isEmpty)
            #expect(owners[1].cats.map(\.id) == [1] && owners[0].cats.isEmpty)
            #expect(owners[0].dogs !== owners[1].dogs, "a managed object's reads are its own")
            #expect(unmanagedDogs.isEmpty && ShareOwner().dogs.isEmpty, "the shared one stays empty")
        }
        try await realm.read { r in
            let found = r.object(ofType: ShareOwner.self, forPrimaryKey: 1)
            let detached = try #require(found).detached()
            #expect(detached.dogs.isEmpty && detached.dogs === ShareOwner().dogs)
        }
    }
}

final class RaceOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(originProperty: "owner") var dogs: LinkingObjects<RaceDog>
    @Persisted(originProperty: "sitter") var sat: LinkingObjects<RaceDog>
}

final class RaceDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var owner: RaceOwner?
    @Persisted var sitter: RaceOwner?
}

extension UnmanagedLinkingObjectsTests {
    /// Objects of a type that no other test makes, made on several threads at once, the first
    /// ones among them racing to make the shared instances: every object gets the same one per
    /// origin property (the shared instances are found without a lock once made).
    @Test func objectsMadeOnManyThreadsAtOnceShareOnePerOrigin() async {
        let seen = await withTaskGroup(of: [ObjectIdentifier].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<500).flatMap { _ in
                        let owner = RaceOwner()
                        return [ObjectIdentifier(owner.dogs), ObjectIdentifier(owner.sat)]
                    }
                }
            }
            var all: [ObjectIdentifier] = []
            for await ids in group { all += ids }
            return all
        }
        let dogs = Set(stride(from: 0, to: seen.count, by: 2).map { seen[$0] })
        let sat = Set(stride(from: 1, to: seen.count, by: 2).map { seen[$0] })
        #expect(dogs.count == 1 && sat.count == 1 && dogs != sat)
        let owner = RaceOwner()
        #expect(dogs == [ObjectIdentifier(owner.dogs)] && owner.dogs.propertyName == "owner")
        #expect(sat == [ObjectIdentifier(owner.sat)] && owner.sat.propertyName == "sitter")
    }
}
