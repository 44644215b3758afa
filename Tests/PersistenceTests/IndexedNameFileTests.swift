import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

final class IndexedName: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
}

/// The index of a string property (`ValueIndex`, every value's rows in spans of one array)
/// against a dictionary: bulk inserts (whose rows wait as a run and fill the index at once),
/// single inserts, renames and deletions, rolled-back writes, frozen copies, queries that use
/// the index and queries that scan the names, sorting by name, a subscription to an indexed
/// equality, and file round trips.
@Suite struct IndexedNameFileTests {
    struct Row: Equatable, CustomStringConvertible {
        var name: String
        var age: Int
        var description: String { "(\(name), \(age))" }
    }

    struct Abort: Error {}

    /// The seeds the tests run; `LIVEOBJECTS_INDEX_SEED` replays one.
    static let seeds: [UInt64] = TestEnvironment.seed("LIVEOBJECTS_INDEX_SEED").map { [$0] } ?? [1, 2, 3]

    /// A name from a small pool (so that values repeat) with case variants and canonically
    /// equivalent spellings ("\u{212A}ira" with a KELVIN SIGN is "Kira", "Zo\u{EB}" is "Zoe\u{308}"),
    /// or a new one.
    static func draw(_ rng: inout SeededRandomNumberGenerator) -> String {
        let pool = [
            "Bamo", "bamo", "BAMOKU", "Zed", "zedo", "Kira", "kirako", "", "a", "Tamasu", "Ab", "\u{212A}ira",
            "Zo\u{EB}",
            "Zoe\u{308}",
        ]
        if rng.below(5) > 0 { return pool[rng.below(pool.count)] }
        let letters = Array("abdkmosuzAZ")
        return String((0..<rng.int(in: 1...9)).map { _ in letters[rng.below(letters.count)] })
    }

    static func rows(_ realm: Realm) async throws -> [Int: Row] {
        try await realm.read { realm in
            var rows: [Int: Row] = [:]
            for n in realm.objects(IndexedName.self) { rows[n.id] = Row(name: n.name, age: n.age) }
            return rows
        }
    }

    /// The ids the queries find: indexed equality (one name, and several with `IN`), its count,
    /// `BEGINSWITH`, `CONTAINS[c]`, and every name sorted.
    struct Answers: Equatable {
        var equal: Set<Int>
        var equalCount: Int
        var among: Set<Int>
        var prefixed: Set<Int>
        var containing: Set<Int>
        var sorted: [String]

        /// What differs from the expected answers, briefly.
        func differences(from expected: Answers) -> String {
            var lines: [String] = []
            func compare(_ name: String, _ have: Set<Int>, _ want: Set<Int>) {
                guard have != want else { return }
                lines.append(
                    "\(name) finds \(have.subtracting(want).sorted().prefix(10)) too many, \(want.subtracting(have).sorted().prefix(10)) too few"
                )
            }
            compare("==", equal, expected.equal)
            compare("IN", among, expected.among)
            compare("BEGINSWITH", prefixed, expected.prefixed)
            compare("CONTAINS[c]", containing, expected.containing)
            if equalCount != expected.equalCount { lines.append("counts \(equalCount), not \(expected.equalCount)") }
            if sorted != expected.sorted { lines.append("sorts the names otherwise") }
            return lines.joined(separator: "; ")
        }
    }

    static func answers(
        _ model: [Int: Row], name: String, other: String, prefix: String, part: String
    ) -> Answers {
        let equal = Set(model.filter { $0.value.name == name }.keys)
        return Answers(
            equal: equal, equalCount: equal.count,
            among: Set(model.filter { $0.value.name == name || $0.value.name == other }.keys),
            prefixed: Set(model.filter { $0.value.name.hasPrefix(prefix) }.keys),
            containing: Set(model.filter { $0.value.name.lowercased().contains(part.lowercased()) }.keys),
            sorted: model.values.map(\.name).sorted())
    }

    static func answers(
        _ all: Results<IndexedName>, name: String, other: String, prefix: String, part: String
    ) throws -> Answers {
        Answers(
            equal: Set(all.where { $0.name == name }.map(\.id)), equalCount: try all.filter("name == %@", name).count,
            among: Set(try all.filter("name IN {%@, %@}", name, other).map(\.id)),
            prefixed: Set(try all.filter("name BEGINSWITH %@", prefix).map(\.id)),
            containing: Set(try all.filter("name CONTAINS[c] %@", part).map(\.id)),
            sorted: try all.sorted(byKeyPath: "name").map(\.name))
    }

    /// The same queries on a frozen copy (sorted in Swift: a frozen realm's queries do not sort).
    static func frozenAnswers(
        _ frozen: FrozenRealm, name: String, other: String, prefix: String, part: String
    ) throws -> Answers {
        func ids(_ predicate: String, _ arguments: String...) throws -> Set<Int> {
            Set(
                try frozen.objects(IndexedName.self, where: predicate, arguments: arguments.map { .string($0) }).map(
                    \.id))
        }
        let equal = try ids("name == %@", name)
        return Answers(
            equal: equal,
            equalCount: try frozen.objects(IndexedName.self, where: "name == %@", arguments: [.string(name)]).count,
            among: try ids("name IN {%@, %@}", name, other), prefixed: try ids("name BEGINSWITH %@", prefix),
            containing: try ids("name CONTAINS[c] %@", part),
            sorted: frozen.objects(IndexedName.self).map(\.name).sorted())
    }

    /// One write's random changes: a bulk insert (a run of new objects long enough to fill the
    /// index at once), single inserts, renames, age changes and deletions.
    static func changes(
        _ rng: inout SeededRandomNumberGenerator, model: [Int: Row], nextID: inout Int
    ) -> [(id: Int, row: Row?)] {
        var changes: [(id: Int, row: Row?)] = []
        var scratch = model
        if rng.below(3) == 0 {
            for _ in 0..<rng.int(in: 64...700) {
                let row = Row(name: draw(&rng), age: rng.below(20))
                changes.append((nextID, row))
                scratch[nextID] = row
                nextID += 1
            }
        }
        for _ in 0..<rng.int(in: 1...40) {
            let live = scratch.keys.sorted()
            switch rng.below(7) {
            case 0...1:
                let row = Row(name: draw(&rng), age: rng.below(20))
                changes.append((nextID, row))
                scratch[nextID] = row
                nextID += 1
            case 2...3 where !live.isEmpty:
                let target = live[rng.below(live.count)]
                let row = Row(name: draw(&rng), age: scratch[target]!.age)
                changes.append((target, row))
                scratch[target] = row
            case 4 where !live.isEmpty:
                let target = live[rng.below(live.count)]
                let row = Row(name: scratch[target]!.name, age: rng.below(20))
                changes.append((target, row))
                scratch[target] = row
            case 5...6 where !live.isEmpty:
                let target = live[rng.below(live.count)]
                changes.append((target, nil))
                scratch[target] = nil
            default: break
            }
        }
        return changes
    }

    static func apply(_ changes: [(id: Int, row: Row?)], in r: isolated Realm) throws {
        for (id, row) in changes {
            let existing = r.object(ofType: IndexedName.self, forPrimaryKey: id)
            guard let row else {
                try r.delete(existing!)
                continue
            }
            if let existing {
                existing.name = row.name
                existing.age = row.age
            } else {
                let object = IndexedName()
                (object.id, object.name, object.age) = (id, row.name, row.age)
                try r.add(object)
            }
        }
    }

    /// Random writes agree with a dictionary after every round, in the realm, its queries, its
    /// store's invariants (the index's layout among them), frozen copies taken along the way,
    /// a subscription to one name, and after reopening the file (seeded; the seed and the
    /// operations are in the message).
    @Test(arguments: seeds)
    func namesAgreeWithAModel(seed: UInt64) async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("names.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true)
        let configuration = Realm.Configuration(file: url, objectTypes: [IndexedName.self], options: options)
        var rng = SeededRandomNumberGenerator(seed: seed)
        var model: [Int: Row] = [:]
        var nextID = 1
        var operations: [String] = []
        var frozen: [(FrozenRealm, [Int: Row])] = []
        var realm: Realm? = try await openRealm(configuration)
        func fail(_ what: String) {
            Issue.record("seed \(seed): \(what); operations: \(operations.suffix(6).joined(separator: "; "))")
        }
        // A subscription to one name, checked until the realm is first reopened.
        let watched = "Bamo"
        var subscription: CollectionChanges<IndexedName>.AsyncIterator? = try await realm!.read { r in
            r.objects(IndexedName.self).where { $0.name == watched }.changes().makeAsyncIterator()
        }
        let initial = try #require(await subscription?.next())
        var watchedKeys = initial.snapshot.keys
        var watchedIDs = Set(initial.snapshot.map(\.id))
        var commitsUnseen = 0
        for round in 0..<16 {
            // Every fourth write is rolled back.
            let rollBack = round % 4 == 3
            var id = nextID
            let write = Self.changes(&rng, model: model, nextID: &id)
            operations.append(
                "round \(round)\(rollBack ? " (rolled back)" : ""): "
                    + write.map { "\($0.id) = \($0.row.map(\.description) ?? "deleted")" }.joined(separator: ", "))
            do {
                try await realm!.write { r in
                    try Self.apply(write, in: r)
                    if rollBack { throw Abort() }
                }
            } catch is Abort {}
            if !rollBack {
                for (id, row) in write { model[id] = row }
                nextID = id
                commitsUnseen += 1
            }
            guard try await Self.rows(realm!) == model else { return fail("round \(round): the realm differs") }
            let violations = try await realm!.read { StoreInvariants.violations(in: $0.store) }
            guard violations.isEmpty else { return fail("round \(round): \(violations.joined(separator: "; "))") }
            let name = Self.draw(&rng)
            let other = Self.draw(&rng)
            // Neither empty: whether every string begins with or contains "" is a convention.
            var word = Self.draw(&rng)
            while word.isEmpty { word = Self.draw(&rng) }
            let prefix = String(word.prefix(rng.below(2) + 1))
            let part = String(word.uppercased().dropFirst(rng.below(word.count)).prefix(rng.below(2) + 1))
            let expected = Self.answers(model, name: name, other: other, prefix: prefix, part: part)
            let found = try await realm!.read { r in
                try Self.answers(r.objects(IndexedName.self), name: name, other: other, prefix: prefix, part: part)
            }
            guard found == expected else {
                return fail(
                    "round \(round): \(found.differences(from: expected)) for \(name), \(other), \(prefix), \(part)")
            }
            if rng.below(3) == 0 {
                operations.append("freeze")
                frozen = frozen.suffix(2) + [(await realm!.freeze(), model)]
            }
            for (n, (copy, copied)) in frozen.enumerated() {
                let want = Self.answers(copied, name: name, other: other, prefix: prefix, part: part)
                let have = try Self.frozenAnswers(copy, name: name, other: other, prefix: prefix, part: part)
                guard have == want else {
                    return fail(
                        "round \(round): frozen copy \(n): \(have.differences(from: want)) for \(name), \(other), \(prefix), \(part)"
                    )
                }
            }
            if var iterator = subscription {
                let want = Set(model.filter { $0.value.name == watched }.keys)
                // Each commit yields at most one change, in order: read them until the
                // subscription shows the model (a commit that left the name alone yields none).
                while watchedIDs != want {
                    guard commitsUnseen > 0, let change = await iterator.next() else {
                        return fail(
                            "round \(round): the subscription shows \(watchedIDs.sorted()), not \(want.sorted())")
                    }
                    commitsUnseen -= 1
                    guard change.applied(to: watchedKeys) == change.snapshot.keys else {
                        return fail("round \(round): a change of the subscription does not apply to what it showed")
                    }
                    watchedKeys = change.snapshot.keys
                    watchedIDs = Set(change.snapshot.map(\.id))
                }
                subscription = iterator
            }
            if rng.below(4) == 0 {
                operations.append("save and reopen")
                subscription = nil
                try await realm!.save()
                realm = nil
                for _ in 0..<1000 where FileStorage.isOpen(configuration) {
                    try await Task.sleep(for: .milliseconds(5))
                }
                realm = try await openRealm(configuration)
                guard try await Self.rows(realm!) == model else {
                    return fail("round \(round): the reopened realm differs")
                }
            }
        }
    }
}
