import LiveObjectsTestSupport
import Testing

@testable import LiveObjects

@Suite struct RowListTests {
    /// The positions found in one pass over an ascending list are the positions a search of
    /// each row finds, for rows present and absent, few and many, across chunks changed by
    /// inserts and removals.
    @Test(arguments: [31, 32, 33])
    func positionsOfAscendingRowsAgreeWithASearch(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var model = (0..<6_000).map { Int32($0 * 3) }
        var list = RowList(model)
        for _ in 0..<2_000 {
            let index = Int(rng.next() % UInt64(model.count))
            if rng.next() % 2 == 0 {
                list.remove(at: index)
                model.remove(at: index)
            } else if index > 0, model[index] - model[index - 1] > 1 {
                list.insert(model[index] - 1, at: index)
                model.insert(model[index] - 1, at: index)
            }
        }
        for size in [0, 1, 17, 500, 4_000] {
            let wanted = Set((0..<size).map { _ in Int32(rng.next() % 18_100) }).sorted()
            let expected = wanted.map { row in model.firstIndex(of: row) ?? -1 }
            #expect(list.positions(ofAscending: wanted) == expected, "seed \(seed) size \(size)")
        }
    }

    @Test(arguments: [11, 12, 13])
    func agreesWithArray(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var list = RowList((0..<5_000).map { Int32($0 * 2) })
        var model = (0..<5_000).map { Int32($0 * 2) }
        for step in 0..<6_000 {
            if rng.next() % 2 == 0 || model.isEmpty {
                let row = Int32(rng.next() % 20_000)
                let index = model.isEmpty ? 0 : Int(rng.next() % UInt64(model.count + 1))
                list.insert(row, at: index)
                model.insert(row, at: index)
            } else {
                let index = Int(rng.next() % UInt64(model.count))
                list.remove(at: index)
                model.remove(at: index)
            }
            if step % 500 == 0 {
                guard Array(list) == model else {
                    Issue.record("seed \(seed) step \(step): the list differs")
                    return
                }
            }
        }
        #expect(Array(list) == model)
        let sorted = RowList(model.sorted())
        let probe = model.sorted()[model.count / 2]
        #expect(sorted.partitionPoint { $0 < probe } == model.sorted().firstIndex(of: probe))
        #expect(sorted.partitionPoint { _ in true } == model.count)
    }
}
