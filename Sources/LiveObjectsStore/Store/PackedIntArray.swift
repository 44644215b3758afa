import CPrefetch

/// The storage of an integer column: chunks of 4,096 values (``ChunkedArray``'s geometry), each
/// holding its values at the narrowest width (1, 2, 4 or 8 bytes) that fits every value the
/// chunk has held.
///
/// A chunk starts at the width of its first value and widens (a copy of its 4,096 values at
/// the new width) when a value that does not fit is written to it; it never narrows, so a
/// rolled-back write may leave a chunk wider than its values need. Chunks are copy-on-write
/// like ``ChunkedArray``'s: a copy (a frozen store) shares them until one side changes one.
///
/// A chunk whose values so far are consecutive integers (`k`, `k + 1`, `k + 2`, …, as
/// auto-incremented primary keys in row order are) keeps no bytes at all, only its first value:
/// a *sequence* chunk. The first value that breaks the run writes the chunk out at the width
/// its values need (``PackedIntChunk/materialize(filled:)``), for good.
///
/// A read is a switch on its chunk's width and one load: as many dependent loads as a
/// ``ChunkedArray`` read (the list of chunks, the chunk, the value), the width sitting beside
/// the chunk's address in the list (a sequence chunk's read is an addition instead of the load).
@usableFromInline
package struct PackedIntArray: ColumnStorage {
    @inlinable package static var shift: Int { ChunkedArray<Int64>.shift }
    @inlinable static var chunkSize: Int { 1 << shift }
    @inlinable package static var mask: Int { chunkSize - 1 }

    /// The chunks: value `i` is value `i & 4095` of `chunks[i >> 12]`.
    @usableFromInline package var chunks: [PackedIntChunk] = []
    @usableFromInline package private(set) var count = 0

    @inlinable package init() {}

    @inlinable
    package subscript(position: Int) -> Int64 {
        get { element(at: position) }
        set {
            precondition(UInt(bitPattern: position) < UInt(bitPattern: count), "position out of range")
            let c = position >> Self.shift
            let offset = position & Self.mask
            let filled = Swift.min(Self.chunkSize, count - c << Self.shift)
            if chunks[c].keepsRun(newValue, at: offset, filled: filled) { return }
            chunks[c].set(newValue, at: offset)
        }
    }

    /// The value at a position, checked against ``count`` only (as
    /// ``ChunkedArray/element(at:)``: a chunk always has room for 4,096 values).
    @inlinable @inline(__always)
    package func element(at position: Int) -> Int64 {
        precondition(UInt(bitPattern: position) < UInt(bitPattern: count), "position out of range")
        return chunks.withUnsafeBufferPointer { chunks in
            chunks[position >> Self.shift].value(at: position & Self.mask)
        }
    }

    /// Starts loading the value at a position into the cache, without waiting for it.
    ///
    /// As ``ChunkedArray/prefetch(_:)``, the address is computed from the storage read as
    /// plain words (no retain of the chunk): a chunk's entry in the list is its byte array's
    /// storage address, then its width (``PackedIntChunk``'s stored properties in order).
    @inlinable @inline(__always)
    package func prefetch(_ position: Int) {
        guard UInt(bitPattern: position) < UInt(bitPattern: count) else { return }
        let outer = unsafeBitCast(chunks, to: UnsafeRawPointer.self)
        let entry =
            outer + ChunkedArray<Int64>.arrayHeaderSize + (position >> Self.shift)
            * MemoryLayout<PackedIntChunk>.stride
        let storage = entry.load(as: UnsafeRawPointer.self)
        let widthShift = entry.load(fromByteOffset: MemoryLayout<UnsafeRawPointer>.stride, as: Int.self)
        liveobjects_prefetch(
            storage + ChunkedArray<Int64>.arrayHeaderSize + ((position & Self.mask) << (widthShift & 3)))
    }

    @usableFromInline package mutating func append(_ value: Int64) {
        let offset = count & Self.mask
        if offset == 0 {
            chunks.append(PackedIntChunk(first: value))
            count += 1
            return
        }
        let last = chunks.count - 1
        if !chunks[last].keepsRun(value, at: offset, filled: offset) { chunks[last].set(value, at: offset) }
        count += 1
    }

    @usableFromInline package mutating func append(repeating value: Int64, count: Int) {
        for _ in 0..<count { append(value) }
    }

    package mutating func append<S: Sequence>(contentsOf values: S) where S.Element == Int64 {
        for value in values { append(value) }
    }

    /// Appends the values of a buffer, as ``append(_:)`` for each in order would (each chunk
    /// ends at the width of the widest value it holds), a chunk at a time: one check of the
    /// chunk's uniqueness and width per chunk rather than per value.
    @usableFromInline package mutating func append(contentsOf values: UnsafeBufferPointer<Int64>) {
        var i = 0
        while i < values.count {
            let offset = count & Self.mask
            let n = Swift.min(values.count - i, Self.chunkSize - offset)
            let part = UnsafeBufferPointer(rebasing: values[i..<i + n])
            if offset == 0 { chunks.append(PackedIntChunk(first: part[0])) }
            let last = chunks.count - 1
            if chunks[last].isSequence {
                let start = chunks[last].start &+ Int64(offset)
                var j = 0
                while j < n && part[j] == start &+ Int64(j) { j += 1 }
                if j < n { chunks[last].materialize(filled: offset) }
            }
            if !chunks[last].isSequence { chunks[last].set(part, at: offset) }
            count += n
            i += n
        }
    }

    @usableFromInline package mutating func removeLast() {
        precondition(count > 0, "removeLast on an empty array")
        count -= 1
        if count & Self.mask == 0 { chunks.removeLast() }
    }

    @usableFromInline package mutating func reserveCapacity(_ capacity: Int) {
        chunks.reserveCapacity((capacity + Self.mask) >> Self.shift)
    }

    /// The values of one chunk, typed by its width.
    @usableFromInline
    package enum ChunkValues {
        case int8(UnsafeBufferPointer<Int8>)
        case int16(UnsafeBufferPointer<Int16>)
        case int32(UnsafeBufferPointer<Int32>)
        case int64(UnsafeBufferPointer<Int64>)
    }

    /// Calls `body` with each chunk's values (as many as the array has in it) and the index of
    /// its first value, so that a scan runs a loop specialized for each width.
    @inlinable
    package func forEachChunk(_ body: (Int, ChunkValues) throws -> Void) rethrows {
        for (c, chunk) in chunks.enumerated() {
            let base = c << Self.shift
            let n = Swift.min(Self.chunkSize, count - base)
            if chunk.isSequence {
                // Written out for the scan: a reader of sequence chunks is rare (a filter on
                // an auto-incremented key), and each reader then needs no case of its own.
                try withUnsafeTemporaryAllocation(of: Int64.self, capacity: n) { values in
                    for j in 0..<n { values[j] = chunk.start &+ Int64(j) }
                    try body(base, .int64(UnsafeBufferPointer(values)))
                }
                continue
            }
            try chunk.bytes.withUnsafeBytes { raw in
                switch chunk.widthShift {
                case 0:
                    try body(
                        base, .int8(UnsafeBufferPointer(start: raw.bindMemory(to: Int8.self).baseAddress, count: n)))
                case 1:
                    try body(
                        base, .int16(UnsafeBufferPointer(start: raw.bindMemory(to: Int16.self).baseAddress, count: n)))
                case 2:
                    try body(
                        base, .int32(UnsafeBufferPointer(start: raw.bindMemory(to: Int32.self).baseAddress, count: n)))
                default:
                    try body(
                        base, .int64(UnsafeBufferPointer(start: raw.bindMemory(to: Int64.self).baseAddress, count: n)))
                }
            }
        }
    }

    /// Calls `body` with the 4,096 values of chunk `chunk` at 8 bytes each (those past the
    /// array's end are zero): the chunk's own storage when it is 8 bytes wide, a widened copy
    /// otherwise. For writers that read a chunk through one pointer type.
    package func withWideChunk<R>(_ chunk: Int, _ body: (UnsafeBufferPointer<Int64>) throws -> R) rethrows -> R {
        let packed = chunks[chunk]
        if packed.widthShift == 3 {
            return try packed.bytes.withUnsafeBytes { try body($0.bindMemory(to: Int64.self)) }
        }
        let filled = Swift.min(Self.chunkSize, count - chunk << Self.shift)
        let wide = (0..<Self.chunkSize).map { $0 < filled ? packed.value(at: $0) : 0 }
        return try wide.withUnsafeBufferPointer(body)
    }
}

/// One chunk of a ``PackedIntArray``: room for 4,096 values of `1 << widthShift` bytes, or, for
/// a sequence chunk, no bytes: value `i` is `start + i`.
///
/// The order of the stored properties is part of the layout ``PackedIntArray/prefetch(_:)``
/// reads: the byte array's storage address first, then the width.
@usableFromInline
package struct PackedIntChunk {
    /// The values, native byte order, two's complement at the chunk's width; empty for a
    /// sequence chunk.
    @usableFromInline package private(set) var bytes: [UInt8]
    /// The base-2 logarithm of the width in bytes: 0 (1 byte) to 3 (8 bytes); 4
    /// (``sequenceShift``) for a sequence chunk.
    @usableFromInline package private(set) var widthShift: Int
    /// A sequence chunk's first value (0 for another chunk).
    @usableFromInline package private(set) var start: Int64

    /// The ``widthShift`` of a sequence chunk.
    @usableFromInline static let sequenceShift = 4

    @usableFromInline
    init(widthShift: Int) {
        self.bytes = [UInt8](repeating: 0, count: PackedIntArray.chunkSize << widthShift)
        self.widthShift = widthShift
        self.start = 0
    }

    /// A chunk whose first value is `first`: a sequence chunk, unless the sequence would pass
    /// `Int64.max` within the chunk.
    @usableFromInline
    init(first: Int64) {
        start = 0
        if first <= Int64.max - Int64(PackedIntArray.chunkSize) {
            bytes = []
            widthShift = Self.sequenceShift
            start = first
        } else {
            widthShift = Self.widthShift(of: first)
            bytes = [UInt8](repeating: 0, count: PackedIntArray.chunkSize << widthShift)
            Self.store(first, at: 0, widthShift: widthShift, into: &bytes)
        }
    }

    /// Whether this is a sequence chunk: its values are `start`, `start + 1`, ….
    @inlinable package var isSequence: Bool { widthShift == Self.sequenceShift }

    /// The value at an offset in the chunk (0..<4,096).
    @inlinable @inline(__always)
    package func value(at offset: Int) -> Int64 {
        bytes.withUnsafeBytes { raw in
            switch widthShift {
            case 0: Int64(raw.load(fromByteOffset: offset, as: Int8.self))
            case 1: Int64(raw.load(fromByteOffset: offset << 1, as: Int16.self))
            case 2: Int64(raw.load(fromByteOffset: offset << 2, as: Int32.self))
            case 3: raw.load(fromByteOffset: offset << 3, as: Int64.self)
            default: start &+ Int64(offset)
            }
        }
    }

    /// Whether writing `value` at `offset` leaves a sequence chunk as it is (the value is the
    /// one its run has there): then there is nothing to write. Otherwise a sequence chunk is
    /// written out (``materialize(filled:)``, its first `filled` values) for the caller to
    /// write the value, and a plain chunk is left as it is.
    @usableFromInline
    mutating func keepsRun(_ value: Int64, at offset: Int, filled: Int) -> Bool {
        guard isSequence else { return false }
        if start &+ Int64(offset) == value { return true }
        materialize(filled: filled)
        return false
    }

    /// Writes a sequence chunk's values out as bytes, the first `filled` of them (the others
    /// zero), at the width they need (with none filled, the width of its first value, about
    /// to be written): a sequence chunk turns into a plain one before a value that breaks its
    /// run is written.
    @usableFromInline
    mutating func materialize(filled: Int) {
        precondition(isSequence, "materialize: not a sequence chunk")
        let last = start &+ Int64(Swift.max(filled - 1, 0))
        let shift = Swift.max(Self.widthShift(of: start), Self.widthShift(of: last))
        var written = [UInt8](repeating: 0, count: PackedIntArray.chunkSize << shift)
        for offset in 0..<filled { Self.store(start &+ Int64(offset), at: offset, widthShift: shift, into: &written) }
        bytes = written
        widthShift = shift
        start = 0
    }

    /// The width (as ``widthShift``) a value needs.
    @inlinable @inline(__always)
    package static func widthShift(of value: Int64) -> Int {
        if Int64(Int8(truncatingIfNeeded: value)) == value { return 0 }
        if Int64(Int16(truncatingIfNeeded: value)) == value { return 1 }
        if Int64(Int32(truncatingIfNeeded: value)) == value { return 2 }
        return 3
    }

    /// Writes the value at an offset, widening the chunk first if the value does not fit.
    @usableFromInline
    mutating func set(_ value: Int64, at offset: Int) {
        precondition(!isSequence, "set: a sequence chunk is materialized first")
        let needed = Self.widthShift(of: value)
        if needed > widthShift { widen(to: needed) }
        Self.store(value, at: offset, widthShift: widthShift, into: &bytes)
    }

    /// Writes values from an offset on, widening the chunk first, once, if one of them does
    /// not fit.
    @usableFromInline
    mutating func set(_ values: UnsafeBufferPointer<Int64>, at offset: Int) {
        precondition(!isSequence, "set: a sequence chunk is materialized first")
        var needed = 0
        for value in values { needed = Swift.max(needed, Self.widthShift(of: value)) }
        if needed > widthShift { widen(to: needed) }
        bytes.withUnsafeMutableBytes { raw in
            switch widthShift {
            case 0: Self.store(values, as: Int8.self, from: offset, into: raw)
            case 1: Self.store(values, as: Int16.self, from: offset, into: raw)
            case 2: Self.store(values, as: Int32.self, from: offset, into: raw)
            default: Self.store(values, as: Int64.self, from: offset, into: raw)
            }
        }
    }

    /// Stores values, each of which fits `T`, at `T`'s width from an offset on.
    @inline(__always)
    private static func store<T: FixedWidthInteger>(
        _ values: UnsafeBufferPointer<Int64>, as type: T.Type, from offset: Int, into raw: UnsafeMutableRawBufferPointer
    ) {
        let typed = raw.bindMemory(to: T.self)
        for (j, value) in values.enumerated() { typed[offset + j] = T(truncatingIfNeeded: value) }
    }

    private mutating func widen(to newShift: Int) {
        var wider = [UInt8](repeating: 0, count: PackedIntArray.chunkSize << newShift)
        for offset in 0..<PackedIntArray.chunkSize {
            Self.store(value(at: offset), at: offset, widthShift: newShift, into: &wider)
        }
        bytes = wider
        widthShift = newShift
    }

    private static func store(_ value: Int64, at offset: Int, widthShift: Int, into bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            switch widthShift {
            case 0: raw.storeBytes(of: Int8(truncatingIfNeeded: value), toByteOffset: offset, as: Int8.self)
            case 1: raw.storeBytes(of: Int16(truncatingIfNeeded: value), toByteOffset: offset << 1, as: Int16.self)
            case 2: raw.storeBytes(of: Int32(truncatingIfNeeded: value), toByteOffset: offset << 2, as: Int32.self)
            default: raw.storeBytes(of: value, toByteOffset: offset << 3, as: Int64.self)
            }
        }
    }
}
