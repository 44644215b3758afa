import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Typed conditions built from the object's own properties, from links and from lists agree
/// with a plain model: the usual lookup (`$0.name == n` on an indexed property, counted and
/// read), on all objects and on results already filtered, the primary key, an equality inside
/// `&&` and `!`, `!=`, a link's property (`$0.owner.name`), a list's (`$0.dogs.name`) and a
/// subquery's count; through creates, renames, owners changed, deletes, and writes that throw
/// (checked inside the write before it rolls back); frozen copies keep the count they had, and
/// a subscription to a lookup delivers the model's count. Seeded (`LIVEOBJECTS_READ_SEED`
/// replays a run; the seed and operations are printed on failure).
@Suite struct TypedLookupTests {
    /// What a dog holds, in the model.
    struct DogRow: Equatable, Sendable {
        var name: String
        var age: Int
        var owner: Int?
    }

    /// The model: dogs by id, and each person's name.
    struct Model: Sendable {
        var dogs: [Int: DogRow] = [:]
        let people = [0: "Ann", 1: "Bob", 2: "Ann", 3: "Cy"]
    }

    /// Names in ASCII and not, and canonically equivalent spellings, which `==` calls equal and
    /// the index must find together: "\u{212A}ay" (KELVIN SIGN) is "Kay", "Ren\u{E9}e" (é
    /// precomposed) is "Rene\u{301}e" (e and a combining acute), and a name past 16 bytes with
    /// a GREEK QUESTION MARK is the same name with ";".
    static let names = [
        "Rex", "Fido", "Émile", "a longer name than fits inline", "Дружок", "Kay", "\u{212A}ay", "Ren\u{E9}e",
        "Rene\u{301}e", "a name past sixteen bytes;", "a name past sixteen bytes\u{037E}",
    ]
    /// The name the subscription and the frozen copies watch.
    static let watched = "Rex"

    @Test func typedConditionsAgreeWithAModel() async throws {
        let realm = try await openPets("typed-lookups")
        try await realm.write { realm in
            for (id, name) in Model().people { _ = try realm.create(Person.self, value: ["id": id, "name": name]) }
        }
        let changes = try await realm.read { realm in
            realm.objects(Dog.self).where { $0.name == Self.watched }.changes()
        }
        var deliveries = changes.makeAsyncIterator()
        let initial = await deliveries.next()?.snapshot.count
        #expect(initial == 0)
        let failure = try await SeededRun.run(
            "typedConditionsAgreeWithAModel", variable: "LIVEOBJECTS_READ_SEED", seed: 0x7E9D, steps: (60, 300)
        ) { steps, rng, log in
            var model = Model()
            var nextID = 0
            for step in 0..<steps {
                let frozen = try await realm.read { realm in
                    realm.objects(Dog.self).where { $0.name == Self.watched }.freeze()
                }
                let watchedBefore = model.dogs.values.filter { $0.name == Self.watched }.count
                if let mismatch = try await Self.write(realm, &model, &nextID, &rng, &log) {
                    return "step \(step): \(mismatch)"
                }
                // A write that always changes the watched lookup, so that a change is delivered.
                let sentinel = model.dogs[-1] == nil
                try await realm.write { realm in
                    if sentinel {
                        _ = try realm.create(Dog.self, value: ["id": -1, "name": Self.watched, "age": 3])
                    } else {
                        try realm.delete(realm.object(ofType: Dog.self, forPrimaryKey: -1)!)
                    }
                }
                model.dogs[-1] = sentinel ? DogRow(name: Self.watched, age: 3, owner: nil) : nil
                log.append(sentinel ? "create sentinel" : "delete sentinel")
                if frozen.count != watchedBefore {
                    return "step \(step): a frozen lookup counts \(frozen.count), not \(watchedBefore)"
                }
                let expected = model.dogs.values.filter { $0.name == Self.watched }.count
                // The first write of the step may have delivered a change of its own first.
                var delivered = await deliveries.next()?.snapshot.count
                if delivered != expected { delivered = await deliveries.next()?.snapshot.count }
                if delivered != expected {
                    return "step \(step): the subscription delivered \(String(describing: delivered)), not \(expected)"
                }
                let probe = rng.int(-2...nextID + 2)
                let checked = model
                if let mismatch = try await realm.read({ Self.mismatch($0, checked, probe: probe) }) {
                    return "step \(step): \(mismatch)"
                }
            }
            return nil
        }
        #expect(failure == nil)
    }

    /// One random write, applied to the model too (a write that throws is checked against the
    /// model with its changes before it rolls back, then leaves the model as it was).
    static func write(
        _ realm: Realm, _ model: inout Model, _ nextID: inout Int, _ rng: inout SeededRandomNumberGenerator,
        _ log: inout [String]
    ) async throws -> String? {
        let ids = model.dogs.keys.filter { $0 >= 0 }.sorted()
        let picked = ids.isEmpty ? nil : ids[rng.int(0...ids.count - 1)]
        let name = names[rng.int(0...names.count - 1)]
        let owner: Int? = rng.chance(0.3) ? nil : rng.int(0...3)
        let age = rng.int(0...9)
        switch rng.int(0...9) {
        case 0...3:
            let new = (nextID..<nextID + rng.int(1...6)).map {
                ($0, DogRow(name: names[$0 % names.count], age: ($0 * 7) % 10, owner: owner))
            }
            nextID += new.count
            try await realm.write { realm in
                for (id, row) in new { try create(realm, id, row) }
            }
            for (id, row) in new { model.dogs[id] = row }
            log.append("create \(new.map(\.0)) owned by \(String(describing: owner))")
        case 4, 5:
            guard let picked else { return nil }
            try await realm.write { realm in realm.object(ofType: Dog.self, forPrimaryKey: picked)!.name = name }
            model.dogs[picked]?.name = name
            log.append("rename \(picked) \(name)")
        case 6:
            guard let picked else { return nil }
            try await realm.write { realm in try setOwner(realm, picked, owner) }
            model.dogs[picked]?.owner = owner
            log.append("owner of \(picked): \(String(describing: owner))")
        case 7:
            guard let picked else { return nil }
            try await realm.write { realm in try realm.delete(realm.object(ofType: Dog.self, forPrimaryKey: picked)!) }
            model.dogs[picked] = nil
            log.append("delete \(picked)")
        case 8:
            // Created, renamed and checked inside the write, then thrown away.
            var changed = model
            changed.dogs[nextID] = DogRow(name: name, age: age, owner: owner)
            if let picked { changed.dogs[picked]?.name = names[(names.firstIndex(of: name)! + 1) % names.count] }
            let (id, renamed, checked, probe) = (
                nextID, changed.dogs[picked ?? -2]?.name, changed, rng.int(-2...nextID)
            )
            let inside = try await realm.writeRollingBack { realm -> String? in
                try create(realm, id, DogRow(name: name, age: age, owner: owner))
                if let picked, let renamed { realm.object(ofType: Dog.self, forPrimaryKey: picked)!.name = renamed }
                return mismatch(realm, checked, probe: probe)
            }
            log.append("create \(id) \(name), rename \(String(describing: picked)), roll back")
            if let inside { return "inside the write: \(inside)" }
        default:
            guard let picked else { return nil }
            try await realm.write { realm in realm.object(ofType: Dog.self, forPrimaryKey: picked)!.age = age }
            model.dogs[picked]?.age = age
            log.append("age of \(picked): \(age)")
        }
        return nil
    }

    static func create(_ realm: isolated Realm, _ id: Int, _ row: DogRow) throws {
        let dog = try realm.create(Dog.self, value: ["id": id, "name": row.name, "age": row.age])
        if let owner = row.owner { try setOwner(realm, id, owner, dog: dog) }
    }

    /// Sets a dog's owner, keeping the owners' lists of dogs in step.
    static func setOwner(_ realm: isolated Realm, _ id: Int, _ owner: Int?, dog: Dog? = nil) throws {
        let dog = dog ?? realm.object(ofType: Dog.self, forPrimaryKey: id)!
        if let old = dog.owner, let i = old.dogs.firstIndex(where: { $0.id == id }) { old.dogs.remove(at: i) }
        dog.owner = owner.map { realm.object(ofType: Person.self, forPrimaryKey: $0)! }
        dog.owner?.dogs.append(dog)
    }

    /// The first typed condition whose count or rows differ from the model's, if any.
    static func mismatch(_ realm: isolated Realm, _ model: Model, probe: Int) -> String? {
        let dogs = realm.objects(Dog.self)
        let people = realm.objects(Person.self)
        let ids = { (rows: Results<Dog>) in rows.values { $0.id }.sorted() }
        let expected = { (test: (DogRow) -> Bool) in model.dogs.filter { test($0.value) }.keys.sorted() }
        for name in names + ["nobody"] {
            let bound = name.count % 10
            let cases: [(String, Results<Dog>, [Int])] = [
                ("name == \(name)", dogs.where { $0.name == name }, expected { $0.name == name }),
                (
                    "age > \(bound), then name == \(name)", dogs.where { $0.age > bound }.where { $0.name == name },
                    expected { $0.age > bound && $0.name == name }
                ),
                (
                    "name == \(name) && age <= \(bound)", dogs.where { $0.name == name && $0.age <= bound },
                    expected { $0.name == name && $0.age <= bound }
                ),
                ("!(name == \(name))", dogs.where { !($0.name == name) }, expected { $0.name != name }),
                ("name != \(name)", dogs.where { $0.name != name }, expected { $0.name != name }),
            ]
            for (label, results, rows) in cases {
                if results.count != rows.count { return "\(label): counts \(results.count), not \(rows.count)" }
                if ids(results) != rows { return "\(label): rows \(ids(results)), not \(rows)" }
            }
            let owners = model.dogs.values.filter { $0.name == name }.compactMap(\.owner)
            let anyDog = people.where { $0.dogs.name == name }.count
            let twoDogs = people.where { $0.dogs.where { $0.name == name }.count >= 2 }.count
            if anyDog != Set(owners).count { return "dogs.name == \(name): \(anyDog) people, not \(Set(owners).count)" }
            let two = Dictionary(grouping: owners, by: { $0 }).values.filter { $0.count >= 2 }.count
            if twoDogs != two { return "dogs where name == \(name), count >= 2: \(twoDogs) people, not \(two)" }
        }
        for person in ["Ann", "Bob", "Cy", "Zed"] {
            let found = ids(dogs.where { $0.owner.name == person })
            let rows = expected { $0.owner.flatMap { model.people[$0] } == person }
            if found != rows { return "owner.name == \(person): rows \(found), not \(rows)" }
        }
        // A lookup held while others are made and dropped keeps its own value and rows, and
        // objects kept from a lookup's `values` stay on their rows while later lookups' `values`
        // read on an object of their own.
        let held = dogs.where { $0.name == names[0] }
        let heldRows = expected { $0.name == names[0] }
        let kept = dogs.where { $0.name == names[0] }.values { $0 }
        for name in names.dropFirst() {
            let found = ids(dogs.where { $0.name == name })
            if found != expected({ $0.name == name }) { return "name == \(name), \(names[0]) held: rows \(found)" }
            let names = dogs.where { $0.name == name }.values(\.name)
            if names.count != found.count || names.contains(where: { $0 != name }) {
                return "name == \(name): values(\\.name) \(names)"
            }
        }
        if held.count != heldRows.count || ids(held) != heldRows { return "a held lookup reads \(ids(held))" }
        if kept.map(\.id).sorted() != heldRows { return "objects kept from values { $0 } moved to \(kept.map(\.id))" }
        let byKey = dogs.where { $0.id == probe }
        if byKey.count != (model.dogs[probe] == nil ? 0 : 1) || ids(byKey) != (model.dogs[probe] == nil ? [] : [probe])
        {
            return "id == \(probe): counts \(byKey.count)"
        }
        return nil
    }
}

extension Realm {
    /// Runs `body` in a write that is then rolled back, and returns what it found.
    fileprivate func writeRollingBack(_ body: @Sendable (isolated Realm) throws -> String?) throws -> String? {
        struct Rollback: Error {
            let found: String?
        }
        do {
            try self.write { realm in throw Rollback(found: try body(realm)) }
        } catch let rollback as Rollback {
            return rollback.found
        }
        preconditionFailure("a rolled-back write returned")
    }
}
