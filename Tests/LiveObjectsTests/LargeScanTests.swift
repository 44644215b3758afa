import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Column scans over more rows than one block of the scan's gathering (4,096 rows) and more
/// than one chunk of a column agree with a plain Swift filter: integer comparisons, string
/// matches, both together (the second tested on the rows the first passed), as rows are
/// added and deleted (rows no longer live among them), with the matches' properties read by
/// `values`. Seeded (`LIVEOBJECTS_READ_SEED` replays a run; the seed and operations are
/// printed on failure).
@Suite struct LargeScanTests {
    struct Row: Equatable, Sendable {
        var id: Int
        var name: String
        var age: Int
    }

    @Test func scansAgreeWithAPlainFilter() async throws {
        let realm = try await openPets("large-scans")
        let failure = try await SeededRun.run(
            "scansAgreeWithAPlainFilter", variable: "LIVEOBJECTS_READ_SEED", seed: 0x5CA7, steps: (6, 20)
        ) { steps, rng, log in
            var model: [Int: Row] = [:]
            var nextID = 0
            for step in 0..<steps {
                // Rows added, then some deleted: the scans see rows that are not live.
                let added = (0..<rng.int(3_000...9_000)).map { i in
                    Row(id: nextID + i, name: Self.name(&rng), age: rng.int(0...19))
                }
                nextID += added.count
                let doomed = model.keys.filter { _ in rng.chance(0.2) }
                try await realm.write { realm in
                    for row in added {
                        _ = try realm.create(Dog.self, value: ["id": row.id, "name": row.name, "age": row.age])
                    }
                    for id in doomed { try realm.delete(realm.object(ofType: Dog.self, forPrimaryKey: id)!) }
                }
                for row in added { model[row.id] = row }
                for id in doomed { model[id] = nil }
                log.append("add \(added.count), delete \(doomed.count)")
                let bound = rng.int(-1...20)
                let letter = ["a", "E", "é", "o", "zz"][rng.int(0...4)]
                log.append("age > \(bound), name contains[c] \(letter)")
                if let mismatch = try await Self.mismatch(realm, model, bound, letter) {
                    return "step \(step): \(mismatch)"
                }
            }
            return nil
        }
        #expect(failure == nil)
    }

    /// A name of two to four letters, some of them upper case or accented.
    static func name(_ rng: inout SeededRandomNumberGenerator) -> String {
        let letters = ["a", "b", "e", "o", "z", "A", "E", "é", "É"]
        return (0..<rng.int(2...4)).map { _ in letters[rng.int(0...letters.count - 1)] }.joined()
    }

    /// The first query whose rows differ from the plain filter's, if any.
    static func mismatch(_ realm: Realm, _ model: [Int: Row], _ bound: Int, _ letter: String) async throws -> String? {
        func contains(_ name: String) -> Bool {
            name.range(of: letter, options: [.caseInsensitive]) != nil
        }
        let rows = model.values.sorted { $0.id < $1.id }
        let older = rows.filter { $0.age > bound }
        let named = rows.filter { contains($0.name) }
        let both = older.filter { contains($0.name) }
        let found = try await realm.read { realm in
            let dogs = realm.objects(Dog.self)
            let older = dogs.where { $0.age > bound }
            let named = dogs.where { $0.name.contains(letter, options: .caseInsensitive) }
            let both = dogs.where { $0.age > bound && $0.name.contains(letter, options: .caseInsensitive) }
            let sorted = { (rows: [Row]) in rows.sorted { $0.id < $1.id } }
            return (
                older.count, sorted(older.values { Row(id: $0.id, name: $0.name, age: $0.age) }),
                sorted(named.values { Row(id: $0.id, name: $0.name, age: $0.age) }), both.count,
                sorted(both.values { Row(id: $0.id, name: $0.name, age: $0.age) })
            )
        }
        if found.0 != older.count || found.1 != older { return "age > \(bound): \(found.0) rows, not \(older.count)" }
        if found.2 != named { return "name contains \(letter): \(found.2.count) rows, not \(named.count)" }
        if found.3 != both.count || found.4 != both { return "both: \(found.3) rows, not \(both.count)" }
        return nil
    }
}
