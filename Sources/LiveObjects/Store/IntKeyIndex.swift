/// An open-addressing hash map from `Int64` keys to rows: the primary-key index of tables whose
/// primary key is an integer.
///
/// Keys and rows sit side by side in one array, so a lookup usually touches one cache line
/// (a `Dictionary` keeps keys, values and occupancy in three arrays). Linear probing, at most
/// three quarters full, with backward-shift deletion (no tombstones). The hash mixes the key
/// with a per-index random seed.
package struct IntKeyIndex {
    @usableFromInline
    struct Entry {
        var key: Int64
        /// The row, or -1 for an empty slot.
        var row: Int32
        /// The row's generation, kept here (in what would be padding) so that a lookup can make
        /// a handle without touching the table's slot states.
        var generation: UInt32 = 0
    }

    private var entries: [Entry]
    private var mask: Int
    private let seed: UInt64
    package private(set) var count = 0

    package init(capacity: Int = 16) {
        let size = Self.size(for: capacity)
        entries = Array(repeating: Entry(key: 0, row: -1), count: size)
        mask = size - 1
        seed = UInt64.random(in: 1...UInt64.max) | 1
    }

    private static func size(for capacity: Int) -> Int {
        var size = 16
        while size * 3 < capacity * 4 { size *= 2 }
        return size
    }

    @inline(__always)
    private func slot(_ key: Int64) -> Int {
        let h = (UInt64(bitPattern: key) ^ (seed >> 1)) &* seed
        return Int(truncatingIfNeeded: h >> 32 ^ h) & mask
    }

    /// The row of a key.
    @inline(__always)
    package func row(for key: Int64) -> Int32? {
        var i = slot(key)
        return entries.withUnsafeBufferPointer { buffer in
            while true {
                let entry = buffer[i]
                if entry.row < 0 { return nil }
                if entry.key == key { return entry.row }
                i = (i + 1) & mask
            }
        }
    }

    /// The row of a key and its generation.
    @inline(__always)
    package func entry(for key: Int64) -> (row: Int32, generation: UInt32)? {
        var i = slot(key)
        return entries.withUnsafeBufferPointer { buffer in
            while true {
                let entry = buffer[i]
                if entry.row < 0 { return nil }
                if entry.key == key { return (entry.row, entry.generation) }
                i = (i + 1) & mask
            }
        }
    }

    /// Sets the row of a key, replacing any previous one.
    package mutating func insert(_ key: Int64, row: Int32, generation: UInt32 = 0) {
        if (count + 1) * 4 > entries.count * 3 { grow(to: entries.count * 2) }
        var i = slot(key)
        while entries[i].row >= 0 {
            if entries[i].key == key {
                entries[i].row = row
                entries[i].generation = generation
                return
            }
            i = (i + 1) & mask
        }
        entries[i] = Entry(key: key, row: row, generation: generation)
        count += 1
    }

    /// Adds a key that is not there yet, with one probe: returns false (and changes nothing)
    /// when the key is already there.
    package mutating func insertIfAbsent(_ key: Int64, row: Int32, generation: UInt32 = 0) -> Bool {
        if (count + 1) * 4 > entries.count * 3 { grow(to: entries.count * 2) }
        let mask = mask
        var i = slot(key)
        return entries.withUnsafeMutableBufferPointer { buffer in
            while buffer[i].row >= 0 {
                if buffer[i].key == key { return false }
                i = (i + 1) & mask
            }
            buffer[i] = Entry(key: key, row: row, generation: generation)
            count += 1
            return true
        }
    }

    /// Adds keys that are not there yet, in order, as ``insertIfAbsent(_:row:generation:)`` one
    /// after the other would. Returns the position of the first key already there (in the index
    /// or earlier in `keys`), whose entry and those after it are not added; nil when all are.
    ///
    /// Faster than one call per key for large indexes: the first slot of every key is loaded
    /// before any is placed, and those loads do not depend on one another, so their cache misses
    /// overlap instead of coming one at a time.
    package mutating func insertAll(
        _ keys: UnsafeBufferPointer<Int64>, rows: UnsafeBufferPointer<Int32>, generations: UnsafeBufferPointer<UInt32>
    ) -> Int? {
        reserve(count + keys.count)
        let mask = mask
        var slots = [Int](repeating: 0, count: keys.count)
        for (i, key) in keys.enumerated() { slots[i] = slot(key) }
        var added = 0
        let duplicate: Int? = entries.withUnsafeMutableBufferPointer { buffer in
            var touched: Int32 = 0
            for s in slots { touched |= buffer[s].row }
            // Rows are at least -1: this never holds, but keeps the loads above.
            if touched < -1 { return 0 }
            for i in 0..<keys.count {
                let key = keys[i]
                var s = slots[i]
                while buffer[s].row >= 0 {
                    if buffer[s].key == key { return i }
                    s = (s + 1) & mask
                }
                buffer[s] = Entry(key: key, row: rows[i], generation: generations[i])
                added += 1
            }
            return nil
        }
        count += added
        return duplicate
    }

    /// Removes a key.
    package mutating func remove(_ key: Int64) {
        var i = slot(key)
        while true {
            if entries[i].row < 0 { return }
            if entries[i].key == key { break }
            i = (i + 1) & mask
        }
        // Backward-shift deletion: move later entries of the probe run into the hole.
        var hole = i
        var j = (i + 1) & mask
        while entries[j].row >= 0 {
            let home = slot(entries[j].key)
            // Move j into the hole unless its home lies cyclically in (hole, j].
            let inRange = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j)
            if !inRange {
                entries[hole] = entries[j]
                hole = j
            }
            j = (j + 1) & mask
        }
        entries[hole] = Entry(key: 0, row: -1)
        count -= 1
    }

    /// Makes room for at least `capacity` keys.
    package mutating func reserve(_ capacity: Int) {
        let size = Self.size(for: capacity)
        if size > entries.count { grow(to: size) }
    }

    private mutating func grow(to size: Int) {
        let old = entries
        entries = Array(repeating: Entry(key: 0, row: -1), count: size)
        mask = size - 1
        count = 0
        for entry in old where entry.row >= 0 { insert(entry.key, row: entry.row, generation: entry.generation) }
    }

    /// Every (key, row) pair, in no particular order.
    package var pairs: [(key: Int64, row: Int32)] {
        entries.compactMap { $0.row >= 0 ? ($0.key, $0.row) : nil }
    }
}
