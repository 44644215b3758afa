import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Looking objects up by an integer primary key agrees with a plain model, whether the keys
/// line up with storage slots (objects created in key order, which lookups use to skip the
/// index) or stop doing so: deletions, slots reused by other keys, keys out of order, writes
/// that throw and roll back, in random order (seeded; the seed and operations are in the
/// message).
@Suite struct PrimaryKeyLookupTests {
    private struct Rollback: Error {}

    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func lookupsAgreeWithModel(seed: UInt64) async throws {
        let realm = try await openPets("pk-lookups-\(seed)")
        var rng = SeededRandomNumberGenerator(seed: seed)
        var model: [Int: String] = [:]
        var log: [String] = []
        var nextID = 0
        for step in 0..<300 {
            let choice = rng.next() % 10
            let other = Int(rng.next() % 40)
            let next = nextID
            switch choice {
            case 0...4:
                // The next ids, as an auto-increment gives them.
                let ids = (next..<(next + 1 + other % 4)).filter { model[$0] == nil }
                try await realm.write { realm in
                    for id in ids { _ = try realm.create(Dog.self, value: ["id": id, "name": "d\(id)"]) }
                }
                for id in ids { model[id] = "d\(id)" }
                nextID += 1 + other % 4
                log.append("create \(ids)")
            case 5:
                // An id out of order (it may take a freed slot).
                let id = next + other - 20
                guard model[id] == nil else { continue }
                try await realm.write { _ = try $0.create(Dog.self, value: ["id": id, "name": "o\(id)"]) }
                model[id] = "o\(id)"
                log.append("create \(id)")
            case 6, 7:
                let id = other * max(next, 1) / 40
                guard model[id] != nil else { continue }
                try await realm.write { realm in
                    try realm.delete(realm.object(ofType: Dog.self, forPrimaryKey: id)!)
                }
                model[id] = nil
                log.append("delete \(id)")
            case 8:
                // A write that creates, deletes, then throws: nothing stays.
                let id = other * max(next, 1) / 40
                guard model[next] == nil else { continue }
                await #expect(throws: Rollback.self) {
                    try await realm.write { realm in
                        _ = try realm.create(Dog.self, value: ["id": next, "name": "ghost"])
                        if let dog = realm.object(ofType: Dog.self, forPrimaryKey: id) { try realm.delete(dog) }
                        throw Rollback()
                    }
                }
                log.append("create \(next), delete \(id), roll back")
            default:
                guard other < 4 else { continue }
                try await realm.write { try $0.deleteAll() }
                model = [:]
                log.append("delete all")
            }
            let expected = model
            let mismatch = try await realm.read { realm in
                (-8..<(next + 8)).first { id in
                    let found = realm.object(ofType: Dog.self, forPrimaryKey: id)
                    return found?.name != expected[id] || (found.map { $0.id != id } ?? false)
                }
            }
            if let mismatch {
                Issue.record(
                    "seed \(seed) step \(step): lookup of \(mismatch) disagrees\n\(log.joined(separator: "\n"))")
                return
            }
        }
    }
}
