/// The keys of objects, in ascending row order, kept as runs of consecutive rows of one
/// generation: the objects a write inserted into fresh rows (a million of them, say) are one
/// run of 12 bytes, not a million keys.
///
/// A collection of ``ObjectKey``; `contains(row:)` finds a row in O(log runs).
public struct ObjectKeys: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral,
    CustomStringConvertible
{
    /// Rows `row ..< row + count`, all of one generation.
    @usableFromInline
    struct Run: Hashable, Sendable {
        @usableFromInline var row: UInt32
        @usableFromInline var count: UInt32
        @usableFromInline var generation: UInt32
    }

    @usableFromInline var runs: [Run] = []
    /// The position of each run's first key.
    @usableFromInline var starts: [Int] = []
    public private(set) var count = 0

    /// No keys.
    public init() {}

    /// The given keys, which must be in ascending row order.
    public init<S: Sequence>(_ keys: S) where S.Element == ObjectKey {
        for key in keys { append(key) }
    }

    public init(arrayLiteral keys: ObjectKey...) {
        self.init(keys)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> ObjectKey {
        precondition(position >= 0 && position < count, "position out of range")
        // The last run that starts at or before the position.
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        let run = runs[low]
        return ObjectKey(row: run.row + UInt32(position - starts[low]), generation: run.generation)
    }

    public func makeIterator() -> Iterator { Iterator(runs: runs) }

    /// The key of the highest row, in O(1).
    public var last: ObjectKey? {
        runs.last.map { ObjectKey(row: $0.row + $0.count - 1, generation: $0.generation) }
    }

    /// Walks the runs one key after another.
    public struct Iterator: IteratorProtocol {
        let runs: [Run]
        var run = 0
        var offset: UInt32 = 0

        public mutating func next() -> ObjectKey? {
            while run < runs.count {
                let current = runs[run]
                if offset < current.count {
                    defer { offset += 1 }
                    return ObjectKey(row: current.row + offset, generation: current.generation)
                }
                run += 1
                offset = 0
            }
            return nil
        }
    }

    /// Adds a key whose row is above every row held.
    public mutating func append(_ key: ObjectKey) {
        appendRun(row: key.row, count: 1, generation: key.generation)
    }

    /// Adds the keys of rows `first ..< first + count`, all of one generation, above every row
    /// held.
    package mutating func appendRun(row first: UInt32, count: UInt32, generation: UInt32) {
        guard count > 0 else { return }
        if let last = runs.last {
            precondition(first >= last.row + last.count, "keys must come in ascending row order")
            if last.generation == generation && last.row + last.count == first {
                runs[runs.count - 1].count += count
                self.count += Int(count)
                return
            }
        }
        runs.append(Run(row: first, count: count, generation: generation))
        starts.append(self.count)
        self.count += Int(count)
    }

    /// Whether a key of the given row is held, of whatever generation.
    public func contains(row: UInt32) -> Bool {
        var low = 0
        var high = runs.count
        while low < high {
            let middle = (low + high) / 2
            let run = runs[middle]
            if row < run.row {
                high = middle
            } else if row >= run.row + run.count {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }

    /// The runs of rows held: each the first row and the number of rows.
    package var rowRuns: [(row: UInt32, count: UInt32)] { runs.map { ($0.row, $0.count) } }

    public var description: String { Array(self).description }
}
