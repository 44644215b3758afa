import Testing

@testable import LiveObjects

@Suite struct IntKeyIndexTests {
    /// Random inserts and removals agree with a Dictionary (seeded; the seed is in the message).
    @Test(arguments: [1, 2, 3, 4, 5])
    func agreesWithDictionary(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        var index = IntKeyIndex()
        var model: [Int64: Int32] = [:]
        for step in 0..<20_000 {
            let key = Int64(rng.next() % 3_000) - 1_500
            if rng.next() % 3 == 0 {
                index.remove(key)
                model[key] = nil
            } else {
                let row = Int32(step)
                index.insert(key, row: row)
                model[key] = row
            }
            if step % 97 == 0 {
                for probe in -1_600..<1_600 {
                    guard index.row(for: Int64(probe)) == model[Int64(probe)] else {
                        Issue.record("seed \(seed) step \(step): key \(probe) disagrees")
                        return
                    }
                }
            }
        }
        #expect(index.count == model.count)
        #expect(Dictionary(uniqueKeysWithValues: index.pairs.map { ($0.key, $0.row) }) == model)
    }

    /// Adding keys in batches agrees with adding them one at a time, duplicates included
    /// (seeded; the seed is in the message).
    @Test(arguments: [1, 2, 3])
    func batchesAgreeWithSingleInserts(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        var batched = IntKeyIndex()
        var single = IntKeyIndex()
        var row: Int32 = 0
        for batch in 0..<40 {
            let size = Int(rng.next() % 600)
            // Rarely a duplicate: of an earlier key, or of one earlier in the batch.
            let keys = (0..<size).map { _ in
                rng.next() % 500 == 0 ? Int64(rng.next() % UInt64(max(1, row))) : Int64(row) * 3 + Int64(rng.next() % 3)
            }
            let rows = keys.indices.map { row + Int32($0) }
            let generations = keys.indices.map { UInt32($0 % 5) }
            var expected: Int?
            for i in keys.indices where !single.insertIfAbsent(keys[i], row: rows[i], generation: generations[i]) {
                expected = i
                break
            }
            let found = keys.withUnsafeBufferPointer { keys in
                rows.withUnsafeBufferPointer { rows in
                    generations.withUnsafeBufferPointer { batched.insertAll(keys, rows: rows, generations: $0) }
                }
            }
            #expect(found == expected, "seed \(seed) batch \(batch)")
            // Continue from the same state: the single index keeps what the batch added.
            #expect(batched.count == single.count, "seed \(seed) batch \(batch)")
            row += Int32(size)
        }
        #expect(
            Dictionary(uniqueKeysWithValues: batched.pairs.map { ($0.key, $0.row) })
                == Dictionary(uniqueKeysWithValues: single.pairs.map { ($0.key, $0.row) }), "seed \(seed)")
        for (key, _) in single.pairs {
            #expect(batched.entry(for: key)?.generation == single.entry(for: key)?.generation, "seed \(seed)")
        }
    }
}

/// A small seeded generator (SplitMix64) for repeatable tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
