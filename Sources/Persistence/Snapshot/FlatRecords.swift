import LiveObjects
import LiveObjectsJSON

/// The fast path of ``RecordEncoder/writeAll(_:into:flush:)``, for tables whose stored
/// properties are all scalars (`Int`, `Double`, `String`, `Bool`, optional or not) or links
/// written by id, the common shape of bulk data. Other tables (with lists, embedded objects,
/// dates, data, UUIDs, floats, small integers) take the general path.
///
/// A record of such a table is written in one reservation, from a template of its fixed bytes
/// (`{"$id": `, `, "name": `, …, `}`, laid out like ``JSONWriter``'s own output) with its values
/// formatted in between. The columns are read through pointers opened once per chunk of 4,096
/// rows, so writing a record touches no reference count and boxes no value.
struct FlatRecords {
    /// A column of a chunk, read by row within the chunk.
    private enum Cursor {
        case int(UnsafePointer<Int64>)
        case double(UnsafePointer<Double>)
        case string(UnsafePointer<String>)
        case bool(UnsafePointer<Bool>)
        case optionalInt(UnsafePointer<Int64?>)
        case optionalDouble(UnsafePointer<Double?>)
        case optionalString(UnsafePointer<String?>)
        case optionalBool(UnsafePointer<Bool?>)
        /// Link targets (rows, -1 for nil) and the target table's slot states, all of them
        /// (`count`), for the targets' generations.
        case link(UnsafePointer<Int32>, states: UnsafePointer<UInt32>, count: Int)
        /// Link targets into a table whose slots all have generation 0: the id is the row.
        case linkRow(UnsafePointer<Int32>)
    }

    /// The stored columns, all of kinds the fast path writes.
    private let sources: [RecordEncoder.TypedColumn]
    /// For each link column, the index of its target's slot states in `targetStates`, or nil
    /// when every slot of the target has generation 0 (and for other columns).
    private let linkStates: [Int?]
    /// The slot states of the link targets' tables, each flattened into one array.
    private let targetStates: [[UInt32]]
    /// The record's fixed bytes: `{"$id": `, then before each property's value its prefix
    /// (`, "name": `); fragment `k` is `template[starts[k]..<starts[k + 1]]`.
    private let template: [UInt8]
    private let starts: [Int]
    /// The most bytes a record takes, apart from 6 per byte of its strings.
    private let fixedLength: Int
    /// The properties whose values are strings.
    private let stringColumns: [Int]

    /// The plan for `columns` and their `keys`, or nil when a column needs the general path
    /// (lists, embedded objects written inline, other value types).
    init?(columns: [RecordEncoder.TypedColumn?], keys: [JSONKey], inlineEmbedded: Bool, writer: borrowing JSONWriter) {
        var sources: [RecordEncoder.TypedColumn] = []
        var linkStates: [Int?] = []
        var targetStates: [[UInt32]] = []
        var statesIndex: [ObjectIdentifier: Int] = [:]
        var template: [UInt8] = [0x7B] + writer.singleLineMemberPrefix(ValueCoding.idKey, first: true)
        var starts = [0, template.count]
        var fixedLength = template.count + JSONWriter.maxIntLength + 1
        var stringColumns: [Int] = []
        for (p, column) in columns.enumerated() {
            guard let column else { continue }
            var states: Int?
            // The most bytes of the value: a non-finite double is a string of at most 24
            // bytes; a string's 6 per byte are added per record.
            let valueLength: Int
            switch column {
            case .int, .optionalInt: valueLength = JSONWriter.maxIntLength
            case .double, .optionalDouble: valueLength = maxFormattedDecimalLength
            case .bool, .optionalBool: valueLength = 5
            case .string, .optionalString:
                stringColumns.append(sources.count)
                valueLength = 4  // null, or the quotes
            case .link(let link, _, let targetSlots, let targetIsEmbedded):
                guard !(inlineEmbedded && targetIsEmbedded) else { return nil }
                // Reading the targets' generations costs a cache miss per link in a large table:
                // skipped when they are all 0, the case of tables that never reused a slot.
                let id = ObjectIdentifier(link.target)
                var index = statesIndex[id] ?? targetStates.count
                if index == targetStates.count {
                    if targetSlots.allSatisfy({ $0.allSatisfy { $0 >> 1 == 0 } }) {
                        index = -1
                    } else {
                        var flat: [UInt32] = []
                        flat.reserveCapacity(targetSlots.reduce(0) { $0 + $1.count })
                        for chunk in targetSlots { flat += chunk }
                        targetStates.append(flat)
                    }
                    statesIndex[id] = index
                }
                states = index < 0 ? nil : index
                valueLength = JSONWriter.maxIntLength
            case .list, .other:
                return nil
            }
            sources.append(column)
            linkStates.append(states)
            template += writer.singleLineMemberPrefix(keys[p], first: false)
            starts.append(template.count)
            fixedLength += template.count - starts[starts.count - 2] + valueLength
        }
        self.sources = sources
        self.linkStates = linkStates
        self.targetStates = targetStates
        self.template = template
        self.starts = starts
        self.fixedLength = fixedLength
        self.stringColumns = stringColumns
    }

    /// Writes the live rows of a table (its slot states by chunk), one record each, handing the
    /// writer to `flush` when it holds 1 MiB or more (between chunks).
    func writeAll(
        states: [[UInt32]], into writer: inout JSONWriter, flush: (inout JSONWriter) throws(LiveObjectsError) -> Void
    ) throws(LiveObjectsError) {
        let cursors = UnsafeMutablePointer<Cursor>.allocate(capacity: max(1, sources.count))
        defer { cursors.deallocate() }
        for (c, chunk) in states.enumerated() where !chunk.isEmpty {
            chunk.withUnsafeBufferPointer { live in
                withCursors(chunk: c, rows: live.count, from: 0, cursors) {
                    writeRows(chunk: c, live: live, cursors, into: &writer)
                }
            }
            if writer.count >= 1 << 20 { try flush(&writer) }
        }
    }

    /// Points `cursors[k...]` at chunk `chunk` of each column from `k` on, then calls `body`.
    private func withCursors(
        chunk c: Int, rows: Int, from k: Int, _ cursors: UnsafeMutablePointer<Cursor>, _ body: () -> Void
    ) {
        guard k < sources.count else { return body() }
        /// Sets `cursors[k]` for the duration of the rest.
        func open<T>(_ chunks: [[T]], _ cursor: (UnsafePointer<T>) -> Cursor) {
            chunks[c].withUnsafeBufferPointer { values in
                precondition(values.count >= rows, "FlatRecords: a column is shorter than its table")
                cursors[k] = cursor(values.baseAddress!)
                withCursors(chunk: c, rows: rows, from: k + 1, cursors, body)
            }
        }
        switch sources[k] {
        case .int(let values):
            values.withWideChunk(c) { values in
                precondition(values.count >= rows, "FlatRecords: a column is shorter than its table")
                cursors[k] = .int(values.baseAddress!)
                withCursors(chunk: c, rows: rows, from: k + 1, cursors, body)
            }
        case .double(let chunks): open(chunks) { .double($0) }
        case .string(let chunks): open(chunks) { .string($0) }
        case .bool(let chunks): open(chunks) { .bool($0) }
        case .optionalInt(let chunks): open(chunks) { .optionalInt($0) }
        case .optionalDouble(let chunks): open(chunks) { .optionalDouble($0) }
        case .optionalString(let chunks): open(chunks) { .optionalString($0) }
        case .optionalBool(let chunks): open(chunks) { .optionalBool($0) }
        case .link(_, let chunks, _, _):
            guard let index = linkStates[k] else { return open(chunks) { .linkRow($0) } }
            targetStates[index].withUnsafeBufferPointer { states in
                // An empty table has no slot states; no link can point into it.
                let base = states.baseAddress ?? UnsafePointer(bitPattern: 8)!
                open(chunks) { .link($0, states: base, count: states.count) }
            }
        case .list, .other:
            preconditionFailure("FlatRecords: a column of the general path")
        }
    }

    /// Writes the records of the live rows of one chunk.
    private func writeRows(
        chunk c: Int, live: UnsafeBufferPointer<UInt32>, _ cursors: UnsafeMutablePointer<Cursor>,
        into writer: inout JSONWriter
    ) {
        let columnCount = sources.count
        template.withUnsafeBufferPointer { template in
            starts.withUnsafeBufferPointer { starts in
                stringColumns.withUnsafeBufferPointer { stringColumns in
                    DecimalTables.shortestTable.withUnsafeBufferPointer { table in
                        let template = template.baseAddress!
                        let table = table.baseAddress!
                        for i in 0..<live.count {
                            let state = live[i]
                            guard Table.isLive(slotState: state) else { continue }
                            var length = fixedLength
                            for k in stringColumns {
                                switch cursors[k] {
                                case .string(let values): length += 6 * values[i].utf8.count
                                case .optionalString(let values): length += 6 * (values[i]?.utf8.count ?? 0)
                                default: break
                                }
                            }
                            writer.rawValue(maxLength: length) { p in
                                var q = p
                                copyBytes(q, template, starts[1])
                                q += starts[1]
                                q += JSONWriter.formatInt(
                                    ValueCoding.id(
                                        slotState: state, row: ChunkedArray<UInt32>.position(chunk: c, offset: i)),
                                    into: q)
                                for k in 0..<columnCount {
                                    let start = starts[k + 1]
                                    let count = starts[k + 2] - start
                                    copyBytes(q, template + start, count)
                                    q += count
                                    q += Self.write(cursors[k], row: i, table: table, into: q)
                                }
                                q[0] = 0x7D
                                return q + 1 - p
                            }
                        }
                    }
                }
            }
        }
    }

    /// Writes the value of a cursor's row and returns the number of bytes.
    @inline(__always)
    private static func write(
        _ cursor: Cursor, row i: Int, table: UnsafePointer<UInt64>, into q: UnsafeMutablePointer<UInt8>
    ) -> Int {
        switch cursor {
        case .int(let values):
            return JSONWriter.formatInt(values[i], into: q)
        case .double(let values):
            return double(values[i], table: table, into: q)
        case .string(let values):
            return string(values[i], into: q)
        case .bool(let values):
            return bool(values[i], into: q)
        case .optionalInt(let values):
            guard let v = values[i] else { return null(into: q) }
            return JSONWriter.formatInt(v, into: q)
        case .optionalDouble(let values):
            guard let v = values[i] else { return null(into: q) }
            return double(v, table: table, into: q)
        case .optionalString(let values):
            guard let v = values[i] else { return null(into: q) }
            return string(v, into: q)
        case .optionalBool(let values):
            guard let v = values[i] else { return null(into: q) }
            return bool(v, into: q)
        case .link(let targets, let states, let count):
            let t = targets[i]
            guard t >= 0 else { return null(into: q) }
            precondition(Int(t) < count, "FlatRecords: a link to a row that does not exist")
            return JSONWriter.formatInt(ValueCoding.id(slotState: states[Int(t)], row: Int(t)), into: q)
        case .linkRow(let targets):
            let t = targets[i]
            guard t >= 0 else { return null(into: q) }
            return JSONWriter.formatInt(Int64(t), into: q)
        }
    }

    /// A `Double` as ``ValueCoding/writeDouble(_:_:)`` writes it.
    @inline(__always)
    private static func double(_ value: Double, table: UnsafePointer<UInt64>, into q: UnsafeMutablePointer<UInt8>)
        -> Int
    {
        if value.isFinite { return JSONWriter.formatFinite(value, table: table, into: q) }
        return string(ValueCoding.nonFiniteName(value), into: q)
    }

    @inline(__always)
    private static func string(_ value: String, into q: UnsafeMutablePointer<UInt8>) -> Int {
        var value = value
        return value.withUTF8 { JSONWriter.formatQuoted($0, into: q) }
    }

    @inline(__always)
    private static func bool(_ value: Bool, into q: UnsafeMutablePointer<UInt8>) -> Int {
        if value {
            q[0] = 0x74; q[1] = 0x72; q[2] = 0x75; q[3] = 0x65
            return 4
        }
        q[0] = 0x66; q[1] = 0x61; q[2] = 0x6C; q[3] = 0x73; q[4] = 0x65
        return 5
    }

    @inline(__always)
    private static func null(into q: UnsafeMutablePointer<UInt8>) -> Int {
        q[0] = 0x6E; q[1] = 0x75; q[2] = 0x6C; q[3] = 0x6C
        return 4
    }
}
