import Foundation
import LiveObjects

/// What a snapshot file says before its objects.
struct SnapshotHeader: Sendable, Hashable {
    var formatVersion: Int64
    var schemaVersion: UInt64
    /// The number of commits folded into the snapshot: journal lines up to it are skipped.
    var commit: UInt64
    var schema: Schema
}

/// The snapshot format: see docs/FORMAT.md.
enum Snapshot {
    static let formatName = "LiveObjects"
    static let formatVersion: Int64 = 1
    /// How deep embedded objects may nest inside one another in a file.
    static let maxEmbeddedDepth = 100

    /// Encodes a whole store, handing the bytes to `sink` in chunks of about 1 MiB.
    static func encode(
        _ store: Store, schemaVersion: UInt64, commit: UInt64,
        sink: (UnsafeRawBufferPointer) throws(LiveObjectsError) -> Void
    ) throws(LiveObjectsError) {
        // Chunks are handed on at 1 MiB: a staging buffer of 2 MiB takes them without copying.
        var writer = JSONWriter(options: .records, capacity: 1 << 21)
        writer.beginHeader(format: formatName, version: formatVersion, schemaVersion: schemaVersion)
        writer.key("commit")
        writer.uint(commit)
        writer.key("schema")
        SchemaCoding.write(store.schema, to: &writer)
        writer.key("objects")
        writer.beginObject()
        let records = RecordEncoder(store: store, inlineEmbedded: true)
        for table in store.tables where !table.schema.isEmbedded {
            writer.key(table.name)
            writer.beginArray()
            try records.writeAll(table, into: &writer) { (writer) throws(LiveObjectsError) in
                try writer.withUnsafeBytes(sink)
                writer.removeAllBytes()
            }
            writer.endArray()
        }
        writer.endObject()
        // Free slots keep their generation, so that keys of deleted objects never resolve again.
        let free = store.tables.filter { !$0.freeRows.isEmpty }
        if !free.isEmpty {
            writer.key("freeSlots")
            writer.beginObject()
            for table in free {
                writer.key(table.name)
                writer.beginArray(singleLine: true)
                for row in table.freeRows.sorted() { writer.int(ValueCoding.id(table.key(row))) }
                writer.endArray()
            }
            writer.endObject()
        }
        if let history = store.history {
            try HistoryCoding.write(history, store: store, into: &writer, sink: sink)
        }
        writer.endObject()
        writer.finishLine()
        try writer.withUnsafeBytes(sink)
    }

    /// Encodes a whole store into one byte array.
    static func encode(_ store: Store, schemaVersion: UInt64, commit: UInt64) throws(LiveObjectsError) -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(store, schemaVersion: schemaVersion, commit: commit) { chunk in bytes.append(contentsOf: chunk) }
        return bytes
    }
}

/// Writes objects as JSON records: `{"$id": 3, "name": "Rex", "owner": 0, ...}`.
struct RecordEncoder {
    let store: Store
    /// Whether embedded objects are written inside their parent (snapshots) or by id (journal).
    let inlineEmbedded: Bool
    private var keys: [[JSONKey]]
    /// Per table, each stored property's column with its element type resolved once.
    private var columns: [[TypedColumn?]]

    /// A column's values with their element type known, so that writing a value needs no
    /// boxing into a `PropertyValue`, no dynamic cast and no generic metadata lookup. The
    /// arrays are copies taken when the encoder is made (shared with the store until it
    /// changes): an encoder is used for one snapshot or one journal line.
    enum TypedColumn {
        case int([[Int64]])
        case double([[Double]])
        case string([[String]])
        case bool([[Bool]])
        case optionalInt([[Int64?]])
        case optionalDouble([[Double?]])
        case optionalString([[String?]])
        case optionalBool([[Bool?]])
        /// The link column, its targets, the target table's slot states (for the targets'
        /// ids) and whether the target is embedded.
        case link(LinkColumn, [[Int32]], [[UInt32]], targetIsEmbedded: Bool)
        case list(LinkListColumn, targetIsEmbedded: Bool)
        case other(Column)

        init(_ column: Column) {
            switch column {
            case let c as ScalarColumn<Int64>: self = .int(c.values.chunks)
            case let c as ScalarColumn<Double>: self = .double(c.values.chunks)
            case let c as ScalarColumn<String>: self = .string(c.values.chunks)
            case let c as ScalarColumn<Bool>: self = .bool(c.values.chunks)
            case let c as ScalarColumn<Int64?>: self = .optionalInt(c.values.chunks)
            case let c as ScalarColumn<Double?>: self = .optionalDouble(c.values.chunks)
            case let c as ScalarColumn<String?>: self = .optionalString(c.values.chunks)
            case let c as ScalarColumn<Bool?>: self = .optionalBool(c.values.chunks)
            case let c as LinkColumn:
                self = .link(
                    c, c.targets.chunks, c.target.withSlotStates { $0.chunks },
                    targetIsEmbedded: c.target.schema.isEmbedded)
            case let c as LinkListColumn: self = .list(c, targetIsEmbedded: c.target.schema.isEmbedded)
            default: self = .other(column)
            }
        }
    }

    /// Element `i` of a chunked array's chunks.
    @inline(__always)
    static func element<T>(_ chunks: [[T]], _ i: Int) -> T { chunks[i >> 12][i & 4095] }

    init(store: Store, inlineEmbedded: Bool) {
        self.store = store
        self.inlineEmbedded = inlineEmbedded
        keys = store.tables.map { $0.schema.properties.map { JSONKey($0.name) } }
        columns = store.tables.map { $0.columns.map { $0.map(TypedColumn.init) } }
    }

    /// Writes every live object of a top-level table, handing full buffers to `flush`. The
    /// writer must be inside an array whose elements it writes on one line each.
    func writeAll(
        _ table: Table, into writer: inout JSONWriter, flush: (inout JSONWriter) throws(LiveObjectsError) -> Void
    ) throws(LiveObjectsError) {
        let keys = keys[table.index]
        let columns = columns[table.index]
        let states = table.withSlotStates { $0.chunks }
        if let flat = flatRecords(table, writer: writer) {
            try flat.writeAll(states: states, into: &writer, flush: flush)
            return
        }
        for (c, chunk) in states.enumerated() {
            for (i, state) in chunk.enumerated() {
                let r = c << 12 | i
                guard state & 1 != 0 else { continue }
                let row = Int32(r)
                writer.beginObject()
                writer.key(ValueCoding.idKey)
                writer.int(Int64(state >> 1) << 32 | Int64(r))
                for p in columns.indices {
                    guard let column = columns[p] else { continue }
                    writer.key(keys[p])
                    try writeValue(column, row, into: &writer, depth: 0)
                }
                writer.endObject()
                if writer.count >= 1 << 20 { try flush(&writer) }
            }
        }
    }

    /// The fast path for a table's records, if its properties allow it and the writer puts each
    /// record on one line.
    func flatRecords(_ table: Table, writer: borrowing JSONWriter) -> FlatRecords? {
        guard writer.options.indentWidth == 0 || writer.options.singleLineArrayElements else { return nil }
        return FlatRecords(
            columns: columns[table.index], keys: keys[table.index], inlineEmbedded: inlineEmbedded, writer: writer)
    }

    /// Writes a whole object.
    func write(_ table: Table, _ row: Int32, into writer: inout JSONWriter, depth: Int) throws(LiveObjectsError) {
        writer.beginObject()
        writer.key(ValueCoding.idKey)
        writer.int(ValueCoding.id(table.key(row)))
        let keys = keys[table.index]
        let columns = columns[table.index]
        for p in columns.indices {
            guard let column = columns[p] else { continue }
            writer.key(keys[p])
            try writeValue(column, row, into: &writer, depth: depth)
        }
        writer.endObject()
    }

    /// Writes the `$id` and some properties of an object.
    func write(_ table: Table, _ row: Int32, properties: [Int], into writer: inout JSONWriter) throws(LiveObjectsError)
    {
        writer.beginObject()
        writer.key(ValueCoding.idKey)
        writer.int(ValueCoding.id(table.key(row)))
        let keys = keys[table.index]
        let columns = columns[table.index]
        for p in properties {
            guard let column = columns[p] else { continue }
            writer.key(keys[p])
            try writeValue(column, row, into: &writer, depth: 0)
        }
        writer.endObject()
    }

    @inline(__always)
    private func writeValue(_ column: TypedColumn, _ row: Int32, into writer: inout JSONWriter, depth: Int)
        throws(LiveObjectsError)
    {
        let r = Int(row)
        switch column {
        case .int(let values): writer.int(Self.element(values, r))
        case .double(let values): ValueCoding.writeDouble(Self.element(values, r), &writer)
        case .string(let values): writer.string(Self.element(values, r))
        case .bool(let values): writer.bool(Self.element(values, r))
        case .optionalInt(let values):
            if let v = Self.element(values, r) { writer.int(v) } else { writer.null() }
        case .optionalDouble(let values):
            if let v = Self.element(values, r) { ValueCoding.writeDouble(v, &writer) } else { writer.null() }
        case .optionalString(let values):
            if let v = Self.element(values, r) { writer.string(v) } else { writer.null() }
        case .optionalBool(let values):
            if let v = Self.element(values, r) { writer.bool(v) } else { writer.null() }
        case .link(let link, let targets, let targetStates, let targetIsEmbedded):
            let t = Self.element(targets, r)
            if t < 0 {
                writer.null()
            } else if inlineEmbedded && targetIsEmbedded {
                try writeEmbedded(link.target, t, into: &writer, depth: depth)
            } else {
                writer.int(Int64(Self.element(targetStates, Int(t)) >> 1) << 32 | Int64(t))
            }
        case .list(let list, let targetIsEmbedded):
            let embedded = inlineEmbedded && targetIsEmbedded
            writer.beginArray(singleLine: true)
            for t in list.lists[r] {
                if embedded {
                    try writeEmbedded(list.target, t, into: &writer, depth: depth)
                } else {
                    writer.int(ValueCoding.id(list.target.key(t)))
                }
            }
            writer.endArray()
        case .other(let column):
            ValueCoding.writePlain(column.value(at: r), &writer)
        }
    }

    private func writeEmbedded(_ table: Table, _ row: Int32, into writer: inout JSONWriter, depth: Int)
        throws(LiveObjectsError)
    {
        guard depth < Snapshot.maxEmbeddedDepth else {
            throw LiveObjectsError(
                .limitExceeded, "embedded objects nest more than \(Snapshot.maxEmbeddedDepth) levels deep",
                objectType: table.name)
        }
        try write(table, row, into: &writer, depth: depth + 1)
    }
}

/// Reads snapshot files and journal records into a store.
struct SnapshotDecoder {
    var reader: JSONReader
    /// The highest row an id may name: bounded by the input's size, so that a corrupt id cannot
    /// make the loader allocate without limit.
    let maxRow: Int
    /// What the loader needs of each table, by table index; made on first use.
    private var plans: [RecordPlan?] = []
    /// To-one links to set once every object is placed, by link property (``RecordPlan``'s
    /// buckets), in file order.
    var linkBuckets: [(table: Int32, property: Int32, links: [(row: Int32, target: ObjectKey)])] = []
    /// The links of the records being read (a record's own follow those of its embedded
    /// children, which take theirs off when they are placed).
    private var linkStack: [(bucket: Int32, target: ObjectKey)] = []
    var pendingLists: [(table: Int32, row: Int32, property: Int32, targets: [ObjectKey])] = []
    /// Objects appended straight to their columns whose primary keys are not indexed yet.
    var unindexed = UnindexedObjects()

    init(_ bytes: UnsafeRawBufferPointer, fileName: String?) {
        reader = JSONReader(bytes, options: .init(fileName: fileName))
        maxRow = max(bytes.count, 16)
    }

    func corrupt(_ message: String, type: String? = nil, property: String? = nil) -> LiveObjectsError {
        LiveObjectsError(
            .corruptFile, "\(message) (before byte \(reader.offset))", objectType: type, property: property,
            file: reader.options.fileName)
    }

    // MARK: Snapshot

    /// Reads the members before `objects`, leaving the reader at the value of `objects`.
    mutating func readHeader() throws(LiveObjectsError) -> SnapshotHeader {
        var format: String?
        var formatVersion: Int64?
        var schemaVersion: Int64?
        var commit: Int64?
        var schema: Schema?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "format":
                format = try reader.readString()
                guard format == Snapshot.formatName else {
                    throw corrupt("not a LiveObjects file (format '\(format ?? "")')")
                }
            case "formatVersion":
                formatVersion = try reader.readInt64()
                guard formatVersion == Snapshot.formatVersion else {
                    throw corrupt(
                        "unsupported format version \(formatVersion ?? 0); this library reads version \(Snapshot.formatVersion)"
                    )
                }
            case "schemaVersion": schemaVersion = try reader.readInt64()
            case "commit": commit = try reader.readInt64()
            case "schema": schema = try SchemaCoding.read(from: &reader)
            case "objects":
                guard format != nil, let formatVersion, let schemaVersion, schemaVersion >= 0, let commit,
                    commit >= 0, let schema
                else {
                    throw corrupt(
                        "the header (format, formatVersion, schemaVersion, commit, schema) must come before the objects"
                    )
                }
                return SnapshotHeader(
                    formatVersion: formatVersion, schemaVersion: UInt64(schemaVersion), commit: UInt64(commit),
                    schema: schema)
            default:
                throw corrupt("unknown member '\(key)' in the header")
            }
        }
        throw corrupt(format == nil ? "not a LiveObjects file (no format member)" : "the file has no objects member")
    }

    /// Reads the objects (after ``readHeader()``) into an empty store of the file's schema.
    mutating func readObjects(into store: Store) throws(LiveObjectsError) {
        do throws(LiveObjectsError) {
            try readTables(into: store)
        } catch {
            // Objects read before the error may share a primary key: that error comes first.
            try indexPrimaryKeys(store)
            throw error
        }
        while let key = try reader.nextKey() {
            if key == "history" {
                try readHistory(into: store)
                continue
            }
            guard key == "freeSlots" else { throw corrupt("unknown member '\(key)' after the objects") }
            try reader.beginObject()
            while let name = try reader.nextKey() {
                guard let table = store.tablesByName[name] else {
                    throw corrupt("free slots of an unknown type '\(name)'")
                }
                try reader.beginArray()
                while try reader.nextElement() {
                    try store.loadFreeSlot(table, at: try ValueCoding.readID(&reader, maxRow: maxRow, table: name))
                }
            }
        }
        try reader.finish()
        try applyPendingLinks(store)
        // Every embedded object has its one parent (it is written inside it).
        store.finishLoading()
    }

    private mutating func readTables(into store: Store) throws(LiveObjectsError) {
        try reader.beginObject()
        while let name = try reader.nextKey() {
            guard let table = store.tablesByName[name] else { throw corrupt("objects of an unknown type '\(name)'") }
            guard !table.schema.isEmbedded else {
                throw corrupt("embedded objects must be written inside their parent", type: name)
            }
            try readTable(table, plan: plan(table, store), store: store)
            try indexPrimaryKeys(store)
        }
    }

    private mutating func applyPendingLinks(_ store: Store) throws(LiveObjectsError) {
        for bucket in linkBuckets {
            try store.loadLinks(store.tables[Int(bucket.table)], Int(bucket.property), bucket.links)
        }
        for list in pendingLists {
            try store.loadList(store.tables[Int(list.table)], list.row, Int(list.property), to: list.targets)
        }
        linkBuckets = []
        pendingLists = []
    }

    /// The plan of a table, made on first use.
    mutating func plan(_ table: Table, _ store: Store) -> RecordPlan {
        if plans.count <= table.index { plans += Array(repeating: nil, count: table.index + 1 - plans.count) }
        if let plan = plans[table.index] { return plan }
        let plan = RecordPlan(table, store: store, firstBucket: linkBuckets.count)
        for p in plan.kinds.indices where plan.bucketOffset[p] >= 0 {
            linkBuckets.append((Int32(table.index), Int32(p), []))
        }
        plans[table.index] = plan
        return plan
    }

    /// Reads one whole object (with embedded children inline) and places it.
    private mutating func readRecord(_ table: Table, store: Store, depth: Int) throws(LiveObjectsError) -> ObjectKey {
        try reader.beginObject()
        return try readMembers(table, store: store, depth: depth, firstKey: nil, id: nil)
    }

    /// Reads the members of an object, after its `{` and, when given, its first key (as
    /// ``JSONReader/nextKey(in:)`` returned it) or its `$id`, and places it.
    mutating func readMembers(_ table: Table, store: Store, depth: Int, firstKey: Int?, id firstID: ObjectKey?)
        throws(LiveObjectsError) -> ObjectKey
    {
        guard depth <= Snapshot.maxEmbeddedDepth else {
            throw LiveObjectsError(
                .limitExceeded, "embedded objects nest more than \(Snapshot.maxEmbeddedDepth) levels deep",
                objectType: table.name, file: reader.options.fileName)
        }
        let plan = plan(table, store)
        // Top-level records reuse the plan's buffers; embedded ones (read while their parent's
        // record is open) take fresh ones.
        let reuse = depth == 0
        var values = reuse ? plan.takeValues() : plan.defaults
        var seen = reuse ? plan.takeSeen() : Array(repeating: false, count: plan.kinds.count)
        var id = firstID
        let firstStacked = linkStack.count
        let firstList = pendingLists.count
        var pendingKey = firstKey
        while true {
            let k: Int
            if let first = pendingKey {
                k = first
                pendingKey = nil
            } else if let next = try reader.nextKey(in: plan.keys) {
                k = next
            } else {
                break
            }
            guard k > 0 else {
                if k == 0 {
                    guard id == nil else { throw corrupt("the $id is given twice", type: table.name) }
                    id = try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name)
                    continue
                }
                throw corrupt("unknown property", type: table.name)
            }
            let p = k - 1
            seen[p] = true
            switch plan.kinds[p] {
            case .int, .string, .plain, .plainList:
                values[p] = try readPlainValue(table, plan, p)
            case .link:
                values[p] = .null
                if !(try reader.readNull()) {
                    let key = try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name)
                    linkStack.append((Int32(plan.firstBucket + plan.bucketOffset[p]), key))
                }
            case .embeddedLink:
                values[p] = .null
                if !(try reader.readNull()) {
                    // The child has placed itself and taken its own links off the stack.
                    let key = try readRecord(store.tables[plan.targets[p]], store: store, depth: depth + 1)
                    linkStack.append((Int32(plan.firstBucket + plan.bucketOffset[p]), key))
                }
            case .linkList, .embeddedList:
                values[p] = .list([])
                let embedded = plan.kinds[p] == .embeddedList
                var targets: [ObjectKey] = []
                try reader.beginArray()
                while try reader.nextElement() {
                    targets.append(
                        embedded
                            ? try readRecord(store.tables[plan.targets[p]], store: store, depth: depth + 1)
                            : try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name))
                }
                pendingLists.append((Int32(table.index), -1, Int32(p), targets))
            case .linkingObjects:
                throw corrupt(
                    "LinkingObjects are not stored", type: table.name, property: table.schema.properties[p].name)
            }
        }
        guard let id else { throw corrupt("an object without $id", type: table.name) }
        for p in seen.indices {
            if !seen[p] { values[p] = plan.defaults[p] }
            seen[p] = false
        }
        let row = try store.loadRow(table, at: id, values: values)
        // This record's own links are on top of the stack (its children took theirs off).
        for i in firstStacked..<linkStack.count {
            linkBuckets[Int(linkStack[i].bucket)].links.append((row, linkStack[i].target))
        }
        linkStack.removeSubrange(firstStacked...)
        // Entries queued by embedded children (read in between) already have their row.
        for i in firstList..<pendingLists.count
        where pendingLists[i].row < 0 && pendingLists[i].table == Int32(table.index) {
            pendingLists[i].row = row
        }
        if reuse { plan.give(values, seen) }
        return id
    }

    /// Reads a value of a property of kind `int`, `string`, `plain` or `plainList`.
    mutating func readPlainValue(_ table: Table, _ plan: RecordPlan, _ p: Int) throws(LiveObjectsError)
        -> PropertyValue
    {
        switch plan.kinds[p] {
        case .int:
            if try reader.readNull() {
                guard plan.optional[p] else { throw nullError(table, p) }
                return .null
            }
            return .int(try reader.readInt64())
        case .string:
            if try reader.readNull() {
                guard plan.optional[p] else { throw nullError(table, p) }
                return .null
            }
            return .string(try reader.readString())
        case .plainList:
            var items: [PropertyValue] = []
            try reader.beginArray()
            while try reader.nextElement() {
                items.append(
                    try ValueCoding.readPlain(table.schema.properties[p], element: true, &reader, table: table.name))
            }
            return .list(items)
        default:
            return try ValueCoding.readPlain(table.schema.properties[p], element: false, &reader, table: table.name)
        }
    }

    func nullError(_ table: Table, _ p: Int) -> LiveObjectsError {
        corrupt("null for a property that is not optional", type: table.name, property: table.schema.properties[p].name)
    }
}

/// What the snapshot loader needs of a table's properties, made once per load, with no
/// reference-counted values in the per-property arrays it reads for every record.
final class RecordPlan {
    enum Kind: UInt8 {
        /// `Int`, `Int64` (not a list): read inline.
        case int
        /// `String` (not a list): read inline.
        case string
        /// Any other plain value, through ``ValueCoding/readPlain(_:element:_:table:)``.
        case plain
        case plainList
        case link, embeddedLink, linkList, embeddedList
        case linkingObjects
    }

    let keys: JSONKeySet
    let kinds: [Kind]
    let optional: [Bool]
    /// For link properties: the target table's index.
    let targets: [Int]
    /// For to-one link properties: the bucket, counted from `firstBucket`.
    let bucketOffset: [Int]
    let firstBucket: Int
    /// The value of each property when a record does not give it (links: nil, empty lists).
    let defaults: [PropertyValue]
    /// How records of the table are appended straight to its columns, or nil when they cannot
    /// be (an embedded table, or embedded objects inside).
    let columnTargets: ColumnTargets?
    private var values: [PropertyValue]
    private var seen: [Bool]

    init(_ table: Table, store: Store, firstBucket: Int) {
        let properties = table.schema.properties
        keys = JSONKeySet(["$id"] + properties.map(\.name))
        var kinds: [Kind] = []
        var targets: [Int] = []
        var bucketOffset: [Int] = []
        var buckets = 0
        for property in properties {
            var target = -1
            var kind: Kind
            switch property.type {
            case .linkingObjects: kind = .linkingObjects
            case .object:
                let targetTable = store.tablesByName[property.objectType!]!
                target = targetTable.index
                let embedded = targetTable.schema.isEmbedded
                kind = property.isList ? (embedded ? .embeddedList : .linkList) : (embedded ? .embeddedLink : .link)
            case .int, .int64: kind = property.isList ? .plainList : .int
            case .string: kind = property.isList ? .plainList : .string
            default: kind = property.isList ? .plainList : .plain
            }
            kinds.append(kind)
            targets.append(target)
            if kind == .link || kind == .embeddedLink {
                bucketOffset.append(buckets)
                buckets += 1
            } else {
                bucketOffset.append(-1)
            }
        }
        self.kinds = kinds
        self.targets = targets
        self.bucketOffset = bucketOffset
        self.firstBucket = firstBucket
        optional = properties.map(\.isOptional)
        defaults = properties.indices.map {
            properties[$0].type == .object ? properties[$0].zeroValue : table.defaults[$0]
        }
        values = defaults
        seen = Array(repeating: false, count: properties.count)
        columnTargets = ColumnTargets(table, kinds: kinds)
    }

    func takeValues() -> [PropertyValue] {
        var taken: [PropertyValue] = []
        swap(&taken, &values)
        return taken.isEmpty ? defaults : taken
    }

    func takeSeen() -> [Bool] {
        var taken: [Bool] = []
        swap(&taken, &seen)
        return taken.isEmpty ? Array(repeating: false, count: kinds.count) : taken
    }

    func give(_ values: [PropertyValue], _ seen: [Bool]) {
        self.values = values
        self.seen = seen
    }
}
