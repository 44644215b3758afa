import CPrefetch

/// How a scalar column stores its values (``ColumnElement/Storage``): a ``ChunkedArray`` of
/// the values, or for integers a ``PackedIntArray``. What the column's generic operations and
/// the typed reads of the layers above use.
@usableFromInline
package protocol ColumnStorage<Element> {
    associatedtype Element
    init()
    /// The number of values.
    var count: Int { get }
    subscript(position: Int) -> Element { get set }
    /// The value at a position, checked against ``count`` only.
    func element(at position: Int) -> Element
    /// Starts loading the value at a position into the cache.
    func prefetch(_ position: Int)
    mutating func append(_ element: Element)
    mutating func append(repeating element: Element, count: Int)
    mutating func removeLast()
    mutating func reserveCapacity(_ capacity: Int)
}

/// An array stored in fixed-size chunks, copy-on-write per chunk.
///
/// Copying a chunked array (to freeze a store) copies only the list of chunk references; the
/// next change to either copy duplicates that list and the one chunk it touches, not the whole
/// array. So a write after a snapshot costs O(n / 4096 + 4096), not O(n).
@usableFromInline
package struct ChunkedArray<Element>: RandomAccessCollection, MutableCollection, ColumnStorage {
    @inlinable package static var shift: Int { 12 }
    @inlinable static var chunkSize: Int { 1 << shift }
    @inlinable package static var mask: Int { chunkSize - 1 }

    /// The elements, 4,096 per chunk (element `i` is `chunks[i >> 12][i & 4095]`): read by
    /// other modules of the package, whose calls of this generic type's own subscript run
    /// unspecialized.
    @usableFromInline package var chunks: [[Element]] = []
    @usableFromInline package private(set) var count = 0

    @inlinable package init() {}

    // MARK: Reading the chunks from another module
    //
    // Codecs (the snapshot writer) walk ``chunks`` chunk by chunk for speed; these name the
    // geometry, so that none of them writes it out.

    /// The position of element `offset` of chunk `chunk`.
    @inlinable @inline(__always)
    package static func position(chunk: Int, offset: Int) -> Int { chunk << shift | offset }

    /// Element `position` of chunks taken from a chunked array (``chunks``).
    @inlinable @inline(__always)
    package static func element(_ chunks: [[Element]], at position: Int) -> Element {
        chunks[position >> shift][position & mask]
    }

    package init(repeating element: Element, count: Int) {
        for _ in 0..<count { append(element) }
    }

    @inlinable package var startIndex: Int { 0 }
    @inlinable package var endIndex: Int { count }

    @inlinable
    package subscript(position: Int) -> Element {
        get { chunks[position >> Self.shift][position & Self.mask] }
        set { chunks[position >> Self.shift][position & Self.mask] = newValue }
        _modify { yield &chunks[position >> Self.shift][position & Self.mask] }
    }

    /// The element at a position, checked against ``count`` only: the subscript also checks
    /// the position against its chunk's own count, which is kept in the chunk's first cache
    /// line, so a read at a random position would wait for that line (and its page's address
    /// translation) as well as for the element's.
    @inlinable @inline(__always)
    package func element(at position: Int) -> Element {
        precondition(UInt(bitPattern: position) < UInt(bitPattern: count), "position out of range")
        return chunks.withUnsafeBufferPointer { chunks in
            chunks[position >> Self.shift].withUnsafeBufferPointer { $0[position & Self.mask] }
        }
    }

    /// Starts loading the element at a position into the cache, without waiting for it.
    ///
    /// The element's address is computed from the addresses of the arrays' storage, read as
    /// plain words: going through the arrays would retain and release the chunk, and those
    /// atomic operations wait for every load in flight, which is what a prefetch is meant not
    /// to do. (A prefetch of a wrong address cannot fault: it is only a hint.)
    @inlinable @inline(__always)
    package func prefetch(_ position: Int) {
        guard UInt(bitPattern: position) < UInt(bitPattern: count) else { return }
        let outer = unsafeBitCast(chunks, to: UnsafeRawPointer.self)
        let chunk = outer.load(
            fromByteOffset: Self.arrayHeaderSize + (position >> Self.shift) * MemoryLayout<UnsafeRawPointer>.stride,
            as: UnsafeRawPointer.self)
        liveobjects_prefetch(
            chunk + Self.arrayHeaderSize + (position & Self.mask) * MemoryLayout<Element>.stride)
    }

    /// Starts loading the storage of the array at a position (its count and first elements)
    /// into the cache, without waiting for it, for a chunked array of arrays: the array's
    /// address is read from its chunk as a plain word, as ``prefetch(_:)`` computes it, so the
    /// element itself should be in the cache already (asked for by ``prefetch(_:)`` some
    /// elements before), or this waits for it.
    @inline(__always)
    func prefetchStorage<T>(ofArrayAt position: Int) where Element == [T] {
        guard UInt(bitPattern: position) < UInt(bitPattern: count) else { return }
        let outer = unsafeBitCast(chunks, to: UnsafeRawPointer.self)
        let chunk = outer.load(
            fromByteOffset: Self.arrayHeaderSize + (position >> Self.shift) * MemoryLayout<UnsafeRawPointer>.stride,
            as: UnsafeRawPointer.self)
        let array = chunk.load(
            fromByteOffset: Self.arrayHeaderSize + (position & Self.mask) * MemoryLayout<Element>.stride,
            as: UnsafeRawPointer.self)
        liveobjects_prefetch(array)
        liveobjects_prefetch(array + 64)
    }

    /// Where an array's elements start in its storage object: the object header (two words)
    /// and the count and capacity (two words).
    @inlinable @inline(__always)
    static var arrayHeaderSize: Int { 4 * MemoryLayout<Int>.stride }

    @usableFromInline package mutating func append(_ element: Element) {
        if count & Self.mask == 0 {
            var chunk: [Element] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(element)
        count += 1
    }

    /// Appends `count` copies of an element, a chunk at a time.
    @usableFromInline package mutating func append(repeating element: Element, count: Int) {
        var left = count
        while left > 0 {
            if self.count & Self.mask == 0 {
                var chunk: [Element] = []
                chunk.reserveCapacity(Self.chunkSize)
                chunks.append(chunk)
            }
            let n = Swift.min(left, Self.chunkSize - self.count & Self.mask)
            chunks[chunks.count - 1].append(contentsOf: repeatElement(element, count: n))
            self.count += n
            left -= n
        }
    }

    package mutating func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        for element in elements { append(element) }
    }

    /// Appends the elements of a buffer, as ``append(_:)`` for each in order would, filling the
    /// last chunk and then whole new ones: one check of the chunk's uniqueness and capacity per
    /// chunk rather than per element (how a load appends the values it has gathered).
    @usableFromInline package mutating func append(contentsOf elements: UnsafeBufferPointer<Element>) {
        var i = 0
        while i < elements.count {
            if count & Self.mask == 0 {
                var chunk: [Element] = []
                chunk.reserveCapacity(Self.chunkSize)
                chunks.append(chunk)
            }
            let n = Swift.min(elements.count - i, Self.chunkSize - count & Self.mask)
            chunks[chunks.count - 1].append(contentsOf: UnsafeBufferPointer(rebasing: elements[i..<i + n]))
            count += n
            i += n
        }
    }

    @usableFromInline package mutating func removeLast() {
        chunks[chunks.count - 1].removeLast()
        if chunks[chunks.count - 1].isEmpty { chunks.removeLast() }
        count -= 1
    }

    @usableFromInline package mutating func reserveCapacity(_ capacity: Int) {
        chunks.reserveCapacity((capacity + Self.mask) >> Self.shift)
    }

    /// Calls `body` with each chunk's contiguous storage and the index of its first element.
    @inlinable
    package func forEachChunk(_ body: (Int, UnsafeBufferPointer<Element>) throws -> Void) rethrows {
        for (c, chunk) in chunks.enumerated() {
            try chunk.withUnsafeBufferPointer { try body(c << Self.shift, $0) }
        }
    }
}
