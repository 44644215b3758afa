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

    /// A model class that no realm of these tests is opened with.
    private final class Stray: Object {
        @Persisted(primaryKey: true) var id = 0
    }

    /// Lookups find the object of the type asked for, among types whose integer keys overlap
    /// (a lookup in the wrong table would find an object of another type's key), and by a
    /// string key, through creates, deletes, changes and writes rolled back, in random order
    /// (seeded: `LIVEOBJECTS_READ_SEED` replays a run; the seed and operations are printed on
    /// failure). A type the realm was not opened with is found nowhere, and the read that
    /// asked throws `unknownType`.
    @Test func lookupsFindTheTypeAskedFor() async throws {
        let realm = try await openPets("pk-types")
        let failure = try await SeededRun.run(
            "lookupsFindTheTypeAskedFor", variable: "LIVEOBJECTS_READ_SEED", seed: 0x9E4D, steps: (200, 1_000)
        ) { steps, rng, log in
            var model = KeyedPets()
            for step in 0..<steps {
                try await model.step(realm, &rng, &log)
                if let mismatch = try await model.mismatch(in: realm) { return "step \(step): \(mismatch) disagrees" }
            }
            return nil
        }
        #expect(failure == nil)
        let error = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { realm in #expect(realm.object(ofType: Stray.self, forPrimaryKey: 1) == nil) }
        }
        #expect(error?.code == .unknownType)
    }
}

/// What a realm of the pet models holds by primary key, for ``PrimaryKeyLookupTests``: people,
/// dogs and toys by the same integer keys, clubs by name.
private struct KeyedPets {
    struct Rollback: Error {}
    var people: [Int: String] = [:]
    var dogs: [Int: String] = [:]
    var toys: [Int: String] = [:]
    var clubs: Set<String> = []

    /// One random write, applied to the realm and to the model.
    mutating func step(_ realm: Realm, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]) async throws {
        let id = Int(rng.next() % 24)
        let club = "c\(rng.next() % 12)"
        switch rng.next() % 6 {
        case 0:
            guard people[id] == nil, dogs[id] == nil, toys[id] == nil else { return }
            try await realm.write { realm in
                _ = try realm.create(Person.self, value: ["id": id, "name": "p\(id)"])
                _ = try realm.create(Dog.self, value: ["id": id, "name": "d\(id)"])
                _ = try realm.create(DogToy.self, value: ["id": id, "name": "t\(id)"])
            }
            (people[id], dogs[id], toys[id]) = ("p\(id)", "d\(id)", "t\(id)")
            log.append("create \(id) of each type")
        case 1:
            guard dogs[id] != nil else { return }
            try await realm.write { try $0.delete($0.object(ofType: Dog.self, forPrimaryKey: id)!) }
            dogs[id] = nil
            log.append("delete dog \(id)")
        case 2:
            guard let name = people[id] else { return }
            try await realm.write { $0.object(ofType: Person.self, forPrimaryKey: id)!.name = name + "'" }
            people[id] = name + "'"
            log.append("rename person \(id)")
        case 3:
            guard !clubs.contains(club) else { return }
            try await realm.write { _ = try $0.create(DogClub.self, value: ["name": club]) }
            clubs.insert(club)
            log.append("create club \(club)")
        case 4:
            guard clubs.contains(club) else { return }
            try await realm.write { try $0.delete($0.object(ofType: DogClub.self, forPrimaryKey: club)!) }
            clubs.remove(club)
            log.append("delete club \(club)")
        default:
            // Creates and deletes of several types, then a throw: nothing stays.
            let (hasPerson, hasClub) = (people[id] != nil, clubs.contains(club))
            await #expect(throws: Rollback.self) {
                try await realm.write { realm in
                    if !hasPerson { _ = try realm.create(Person.self, value: ["id": id, "name": "ghost"]) }
                    if let toy = realm.object(ofType: DogToy.self, forPrimaryKey: id) { try realm.delete(toy) }
                    if !hasClub { _ = try realm.create(DogClub.self, value: ["name": club]) }
                    throw Rollback()
                }
            }
            log.append("create person \(id), delete toy \(id), create club \(club), roll back")
        }
    }

    /// The first lookup whose answer is not the model's, if any.
    func mismatch(in realm: Realm) async throws -> String? {
        let expected = self
        return try await realm.read { realm -> String? in
            for id in -2..<26 {
                if realm.object(ofType: Person.self, forPrimaryKey: id)?.name != expected.people[id] {
                    return "person \(id)"
                }
                if realm.object(ofType: Dog.self, forPrimaryKey: id)?.name != expected.dogs[id] { return "dog \(id)" }
                if realm.object(ofType: DogToy.self, forPrimaryKey: id)?.name != expected.toys[id] {
                    return "toy \(id)"
                }
            }
            for n in 0..<12
            where (realm.object(ofType: DogClub.self, forPrimaryKey: "c\(n)")?.name == "c\(n)")
                != expected.clubs.contains("c\(n)")
            {
                return "club c\(n)"
            }
            return nil
        }
    }
}
