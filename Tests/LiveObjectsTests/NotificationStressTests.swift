import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

// Many writers on their own actors write to one realm while watchers on other actors follow
// overlapping queries and readers read frozen snapshots from many tasks at once. Meant to run
// under the thread sanitizer too (`swift test --sanitize=thread --filter NotificationStressTests`).
//
// Size: 16 writers × 200 writes and 16 query watchers by default (each write is small: one dog
// and the counter); 64 × 1,000 with the long sizes (`LIVEOBJECTS_TESTS=long`, or
// `LIVEOBJECTS_STRESS=full`); `LIVEOBJECTS_STRESS=small` keeps 16 × 200 even then, and
// `LIVEOBJECTS_STRESS_WRITERS` / `LIVEOBJECTS_STRESS_WRITES` set either number.

struct StressConfig {
    var writers: Int
    var writes: Int

    static func fromEnvironment() -> StressConfig {
        let stress = TestEnvironment.string("LIVEOBJECTS_STRESS")
        let full = stress == "full" || (TestEnvironment.isLong && stress != "small")
        var config = full ? StressConfig(writers: 64, writes: 1_000) : StressConfig(writers: 16, writes: 200)
        if let writers = TestEnvironment.int("LIVEOBJECTS_STRESS_WRITERS") { config.writers = writers }
        if let writes = TestEnvironment.int("LIVEOBJECTS_STRESS_WRITES") { config.writes = writes }
        return config
    }
}

/// The owners' primary keys; the counter person's is 0.
let stressOwners = 1...8

/// What a writer did: the dogs it should own at the end (id → age) and its committed writes.
struct WriterResult: Sendable {
    var dogs: [Int: Int] = [:]
    var committed = 0
}

/// A writer on its own actor. Every committed write also increments the counter person's age,
/// so the counter ends at the number of committed writes.
actor StressWriter {
    let index: Int
    var rng: SeededRandomNumberGenerator

    init(index: Int) {
        self.index = index
        rng = SeededRandomNumberGenerator(seed: UInt64(index) &* 0x9E37_79B9 &+ 17)
    }

    func run(_ realm: Realm, writes: Int) async -> (WriterResult, [String]) {
        var result = WriterResult()
        var problems: [String] = []
        for i in 0..<writes {
            let roll = rng.int(0...99)
            let age = rng.int(0...9)
            let owner = stressOwners.lowerBound + index % stressOwners.count
            let newId = index * 1_000_000 + i + 1
            let existing = result.dogs.keys.sorted()
            let target = rng.pick(existing)
            let fail = rng.chance(0.05)
            do {
                let change: (id: Int, age: Int?) = try await realm.write { r in
                    let counter = r.object(ofType: Person.self, forPrimaryKey: 0)!
                    counter.age += 1
                    var change: (id: Int, age: Int?)
                    if existing.count < 2 || (roll < 45 && existing.count < 6) {
                        let dog = try r.create(Dog.self, value: ["id": newId, "name": "d\(newId)", "age": age])
                        let person = r.object(ofType: Person.self, forPrimaryKey: owner)!
                        dog.owner = person
                        if roll % 3 == 0 { person.dogs.append(dog) }
                        change = (newId, age)
                    } else if roll < 80 {
                        r.object(ofType: Dog.self, forPrimaryKey: target!)!.age = age
                        change = (target!, age)
                    } else {
                        try r.delete(r.object(ofType: Dog.self, forPrimaryKey: target!)!)
                        change = (target!, nil)
                    }
                    if fail { throw CancellationError() }
                    return change
                }
                result.dogs[change.id] = change.age
                result.committed += 1
            } catch is CancellationError {
                // Rolled back: nothing changed.
            } catch {
                problems.append("writer \(index) write \(i): \(error)")
            }
        }
        return (result, problems)
    }
}

/// What a watcher saw.
struct WatchReport: Sendable {
    var lastKeys: [ObjectKey] = []
    var lastVersion: UInt64 = 0
    var elements = 0
    var problems: [String] = []
}

/// A watcher on its own actor: applies every change to the keys it had, checks versions, and
/// reads the frozen snapshots.
actor StressWatcher {
    let name: String

    init(name: String) { self.name = name }

    func watch(_ changes: CollectionChanges<Dog>, minimumAge: Int) async -> WatchReport {
        var report = WatchReport()
        for await change in changes {
            report.elements += 1
            let keys = change.snapshot.keys
            if change.isInitial != (report.elements == 1) {
                report.problems.append("\(name): isInitial wrong at \(report.elements)")
            }
            if report.elements > 1 {
                if change.version <= report.lastVersion {
                    report.problems.append("\(name): version \(change.version) after \(report.lastVersion)")
                }
                let applied = change.applied(to: report.lastKeys)
                if applied != keys {
                    report.problems.append(
                        "\(name): applied(to:) gives \(applied.count) keys, snapshot has \(change.snapshot.count)")
                }
            }
            if change.snapshot.version != change.version { report.problems.append("\(name): snapshot version differs") }
            // Read the new and changed frozen objects here, on this actor, while the realm moves on.
            let read =
                change.isInitial ? Array(change.snapshot.indices) : change.insertions + change.modificationsInNewIndices
            for i in read where change.snapshot[i].age < minimumAge {
                let dog = change.snapshot[i]
                report.problems.append("\(name): \(dog.name) aged \(dog.age) in results of age >= \(minimumAge)")
            }
            report.lastKeys = keys
            report.lastVersion = change.version
        }
        return report
    }

    func watchRealm(_ changes: RealmChanges) async -> [UInt64] {
        var versions: [UInt64] = []
        for await change in changes { versions.append(change.version) }
        return versions
    }

    func watchCounter(_ changes: ObjectChanges<Person>) async -> (last: Int, problems: [String]) {
        var last = -1
        var lastVersion: UInt64 = 0
        var problems: [String] = []
        for await change in changes {
            switch change {
            case .initial(let person):
                last = person.age
                lastVersion = person.version
            case .changed(let person, let properties):
                guard properties.map(\.name) == ["age"], let new = properties[0].newValue.intValue,
                    properties[0].oldValue.intValue == Int64(last)
                else {
                    problems.append("counter change \(properties) after \(last)")
                    continue
                }
                if new != last + 1 || person.age != Int(new) {
                    problems.append("counter went \(last) -> \(new) (\(person.age))")
                }
                if person.version <= lastVersion {
                    problems.append("counter version \(person.version) after \(lastVersion)")
                }
                last = Int(new)
                lastVersion = person.version
            case .deleted:
                problems.append("counter deleted")
            }
        }
        return (last, problems)
    }
}

@Suite struct NotificationStressTests {
    @Test func concurrentWritersAndWatchers() async throws {
        let config = StressConfig.fromEnvironment()
        let realm = try await openPets("stress")
        try await realm.write { r in
            _ = try r.create(Person.self, value: ["id": 0, "name": "counter"])
            for id in stressOwners { _ = try r.create(Person.self, value: ["id": id, "name": "p\(id)"]) }
        }
        let startVersion = await realm.version
        let firstFrozen = await realm.freeze()

        // 16 overlapping queries, each watched on its own actor.
        typealias Query = @Sendable (isolated Realm) throws -> Results<Dog>
        var queries: [(String, Int, Query)] = [
            (
                "old dogs by age", 6,
                { r in
                    try r.objects(Dog.self).filter("age >= 6").sorted(by: [
                        SortField("age", ascending: false), SortField("id"),
                    ])
                }
            ),
            (
                "owned by 1-3 by name", 0,
                { r in try r.objects(Dog.self).filter("owner.id IN {1, 2, 3}").sorted(byKeyPath: "name") }
            ),
            ("all dogs", 0, { r in r.objects(Dog.self) }),
            (
                "young dogs of even owners", 0,
                { r in try r.objects(Dog.self).filter("age < 5 AND owner.id IN {2, 4, 6, 8}").sorted(byKeyPath: "age") }
            ),
            (
                "middle-aged dogs", 3,
                { r in try r.objects(Dog.self).filter("age BETWEEN {3, 6}").sorted(byKeyPath: "id") }
            ),
            ("dogs of 5 or young", 0, { r in try r.objects(Dog.self).filter("age < 3 OR owner.id == 5") }),
            (
                "names starting d1", 0,
                { r in
                    try r.objects(Dog.self).filter("name BEGINSWITH 'd1'").sorted(byKeyPath: "name", ascending: false)
                }
            ),
            ("walked dogs", 0, { r in try r.objects(Dog.self).filter("walkers.@count > 0").sorted(byKeyPath: "id") }),
        ]
        for minimumAge in [2, 4, 5, 7, 8] {
            queries.append(
                (
                    "age >= \(minimumAge)", minimumAge,
                    { r in try r.objects(Dog.self).filter("age >= %d", minimumAge).sorted(byKeyPath: "id") }
                ))
        }
        for owner in [1, 4, 7] {
            queries.append(
                (
                    "owned by \(owner)", 0,
                    { r in try r.objects(Dog.self).filter("owner.id == %d", owner).sorted(byKeyPath: "age") }
                ))
        }
        #expect(queries.count == 16)
        var watches: [Task<WatchReport, Never>] = []
        for (name, minimumAge, query) in queries {
            let changes = try await realm.read { r in try query(r).changes(keyPaths: name == "all dogs" ? ["age"] : nil)
            }
            let watcher = StressWatcher(name: name)
            watches.append(Task { await watcher.watch(changes, minimumAge: minimumAge) })
        }
        let listChanges = try await realm.read { r in r.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.changes() }
        let listWatcher = StressWatcher(name: "Person 1's dogs")
        watches.append(Task { await listWatcher.watch(listChanges, minimumAge: 0) })
        let realmWatcher = StressWatcher(name: "realm")
        let realmChanges = try await realm.changes()
        let realmWatch = Task { await realmWatcher.watchRealm(realmChanges) }
        let counterChanges = try await realm.read { r in
            r.object(ofType: Person.self, forPrimaryKey: 0)!.changes(keyPaths: [\.age])
        }
        let counterWatch = Task { await realmWatcher.watchCounter(counterChanges) }

        // Writers, and readers of frozen snapshots, all at once.
        let writers = (0..<config.writers).map { StressWriter(index: $0) }
        let (results, readerProblems) = await withTaskGroup(of: ([(WriterResult, [String])], [String]).self) { group in
            for writer in writers {
                group.addTask { ([await writer.run(realm, writes: config.writes)], []) }
            }
            for _ in 0..<4 {
                group.addTask {
                    var problems: [String] = []
                    for _ in 0..<max(10, config.writes / 10) {
                        let frozen = await realm.freeze()
                        // Many tasks read the same snapshot at once.
                        let counts = await withTaskGroup(of: [String].self) { readers in
                            for _ in 0..<4 {
                                readers.addTask { Self.checkSnapshot(frozen, startVersion: startVersion) }
                            }
                            return await readers.reduce(into: []) { $0 += $1 }
                        }
                        problems += counts
                    }
                    return ([], problems)
                }
            }
            var results: [(WriterResult, [String])] = []
            var problems: [String] = []
            for await (r, p) in group {
                results += r
                problems += p
            }
            return (results, problems)
        }
        #expect(readerProblems.isEmpty, "\(readerProblems.prefix(10))")
        for (_, problems) in results { #expect(problems.isEmpty, "\(problems.prefix(10))") }

        // No update lost.
        let committed = results.reduce(0) { $0 + $1.0.committed }
        let expectedDogs = results.reduce(into: [Int: Int]()) { all, result in
            for (id, age) in result.0.dogs { all[id] = age }
        }
        let (counter, dogs, version) = try await realm.read { r in
            (
                r.object(ofType: Person.self, forPrimaryKey: 0)!.age,
                Dictionary(uniqueKeysWithValues: r.objects(Dog.self).map { ($0.id, $0.age) }),
                r.version
            )
        }
        #expect(counter == committed)
        #expect(version == startVersion + UInt64(committed))
        #expect(dogs == expectedDogs)

        // Every watcher ends at the fresh state: cancelling drains what is buffered, then ends.
        for watch in watches { watch.cancel() }
        realmWatch.cancel()
        counterWatch.cancel()
        var fresh: [[ObjectKey]] = []
        for (_, _, query) in queries {
            fresh.append(try await realm.read { r in try query(r).freeze().keys })
        }
        fresh.append(
            try await realm.read { r in r.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.compactMap(\.objectKey) })
        for (i, watch) in watches.enumerated() {
            let report = await watch.value
            #expect(report.problems.isEmpty, "\(report.problems.prefix(10))")
            #expect(report.lastKeys == fresh[i], "watcher \(i)")
            #expect(report.elements >= 1)
        }
        let versions = await realmWatch.value
        #expect(versions == Array((startVersion + 1)...(startVersion + UInt64(committed))))
        let (last, counterProblems) = await counterWatch.value
        #expect(counterProblems.isEmpty, "\(counterProblems.prefix(10))")
        #expect(last == committed)

        // The first snapshot still shows the state it was taken at.
        #expect(firstFrozen.objects(Dog.self).isEmpty)
        #expect(firstFrozen.object(ofType: Person.self, forPrimaryKey: 0)?.age == 0)
    }

    /// Invariants of one snapshot: the counter counts the commits since the start, and a query
    /// on the snapshot agrees with its objects.
    static func checkSnapshot(_ frozen: FrozenRealm, startVersion: UInt64) -> [String] {
        var problems: [String] = []
        guard let counter = frozen.object(ofType: Person.self, forPrimaryKey: 0) else { return ["no counter"] }
        if UInt64(counter.age) != frozen.version - startVersion {
            problems.append("counter \(counter.age) at version \(frozen.version)")
        }
        let dogs = frozen.objects(Dog.self)
        let old = dogs.filter { $0.age >= 6 }.map(\.key)
        if let queried = try? frozen.objects(Dog.self, where: "age >= 6").keys, queried != old {
            problems.append("query and scan disagree at version \(frozen.version)")
        }
        for dog in dogs where dog.link(\.owner).map({ !stressOwners.contains($0.id) }) ?? true {
            problems.append("dog \(dog.id) without a valid owner at version \(frozen.version)")
        }
        return problems
    }
}
