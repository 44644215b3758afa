import LiveObjectsStore

extension Store {
    /// An immutable copy of the store's current state. Columns and indexes are copied by
    /// reference and copy themselves on the live store's next change (copy-on-write), so
    /// freezing costs O(tables × properties), not O(objects).
    ///
    /// - Parameter committed: During a write, copy the state before it: the copy undoes the
    ///   open write (O(changes so far)).
    func frozenCopy(committed: Bool = false) -> FrozenStore {
        let copy = Store(validatedSchema: schema)
        for (i, table) in tables.enumerated() {
            copy.tables[i].copyState(from: table, in: copy)
        }
        copy.adoptModels(of: self)
        copy.version = version
        if committed && isInWrite {
            copy.undoLog = undoLog
            copy.rowCountAtWriteStart = rowCountAtWriteStart
            copy.isInWrite = true
            copy.rollback(to: Savepoint(index: 0, lastAppendCount: nil))
            copy.isInWrite = false
            // The undo wrote into the copy's hash indexes, which are rebuilt from the data on
            // first use: start them empty again.
            for table in copy.tables {
                for index in table.valueIndexes.values { index.removeAll() }
                table.markIndexesStale()
            }
        }
        return FrozenStore(store: copy)
    }

    /// Gives the tables of this store (a copy of `other`) the model classes of `other`'s, as
    /// the realm registered them.
    func adoptModels(of other: Store) {
        for (table, source) in zip(tables, other.tables) where source.model != nil {
            table.setModel(source.model, defaults: source.defaults)
            table.enumCases = source.enumCases
            table.valueChecks = source.valueChecks
        }
        tablesByType = other.tablesByType.mapValues { tables[$0.index] }
    }
}

extension Table {
    /// Takes over another table's contents (sharing storage until either side changes).
    func copyState(from other: Table, in store: Store) {
        var copied: [Column?] = []
        for column in other.columns {
            guard let column else {
                copied.append(nil)
                continue
            }
            switch column {
            case let link as LinkColumn:
                let c = LinkColumn(property: link.property, target: store.tables[link.target.index])
                c.targets = link.targets
                copied.append(c)
            case let list as LinkListColumn:
                let c = LinkListColumn(property: list.property, target: store.tables[list.target.index])
                c.lists = list.lists
                c.keys = list.keys
                copied.append(c)
            default:
                copied.append(column.copy())
            }
        }
        setColumns(copied)
        copySlots(from: other)
        for (i, backlinks) in incoming.enumerated() { backlinks.rows = other.incoming[i].rows }
        // Hash indexes are not shared (a shared dictionary would be copied whole by the live
        // table's next change): the frozen table rebuilds them if a lookup needs them.
        markIndexesStale()
    }
}

/// The state of a store at one version, shared by the frozen values made from it. It is never
/// changed after it is made; reads go through a lock because reading fills caches.
final class FrozenStore: Sendable {
    private let store: Locked<Store>

    init(store: Store) {
        self.store = Locked(store)
    }

    /// The realm version the state belongs to.
    var version: UInt64 { withStore { $0.version } }

    /// Runs `body` with the frozen store, one caller at a time.
    func withStore<T>(_ body: (Store) throws -> T) rethrows -> T {
        try store.withLock { store in try body(store) }
    }
}
