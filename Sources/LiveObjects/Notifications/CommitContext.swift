import LiveObjectsStore

/// What one commit changed, in the form subscriptions need: changed rows per table (by slot),
/// including rows whose `LinkingObjects` changed, and the old values of changed properties.
/// Built once per commit, only when there are subscriptions.
final class CommitContext {
    let store: Store
    let changes: ChangeSet
    /// Per table index: inserted rows, as runs (``ObjectKeys``).
    private(set) var inserted: [Int: ObjectKeys] = [:]
    /// Per table index: deleted rows and the generation they had.
    private(set) var deleted: [Int: [Int32: UInt32]] = [:]
    /// Per table index: modified rows and the properties that changed (`LinkingObjects`
    /// properties included when a link to the row was made or removed).
    private(set) var modified: [Int: [Int32: Set<Int>]] = [:]
    /// The indices of the tables with any change.
    private(set) var touchedTables = Set<Int>()
    /// ``touchedTables`` as a bit mask (all bits for tables past 63).
    var touchedMask: UInt64 { tableMask(touchedTables) }
    /// Per target row: the links to it that the write made or removed (newest first), for the
    /// link properties that have an inverse `LinkingObjects`.
    private var backlinkChanges: [RowID: [BacklinkChange]] = [:]
    /// Per row: the positions of its entries in the undo log (built on first use).
    private var entriesByRow: [RowID: [Int]]?
    private var frozen: FrozenStore?
    private let undoLog: [UndoEntry]

    /// A link from an origin row made (`added`) or removed.
    private struct BacklinkChange {
        let table: Int
        let property: Int
        let row: Int32
        let added: Bool
    }

    /// A link property of one row, whose value is rewound entry by entry.
    private struct LinkSlot: Hashable {
        let table: Int32
        let row: Int32
        let property: Int32
    }

    init(store: Store, changes: ChangeSet, undoLog: [UndoEntry]) {
        self.store = store
        self.changes = changes
        self.undoLog = undoLog
        for (name, tableChanges) in changes.tables {
            let t = store.tablesByName[name]!.index
            touchedTables.insert(t)
            inserted[t] = tableChanges.insertions
            deleted[t] = Dictionary(
                uniqueKeysWithValues: tableChanges.deletions.keys.map { (Int32(bitPattern: $0.row), $0.generation) })
            var rows: [Int32: Set<Int>] = [:]
            for (key, properties) in tableChanges.modifications { rows[Int32(bitPattern: key.row)] = properties }
            modified[t] = rows
        }
        collectBacklinkChanges()
    }

    // MARK: LinkingObjects

    /// For every link property with an inverse `LinkingObjects`: which targets the write linked
    /// and unlinked, found by rewinding the link values from the current state, newest entry
    /// first (an insert or a set names its new element only through the state after it). Each
    /// target that exists before and after the write gets its inverse properties marked
    /// modified; a move inside a list links and unlinks nothing.
    private func collectBacklinkChanges() {
        // Inverse properties per (table, link property), for the link properties that have one.
        var inverses: [Int: [Int: (target: Table, properties: [Int])]] = [:]
        for table in store.tables {
            for (p, backlinks) in table.outgoing {
                let target: Table? =
                    (table.columns[p] as? LinkColumn)?.target ?? (table.columns[p] as? LinkListColumn)?.target
                guard let target else { continue }
                let properties = target.linkingObjectsSources.indices.filter {
                    target.linkingObjectsSources[$0] === backlinks
                }
                if !properties.isEmpty { inverses[table.index, default: [:]][p] = (target, properties) }
            }
        }
        guard !inverses.isEmpty else { return }
        var values: [LinkSlot: [Int32]] = [:]
        func current(_ slot: LinkSlot, _ table: Table) -> [Int32] {
            // Taken out of the dictionary, so that the caller changes it in place.
            if let value = values.removeValue(forKey: slot) { return value }
            switch table.columns[Int(slot.property)] {
            case let link as LinkColumn:
                let t = link.targets[Int(slot.row)]
                return t < 0 ? [] : [t]
            case let list as LinkListColumn:
                return list.lists[Int(slot.row)]
            default:
                return []
            }
        }
        for entry in undoLog.reversed() {
            let t: Int32, row: Int32, p: Int32
            switch entry {
            case .set(let t1, let r1, let p1, _), .listInsert(let t1, let r1, let p1, _),
                .listRemove(let t1, let r1, let p1, _, _), .listReplace(let t1, let r1, let p1, _, _),
                .listMove(let t1, let r1, let p1, _, _):
                (t, row, p) = (t1, r1, p1)
            case .append, .insert, .remove:
                continue
            }
            guard let (target, _) = inverses[Int(t)]?[Int(p)] else { continue }
            let table = store.tables[Int(t)]
            let slot = LinkSlot(table: t, row: row, property: p)
            var items = current(slot, table)
            var added: Int32?
            var removed: Int32?
            // A map's entry with no object is -1 in `items`: it links nothing, but keeps the
            // positions of the entries after it.
            let isMap = table.schema.properties[Int(p)].isMap
            switch entry {
            case .set(_, _, _, .list(let old)):
                // A whole list or map set to the value it had (`update: .all`): links nothing.
                items = isMap ? LinkListColumn.mapEntries(.list(old)).1 : Store.linkRows(.list(old))
            case .set(_, _, _, let old):
                added = items.first
                removed = Store.linkRows(old).first
                items = removed.map { [$0] } ?? []
                if added == removed { added = nil; removed = nil }
            case .listInsert(_, _, _, let index):
                added = items.remove(at: Int(index))
            case .listRemove(_, _, _, let index, let old):
                removed = Store.linkRows(old).first
                if let row = removed ?? (isMap ? -1 : nil) { items.insert(row, at: Int(index)) }
            case .listReplace(_, _, _, let index, let old):
                added = items[Int(index)]
                removed = Store.linkRows(old).first
                if let row = removed ?? (isMap ? -1 : nil) { items[Int(index)] = row }
            case .listMove(_, _, _, let from, let to):
                // Links nothing, but later entries' indices depend on it.
                let element = items.remove(at: Int(to))
                items.insert(element, at: Int(from))
            default:
                break
            }
            values[slot] = items
            for (targetRow, isAdded) in [(removed, false), (added, true)] {
                guard let targetRow, targetRow >= 0 else { continue }
                let id = RowID(target, targetRow)
                backlinkChanges[id, default: []].append(
                    BacklinkChange(table: Int(t), property: Int(p), row: row, added: isAdded))
            }
        }
        for (id, changes) in backlinkChanges {
            let target = store.tables[id.table]
            guard target.isLive(id.row), inserted[id.table]?.contains(row: UInt32(bitPattern: id.row)) != true else {
                continue
            }
            for change in changes {
                guard let properties = inverses[change.table]?[change.property]?.properties else { continue }
                touchedTables.insert(id.table)
                modified[id.table, default: [:]][id.row, default: []].formUnion(properties)
            }
        }
    }

    // MARK: Old values

    /// The value a property had before the write: the current value, rewound through the
    /// write's entries for the row, newest first. `LinkingObjects` are rebuilt from the links
    /// the write made and removed.
    func oldValue(_ id: RowID, _ p: Int) -> PropertyValue? {
        let table = store.tables[id.table]
        let property = table.schema.properties[p]
        if property.type == .linkingObjects { return oldLinkingObjects(id, p) }
        if entriesByRow == nil {
            var index: [RowID: [Int]] = [:]
            for (i, entry) in undoLog.enumerated() {
                switch entry {
                case .set(let t, let row, _, _), .listInsert(let t, let row, _, _),
                    .listRemove(let t, let row, _, _, _), .listReplace(let t, let row, _, _, _),
                    .listMove(let t, let row, _, _, _):
                    index[RowID(table: Int(t), row: row), default: []].append(i)
                case .append, .insert, .remove:
                    break
                }
            }
            entriesByRow = index
        }
        let entries = entriesByRow?[id] ?? []
        guard property.isList else {
            // The earliest set holds the value from before the write.
            for i in entries {
                if case .set(_, _, let q, let old) = undoLog[i], Int(q) == p { return old }
            }
            return table.value(id.row, p)
        }
        guard case .list(var items) = table.value(id.row, p) else { return nil }
        for i in entries.reversed() {
            switch undoLog[i] {
            case .set(_, _, let q, let old) where Int(q) == p:
                guard case .list(let list) = old else { return old }
                items = list
            case .listInsert(_, _, let q, let index) where Int(q) == p:
                items.remove(at: Int(index))
            case .listRemove(_, _, let q, let index, let old) where Int(q) == p:
                items.insert(old, at: Int(index))
            case .listReplace(_, _, let q, let index, let old) where Int(q) == p:
                items[Int(index)] = old
            case .listMove(_, _, let q, let from, let to) where Int(q) == p:
                items.insert(items.remove(at: Int(to)), at: Int(from))
            default:
                break
            }
        }
        return .list(items)
    }

    /// The origins of a `LinkingObjects` property before the write (backlinks are kept in
    /// origin-row order, so the multiset of origins gives the order too).
    private func oldLinkingObjects(_ id: RowID, _ p: Int) -> PropertyValue? {
        let table = store.tables[id.table]
        guard let source = table.linkingObjectsSources[p] else { return nil }
        var counts: [Int32: Int] = [:]
        for row in source.rows[Int(id.row)] { counts[row, default: 0] += 1 }
        for change in backlinkChanges[id] ?? []
        where change.table == source.source.index && change.property == source.property {
            counts[change.row, default: 0] += change.added ? -1 : 1
        }
        let origin = source.source
        let rows = counts.filter { $0.value > 0 }.keys.sorted().flatMap { row in
            repeatElement(row, count: counts[row]!)
        }
        return .list(
            rows.map { row in
                if let generation = deleted[origin.index]?[row] {
                    return .object(ObjectKey(row: UInt32(bitPattern: row), generation: generation))
                }
                return .object(origin.key(row))
            })
    }

    /// The frozen state after the commit, made once and shared by every subscription.
    func frozenState() -> FrozenStore {
        if let frozen { return frozen }
        let made = store.frozenState()
        frozen = made
        return made
    }
}
