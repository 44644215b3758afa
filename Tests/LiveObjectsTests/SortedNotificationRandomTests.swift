import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Sorted results kept up to date by a subscription over thousands of objects (a row list of
/// several chunks, names sharing their first eight bytes, ties, non-ASCII names), under seeded
/// random writes: each change set must turn the previous keys into a fresh query's, and the
/// results must hold the reference's objects in its order of names. `LIVEOBJECTS_SORTED_NOTIFY_SEED`
/// replays a run; a failure prints the seed and every write.
@Suite struct SortedNotificationRandomTests {
    @Test func sortedResultsFollowRandomWrites() async throws {
        let failure = try await SeededRun.run(
            "SortedNotificationRandomTests", variable: "LIVEOBJECTS_SORTED_NOTIFY_SEED", seed: 0x50F7,
            steps: (60, 400)
        ) { steps, rng, log in try await Self.run(steps: steps, &rng, &log) }
        #expect(failure == nil, "\(failure ?? "")")
    }

    /// Names that tie, that share their first eight bytes and differ after them, short ones, and
    /// names outside ASCII (kept as another kind of sort key).
    static let names = [
        "Ab", "Abc", "Bamokuli", "Bamokulia", "Bamokulib", "Bamokulibo", "Bamokuli ", "Rex", "Émile", "Zoë",
        "Zoe", "Kamitora", "Kamitorb", "a", "",
    ]

    static let initialCount = 5000

    /// One subscription: its order, its iterator, and the keys of the last element it gave.
    struct Subscribed {
        let ascending: Bool
        var iterator: CollectionChanges<Dog>.AsyncIterator
        var keys: [ObjectKey]
    }

    static func run(steps: Int, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]) async throws
        -> String?
    {
        let realm = try await openFreshRealm(objectTypes: [
            Dog.self, Person.self, DogToy.self, DogClub.self, Address.self,
        ])
        // The reference: each dog's name and age, by id.
        var model: [Int: (name: String, age: Int)] = [:]
        var nextID = 0
        var seed = rng.next()
        var initial: [(Int, String, Int)] = []
        for _ in 0..<initialCount {
            initial.append((nextID, names[Int(seed % UInt64(names.count))], Int((seed >> 8) % 20)))
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            nextID += 1
        }
        try await realm.write { [initial] r in
            for (id, name, age) in initial { _ = try r.create(Dog.self, value: ["id": id, "name": name, "age": age]) }
        }
        for (id, name, age) in initial { model[id] = (name, age) }
        var subs: [Subscribed] = []
        for ascending in [true, false] {
            let changes = try await realm.read { r in
                try r.objects(Dog.self).where { $0.age > 10 }.sorted(byKeyPath: "name", ascending: ascending).changes()
            }
            var iterator = changes.makeAsyncIterator()
            guard let first = await iterator.next() else { return "no initial element" }
            subs.append(Subscribed(ascending: ascending, iterator: iterator, keys: first.snapshot.keys))
        }
        for step in 0..<steps {
            let ids = model.keys.sorted()
            var changed: Set<Int> = []
            var fails = false
            let kind = rng.int(0...9)
            var edits: [(id: Int, name: String?, age: Int?)] = []
            var inserts: [(Int, String, Int)] = []
            var deletes: [Int] = []
            switch kind {
            case 0, 1, 2:
                // An object moves across the filter (the benchmark's update).
                for _ in 0..<rng.int(1...3) {
                    let id = rng.pick(ids)!
                    edits.append((id, nil, model[id]!.age > 10 ? 5 : 15))
                }
            case 3:
                // A new name: the object moves within the results (or not, if it ties).
                for _ in 0..<rng.int(1...2) { edits.append((rng.pick(ids)!, rng.pick(names)!, nil)) }
            case 4:
                // A member's age changes and it stays: modified in place.
                for _ in 0..<rng.int(1...2) { edits.append((rng.pick(ids)!, nil, rng.int(11...19))) }
            case 5:
                for _ in 0..<rng.int(1...4) {
                    inserts.append((nextID, rng.pick(names)!, rng.int(0...19)))
                    nextID += 1
                }
            case 6:
                for _ in 0..<rng.int(1...3) { deletes.append(rng.pick(ids)!) }
            case 7:
                // Many at once: the row list is rebuilt rather than changed row by row.
                for _ in 0..<rng.int(65...200) {
                    let id = rng.pick(ids)!
                    edits.append((id, rng.chance(0.3) ? rng.pick(names)! : nil, rng.int(0...19)))
                }
            case 8:
                // A write that fails after its changes: rolled back, nothing to report.
                edits.append((rng.pick(ids)!, rng.pick(names)!, 15))
                fails = true
            default:
                edits.append((rng.pick(ids)!, rng.pick(names)!, rng.int(0...19)))
                inserts.append((nextID, rng.pick(names)!, 15))
                nextID += 1
                deletes.append(rng.pick(ids)!)
            }
            deletes = Array(Set(deletes))
            edits.removeAll { deletes.contains($0.id) }
            log.append(
                "step \(step): edits \(edits.map { "\($0.id) \($0.name ?? "-")/\($0.age.map(String.init) ?? "-")" }), "
                    + "inserts \(inserts), deletes \(deletes)\(fails ? ", then fail" : "")")
            do {
                try await realm.write { [edits, inserts, deletes, fails] r in
                    for edit in edits {
                        let dog = r.object(ofType: Dog.self, forPrimaryKey: edit.id)!
                        if let name = edit.name { dog.name = name }
                        if let age = edit.age { dog.age = age }
                    }
                    for (id, name, age) in inserts {
                        _ = try r.create(Dog.self, value: ["id": id, "name": name, "age": age])
                    }
                    for id in deletes { try r.delete(r.object(ofType: Dog.self, forPrimaryKey: id)!) }
                    if fails { throw RolledBack() }
                }
            } catch is RolledBack {}
            if !fails {
                for edit in edits {
                    let old = model[edit.id]!
                    let new = (name: edit.name ?? old.name, age: edit.age ?? old.age)
                    if new != old { changed.insert(edit.id) }
                    model[edit.id] = new
                }
                for (id, name, age) in inserts { model[id] = (name, age) }
                for id in deletes { model[id] = nil }
            }
            for s in subs.indices {
                if let failure = try await check(&subs[s], realm: realm, model: model, changed: changed) {
                    return "step \(step), \(subs[s].ascending ? "ascending" : "descending"): \(failure)"
                }
            }
        }
        return nil
    }

    /// Checks one subscription after a write: its next element, if the results changed, against
    /// a fresh query and the reference.
    static func check(
        _ sub: inout Subscribed, realm: Realm, model: [Int: (name: String, age: Int)], changed: Set<Int>
    ) async throws -> String? {
        let ascending = sub.ascending
        let fresh = try await realm.read { r in
            try r.objects(Dog.self).where { $0.age > 10 }.sorted(byKeyPath: "name", ascending: ascending)
                .map { (key: $0.objectKey!, id: $0.id, name: $0.name) }
        }
        let expected = model.filter { $0.value.age > 10 }
        guard Set(fresh.map(\.id)) == Set(expected.keys) else { return "the fresh query's objects differ" }
        let names = expected.values.map(\.name).sorted { ascending ? $0 < $1 : $0 > $1 }
        guard fresh.map(\.name) == names else { return "not in the order of names" }
        let newKeys = fresh.map(\.key)
        let modified = Set(fresh.filter { changed.contains($0.id) }.map(\.key))
        guard sub.keys != newKeys || !modified.isEmpty else { return nil }
        guard let change = await sub.iterator.next() else { return "the sequence ended" }
        let observation = CollectionObservation(change, schema: realm.schema["Dog"]!)
        // The snapshot's objects the change set names hold the reference's values (the other
        // properties, lists and links, as read).
        var values: [ObjectKey: [String: PropertyValue]] = [:]
        for (position, read) in observation.values where position < fresh.count {
            let id = fresh[position].id
            guard let reference = model[id] else { continue }
            var expected = read
            expected["id"] = .int(Int64(id))
            expected["name"] = .string(reference.name)
            expected["age"] = .int(Int64(reference.age))
            values[fresh[position].key] = expected
        }
        let failures = NotificationChecker.checkCollectionChange(
            observation, old: sub.keys, new: newKeys, modified: modified, values: values, unique: true)
        sub.keys = change.snapshot.keys
        return failures.isEmpty ? nil : failures.joined(separator: "; ")
    }

    struct RolledBack: Error {}
}
