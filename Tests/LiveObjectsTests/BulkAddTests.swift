import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Many unmanaged objects added in one write, each linked to an owner by object, as an app
/// bulk-loads its data: the owner may be live, deleted in the same write, rolled back, in a
/// slot reused after a deletion, unmanaged (added with the dog) or nil. Each add either adds
/// the dog with exactly its values and owner or fails with `objectInvalidated` and adds
/// nothing; the name index, a frozen copy and the change set then agree with a plain model.
@Suite struct BulkAddTests {
    /// The names the dogs draw from: repeated names, and names equal only under canonical
    /// equivalence (precomposed and decomposed accents, which one index entry must hold).
    static let names = [
        "Rex", "Fido", "Émile", "E\u{301}mile", "Zoë", "Zoe\u{308}", "", "rex", "Ålborg", "A\u{30A}lborg",
    ]

    /// What a dog's owner is when the dog is added.
    enum OwnerKind: String, CaseIterable {
        case live, deleted, rolledBack, unmanaged, none
    }

    /// One dog of the model: its values and its owner's id (nil: no owner).
    struct ModelDog: Equatable {
        var name: String
        var age: Int
        var owner: Int?
    }

    /// The dogs' values, owners and name index against a plain model (seeded:
    /// `LIVEOBJECTS_BULK_ADD_SEED`; the seed and the operations are in the messages). Odd runs
    /// reuse the deleted persons' slots first (later generations); every fourth run throws at
    /// the end of the write, which must leave no dog.
    @Test(arguments: 0..<8)
    func addedDogsMatchAPlainModel(run: Int) async throws {
        let seed = (TestEnvironment.seed("LIVEOBJECTS_BULK_ADD_SEED") ?? 0xB01C_AD15) &+ UInt64(run)
        var random = SeededRandomNumberGenerator(seed: seed)
        let realm = try await openPets()
        try await realm.write { realm in
            for id in 1...60 { _ = try realm.create(Person.self, value: ["id": id, "name": "P\(id)"]) }
        }
        let changes = try await realm.read { $0.objects(Dog.self).changes() }
        var iterator = changes.makeAsyncIterator()
        _ = await iterator.next()
        let reusesSlots = run % 2 == 1
        let throwsAtEnd = run % 4 == 3
        let deleted = Set((0..<8).map { _ in 1 + random.below(60) })
        let plan: [(kind: OwnerKind, pick: Int, name: Int, age: Int)] = (0..<3_000).map { _ in
            (
                OwnerKind.allCases[random.below(OwnerKind.allCases.count)], random.below(1_000),
                random.below(Self.names.count), random.below(30)
            )
        }
        struct Rollback: Error {}
        var model: [Int: ModelDog] = [:]
        var log: [String] = ["deleted \(deleted.sorted())", reusesSlots ? "slots reused" : "no slot reused"]
        do {
            let (added, notes) = try await realm.write { realm in
                let added = try Self.addDogs(plan, to: realm, deleting: deleted, reusingSlots: reusesSlots)
                if throwsAtEnd { throw Rollback() }
                return added
            }
            model = added
            log += notes
        } catch is Rollback {
            log.append("thrown at the end")
        }
        let context = "seed \(seed), run \(run): \(log.prefix(60))"
        let stored = try await realm.read { realm in
            Dictionary(
                uniqueKeysWithValues: realm.objects(Dog.self).map {
                    ($0.id, ModelDog(name: $0.name, age: $0.age, owner: $0.owner?.id))
                })
        }
        #expect(Self.differences(stored, model) == [], "\(context)")
        #expect(try await realm.read { StoreInvariants.violations(in: $0.store) } == [], "\(context)")
        // The name index: every name's dogs, equal names under canonical equivalence together.
        for name in Set(Self.names) {
            let expected = model.filter { $0.value.name == name }.keys.sorted()
            let found = try await realm.read { realm in
                realm.objects(Dog.self).where { $0.name == name }.map(\.id).sorted()
            }
            #expect(found == expected, "name \(name.unicodeScalars.map(\.value)): \(context)")
        }
        let frozen = try await realm.read { $0.freeze() }
        let frozenDogs = Dictionary(
            uniqueKeysWithValues: frozen.objects(Dog.self).map {
                ($0.id, ModelDog(name: $0.name, age: $0.age, owner: $0.owner?.id))
            })
        #expect(Self.differences(frozenDogs, model) == [], "frozen: \(context)")
        if !throwsAtEnd {
            let change = try #require(await iterator.next())
            #expect(change.insertions.count == model.count && change.deletions.isEmpty, "\(change): \(context)")
        }
    }

    /// The first dogs (by id) that `found` and `expected` differ on, each as its id and both
    /// versions.
    private static func differences(_ found: [Int: ModelDog], _ expected: [Int: ModelDog]) -> [String] {
        Set(found.keys).union(expected.keys).sorted().filter { found[$0] != expected[$0] }.prefix(10).map {
            "dog \($0): \(found[$0].map { "\($0)" } ?? "none") instead of \(expected[$0].map { "\($0)" } ?? "none")"
        }
    }

    /// Adds a dog per step of `plan` (after deleting the persons of `deleted`, reusing their
    /// slots if asked, and rolling back two added persons), and returns the dogs now stored as
    /// the model expects them, with notes of what went other than expected.
    private static func addDogs(
        _ plan: [(kind: OwnerKind, pick: Int, name: Int, age: Int)], to realm: isolated Realm,
        deleting deleted: Set<Int>,
        reusingSlots: Bool
    ) throws -> ([Int: ModelDog], [String]) {
        var log: [String] = []
        let live = (1...60).filter { !deleted.contains($0) }.map {
            realm.object(ofType: Person.self, forPrimaryKey: $0)!
        }
        let gone = deleted.sorted().map { realm.object(ofType: Person.self, forPrimaryKey: $0)! }
        for person in gone { try realm.delete(person) }
        var owners = live
        if reusingSlots {
            // New persons take the deleted ones' slots, at a later generation.
            for id in 61..<61 + deleted.count { owners.append(try realm.create(Person.self, value: ["id": id])) }
        }
        // Two persons added and rolled back (the third's key is taken): their handles stay.
        let rolledBack = [Person(), Person()]
        for (i, person) in rolledBack.enumerated() { person.id = 101 + i }
        let taken = Person()
        taken.id = live[0].id
        #expect(throws: LiveObjectsError.self) { try realm.add(rolledBack + [taken]) }
        var model: [Int: ModelDog] = [:]
        var unmanaged: [Person] = []
        for (i, step) in plan.enumerated() {
            let dog = Dog()
            dog.id = i + 1
            dog.name = names[step.name]
            dog.age = step.age
            var expected: Int?
            var fails = false
            switch step.kind {
            case .live:
                dog.owner = owners[step.pick % owners.count]
                expected = dog.owner!.id
            case .deleted:
                dog.owner = gone[step.pick % gone.count]
                fails = true
            case .rolledBack:
                dog.owner = rolledBack[step.pick % rolledBack.count]
                fails = true
            case .unmanaged:
                // A new person, or one added with an earlier dog (managed by now).
                if unmanaged.isEmpty || step.pick % 3 == 0 {
                    let person = Person()
                    person.id = 1_000 + unmanaged.count
                    unmanaged.append(person)
                }
                dog.owner = unmanaged[step.pick % unmanaged.count]
                expected = dog.owner!.id
            case .none:
                expected = nil
            }
            do {
                try realm.add(dog)
                if fails { log.append("dog \(dog.id) added with a \(step.kind) owner") }
                model[dog.id] = ModelDog(name: dog.name, age: dog.age, owner: expected)
            } catch {
                if !fails || error.code != .objectInvalidated {
                    log.append("dog \(dog.id) with a \(step.kind) owner failed: \(error)")
                }
                #expect(fails && error.code == .objectInvalidated, "dog \(dog.id), owner \(step.kind): \(error)")
                // A failed add leaves the dog unmanaged.
                #expect(!dog.isManaged)
            }
        }
        log.append("\(plan.count) dogs, \(model.count) added")
        return (model, log)
    }
}
