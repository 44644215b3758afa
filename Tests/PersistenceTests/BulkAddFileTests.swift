import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// Many unmanaged dogs added in one write of a file realm, each linked by object to a managed
/// or an unmanaged owner or to none, as an app bulk-loads its data: after the file is saved and
/// opened again, every dog has its values and its owner, the name index finds each name's
/// dogs, and the store's invariants hold (seeded: `LIVEOBJECTS_BULK_ADD_SEED`).
@Suite struct BulkAddFileTests {
    struct Dogs: Equatable, Sendable {
        var byID: [Int: String] = [:]
        var owners: [Int: Int] = [:]
    }

    static func dogs(_ realm: Realm) async throws -> Dogs {
        try await realm.read { realm in
            var dogs = Dogs()
            for dog in realm.objects(Dog.self) {
                dogs.byID[dog.id] = "\(dog.name)/\(dog.age)"
                if let owner = dog.owner { dogs.owners[dog.id] = owner.id }
            }
            return dogs
        }
    }

    @Test(arguments: 0..<3)
    func addedDogsSurviveAReopening(run: Int) async throws {
        let seed = (TestEnvironment.seed("LIVEOBJECTS_BULK_ADD_SEED") ?? 0xF11E_AD15) &+ UInt64(run)
        var random = SeededRandomNumberGenerator(seed: seed)
        let url = try makeTemporaryDirectory().appendingPathComponent("bulk.realm")
        let configuration = Realm.Configuration(file: url, objectTypes: petModelTypes)
        let names = ["Rex", "Émile", "E\u{301}mile", "", "rex"]
        let plan = (0..<2_000).map { _ in
            (owner: random.below(8), name: random.below(names.count), age: random.below(20))
        }
        let written = try await withRealm(configuration) { realm in
            try await realm.write { realm in
                for id in 1...20 { _ = try realm.create(Person.self, value: ["id": id]) }
                let persons = (1...20).map { realm.object(ofType: Person.self, forPrimaryKey: $0)! }
                var fresh: [Person] = []
                for (i, step) in plan.enumerated() {
                    let dog = Dog()
                    dog.id = i + 1
                    dog.name = names[step.name]
                    dog.age = step.age
                    switch step.owner {
                    case 0..<5: dog.owner = persons[(i * 7) % persons.count]
                    case 5, 6:
                        if fresh.isEmpty || i % 3 == 0 {
                            let person = Person()
                            person.id = 100 + fresh.count
                            fresh.append(person)
                        }
                        dog.owner = fresh[i % fresh.count]
                    default: dog.owner = nil
                    }
                    try realm.add(dog)
                }
            }
            try await realm.save()
            return try await Self.dogs(realm)
        }
        #expect(written.byID.count == plan.count, "seed \(seed)")
        try await withRealm(configuration) { realm in
            let read = try await Self.dogs(realm)
            #expect(read == written, "seed \(seed): the reopened realm differs")
            // The owners as the plan gives them: a person of 1...20, or a new one (100 on).
            var expected: [Int: Int] = [:]
            var freshCount = 0
            for (i, step) in plan.enumerated() {
                switch step.owner {
                case 0..<5: expected[i + 1] = (i * 7) % 20 + 1
                case 5, 6:
                    if freshCount == 0 || i % 3 == 0 { freshCount += 1 }
                    expected[i + 1] = 100 + i % freshCount
                default: break
                }
            }
            let wrong = Set(read.owners.keys).union(expected.keys).sorted().filter { read.owners[$0] != expected[$0] }
            #expect(
                wrong.isEmpty,
                "seed \(seed): \(wrong.count) dogs' owners differ from the plan, as \(wrong.prefix(5).map { "dog \($0): \(read.owners[$0].map(String.init) ?? "none") instead of \(expected[$0].map(String.init) ?? "none")" })"
            )
            #expect(try await realm.read { StoreInvariants.violations(in: $0.store) } == [], "seed \(seed)")
            for name in Set(names) {
                let expected = plan.indices.filter { names[plan[$0].name] == name }.map { $0 + 1 }
                let found = try await realm.read { realm in
                    realm.objects(Dog.self).where { $0.name == name }.map(\.id).sorted()
                }
                #expect(found == expected.sorted(), "seed \(seed): name \(name.unicodeScalars.map(\.value))")
            }
        }
    }
}
