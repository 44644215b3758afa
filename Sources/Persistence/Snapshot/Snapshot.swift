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
        var writer = JSONWriter(options: .records, capacity: 1 << 20)
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
            for row in table.liveRows {
                try records.write(table, row, into: &writer, depth: 0)
                if writer.count >= 1 << 20 {
                    try writer.withUnsafeBytes(sink)
                    writer.removeAllBytes()
                }
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

    init(store: Store, inlineEmbedded: Bool) {
        self.store = store
        self.inlineEmbedded = inlineEmbedded
        keys = store.tables.map { $0.schema.properties.map { JSONKey($0.name) } }
    }

    /// Writes a whole object.
    func write(_ table: Table, _ row: Int32, into writer: inout JSONWriter, depth: Int) throws(LiveObjectsError) {
        writer.beginObject()
        writer.key(ValueCoding.idKey)
        writer.int(ValueCoding.id(table.key(row)))
        let keys = keys[table.index]
        for (p, column) in table.columns.enumerated() {
            guard let column else { continue }
            writer.key(keys[p])
            try writeValue(column, row, into: &writer, depth: depth)
        }
        writer.endObject()
    }

    /// Writes the `$id` and some properties of an object.
    func write(_ table: Table, _ row: Int32, properties: [Int], into writer: inout JSONWriter) throws(LiveObjectsError) {
        writer.beginObject()
        writer.key(ValueCoding.idKey)
        writer.int(ValueCoding.id(table.key(row)))
        let keys = keys[table.index]
        for p in properties {
            guard let column = table.columns[p] else { continue }
            writer.key(keys[p])
            try writeValue(column, row, into: &writer, depth: 0)
        }
        writer.endObject()
    }

    private func writeValue(_ column: Column, _ row: Int32, into writer: inout JSONWriter, depth: Int)
        throws(LiveObjectsError)
    {
        switch column {
        case let link as LinkColumn:
            let t = link.targets[Int(row)]
            if t < 0 {
                writer.null()
            } else if inlineEmbedded && link.target.schema.isEmbedded {
                try writeEmbedded(link.target, t, into: &writer, depth: depth)
            } else {
                writer.int(ValueCoding.id(link.target.key(t)))
            }
        case let list as LinkListColumn:
            let embedded = inlineEmbedded && list.target.schema.isEmbedded
            writer.beginArray(singleLine: true)
            for t in list.lists[Int(row)] {
                if embedded {
                    try writeEmbedded(list.target, t, into: &writer, depth: depth)
                } else {
                    writer.int(ValueCoding.id(list.target.key(t)))
                }
            }
            writer.endArray()
        default:
            ValueCoding.writePlain(column.value(at: Int(row)), &writer)
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
    private var keySets: [Int: JSONKeySet] = [:]
    private var pendingLinks: [(table: Int32, row: Int32, property: Int32, target: ObjectKey)] = []
    private var pendingLists: [(table: Int32, row: Int32, property: Int32, targets: [ObjectKey])] = []
    private var scratch: [Int: (values: [PropertyValue], seen: [Bool])] = [:]

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
                        "unsupported format version \(formatVersion ?? 0); this library reads version \(Snapshot.formatVersion)")
                }
            case "schemaVersion": schemaVersion = try reader.readInt64()
            case "commit": commit = try reader.readInt64()
            case "schema": schema = try SchemaCoding.read(from: &reader)
            case "objects":
                guard format != nil, let formatVersion, let schemaVersion, schemaVersion >= 0, let commit,
                    commit >= 0, let schema
                else {
                    throw corrupt("the header (format, formatVersion, schemaVersion, commit, schema) must come before the objects")
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
        try reader.beginObject()
        while let name = try reader.nextKey() {
            guard let table = store.tablesByName[name] else { throw corrupt("objects of an unknown type '\(name)'") }
            guard !table.schema.isEmbedded else {
                throw corrupt("embedded objects must be written inside their parent", type: name)
            }
            try reader.beginArray()
            while try reader.nextElement() { _ = try readRecord(table, store: store, depth: 0) }
        }
        while let key = try reader.nextKey() {
            if key == "history" {
                try readHistory(into: store)
                continue
            }
            guard key == "freeSlots" else { throw corrupt("unknown member '\(key)' after the objects") }
            try reader.beginObject()
            while let name = try reader.nextKey() {
                guard let table = store.tablesByName[name] else { throw corrupt("free slots of an unknown type '\(name)'") }
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

    private mutating func applyPendingLinks(_ store: Store) throws(LiveObjectsError) {
        for link in pendingLinks {
            try store.loadLink(store.tables[Int(link.table)], link.row, Int(link.property), to: link.target)
        }
        for list in pendingLists {
            try store.loadList(store.tables[Int(list.table)], list.row, Int(list.property), to: list.targets)
        }
        pendingLinks = []
        pendingLists = []
    }

    private mutating func keySet(_ table: Table) -> JSONKeySet {
        if let set = keySets[table.index] { return set }
        let set = JSONKeySet(["$id"] + table.schema.properties.map(\.name))
        keySets[table.index] = set
        return set
    }

    /// Reads one whole object (with embedded children inline) and places it.
    private mutating func readRecord(_ table: Table, store: Store, depth: Int) throws(LiveObjectsError) -> ObjectKey {
        guard depth <= Snapshot.maxEmbeddedDepth else {
            throw LiveObjectsError(
                .limitExceeded, "embedded objects nest more than \(Snapshot.maxEmbeddedDepth) levels deep",
                objectType: table.name, file: reader.options.fileName)
        }
        let keys = keySet(table)
        let properties = table.schema.properties
        var (values, seen) = depth == 0 ? (scratch.removeValue(forKey: table.index) ?? (table.defaults, [])) : (table.defaults, [])
        if seen.count != properties.count { seen = Array(repeating: false, count: properties.count) }
        var id: ObjectKey?
        // Links are queued with row -1 and given the row once the `$id` is known.
        let firstLink = pendingLinks.count
        let firstList = pendingLists.count
        try reader.beginObject()
        while let k = try reader.nextKey(in: keys) {
            guard k > 0 else {
                if k == 0 {
                    id = try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name)
                    continue
                }
                throw corrupt("unknown property", type: table.name)
            }
            let p = k - 1
            let property = properties[p]
            seen[p] = true
            switch property.type {
            case .linkingObjects:
                throw corrupt("LinkingObjects are not stored", type: table.name, property: property.name)
            case .object:
                values[p] = property.zeroValue
                let target = store.tablesByName[property.objectType!]!
                let embedded = target.schema.isEmbedded
                if property.isList {
                    var targets: [ObjectKey] = []
                    try reader.beginArray()
                    while try reader.nextElement() {
                        targets.append(
                            embedded
                                ? try readRecord(target, store: store, depth: depth + 1)
                                : try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name))
                    }
                    pendingLists.append((Int32(table.index), -1, Int32(p), targets))
                } else if !(try reader.readNull()) {
                    let key =
                        embedded
                        ? try readRecord(target, store: store, depth: depth + 1)
                        : try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name)
                    pendingLinks.append((Int32(table.index), -1, Int32(p), key))
                }
            default:
                if property.isList {
                    var items: [PropertyValue] = []
                    try reader.beginArray()
                    while try reader.nextElement() {
                        items.append(try ValueCoding.readPlain(property, element: true, &reader, table: table.name))
                    }
                    values[p] = .list(items)
                } else {
                    values[p] = try ValueCoding.readPlain(property, element: false, &reader, table: table.name)
                }
            }
        }
        guard let id else { throw corrupt("an object without $id", type: table.name) }
        for p in properties.indices {
            if !seen[p] { values[p] = properties[p].type == .object ? properties[p].zeroValue : table.defaults[p] }
            seen[p] = false
        }
        let row = try store.loadRow(table, at: id, values: values)
        // Entries queued by embedded children (read in between) already have their row.
        for i in firstLink..<pendingLinks.count where pendingLinks[i].row < 0 && pendingLinks[i].table == Int32(table.index) {
            pendingLinks[i].row = row
        }
        for i in firstList..<pendingLists.count where pendingLists[i].row < 0 && pendingLists[i].table == Int32(table.index) {
            pendingLists[i].row = row
        }
        if depth == 0 { scratch[table.index] = (values, seen) }
        return id
    }
}
