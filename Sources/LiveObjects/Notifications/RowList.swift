/// An ordered list of rows in chunks: O(chunk) inserts and removals anywhere, O(log n) search,
/// and copy-on-write per chunk, so a frozen snapshot of a subscription's result shares all but
/// the chunks later changes touch.
struct RowList: RandomAccessCollection {
    private static let maxChunk = 2048

    private var chunks: [[Int32]] = []
    /// `starts[c]` is the index of the first row of chunk `c`.
    private var starts: [Int] = []
    private(set) var count = 0

    init() {}

    init<S: Sequence>(_ rows: S) where S.Element == Int32 {
        var chunk: [Int32] = []
        for row in rows {
            chunk.append(row)
            if chunk.count == Self.maxChunk / 2 {
                chunks.append(chunk)
                chunk = []
            }
        }
        if !chunk.isEmpty { chunks.append(chunk) }
        reindex()
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Int32 {
        let (c, i) = locate(position)
        return chunks[c][i]
    }

    /// The chunk and offset of a position (the end position maps past the last chunk).
    private func locate(_ position: Int) -> (Int, Int) {
        var low = 0
        var high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= position { low = mid } else { high = mid - 1 }
        }
        return (low, position - (starts.isEmpty ? 0 : starts[low]))
    }

    mutating func insert(_ row: Int32, at position: Int) {
        if chunks.isEmpty {
            chunks = [[row]]
            reindex()
            return
        }
        var (c, i) = locate(position)
        if i > chunks[c].count {
            c = chunks.count - 1
            i = chunks[c].count
        }
        chunks[c].insert(row, at: i)
        if chunks[c].count > Self.maxChunk {
            let tail = Array(chunks[c][(Self.maxChunk / 2)...])
            chunks[c].removeSubrange((Self.maxChunk / 2)...)
            chunks.insert(tail, at: c + 1)
        }
        reindex(from: c)
    }

    mutating func remove(at position: Int) {
        let (c, i) = locate(position)
        chunks[c].remove(at: i)
        if chunks[c].isEmpty { chunks.remove(at: c) }
        reindex(from: Swift.max(0, c - 1))
    }

    /// The first position whose row does not come before the target (`isBefore` is true for
    /// a prefix of the list).
    func partitionPoint(_ isBefore: (Int32) -> Bool) -> Int {
        // Find the first chunk whose last row is not before; then search inside it.
        var low = 0
        var high = chunks.count
        while low < high {
            let mid = (low + high) / 2
            if isBefore(chunks[mid][chunks[mid].count - 1]) { low = mid + 1 } else { high = mid }
        }
        guard low < chunks.count else { return count }
        let chunk = chunks[low]
        var a = 0
        var b = chunk.count
        while a < b {
            let mid = (a + b) / 2
            if isBefore(chunk[mid]) { a = mid + 1 } else { b = mid }
        }
        return starts[low] + a
    }

    private mutating func reindex(from chunk: Int = 0) {
        var first = chunk
        if starts.count != chunks.count {
            starts = Array(repeating: 0, count: chunks.count)
            first = 0
        }
        first = Swift.min(first, chunks.count)
        var start = first == 0 ? 0 : starts[first - 1] + chunks[first - 1].count
        for c in first..<chunks.count {
            starts[c] = start
            start += chunks[c].count
        }
        count = start
    }
}
