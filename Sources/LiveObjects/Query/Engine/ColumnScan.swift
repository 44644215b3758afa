import Foundation
import LiveObjectsStore

/// The fast path for the commonest comparison: one property of the tested object against a
/// constant. It scans the column's native array (no object handles, no boxing); strings are
/// matched on folded forms cached per column.
struct ColumnScan {
    enum Test {
        case int(ComparisonOperator, Int64)
        case double(ComparisonOperator, Double)
        case date(ComparisonOperator, Date)
        case bool(ComparisonOperator, Bool)
        case string(StringMatcher, negated: Bool)
        case exactString(ComparisonOperator, String)
        case isNull(Bool)
    }

    let table: Table
    let property: Int
    let test: Test

    /// The rows among `candidates` (all live rows when nil) that pass, in the same order.
    func filter(_ candidates: [Int32]?) -> [Int32] {
        let column = table.columns[property]!
        switch test {
        case .int(let op, let c):
            if let col = column as? ScalarColumn<Int64> { return compareScan(col.values, op, c, candidates) }
            if let col = column as? ScalarColumn<Int64?> {
                return scan(col.values, candidates) { v in v.map { Self.apply(op, $0, c) } ?? (op == .notEqual) }
            }
        case .double(let op, let c):
            if let col = column as? ScalarColumn<Double> { return compareScan(col.values, op, c, candidates) }
            if let col = column as? ScalarColumn<Float> {
                return scan(col.values, candidates) { Self.apply(op, Double($0), c) }
            }
            if let col = column as? ScalarColumn<Int64> {
                return scan(col.values, candidates) { Self.apply(op, Double($0), c) }
            }
            if let col = column as? ScalarColumn<Double?> {
                return scan(col.values, candidates) { v in v.map { Self.apply(op, $0, c) } ?? (op == .notEqual) }
            }
            if let col = column as? ScalarColumn<Float?> {
                return scan(col.values, candidates) { v in v.map { Self.apply(op, Double($0), c) } ?? (op == .notEqual)
                }
            }
            if let col = column as? ScalarColumn<Int64?> {
                return scan(col.values, candidates) { v in v.map { Self.apply(op, Double($0), c) } ?? (op == .notEqual)
                }
            }
        case .date(let op, let c):
            if let col = column as? ScalarColumn<Date> { return compareScan(col.values, op, c, candidates) }
            if let col = column as? ScalarColumn<Date?> {
                return scan(col.values, candidates) { v in v.map { Self.apply(op, $0, c) } ?? (op == .notEqual) }
            }
        case .bool(let op, let c):
            if let col = column as? ScalarColumn<Bool> {
                return scan(col.values, candidates) { op == .equal ? $0 == c : $0 != c }
            }
            if let col = column as? ScalarColumn<Bool?> {
                return scan(col.values, candidates) { op == .equal ? $0 == c : $0 != c }
            }
        case .exactString(let op, let c):
            // Equality is `String`'s (canonical equivalence); orderings are `StringOrder`'s,
            // which agrees with it.
            if op == .equal || op == .notEqual {
                if let col = column as? ScalarColumn<String> { return compareScan(col.values, op, c, candidates) }
                if let col = column as? ScalarColumn<String?> {
                    return scan(col.values, candidates) { v in v.map { Self.apply(op, $0, c) } ?? (op == .notEqual) }
                }
            } else {
                // The constant in NFC, once (in a buffer of its own: a scan inside a closure would
                // not be inlined).
                let key = StringOrder.key(c)
                let ascii = StringOrder.isASCII(c)
                let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(key.count, 1))
                _ = buffer.initialize(from: key)
                defer { buffer.deallocate() }
                let c = UnsafeBufferPointer(rebasing: buffer[0..<key.count])
                if let col = column as? ScalarColumn<String> {
                    return ascii
                        ? asciiOrderingScan(col.values, op, c, candidates) : orderingScan(col.values, op, c, candidates)
                }
                if let col = column as? ScalarColumn<String?> {
                    return scan(col.values, candidates) { v in
                        v.map { Self.apply(op, StringOrder.compare($0, nfc: c, isASCII: ascii), 0) } ?? false
                    }
                }
            }
        case .string(let matcher, let negated):
            if !negated, let query = matcher.fullText, table.schema.properties[property].isFullTextIndexed {
                return table.fullTextMatches(property, query, candidates: candidates)
            }
            let folded = table.foldedColumn(property, options: matcher.options)
            // Every array and the pattern taken once: reading them from the column object per
            // row retained and released each.
            return folded.withBuffers { bytes, offsets, isASCII, isNull in
                matcher.withPattern { pattern in
                    scanIndices(count: offsets.count - 1, candidates) { r in
                        let start = Int(offsets[r])
                        let end = Int(offsets[r + 1])
                        if start == end && isNull[r] { return negated }
                        let slice = UnsafeBufferPointer(rebasing: bytes[start..<end])
                        return matcher.matches(folded: slice, isASCII: isASCII[r], pattern: pattern) != negated
                    }
                }
            }
        case .isNull(let wantNull):
            return scanIndices(count: table.rowCount, candidates) { r in
                column.value(at: r).isNull == wantNull
            }
        }
        // A column kind the fast path does not know: test row by row.
        return scanIndices(count: table.rowCount, candidates) { r in
            var context = EvaluationContext()
            return fallback.matches(Int32(r), &context)
        }
    }

    /// The same test as a general comparison (for row-by-row evaluation).
    var fallback: BoundComparison {
        let path = BoundPath(
            steps: [BoundPath.Step(table: table, property: property, target: nil, isToMany: false)],
            root: table)
        let (op, constant, matcher): (ComparisonOperator, PropertyValue, StringMatcher?) =
            switch test {
            case .int(let op, let c): (op, .int(c), nil)
            case .double(let op, let c): (op, .double(c), nil)
            case .date(let op, let c): (op, .date(c), nil)
            case .bool(let op, let c): (op, .bool(c), nil)
            case .exactString(let op, let c): (op, .string(c), nil)
            case .string(let m, let negated): (negated ? .notEqual : .equal, .null, m)
            case .isNull(let wantNull): (wantNull ? .equal : .notEqual, .null, nil)
            }
        return BoundComparison(
            quantifier: .direct, lhs: .path(path, variable: nil), op: op, options: [],
            rhs: .constant(constant), matcher: matcher)
    }

    @inline(__always)
    static func apply<T: Comparable>(_ op: ComparisonOperator, _ a: T, _ b: T) -> Bool {
        switch op {
        case .equal: a == b
        case .notEqual: a != b
        case .lessThan: a < b
        case .lessThanOrEqual: a <= b
        case .greaterThan: a > b
        case .greaterThanOrEqual: a >= b
        default: false
        }
    }

    private func compareScan<T: Comparable>(
        _ values: ChunkedArray<T>, _ op: ComparisonOperator, _ c: T, _ candidates: [Int32]?
    ) -> [Int32] {
        switch op {
        case .equal: scan(values, candidates) { $0 == c }
        case .notEqual: scan(values, candidates) { $0 != c }
        case .lessThan: scan(values, candidates) { $0 < c }
        case .lessThanOrEqual: scan(values, candidates) { $0 <= c }
        case .greaterThan: scan(values, candidates) { $0 > c }
        case .greaterThanOrEqual: scan(values, candidates) { $0 >= c }
        default: []
        }
    }

    /// An ordering of a string column with an ASCII constant (a function of its own, as
    /// ``compareScan(_:_:_:_:)``, which the optimizer handles best).
    private func asciiOrderingScan(
        _ values: ChunkedArray<String>, _ op: ComparisonOperator, _ c: UnsafeBufferPointer<UInt8>,
        _ candidates: [Int32]?
    ) -> [Int32] {
        switch op {
        case .lessThan: scan(values, candidates) { StringOrder.compare($0, ascii: c) < 0 }
        case .lessThanOrEqual: scan(values, candidates) { StringOrder.compare($0, ascii: c) <= 0 }
        case .greaterThan: scan(values, candidates) { StringOrder.compare($0, ascii: c) > 0 }
        default: scan(values, candidates) { StringOrder.compare($0, ascii: c) >= 0 }
        }
    }

    /// An ordering of a string column with a constant in NFC.
    private func orderingScan(
        _ values: ChunkedArray<String>, _ op: ComparisonOperator, _ c: UnsafeBufferPointer<UInt8>,
        _ candidates: [Int32]?
    ) -> [Int32] {
        switch op {
        case .lessThan: scan(values, candidates) { StringOrder.compare($0, nfc: c, isASCII: false) < 0 }
        case .lessThanOrEqual: scan(values, candidates) { StringOrder.compare($0, nfc: c, isASCII: false) <= 0 }
        case .greaterThan: scan(values, candidates) { StringOrder.compare($0, nfc: c, isASCII: false) > 0 }
        default: scan(values, candidates) { StringOrder.compare($0, nfc: c, isASCII: false) >= 0 }
        }
    }

    @inline(__always)
    private func scan<T>(_ values: ChunkedArray<T>, _ candidates: [Int32]?, _ test: (T) -> Bool) -> [Int32] {
        var result: [Int32] = []
        if let candidates {
            candidates.withUnsafeBufferPointer { candidates in
                RowGather.gather(into: &result, count: candidates.count) {
                    candidates[$0]
                } passing: {
                    test(values[Int(candidates[$0])])
                }
            }
            return result
        }
        let allLive = table.liveCount == values.count
        values.forEachChunk { base, buffer in collect(base, buffer, allLive, &result, test) }
        return result
    }

    /// ``scan(_:_:_:)`` for a packed integer column: a loop for each chunk's width.
    @inline(__always)
    private func scan(_ values: PackedIntArray, _ candidates: [Int32]?, _ test: (Int64) -> Bool) -> [Int32] {
        var result: [Int32] = []
        if let candidates {
            candidates.withUnsafeBufferPointer { candidates in
                RowGather.gather(into: &result, count: candidates.count) {
                    candidates[$0]
                } passing: {
                    test(values.element(at: Int(candidates[$0])))
                }
            }
            return result
        }
        let allLive = table.liveCount == values.count
        @inline(__always)
        func collect<W: FixedWidthInteger & SignedInteger>(_ base: Int, _ buffer: UnsafeBufferPointer<W>) {
            for i in 0..<buffer.count
            where (allLive || table.isLive(Int32(truncatingIfNeeded: base + i))) && test(Int64(buffer[i])) {
                result.append(Int32(truncatingIfNeeded: base + i))
            }
        }
        values.forEachChunk { base, chunk in
            switch chunk {
            case .int8(let buffer): collect(base, buffer)
            case .int16(let buffer): collect(base, buffer)
            case .int32(let buffer): collect(base, buffer)
            case .int64(let buffer): collect(base, buffer)
            }
        }
        return result
    }

    /// ``compareScan(_:_:_:_:)`` for a packed integer column: each chunk compared at its own
    /// width, the constant narrowed once per chunk (a constant outside the chunk's range gives
    /// every value of the chunk the answer 0 gets: all of them are on the same side of it).
    private func compareScan(
        _ values: PackedIntArray, _ op: ComparisonOperator, _ c: Int64, _ candidates: [Int32]?
    ) -> [Int32] {
        if candidates != nil { return scan(values, candidates) { Self.apply(op, $0, c) } }
        var result: [Int32] = []
        let allLive = table.liveCount == values.count
        values.forEachChunk { base, chunk in
            switch chunk {
            case .int8(let buffer): compareChunk(base, buffer, op, c, allLive, &result)
            case .int16(let buffer): compareChunk(base, buffer, op, c, allLive, &result)
            case .int32(let buffer): compareChunk(base, buffer, op, c, allLive, &result)
            case .int64(let buffer): compareChunk(base, buffer, op, c, allLive, &result)
            }
        }
        return result
    }

    /// Adds the rows of one chunk whose values pass `op c`.
    private func compareChunk<W: FixedWidthInteger & SignedInteger>(
        _ base: Int, _ buffer: UnsafeBufferPointer<W>, _ op: ComparisonOperator, _ c: Int64, _ allLive: Bool,
        _ result: inout [Int32]
    ) {
        guard let narrow = W(exactly: c) else {
            guard Self.apply(op, 0, c) else { return }
            return collect(base, buffer, allLive, &result) { _ in true }
        }
        switch op {
        case .equal: collect(base, buffer, allLive, &result) { $0 == narrow }
        case .notEqual: collect(base, buffer, allLive, &result) { $0 != narrow }
        case .lessThan: collect(base, buffer, allLive, &result) { $0 < narrow }
        case .lessThanOrEqual: collect(base, buffer, allLive, &result) { $0 <= narrow }
        case .greaterThan: collect(base, buffer, allLive, &result) { $0 > narrow }
        case .greaterThanOrEqual: collect(base, buffer, allLive, &result) { $0 >= narrow }
        default: break
        }
    }

    @inline(__always)
    private func collect<W>(
        _ base: Int, _ buffer: UnsafeBufferPointer<W>, _ allLive: Bool, _ result: inout [Int32], _ test: (W) -> Bool
    ) {
        if allLive {
            RowGather.gather(into: &result, count: buffer.count) {
                Int32(truncatingIfNeeded: base + $0)
            } passing: {
                test(buffer[$0])
            }
            return
        }
        for i in 0..<buffer.count where table.isLive(Int32(truncatingIfNeeded: base + i)) && test(buffer[i]) {
            result.append(Int32(truncatingIfNeeded: base + i))
        }
    }

    @inline(__always)
    private func scanIndices(count: Int, _ candidates: [Int32]?, _ test: (Int) -> Bool) -> [Int32] {
        var result: [Int32] = []
        if let candidates {
            candidates.withUnsafeBufferPointer { candidates in
                RowGather.gather(into: &result, count: candidates.count) {
                    candidates[$0]
                } passing: {
                    test(Int(candidates[$0]))
                }
            }
        } else if table.liveCount == count {
            RowGather.gather(into: &result, count: count) {
                Int32(truncatingIfNeeded: $0)
            } passing: {
                test($0)
            }
        } else {
            for row in 0..<count where table.isLive(Int32(truncatingIfNeeded: row)) && test(row) {
                result.append(Int32(truncatingIfNeeded: row))
            }
        }
        return result
    }
}

/// Gathers the rows that pass a test without branching on the answer: each row is written to
/// a block on the stack, whose end moves on by one when the row passes, and full blocks are
/// appended to the result. A test that passes about half the time (an age above a bound, a
/// name holding a letter) would otherwise send the processor down the wrong branch every
/// other row, and each append checks the array's uniqueness and room.
enum RowGather {
    /// The rows in a block on the stack (16 KB).
    static var block: Int { 4096 }

    /// Appends `row(i)`, for each `i` in `0..<count` for which `passing(i)` holds, in order.
    @inline(__always)
    static func gather(
        into result: inout [Int32], count: Int, _ row: (Int) -> Int32, passing: (Int) -> Bool
    ) {
        guard count > 0 else { return }
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: Swift.min(count, block)) { scratch in
            let base = scratch.baseAddress!
            var i = 0
            while i < count {
                let end = Swift.min(i + scratch.count, count)
                var n = 0
                while i < end {
                    // Written whether or not it passes: the next row overwrites a failed one.
                    (base + n).initialize(to: row(i))
                    n &+= passing(i) ? 1 : 0
                    i &+= 1
                }
                result.append(contentsOf: UnsafeBufferPointer(start: base, count: n))
            }
        }
    }
}

/// The folded forms of a string column's values, in one byte buffer, kept while the column
/// does not change.
final class FoldedColumn {
    let version: UInt64
    let bytes: [UInt8]
    /// Row `r` spans `bytes[offsets[r] ..< offsets[r + 1]]`.
    let offsets: [Int32]
    let isASCII: [Bool]
    let isNull: [Bool]

    init(column: Column, options: ComparisonOptions) {
        version = column.version
        var bytes: [UInt8] = []
        var offsets: [Int32] = [0]
        var ascii: [Bool] = []
        var nulls: [Bool] = []
        let count = column.count
        offsets.reserveCapacity(count + 1)
        ascii.reserveCapacity(count)
        nulls.reserveCapacity(count)
        bytes.reserveCapacity(count * 8)
        for row in 0..<count {
            if case .string(let s) = column.value(at: row) {
                let folded = FoldedString(s, options: options)
                bytes.append(contentsOf: folded.utf8)
                ascii.append(folded.isASCII)
                nulls.append(false)
            } else {
                ascii.append(true)
                nulls.append(true)
            }
            offsets.append(Int32(truncatingIfNeeded: bytes.count))
        }
        self.bytes = bytes
        self.offsets = offsets
        self.isASCII = ascii
        self.isNull = nulls
    }

    /// Calls `body` with the bytes, offsets, ASCII flags and null flags.
    @inline(__always)
    func withBuffers<Result>(
        _ body: (
            UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<Int32>, UnsafeBufferPointer<Bool>, UnsafeBufferPointer<Bool>
        ) -> Result
    ) -> Result {
        bytes.withUnsafeBufferPointer { bytes in
            offsets.withUnsafeBufferPointer { offsets in
                isASCII.withUnsafeBufferPointer { ascii in
                    isNull.withUnsafeBufferPointer { nulls in body(bytes, offsets, ascii, nulls) }
                }
            }
        }
    }
}

extension Table {
    /// The folded forms of a string column, built on first use and kept until the column
    /// changes.
    func foldedColumn(_ property: Int, options: ComparisonOptions) -> FoldedColumn {
        let column = columns[property]!
        let key = property << 2 | Int(options.rawValue)
        let queries = store!.queries
        if let cached = queries.foldedColumns[index][key], cached.version == column.version { return cached }
        let folded = FoldedColumn(column: column, options: options)
        queries.foldedColumns[index][key] = folded
        return folded
    }
}
