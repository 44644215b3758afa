import Synchronization

/// A map from `Int64` keys to rows and generations: the primary-key index of tables whose
/// primary key is an integer.
///
/// Two layouts. While the keys are dense (they span at most about twice as many values as
/// there are keys, as auto-incremented ids do) the index is an array with one slot per key
/// value from the smallest key on: no hashing, consecutive keys in consecutive slots (an
/// insert in key order touches memory in order), 8 bytes a slot. When a key would leave that
/// shape (a key below the smallest, or far beyond the largest), the index turns into an
/// open-addressing hash map for good.
///
/// The hash map keeps keys and rows side by side in one array, so a lookup usually touches one
/// cache line (a `Dictionary` keeps keys, values and occupancy in three arrays). Linear
/// probing, at most three quarters full, with backward-shift deletion (no tombstones). The
/// hash mixes the key with a per-index random seed.
///
/// Either layout also notes whether every key's row is the key minus one fixed offset, as it is
/// when objects with increasing keys fill fresh slots in order. While that holds, the table
/// finds a key's row by arithmetic (``alignedRow(for:)``) and confirms it by the row's state
/// alone, without reading the index.
///
/// While the dense layout holds only such keys, it keeps no slots at all: a key's row is known
/// by arithmetic, so the index keeps one bit per key value (whether the key is there) and the
/// generations that are not zero (a row used again), 1/64 of the slots' bytes. The first key
/// placed at another row writes the slots out (``materializeSlots()``), for good.
/// The random part of every ``IntKeyIndex``'s seed, drawn once per process.
private let intKeyIndexSeedBase = UInt64.random(in: 0...UInt64.max)
/// The number of ``IntKeyIndex``es made, for their seeds.
private let intKeyIndexCount = Atomic<UInt64>(0)

@usableFromInline
package struct IntKeyIndex {
    @usableFromInline
    package struct Entry {
        @usableFromInline package var key: Int64
        /// The row, or -1 for an empty slot.
        @usableFromInline package var row: Int32
        /// The row's generation, kept here (in what would be padding) so that a lookup can make
        /// a handle without touching the table's slot states.
        @usableFromInline package var generation: UInt32 = 0
    }

    /// A slot of the dense layout: the row (-1 when no key has this value) and its generation.
    @usableFromInline
    struct Slot {
        @usableFromInline package var row: Int32
        @usableFromInline package var generation: UInt32
        package static var empty: Slot { Slot(row: -1, generation: 0) }
    }

    /// Whether the dense layout is in use.
    @usableFromInline private(set) var isDense = true
    /// Whether the dense layout keeps bits instead of slots: every key's row is the key minus
    /// ``keyOffset``. Bit `i` of ``present`` says whether key `base + i` is there; ``span``
    /// bits are in use.
    @usableFromInline private(set) var isImplicit = true
    @usableFromInline private(set) var present: [UInt64] = []
    @usableFromInline private(set) var span = 0
    /// The generations that are not zero, by key offset from ``base``, while ``isImplicit``.
    @usableFromInline private(set) var implicitGenerations: [Int: UInt32] = [:]
    /// The dense layout: slot `i` holds key `base + i`.
    @usableFromInline private(set) var slots: [Slot] = []
    @usableFromInline private(set) var base: Int64 = 0
    /// The hash layout.
    @usableFromInline private(set) var entries: [Entry] = []
    @usableFromInline private(set) var mask = 0
    @usableFromInline let seed: UInt64
    package private(set) var count = 0
    /// Whether every stored key's row is `key - keyOffset` (never for an empty index).
    @usableFromInline package private(set) var rowsFollowKeys = false
    @usableFromInline private(set) var keyOffset: Int64 = 0

    package init() {
        seed = Self.nextSeed()
    }

    /// A seed for a new index: the process's random value mixed with the number of indexes made
    /// before (so that seeds differ from index to index, and copying the keys of one index into
    /// another does not fill one run of its slots), instead of a draw
    /// from the system's random source per index, a system call that a frozen copy of a store
    /// (one per commit with subscribers) paid for every table.
    static func nextSeed() -> UInt64 {
        var z = intKeyIndexSeedBase &+ intKeyIndexCount.add(1, ordering: .relaxed).newValue &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return (z ^ (z >> 31)) | 1
    }

    private static func size(for capacity: Int) -> Int {
        var size = 16
        while size * 3 < capacity * 4 { size *= 2 }
        return size
    }

    /// The most slots the dense layout may span for `count` keys.
    private static func denseLimit(_ count: Int) -> Int { 2 * count + 1_024 }

    /// Whether the index uses the dense layout (for tests).
    package var usesDenseLayout: Bool { isDense }

    /// Whether the dense layout keeps bits instead of slots (for tests).
    package var keepsNoSlots: Bool { isDense && isImplicit }

    /// The bytes the index holds in its arrays (not counting allocation headers).
    package var bytes: Int {
        slots.capacity * MemoryLayout<Slot>.stride + entries.capacity * MemoryLayout<Entry>.stride
            + present.capacity * 8 + implicitGenerations.capacity * 16
    }

    @inlinable @inline(__always)
    func hashSlot(_ key: Int64) -> Int {
        let h = (UInt64(bitPattern: key) ^ (seed >> 1)) &* seed
        return Int(truncatingIfNeeded: h >> 32 ^ h) & mask
    }

    /// The dense slot of a key, if the key falls inside the dense layout's span.
    @inlinable @inline(__always)
    func denseSlot(_ key: Int64) -> Int? {
        let (offset, overflow) = key.subtractingReportingOverflow(base)
        guard !overflow, UInt64(bitPattern: offset) < UInt64(slots.count) else { return nil }
        return Int(offset)
    }

    /// The only row that can hold `key`, while ``rowsFollowKeys`` holds: then a key is in the
    /// index exactly when that row (if there is such a row) holds a live object. Nil otherwise.
    /// Wrapping arithmetic: far keys give rows beyond any table.
    @inlinable @inline(__always)
    package func alignedRow(for key: Int64) -> UInt64? {
        rowsFollowKeys ? UInt64(bitPattern: key &- keyOffset) : nil
    }

    /// Records a key about to be placed at a row, before ``count`` counts it.
    @inline(__always)
    private mutating func notePlacement(_ key: Int64, row: Int32) {
        let offset = key &- Int64(row)
        if count == 0 {
            rowsFollowKeys = true
            keyOffset = offset
        } else if offset != keyOffset {
            rowsFollowKeys = false
        }
    }

    /// The row of a key.
    @inlinable @inline(__always)
    package func row(for key: Int64) -> Int32? {
        entry(for: key)?.row
    }

    /// The row of a key and its generation.
    @inlinable @inline(__always)
    package func entry(for key: Int64) -> (row: Int32, generation: UInt32)? {
        if isImplicit {
            let (offset, overflow) = key.subtractingReportingOverflow(base)
            guard !overflow, UInt64(bitPattern: offset) < UInt64(span) else { return nil }
            let i = Int(offset)
            guard present.withUnsafeBufferPointer({ $0[i >> 6] }) & (1 << UInt64(i & 63)) != 0 else { return nil }
            return (
                Int32(truncatingIfNeeded: key &- keyOffset),
                implicitGenerations.isEmpty ? 0 : implicitGenerations[i] ?? 0
            )
        }
        if isDense {
            guard let i = denseSlot(key) else { return nil }
            let slot = slots.withUnsafeBufferPointer { $0[i] }
            return slot.row < 0 ? nil : (slot.row, slot.generation)
        }
        var i = hashSlot(key)
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
        _ = put(key, row: row, generation: generation, replacing: true)
    }

    /// Adds a key that is not there yet, with one probe: returns false (and changes nothing)
    /// when the key is already there.
    package mutating func insertIfAbsent(_ key: Int64, row: Int32, generation: UInt32 = 0) -> Bool {
        put(key, row: row, generation: generation, replacing: false)
    }

    /// Places a key; returns false when the key was there (and is replaced only if asked).
    @inline(__always)
    private mutating func put(_ key: Int64, row: Int32, generation: UInt32, replacing: Bool) -> Bool {
        if isImplicit {
            if let placed = putImplicit(key, row: row, generation: generation, replacing: replacing) { return placed }
            materializeSlots()
        }
        if isDense {
            if let i = denseSlot(key) ?? makeDenseSlot(key) {
                let existed = slots[i].row >= 0
                if existed && !replacing { return false }
                notePlacement(key, row: row)
                slots[i] = Slot(row: row, generation: generation)
                if !existed { count += 1 }
                return !existed
            }
            convertToHash()
        }
        if (count + 1) * 4 > entries.count * 3 { grow(to: entries.count * 2) }
        let mask = mask
        var i = hashSlot(key)
        let found = entries.withUnsafeBufferPointer { buffer in
            while buffer[i].row >= 0 {
                if buffer[i].key == key { return true }
                i = (i + 1) & mask
            }
            return false
        }
        if found && !replacing { return false }
        notePlacement(key, row: row)
        entries[i] = Entry(key: key, row: row, generation: generation)
        if !found { count += 1 }
        return !found
    }

    /// Places a key while the layout keeps bits; nil (changing nothing) when it cannot: the key's
    /// row is not the one its value gives, or the key is outside what the dense layout spans.
    private mutating func putImplicit(_ key: Int64, row: Int32, generation: UInt32, replacing: Bool) -> Bool? {
        if count == 0 {
            present.removeAll(keepingCapacity: true)
            implicitGenerations.removeAll()
            span = 0
            base = key
            keyOffset = key &- Int64(row)
        } else if key &- Int64(row) != keyOffset {
            return nil
        }
        let (offset, overflow) = key.subtractingReportingOverflow(base)
        guard !overflow, offset >= 0, offset < Int64(Self.denseLimit(count + 1)) else { return nil }
        let i = Int(offset)
        if i >= span {
            span = i + 1
            let words = (span + 63) >> 6
            if words > present.count { present.append(contentsOf: repeatElement(0, count: words - present.count)) }
        }
        let bit: UInt64 = 1 << UInt64(i & 63)
        let existed = present[i >> 6] & bit != 0
        if existed && !replacing { return false }
        present[i >> 6] |= bit
        if generation != 0 {
            implicitGenerations[i] = generation
        } else if !implicitGenerations.isEmpty {
            implicitGenerations[i] = nil
        }
        rowsFollowKeys = true
        if !existed { count += 1 }
        return !existed
    }

    /// Writes the slots of the keys the bits hold, for a key that does not follow them: the
    /// dense layout keeps slots from then on.
    private mutating func materializeSlots() {
        isImplicit = false
        slots = []
        if count > 0 {
            slots.reserveCapacity(span)
            for i in 0..<span {
                guard present[i >> 6] & (1 << UInt64(i & 63)) != 0 else {
                    slots.append(.empty)
                    continue
                }
                let key = base + Int64(i)
                slots.append(
                    Slot(row: Int32(truncatingIfNeeded: key &- keyOffset), generation: implicitGenerations[i] ?? 0))
            }
        }
        present = []
        implicitGenerations = [:]
        span = 0
    }

    /// Extends the dense layout to cover a key outside its span, if the layout stays dense;
    /// returns the key's slot, or nil when the index must turn into a hash map.
    private mutating func makeDenseSlot(_ key: Int64) -> Int? {
        if count == 0 {
            // Nothing stored: start the span at this key.
            slots.removeAll(keepingCapacity: true)
            base = key
            slots.append(.empty)
            return 0
        }
        let (offset, overflow) = key.subtractingReportingOverflow(base)
        guard !overflow, offset >= 0, offset < Int64(Self.denseLimit(count + 1)) else { return nil }
        slots.append(contentsOf: repeatElement(.empty, count: Int(offset) - slots.count + 1))
        return Int(offset)
    }

    /// Moves every key into the hash layout, for good.
    private mutating func convertToHash() {
        isDense = false
        let size = Self.size(for: max(count + 1, 8))
        entries = Array(repeating: Entry(key: 0, row: -1), count: size)
        mask = size - 1
        let old = slots
        slots = []
        count = 0
        for (i, slot) in old.enumerated() where slot.row >= 0 {
            _ = put(base + Int64(i), row: slot.row, generation: slot.generation, replacing: true)
        }
    }

    /// Adds keys that are not there yet, in order, as ``insertIfAbsent(_:row:generation:)`` one
    /// after the other would. Returns the position of the first key already there (in the index
    /// or earlier in `keys`), whose entry and those after it are not added; nil when all are.
    ///
    /// In the hash layout, faster than one call per key for large indexes: the first slot of
    /// every key is loaded before any is placed, and those loads do not depend on one another,
    /// so their cache misses overlap instead of coming one at a time.
    package mutating func insertAll(
        _ keys: UnsafeBufferPointer<Int64>, rows: UnsafeBufferPointer<Int32>, generations: UnsafeBufferPointer<UInt32>
    ) -> Int? {
        // The dense layout places keys in order anyway (until a key makes it a hash map).
        var first = 0
        while first < keys.count && isDense {
            if !put(keys[first], row: rows[first], generation: generations[first], replacing: false) { return first }
            first += 1
        }
        guard first < keys.count else { return nil }
        reserve(count + keys.count - first)
        let mask = mask
        var homes = [Int](repeating: 0, count: keys.count)
        for i in first..<keys.count { homes[i] = hashSlot(keys[i]) }
        var added = 0
        // Alignment is noted here, as `put` would note it key by key.
        let offset = count == 0 ? keys[first] &- Int64(rows[first]) : keyOffset
        var aligned = count == 0 || rowsFollowKeys
        let duplicate: Int? = entries.withUnsafeMutableBufferPointer { buffer in
            var touched: Int32 = 0
            for i in first..<keys.count { touched |= buffer[homes[i]].row }
            // Rows are at least -1: this never holds, but keeps the loads above.
            if touched < -1 { return first }
            for i in first..<keys.count {
                let key = keys[i]
                var s = homes[i]
                while buffer[s].row >= 0 {
                    if buffer[s].key == key { return i }
                    s = (s + 1) & mask
                }
                buffer[s] = Entry(key: key, row: rows[i], generation: generations[i])
                if key &- Int64(rows[i]) != offset { aligned = false }
                added += 1
            }
            return nil
        }
        if added > 0 {
            rowsFollowKeys = aligned
            keyOffset = offset
        }
        count += added
        return duplicate
    }

    /// Removes a key.
    package mutating func remove(_ key: Int64) {
        if isImplicit {
            let (offset, overflow) = key.subtractingReportingOverflow(base)
            guard !overflow, UInt64(bitPattern: offset) < UInt64(span) else { return }
            let i = Int(offset)
            let bit: UInt64 = 1 << UInt64(i & 63)
            guard present[i >> 6] & bit != 0 else { return }
            present[i >> 6] &= ~bit
            if !implicitGenerations.isEmpty { implicitGenerations[i] = nil }
            count -= 1
            if count == 0 { rowsFollowKeys = false }
            // Trailing absent keys leave the span (a rolled-back bulk insert leaves none behind).
            while span > 0 {
                let word = present[(span - 1) >> 6] & (UInt64.max >> UInt64(63 - ((span - 1) & 63)))
                if word != 0 {
                    span = ((span - 1) & ~63) + 64 - word.leadingZeroBitCount
                    break
                }
                span = (span - 1) & ~63
            }
            present.removeLast(present.count - (span + 63) >> 6)
            return
        }
        if isDense {
            guard let i = denseSlot(key), slots[i].row >= 0 else { return }
            slots[i] = .empty
            count -= 1
            if count == 0 { rowsFollowKeys = false }
            // Trailing empty slots go (a rolled-back bulk insert leaves no span behind).
            while slots.last?.row == -1 { slots.removeLast() }
            return
        }
        var i = hashSlot(key)
        while true {
            if entries[i].row < 0 { return }
            if entries[i].key == key { break }
            i = (i + 1) & mask
        }
        // Backward-shift deletion: move later entries of the probe run into the hole.
        var hole = i
        var j = (i + 1) & mask
        while entries[j].row >= 0 {
            let home = hashSlot(entries[j].key)
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
        if count == 0 { rowsFollowKeys = false }
    }

    /// Makes room for at least `capacity` keys.
    package mutating func reserve(_ capacity: Int) {
        if isImplicit {
            present.reserveCapacity((capacity + 63) >> 6)
            return
        }
        if isDense {
            slots.reserveCapacity(capacity)
            return
        }
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
        if isImplicit {
            return (0..<span).compactMap { i in
                guard present[i >> 6] & (1 << UInt64(i & 63)) != 0 else { return nil }
                let key = base + Int64(i)
                return (key, Int32(truncatingIfNeeded: key &- keyOffset))
            }
        }
        if isDense {
            return slots.enumerated().compactMap { $1.row >= 0 ? (base + Int64($0), $1.row) : nil }
        }
        return entries.compactMap { $0.row >= 0 ? ($0.key, $0.row) : nil }
    }
}
