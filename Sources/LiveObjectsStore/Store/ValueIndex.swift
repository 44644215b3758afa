/// A secondary index: value to rows, for `indexed: true` properties.
///
/// Each value's rows are in ascending order, so that a lookup hands them out as results in
/// storage order without sorting them.
///
/// The rows of every value lie in one flat array (``store``), each value's in a span of it
/// (``Span``: where it starts, how many rows it holds, how many it has room for), instead of
/// an array of its own per value: a value found about ten times then costs its rows and 12
/// bytes, not an array's 32-byte header and the allocator's rounding as well. A value whose
/// span is full moves to the end of the store with room to grow (half as much again); the
/// room it leaves is garbage, given back when the store is written anew (more than half of it
/// garbage). A write that inserts many rows in a row (a bulk insert) does not move spans one
/// row at a time: the rows wait as a run (``pendingRun``) whose values are read from the column
/// when the index is next read or changed, at the latest when the write commits, and a large
/// run writes the store anew once, every span at its exact size.
@usableFromInline
package final class ValueIndex {
    /// Where one value's rows are in ``store``: `store[start..<start + count]`, ascending, with
    /// room up to `start + capacity`.
    @usableFromInline
    package struct Span {
        @usableFromInline package var start: UInt32
        @usableFromInline package var count: UInt32
        @usableFromInline package var capacity: UInt32

        @inlinable init(start: UInt32, count: UInt32, capacity: UInt32) {
            self.start = start
            self.count = count
            self.capacity = capacity
        }

        @inlinable var range: Range<Int> { Int(start)..<Int(start) + Int(count) }
    }

    /// Each value's span.
    @exclusivity(unchecked) @usableFromInline var _spans: [PropertyValue: Span] = [:]
    /// The rows of every value, span after span, with the room of the spans and garbage between.
    @exclusivity(unchecked) @usableFromInline var _store: [Int32] = []
    /// The slots of ``store`` that no span owns.
    @exclusivity(unchecked) private(set) var garbage = 0
    /// Rows inserted (as live rows whose column holds their value) but not yet in their spans.
    @exclusivity(unchecked) @usableFromInline var pendingRun: Range<Int32> = 0..<0
    /// The table whose column the index reads the values of ``pendingRun`` from.
    @usableFromInline unowned(unsafe) var table: Table?
    /// The indexed property.
    @usableFromInline var property = 0

    /// A run at least this long (and at least an eighth of the rows indexed) writes the store
    /// anew; a shorter one is inserted row by row.
    static let bulkRun = 64
    /// The store is written anew, without garbage, when more than half of it is garbage and
    /// the garbage is at least this many slots.
    static let minimumGarbage = 4096

    package init() {}

    /// Gives the index the column it reads pending rows from.
    func attach(to table: Table, property: Int) {
        self.table = table
        self.property = property
    }

    /// Each value's span, with the pending rows in their spans.
    @inlinable package var spans: [PropertyValue: Span] {
        if !pendingRun.isEmpty { addPending() }
        return _spans
    }

    /// The rows of every value (the garbage and room included), with the pending rows in
    /// their spans.
    @inlinable package var store: [Int32] {
        if !pendingRun.isEmpty { addPending() }
        return _store
    }

    /// The rows holding a value, ascending.
    @inlinable package func rows(of value: PropertyValue) -> [Int32]? {
        if !pendingRun.isEmpty { addPending() }
        guard let span = _spans[value] else { return nil }
        return Array(_store[span.range])
    }

    /// The number of rows holding a value (read from its span, without copying its rows out).
    @inlinable package func count(of value: PropertyValue) -> Int {
        if !pendingRun.isEmpty { addPending() }
        guard let i = _spans.index(forKey: value) else { return 0 }
        return Int(_spans.values[i].count)
    }

    /// The rows of each value (a copy, for checks and tests; setting it replaces the index).
    package var rows: [PropertyValue: [Int32]] {
        get { spans.mapValues { Array(_store[$0.range]) } }
        set {
            removeAll()
            var store: [Int32] = []
            store.reserveCapacity(newValue.values.reduce(0) { $0 + $1.count })
            _spans.reserveCapacity(newValue.count)
            for (value, rows) in newValue where !rows.isEmpty {
                let n = UInt32(rows.count)
                _spans[value] = Span(start: UInt32(store.count), count: n, capacity: n)
                store += rows
            }
            _store = consume store
        }
    }

    /// Empties the index.
    package func removeAll() {
        _spans = [:]
        _store = []
        garbage = 0
        pendingRun = 0..<0
    }

    /// What is wrong with the layout of the store, if anything: spans out of bounds,
    /// overlapping, empty or over their room, or garbage miscounted (for the store's
    /// invariants; whether each span's rows ascend is read from ``rows``).
    package var layoutFaults: [String] {
        let spans = self.spans
        var faults: [String] = []
        var owned = 0
        var ranges: [Range<Int>] = []
        for (value, span) in spans {
            let end = Int(span.start) + Int(span.capacity)
            if span.count == 0 { faults.append("an empty span for \(value)") }
            if span.count > span.capacity {
                faults.append("\(span.count) rows in room for \(span.capacity) for \(value)")
            }
            if end > _store.count { faults.append("the span of \(value) ends at \(end), past \(_store.count)") }
            owned += Int(span.capacity)
            ranges.append(Int(span.start)..<end)
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        for (a, b) in zip(ranges, ranges.dropFirst()) where a.upperBound > b.lowerBound {
            faults.append("spans \(a) and \(b) overlap")
        }
        if owned + garbage != _store.count {
            faults.append("\(owned) slots owned and \(garbage) garbage in a store of \(_store.count)")
        }
        return faults
    }

    // MARK: Changes

    /// Adds a live row whose value its column holds, as ``insert(_:row:)`` would, but puts it
    /// in its span only when the index is next read or changed: consecutive rows wait as one
    /// run, and a long run writes the store once instead of moving spans row by row.
    ///
    /// The column must keep holding the row's value until then, unless the row is changed or
    /// removed through ``remove(_:row:)`` (which adds the pending rows first).
    func insertLater(_ row: Int32) {
        if pendingRun.isEmpty {
            pendingRun = row..<row + 1
        } else if pendingRun.upperBound == row {
            pendingRun = pendingRun.lowerBound..<row + 1
        } else {
            addPending()
            pendingRun = row..<row + 1
        }
    }

    package func insert(_ value: PropertyValue, row: Int32) {
        if !pendingRun.isEmpty { addPending() }
        add(value, row: row)
    }

    package func remove(_ value: PropertyValue, row: Int32) {
        if pendingRun.upperBound == row + 1 && !pendingRun.isEmpty {
            // The last pending row (a rolled-back append): it never reached its span.
            pendingRun = pendingRun.lowerBound..<row
            return
        }
        if !pendingRun.isEmpty { addPending() }
        guard let i = _spans.index(forKey: value) else { return }
        var span = _spans.values[i]
        let rows = span.range
        guard let at = _store[rows].lastIndex(of: row) else { return }
        _store.withUnsafeMutableBufferPointer { store in
            for j in at..<rows.upperBound - 1 { store[j] = store[j + 1] }
        }
        span.count -= 1
        if span.count == 0 {
            garbage += Int(span.capacity)
            _spans.remove(at: i)
            compactIfWasteful()
            return
        }
        if span.capacity >= 8 && span.count * 4 < span.capacity {
            // Give back the room of a value that lost most of its rows.
            garbage += Int(span.capacity - span.count * 2)
            span.capacity = span.count * 2
        }
        _spans.values[i] = span
        compactIfWasteful()
    }

    /// Puts a row in its value's span, moving the span to the end of the store with room to
    /// grow when it is full.
    private func add(_ value: PropertyValue, row: Int32) {
        guard let i = _spans.index(forKey: value) else {
            _spans[value] = Span(start: UInt32(_store.count), count: 1, capacity: 1)
            _store.append(row)
            return
        }
        var span = _spans.values[i]
        if span.count == span.capacity { grow(&span) }
        let end = Int(span.start) + Int(span.count)
        _store.withUnsafeMutableBufferPointer { store in
            var j = end
            while j > Int(span.start) && store[j - 1] > row {
                store[j] = store[j - 1]
                j -= 1
            }
            store[j] = row
        }
        span.count += 1
        _spans.values[i] = span
        if garbage > 0 { compactIfWasteful() }
    }

    /// Makes room for one more row in a full span: in place when it ends the store, else by
    /// moving it to the end.
    private func grow(_ span: inout Span) {
        let room = max(1, Int(span.capacity) / 2)
        if Int(span.start) + Int(span.capacity) == _store.count {
            _store.append(contentsOf: repeatElement(0, count: room))
        } else {
            let start = _store.count
            _store.reserveCapacity(start + Int(span.capacity) + room)
            for j in span.range { _store.append(_store[j]) }
            _store.append(contentsOf: repeatElement(0, count: Int(span.capacity) - Int(span.count) + room))
            garbage += Int(span.capacity)
            span.start = UInt32(start)
        }
        span.capacity += UInt32(room)
    }

    /// Writes the store anew without garbage when more than half of it is garbage.
    private func compactIfWasteful() {
        guard garbage >= Self.minimumGarbage && garbage * 2 > _store.count else { return }
        rewrite(adding: 0..<0)
    }

    /// Writes the store anew, without garbage: every span keeps its room, except when rows
    /// are added: then every span is made at its exact size, the rows added included.
    ///
    /// - Parameter run: rows whose values the column holds, to add (ascending).
    private func rewrite(adding run: Range<Int32>) {
        if !run.isEmpty, let column = table?.column(property) {
            // Every span at its exact size, counting the rows to add before they go in.
            forEachSpan { $0.capacity = $0.count }
            for row in run {
                let value = column.value(at: Int(row))
                if let i = _spans.index(forKey: value) {
                    _spans.values[i].capacity += 1
                } else {
                    _spans[value] = Span(start: 0, count: 0, capacity: 1)
                }
            }
        }
        let total = _spans.values.reduce(0) { $0 + Int($1.capacity) }
        var store = [Int32](repeating: 0, count: total)
        var next = 0
        store.withUnsafeMutableBufferPointer { store in
            forEachSpan { span in
                for (k, j) in span.range.enumerated() { store[next + k] = _store[j] }
                span.start = UInt32(next)
                next += Int(span.capacity)
            }
        }
        _store = consume store
        garbage = 0
        guard !run.isEmpty, let column = table?.column(property) else { return }
        for row in run { add(column.value(at: Int(row)), row: row) }
    }

    /// Changes every span in place. (A loop over `_spans.indices` would hold the dictionary's
    /// storage while changing it, so that the first change copies the whole dictionary.)
    private func forEachSpan(_ body: (inout Span) -> Void) {
        var i = _spans.startIndex
        while i != _spans.endIndex {
            body(&_spans.values[i])
            _spans.formIndex(after: &i)
        }
    }

    /// Puts the rows of ``pendingRun`` in their spans: a long run by writing the store anew,
    /// a short one row by row.
    @usableFromInline func addPending() {
        let run = pendingRun
        pendingRun = 0..<0
        guard !run.isEmpty, let column = table?.column(property) else { return }
        if run.count >= Self.bulkRun && run.count * 8 >= _store.count - garbage {
            rewrite(adding: run)
        } else {
            for row in run { add(column.value(at: Int(row)), row: row) }
        }
    }

    /// Adds the values of some rows of a column, as ``insert(_:row:)`` for each in the order
    /// given would, but grouping the rows by value first (one probe per row into a table of
    /// the distinct values, then a counting sort), so that each value's span is made once at
    /// its size.
    package func insertAll(_ column: Column, rows sources: [Int32]) {
        if !pendingRun.isEmpty { addPending() }
        // String and integer columns are grouped by their typed values (the same equality as
        // their `PropertyValue`s'), without making a dynamic value per row.
        let (values, groups): ([PropertyValue], [Int32]) =
            switch column.scalarKind {
            case .string:
                Self.group(unsafeDowncast(column, to: ScalarColumn<String>.self).values, sources) { .string($0) }
            case .int:
                Self.group(unsafeDowncast(column, to: ScalarColumn<Int64>.self).values, sources) { .int($0) }
            default:
                Self.group(sources) { column.value(at: Int($0)) }
            }
        guard _spans.isEmpty else {
            for (row, g) in zip(sources, groups) { add(values[Int(g)], row: row) }
            return
        }
        // starts[g]..<starts[g + 1]: where group g's rows go in the store.
        var starts = [Int](repeating: 0, count: values.count + 1)
        for g in groups { starts[Int(g) + 1] += 1 }
        for g in values.indices { starts[g + 1] += starts[g] }
        var next = starts
        var store = [Int32](repeating: 0, count: sources.count)
        for (row, g) in zip(sources, groups) {
            store[next[Int(g)]] = row
            next[Int(g)] += 1
        }
        _spans.reserveCapacity(values.count)
        for (g, value) in values.enumerated() {
            let n = UInt32(starts[g + 1] - starts[g])
            _spans[value] = Span(start: UInt32(starts[g]), count: n, capacity: n)
        }
        _store = consume store
        garbage = 0
        // The rows of a group are in the order given: ascending when the rows were.
        if zip(sources, sources.dropFirst()).contains(where: { $0 >= $1 }) {
            for span in _spans.values { _store[span.range].sort() }
        }
    }

    /// The distinct values of a typed column at `rows` (in order of first appearance, as
    /// dynamic values) and each row's group: the position of its value among them.
    private static func group<T: Hashable>(
        _ column: some ColumnStorage<T>, _ rows: [Int32], _ dynamic: (T) -> PropertyValue
    ) -> ([PropertyValue], [Int32]) {
        var groupOf: [T: Int32] = [:]
        var values: [PropertyValue] = []
        var groups: [Int32] = []
        groups.reserveCapacity(rows.count)
        for row in rows {
            let value = column.element(at: Int(row))
            if let group = groupOf[value] {
                groups.append(group)
            } else {
                let group = Int32(values.count)
                groupOf[value] = group
                values.append(dynamic(value))
                groups.append(group)
            }
        }
        return (values, groups)
    }

    /// ``group(_:_:_:)`` for any column, by the rows' dynamic values.
    private static func group(_ rows: [Int32], _ value: (Int32) -> PropertyValue) -> ([PropertyValue], [Int32]) {
        var groupOf: [PropertyValue: Int32] = [:]
        var values: [PropertyValue] = []
        var groups: [Int32] = []
        groups.reserveCapacity(rows.count)
        for row in rows {
            let value = value(row)
            if let group = groupOf[value] {
                groups.append(group)
            } else {
                let group = Int32(values.count)
                groupOf[value] = group
                values.append(value)
                groups.append(group)
            }
        }
        return (values, groups)
    }
}
