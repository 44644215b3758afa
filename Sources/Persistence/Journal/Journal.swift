import Foundation
import LiveObjects
import LiveObjectsJSON

/// The journal format (JSON Lines): a header line, then one line per commit. See
/// docs/FORMAT.md.
enum Journal {
    static let formatName = "LiveObjects journal"
    /// The version written. Version 1 (no checksums) is still read.
    static let formatVersion: Int64 = 2
    /// The last member of every line (version 2 on): the CRC-32C of the line's bytes before it.
    static let checksumKey = "crc32c"
    /// What ends every line of version 2, after the bytes its checksum covers:
    /// `,"crc32c":"` (`checksumPrefix`), 8 lowercase hexadecimal digits, `"}`, and the line break.
    static let checksumPrefix = Array(#","crc32c":""#.utf8)
    /// The length of the end of a line after the bytes its checksum covers, line break excluded.
    static let checksumSuffixLength = checksumPrefix.count + 8 + 2

    /// The header line, with its line break.
    static func header(schemaVersion: UInt64, base: UInt64) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginHeader(format: formatName, version: formatVersion, schemaVersion: schemaVersion)
        writer.key("base")
        writer.uint(base)
        endLine(&writer, start: 0)
        return writer.takeBytes()
    }

    /// Ends the line that starts at byte `start` of the writer, inside its top-level object:
    /// writes the checksum member, closes the object, and adds the line break.
    static func endLine(_ writer: inout JSONWriter, start: Int) {
        let crc = writer.withUnsafeBytes { bytes in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[start...]))
        }
        writer.key(checksumKey)
        writer.string(String(decoding: CRC32C.hex(crc), as: UTF8.self))
        writer.endObject()
        writer.finishLine()
    }

    /// Whether `line` (without its line break) ends with a checksum member, `,"crc32c":"` and 8
    /// lowercase hexadecimal digits and `"}`; if so, the checksum it records.
    static func recordedChecksum(_ line: UnsafeRawBufferPointer) -> UInt32? {
        let n = line.count
        guard n > checksumSuffixLength else { return nil }
        let start = n - checksumSuffixLength
        for (i, b) in checksumPrefix.enumerated() where line[start + i] != b { return nil }
        guard line[n - 2] == 0x22, line[n - 1] == 0x7D else { return nil }
        return CRC32C.parseHex(line.baseAddress! + start + checksumPrefix.count)
    }

    /// The checksum of a line's bytes (line break excluded) before its checksum member.
    static func actualChecksum(_ line: UnsafeRawBufferPointer) -> UInt32 {
        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: line[..<(line.count - checksumSuffixLength)]))
    }

    /// One commit as a line, with its line break: inserted objects whole, modified objects with
    /// their changed properties, deleted objects by id. Embedded objects are records of their
    /// own type, linked by id.
    static func line(commit: UInt64, changes: ChangeSet, store: Store, writer: inout JSONWriter)
        throws(LiveObjectsError)
    {
        let encoder = RecordEncoder(store: store, inlineEmbedded: false)
        let start = writer.count
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
        endLine(&writer, start: start)
    }
}

/// A field of a journal record.
enum JournalField {
    case plain(PropertyValue)
    case link(ObjectKey?)
    case list([ObjectKey])
}

/// An object in a journal line: its key, the properties given, and where the record ends in
/// the file (for errors).
struct JournalRecord {
    var key: ObjectKey
    var fields: [(property: Int, value: JournalField)]
    /// Where the record ends in the file.
    var offset: Int
}

/// One parsed journal line.
struct JournalEntry {
    var commit: UInt64
    var changes:
        [(
            table: Table, inserts: [JournalRecord], updates: [JournalRecord],
            deletes: [(key: ObjectKey, offset: Int)]
        )]
    /// Whether the commit was a remote write (recorded as such in the change history).
    var isRemote = false
    /// The line of the journal that the entry is.
    var line = 0

    /// Where a record or id that ends at byte `offset` of the file is.
    private func position(_ offset: Int) -> String {
        "(before byte \(offset), line \(line))"
    }

    /// `error` with the position of the record or id it is about.
    private func positioned(_ error: LiveObjectsError, _ offset: Int) -> LiveObjectsError {
        var error = error
        if !error.message.contains("byte ") { error.message += " \(position(offset))" }
        return error
    }

    /// Applies the entry to a store as one write.
    func apply(to store: Store) throws(LiveObjectsError) {
        try store.beginWrite()
        do throws(LiveObjectsError) {
            for change in changes {
                for record in change.inserts {
                    do throws(LiveObjectsError) {
                        var values = change.table.defaults
                        for (p, property) in change.table.schema.properties.enumerated()
                        where property.type == .object {
                            values[p] = property.zeroValue
                        }
                        for (p, field) in record.fields {
                            if case .plain(let v) = field {
                                values[p] = try store.check(
                                    v, for: change.table.schema.properties[p], in: change.table)
                            }
                        }
                        try store.insertRow(change.table, at: record.key, values: values)
                    } catch {
                        throw positioned(error, record.offset)
                    }
                }
            }
            for change in changes {
                let inserted = Set(change.inserts.map(\.key))
                for record in change.inserts + change.updates {
                    guard let row = change.table.row(for: record.key) else {
                        throw LiveObjectsError(
                            .corruptFile,
                            "the journal changes \(record.key), which does not exist \(position(record.offset))",
                            objectType: change.table.name)
                    }
                    let isInsert = inserted.contains(record.key)
                    do throws(LiveObjectsError) {
                        for (p, field) in record.fields {
                            switch field {
                            case .plain(let v): if !isInsert { try store.replaySetValue(v, change.table, row, p) }
                            case .link(let key): try store.replaySetLink(change.table, row, p, to: key)
                            case .list(let keys): try store.replaySetList(change.table, row, p, to: keys)
                            }
                        }
                    } catch {
                        throw positioned(error, record.offset)
                    }
                }
            }
            var doomed: [(Table, Int32)] = []
            for change in changes {
                for (key, offset) in change.deletes {
                    guard let row = change.table.row(for: key) else {
                        throw LiveObjectsError(
                            .corruptFile, "the journal deletes \(key), which does not exist \(position(offset))",
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

/// What a journal's header line says.
struct JournalHeader {
    var formatVersion: Int64
    var schemaVersion: UInt64
    var base: UInt64
}

extension SnapshotDecoder {
    /// Reads the journal header line (all of it).
    mutating func readJournalHeader() throws(LiveObjectsError) -> JournalHeader {
        var format: String?
        var version: Int64?
        var schemaVersion: Int64?
        var base: Int64?
        var hasChecksum = false
        try reader.beginObject()
        while let key = try reader.nextKey() {
            guard !hasChecksum else { throw corrupt("the checksum must be the line's last member") }
            switch key {
            case "format":
                guard format == nil else { throw duplicate(key) }
                format = try reader.readString()
            case "formatVersion":
                guard version == nil else { throw duplicate(key) }
                version = try reader.readInt64()
            case "schemaVersion":
                guard schemaVersion == nil else { throw duplicate(key) }
                schemaVersion = try reader.readInt64()
            case "base":
                guard base == nil else { throw duplicate(key) }
                base = try reader.readInt64()
            case Journal.checksumKey where version ?? 0 >= 2:
                try readLineChecksum()
                hasChecksum = true
            default: throw corrupt("unknown member '\(key)' in the journal header")
            }
        }
        try reader.finish()
        guard format == Journal.formatName else { throw corrupt("not a LiveObjects journal") }
        guard let version, version == 1 || version == Journal.formatVersion else {
            throw corrupt(
                "unsupported journal format version \(version ?? 0); this library reads versions 1 to \(Journal.formatVersion)"
            )
        }
        guard let schemaVersion, schemaVersion >= 0, let base, base >= 0 else {
            throw corrupt("the journal header needs schemaVersion and base")
        }
        if version >= 2 && verifiesChecksum && !hasChecksum {
            throw corrupt("the journal header has no checksum")
        }
        return JournalHeader(formatVersion: version, schemaVersion: UInt64(schemaVersion), base: UInt64(base))
    }

    /// Reads the value of a line's checksum member (checked before the line was read): 8
    /// lowercase hexadecimal digits.
    private mutating func readLineChecksum() throws(LiveObjectsError) {
        let text = try reader.readString()
        let utf8 = Array(text.utf8)
        guard utf8.count == 8, utf8.withUnsafeBytes({ CRC32C.parseHex($0.baseAddress!) }) != nil else {
            throw corrupt("the checksum must be 8 lowercase hexadecimal digits")
        }
    }

    /// Reads the commit number at the start of a journal line, leaving the reader after it.
    mutating func readJournalCommit() throws(LiveObjectsError) -> UInt64 {
        try reader.beginObject()
        guard try reader.nextKey() == "commit" else { throw corrupt("a journal line must start with its commit") }
        let commit = try reader.readInt64()
        guard commit > 0 else { throw corrupt("invalid commit number \(commit)") }
        return UInt64(commit)
    }

    /// Reads the rest of a journal line (after ``readJournalCommit()``), of a journal of format
    /// `version`.
    mutating func readJournalChanges(commit: UInt64, store: Store, version: Int64) throws(LiveObjectsError)
        -> JournalEntry
    {
        var entry = JournalEntry(commit: commit, changes: [], line: reader.options.startLine)
        guard let changesKey = try reader.nextKey() else { throw corrupt("a journal line needs its changes") }
        guard changesKey == "changes" else {
            throw changesKey == "commit" ? duplicate(changesKey) : corrupt("a journal line needs its changes")
        }
        try reader.beginObject()
        var types: Set<Int> = []
        while let name = try reader.nextKey() {
            guard let table = store.tablesByName[name] else { throw corrupt("changes to an unknown type '\(name)'") }
            guard types.insert(table.index).inserted else { throw duplicate(name) }
            var change = (
                table: table, inserts: [JournalRecord](), updates: [JournalRecord](),
                deletes: [(key: ObjectKey, offset: Int)]()
            )
            var kinds: Set<String> = []
            try reader.beginObject()
            while let kind = try reader.nextKey() {
                guard kinds.insert(kind).inserted else { throw duplicate(kind, type: name) }
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
                        let key = try ValueCoding.readID(&reader, maxRow: Int(Int32.max), table: name)
                        change.deletes.append((key, reader.fileOffset))
                    }
                default:
                    throw corrupt("unknown member '\(kind)' in journal changes", type: name)
                }
            }
            entry.changes.append(change)
        }
        var seen: Set<String> = []
        while let key = try reader.nextKey() {
            guard seen.insert(key).inserted else { throw duplicate(key) }
            switch key {
            case "remote" where !seen.contains(Journal.checksumKey):
                entry.isRemote = try reader.readBool()
            case Journal.checksumKey where version >= 2:
                try readLineChecksum()
            case "commit", "changes":
                throw duplicate(key)
            default:
                throw corrupt("unexpected member '\(key)' after the changes")
            }
        }
        if version >= 2 && verifiesChecksum && !seen.contains(Journal.checksumKey) {
            throw corrupt("the line has no checksum")
        }
        try reader.finish()
        return entry
    }

    private mutating func readJournalRecord(_ table: Table) throws(LiveObjectsError) -> JournalRecord {
        var key: ObjectKey?
        var fields: [(property: Int, value: JournalField)] = []
        var seen: Set<Int> = []
        try reader.beginObject()
        while let name = try reader.nextKey() {
            if name == "$id" {
                guard key == nil else { throw corrupt("the $id is given twice", type: table.name) }
                key = try ValueCoding.readID(&reader, maxRow: Int(Int32.max), table: table.name)
                continue
            }
            guard let p = table.propertyIndex[name], table.schema.properties[p].isStored else {
                throw corrupt("unknown property", type: table.name, property: name)
            }
            guard seen.insert(p).inserted else {
                throw corrupt("the property is given twice", type: table.name, property: name)
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
        return JournalRecord(key: key, fields: fields, offset: reader.fileOffset)
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
