import Foundation

/// Hooks for storage engines (the `Persistence` module): placing objects at given keys, so that
/// keys stay the same across a save and a load, and a journal that names objects by key can be
/// replayed.
extension Store {
    // MARK: Bulk loading (outside any write)

    /// Places an object at `key` while filling a new store from a file: no undo log, no
    /// changeset, no notifications. `values` holds one value per property, already of the
    /// property's stored type; links must be `.null` or an empty list (set them afterwards with
    /// ``loadLink(_:_:_:to:)`` and ``loadList(_:_:_:to:)``, once every target is placed).
    ///
    /// Slots below `key.row` that hold nothing yet are added as free slots. Call
    /// ``finishLoading()`` when done.
    ///
    /// - Throws: `corruptFile` when the slot already holds an object or another object has the
    ///   same primary key.
    package func loadRow(_ table: Table, at key: ObjectKey, values: [PropertyValue])
        throws(LiveObjectsError) -> Int32
    {
        let row = Int32(truncatingIfNeeded: key.row)
        guard row >= 0 else {
            throw LiveObjectsError(.corruptFile, "object id \(key) is out of range", objectType: table.name)
        }
        let isNewSlot = Int(row) >= table.rowCount
        if !isNewSlot && table.isLive(row) {
            throw LiveObjectsError(.corruptFile, "two objects have the id \(key)", objectType: table.name)
        }
        // One probe of the primary-key index both checks and adds the key.
        if let pk = table.primaryKeyProperty, let index = table.primaryKeyIndex,
            !index.insertIfAbsent(values[pk], row: row, generation: key.generation)
        {
            throw LiveObjectsError(
                .corruptFile, "two objects have the primary key \(values[pk])", objectType: table.name,
                primaryKey: values[pk])
        }
        if isNewSlot {
            loadFreeSlots(table, upTo: Int(row))
            _ = table.appendSlot(values)
        } else {
            for (p, column) in table.columns.enumerated() { column?.set(values[p], at: Int(row)) }
        }
        table.setGeneration(row, key.generation)
        table.markLive(row, true)
        mutationCount &+= 1
        return row
    }

    // MARK: Appending loaded objects column by column

    /// Adds free slots at the end of a table up to `row` (not included), while loading.
    package func loadFreeSlots(_ table: Table, upTo row: Int) {
        guard row > table.rowCount else { return }
        let zeros = table.schema.properties.map(\.zeroValue)
        while table.rowCount < row { _ = table.appendSlot(zeros) }
    }

    /// Ends an object placed at the end of a table while loading, whose values the loader has
    /// appended to each of the table's columns itself (one value per column, of the column's
    /// stored type; links `-1` and lists empty, set afterwards as for ``loadRow(_:at:values:)``).
    /// Adds its slot, live, with the given generation, and returns its row.
    ///
    /// Its primary key is not indexed yet: pass its row to ``loadPrimaryKeys(_:rows:)``.
    package func appendLoadedObject(_ table: Table, generation: UInt32) -> Int32 {
        mutationCount &+= 1
        return table.appendLoadedSlot(generation: generation)
    }

    /// ``appendLoadedObject(_:generation:)`` for a run of objects at the end of a table, with
    /// their generations in row order: faster than one at a time.
    package func appendLoadedObjects(_ table: Table, generations: UnsafeBufferPointer<UInt32>) {
        mutationCount &+= UInt64(generations.count)
        table.appendLoadedSlots(generations: generations)
    }

    /// Makes room in a table's primary-key index for `capacity` keys in all, while loading.
    package func reservePrimaryKeys(_ table: Table, _ capacity: Int) {
        guard let pk = table.primaryKeyProperty else { return }
        table.primaryKeyIndex?.reserve(capacity, for: table.schema.properties[pk].type)
    }

    /// Adds the primary keys of objects placed with ``appendLoadedObject(_:generation:)`` to the
    /// primary-key index, in order. Returns the position in `rows` of the first object whose
    /// primary key an earlier object already has (it and the objects after it are not added),
    /// or nil when every key was added. Many rows at once are much faster than one at a time.
    package func loadPrimaryKeys(_ table: Table, rows: [Int32]) -> Int? {
        guard let pk = table.primaryKeyProperty, let index = table.primaryKeyIndex else { return nil }
        if let column = table.columns[pk] as? ScalarColumn<Int64> {
            let keys = rows.map { column.values[Int($0)] }
            let generations = rows.map { table.generation($0) }
            return keys.withUnsafeBufferPointer { keys in
                rows.withUnsafeBufferPointer { rows in
                    generations.withUnsafeBufferPointer { index.insertAll(keys, rows: rows, generations: $0) }
                }
            }
        }
        let column = table.column(pk)
        for (i, row) in rows.enumerated()
        where !index.insertIfAbsent(column.value(at: Int(row)), row: row, generation: table.generation(row)) {
            return i
        }
        return nil
    }

    /// Sets the generation of a free slot while loading (so that keys of objects deleted before
    /// a save keep failing to resolve after it), adding free slots up to it as needed.
    ///
    /// - Throws: `corruptFile` when the slot holds an object.
    package func loadFreeSlot(_ table: Table, at key: ObjectKey) throws(LiveObjectsError) {
        let row = Int32(truncatingIfNeeded: key.row)
        guard row >= 0 else {
            throw LiveObjectsError(.corruptFile, "slot \(key) is out of range", objectType: table.name)
        }
        if Int(row) >= table.rowCount {
            let zeros = table.schema.properties.map(\.zeroValue)
            while table.rowCount <= Int(row) { _ = table.appendSlot(zeros) }
        }
        guard !table.isLive(row) else {
            throw LiveObjectsError(.corruptFile, "slot \(key) is both free and in use", objectType: table.name)
        }
        table.setGeneration(row, key.generation)
    }

    /// Points a to-one link of a loaded object at a loaded target (or nil), while loading.
    ///
    /// - Throws: `corruptFile` when the target does not exist, or is embedded and already has a
    ///   parent.
    package func loadLink(_ table: Table, _ row: Int32, _ property: Int, to target: ObjectKey?)
        throws(LiveObjectsError)
    {
        let column = table.linkColumn(property)
        column.target.fillIncomingRows()
        guard let target else { return }
        guard column.targets[Int(row)] < 0 else {
            throw LiveObjectsError(
                .corruptFile, "the link is given twice", objectType: table.name, property: column.property.name)
        }
        let t = try loadTarget(table, property, column.target, target)
        column.targets[Int(row)] = t
        table.outgoing[property]!.add(row, to: t)
        column.version &+= 1
    }

    /// Points to-one links of one property of loaded objects at loaded targets, while
    /// loading: ``loadLink(_:_:_:to:)`` for many rows at once.
    ///
    /// - Throws: as ``loadLink(_:_:_:to:)``.
    package func loadLinks(_ table: Table, _ property: Int, _ links: [(row: Int32, target: ObjectKey)])
        throws(LiveObjectsError)
    {
        guard !links.isEmpty else { return }
        let column = table.linkColumn(property)
        let target = column.target
        target.fillIncomingRows()
        if target.schema.isEmbedded {
            for link in links { try loadLink(table, link.row, property, to: link.target) }
            return
        }
        // When every slot of the target holds an object of the first generation (a file
        // written without deletions), a key names an object exactly when its generation is 0
        // and its row in range: no look at the target's slots, which are not in the cache.
        let dense = target.hasOnlyFirstGenerationObjects
        let rowCount = target.rowCount
        var targetRows: [Int32] = []
        targetRows.reserveCapacity(links.count)
        for link in links {
            guard column.targets[Int(link.row)] < 0 else {
                throw LiveObjectsError(
                    .corruptFile, "the link is given twice", objectType: table.name, property: column.property.name)
            }
            let t: Int32
            if dense && link.target.generation == 0 && Int(link.target.row) < rowCount {
                t = Int32(link.target.row)
            } else if let row = target.row(for: link.target) {
                t = row
            } else {
                throw LiveObjectsError(
                    .corruptFile, "links to \(target.name) \(link.target), which does not exist",
                    objectType: table.name, property: column.property.name)
            }
            column.targets[Int(link.row)] = t
            targetRows.append(t)
        }
        table.outgoing[property]!.addAll(sources: links.map(\.row), targets: targetRows)
        column.version &+= 1
    }

    /// Sets a list of links of a loaded object, while loading.
    ///
    /// - Throws: as ``loadLink(_:_:_:to:)``.
    package func loadList(_ table: Table, _ row: Int32, _ property: Int, to targets: [ObjectKey])
        throws(LiveObjectsError)
    {
        let (column, rows) = try loadedLinks(table, row, property, targets, given: "list")
        column.lists[Int(row)] = rows
        column.version &+= 1
    }

    /// Sets a map of objects of a loaded object from its `[key, .object(id) or .null]` pairs
    /// (keys already checked: valid, sorted, distinct), while loading.
    ///
    /// - Throws: `corruptFile` when the map is given twice or a target does not exist.
    package func loadMap(_ table: Table, _ row: Int32, _ property: Int, to pairs: PropertyValue)
        throws(LiveObjectsError)
    {
        let (keys, ids) = Self.mapIDs(pairs)
        let (column, rows) = try loadedLinks(table, row, property, ids, given: "map")
        column.keys[Int(row)] = keys
        column.lists[Int(row)] = rows
        column.version &+= 1
    }

    /// The rows of the targets of a loaded object's list, set or map of objects (-1 for nil),
    /// each checked and given its backlink, and the column to store them in.
    ///
    /// - Throws: `corruptFile` when the object's `given` (list or map) is given twice, a set
    ///   names an object twice, or a target does not exist.
    private func loadedLinks(
        _ table: Table, _ row: Int32, _ property: Int, _ targets: [ObjectKey?], given: String
    ) throws(LiveObjectsError) -> (LinkListColumn, [Int32]) {
        let column = table.linkListColumn(property)
        column.target.fillIncomingRows()
        guard column.lists[Int(row)].isEmpty else {
            throw LiveObjectsError(
                .corruptFile, "the \(given) is given twice", objectType: table.name, property: column.property.name)
        }
        if column.property.isSet && Set(targets).count != targets.count {
            throw LiveObjectsError(
                .corruptFile, "a set names an object twice", objectType: table.name, property: column.property.name)
        }
        var rows: [Int32] = []
        rows.reserveCapacity(targets.count)
        let backlinks = table.outgoing[property]!
        for key in targets {
            guard let key else {
                rows.append(-1)
                continue
            }
            let t = try loadTarget(table, property, column.target, key)
            rows.append(t)
            backlinks.add(row, to: t)
        }
        return (column, rows)
    }

    /// The keys and ids (nil for no object) of a map of objects' `[key, .object(id) or .null]`
    /// pairs.
    static func mapIDs(_ pairs: PropertyValue) -> ([String], [ObjectKey?]) {
        guard case .list(let items) = pairs else { return ([], []) }
        var keys: [String] = []
        var ids: [ObjectKey?] = []
        for item in items {
            guard case .list(let pair) = item, pair.count == 2, case .string(let key) = pair[0] else { continue }
            keys.append(key)
            ids.append(pair[1].objectKey)
        }
        return (keys, ids)
    }

    private func loadTarget(_ table: Table, _ property: Int, _ target: Table, _ key: ObjectKey)
        throws(LiveObjectsError) -> Int32
    {
        guard let t = target.row(for: key) else {
            throw LiveObjectsError(
                .corruptFile, "links to \(target.name) \(key), which does not exist",
                objectType: table.name, property: table.schema.properties[property].name)
        }
        if target.schema.isEmbedded && target.linkCount(to: t) > 0 {
            throw LiveObjectsError(
                .corruptFile, "the embedded \(target.name) \(key) has two parents",
                objectType: table.name, property: table.schema.properties[property].name)
        }
        return t
    }

    /// Ends loading: every slot that holds no object becomes free for reuse, and the secondary
    /// indexes are built, in one pass over each indexed column.
    package func finishLoading() {
        for table in tables {
            table.fillIncomingRows()
            table.freeRows = []
            for r in stride(from: table.rowCount - 1, through: 0, by: -1) where !table.isLive(Int32(r)) {
                table.freeRows.append(Int32(r))
            }
            table.buildValueIndexes(rows: table.valueIndexes.isEmpty ? [] : table.liveRows)
        }
        mutationCount &+= 1
    }

    // MARK: Inside a write

    /// Inserts an object at `key` inside the open write (logged: rolled back with it, reported in
    /// its changeset): for replaying a journal. Links in `values` must be `.null` or empty
    /// lists; set them afterwards.
    ///
    /// - Throws: `notInWriteTransaction`; `corruptFile` when the slot holds an object or another
    ///   object has the same primary key.
    @discardableResult
    package func insertRow(_ table: Table, at key: ObjectKey, values: [PropertyValue])
        throws(LiveObjectsError) -> Int32
    {
        try requireWrite(table)
        let row = try loadableRow(table, key, values)
        if Int(row) < table.rowCount {
            guard !table.isLive(row), let i = table.freeRows.lastIndex(of: row) else {
                throw LiveObjectsError(.corruptFile, "two objects have the id \(key)", objectType: table.name)
            }
            table.freeRows.remove(at: i)
            for (p, column) in table.columns.enumerated() { column?.set(values[p], at: Int(row)) }
        } else {
            // Free slots before it stay free (not logged: a rollback leaves them free, which is a
            // valid state).
            let zeros = table.schema.properties.map(\.zeroValue)
            while table.rowCount < Int(row) {
                table.pushFreeRow(table.appendSlot(zeros))
            }
            _ = table.appendSlot(values)
        }
        mutationCount &+= 1
        table.setGeneration(row, key.generation)
        table.markLive(row, true)
        table.indexInsert(row, values: values)
        undoLog.append(.insert(table: Int32(table.index), row: row))
        if table.schema.isEmbedded { replayedEmbedded.append((table, row)) }
        return row
    }

    /// Sets a to-one link inside the open write (logged), for replaying a journal.
    ///
    /// - Throws: `corruptFile` when the target does not exist.
    package func replaySetLink(_ table: Table, _ row: Int32, _ property: Int, to target: ObjectKey?)
        throws(LiveObjectsError)
    {
        let column = table.linkColumn(property)
        var t: Int32?
        if let target {
            guard let r = column.target.row(for: target) else {
                throw LiveObjectsError(
                    .corruptFile, "links to \(column.target.name) \(target), which does not exist",
                    objectType: table.name, property: column.property.name)
            }
            t = r
        }
        if column.target.schema.isEmbedded {
            let old = column.targets[Int(row)]
            if old >= 0 { replayedEmbedded.append((column.target, old)) }
            if let t { replayedEmbedded.append((column.target, t)) }
        }
        let new: PropertyValue = t.map { .object(column.target.key($0)) } ?? .null
        setValue(new, table, row, property)
    }

    /// Replaces a list of links inside the open write (logged), for replaying a journal.
    ///
    /// - Throws: `corruptFile` when a target does not exist.
    package func replaySetList(_ table: Table, _ row: Int32, _ property: Int, to targets: [ObjectKey])
        throws(LiveObjectsError)
    {
        let column = table.linkListColumn(property)
        var rows: [Int32] = []
        for key in targets {
            guard let r = column.target.row(for: key) else {
                throw LiveObjectsError(
                    .corruptFile, "links to \(column.target.name) \(key), which does not exist",
                    objectType: table.name, property: column.property.name)
            }
            rows.append(r)
        }
        let old = column.lists[Int(row)]
        if old == rows { return }
        if column.target.schema.isEmbedded {
            for r in old + rows { replayedEmbedded.append((column.target, r)) }
        }
        for i in stride(from: old.count - 1, through: 0, by: -1) { listRemove(table, row, property, at: i) }
        for (i, r) in rows.enumerated() { listInsert(.object(column.target.key(r)), table, row, property, at: i) }
    }

    /// Replaces a map of objects inside the open write (logged), for replaying a journal, from
    /// its `[key, .object(id) or .null]` pairs (keys already checked).
    ///
    /// - Throws: `corruptFile` when a target does not exist.
    package func replaySetMap(_ table: Table, _ row: Int32, _ property: Int, to pairs: PropertyValue)
        throws(LiveObjectsError)
    {
        let column = table.linkListColumn(property)
        let (keys, ids) = Self.mapIDs(pairs)
        var entries: [PropertyValue] = []
        for (key, id) in zip(keys, ids) {
            var value = PropertyValue.null
            if let id {
                guard let r = column.target.row(for: id) else {
                    throw LiveObjectsError(
                        .corruptFile, "links to \(column.target.name) \(id), which does not exist",
                        objectType: table.name, property: column.property.name)
                }
                value = .object(column.target.key(r))
            }
            entries.append(.list([.string(key), value]))
        }
        if column.containerValue(at: Int(row)) == .list(entries) { return }
        if column.target.schema.isEmbedded {
            for r in column.lists[Int(row)] + Self.linkRows(.list(entries)) where r >= 0 {
                replayedEmbedded.append((column.target, r))
            }
        }
        for i in stride(from: column.lists[Int(row)].count - 1, through: 0, by: -1) {
            listRemove(table, row, property, at: i)
        }
        for (i, entry) in entries.enumerated() { listInsert(entry, table, row, property, at: i) }
    }

    /// Replaces a plain value inside the open write (logged), for replaying a journal. The value
    /// is checked against the property.
    ///
    /// - Throws: `typeMismatch` for a value that does not fit.
    /// `value` checked for `property` as ``check(_:for:in:)`` does, for a value read from a file:
    /// a value the property cannot hold (a link to a missing object in a mixed value, a string
    /// for an integer) means the file is damaged, so the error is `corruptFile` with the check's
    /// message.
    package func checkLoaded(_ value: PropertyValue, for property: Property, in table: Table)
        throws(LiveObjectsError) -> PropertyValue
    {
        do throws(LiveObjectsError) {
            return try check(value, for: property, in: table)
        } catch {
            guard error.code != .corruptFile else { throw error }
            var damaged = error
            damaged.code = .corruptFile
            throw damaged
        }
    }

    package func replaySetValue(_ value: PropertyValue, _ table: Table, _ row: Int32, _ property: Int)
        throws(LiveObjectsError)
    {
        let checked = try checkLoaded(value, for: table.schema.properties[property], in: table)
        if property == table.primaryKeyProperty, checked != table.column(property).value(at: Int(row)) {
            throw LiveObjectsError(
                .corruptFile, "the primary key of an existing object cannot change",
                objectType: table.name, property: table.schema.properties[property].name)
        }
        setValue(checked, table, row, property)
    }

    /// Deletes objects by row without delete rules, inside the open write (logged): for
    /// replaying a journal, whose deletions already list every object a rule deleted. Links into
    /// and out of the rows are removed first.
    package func replayDelete(_ rows: [(Table, Int32)]) throws(LiveObjectsError) {
        for (table, row) in rows {
            for (p, _) in table.outgoing {
                switch table.columns[p] {
                case let link as LinkColumn where link.target.schema.isEmbedded:
                    let t = link.targets[Int(row)]
                    if t >= 0 { replayedEmbedded.append((link.target, t)) }
                case let list as LinkListColumn where list.target.schema.isEmbedded:
                    for t in list.lists[Int(row)] where t >= 0 { replayedEmbedded.append((list.target, t)) }
                default:
                    break
                }
            }
        }
        try delete(rows)
    }

    /// Checks, before a replayed journal entry commits, that every embedded object it inserted,
    /// linked, unlinked or left without its parent has exactly one parent, or was deleted too.
    /// The writer always deletes an embedded object together with its parent link, so anything
    /// else is a damaged journal. Returns the first embedded object that fails, with the number
    /// of its parents, or nil; the objects noted are forgotten when none fails (call
    /// ``discardReplayedEmbedded()`` when the entry fails).
    package func replayedEmbeddedWithoutOneParent() -> (table: Table, key: ObjectKey, parents: Int)? {
        for (table, row) in replayedEmbedded where Int(row) < table.rowCount && table.isLive(row) {
            let parents = table.linkCount(to: row)
            if parents != 1 { return (table, table.key(row), parents) }
        }
        replayedEmbedded.removeAll()
        return nil
    }

    /// Forgets the embedded objects noted by a replayed journal entry that failed.
    package func discardReplayedEmbedded() {
        replayedEmbedded.removeAll()
    }
}

extension Column {
    /// Appends a value, of the property's stored type, to a column of a table being loaded
    /// (see ``Store/appendLoadedObject(_:generation:)``).
    package func appendLoaded(_ value: PropertyValue) { append(value) }

    /// Replaces the value of a row of a table being loaded.
    package func setLoaded(_ value: PropertyValue, at row: Int) { set(value, at: row) }
}

// The codec surface of columns: what a file format reads and writes a column through, typed,
// without knowing the column classes or how their values are stored.

/// The storage of a column, for a codec: the scalar kinds a snapshot reads and writes natively,
/// links, lists of links, and everything else (read and written as ``PropertyValue``).
package enum ColumnStorageKind: Sendable {
    case int, optionalInt, double, optionalDouble, string, optionalString, bool, optionalBool
    case link, linkList, other
}

/// A column's values chunk by chunk, typed: chunk `c` holds the values of the rows whose slot
/// states are chunk `c` of ``Table/withSlotStates(_:)`` (one value per slot, in the same order).
package enum TypedColumnChunks {
    /// An integer column's packed chunks (``PackedIntArray/withWideChunk(_:_:)`` reads one as
    /// 8-byte values).
    case int(PackedIntArray)
    case optionalInt([[Int64?]])
    case double([[Double]])
    case optionalDouble([[Double?]])
    case string([[String]])
    case optionalString([[String?]])
    case bool([[Bool]])
    case optionalBool([[Bool?]])
    /// The link targets by row (-1 for nil).
    case link([[Int32]])
    case linkList
    case other
}

extension Column {
    /// How the column stores its values.
    package var storageKind: ColumnStorageKind {
        switch self {
        case is ScalarColumn<Int64>: .int
        case is ScalarColumn<Int64?>: .optionalInt
        case is ScalarColumn<Double>: .double
        case is ScalarColumn<Double?>: .optionalDouble
        case is ScalarColumn<String>: .string
        case is ScalarColumn<String?>: .optionalString
        case is ScalarColumn<Bool>: .bool
        case is ScalarColumn<Bool?>: .optionalBool
        case is LinkColumn: .link
        case is LinkListColumn: .linkList
        default: .other
        }
    }

    /// The column's values chunk by chunk, typed by its ``storageKind``.
    package var typedChunks: TypedColumnChunks {
        switch self {
        case let c as ScalarColumn<Int64>: .int(c.values)
        case let c as ScalarColumn<Int64?>: .optionalInt(c.values.chunks)
        case let c as ScalarColumn<Double>: .double(c.values.chunks)
        case let c as ScalarColumn<Double?>: .optionalDouble(c.values.chunks)
        case let c as ScalarColumn<String>: .string(c.values.chunks)
        case let c as ScalarColumn<String?>: .optionalString(c.values.chunks)
        case let c as ScalarColumn<Bool>: .bool(c.values.chunks)
        case let c as ScalarColumn<Bool?>: .optionalBool(c.values.chunks)
        case let c as LinkColumn: .link(c.targets.chunks)
        case is LinkListColumn: .linkList
        default: .other
        }
    }

    // Appending one loaded value, for each storage kind a snapshot loads natively. Each is
    // called only on a column of that kind (the loader asks ``storageKind`` once per table):
    // the cast is not checked in release builds, which keeps a load at one call and one
    // append per value. Non-generic: called from another module, `ChunkedArray`'s generic
    // `append` would run unspecialized.

    /// Appends to an `.int` column.
    package func appendLoaded(_ value: Int64) {
        unsafeDowncast(self, to: ScalarColumn<Int64>.self).values.append(value)
    }
    /// Appends to an `.optionalInt` column.
    package func appendLoaded(_ value: Int64?) {
        unsafeDowncast(self, to: ScalarColumn<Int64?>.self).values.append(value)
    }
    /// Appends to a `.double` column.
    package func appendLoaded(_ value: Double) {
        unsafeDowncast(self, to: ScalarColumn<Double>.self).values.append(value)
    }
    /// Appends to an `.optionalDouble` column.
    package func appendLoaded(_ value: Double?) {
        unsafeDowncast(self, to: ScalarColumn<Double?>.self).values.append(value)
    }
    /// Appends to a `.string` column.
    package func appendLoaded(_ value: String) {
        unsafeDowncast(self, to: ScalarColumn<String>.self).values.append(value)
    }
    /// Appends to an `.optionalString` column.
    package func appendLoaded(_ value: String?) {
        unsafeDowncast(self, to: ScalarColumn<String?>.self).values.append(value)
    }
    /// Appends to a `.bool` column.
    package func appendLoaded(_ value: Bool) { unsafeDowncast(self, to: ScalarColumn<Bool>.self).values.append(value) }
    /// Appends to an `.optionalBool` column.
    package func appendLoaded(_ value: Bool?) {
        unsafeDowncast(self, to: ScalarColumn<Bool?>.self).values.append(value)
    }
    /// Appends values to an `.int` column, as ``appendLoaded(_:)-(Int64)`` for each in order
    /// would, a chunk at a time.
    package func appendLoaded(contentsOf values: UnsafeBufferPointer<Int64>) {
        unsafeDowncast(self, to: ScalarColumn<Int64>.self).values.append(contentsOf: values)
    }
    /// Appends values to a `.string` column, as ``appendLoaded(_:)-(String)`` for each in order
    /// would, a chunk at a time.
    package func appendLoaded(contentsOf values: UnsafeBufferPointer<String>) {
        unsafeDowncast(self, to: ScalarColumn<String>.self).values.append(contentsOf: values)
    }
    /// Appends `count` nil links to a `.link` column, a chunk at a time (set later with
    /// ``Store/loadLinks(_:_:_:)``).
    package func appendLoadedNilLinks(count: Int) {
        unsafeDowncast(self, to: LinkColumn.self).targets.append(repeating: -1, count: count)
    }
    /// Appends an empty list to a `.linkList` column (set later with
    /// ``Store/loadList(_:_:_:to:)``).
    package func appendLoadedEmptyList() {
        let column = unsafeDowncast(self, to: LinkListColumn.self)
        column.lists.append([])
        if column.isMap { column.keys.append([]) }
    }
}

extension Store {
    /// The row a loaded object goes to, after checking its id and primary key.
    fileprivate func loadableRow(_ table: Table, _ key: ObjectKey, _ values: [PropertyValue])
        throws(LiveObjectsError) -> Int32
    {
        let row = Int32(truncatingIfNeeded: key.row)
        guard row >= 0 else {
            throw LiveObjectsError(.corruptFile, "object id \(key) is out of range", objectType: table.name)
        }
        if let pk = table.primaryKeyProperty, table.row(forPrimaryKey: values[pk]) != nil {
            throw LiveObjectsError(
                .corruptFile, "two objects have the primary key \(values[pk])", objectType: table.name,
                primaryKey: values[pk])
        }
        return row
    }
}
