/// What one commit changed, in the form subscriptions need: changed rows per table (by slot),
/// including rows whose `LinkingObjects` changed, and the first old value of every changed
/// property. Built once per commit, only when there are subscriptions.
final class CommitContext {
    let store: Store
    let changes: ChangeSet
    /// Per table index: inserted rows.
    private(set) var inserted: [Int: Set<Int32>] = [:]
    /// Per table index: deleted rows and the generation they had.
    private(set) var deleted: [Int: [Int32: UInt32]] = [:]
    /// Per table index: modified rows and the properties that changed (`LinkingObjects`
    /// properties included when a link to the row was made or removed).
    private(set) var modified: [Int: [Int32: Set<Int>]] = [:]
    /// The value a changed property had before the write, per row.
    private(set) var oldValues: [RowID: [Int: PropertyValue]] = [:]
    /// The indices of the tables with any change.
    private(set) var touchedTables = Set<Int>()
    /// ``touchedTables`` as a bit mask (all bits for tables past 63).
    var touchedMask: UInt64 { Subscription.mask(touchedTables) }
    private var frozen: FrozenStore?
    private let undoLog: [UndoEntry]

    init(store: Store, changes: ChangeSet, undoLog: [UndoEntry]) {
        self.store = store
        self.changes = changes
        self.undoLog = undoLog
        for (name, tableChanges) in changes.tables {
            let t = store.tablesByName[name]!.index
            touchedTables.insert(t)
            inserted[t] = Set(tableChanges.insertions.map { Int32(bitPattern: $0.row) })
            deleted[t] = Dictionary(
                uniqueKeysWithValues: tableChanges.deletions.keys.map { (Int32(bitPattern: $0.row), $0.generation) })
            var rows: [Int32: Set<Int>] = [:]
            for (key, properties) in tableChanges.modifications { rows[Int32(bitPattern: key.row)] = properties }
            modified[t] = rows
        }
        for entry in undoLog {
            switch entry {
            case .set(let t, let row, let p, let old):
                remember(Int(t), row, Int(p), old)
                touchBacklinks(Int(t), row, Int(p), old)
            case .listInsert(let t, let row, let p, _), .listMove(let t, let row, let p, _, _):
                rememberList(Int(t), row, Int(p))
                touchBacklinks(Int(t), row, Int(p), .null)
            case .listRemove(let t, let row, let p, _, let old), .listReplace(let t, let row, let p, _, let old):
                rememberList(Int(t), row, Int(p))
                touchBacklinks(Int(t), row, Int(p), old)
            case .append, .insert, .remove:
                break
            }
        }
    }

    private func remember(_ t: Int, _ row: Int32, _ p: Int, _ old: PropertyValue) {
        let id = RowID(store.tables[t], row)
        if oldValues[id]?[p] == nil { oldValues[id, default: [:]][p] = old }
    }

    /// Lists change element by element; their old value is rebuilt on demand.
    private func rememberList(_ t: Int, _ row: Int32, _ p: Int) {}

    /// The value a property had before the write.
    func oldValue(_ id: RowID, _ p: Int) -> PropertyValue? {
        if let value = oldValues[id]?[p] { return value }
        let table = store.tables[id.table]
        guard table.schema.properties[p].isList, table.schema.properties[p].isStored,
            case .list(var items) = table.value(id.row, p)
        else { return nil }
        // Undo this list's element changes, newest first.
        for entry in undoLog.reversed() {
            switch entry {
            case .listInsert(let t, let r, let q, let index) where Int(t) == id.table && r == id.row && Int(q) == p:
                items.remove(at: Int(index))
            case .listRemove(let t, let r, let q, let index, let old) where Int(t) == id.table && r == id.row && Int(q) == p:
                items.insert(old, at: Int(index))
            case .listReplace(let t, let r, let q, let index, let old) where Int(t) == id.table && r == id.row && Int(q) == p:
                items[Int(index)] = old
            case .listMove(let t, let r, let q, let from, let to) where Int(t) == id.table && r == id.row && Int(q) == p:
                let element = items.remove(at: Int(to))
                items.insert(element, at: Int(from))
            default:
                break
            }
        }
        return .list(items)
    }

    /// A link made or removed changes the target's `LinkingObjects`.
    private func touchBacklinks(_ t: Int, _ row: Int32, _ p: Int, _ old: PropertyValue) {
        let table = store.tables[t]
        guard let backlinks = table.outgoing[p], !store.tables.isEmpty else { return }
        let targetTable = (table.columns[p] as? LinkColumn)?.target ?? (table.columns[p] as? LinkListColumn)?.target
        guard let target = targetTable else { return }
        let inverse = target.linkingObjectsSources.indices.filter { target.linkingObjectsSources[$0] === backlinks }
        guard !inverse.isEmpty else { return }
        var rows = Store.linkRows(old)
        if table.isLive(row) { rows += Store.linkRows(table.columns[p]!.value(at: Int(row))) }
        for targetRow in rows where target.isLive(targetRow) && inserted[target.index]?.contains(targetRow) != true {
            touchedTables.insert(target.index)
            for q in inverse { modified[target.index, default: [:]][targetRow, default: []].insert(q) }
        }
    }

    /// The frozen state after the commit, made once and shared by every subscription.
    func frozenState() -> FrozenStore {
        if let frozen { return frozen }
        let made = store.frozenState()
        frozen = made
        return made
    }
}
