import LiveObjectsTestSupport
import Testing

@testable import LiveObjects
@testable import LiveObjectsStore

@Suite struct IntKeyIndexTests {
    /// Indexes made one after the other (as a frozen copy makes one per table) get seeds of
    /// their own, odd, as the hash's multiplication needs.
    @Test func indexesGetSeedsOfTheirOwn() {
        let seeds = (0..<1_000).map { _ in IntKeyIndex().seed }
        #expect(Set(seeds).count == seeds.count)
        #expect(seeds.allSatisfy { $0 & 1 == 1 })
    }

    /// Random inserts and removals agree with a Dictionary (seeded; the seed is in the message).
    @Test(arguments: [1, 2, 3, 4, 5])
    func agreesWithDictionary(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
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

    /// Adding keys in batches agrees with adding them one at a time, duplicates included, with
    /// dense keys (odd seeds) and keys spread out enough for the hash layout (even seeds)
    /// (seeded; the seed is in the message).
    @Test(arguments: [1, 2, 3, 4])
    func batchesAgreeWithSingleInserts(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let spread: Int64 = seed % 2 == 1 ? 1 : 1_000_003
        var batched = IntKeyIndex()
        var single = IntKeyIndex()
        var row: Int32 = 0
        for batch in 0..<40 {
            let size = Int(rng.next() % 600)
            // Rarely a duplicate: of an earlier key, or of one earlier in the batch.
            let keys = (0..<size).map { i in
                spread * (rng.next() % 500 == 0 ? Int64(rng.next() % UInt64(max(1, row))) : Int64(row) + Int64(i))
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
        #expect(batched.usesDenseLayout == (spread == 1), "seed \(seed)")
        #expect(
            Dictionary(uniqueKeysWithValues: batched.pairs.map { ($0.key, $0.row) })
                == Dictionary(uniqueKeysWithValues: single.pairs.map { ($0.key, $0.row) }), "seed \(seed)")
        for (key, _) in single.pairs {
            #expect(batched.entry(for: key)?.generation == single.entry(for: key)?.generation, "seed \(seed)")
        }
    }
}

extension IntKeyIndexTests {
    /// Keys inside a dense span (the first key is the smallest) keep the array layout, and
    /// random inserts, replacements and removals agree with a Dictionary.
    @Test(arguments: [11, 12, 13])
    func denseKeysAgreeWithDictionary(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var index = IntKeyIndex()
        var model: [Int64: Int32] = [:]
        let start = Int64(rng.next() % 1_000_000) - 500_000
        index.insert(start, row: 0)
        model[start] = 0
        for step in 1..<20_000 {
            let key = start + Int64(rng.next() % 1_000)
            switch rng.next() % 4 {
            case 0:
                index.remove(key)
                model[key] = nil
            case 1:
                let added = index.insertIfAbsent(key, row: Int32(step))
                #expect(added == (model[key] == nil), "seed \(seed) step \(step) key \(key)")
                if added { model[key] = Int32(step) }
            default:
                index.insert(key, row: Int32(step), generation: UInt32(step))
                model[key] = Int32(step)
            }
        }
        #expect(index.usesDenseLayout, "seed \(seed)")
        #expect(index.count == model.count)
        for probe in (start - 10)..<(start + 1_010) where index.row(for: probe) != model[probe] {
            Issue.record("seed \(seed): key \(probe) disagrees")
            return
        }
        #expect(Dictionary(uniqueKeysWithValues: index.pairs.map { ($0.key, $0.row) }) == model)
    }

    /// Ascending ids stay in the array; a key below the smallest or far beyond the largest
    /// turns the index into a hash map, keeping every entry (generations included).
    @Test func layoutChangesKeepEntries() {
        var ascending = IntKeyIndex()
        for key in Int64(1)...100_000 { ascending.insert(key, row: Int32(key), generation: UInt32(key % 7)) }
        #expect(ascending.usesDenseLayout && ascending.count == 100_000)
        #expect(ascending.entry(for: 77_777)! == (77_777, 77_777 % 7))
        #expect(ascending.row(for: 0) == nil && ascending.row(for: 100_001) == nil)

        var below = ascending
        below.insert(0, row: 0)
        #expect(!below.usesDenseLayout && below.count == 100_001)
        #expect(below.row(for: 0) == 0 && below.entry(for: 99_999)! == (99_999, 99_999 % 7))

        var far = ascending
        far.insert(Int64.max, row: 1)
        far.insert(Int64.min, row: 2)
        #expect(!far.usesDenseLayout && far.count == 100_002)
        #expect(far.row(for: .max) == 1 && far.row(for: .min) == 2 && far.row(for: 50_000) == 50_000)

        var sparse = IntKeyIndex()
        for i in Int64(0)..<5_000 { sparse.insert(i * 1_000_003, row: Int32(i)) }
        #expect(!sparse.usesDenseLayout)
        #expect((Int64(0)..<5_000).allSatisfy { sparse.row(for: $0 * 1_000_003) == Int32($0) })
    }
}

extension IntKeyIndexTests {
    /// Whether rows follow keys is noted exactly: while the index says so, every entry's row
    /// is where `alignedRow(for:)` points; ascending keys in fresh rows keep it so; an empty
    /// index never says so. Random inserts (mostly aligned), replacements, removals and batches,
    /// in both layouts (seeded; the seed and step are in the message).
    @Test(arguments: [21, 22, 23, 24])
    func alignmentIsNotedExactly(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var index = IntKeyIndex()
        #expect(!index.rowsFollowKeys)
        let offset = Int64(rng.next() % 1_000) - 500
        // Even seeds spread some keys far apart, which turns the index into a hash map.
        let far: Int64 = seed % 2 == 0 ? 1 << 40 : 0
        var nextRow: Int32 = 0
        for step in 0..<5_000 {
            switch rng.next() % 10 {
            case 0...4:
                index.insert(Int64(nextRow) + offset, row: nextRow)
                nextRow += 1
            case 5:
                let row = Int32(rng.next() % UInt64(nextRow + 1))
                index.insert(Int64(rng.next() % 2_000) + offset + (rng.next() % 8 == 0 ? far : 0), row: row)
            case 6, 7:
                index.remove(Int64(rng.next() % UInt64(nextRow + 1)) + offset)
            case 8:
                let rows = (0..<Int32(rng.next() % 40)).map { nextRow + $0 }
                let keys = rows.map { Int64($0) + offset + (rng.next() % 50 == 0 ? 1 : 0) }
                let generations = [UInt32](repeating: 0, count: rows.count)
                let stop = keys.withUnsafeBufferPointer { keys in
                    rows.withUnsafeBufferPointer { rows in
                        generations.withUnsafeBufferPointer { index.insertAll(keys, rows: rows, generations: $0) }
                    }
                }
                nextRow += Int32(stop ?? rows.count)
            default:
                // Start over now and then, so that alignment is also found again.
                if rng.next() % 20 == 0 {
                    for (key, _) in index.pairs { index.remove(key) }
                    #expect(!index.rowsFollowKeys, "seed \(seed) step \(step)")
                }
            }
            guard index.rowsFollowKeys else { continue }
            for (key, row) in index.pairs where index.alignedRow(for: key) != UInt64(row) {
                Issue.record("seed \(seed) step \(step): key \(key) is in row \(row), not the aligned one")
                return
            }
        }
        var ascending = IntKeyIndex()
        for row in Int32(0)..<10_000 { ascending.insert(Int64(row) + offset, row: row) }
        ascending.remove(offset + 17)
        #expect(ascending.rowsFollowKeys && ascending.alignedRow(for: offset + 9_999) == 9_999)
        ascending.insert(offset + 17, row: 10_000)
        #expect(!ascending.rowsFollowKeys)
    }
}

extension IntKeyIndexTests {
    /// Keys whose rows follow them keep bits, not slots (a bit per key value, generations that
    /// are not zero apart); the first key in another row writes the slots out with every entry
    /// and generation; removals at the end shorten the span.
    @Test func alignedKeysKeepNoSlots() {
        var index = IntKeyIndex()
        for key in Int64(1_000)..<101_000 { index.insert(key, row: Int32(key - 1_000)) }
        index.insert(5_000, row: 4_000, generation: 3)
        #expect(index.keepsNoSlots && index.count == 100_000)
        #expect(index.bytes < 100_000 / 4, "\(index.bytes) bytes")
        #expect(index.entry(for: 5_000)! == (4_000, 3) && index.entry(for: 5_001)! == (4_001, 0))
        #expect(index.row(for: 999) == nil && index.row(for: 101_000) == nil)
        index.remove(5_001)
        #expect(index.row(for: 5_001) == nil && index.count == 99_999)
        // A removal at the end shortens the span: the next key may start further on again.
        for key in Int64(100_990)..<101_000 { index.remove(key) }
        #expect(index.keepsNoSlots && index.pairs.map(\.key).max() == 100_989)

        var moved = index
        moved.insert(200_000, row: 7)
        #expect(!moved.keepsNoSlots && moved.usesDenseLayout && moved.count == 99_990)
        #expect(moved.entry(for: 5_000)! == (4_000, 3) && moved.row(for: 5_001) == nil)
        #expect(moved.row(for: 200_000) == 7 && moved.row(for: 100_989) == 99_989)
        #expect(!moved.rowsFollowKeys)

        // Every key removed: the bits start over at the next key, wherever it is.
        for (key, _) in index.pairs { index.remove(key) }
        #expect(index.count == 0 && index.keepsNoSlots && !index.rowsFollowKeys)
        index.insert(-50, row: 0)
        #expect(index.keepsNoSlots && index.entry(for: -50)! == (0, 0) && index.alignedRow(for: -49) == 1)
    }
}
