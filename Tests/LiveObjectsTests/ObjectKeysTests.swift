import LiveObjects
import LiveObjectsTestSupport
import Testing

@Suite struct ObjectKeysTests {
    /// Keys appended in ascending rows, in runs and alone, read back as the array of them:
    /// iteration, positions, `last`, `contains(row:)` (seeded; the seed is in the message).
    @Test(arguments: [1, 2, 3])
    func agreesWithAnArray(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var keys = ObjectKeys()
        var reference: [ObjectKey] = []
        var row: UInt32 = UInt32(rng.next() % 10)
        for _ in 0..<2_000 {
            let key = ObjectKey(row: row, generation: rng.next() % 8 == 0 ? UInt32(rng.next() % 3) : 0)
            keys.append(key)
            reference.append(key)
            row += rng.next() % 4 == 0 ? UInt32(1 + rng.next() % 5) : 1
        }
        #expect(Array(keys) == reference, "seed \(seed)")
        #expect(keys.count == reference.count && keys.last == reference.last, "seed \(seed)")
        for position in stride(from: 0, to: reference.count, by: 7) where keys[position] != reference[position] {
            Issue.record("seed \(seed): position \(position) is \(keys[position]), not \(reference[position])")
            return
        }
        let rows = Set(reference.map(\.row))
        for probe in 0...(row + 2) where keys.contains(row: probe) != rows.contains(probe) {
            Issue.record("seed \(seed): contains(row: \(probe)) is wrong")
            return
        }
        // Runs are merged as keys arrive: the same keys are equal however they were given.
        #expect(ObjectKeys(reference) == keys && ObjectKeys(reference).hashValue == keys.hashValue)
    }

    @Test func aMillionFreshRowsAreOneRun() {
        var keys = ObjectKeys()
        for row in UInt32(0)..<1_000_000 { keys.append(ObjectKey(row: row, generation: 0)) }
        #expect(keys.count == 1_000_000 && keys[999_999] == ObjectKey(row: 999_999, generation: 0))
        #expect(keys.contains(row: 500_000) && !keys.contains(row: 1_000_000))
        #expect(keys.rowRuns.count == 1)
        keys.append(ObjectKey(row: 1_000_005, generation: 2))
        #expect(keys.rowRuns.map(\.count) == [1_000_000, 1] && keys.last == ObjectKey(row: 1_000_005, generation: 2))
    }
}
