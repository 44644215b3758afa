import LiveObjectsStore

// Frozen snapshots of a realm and of its results (Snapshot/ holds the frozen copies).

/// An immutable, `Sendable` view of a whole realm at one version.
public struct FrozenRealm: Sendable {
    let frozen: FrozenStore

    /// The realm version of the snapshot.
    public var version: UInt64 { frozen.version }

    /// All objects of a type, in storage order.
    ///
    /// - Complexity: O(1) when no object of the type was deleted since the realm opened (or
    ///   every freed slot was used again), else O(n) once per snapshot.
    public func objects<T: Object>(_ type: T.Type) -> FrozenResults<T> {
        frozen.withStore { store in
            guard let table = try? store.table(for: type) else {
                return FrozenResults(frozen: frozen, tableIndex: 0, keys: [])
            }
            return FrozenResults(frozen: frozen, wholeTable: table)
        }
    }

    /// The objects of a type matching a predicate in the string language.
    ///
    /// - Throws: as ``Results/filter(_:arguments:)``.
    public func objects<T: Object>(_ type: T.Type, where predicate: String, arguments: [PropertyValue] = [])
        throws(LiveObjectsError) -> FrozenResults<T>
    {
        let result: Result<FrozenResults<T>, LiveObjectsError> = frozen.withStore { store in
            Result { () throws(LiveObjectsError) in
                let table = try store.table(for: type)
                let results = try Results<T>(store: store, table: table).filter(predicate, arguments: arguments)
                return FrozenResults(frozen: frozen, tableIndex: table.index, rows: results.rows)
            }
        }
        return try result.get()
    }

    /// The object with a primary key.
    public func object<T: Object, Key: _PrimitivePersistable>(ofType type: T.Type, forPrimaryKey key: Key)
        -> FrozenObject<T>?
    {
        frozen.withStore { store in
            guard let table = try? store.table(for: type), let row = table.row(forPrimaryKey: key._propertyValue)
            else { return nil }
            return FrozenObject(frozen: frozen, tableIndex: table.index, key: table.key(row))
        }
    }

    /// The object an ``AnyValue`` links to (``AnyValue/link(_:)``), or nil when it is not of
    /// type `T` or did not exist in this snapshot.
    public func object<T: Object>(ofType type: T.Type, for link: AnyValue.Link) -> FrozenObject<T>? {
        frozen.withStore { store in
            guard let table = try? store.table(for: type), table.name == link.objectType,
                let row = table.row(for: link.key)
            else { return nil }
            return FrozenObject(frozen: frozen, tableIndex: table.index, key: table.key(row))
        }
    }
}

extension Realm {
    /// An immutable snapshot of the realm's committed state, readable from any actor. During a
    /// write (``beginWrite()``), the state before the write.
    ///
    /// - Complexity: O(types × properties): storage is shared until the live realm changes it;
    ///   plus, during a write, O(changes made so far).
    public func freeze() -> FrozenRealm {
        FrozenRealm(frozen: store.isInWrite ? store.frozenCopy(committed: true) : store.frozenState())
    }
}

extension Results {
    /// An immutable snapshot of the results, readable from any actor.
    ///
    /// - Complexity: O(1) once the results are evaluated (the snapshot shares their rows).
    public func freeze() -> FrozenResults<Element> {
        guard let table else { return FrozenResults(frozen: store.frozenState(), tableIndex: 0, keys: []) }
        return FrozenResults(frozen: store.frozenState(), tableIndex: table.index, rows: rows)
    }
}
