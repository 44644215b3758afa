import LiveObjects
import LiveObjectsJSON

/// How the snapshot loader appends each property's value of a table's records straight to the
/// property's column, with no row of `PropertyValue`s in between: one target per property, in a
/// buffer of plain values (the columns held unretained, kept alive by `columns`), so that
/// reading a target for every value costs no reference counting.
///
/// The values of integer and string columns are gathered first, up to ``pendingCapacity`` per
/// column, and appended a chunk at a time (``flush()``): one check of the column's storage per
/// chunk rather than per value. The objects' slots are gathered too (their generations) and
/// added a run at a time, after their values. The nil links a link column gets for each record (its links are
/// set once every object is placed) are counted and appended at once the same way. So such a column lags behind the table's slots until the next
/// flush, which must come before anything reads or changes the column another way (the loader
/// flushes before indexing primary keys, before placing a record by row or adding free slots,
/// before a property given twice, before a default appended, and at the end of the table).
final class ColumnTargets {
    struct Target {
        enum Kind: UInt8 {
            /// Columns of these native types, appended to directly.
            case int, optionalInt, double, optionalDouble, string, optionalString, bool, optionalBool
            /// Any other plain value or list of values, appended as a `PropertyValue`.
            case plain
            /// A to-one link or a list of links to top-level objects: set once every object is
            /// placed.
            case link, linkList
            /// `LinkingObjects`: no column, nothing stored.
            case computed
        }

        var kind: Kind
        var column: Unmanaged<Column>?
        /// For `.int` and `.string`: the values read and not appended yet (``pendingCapacity``
        /// of room, `pendingCount` of them initialized); nil for the other kinds.
        var pending: UnsafeMutableRawPointer? = nil
        /// For `.int` and `.string`, the number of values in `pending`; for `.link`, the
        /// number of nil links not appended yet.
        var pendingCount = 0
    }

    /// How many values of a column are gathered before they are appended.
    static let pendingCapacity = 1024

    let targets: UnsafeMutableBufferPointer<Target>
    /// Whether the table has a primary key, indexed in batches after its objects are appended.
    let hasPrimaryKey: Bool
    private let columns: [Column?]
    private let table: Table
    private let store: Store
    /// The generations of the objects whose values are appended (or gathered) and whose slots
    /// are not added yet (``pendingCapacity`` of room, ``pendingSlotCount`` of them set).
    private let pendingGenerations: UnsafeMutablePointer<UInt32>
    /// The number of objects whose slots are not added yet: the table has
    /// `table.rowCount + pendingSlotCount` rows for the loader.
    private(set) var pendingSlotCount = 0

    /// The targets of a table's properties; nil when its records cannot be appended this way
    /// (an embedded table, whose objects are placed inside their parent's record, or a table
    /// with embedded objects inside).
    init?(_ table: Table, store: Store, kinds: [RecordPlan.Kind]) {
        guard !table.schema.isEmbedded else { return nil }
        var targets: [Target] = []
        for (p, property) in table.schema.properties.enumerated() {
            let column = table.columns[p]
            let kind: Target.Kind
            switch kinds[p] {
            // A map of objects: read through a row of values (``SnapshotDecoder/pendingMaps``).
            case .embeddedLink, .embeddedList, .linkMap, .embeddedMap: return nil
            case .linkingObjects: kind = .computed
            case .link: kind = .link
            case .linkList: kind = .linkList
            case .plainList: kind = .plain
            case .int, .string, .plain:
                switch (property.type, column?.storageKind) {
                case (.int, .int), (.int64, .int): kind = .int
                case (.int, .optionalInt), (.int64, .optionalInt): kind = .optionalInt
                case (.double, .double): kind = .double
                case (.double, .optionalDouble): kind = .optionalDouble
                case (.string, .string): kind = .string
                case (.string, .optionalString): kind = .optionalString
                case (.bool, .bool): kind = .bool
                case (.bool, .optionalBool): kind = .optionalBool
                default: kind = .plain
                }
            }
            guard kind == .computed || column != nil else { return nil }
            var target = Target(kind: kind, column: column.map { Unmanaged.passUnretained($0) })
            switch kind {
            case .int:
                target.pending = UnsafeMutableRawPointer(
                    UnsafeMutablePointer<Int64>.allocate(capacity: Self.pendingCapacity))
            case .string:
                target.pending = UnsafeMutableRawPointer(
                    UnsafeMutablePointer<String>.allocate(capacity: Self.pendingCapacity))
            default: break
            }
            targets.append(target)
        }
        self.targets = .allocate(capacity: targets.count)
        _ = self.targets.initialize(from: targets)
        hasPrimaryKey = table.primaryKeyProperty != nil
        columns = table.columns
        self.table = table
        self.store = store
        pendingGenerations = .allocate(capacity: Self.pendingCapacity)
    }

    deinit {
        for p in targets.indices {
            guard let pending = targets[p].pending else { continue }
            if targets[p].kind == .string {
                pending.assumingMemoryBound(to: String.self).deinitialize(count: targets[p].pendingCount)
            }
            pending.deallocate()
        }
        targets.deallocate()
        pendingGenerations.deallocate()
    }

    /// Gathers a value of the `.int` column of property `p`, appending the values gathered when
    /// there is no room for more.
    @inline(__always)
    func append(_ value: Int64, to p: Int) {
        let n = targets[p].pendingCount
        targets[p].pending.unsafelyUnwrapped.assumingMemoryBound(to: Int64.self)[n] = value
        targets[p].pendingCount = n + 1
        if n + 1 == Self.pendingCapacity { flush(p) }
    }

    /// Gathers a value of the `.string` column of property `p`, appending the values gathered
    /// when there is no room for more.
    @inline(__always)
    func append(_ value: String, to p: Int) {
        let n = targets[p].pendingCount
        (targets[p].pending.unsafelyUnwrapped.assumingMemoryBound(to: String.self) + n).initialize(to: value)
        targets[p].pendingCount = n + 1
        if n + 1 == Self.pendingCapacity { flush(p) }
    }

    /// Gathers the slot of an object whose values are all appended (or gathered), adding the
    /// slots gathered when there is no room for more.
    @inline(__always)
    func appendSlot(generation: UInt32) {
        pendingGenerations[pendingSlotCount] = generation
        pendingSlotCount += 1
        if pendingSlotCount == Self.pendingCapacity { flushSlots() }
    }

    /// Adds the slots gathered to the table.
    private func flushSlots() {
        guard pendingSlotCount > 0 else { return }
        store.appendLoadedObjects(
            table, generations: UnsafeBufferPointer(start: pendingGenerations, count: pendingSlotCount))
        pendingSlotCount = 0
    }

    /// Counts a nil link for the `.link` column of property `p`.
    @inline(__always)
    func appendNilLink(to p: Int) {
        targets[p].pendingCount += 1
    }

    /// Appends the values gathered for property `p` to its column.
    func flush(_ p: Int) {
        let n = targets[p].pendingCount
        guard n > 0, let column = targets[p].column else { return }
        targets[p].pendingCount = 0
        let pending = targets[p].pending
        switch targets[p].kind {
        case .link:
            column._withUnsafeGuaranteedRef { $0.appendLoadedNilLinks(count: n) }
        case .int:
            let values = UnsafeBufferPointer(start: pending!.assumingMemoryBound(to: Int64.self), count: n)
            column._withUnsafeGuaranteedRef { $0.appendLoaded(contentsOf: values) }
        case .string:
            let strings = pending!.assumingMemoryBound(to: String.self)
            column._withUnsafeGuaranteedRef {
                $0.appendLoaded(contentsOf: UnsafeBufferPointer(start: strings, count: n))
            }
            strings.deinitialize(count: n)
        default: break
        }
    }

    /// Appends the values gathered for every property to their columns, and the slots gathered
    /// to the table.
    func flush() {
        for p in targets.indices where targets[p].pendingCount > 0 { flush(p) }
        flushSlots()
    }
}

/// Objects appended to their columns whose primary keys are not in the index yet: they are
/// added in batches (``Store/loadPrimaryKeys(_:rows:)``), much faster than one at a time.
struct UnindexedObjects {
    /// The number of objects indexed at once.
    static let batchSize = 4096

    var table: Table?
    /// Where the table's array of objects starts in the file.
    var start = 0
    var rows: [Int32] = []
    /// Where each object's record ends in the file, for the error about a duplicate key.
    var offsets: [Int] = []
}

extension SnapshotDecoder {
    /// Reads the array of a table's objects and places them.
    ///
    /// A record whose `$id` comes first and names a slot past those placed so far (the way files
    /// are written: in slot order) is appended straight to the columns; any other is placed
    /// through a row of values.
    mutating func readTable(_ table: Table, plan: RecordPlan, store: Store) throws(LiveObjectsError) {
        try reader.beginArray()
        guard let targets = plan.columnTargets else {
            while try reader.nextElement() {
                try reader.beginObject()
                _ = try readMembers(table, store: store, depth: 0, firstKey: nil, id: nil)
            }
            return
        }
        let keys = plan.keys
        let start = reader.offset
        gathering = targets
        while try reader.nextElement() {
            try reader.beginObject()
            guard let first = try reader.nextKey(in: keys) else {
                throw corrupt("an object without $id", type: table.name)
            }
            if first == 0 {
                let id = try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name)
                if Int(id.row) >= table.rowCount + targets.pendingSlotCount {
                    try appendRecord(table, plan, keys, targets, id: id, start: start, store: store)
                    continue
                }
                // Placing by row checks the primary key at once: the earlier ones must be there
                // (indexing them appends the values gathered first).
                try indexPrimaryKeys(store)
                _ = try readMembers(table, store: store, depth: 0, firstKey: nil, id: id)
            } else {
                try indexPrimaryKeys(store)
                _ = try readMembers(table, store: store, depth: 0, firstKey: first, id: nil)
            }
        }
        flushGathered()
    }

    /// Appends the values gathered for the table being read to their columns (see
    /// ``ColumnTargets``).
    mutating func flushGathered() {
        gathering?.flush()
    }

    /// Reads the rest of a record (after its `$id`) whose slot is at or past the end of its
    /// table, appending each value to its column; then adds the object's slot.
    private mutating func appendRecord(
        _ table: Table, _ plan: RecordPlan, _ keys: JSONKeySet, _ targets: ColumnTargets, id: ObjectKey,
        start: Int, store: Store
    ) throws(LiveObjectsError) {
        if Int(id.row) > table.rowCount + targets.pendingSlotCount {
            // Free slots are appended to every column.
            targets.flush()
            store.loadFreeSlots(table, upTo: Int(id.row))
        }
        let row = Int32(id.row)
        let count = targets.targets.count
        // Properties before `next` have their value in the columns; records list them in schema
        // order, but any order is read. A property given twice is an error: `seen` has a bit
        // for each property given (cleared after the record).
        let seen = plan.seen
        var next = 0
        while let k = try reader.nextKey(in: keys) {
            guard k > 0 else {
                throw corrupt(k == 0 ? "the $id is given twice" : "unknown property", type: table.name)
            }
            let p = k - 1
            let bit: UInt64 = 1 << UInt64(p & 63)
            guard seen[p >> 6] & bit == 0 else {
                throw corrupt(
                    "the property is given twice", type: table.name, property: table.schema.properties[p].name)
            }
            seen[p >> 6] |= bit
            if p < next {
                targets.flush(p)
                try setValue(table, plan, targets.targets[p], p, row: row)
                continue
            }
            while next < p {
                appendDefault(plan, targets, next)
                next += 1
            }
            try appendValue(table, plan, targets, p, row: row)
            next = p + 1
        }
        while next < count {
            appendDefault(plan, targets, next)
            next += 1
        }
        for w in 0..<plan.seenWordCount { seen[w] = 0 }
        targets.appendSlot(generation: id.generation)
        if targets.hasPrimaryKey {
            if unindexed.table !== table || unindexed.rows.count >= UnindexedObjects.batchSize {
                try indexPrimaryKeys(store)
                unindexed.table = table
                unindexed.start = start
            }
            unindexed.rows.append(row)
            unindexed.offsets.append(reader.offset)
        }
    }

    /// Adds the primary keys of the objects appended so far to the index.
    ///
    /// - Throws: `corruptFile` for the first object whose primary key an earlier one has.
    mutating func indexPrimaryKeys(_ store: Store) throws(LiveObjectsError) {
        flushGathered()
        guard let table = unindexed.table, !unindexed.rows.isEmpty else { return }
        if unindexed.rows.count == UnindexedObjects.batchSize && table.primaryKeyIndex?.count == 0 {
            // The first batch of many: size the index once for as many objects as the rest of
            // the file would hold if it were all records like these (it holds at most that),
            // rather than doubling it again and again.
            let length = max(1, unindexed.offsets[unindexed.offsets.count - 1] - unindexed.start)
            let count = unindexed.rows.count
            store.reservePrimaryKeys(table, count + count * reader.remainingCount / length + 1)
        }
        let duplicate = store.loadPrimaryKeys(table, rows: unindexed.rows)
        let (rows, offsets) = (unindexed.rows, unindexed.offsets)
        unindexed.rows.removeAll(keepingCapacity: true)
        unindexed.offsets.removeAll(keepingCapacity: true)
        if let i = duplicate {
            let key = table.primaryKey(of: rows[i]) ?? .null
            throw reader.loadError(
                "two objects have the primary key \(key)", before: offsets[i], objectType: table.name, primaryKey: key)
        }
    }

    /// Reads a value and appends it to its column.
    @inline(__always)
    private mutating func appendValue(
        _ table: Table, _ plan: RecordPlan, _ targets: ColumnTargets, _ p: Int, row: Int32
    ) throws(LiveObjectsError) {
        let target = targets.targets[p]
        let column = target.column
        switch target.kind {
        case .int:
            try refuseNull(table, p)
            targets.append(try reader.readInt64(), to: p)
        case .optionalInt:
            let v: Int64? = try reader.readNull() ? nil : try reader.readInt64()
            column!._withUnsafeGuaranteedRef { $0.appendLoaded(v) }
        case .double:
            let first = try reader.peekByte()
            if first == 0x6E, try reader.readNull() { throw nullError(table, p) }
            let v = try readDouble(table, p, first: first)
            column!._withUnsafeGuaranteedRef { $0.appendLoaded(v) }
        case .optionalDouble:
            let first = try reader.peekByte()
            var v: Double?
            let isNull = first == 0x6E ? try reader.readNull() : false
            if !isNull { v = try readDouble(table, p, first: first) }
            column!._withUnsafeGuaranteedRef { $0.appendLoaded(v) }
        case .string:
            try refuseNull(table, p)
            let v = try reader.readString()
            if v.utf8.count > Realm.Limits.maximumStringLength {
                throw ValueCoding.stringTooLong(v, reader, table: table.name, property: table.schema.properties[p].name)
            }
            targets.append(v, to: p)
        case .optionalString:
            let v: String? = try reader.readNull() ? nil : try reader.readString()
            if let v, v.utf8.count > Realm.Limits.maximumStringLength {
                throw ValueCoding.stringTooLong(v, reader, table: table.name, property: table.schema.properties[p].name)
            }
            column!._withUnsafeGuaranteedRef { $0.appendLoaded(v) }
        case .bool:
            try refuseNull(table, p)
            let v = try reader.readBool()
            column!._withUnsafeGuaranteedRef { $0.appendLoaded(v) }
        case .optionalBool:
            let v: Bool? = try reader.readNull() ? nil : try reader.readBool()
            column!._withUnsafeGuaranteedRef { $0.appendLoaded(v) }
        case .plain:
            let v = try readPlainValue(table, plan, p)
            column!._withUnsafeGuaranteedRef { $0.appendLoaded(v) }
        case .link:
            targets.appendNilLink(to: p)
            try readLink(table, plan, p, row: row)
        case .linkList:
            column!._withUnsafeGuaranteedRef { $0.appendLoadedEmptyList() }
            try readLinkList(table, p, row: row)
        case .computed:
            throw corrupt("LinkingObjects are not stored", type: table.name, property: table.schema.properties[p].name)
        }
    }

    /// Reads a value for a property whose column already has this row's value (the property
    /// comes again, or after one that follows it in the schema) and replaces it.
    private mutating func setValue(
        _ table: Table, _ plan: RecordPlan, _ target: ColumnTargets.Target, _ p: Int, row: Int32
    ) throws(LiveObjectsError) {
        switch target.kind {
        case .link: try readLink(table, plan, p, row: row)
        case .linkList: try readLinkList(table, p, row: row)
        case .computed:
            throw corrupt("LinkingObjects are not stored", type: table.name, property: table.schema.properties[p].name)
        default:
            let v = try readPlainValue(table, plan, p)
            target.column!._withUnsafeGuaranteedRef { $0.setLoaded(v, at: Int(row)) }
        }
    }

    /// Appends the value of a property that the record does not give (after the values
    /// gathered for its column).
    @inline(__always)
    private func appendDefault(_ plan: RecordPlan, _ targets: ColumnTargets, _ p: Int) {
        guard let column = targets.targets[p].column else { return }
        targets.flush(p)
        column._withUnsafeGuaranteedRef { $0.appendLoaded(plan.defaults[p]) }
    }

    /// Throws for a null (read to check it is one), for a property that is not optional.
    @inline(__always)
    private mutating func refuseNull(_ table: Table, _ p: Int) throws(LiveObjectsError) {
        if try reader.peekByte() == 0x6E, try reader.readNull() { throw nullError(table, p) }
    }

    /// Reads a to-one link (an id or null), to be set once every object is placed.
    @inline(__always)
    private mutating func readLink(_ table: Table, _ plan: RecordPlan, _ p: Int, row: Int32) throws(LiveObjectsError) {
        if try reader.readNull() { return }
        let key = try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name)
        let bucket = plan.firstBucket + plan.bucketOffset[p]
        linkBuckets[bucket].links.append((row, key))
        if tracksLinkOffsets { linkOffsets[bucket].append(reader.offset) }
    }

    /// Reads a list of links (ids), to be set once every object is placed.
    private mutating func readLinkList(_ table: Table, _ p: Int, row: Int32) throws(LiveObjectsError) {
        var targets: [ObjectKey] = []
        _ = try reader.peekByte()
        let start = reader.offset
        try reader.beginArray()
        while try reader.nextElement() {
            targets.append(try ValueCoding.readID(&reader, maxRow: maxRow, table: table.name))
        }
        pendingLists.append((Int32(table.index), row, Int32(p), targets, start))
    }

    /// Reads a `double` whose first byte is `first`: a number, or one of the strings written for
    /// non-finite values.
    @inline(__always)
    private mutating func readDouble(_ table: Table, _ p: Int, first: UInt8) throws(LiveObjectsError) -> Double {
        guard first == 0x22 else { return try reader.readDouble() }
        let text = try reader.readString()
        guard let v = ValueCoding.nonFiniteDouble(text) else {
            throw corrupt("'\(text)' is not a number", type: table.name, property: table.schema.properties[p].name)
        }
        return v
    }
}
