import Foundation
import LiveObjects
import LiveObjectsJSON

/// The journal format (JSON Lines): a header line, then one line per commit. See
/// docs/FORMAT.md.
enum Journal {
    static let formatName = "LiveObjects journal"
    /// The version written. Version 1 (no checksums) and version 2 (no `decimal` or `objectID`
    /// values) are still read.
    static let formatVersion: Int64 = 3
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
    /// own type, linked by id. `isRemote` marks a commit of changes that came from a sync
    /// server.
    static func line(commit: UInt64, changes: ChangeSet, store: Store, isRemote: Bool, writer: inout JSONWriter)
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
        if isRemote {
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
    /// The ids of a list of links, with where each ends in the file.
    case list([ObjectKey], ends: [Int])
    /// A map of objects: `[key, .object(id) or .null]` pairs.
    case map(PropertyValue)
}

/// An object in a journal line: its key, the properties given, and where the record and each
/// value end in the file (for errors).
struct JournalRecord {
    var key: ObjectKey
    /// The properties given, each with where its value ends in the file.
    var fields: [(property: Int, value: JournalField, offset: Int)]
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
    /// Where the line starts in the file.
    var lineStart = 0
    /// Where the line's changes end in the file (for an error about the entry as a whole).
    var changesEnd = 0

    /// Where a value, record or id that ends at byte `offset` of the file is: "(before byte N,
    /// line L, column C)", as the reader says it.
    private func position(_ offset: Int) -> String {
        "(before byte \(offset), line \(line), column \(offset - lineStart + 1))"
    }

    /// A `corruptFile` error about what ends at byte `offset` of the file.
    private func corrupt(_ reason: String, before offset: Int, type: String?) -> LiveObjectsError {
        positioned(LiveObjectsError(.corruptFile, reason, objectType: type), offset)
    }

    /// `error` (from the store) with the position of the value, record or id it is about.
    private func positioned(_ error: LiveObjectsError, _ offset: Int) -> LiveObjectsError {
        guard error.inputLocation == nil else { return error }
        var located = error
        located.message += " \(position(offset))"
        located.inputLocation = InputErrorLocation(offset: offset, reason: error.message)
        return located
    }

    /// Where the deletion of the object of `type` with `primaryKey` ends (the first deletion of
    /// the type when the key does not tell, the end of the changes when the line has none).
    private func deletionOffset(type: String?, primaryKey: PropertyValue?) -> Int {
        var first: Int?
        for change in changes where change.table.name == type {
            for (key, offset) in change.deletes {
                if first == nil { first = offset }
                if let primaryKey, let row = change.table.row(for: key), change.table.primaryKey(of: row) == primaryKey
                {
                    return offset
                }
            }
        }
        return first ?? changesEnd
    }

    /// Where the line says the most about the embedded object of `type` with `key`: its own
    /// record, else the link that names it, else the end of the changes.
    private func embeddedOffset(type: String?, key: ObjectKey?) -> Int {
        guard let type, let key else { return changesEnd }
        for change in changes where change.table.name == type {
            if let record = (change.inserts + change.updates).first(where: { $0.key == key }) { return record.offset }
        }
        for change in changes {
            for record in change.inserts + change.updates {
                for (p, field, offset) in record.fields where change.table.schema.properties[p].objectType == type {
                    switch field {
                    case .link(let target) where target == key: return offset
                    case .list(let targets, let ends):
                        if let i = targets.firstIndex(of: key) { return ends[i] }
                    default: continue
                    }
                }
            }
        }
        return changesEnd
    }

    /// Whether a value read for a property is a mixed value holding a link, at any depth.
    static func holdsMixedLink(_ value: PropertyValue, _ property: Property) -> Bool {
        guard property.type == .mixed, case .list = value else { return false }
        var found = false
        Store.forEachMixedLink(in: value, of: property) { _ in found = true }
        return found
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
                        for (p, field, offset) in record.fields {
                            // A link in a mixed value may name an object inserted after this one:
                            // set once every object is inserted.
                            guard case .plain(let v) = field, !Self.holdsMixedLink(v, change.table.schema.properties[p])
                            else {
                                continue
                            }
                            do throws(LiveObjectsError) {
                                values[p] = try store.checkLoaded(
                                    v, for: change.table.schema.properties[p], in: change.table)
                            } catch {
                                throw positioned(error, offset)
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
                        throw corrupt(
                            "the journal changes \(record.key), which does not exist", before: record.offset,
                            type: change.table.name)
                    }
                    let isInsert = inserted.contains(record.key)
                    for (p, field, offset) in record.fields {
                        do throws(LiveObjectsError) {
                            switch field {
                            case .plain(let v):
                                if !isInsert || Self.holdsMixedLink(v, change.table.schema.properties[p]) {
                                    try store.replaySetValue(v, change.table, row, p)
                                }
                            case .link(let key): try store.replaySetLink(change.table, row, p, to: key)
                            case .list(let keys, _): try store.replaySetList(change.table, row, p, to: keys)
                            case .map(let pairs): try store.replaySetMap(change.table, row, p, to: pairs)
                            }
                        } catch {
                            // A list entry naming a missing object: that entry.
                            if case .list(let keys, let ends) = field,
                                let target = store.tablesByName[change.table.schema.properties[p].objectType ?? ""],
                                let i = keys.firstIndex(where: { target.row(for: $0) == nil })
                            {
                                throw positioned(error, ends[i])
                            }
                            throw positioned(error, offset)
                        }
                    }
                }
            }
            var doomed: [(Table, Int32)] = []
            for change in changes {
                for (key, offset) in change.deletes {
                    guard let row = change.table.row(for: key) else {
                        throw corrupt(
                            "the journal deletes \(key), which does not exist", before: offset, type: change.table.name)
                    }
                    doomed.append((change.table, row))
                }
            }
            if !doomed.isEmpty {
                do throws(LiveObjectsError) {
                    try store.replayDelete(doomed)
                } catch {
                    // The writer never journals a deletion that a rule refuses: the line is damaged.
                    throw corrupt(
                        "the journal's deletions cannot be applied: \(error.message)",
                        before: deletionOffset(type: error.objectType, primaryKey: error.primaryKey),
                        type: error.objectType)
                }
            }
            if let (table, key, parents) = store.replayedEmbeddedWithoutOneParent() {
                throw corrupt(
                    "the embedded \(table.name) \(key) has " + (parents == 0 ? "no parent" : "\(parents) parents")
                        + " after the entry", before: embeddedOffset(type: table.name, key: key), type: table.name)
            }
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
        guard let version, (1...Journal.formatVersion).contains(version) else {
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
        var entry = JournalEntry(
            commit: commit, changes: [], line: reader.options.startLine, lineStart: reader.options.startOffset)
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
        entry.changesEnd = reader.fileOffset
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
        var fields: [(property: Int, value: JournalField, offset: Int)] = []
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
            if property.type == .object && property.isMap {
                let pairs = try ValueCoding.readMap(property, &reader, table: table.name)
                fields.append((p, .map(pairs), reader.fileOffset))
            } else if property.type == .object {
                if property.isList {
                    var keys: [ObjectKey] = []
                    var ends: [Int] = []
                    try reader.beginArray()
                    while try reader.nextElement() {
                        keys.append(try ValueCoding.readID(&reader, maxRow: Int(Int32.max), table: table.name))
                        ends.append(reader.fileOffset)
                    }
                    if property.isSet && Set(keys).count != keys.count {
                        throw corrupt("a set names an object twice", type: table.name, property: name)
                    }
                    fields.append((p, .list(keys, ends: ends), reader.fileOffset))
                } else if try reader.readNull() {
                    fields.append((p, .link(nil), reader.fileOffset))
                } else {
                    let key = try ValueCoding.readID(&reader, maxRow: Int(Int32.max), table: table.name)
                    fields.append((p, .link(key), reader.fileOffset))
                }
            } else if property.isMap {
                let value = try ValueCoding.readMap(property, &reader, table: table.name)
                fields.append((p, .plain(value), reader.fileOffset))
            } else if property.isList {
                var items: [PropertyValue] = []
                try reader.beginArray()
                while try reader.nextElement() {
                    items.append(try ValueCoding.readPlain(property, element: true, &reader, table: table.name))
                }
                if property.isSet && Set(items).count != items.count {
                    throw corrupt("a set holds a member twice", type: table.name, property: name)
                }
                fields.append((p, .plain(.list(items)), reader.fileOffset))
            } else {
                let value = try ValueCoding.readPlain(property, element: false, &reader, table: table.name)
                fields.append((p, .plain(value), reader.fileOffset))
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
