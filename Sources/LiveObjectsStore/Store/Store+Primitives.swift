/// The logged primitives: every change to a store goes through one of these, which keep the
/// primary-key, secondary and backlink indexes right and append to the undo log.
extension Store {
    /// Inserts a row with checked values and returns its slot.
    package func insertRow(_ table: Table, values: [PropertyValue]) -> Int32 {
        mutationCount &+= 1
        let row: Int32
        let appended: Bool
        if let free = table.popFreeRow() {
            row = free
            appended = false
            for (p, column) in table.columns.enumerated() { column?.set(values[p], at: Int(row)) }
        } else {
            row = table.appendSlot(values)
            appended = true
        }
        table.markLive(row, true)
        table.indexInsert(row, values: values)
        addBacklinks(table, row)
        if appended {
            // Consecutive appends to one table share one entry (bulk inserts stay small).
            if case .append(let t, let first, let count)? = undoLog.last,
                t == Int32(table.index), first + count == row
            {
                undoLog[undoLog.count - 1] = .append(table: t, first: first, count: count + 1)
            } else {
                undoLog.append(.append(table: Int32(table.index), first: row, count: 1))
            }
        } else {
            undoLog.append(.insert(table: Int32(table.index), row: row))
        }
        return row
    }

    /// Replaces a stored value. Returns whether the value changed.
    @discardableResult
    package func setValue(
        _ value: PropertyValue, _ table: Table, _ row: Int32, _ property: Int, force: Bool = false
    ) -> Bool {
        let column = table.column(property)
        let old = column.value(at: Int(row))
        if old == value && !force { return false }
        mutationCount &+= 1
        rawSet(value, table, row, property, old: old)
        undoLog.append(
            .set(table: Int32(table.index), row: row, property: Int32(property), old: old))
        return true
    }

    private func rawSet(
        _ value: PropertyValue, _ table: Table, _ row: Int32, _ property: Int, old: PropertyValue
    ) {
        let column = table.column(property)
        if property == table.primaryKeyProperty {
            table.primaryKeyIndex?.remove(old)
            table.primaryKeyIndex?.insert(value, row: row, generation: table.generation(row))
        } else if let index = table.valueIndexes[property] {
            index.remove(old, row: row)
            index.insert(value, row: row)
        }
        if !table.derivedIndexes.isEmpty, let index = table.derivedIndexes[property] {
            index.remove(old, row: row)
            index.insert(value, row: row)
        }
        if let backlinks = table.outgoing[property] {
            for t in Self.linkRows(old) { backlinks.remove(row, from: t) }
            for t in Self.linkRows(value) { backlinks.add(row, to: t) }
        }
        column.set(value, at: Int(row))
    }

    /// Inserts one element into a list.
    package func listInsert(_ value: PropertyValue, _ table: Table, _ row: Int32, _ property: Int, at index: Int) {
        mutationCount &+= 1
        rawListInsert(value, table, row, property, at: index)
        undoLog.append(
            .listInsert(
                table: Int32(table.index), row: row, property: Int32(property), index: Int32(index)))
    }

    /// Removes one element from a list.
    package func listRemove(_ table: Table, _ row: Int32, _ property: Int, at index: Int) {
        mutationCount &+= 1
        let old = rawListRemove(table, row, property, at: index)
        undoLog.append(
            .listRemove(
                table: Int32(table.index), row: row, property: Int32(property), index: Int32(index),
                old: old))
    }

    /// Replaces one element of a list.
    package func listReplace(_ value: PropertyValue, _ table: Table, _ row: Int32, _ property: Int, at index: Int) {
        mutationCount &+= 1
        let old = rawListRemove(table, row, property, at: index)
        rawListInsert(value, table, row, property, at: index)
        undoLog.append(
            .listReplace(
                table: Int32(table.index), row: row, property: Int32(property), index: Int32(index),
                old: old))
    }

    /// Moves one element of a list.
    package func listMove(_ table: Table, _ row: Int32, _ property: Int, from: Int, to: Int) {
        mutationCount &+= 1
        rawListMove(table, row, property, from: from, to: to)
        undoLog.append(
            .listMove(
                table: Int32(table.index), row: row, property: Int32(property), from: Int32(from),
                to: Int32(to)))
    }

    /// Removes a row whose links, in and out, are already cleared.
    func removeRow(_ table: Table, _ row: Int32) {
        mutationCount &+= 1
        let values = (0..<table.columns.count).map { p in
            table.columns[p]?.value(at: Int(row)) ?? .null
        }
        let generation = table.generation(row)
        table.indexRemove(row)
        table.markLive(row, false)
        table.setGeneration(row, generation &+ 1)
        for (p, column) in table.columns.enumerated() {
            column?.set(table.schema.properties[p].zeroValue, at: Int(row))
        }
        undoLog.append(
            .remove(
                table: Int32(table.index), row: row,
                removed: RemovedRow(values: values, generation: generation)))
    }

    // MARK: Raw list operations

    private func rawListInsert(
        _ value: PropertyValue, _ table: Table, _ row: Int32, _ property: Int, at index: Int
    ) {
        switch table.columns[property] {
        case let column as LinkListColumn:
            guard column.isMap else {
                let target = Int32(bitPattern: value.objectKey!.row)
                column.lists[Int(row)].insert(target, at: index)
                table.outgoing[property]!.add(row, to: target)
                return
            }
            // A map's element is a `[.string(key), .object(target) or .null]` pair.
            guard case .list(let pair) = value, pair.count == 2, case .string(let key) = pair[0] else {
                preconditionFailure("a map's element is a key and a value")
            }
            let target = pair[1].objectKey.map { Int32(bitPattern: $0.row) } ?? -1
            column.keys[Int(row)].insert(key, at: index)
            column.lists[Int(row)].insert(target, at: index)
            if target >= 0 { table.outgoing[property]!.add(row, to: target) }
        case let column as ValueListColumn:
            column.version &+= 1
            guard column.isMap else {
                column.lists[Int(row)].insert(value, at: index)
                return
            }
            // A map's element is a `[.string(key), value]` pair.
            guard case .list(let pair) = value, pair.count == 2, case .string(let key) = pair[0] else {
                preconditionFailure("a map's element is a key and a value")
            }
            column.keys[Int(row)].insert(key, at: index)
            column.lists[Int(row)].insert(pair[1], at: index)
        default:
            preconditionFailure("not a list")
        }
    }

    private func rawListRemove(_ table: Table, _ row: Int32, _ property: Int, at index: Int)
        -> PropertyValue
    {
        switch table.columns[property] {
        case let column as LinkListColumn:
            let target = column.lists[Int(row)].remove(at: index)
            if target >= 0 { table.outgoing[property]!.remove(row, from: target) }
            guard column.isMap else { return .object(column.target.key(target)) }
            return .list([.string(column.keys[Int(row)].remove(at: index)), column.element(target)])
        case let column as ValueListColumn:
            column.version &+= 1
            let value = column.lists[Int(row)].remove(at: index)
            guard column.isMap else { return value }
            return .list([.string(column.keys[Int(row)].remove(at: index)), value])
        default:
            preconditionFailure("not a list")
        }
    }

    private func rawListMove(_ table: Table, _ row: Int32, _ property: Int, from: Int, to: Int) {
        switch table.columns[property] {
        case let column as LinkListColumn:
            let e = column.lists[Int(row)].remove(at: from)
            column.lists[Int(row)].insert(e, at: to)
            if column.isMap { column.keys[Int(row)].insert(column.keys[Int(row)].remove(at: from), at: to) }
        case let column as ValueListColumn:
            column.version &+= 1
            let e = column.lists[Int(row)].remove(at: from)
            column.lists[Int(row)].insert(e, at: to)
            if column.isMap { column.keys[Int(row)].insert(column.keys[Int(row)].remove(at: from), at: to) }
        default:
            preconditionFailure("not a list")
        }
    }

    // MARK: Backlinks

    /// The target rows a link value names: a link, a list of links, a map of objects' whole value
    /// (its `[key, link or null]` pairs) or one such pair.
    package static func linkRows(_ value: PropertyValue) -> [Int32] {
        switch value {
        case .object(let key): [Int32(bitPattern: key.row)]
        case .list(let items):
            items.compactMap { item in
                if case .list(let pair) = item, pair.count == 2 {
                    return pair[1].objectKey.map { Int32(bitPattern: $0.row) }
                }
                return item.objectKey.map { Int32(bitPattern: $0.row) }
            }
        default: []
        }
    }

    private func addBacklinks(_ table: Table, _ row: Int32) {
        forEachOutgoingLink(table, row) { backlinks, target in backlinks.addLater(row, to: target) }
    }

    private func removeBacklinks(_ table: Table, _ row: Int32) {
        forEachOutgoingLink(table, row) { backlinks, target in backlinks.remove(row, from: target) }
    }

    /// Calls `body` with the backlink column and target of every link a row holds.
    ///
    /// The columns are borrowed, not retained (two atomic operations per link property and
    /// row, on every insert and delete).
    private func forEachOutgoingLink(_ table: Table, _ row: Int32, _ body: (BacklinkColumn, Int32) -> Void) {
        for (p, backlinks) in table.outgoing {
            guard let column = table.unretainedColumns[p] else { continue }
            column._withUnsafeGuaranteedRef { column in
                if column.isLinkColumn {
                    let t = unsafeDowncast(column, to: LinkColumn.self).targets[Int(row)]
                    if t >= 0 { body(backlinks, t) }
                } else if let list = column as? LinkListColumn {
                    for t in list.lists[Int(row)] where t >= 0 { body(backlinks, t) }
                }
            }
        }
    }

    // MARK: Transactions

    /// Opens a write.
    package func beginWrite() throws(LiveObjectsError) {
        guard !isInWrite else {
            throw LiveObjectsError(
                .alreadyInWriteTransaction, "a write transaction is already open on this realm")
        }
        guard !isClosed else {
            throw LiveObjectsError(.invalidOperation, "the realm is closed: open it again to write")
        }
        // A write keeps the value indexes in step with its changes: they must be whole.
        for table in tables { table.finishValueIndexBuild() }
        isInWrite = true
        undoLog.removeAll(keepingCapacity: true)
        rowCountAtWriteStart = tables.map(\.rowCount)
        pendingError = nil
    }

    /// The position in the undo log to roll back to if the operation about to start fails.
    package func makeSavepoint() -> Savepoint {
        if case .append(_, _, let count)? = undoLog.last {
            return Savepoint(index: undoLog.count, lastAppendCount: count)
        }
        return Savepoint(index: undoLog.count, lastAppendCount: nil)
    }

    /// Undoes every change after a savepoint.
    package func rollback(to savepoint: Savepoint) {
        while undoLog.count > savepoint.index {
            undo(undoLog.removeLast())
        }
        // Rows appended after the savepoint may have been merged into its last entry.
        if let kept = savepoint.lastAppendCount, case .append(let t, let first, let count)? = undoLog.last,
            count > kept
        {
            undoLog[undoLog.count - 1] = .append(table: t, first: first, count: kept)
            undo(.append(table: t, first: first + kept, count: count - kept))
        }
    }

    /// Undoes the whole open write and closes it.
    package func cancelWrite() {
        rollback(to: Savepoint(index: 0, lastAppendCount: nil))
        isInWrite = false
        pendingError = nil
        for listener in listeners { listener.cancelled() }
    }

    /// Commits the open write through the commit pipeline (see ``CommitListener``): the
    /// listeners prepare it (record it in the history, make it durable), then the deleted slots
    /// are freed, the version goes up and the listeners hear of the final commit.
    ///
    /// - Throws: what a listener's `prepare` throws, after rolling the whole write back and
    ///   closing it (as ``cancelWrite()`` does): the store and the listeners are then as before
    ///   the write.
    @discardableResult
    package func commitWrite() throws(LiveObjectsError) -> ChangeSet {
        for table in tables {
            for backlinks in table.incoming { backlinks.addPending() }
            for index in table.valueIndexes.values where !index.pendingRun.isEmpty { index.addPending() }
        }
        let changes = changeSet()
        // Slots freed before the commit is prepared, so that a snapshot saved for it lists
        // them (their generations keep keys of the deleted objects from resolving again).
        var freed: [Int32] = []
        for entry in undoLog {
            if case .remove(let t, let row, _) = entry {
                tables[Int(t)].pushFreeRow(row)
                freed.append(t)
            }
        }
        if !changes.tables.isEmpty {
            let commit = Commit(changes: changes, store: self, undoLog: undoLog)
            for (i, listener) in listeners.enumerated() {
                do throws(LiveObjectsError) {
                    try listener.prepare(commit)
                } catch {
                    for prepared in listeners[..<i].reversed() { prepared.abandon(commit) }
                    for t in freed.reversed() { _ = tables[Int(t)].popFreeRow() }
                    cancelWrite()
                    throw error
                }
            }
        }
        let log = undoLog
        undoLog.removeAll(keepingCapacity: false)
        isInWrite = false
        if !changes.tables.isEmpty {
            version += 1
            mutationCount &+= 1
        }
        let commit = Commit(changes: ChangeSet(version: version, tables: changes.tables), store: self, undoLog: log)
        for listener in listeners { listener.committed(commit) }
        return commit.changes
    }

    /// The changeset of the open write so far.
    ///
    /// - Complexity: O(changes): rows appended in this write are recognized by their slot, so
    ///   no set of all inserted rows is built.
    func changeSet() -> ChangeSet {
        var reused: [Int32: Set<Int32>] = [:]
        var removed: [Int32: [Int32: (UInt32, PropertyValue)]] = [:]
        for entry in undoLog {
            switch entry {
            case .insert(let t, let row):
                reused[t, default: []].insert(row)
            case .remove(let t, let row, let info):
                let table = tables[Int(t)]
                let pk = table.primaryKeyProperty.map { info.values[$0] } ?? .null
                removed[t, default: [:]][row] = (info.generation, pk)
            default:
                break
            }
        }
        func isInserted(_ t: Int32, _ row: Int32) -> Bool {
            Int(row) >= rowCountAtWriteStart[Int(t)] || reused[t]?.contains(row) == true
        }
        // The keys of the inserted objects are kept as runs of rows (ObjectKeys): for a write of
        // a million objects into fresh rows, one run. Rows that come out of order (slots used
        // again) are collected and sorted instead.
        var inserted: [Int32: ObjectKeys] = [:]
        var unordered: [Int32: [ObjectKey]] = [:]
        func note(_ t: Int32, _ key: ObjectKey) {
            if unordered[t] != nil {
                unordered[t]!.append(key)
            } else if let last = inserted[t]?.last, last.row >= key.row {
                unordered[t] = Array(inserted.removeValue(forKey: t)!) + [key]
            } else {
                inserted[t, default: ObjectKeys()].append(key)
            }
        }
        var modified: [Int32: [Int32: Set<Int>]] = [:]
        for entry in undoLog {
            switch entry {
            case .insert(let t, let row):
                if removed[t]?[row] == nil { note(t, tables[Int(t)].key(row)) }
            case .append(let t, let first, let count):
                let table = tables[Int(t)]
                let removedRows = removed[t]
                if removedRows == nil, unordered[t] == nil, inserted[t]?.last.map({ Int32($0.row) < first }) ?? true {
                    // Fresh rows after every row noted: appended in one go.
                    var keys = inserted.removeValue(forKey: t) ?? ObjectKeys()
                    for row in first..<first + count { keys.append(table.key(row)) }
                    inserted[t] = keys
                    continue
                }
                for row in first..<first + count where removedRows?[row] == nil {
                    note(t, table.key(row))
                }
            case .set(let t, let row, let p, _), .listInsert(let t, let row, let p, _),
                .listRemove(let t, let row, let p, _, _), .listReplace(let t, let row, let p, _, _),
                .listMove(let t, let row, let p, _, _):
                if removed[t]?[row] == nil && !isInserted(t, row) {
                    modified[t, default: [:]][row, default: []].insert(Int(p))
                }
            case .remove:
                break
            }
        }
        var result: [String: TableChanges] = [:]
        for table in tables {
            let t = Int32(table.index)
            var changes = TableChanges()
            if let keys = inserted.removeValue(forKey: t) {
                changes.insertions = keys
            } else if let keys = unordered.removeValue(forKey: t) {
                changes.insertions = ObjectKeys(keys.sorted { $0.row < $1.row })
            }
            for (row, info) in removed[t] ?? [:] where !isInserted(t, row) {
                changes.deletions[ObjectKey(row: UInt32(bitPattern: row), generation: info.0)] = info.1
            }
            for (row, props) in modified[t] ?? [:] { changes.modifications[table.key(row)] = props }
            if !changes.isEmpty { result[table.name] = changes }
        }
        return ChangeSet(version: version + 1, tables: result)
    }

    private func undo(_ entry: UndoEntry) {
        mutationCount &+= 1
        switch entry {
        case .append(let t, let first, let count):
            let table = tables[Int(t)]
            for row in (first..<first + count).reversed() {
                removeBacklinks(table, row)
                table.indexRemove(row)
                table.markLive(row, false)
                // The object never existed: retire its key, so that handles and keys to it
                // stay invalid when the slot is used again.
                table.raiseAppendGeneration(above: table.generation(row))
                table.removeLastSlot()
            }
        case .insert(let t, let row):
            let table = tables[Int(t)]
            removeBacklinks(table, row)
            table.indexRemove(row)
            table.markLive(row, false)
            for (p, column) in table.columns.enumerated() {
                column?.set(table.schema.properties[p].zeroValue, at: Int(row))
            }
            table.setGeneration(row, table.generation(row) &+ 1)
            table.pushFreeRow(row)
        case .set(let t, let row, let p, let old):
            let table = tables[Int(t)]
            rawSet(old, table, row, Int(p), old: table.column(Int(p)).value(at: Int(row)))
        case .listInsert(let t, let row, let p, let index):
            _ = rawListRemove(tables[Int(t)], row, Int(p), at: Int(index))
        case .listRemove(let t, let row, let p, let index, let old):
            rawListInsert(old, tables[Int(t)], row, Int(p), at: Int(index))
        case .listReplace(let t, let row, let p, let index, let old):
            let table = tables[Int(t)]
            _ = rawListRemove(table, row, Int(p), at: Int(index))
            rawListInsert(old, table, row, Int(p), at: Int(index))
        case .listMove(let t, let row, let p, let from, let to):
            rawListMove(tables[Int(t)], row, Int(p), from: Int(to), to: Int(from))
        case .remove(let t, let row, let removed):
            let table = tables[Int(t)]
            for (p, column) in table.columns.enumerated() {
                column?.set(removed.values[p], at: Int(row))
            }
            table.setGeneration(row, removed.generation)
            table.markLive(row, true)
            table.indexInsert(row, values: removed.values)
            addBacklinks(table, row)
        }
    }
}
