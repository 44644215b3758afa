import LiveObjectsTestSupport
import Testing

@testable import LiveObjects

/// The flat storage of a secondary index (`ValueIndex`: every value's rows in spans of one
/// array, found through a hash table that keeps no values) against a plain dictionary of
/// sorted arrays.
@Suite struct ValueIndexTests {
    /// The values of the rows, which a table's column holds for an index in a store.
    final class Column {
        var values: [Int32: PropertyValue] = [:]
    }

    /// An index reading its rows' values from a column of the test's.
    static func index(_ column: Column) -> ValueIndex {
        let index = ValueIndex()
        index.rowValue = { column.values[$0]! }
        return index
    }

    /// The seeds the tests run; `LIVEOBJECTS_INDEX_SEED` replays one.
    static let seeds: [UInt64] = TestEnvironment.seed("LIVEOBJECTS_INDEX_SEED").map { [$0] } ?? [1, 2, 3, 4]

    /// Random insertions and removals (values growing past their room and moving, values
    /// emptied, the store written anew when it is mostly garbage) agree with the dictionary
    /// after every step, through every reader (seeded; the seed and the operations are in the
    /// message).
    @Test(arguments: seeds)
    func agreesWithADictionary(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let column = Column()
        let index = Self.index(column)
        var model: [PropertyValue: [Int32]] = [:]
        var used = Set<Int32>()
        var operations: [String] = []
        var compactions = 0
        func fail(_ what: String) {
            Issue.record("seed \(seed): \(what); operations: \(operations.suffix(40).joined(separator: ", "))")
        }
        for step in 0..<12_000 {
            // A few values with many rows, many with few.
            let value: PropertyValue =
                rng.below(4) == 0 ? .int(Int64(rng.below(3))) : .string("v\(rng.below(rng.below(2) == 0 ? 40 : 400))")
            let before = index.store.count
            if rng.below(5) < 3 || model.isEmpty {
                var row = Int32(rng.below(50_000))
                while used.contains(row) { row = Int32(rng.below(50_000)) }
                used.insert(row)
                operations.append("insert \(value) \(row)")
                // As the store does: the column holds a new row's value before it is indexed.
                column.values[row] = value
                index.insert(value, row: row)
                model[value, default: []].append(row)
                model[value]!.sort()
            } else {
                let (value, rows) = model.randomElement(using: &rng)!
                let row = rows[rng.below(rows.count)]
                operations.append("remove \(value) \(row)")
                index.remove(value, row: row)
                column.values[row] = nil
                model[value]!.removeAll { $0 == row }
                used.remove(row)
                if model[value]!.isEmpty { model[value] = nil }
            }
            if index.store.count < before - 1 { compactions += 1 }
            if let fault = index.layoutFaults.first { return fail("step \(step): \(fault)") }
            if index.count(of: value) != model[value]?.count ?? 0 {
                return fail("step \(step): counts \(index.count(of: value)) rows of \(value)")
            }
            if index.rows(of: value) != model[value] { return fail("step \(step): the rows of \(value) differ") }
            if step % 500 == 0 && index.rows != model { return fail("step \(step): the index differs") }
        }
        if index.rows != model { fail("the index differs at the end") }
        // The run must have reached the rewrite of a mostly-garbage store.
        #expect(compactions > 0, "seed \(seed): the store was never written anew")
    }

    /// Bulk runs (consecutive new rows added later, as a bulk insert adds them, which a long
    /// run places by writing the store anew with its rows' hashes and spans asked for ahead of
    /// their searches) between single insertions and removals agree with the dictionary
    /// (seeded; the seed and the operations are in the message).
    @Test(arguments: seeds)
    func bulkRunsAgreeWithADictionary(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let column = Column()
        let index = Self.index(column)
        var model: [PropertyValue: [Int32]] = [:]
        var next: Int32 = 0
        var operations: [String] = []
        func fail(_ what: String) {
            Issue.record("seed \(seed): \(what); operations: \(operations.suffix(40).joined(separator: ", "))")
        }
        for step in 0..<60 {
            // Values old and new, a few with many rows; some values only once.
            let distinct = 1 + rng.below(rng.below(2) == 0 ? 20 : 3000)
            let length = Int32(rng.below(3) == 0 ? rng.below(64) : 64 + rng.below(4000))
            operations.append("run of \(length) from \(next) over \(distinct) values")
            for row in next..<next + length {
                let draw = rng.below(distinct)
                let value: PropertyValue = draw % 5 == 0 ? .int(Int64(draw)) : .string("v\(draw)")
                column.values[row] = value
                index.insertLater(row)
                model[value, default: []].append(row)
            }
            next += length + Int32(rng.below(3))
            for _ in 0..<rng.below(30) where !model.isEmpty {
                let (value, rows) = model.randomElement(using: &rng)!
                let row = rows[rng.below(rows.count)]
                operations.append("remove \(value) \(row)")
                index.remove(value, row: row)
                column.values[row] = nil
                model[value]!.removeAll { $0 == row }
                if model[value]!.isEmpty { model[value] = nil }
            }
            if let fault = index.layoutFaults.first { return fail("step \(step): \(fault)") }
            if index.rows != model { return fail("step \(step): the index differs") }
            for value in model.keys.prefix(50) where index.count(of: value) != model[value]!.count {
                return fail("step \(step): counts \(index.count(of: value)) rows of \(value)")
            }
        }
    }

    /// Replacing the rows of the index (what the store's checks use to corrupt it) lays the
    /// store out anew; its faults are found.
    @Test func settingTheRowsLaysTheStoreOut() {
        let column = Column()
        column.values = [
            0: .string("b"), 1: .string("a"), 2: .string("b"), 3: .int(7), 4: .int(7), 5: .string("a"), 9: .string("a"),
        ]
        let index = Self.index(column)
        index.rows = [.string("a"): [1, 5, 9], .string("b"): [2], .int(7): [3, 4]]
        #expect(index.rows == [.string("a"): [1, 5, 9], .string("b"): [2], .int(7): [3, 4]])
        #expect(index.store.count == 6)
        #expect(index.layoutFaults.isEmpty)
        index.insert(.string("b"), row: 0)
        index.remove(.string("a"), row: 5)
        #expect(index.rows(of: .string("b")) == [0, 2])
        #expect(index.rows(of: .string("a")) == [1, 9])
        #expect(index.layoutFaults.isEmpty)
        index.removeAll()
        #expect(index.rows.isEmpty && index.store.isEmpty && index.count(of: .string("a")) == 0)
    }
}
