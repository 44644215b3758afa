import Foundation
import LiveObjects
import LiveObjectsJSON

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
    /// The version written. Version 1 (no checksum) and version 2 (no `decimal` or `objectID`
    /// properties) are still read.
    static let formatVersion: Int64 = 3
    /// The name of the last member, which holds the checksum (version 2 on).
    static let checksumKey = "checksum"
    /// How the checksum's value starts: the algorithm, then 8 lowercase hexadecimal digits.
    static let checksumPrefix = "crc32c:"
    /// Snapshots of at least this many bytes have their checksum computed on another thread
    /// while their objects are read (``BackgroundChecksum``); smaller ones first, at once (a
    /// thread costs more than it would save).
    static let backgroundChecksumSize = 4 << 20
    /// How deep embedded objects may nest inside one another in a file.
    static let maxEmbeddedDepth = 100

    /// Encodes a whole store, handing the bytes to `sink` in chunks of about 1 MiB. The last
    /// member is the checksum of every byte before it, computed on the chunks as they go.
    static func encode(
        _ store: Store, schemaVersion: UInt64, commit: UInt64,
        sink rawSink: (UnsafeRawBufferPointer) throws(LiveObjectsError) -> Void
    ) throws(LiveObjectsError) {
        var crc = CRC32C()
        func sink(_ chunk: UnsafeRawBufferPointer) throws(LiveObjectsError) {
            crc.update(chunk)
            try rawSink(chunk)
        }
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
        // The checksum covers every byte before its key's opening quote.
        writer.key(checksumKey)
        writer.withUnsafeBytes { bytes in
            var end = bytes.count
            while bytes[end - 1] == 0x20 { end -= 1 }
            let keyStart = end - 1 - (checksumKey.utf8.count + 2)
            crc.update(UnsafeRawBufferPointer(rebasing: bytes[..<keyStart]))
        }
        writer.string(checksumPrefix + String(decoding: CRC32C.hex(crc.value), as: UTF8.self))
        writer.endObject()
        writer.finishLine()
        try writer.withUnsafeBytes(rawSink)
    }

    /// Where a snapshot's checksum member is, found from the end of the file without parsing
    /// it: `"checksum": "crc32c:XXXXXXXX"`, then the `}` closing the file's object, with
    /// whitespace around them.
    struct ChecksumMember {
        /// The number of bytes the checksum covers: those before the key's opening quote.
        var covered: Int
        /// The checksum the file records.
        var recorded: UInt32
        /// Where the value starts and ends (after its closing quote).
        var valueStart: Int
        var valueEnd: Int
    }

    /// The checksum member at the end of `bytes`, or nil if they do not end with one.
    static func checksumMember(_ bytes: UnsafeRawBufferPointer) -> ChecksumMember? {
        var i = bytes.count
        func skipWhitespace() {
            while i > 0, bytes[i - 1] == 0x20 || bytes[i - 1] == 0x0A || bytes[i - 1] == 0x0D || bytes[i - 1] == 0x09 {
                i -= 1
            }
        }
        func ends(with text: String) -> Bool {
            let utf8 = Array(text.utf8)
            guard i >= utf8.count else { return false }
            for (k, b) in utf8.enumerated() where bytes[i - utf8.count + k] != b { return false }
            i -= utf8.count
            return true
        }
        skipWhitespace()
        guard ends(with: "}") else { return nil }
        skipWhitespace()
        let valueEnd = i
        guard ends(with: "\""), i >= 8, let recorded = CRC32C.parseHex(bytes.baseAddress! + i - 8) else { return nil }
        i -= 8
        guard ends(with: "\"" + checksumPrefix) else { return nil }
        let valueStart = i
        skipWhitespace()
        guard ends(with: ":") else { return nil }
        skipWhitespace()
        guard ends(with: "\"" + checksumKey + "\"") else { return nil }
        return ChecksumMember(covered: i, recorded: recorded, valueStart: valueStart, valueEnd: valueEnd)
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
        case int(PackedIntArray)
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
            switch column.typedChunks {
            case .int(let chunks): self = .int(chunks)
            case .double(let chunks): self = .double(chunks)
            case .string(let chunks): self = .string(chunks)
            case .bool(let chunks): self = .bool(chunks)
            case .optionalInt(let chunks): self = .optionalInt(chunks)
            case .optionalDouble(let chunks): self = .optionalDouble(chunks)
            case .optionalString(let chunks): self = .optionalString(chunks)
            case .optionalBool(let chunks): self = .optionalBool(chunks)
            case .link(let targets):
                let link = unsafeDowncast(column, to: LinkColumn.self)
                self = .link(
                    link, targets, link.target.withSlotStates { $0.chunks },
                    targetIsEmbedded: link.target.schema.isEmbedded)
            case .linkList:
                let list = unsafeDowncast(column, to: LinkListColumn.self)
                self = .list(list, targetIsEmbedded: list.target.schema.isEmbedded)
            case .other: self = .other(column)
            }
        }
    }

    /// Element `i` of a chunked array's chunks.
    @inline(__always)
    static func element<T>(_ chunks: [[T]], _ i: Int) -> T { ChunkedArray<T>.element(chunks, at: i) }

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
                let r = ChunkedArray<UInt32>.position(chunk: c, offset: i)
                guard Table.isLive(slotState: state) else { continue }
                let row = Int32(r)
                writer.beginObject()
                writer.key(ValueCoding.idKey)
                writer.int(ValueCoding.id(slotState: state, row: r))
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
        case .int(let values): writer.int(values.element(at: r))
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
                writer.int(ValueCoding.id(slotState: Self.element(targetStates, Int(t)), row: Int(t)))
            }
        case .list(let list, let targetIsEmbedded) where list.isMap:
            guard inlineEmbedded && targetIsEmbedded else {
                // A map of objects: `[key, id or null]` pairs, in the order of the keys.
                ValueCoding.writePlain(list.containerValue(at: r), &writer)
                return
            }
            // A map of embedded objects: `[key, object or null]` pairs, each object inline.
            writer.beginArray(singleLine: true)
            for (key, t) in zip(list.keys[r], list.lists[r]) {
                writer.beginArray(singleLine: true)
                writer.string(key)
                if t < 0 { writer.null() } else { try writeEmbedded(list.target, t, into: &writer, depth: depth) }
                writer.endArray()
            }
            writer.endArray()
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
        case .other(let column) where column.property.type == .mixed:
            if column.property.isList {
                ValueCoding.writeMixedCollection(column.value(at: r), isMap: column.property.isMap, &writer)
            } else {
                ValueCoding.writeMixed(column.value(at: r), &writer)
            }
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
    /// The bytes read.
    let bytes: UnsafeRawBufferPointer
    /// The highest row an id may name: bounded by the input's size, so that a corrupt id cannot
    /// make the loader allocate without limit.
    let maxRow: Int
    /// Whether a snapshot's checksum is checked (``FileStorage/Options/verifiesChecksum``).
    let verifiesChecksum: Bool
    /// The snapshot's checksum member, found from the end of the file when it is checked.
    private var checksum: Snapshot.ChecksumMember?
    /// The snapshot's checksum being computed on another thread, when ``readHeader(checksumInBackground:)``
    /// started it: compared with the recorded one by ``settleChecksum()``.
    private var backgroundChecksum: BackgroundChecksum?
    /// The snapshot's format version, once read.
    private(set) var formatVersion: Int64 = 0
    /// What the loader needs of each table, by table index; made on first use.
    private var plans: [RecordPlan?] = []
    /// To-one links to set once every object is placed, by link property (``RecordPlan``'s
    /// buckets), in file order.
    var linkBuckets: [(table: Int32, property: Int32, links: [(row: Int32, target: ObjectKey)])] = []
    /// Whether to note where each to-one link is (in `linkOffsets`, parallel to the buckets):
    /// only when reading a file again to say where a link that failed is.
    var tracksLinkOffsets = false
    var linkOffsets: [[Int]] = []
    /// The links of the records being read (a record's own follow those of its embedded
    /// children, which take theirs off when they are placed), with where each is.
    private var linkStack: [(bucket: Int32, target: ObjectKey, offset: Int)] = []
    /// Lists of links to set once every object is placed, with where each list starts.
    var pendingLists: [(table: Int32, row: Int32, property: Int32, targets: [ObjectKey], offset: Int)] = []
    /// The maps of objects read, as `[key, .object(id) or .null]` pairs: set once every object
    /// is placed.
    var pendingMaps: [(table: Int32, row: Int32, property: Int32, pairs: PropertyValue, offset: Int)] = []
    /// Objects appended straight to their columns whose primary keys are not indexed yet.
    var unindexed = UnindexedObjects()
    /// The columns of the table being read, whose values may be gathered and not yet appended
    /// (``ColumnTargets``).
    var gathering: ColumnTargets?

    /// A decoder of `bytes`, which must stay valid and unchanged while it is used: a whole
    /// snapshot, or a journal line starting at `startOffset` on line `startLine` of its file.
    init(
        _ bytes: UnsafeRawBufferPointer, fileName: String?, startOffset: Int = 0, startLine: Int = 1,
        verifiesChecksum: Bool = true
    ) {
        self.bytes = bytes
        reader = JSONReader(
            bytes, options: .init(fileName: fileName, startOffset: startOffset, startLine: startLine))
        maxRow = max(bytes.count, 16)
        self.verifiesChecksum = verifiesChecksum
    }

    func corrupt(_ message: String, type: String? = nil, property: String? = nil) -> LiveObjectsError {
        reader.loadError(message, objectType: type, property: property)
    }

    /// `error` (from the store) with the position `offset` (of the reader) and the file.
    func positioned(_ error: LiveObjectsError, at offset: Int) -> LiveObjectsError {
        reader.locating(error, before: offset)
    }

    // MARK: Snapshot

    /// Checks the snapshot's checksum, if it has one: before anything is read. In the
    /// background, only starts computing it.
    private mutating func checkChecksum(inBackground: Bool) throws(LiveObjectsError) {
        guard let member = Snapshot.checksumMember(bytes) else { return }
        checksum = member
        let covered = UnsafeRawBufferPointer(rebasing: bytes[..<member.covered])
        if inBackground {
            backgroundChecksum = BackgroundChecksum(covered)
        } else {
            try compareChecksum(CRC32C.checksum(covered), member)
        }
    }

    /// Throws unless `actual` is the checksum the file records.
    private func compareChecksum(_ actual: UInt32, _ member: Snapshot.ChecksumMember) throws(LiveObjectsError) {
        guard actual == member.recorded else {
            let hex = { (v: UInt32) in Snapshot.checksumPrefix + String(decoding: CRC32C.hex(v), as: UTF8.self) }
            var error = reader.loadError(
                "the file was changed outside LiveObjects, or damaged: its content's checksum is \(hex(actual)), "
                    + "not the \(hex(member.recorded)) it records",
                before: member.valueEnd)
            error.message += "; to open a file edited by hand, set FileStorage.Options.verifiesChecksum to false"
            throw error
        }
    }

    /// Waits for the checksum that ``readHeader(checksumInBackground:)`` started computing, if
    /// any, and throws the error of a checksum other than the recorded one. Call it before
    /// acting on the header otherwise than by reading the objects (``readObjects(into:)``
    /// settles it itself, before it sets any link, and before any error it throws).
    mutating func settleChecksum() throws(LiveObjectsError) {
        guard let background = backgroundChecksum, let checksum else { return }
        backgroundChecksum = nil
        try compareChecksum(background.value(), checksum)
    }

    /// Reads the members before `objects`, leaving the reader at the value of `objects`. With
    /// ``verifiesChecksum``, checks the checksum first; or, `checksumInBackground`, starts
    /// computing it on another thread while the rest is read, to be compared by
    /// ``settleChecksum()`` (which every error thrown here and by ``readObjects(into:)`` comes
    /// after: a damaged file is still refused as damaged, whatever its damage made the reader
    /// find first).
    mutating func readHeader(checksumInBackground: Bool = false) throws(LiveObjectsError) -> SnapshotHeader {
        if verifiesChecksum { try checkChecksum(inBackground: checksumInBackground) }
        do throws(LiveObjectsError) {
            return try readHeaderMembers()
        } catch {
            try settleChecksum()
            throw error
        }
    }

    /// ``readHeader(checksumInBackground:)`` after the checksum.
    private mutating func readHeaderMembers() throws(LiveObjectsError) -> SnapshotHeader {
        var format: String?
        var formatVersion: Int64?
        var schemaVersion: Int64?
        var commit: Int64?
        var schema: Schema?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "format":
                guard format == nil else { throw duplicate(key) }
                format = try reader.readString()
                guard format == Snapshot.formatName else {
                    throw corrupt("not a LiveObjects file (format '\(format ?? "")')")
                }
            case "formatVersion":
                guard formatVersion == nil else { throw duplicate(key) }
                let version = try reader.readInt64()
                guard (1...Snapshot.formatVersion).contains(version) else {
                    throw corrupt(
                        "unsupported format version \(version); this library reads versions 1 to \(Snapshot.formatVersion)"
                    )
                }
                if version >= 2 && verifiesChecksum && checksum == nil {
                    throw corrupt(
                        "the file has no checksum as its last member: it was cut short or changed outside "
                            + "LiveObjects; to open a file edited by hand, set FileStorage.Options.verifiesChecksum to false"
                    )
                }
                formatVersion = version
                self.formatVersion = version
            case "schemaVersion":
                guard schemaVersion == nil else { throw duplicate(key) }
                let version = try reader.readInt64()
                // At the value, not later at `objects`.
                guard version >= 0 else { throw corrupt("the schema version is \(version): it must be 0 or more") }
                schemaVersion = version
            case "commit":
                guard commit == nil else { throw duplicate(key) }
                let number = try reader.readInt64()
                guard number >= 0 else { throw corrupt("the commit is \(number): it must be 0 or more") }
                commit = number
            case "schema":
                guard schema == nil else { throw duplicate(key) }
                schema = try SchemaCoding.read(from: &reader)
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

    /// The error for a member given twice in an object.
    func duplicate(_ key: String, type: String? = nil, property: String? = nil) -> LiveObjectsError {
        corrupt("the member '\(key)' is given twice", type: type, property: property)
    }

    /// Reads the objects (after ``readHeader(checksumInBackground:)``) into an empty store of
    /// the file's schema.
    mutating func readObjects(into store: Store) throws(LiveObjectsError) {
        do throws(LiveObjectsError) {
            try readObjectMembers(into: store)
        } catch {
            // A checksum computed in the background: a damaged file is refused as such.
            try settleChecksum()
            throw error
        }
        try settleChecksum()
        do throws(LiveObjectsError) {
            try applyPendingLinks(store)
        } catch {
            throw locateLinkError(error, schema: store.schema)
        }
        // Every link in a mixed value names an object that exists.
        try store.checkLoadedMixedLinks()
        // Every embedded object has its one parent (it is written inside it).
        store.finishLoading()
    }

    /// Reads the members from `objects` to the end of the file.
    private mutating func readObjectMembers(into store: Store) throws(LiveObjectsError) {
        do throws(LiveObjectsError) {
            try readTables(into: store)
        } catch {
            // Objects read before the error may share a primary key: that error comes first.
            try indexPrimaryKeys(store)
            throw error
        }
        var seen: Set<String> = []
        var sawChecksum = false
        while let key = try reader.nextKey() {
            guard !sawChecksum else { throw corrupt("the checksum must be the file's last member") }
            guard seen.insert(key).inserted else { throw duplicate(key) }
            switch key {
            case "history":
                try readHistory(into: store)
            case "freeSlots":
                try reader.beginObject()
                var types: Set<Int> = []
                while let name = try reader.nextKey() {
                    guard let table = store.tablesByName[name] else {
                        throw corrupt("free slots of an unknown type '\(name)'")
                    }
                    guard types.insert(table.index).inserted else { throw duplicate(name) }
                    try reader.beginArray()
                    while try reader.nextElement() {
                        let key = try ValueCoding.readID(&reader, maxRow: maxRow, table: name)
                        do throws(LiveObjectsError) {
                            try store.loadFreeSlot(table, at: key)
                        } catch {
                            throw positioned(error, at: reader.offset)
                        }
                    }
                }
            case Snapshot.checksumKey where formatVersion >= 2:
                let text = try reader.readString()
                let utf8 = Array(text.utf8)
                guard text.hasPrefix(Snapshot.checksumPrefix), utf8.count == Snapshot.checksumPrefix.utf8.count + 8,
                    utf8.withUnsafeBytes({ CRC32C.parseHex($0.baseAddress! + utf8.count - 8) }) != nil
                else {
                    throw corrupt(
                        "the checksum must be '\(Snapshot.checksumPrefix)' and 8 lowercase hexadecimal digits")
                }
                if let checksum, reader.offset != checksum.valueEnd {
                    throw corrupt("the checksum must be the file's last member")
                }
                sawChecksum = true
            default:
                throw corrupt("unknown member '\(key)' after the objects")
            }
        }
        if formatVersion >= 2 && verifiesChecksum && !sawChecksum {
            throw corrupt("the file has no checksum as its last member")
        }
        try reader.finish()
    }

    private mutating func readTables(into store: Store) throws(LiveObjectsError) {
        try reader.beginObject()
        var seen: [Bool] = Array(repeating: false, count: store.tables.count)
        while let name = try reader.nextKey() {
            guard let table = store.tablesByName[name] else { throw corrupt("objects of an unknown type '\(name)'") }
            guard !table.schema.isEmbedded else {
                throw corrupt("embedded objects must be written inside their parent", type: name)
            }
            guard !seen[table.index] else { throw corrupt("the objects of a type are given twice", type: name) }
            seen[table.index] = true
            try readTable(table, plan: plan(table, store), store: store)
            try indexPrimaryKeys(store)
        }
    }

    /// Sets the links read, once every object is placed. When positions are tracked (reading
    /// again for an error), one link at a time, so that the one that fails is known.
    private mutating func applyPendingLinks(_ store: Store) throws(LiveObjectsError) {
        for (b, bucket) in linkBuckets.enumerated() {
            let table = store.tables[Int(bucket.table)]
            if tracksLinkOffsets {
                for (i, link) in bucket.links.enumerated() {
                    do throws(LiveObjectsError) {
                        try store.loadLink(table, link.row, Int(bucket.property), to: link.target)
                    } catch {
                        throw positioned(error, at: linkOffsets[b][i])
                    }
                }
            } else {
                try store.loadLinks(table, Int(bucket.property), bucket.links)
            }
        }
        for list in pendingLists {
            let table = store.tables[Int(list.table)]
            do throws(LiveObjectsError) {
                try store.loadList(table, list.row, Int(list.property), to: list.targets)
            } catch {
                let target = store.tablesByName[table.schema.properties[Int(list.property)].objectType ?? ""]
                let entry = list.targets.firstIndex { key in target?.row(for: key) == nil }
                throw positioned(error, at: entry.map { endOfElement($0, ofArrayAt: list.offset) } ?? list.offset)
            }
        }
        for map in pendingMaps {
            let table = store.tables[Int(map.table)]
            do throws(LiveObjectsError) {
                try store.loadMap(table, map.row, Int(map.property), to: map.pairs)
            } catch {
                let target = store.tablesByName[table.schema.properties[Int(map.property)].objectType ?? ""]
                var entry: Int?
                if case .list(let pairs) = map.pairs {
                    entry = pairs.firstIndex { pair in
                        guard case .list(let kv) = pair, let key = kv.last?.objectKey else { return false }
                        return target?.row(for: key) == nil
                    }
                }
                throw positioned(error, at: entry.map { endOfElement($0, ofArrayAt: map.offset) } ?? map.offset)
            }
        }
        linkBuckets = []
        pendingLists = []
        pendingMaps = []
    }

    /// Where element `index` of the array that starts at `start` ends (`start` if the bytes are
    /// not such an array): for the error of a list entry, whose position is not kept while
    /// loading.
    func endOfElement(_ index: Int, ofArrayAt start: Int) -> Int {
        var array = JSONReader(UnsafeRawBufferPointer(rebasing: bytes[start...]))
        do throws(LiveObjectsError) {
            try array.beginArray()
            for _ in 0..<index {
                guard try array.nextElement() else { return start }
                try array.skipValue()
            }
            guard try array.nextElement() else { return start }
            try array.skipValue()
            return start + array.offset
        } catch {
            return start
        }
    }

    /// The error of a to-one link that failed, with where the link is: the file is read again
    /// into a scratch store, noting where each link is (links are set in bulk, after every
    /// object is placed, and where each is is not kept otherwise).
    private func locateLinkError(_ error: LiveObjectsError, schema: Schema) -> LiveObjectsError {
        guard !tracksLinkOffsets else { return error }
        var again = SnapshotDecoder(bytes, fileName: reader.options.fileName, verifiesChecksum: false)
        again.tracksLinkOffsets = true
        do throws(LiveObjectsError) {
            _ = try again.readHeader()
            try again.readObjects(into: try Store(schema: schema))
        } catch {
            return error
        }
        var error = error
        if error.file == nil { error.file = reader.options.fileName }
        return error
    }

    /// The plan of a table, made on first use.
    mutating func plan(_ table: Table, _ store: Store) -> RecordPlan {
        if plans.count <= table.index { plans += Array(repeating: nil, count: table.index + 1 - plans.count) }
        if let plan = plans[table.index] { return plan }
        let plan = RecordPlan(table, store: store, firstBucket: linkBuckets.count)
        for p in plan.kinds.indices where plan.bucketOffset[p] >= 0 {
            linkBuckets.append((Int32(table.index), Int32(p), []))
            linkOffsets.append([])
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
            throw reader.loadError(
                "embedded objects nest more than \(Snapshot.maxEmbeddedDepth) levels deep", code: .limitExceeded,
                objectType: table.name)
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
        let firstMap = pendingMaps.count
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
            guard !seen[p] else {
                // Leave the buffers clean for the next load of the plan.
                for q in seen.indices { seen[q] = false }
                if reuse { plan.give(values, seen) }
                throw corrupt(
                    "the property is given twice", type: table.name, property: table.schema.properties[p].name)
            }
            seen[p] = true
            switch plan.kinds[p] {
            case .int, .string, .plain, .plainList:
                values[p] = try readPlainValue(table, plan, p)
            case .link:
                values[p] = .null
                if !(try reader.readNull()) {
                    let key = try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name)
                    linkStack.append((Int32(plan.firstBucket + plan.bucketOffset[p]), key, reader.offset))
                }
            case .embeddedLink:
                values[p] = .null
                if !(try reader.readNull()) {
                    // The child has placed itself and taken its own links off the stack.
                    let key = try readRecord(store.tables[plan.targets[p]], store: store, depth: depth + 1)
                    linkStack.append((Int32(plan.firstBucket + plan.bucketOffset[p]), key, reader.offset))
                }
            case .linkList, .embeddedList:
                values[p] = .list([])
                try readLinkList(table, plan, p, store: store, depth: depth)
            case .linkMap, .embeddedMap:
                values[p] = try readLinkMap(table, plan, p, store: store, depth: depth)
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
        let row: Int32
        do throws(LiveObjectsError) {
            row = try store.loadRow(table, at: id, values: values)
        } catch {
            throw positioned(error, at: reader.offset)
        }
        // This record's own links are on top of the stack (its children took theirs off).
        for i in firstStacked..<linkStack.count {
            let bucket = Int(linkStack[i].bucket)
            linkBuckets[bucket].links.append((row, linkStack[i].target))
            if tracksLinkOffsets { linkOffsets[bucket].append(linkStack[i].offset) }
        }
        linkStack.removeSubrange(firstStacked...)
        // Entries queued by embedded children (read in between) already have their row.
        for i in firstList..<pendingLists.count
        where pendingLists[i].row < 0 && pendingLists[i].table == Int32(table.index) {
            pendingLists[i].row = row
        }
        for i in firstMap..<pendingMaps.count
        where pendingMaps[i].row < 0 && pendingMaps[i].table == Int32(table.index) {
            pendingMaps[i].row = row
        }
        if reuse { plan.give(values, seen) }
        return id
    }

    /// Reads a list of links or of embedded objects (placing each), and queues it for the row of
    /// the object being read. Inlined: the loader's code stays as it was before this was split
    /// out of ``readMembers(_:store:depth:firstKey:id:)``.
    @inline(__always)
    private mutating func readLinkList(_ table: Table, _ plan: RecordPlan, _ p: Int, store: Store, depth: Int)
        throws(LiveObjectsError)
    {
        let embedded = plan.kinds[p] == .embeddedList
        var targets: [ObjectKey] = []
        _ = try reader.peekByte()
        let start = reader.offset
        try reader.beginArray()
        while try reader.nextElement() {
            targets.append(
                embedded
                    ? try readRecord(store.tables[plan.targets[p]], store: store, depth: depth + 1)
                    : try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name))
        }
        pendingLists.append((Int32(table.index), -1, Int32(p), targets, start))
    }

    /// Reads a map of objects (of embedded objects, placing each) and queues it for the row of
    /// the object being read; returns the row's value until then, an empty map.
    private mutating func readLinkMap(_ table: Table, _ plan: RecordPlan, _ p: Int, store: Store, depth: Int)
        throws(LiveObjectsError) -> PropertyValue
    {
        if plan.kinds[p] == .embeddedMap { return try readEmbeddedMap(table, plan, p, store: store, depth: depth) }
        _ = try reader.peekByte()
        let start = reader.offset
        let pairs = try ValueCoding.readMap(table.schema.properties[p], &reader, table: table.name, maxRow: maxRow)
        pendingMaps.append((Int32(table.index), -1, Int32(p), pairs, start))
        return .list([])
    }

    /// Reads a map of embedded objects, `[key, object or null]` pairs with each object inline
    /// (placing each), and queues it for the row of the object being read; returns the row's
    /// value until then, an empty map.
    private mutating func readEmbeddedMap(
        _ table: Table, _ plan: RecordPlan, _ p: Int, store: Store, depth: Int
    ) throws(LiveObjectsError) -> PropertyValue {
        let property = table.schema.properties[p]
        _ = try reader.peekByte()
        let start = reader.offset
        var pairs: [PropertyValue] = []
        var last: String?
        try reader.beginArray()
        while try reader.nextElement() {
            let key = try ValueCoding.readMapKey(property, &reader, after: last, table: table.name)
            last = key
            var value = PropertyValue.null
            if !(try reader.readNull()) {
                value = .object(try readRecord(store.tables[plan.targets[p]], store: store, depth: depth + 1))
            }
            try ValueCoding.endMapEntry(property, &reader, table: table.name)
            pairs.append(.list([.string(key), value]))
        }
        pendingMaps.append((Int32(table.index), -1, Int32(p), .list(pairs), start))
        return .list([])
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
            let v = try reader.readString()
            if v.utf8.count > Realm.Limits.maximumStringLength {
                throw ValueCoding.stringTooLong(v, reader, table: table.name, property: table.schema.properties[p].name)
            }
            return .string(v)
        case .plainList:
            if table.schema.properties[p].isMap {
                return try ValueCoding.readMap(table.schema.properties[p], &reader, table: table.name)
            }
            var items: [PropertyValue] = []
            try reader.beginArray()
            while try reader.nextElement() {
                items.append(
                    try ValueCoding.readPlain(table.schema.properties[p], element: true, &reader, table: table.name))
            }
            if table.schema.properties[p].isSet && Set(items).count != items.count {
                throw corrupt("a set holds a member twice", type: table.name, property: table.schema.properties[p].name)
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

extension JSONReader {
    /// "(before byte N, line L, column C)": where a value that ends before `offset` (by
    /// default the reader's offset) is, for error messages.
    func before(_ offset: Int? = nil) -> String {
        "(before \(location(offset ?? self.offset)))"
    }

    /// An error about the value that ends before `offset` (by default the reader's offset):
    /// `reason` and "(before byte N, line L, column C)", with the file, and the byte in
    /// ``LiveObjectsError/inputLocation`` as the JSON reader's own errors have it.
    func loadError(
        _ reason: String, code: LiveObjectsError.Code = .corruptFile, before offset: Int? = nil,
        objectType: String? = nil, property: String? = nil, primaryKey: PropertyValue? = nil
    ) -> LiveObjectsError {
        let offset = offset ?? self.offset
        var error = LiveObjectsError(
            code, "\(reason) \(before(offset))", objectType: objectType, property: property, primaryKey: primaryKey,
            file: options.fileName)
        error.inputLocation = InputErrorLocation(offset: offset + options.startOffset, reason: reason)
        return error
    }

    /// `error` (from the store, which knows no file) about the value that ends before `offset`:
    /// its message with "(before byte N, line L, column C)", the file, and the byte.
    func locating(_ error: LiveObjectsError, before offset: Int) -> LiveObjectsError {
        var located = error
        located.message += " \(before(offset))"
        if located.file == nil { located.file = options.fileName }
        located.inputLocation = InputErrorLocation(offset: offset + options.startOffset, reason: error.message)
        return located
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
        /// A map of objects: `[key, id or null]` pairs, set once every object is placed.
        case linkMap
        /// A map of embedded objects: `[key, object or null]` pairs, each object inline.
        case embeddedMap
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
    private var seenFlags: [Bool]
    /// A bit per property, for the records appended straight to the columns: set for each
    /// property a record gives, cleared after each record.
    let seen: UnsafeMutablePointer<UInt64>
    let seenWordCount: Int

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
                if property.isMap { kind = embedded ? .embeddedMap : .linkMap }
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
        seenFlags = Array(repeating: false, count: properties.count)
        seenWordCount = max(1, (properties.count + 63) / 64)
        seen = .allocate(capacity: seenWordCount)
        seen.initialize(repeating: 0, count: seenWordCount)
        columnTargets = ColumnTargets(table, store: store, kinds: kinds)
    }

    deinit { seen.deallocate() }

    func takeValues() -> [PropertyValue] {
        var taken: [PropertyValue] = []
        swap(&taken, &values)
        return taken.isEmpty ? defaults : taken
    }

    func takeSeen() -> [Bool] {
        var taken: [Bool] = []
        swap(&taken, &seenFlags)
        return taken.isEmpty ? Array(repeating: false, count: kinds.count) : taken
    }

    func give(_ values: [PropertyValue], _ seen: [Bool]) {
        self.values = values
        self.seenFlags = seen
    }
}
