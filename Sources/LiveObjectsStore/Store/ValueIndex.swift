import CPrefetch

/// A secondary index: value to rows, for `indexed: true` properties.
///
/// Each value's rows are in ascending order, so that a lookup hands them out as results in
/// storage order without sorting them.
///
/// The rows of every value lie in one flat array (``store``), each value's in a span of it
/// (``Span``: where it starts, how many rows it holds, how many it has room for), instead of
/// an array of its own per value. The values themselves are not kept: a value's span is found
/// through a hash table of the values' hashes and span numbers (``slots``), and a value is
/// compared with a span's by reading the column at the span's first row. A value found about
/// ten times then costs its rows, its 12-byte span and an 8-byte slot or two, not an array
/// with its 32-byte header, the allocator's rounding and a dictionary entry holding the value.
///
/// A value whose span is full moves to the end of the store with room to grow (half as much
/// again); the room it leaves is garbage, given back when the store is written anew (more than
/// half of it garbage). A write that inserts many rows in a row (a bulk insert) does not move
/// spans one row at a time: the rows wait as a run (``pendingRun``) whose values are read from
/// the column when the index is next read or changed, at the latest when the write commits, and
/// a large run writes the store anew once, every span at its exact size.
///
/// Reading values from the column asks of the store what it already does: a live row's column
/// holds its value whenever the index is searched. A change calls ``remove(_:row:)`` and
/// ``insert(_:row:)`` before it writes the column, a new row is written before it is inserted,
/// a deleted row is removed before it is cleared; the index compares a value only with the
/// first row of another value's span, never with the row being changed.
@usableFromInline
package final class ValueIndex {
    /// Where one value's rows are in ``store``: `store[start..<start + count]`, ascending, with
    /// room up to `start + capacity`; and its first row, `store[start]`, kept here too.
    ///
    /// A lookup compares the value it looks for with the column at the span's first row: kept
    /// in the span, that row is read with the span's count in one place instead of after it in
    /// the store (a lookup waits for the slot, the span and the column, not also the store),
    /// for 4 bytes per value.
    @usableFromInline
    package struct Span {
        @usableFromInline package var start: UInt32
        @usableFromInline package var count: UInt32
        @usableFromInline package var capacity: UInt32
        /// `store[start]` once the span holds a row; for a span that a run being added made and
        /// that is still empty, the row of the run it was made for.
        @usableFromInline package var first: Int32

        @inlinable init(start: UInt32, count: UInt32, capacity: UInt32, first: Int32) {
            self.start = start
            self.count = count
            self.capacity = capacity
            self.first = first
        }

        @inlinable var range: Range<Int> { Int(start)..<Int(start) + Int(count) }
    }

    /// One span per value the index holds, in no order (a removed value's place is taken by
    /// the last one).
    @exclusivity(unchecked) @usableFromInline var _spans: [Span] = []
    /// The hash table (open addressing, linear probing, at most three quarters full): 0 for an
    /// empty slot, else the value's tag, 32 bits of its hash (high half, `tag(_:)`),
    /// and its span's position + 1 (low half).
    @exclusivity(unchecked) @usableFromInline var slots: [UInt64] = []
    /// The rows of every value, span after span, with the room of the spans and garbage between.
    @exclusivity(unchecked) @usableFromInline var _store: [Int32] = []
    /// The slots of ``store`` that no span owns.
    @exclusivity(unchecked) private(set) var garbage = 0
    /// Rows inserted (as live rows whose column holds their value) but not yet in their spans.
    @exclusivity(unchecked) @usableFromInline var pendingRun: Range<Int32> = 0..<0
    /// The table whose column holds the indexed values.
    var table: Table? { unretainedTable?.takeUnretainedValue() }
    /// ``table``, not counted: a lookup borrows it (reading an `unowned(unsafe)` reference into
    /// a strong one retains and releases it, atomic operations that wait for the loads in flight).
    @exclusivity(unchecked) @usableFromInline var unretainedTable: Unmanaged<Table>?
    /// The indexed property.
    @exclusivity(unchecked) @usableFromInline var property = 0
    /// The value of a row, for an index without a table (tests).
    package var rowValue: ((Int32) -> PropertyValue)?
    /// The key of the string hash behind the tags (`tag(_:)`): the process's, or a
    /// test's, set while the index is empty. Nothing stored depends on it.
    @exclusivity(unchecked) @usableFromInline package var seed = ValueIndex.processSeed

    /// A run at least this long (and at least an eighth of the rows indexed) writes the store
    /// anew; a shorter one is inserted row by row.
    static let bulkRun = 64
    /// The store is written anew, without garbage, when more than half of it is garbage and
    /// the garbage is at least this many slots.
    static let minimumGarbage = 4096

    package init() {}

    /// Gives the index the column it reads values from.
    func attach(to table: Table, property: Int) {
        unretainedTable = Unmanaged.passUnretained(table)
        self.property = property
    }

    /// Each value's span, with the pending rows in their spans.
    @inlinable package var spans: [Span] {
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
        guard let s = find(value).span else { return nil }
        return Array(_store[_spans[s].range])
    }

    /// The number of rows holding a value (read from its span, without copying its rows out).
    @inlinable package func count(of value: PropertyValue) -> Int {
        if !pendingRun.isEmpty { addPending() }
        guard let s = find(value).span else { return 0 }
        return Int(_spans[s].count)
    }

    /// The rows of each value (a copy, for checks and tests; setting it replaces the index).
    package var rows: [PropertyValue: [Int32]] {
        get {
            var rows: [PropertyValue: [Int32]] = [:]
            for s in spans.indices { rows[key(s)] = Array(_store[_spans[s].range]) }
            return rows
        }
        set {
            removeAll()
            for (value, rows) in newValue where !rows.isEmpty {
                let n = UInt32(rows.count)
                makeSpan(
                    value, slot: find(value).slot,
                    Span(start: UInt32(_store.count), count: n, capacity: n, first: rows[0]))
                _store += rows
            }
        }
    }

    /// Empties the index.
    package func removeAll() {
        _spans = []
        slots = []
        _store = []
        garbage = 0
        pendingRun = 0..<0
    }

    /// What is wrong with the layout of the store, if anything: spans out of bounds,
    /// overlapping, empty or over their room, garbage miscounted, or a value that the hash
    /// table does not lead to its span (for the store's invariants; whether each span's rows
    /// ascend is read from ``rows``).
    package var layoutFaults: [String] {
        let spans = self.spans
        var faults: [String] = []
        var owned = 0
        var ranges: [Range<Int>] = []
        for (s, span) in spans.enumerated() {
            let end = Int(span.start) + Int(span.capacity)
            if span.count == 0 { faults.append("an empty span (\(s))") }
            if span.count > span.capacity {
                faults.append("\(span.count) rows in room for \(span.capacity) (span \(s))")
            }
            if span.count > 0 && Int(span.start) < _store.count && _store[Int(span.start)] != span.first {
                faults.append("span \(s) keeping \(span.first) as its first row, not \(_store[Int(span.start)])")
            }
            if end > _store.count { faults.append("span \(s) ending at \(end), past \(_store.count)") }
            if span.count > 0 && end <= _store.count && find(key(s)).span != s {
                faults.append("span \(s) (of \(key(s))) not found from its value")
            }
            owned += Int(span.capacity)
            ranges.append(Int(span.start)..<end)
        }
        if slots.count(where: { $0 != 0 }) != spans.count {
            faults.append("\(slots.count(where: { $0 != 0 })) slots in use for \(spans.count) spans")
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        for (a, b) in zip(ranges, ranges.dropFirst()) where a.upperBound > b.lowerBound {
            faults.append("spans \(a) and \(b) overlapping")
        }
        if owned + garbage != _store.count {
            faults.append("\(owned) slots owned and \(garbage) garbage in a store of \(_store.count)")
        }
        return faults
    }

    // MARK: The hash table

    /// The value of a row, as its column holds it.
    @usableFromInline func value(ofRow row: Int32) -> PropertyValue {
        if let table { return table.column(property).value(at: Int(row)) }
        return rowValue!(row)
    }

    /// The value of a span: its first row's (or, for a span that a run being added made and
    /// that is still empty, the row of the run it was made for, kept in its `start`).
    @usableFromInline func key(_ s: Int) -> PropertyValue {
        value(ofRow: _spans[s].first)
    }

    /// Whether span `s` holds a value: whether its first row's value is the value (read typed
    /// from a string or integer column, without making a dynamic value of it).
    ///
    /// The column is borrowed, not retained: a retain and a release are atomic operations,
    /// which wait for the loads in flight (a lookup's are the slot, the span and the column).
    @usableFromInline func holds(_ s: Int, _ value: PropertyValue) -> Bool {
        let row = Int(_spans[s].first)
        if let unretainedTable {
            let column = unretainedTable._withUnsafeGuaranteedRef { $0.unretainedColumns[property] }
            guard let column else {
                return unretainedTable.takeUnretainedValue().column(property).value(at: row) == value
            }
            return column._withUnsafeGuaranteedRef { column in
                switch (column.scalarKind, value) {
                case (.string?, .string(let string)):
                    return unsafeDowncast(column, to: ScalarColumn<String>.self).values.element(at: row) == string
                case (.int?, .int(let int)):
                    return unsafeDowncast(column, to: ScalarColumn<Int64>.self).values.element(at: row) == int
                default: return column.value(at: row) == value
                }
            }
        }
        return rowValue!(Int32(row)) == value
    }

    /// The span of a value, if the index holds it, and the slot that leads to it (or where one
    /// would go; -1 when the table is empty).
    @usableFromInline func find(_ value: PropertyValue) -> (span: Int?, slot: Int) {
        find(tag: self.tag(value)) { holds($0, value) }
    }

    /// The span whose value has hash bits `tag` and for which `isValue` holds, and the slot that
    /// leads to it (or where one would go; -1 when the table is empty).
    @inlinable func find(tag: UInt32, _ isValue: (Int) -> Bool) -> (span: Int?, slot: Int) {
        guard !slots.isEmpty else { return (nil, -1) }
        let mask = slots.count - 1
        var i = Int(tag) & mask
        while true {
            let entry = slots[i]
            if entry == 0 { return (nil, i) }
            if UInt32(truncatingIfNeeded: entry >> 32) == tag {
                let s = Int(UInt32(truncatingIfNeeded: entry)) - 1
                if isValue(s) { return (s, i) }
            }
            i = (i + 1) & mask
        }
    }

    /// The first row of span `s` (for a span that a run being added made and that is still
    /// empty, the row of the run it was made for, kept in its `start`).
    @inlinable func firstRow(ofSpan s: Int) -> Int32 {
        _spans[s].first
    }

    /// Adds a span for a value that the index does not hold, at the slot ``find(_:)`` gave.
    @discardableResult
    private func makeSpan(_ value: PropertyValue, slot: Int, _ span: Span) -> Int {
        makeSpan(tag: self.tag(value), slot: slot, span)
    }

    /// Adds a span for a value with hash bits `tag` that the index does not hold, at the slot
    /// ``find(tag:_:)`` gave.
    @discardableResult
    private func makeSpan(tag: UInt32, slot: Int, _ span: Span) -> Int {
        var slot = slot
        if (_spans.count + 1) * 4 > slots.count * 3 {
            growSlots()
            // The value is not in the table: its slot is the first empty one from its home.
            let mask = slots.count - 1
            slot = Int(tag) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
        }
        let s = _spans.count
        _spans.append(span)
        slots[slot] = UInt64(tag) << 32 | UInt64(s + 1)
        return s
    }

    /// Doubles the hash table (the hashes are in it: no value is read).
    private func growSlots() {
        let n = max(16, slots.count * 2)
        var grown = [UInt64](repeating: 0, count: n)
        let mask = n - 1
        for entry in slots where entry != 0 {
            var i = Int(UInt32(truncatingIfNeeded: entry >> 32)) & mask
            while grown[i] != 0 { i = (i + 1) & mask }
            grown[i] = entry
        }
        slots = grown
    }

    /// Removes an empty span and its slot; the last span takes its place.
    private func removeSpan(_ s: Int, slot: Int) {
        // Linear probing's deletion: the entries after the hole that may move into it do.
        let mask = slots.count - 1
        var hole = slot
        var i = (slot + 1) & mask
        while slots[i] != 0 {
            let home = Int(UInt32(truncatingIfNeeded: slots[i] >> 32)) & mask
            if (i &- home) & mask >= (i &- hole) & mask {
                slots[hole] = slots[i]
                hole = i
            }
            i = (i + 1) & mask
        }
        slots[hole] = 0
        let last = _spans.count - 1
        if s != last {
            let tag = self.tag(key(last))
            var j = Int(tag) & mask
            while UInt32(truncatingIfNeeded: slots[j]) != UInt32(last + 1) {
                precondition(slots[j] != 0, "a span missing from its index's hash table")
                j = (j + 1) & mask
            }
            slots[j] = UInt64(tag) << 32 | UInt64(s + 1)
            _spans[s] = _spans[last]
        }
        _spans.removeLast()
    }

    // MARK: Changes

    /// Adds a live row whose value its column holds, as ``insert(_:row:)`` would, but puts it
    /// in its span only when the index is next read or changed: consecutive rows wait as one
    /// run, and a long run writes the store once instead of moving spans row by row.
    ///
    /// The column must keep holding the row's value until then, unless the row is changed or
    /// removed through ``remove(_:row:)`` (which adds the pending rows first).
    package func insertLater(_ row: Int32) {
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
        let (found, slot) = find(value)
        guard let s = found else { return }
        var span = _spans[s]
        let rows = span.range
        guard let at = _store[rows].lastIndex(of: row) else { return }
        _store.withUnsafeMutableBufferPointer { store in
            for j in at..<rows.upperBound - 1 { store[j] = store[j + 1] }
        }
        span.count -= 1
        if at == rows.lowerBound && span.count > 0 { span.first = _store[at] }
        if span.count == 0 {
            garbage += Int(span.capacity)
            removeSpan(s, slot: slot)
            compactIfWasteful()
            return
        }
        if span.capacity >= 8 && span.count * 4 < span.capacity {
            // Give back the room of a value that lost most of its rows.
            garbage += Int(span.capacity - span.count * 2)
            span.capacity = span.count * 2
        }
        _spans[s] = span
        compactIfWasteful()
    }

    /// Puts a row in its value's span, moving the span to the end of the store with room to
    /// grow when it is full.
    private func add(_ value: PropertyValue, row: Int32) {
        let (found, slot) = find(value)
        guard let s = found else {
            makeSpan(value, slot: slot, Span(start: UInt32(_store.count), count: 1, capacity: 1, first: row))
            _store.append(row)
            return
        }
        place(row, in: s)
    }

    /// Puts a row in a span, in order, moving the span when it is full.
    private func place(_ row: Int32, in s: Int) {
        var span = _spans[s]
        if span.count == span.capacity { grow(&span) }
        let end = Int(span.start) + Int(span.count)
        _store.withUnsafeMutableBufferPointer { store in
            var j = end
            while j > Int(span.start) && store[j - 1] > row {
                store[j] = store[j - 1]
                j -= 1
            }
            store[j] = row
            if j == Int(span.start) { span.first = row }
        }
        span.count += 1
        _spans[s] = span
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
        guard !run.isEmpty else { return writeStoreAnew() }
        // The rows' values read typed from the column (fetched once), not as dynamic values.
        guard let table else { return rewrite(adding: run, { self.rowValue!($0) }, { $0 }) }
        let column = table.column(property)
        switch column.scalarKind {
        case .string:
            let values = unsafeDowncast(column, to: ScalarColumn<String>.self).values
            rewrite(adding: run, { values.element(at: Int($0)) }, { .string($0) })
        case .int:
            let values = unsafeDowncast(column, to: ScalarColumn<Int64>.self).values
            rewrite(adding: run, { values.element(at: Int($0)) }, { .int($0) })
        default:
            rewrite(adding: run, { column.value(at: Int($0)) }, { $0 })
        }
    }

    /// ``rewrite(adding:)`` with the values read by `read` (equal exactly when their dynamic
    /// forms, `dynamic`, are). Each row's value is searched twice, to count its span's rows and
    /// to place it, and compared with the spans' values, read once per span into an array for
    /// the rewrite (reading a span's first row in the column for every search is a cache miss
    /// per row). That array is all the memory the rewrite takes besides the new store: no
    /// memory per row, since a bulk write's commit is often the process's peak.
    private func rewrite<Value: Equatable>(
        adding run: Range<Int32>, _ read: (Int32) -> Value, _ dynamic: (Value) -> PropertyValue
    ) {
        var spanValues: [Value] = []
        spanValues.reserveCapacity(_spans.count)
        for s in _spans.indices {
            spanValues.append(read(firstRow(ofSpan: s)))
            // Every span at its exact size, counting the rows to add before they go in.
            _spans[s].capacity = _spans[s].count
        }
        // Each search waits for a random slot of the hash table, then for the value of the span
        // it leads to: the slots of the rows some places ahead are asked for while a row is
        // searched (their values and hashes kept in a ring), and the span values of rows half
        // as far ahead, whose slots are in by then.
        let hash = { (value: Value) in self.tag(dynamic(value)) }
        var ahead = SlotPrefetcher(run: run, read, hash)
        for row in run {
            let (tag, value) = ahead.next(slots, read, hash, span: { s in prefetch(spanValues, s) }, placed: { _ in })
            let (found, slot) = find(tag: tag) { spanValues[$0] == value }
            if let s = found {
                _spans[s].capacity += 1
            } else {
                makeSpan(tag: tag, slot: slot, Span(start: UInt32(bitPattern: row), count: 0, capacity: 1, first: row))
                spanValues.append(value)
            }
        }
        writeStoreAnew()
        ahead = SlotPrefetcher(run: run, read, hash)
        for row in run {
            // Every value of the run has its span now, its first row already in it; the
            // second search reads the span too, and placing the row reads and writes the store
            // where the span ends: asked for a quarter as far ahead, once the span is in.
            let (tag, value) = ahead.next(
                slots, read, hash,
                span: { s in
                    prefetch(spanValues, s)
                    prefetch(_spans, s)
                },
                placed: { s in
                    // The span is in by now: the place where the row goes.
                    if s < _spans.count { prefetch(_store, Int(_spans[s].start) + Int(_spans[s].count)) }
                })
            let s = find(tag: tag) { spanValues[$0] == value }.span!
            if _store[Int(_spans[s].start)] != row { place(row, in: s) }
        }
    }

    /// Writes the store anew, every span with its room and no garbage; a span that a run made
    /// and that is still empty gets its first row (kept in its `start`).
    private func writeStoreAnew() {
        let total = _spans.reduce(0) { $0 + Int($1.capacity) }
        var store = [Int32](repeating: 0, count: total)
        var next = 0
        store.withUnsafeMutableBufferPointer { store in
            for s in _spans.indices {
                let span = _spans[s]
                if span.count == 0 {
                    // A new value's first row (the lowest of the run's rows holding it) goes in
                    // now: the span then reads its value from the store, as every span does.
                    store[next] = span.first
                    _spans[s].count = 1
                } else {
                    for (k, j) in span.range.enumerated() { store[next + k] = _store[j] }
                }
                _spans[s].start = UInt32(next)
                next += Int(span.capacity)
            }
        }
        _store = consume store
        garbage = 0
    }

    /// Puts the rows of ``pendingRun`` in their spans: a long run by writing the store anew,
    /// a short one row by row.
    @usableFromInline func addPending() {
        let run = pendingRun
        pendingRun = 0..<0
        guard !run.isEmpty else { return }
        if run.count >= Self.bulkRun && run.count * 8 >= _store.count - garbage {
            rewrite(adding: run)
        } else {
            for row in run { add(value(ofRow: row), row: row) }
        }
    }

    /// Adds the values of some rows of a column, as ``insert(_:row:)`` for each in the order
    /// given would, but grouping the rows by value first (one probe per row into a table of
    /// the distinct values, then a counting sort), so that each value's span is made once at
    /// its size.
    package func insertAll(_ column: Column, rows sources: [Int32]) {
        if !pendingRun.isEmpty { addPending() }
        let (values, groups) = Self.group(column, sources)
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
        // The rows of a group are in the order given: ascending when the rows were.
        if zip(sources, sources.dropFirst()).contains(where: { $0 >= $1 }) {
            for g in values.indices { store[starts[g]..<starts[g + 1]].sort() }
        }
        _store = consume store
        garbage = 0
        slots = []
        _spans.reserveCapacity(values.count)
        for (g, value) in values.enumerated() {
            let n = UInt32(starts[g + 1] - starts[g])
            makeSpan(
                value, slot: find(value).slot,
                Span(start: UInt32(starts[g]), count: n, capacity: n, first: _store[starts[g]]))
        }
    }

    /// ``group(_:_:_:)`` for a column: string and integer columns are grouped by their typed
    /// values (the same equality as their `PropertyValue`s'), without making a dynamic value
    /// per row.
    private static func group(_ column: Column, _ rows: [Int32]) -> ([PropertyValue], [Int32]) {
        switch column.scalarKind {
        case .string: group(unsafeDowncast(column, to: ScalarColumn<String>.self).values, rows) { .string($0) }
        case .int: group(unsafeDowncast(column, to: ScalarColumn<Int64>.self).values, rows) { .int($0) }
        default: group(rows) { column.value(at: Int($0)) }
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

/// Starts loading element `i` of an array into the cache, if it has one, without waiting for
/// it: the address is computed from the array's storage read as a plain word, as
/// ``ChunkedArray/prefetch(_:)`` does, since going through the array would retain and release
/// its storage.
@inline(__always)
private func prefetch<T>(_ array: [T], _ i: Int) {
    guard UInt(bitPattern: i) < UInt(bitPattern: array.count) else { return }
    let storage = unsafeBitCast(array, to: UnsafeRawPointer.self)
    liveobjects_prefetch(storage + ChunkedArray<T>.arrayHeaderSize + i * MemoryLayout<T>.stride)
}

/// The values and hashes of a run's rows, each read and hashed some rows ahead of its search,
/// when its slot of the hash table is asked for (a prefetch); half as many rows ahead, the slot
/// (in the cache by then) is read and the span it leads to handed to the caller, to ask for
/// what the search will read of it; a quarter as many rows ahead, that span is handed on
/// again (`placed`), to ask for what placing the row reads of the store. So a search finds its
/// slot, its span's value and its span in the cache, and each row's value is read from the
/// column once per pass.
private struct SlotPrefetcher<Value> {
    /// How many rows ahead a row's hash is computed and its slot asked for (a power of two).
    static var distance: Int { 16 }
    /// How many rows ahead a row's slot is read and its span handed on.
    static var spanDistance: Int { distance / 2 }
    /// How many rows ahead the span handed on is handed again to `placed`, to ask for what the
    /// row's placing reads of it.
    static var placeDistance: Int { distance / 4 }
    let run: Range<Int32>
    /// The hashes and values of the rows from `position` to `position + distance`, by row
    /// modulo distance.
    var tags: [UInt32]
    var values: [Value]
    /// The spans handed on for the rows from `position` to `position + spanDistance`, by row
    /// modulo distance (-1: none).
    var spans = [Int](repeating: -1, count: distance)
    var position: Int32

    init(run: Range<Int32>, _ read: (Int32) -> Value, _ tag: (Value) -> UInt32) {
        self.run = run
        position = run.lowerBound
        values = run.prefix(Self.distance).map(read)
        tags = values.map(tag)
    }

    /// The hash and value of the next row, after reading the row `distance` further on and
    /// asking for its slot, and handing `span` the span of the row `spanDistance` further on,
    /// if its slot has one with its hash (the span a search would try first; a row whose value
    /// has no span yet may lead to another value's, which costs a useless prefetch, no more).
    @inline(__always)
    mutating func next(
        _ slots: [UInt64], _ read: (Int32) -> Value, _ tag: (Value) -> UInt32, span: (Int) -> Void,
        placed: (Int) -> Void
    ) -> (UInt32, Value) {
        let i = Int(position - run.lowerBound) & (Self.distance - 1)
        let current = (tags[i], values[i])
        let ahead = position + Int32(Self.distance)
        if ahead < run.upperBound {
            let value = read(ahead)
            let t = tag(value)
            values[i] = value
            tags[i] = t
            if !slots.isEmpty { prefetch(slots, Int(t) & (slots.count - 1)) }
        }
        let near = position + Int32(Self.spanDistance)
        if near < run.upperBound && !slots.isEmpty {
            let t = tags[Int(near - run.lowerBound) & (Self.distance - 1)]
            slots.withUnsafeBufferPointer { slots in
                let mask = slots.count - 1
                var j = Int(t) & mask
                while slots[j] != 0 {
                    if UInt32(truncatingIfNeeded: slots[j] >> 32) == t {
                        let s = Int(UInt32(truncatingIfNeeded: slots[j])) - 1
                        spans[Int(near - run.lowerBound) & (Self.distance - 1)] = s
                        span(s)
                        break
                    }
                    j = (j + 1) & mask
                }
            }
        }
        let nearer = position + Int32(Self.placeDistance)
        if nearer < run.upperBound {
            let k = Int(nearer - run.lowerBound) & (Self.distance - 1)
            if spans[k] >= 0 { placed(spans[k]) }
            spans[k] = -1
        }
        position += 1
        return current
    }
}
