import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Links of many objects added in one write reach the backlink lists late (read from the link
/// column when the lists are next read): edits of those links in the same write, deletions,
/// reads in between and rollbacks must leave the lists exactly as the links say.
@Suite struct BacklinkRunTests {
    /// One write creates persons and many dogs linked to them, and at random changes, clears
    /// or deletes some dogs and reads a person's dogs in between; committed or thrown, every
    /// backlink list then equals the inverse of the links (seeded: `LIVEOBJECTS_BACKLINK_SEED`;
    /// the seed and the operations are in the message).
    @Test(arguments: 0..<6)
    func manyLinksInOneWrite(run: Int) async throws {
        let seed = (TestEnvironment.seed("LIVEOBJECTS_BACKLINK_SEED") ?? 0xB4C_0033) &+ UInt64(run)
        var random = SeededRandomNumberGenerator(seed: seed)
        let realm = try await openFreshRealm(objectTypes: [
            Person.self, Dog.self, DogToy.self, DogClub.self, Address.self,
        ])
        let throwsAtEnd = run % 3 == 2
        let operations = try await realm.write { realm -> [String] in
            var operations: [String] = []
            for id in 1...50 { _ = try realm.create(Person.self, value: ["id": id]) }
            operations.append("create persons 1...50")
            return operations
        }
        struct Rollback: Error {}
        var log = operations
        let steps: [(kind: Int, dog: Int, owner: Int)] = (0..<400).map { _ in
            (random.below(20), 1 + random.below(1_000), 1 + random.below(50))
        }
        do {
            try await realm.write { realm in
                let persons = (1...50).map { realm.object(ofType: Person.self, forPrimaryKey: $0)! }
                // As a Realm app adds objects made before the write (the links go in with the row).
                for id in 1...1_000 {
                    let dog = Dog()
                    dog.id = id
                    dog.owner = persons[(id * 7) % 50]
                    try realm.add(dog)
                }
                for step in steps {
                    guard let dog = realm.object(ofType: Dog.self, forPrimaryKey: step.dog) else { continue }
                    switch step.kind {
                    case 0..<8: dog.owner = realm.object(ofType: Person.self, forPrimaryKey: step.owner)
                    case 8..<10: dog.owner = nil
                    case 10..<12: try realm.delete(dog)
                    case 12..<14:
                        _ = realm.objects(Dog.self).where { $0.owner.id == step.owner }.count
                    default:
                        let id = 1_000 + step.dog
                        if realm.object(ofType: Dog.self, forPrimaryKey: id) == nil {
                            _ = try realm.create(Dog.self, value: ["id": id, "owner": persons[step.owner - 1]])
                        }
                    }
                }
                if throwsAtEnd { throw Rollback() }
            }
        } catch is Rollback {}
        log.append("\(steps.count) steps after 1,000 linked dogs\(throwsAtEnd ? ", then thrown" : "")")
        let violations = try await realm.read { StoreInvariants.violations(in: $0.store) }
        #expect(violations.isEmpty, "seed \(seed): \(violations); \(log) \(steps.prefix(40))")
        let dogs = try await realm.read { $0.objects(Dog.self).count }
        #expect(throwsAtEnd ? dogs == 0 : dogs > 900, "seed \(seed)")
        // A delete of a person nullifies the links of its dogs through the lists.
        try await realm.write { realm in try realm.delete(realm.object(ofType: Person.self, forPrimaryKey: 8)!) }
        let after = try await realm.read { realm in
            (StoreInvariants.violations(in: realm.store), realm.objects(Dog.self).where { $0.owner.id == 8 }.count)
        }
        #expect(after.0.isEmpty && after.1 == 0, "seed \(seed): \(after)")
    }
}
