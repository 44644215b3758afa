import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

final class WalkedDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(originProperty: "friends") var walkers: LinkingObjects<DogWalker>
}

final class DogWalker: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var friends: Map<String, WalkedDog?>
}

/// A `Map<String, WalkedDog?>` of a file realm against a plain `[String: Int?]` (key → dog id,
/// nil for no object) over seeded random edits: set, overwrite, remove a key, delete a target,
/// a write that throws and rolls back, and saving and reopening the file.
@Suite struct MapOfObjectsRandomizedTests {
    enum Operation: CustomStringConvertible {
        /// Sets a key to a dog (made when it does not exist) or to nil.
        case set(String, Int?)
        case remove(String)
        /// Deletes a dog, if it exists: every key naming it keeps nil.
        case deleteDog(Int)
        /// A write of these operations that throws: nothing of it stays.
        case rollback([Operation])
        /// Closes the realm (saving the file) and opens it again.
        case reopen

        var description: String {
            switch self {
            case .set(let k, let d): "[\(k)] = \(d.map { "dog \($0)" } ?? "nil")"
            case .remove(let k): "remove \(k)"
            case .deleteDog(let d): "delete dog \(d)"
            case .rollback(let operations): "rollback(\(operations.map(\.description).joined(separator: ", ")))"
            case .reopen: "reopen"
            }
        }

        static func random(_ rng: inout SeededRandomNumberGenerator, nested: Bool = false) -> Operation {
            let key = "k\(rng.int(in: 0...5))"
            switch rng.int(in: 0...19) {
            case 0...8: return .set(key, rng.int(in: 0...4) == 0 ? nil : rng.int(in: 0...4))
            case 9...12: return .remove(key)
            case 13...15: return .deleteDog(rng.int(in: 0...4))
            case 16...17 where !nested:
                return .rollback((0..<rng.int(in: 1...3)).map { _ in random(&rng, nested: true) })
            case 18 where !nested: return .reopen
            default: return .set(key, rng.int(in: 0...4))
            }
        }

        /// The plain model's step.
        func apply(to model: inout [String: Int?], dogs: inout Set<Int>) {
            switch self {
            case .set(let k, let d):
                model[k] = .some(d)
                if let d { dogs.insert(d) }
            case .remove(let k): model[k] = nil
            case .deleteDog(let d):
                guard dogs.remove(d) != nil else { return }
                for (k, v) in model where v == d { model[k] = .some(nil) }
            case .rollback, .reopen: break
            }
        }

        /// The realm's step, inside a write.
        func apply(in realm: isolated Realm) throws {
            let walker = realm.object(ofType: DogWalker.self, forPrimaryKey: 1)!
            switch self {
            case .set(let k, let d):
                guard let d else {
                    walker.friends[k] = .some(nil)
                    return
                }
                if let dog = realm.object(ofType: WalkedDog.self, forPrimaryKey: d) {
                    walker.friends[k] = dog
                } else {
                    let dog = WalkedDog()
                    dog.id = d
                    walker.friends[k] = dog  // unmanaged: added with the walker's map
                }
            case .remove(let k): walker.friends.removeObject(for: k)
            case .deleteDog(let d):
                if let dog = realm.object(ofType: WalkedDog.self, forPrimaryKey: d) { try realm.delete(dog) }
            case .rollback(let operations):
                for operation in operations { try operation.apply(in: realm) }
            case .reopen: break
            }
        }
    }

    struct Stop: Error {}

    @Test func matchesAPlainDictionaryThroughRollbacksAndReopening() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_MAP_OBJECTS_SEED") ?? 0x3a9_d065
        let steps = TestEnvironment.isLong ? 400 : 80
        var rng = SeededRandomNumberGenerator(seed: seed)
        var done: [String] = []
        let url = try makeTemporaryDirectory().appendingPathComponent("walkers.json")
        let configuration = Realm.Configuration(file: url, objectTypes: [DogWalker.self, WalkedDog.self])
        var realm: Realm? = try await openRealm(configuration)
        try await realm!.write { r in _ = try r.create(DogWalker.self, value: ["id": 1]) }
        var model: [String: Int?] = [:]
        var dogs = Set<Int>()
        for _ in 0..<steps {
            let operation = Operation.random(&rng)
            done.append(operation.description)
            let note = "seed \(seed) (LIVEOBJECTS_MAP_OBJECTS_SEED), operations: \(done.joined(separator: "; "))"
            switch operation {
            case .reopen:
                realm = nil
                for _ in 0..<1000 where FileStorage.isOpen(configuration) {
                    try await Task.sleep(for: .milliseconds(1))
                }
                realm = try await openRealm(configuration)
            case .rollback:
                await #expect(throws: Stop.self, "\(note)") {
                    try await realm!.write { r in
                        try operation.apply(in: r)
                        throw Stop()
                    }
                }
            default:
                try await realm!.write { r in try operation.apply(in: r) }
            }
            operation.apply(to: &model, dogs: &dogs)
            let (expected, expectedDogs) = (model, dogs)
            try await realm!.read { r in
                let walker = r.object(ofType: DogWalker.self, forPrimaryKey: 1)!
                let found = Dictionary(uniqueKeysWithValues: walker.friends.map { ($0.key, $0.value.map(\.id)) })
                #expect(found == expected, "\(note)")
                #expect(walker.friends.keys == expected.keys.sorted(), "\(note)")
                #expect(Set(r.objects(WalkedDog.self).map(\.id)) == expectedDogs, "\(note)")
                for dog in r.objects(WalkedDog.self) {
                    let entries = expected.values.filter { $0 == dog.id }.count
                    #expect(dog.walkers.count == entries, "dog \(dog.id)'s walkers; \(note)")
                }
                let violations = StoreInvariants.violations(in: r.store)
                #expect(violations.isEmpty, "\(violations); \(note)")
            }
        }
        realm = nil
        _ = realm
    }
}
