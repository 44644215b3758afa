/// An ordered list of rows in chunks: O(chunk) inserts and removals anywhere, O(log n) search,
/// and copy-on-write per chunk, so a frozen snapshot of a subscription's result shares all but
/// the chunks later changes touch.
@usableFromInline
package struct RowList: RandomAccessCollection, Sendable {
    private static let maxChunk = 2048

    @usableFromInline private(set) var chunks: [[Int32]] = []
    /// `starts[c]` is the index of the first row of chunk `c`.
    @usableFromInline private(set) var starts: [Int] = []
    @usableFromInline package private(set) var count = 0

    @inlinable package init() {}

    package init<S: Sequence>(_ rows: S) where S.Element == Int32 {
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

    @inlinable package var startIndex: Int { 0 }
    @inlinable package var endIndex: Int { count }

    @inlinable package subscript(position: Int) -> Int32 {
        let (c, i) = locate(position)
        return chunks[c][i]
    }

    /// The chunk and offset of a position (the end position maps past the last chunk).
    @inlinable func locate(_ position: Int) -> (Int, Int) {
        // The last chunk starting at or before the position (the first one if none does).
        let c = Swift.max(0, Swift.min(starts.partitioningIndex { $0 > position } - 1, starts.count - 1))
        return (c, position - (starts.isEmpty ? 0 : starts[c]))
    }

    package mutating func insert(_ row: Int32, at position: Int) {
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

    package mutating func remove(at position: Int) {
        let (c, i) = locate(position)
        chunks[c].remove(at: i)
        if chunks[c].isEmpty { chunks.remove(at: c) }
        reindex(from: Swift.max(0, c - 1))
    }

    /// The first position whose row does not come before the target (`isBefore` is true for
    /// a prefix of the list).
    package func partitionPoint(_ isBefore: (Int32) -> Bool) -> Int {
        // Find the first chunk whose last row is not before; then search inside it.
        let c = chunks.partitioningIndex { !isBefore($0[$0.count - 1]) }
        guard c < chunks.count else { return count }
        return starts[c] + chunks[c].partitioningIndex { !isBefore($0) }
    }

    /// The positions of rows in a list kept in ascending row order: for each of `ascending`
    /// (ascending too), its position, or -1 when it is not in the list.
    ///
    /// - Complexity: O(chunks + m log(chunk size)) for m rows: one pass over the chunks, instead
    ///   of a search from the top for each row.
    package func positions(ofAscending ascending: [Int32]) -> [Int] {
        var result = [Int](repeating: -1, count: ascending.count)
        var next = 0
        for (c, chunk) in chunks.enumerated() {
            guard next < ascending.count else { break }
            chunk.withUnsafeBufferPointer { chunk in
                var low = 0
                while next < ascending.count, ascending[next] <= chunk[chunk.count - 1] {
                    let row = ascending[next]
                    low = chunk[low...].partitioningIndex { $0 >= row }
                    if chunk[low] == row { result[next] = starts[c] + low }
                    next += 1
                }
            }
        }
        return result
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
