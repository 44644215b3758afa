import Foundation
import LiveObjects

/// The journal format (JSON Lines): a header line, then one line per commit. See
/// docs/FORMAT.md.
enum Journal {
    static let formatName = "LiveObjects journal"
    static let formatVersion: Int64 = 1

    /// The header line, with its line break.
    static func header(schemaVersion: UInt64, base: UInt64) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginHeader(format: formatName, version: formatVersion, schemaVersion: schemaVersion)
        writer.key("base")
        writer.uint(base)
        writer.endObject()
        writer.finishLine()
        return writer.takeBytes()
    }

    /// One commit as a line, with its line break: inserted objects whole, modified objects with
    /// their changed properties, deleted objects by id. Embedded objects are records of their
    /// own type, linked by id.
    static func line(commit: UInt64, changes: ChangeSet, store: Store, writer: inout JSONWriter)
        throws(LiveObjectsError)
    {
        let encoder = RecordEncoder(store: store, inlineEmbedded: false)
        writer.beginObject()
        writer.key("commit")
        writer.uint(commit)
        writer.key("changes")
        writer.beginObject()
        for table in store.tables {
            guard let change = changes.tables[table.name], !change.isEmpty else { continue }
            writer.key(table.name)
            writer.beginObject()
            if !change.insertions.isEmpty {
                writer.key("insert")
                writer.beginArray()
                for key in change.insertions {
                    guard let row = table.row(for: key) else { continue }
                    try encoder.write(table, row, into: &writer, depth: 0)
                }
                writer.endArray()
            }
            if !change.modifications.isEmpty {
                writer.key("update")
                writer.beginArray()
                for (key, properties) in change.modifications.sorted(by: { $0.key < $1.key }) {
                    guard let row = table.row(for: key) else { continue }
                    try encoder.write(table, row, properties: properties.sorted(), into: &writer)
                }
                writer.endArray()
            }
            if !change.deletions.isEmpty {
                writer.key("delete")
                writer.beginArray()
                for key in change.deletions.keys.sorted() { writer.int(ValueCoding.id(key)) }
                writer.endArray()
            }
            writer.endObject()
        }
        writer.endObject()
        if store.history?.isRecordingRemote == true {
            writer.key("remote")
            writer.bool(true)
        }
        writer.endObject()
        writer.finishLine()
    }
}

/// A field of a journal record.
enum JournalField {
    case plain(PropertyValue)
    case link(ObjectKey?)
    case list([ObjectKey])
}

/// An object in a journal line: its key and the properties given.
struct JournalRecord {
    var key: ObjectKey
    var fields: [(property: Int, value: JournalField)]
}

/// One parsed journal line.
struct JournalEntry {
    var commit: UInt64
    var changes: [(table: Table, inserts: [JournalRecord], updates: [JournalRecord], deletes: [ObjectKey])]
    /// Whether the commit was a remote write (recorded as such in the change history).
    var isRemote = false

    /// Applies the entry to a store as one write.
    func apply(to store: Store) throws(LiveObjectsError) {
        try store.beginWrite()
        do throws(LiveObjectsError) {
            for change in changes {
                for record in change.inserts {
                    var values = change.table.defaults
                    for (p, property) in change.table.schema.properties.enumerated() where property.type == .object {
                        values[p] = property.zeroValue
                    }
                    for (p, field) in record.fields {
                        if case .plain(let v) = field {
                            values[p] = try store.check(v, for: change.table.schema.properties[p], in: change.table)
                        }
                    }
                    try store.insertRow(change.table, at: record.key, values: values)
                }
            }
            for change in changes {
                let inserted = Set(change.inserts.map(\.key))
                for record in change.inserts + change.updates {
                    guard let row = change.table.row(for: record.key) else {
                        throw LiveObjectsError(
                            .corruptFile, "the journal changes \(record.key), which does not exist",
                            objectType: change.table.name)
                    }
                    let isInsert = inserted.contains(record.key)
                    for (p, field) in record.fields {
                        switch field {
                        case .plain(let v): if !isInsert { try store.replaySetValue(v, change.table, row, p) }
                        case .link(let key): try store.replaySetLink(change.table, row, p, to: key)
                        case .list(let keys): try store.replaySetList(change.table, row, p, to: keys)
                        }
                    }
                }
            }
            var doomed: [(Table, Int32)] = []
            for change in changes {
                for key in change.deletes {
                    guard let row = change.table.row(for: key) else {
                        throw LiveObjectsError(
                            .corruptFile, "the journal deletes \(key), which does not exist",
                            objectType: change.table.name)
                    }
                    doomed.append((change.table, row))
                }
            }
            if !doomed.isEmpty { try store.replayDelete(doomed) }
            try store.checkReplayedEmbedded()
            store.history?.isRecordingRemote = isRemote
            defer { store.history?.isRecordingRemote = false }
            try store.commitWrite()
        } catch {
            store.discardReplayedEmbedded()
            store.cancelWrite()
            throw error
        }
    }
}

extension SnapshotDecoder {
    /// Reads the journal header line.
    mutating func readJournalHeader() throws(LiveObjectsError) -> (schemaVersion: UInt64, base: UInt64) {
        var format: String?
        var version: Int64?
        var schemaVersion: Int64?
        var base: Int64?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "format": format = try reader.readString()
            case "formatVersion": version = try reader.readInt64()
            case "schemaVersion": schemaVersion = try reader.readInt64()
            case "base": base = try reader.readInt64()
            default: throw corrupt("unknown member '\(key)' in the journal header")
            }
        }
        guard format == Journal.formatName else { throw corrupt("not a LiveObjects journal") }
        guard version == Journal.formatVersion else {
            throw corrupt("unsupported journal format version \(version ?? 0)")
        }
        guard let schemaVersion, schemaVersion >= 0, let base, base >= 0 else {
            throw corrupt("the journal header needs schemaVersion and base")
        }
        return (UInt64(schemaVersion), UInt64(base))
    }

    /// Reads the commit number at the start of a journal line, leaving the reader after it.
    mutating func readJournalCommit() throws(LiveObjectsError) -> UInt64 {
        try reader.beginObject()
        guard try reader.nextKey() == "commit" else { throw corrupt("a journal line must start with its commit") }
        let commit = try reader.readInt64()
        guard commit > 0 else { throw corrupt("invalid commit number \(commit)") }
        return UInt64(commit)
    }

    /// Reads the rest of a journal line (after ``readJournalCommit()``).
    mutating func readJournalChanges(commit: UInt64, store: Store) throws(LiveObjectsError) -> JournalEntry {
        var entry = JournalEntry(commit: commit, changes: [])
        guard try reader.nextKey() == "changes" else { throw corrupt("a journal line needs its changes") }
        try reader.beginObject()
        while let name = try reader.nextKey() {
            guard let table = store.tablesByName[name] else { throw corrupt("changes to an unknown type '\(name)'") }
            var change = (table: table, inserts: [JournalRecord](), updates: [JournalRecord](), deletes: [ObjectKey]())
            try reader.beginObject()
            while let kind = try reader.nextKey() {
                switch kind {
                case "insert", "update":
                    try reader.beginArray()
                    while try reader.nextElement() {
                        let record = try readJournalRecord(table)
                        if kind == "insert" { change.inserts.append(record) } else { change.updates.append(record) }
                    }
                case "delete":
                    try reader.beginArray()
                    while try reader.nextElement() {
                        change.deletes.append(try ValueCoding.readID(&reader, maxRow: Int(Int32.max), table: name))
                    }
                default:
                    throw corrupt("unknown member '\(kind)' in journal changes", type: name)
                }
            }
            entry.changes.append(change)
        }
        if let key = try reader.nextKey() {
            guard key == "remote" else { throw corrupt("unexpected member '\(key)' after the changes") }
            entry.isRemote = try reader.readBool()
            guard try reader.nextKey() == nil else { throw corrupt("unexpected member after 'remote'") }
        }
        try reader.finish()
        return entry
    }

    private mutating func readJournalRecord(_ table: Table) throws(LiveObjectsError) -> JournalRecord {
        var key: ObjectKey?
        var fields: [(property: Int, value: JournalField)] = []
        try reader.beginObject()
        while let name = try reader.nextKey() {
            if name == "$id" {
                key = try ValueCoding.readID(&reader, maxRow: Int(Int32.max), table: table.name)
                continue
            }
            guard let p = table.propertyIndex[name], table.schema.properties[p].isStored else {
                throw corrupt("unknown property", type: table.name, property: name)
            }
            let property = table.schema.properties[p]
            if property.type == .object {
                if property.isList {
                    var keys: [ObjectKey] = []
                    try reader.beginArray()
                    while try reader.nextElement() {
                        keys.append(try ValueCoding.readID(&reader, maxRow: Int(Int32.max), table: table.name))
                    }
                    fields.append((p, .list(keys)))
                } else if try reader.readNull() {
                    fields.append((p, .link(nil)))
                } else {
                    fields.append(
                        (p, .link(try ValueCoding.readID(&reader, maxRow: Int(Int32.max), table: table.name))))
                }
            } else if property.isList {
                var items: [PropertyValue] = []
                try reader.beginArray()
                while try reader.nextElement() {
                    items.append(try ValueCoding.readPlain(property, element: true, &reader, table: table.name))
                }
                fields.append((p, .plain(.list(items))))
            } else {
                fields.append(
                    (p, .plain(try ValueCoding.readPlain(property, element: false, &reader, table: table.name))))
            }
        }
        guard let key else { throw corrupt("a journal record without $id", type: table.name) }
        return JournalRecord(key: key, fields: fields)
    }
}

extension JSONWriter {
    /// Opens a file header object with its `format`, `formatVersion` and `schemaVersion`
    /// members (snapshots and journals share them).
    mutating func beginHeader(format: String, version: Int64, schemaVersion: UInt64) {
        beginObject()
        key("format")
        string(format)
        key("formatVersion")
        int(version)
        key("schemaVersion")
        uint(schemaVersion)
    }
}
