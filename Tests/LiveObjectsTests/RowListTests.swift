import LiveObjectsTestSupport
import Testing

@testable import LiveObjects

@Suite struct RowListTests {
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
