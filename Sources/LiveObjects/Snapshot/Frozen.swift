import LiveObjectsStore

/// An immutable, `Sendable` view of one object at one realm version, readable from any actor
/// without `await`.
///
/// ```swift
/// let rex = try await realm.read { $0.object(ofType: Dog.self, forPrimaryKey: 1)!.freeze() }
/// print(rex.name, rex.age)          // any actor, no await
/// let owner = rex.link(\.owner)     // FrozenObject<Person>?
/// ```
///
/// It stays valid forever, also after the object is deleted in the live realm. Every property
/// reads as a member, as on a frozen Realm object: a `Sendable` value as itself, a link as the
/// target frozen at the same version (`rex.owner?.name`), a `List` or `LinkingObjects` of
/// objects as ``FrozenResults`` and a `List` of values as an array. ``link(_:)`` and `list(_:)`
/// are the same reads spelled as calls.
@dynamicMemberLookup
public struct FrozenObject<Element: Object>: Sendable, CustomStringConvertible, FrozenObjectInput {
    let frozen: FrozenStore
    let tableIndex: Int
    /// The object's key.
    public let key: ObjectKey

    init(frozen: FrozenStore, tableIndex: Int, key: ObjectKey) {
        self.frozen = frozen
        self.tableIndex = tableIndex
        self.key = key
    }

    /// The realm version the object was frozen at.
    public var version: UInt64 { frozen.version }

    private func read<T>(_ body: (Element) -> T) -> T {
        frozen.withStore { store in
            let table = store.tables[tableIndex]
            let object = Element()
            object._handle = ObjectHandle(
                store: store, table: table, row: Int32(bitPattern: key.row), generation: key.generation)
            defer { _ = store.takePendingError() }
            return body(object)
        }
    }

    /// What `body` reads from the object at this version (a section's key from its function).
    func reading<T>(_ body: (Element) -> T) -> T { read(body) }

    /// A persisted property.
    public subscript<V: Sendable>(dynamicMember keyPath: KeyPath<Element, V>) -> V {
        read { $0[keyPath: keyPath] }
    }

    /// A to-one link: the target, frozen at the same version (``link(_:)``).
    public subscript<Target: Object>(dynamicMember keyPath: KeyPath<Element, Target?>) -> FrozenObject<Target>? {
        link(keyPath)
    }

    /// A list of links: its objects, frozen at the same version.
    public subscript<Target: Object>(dynamicMember keyPath: KeyPath<Element, List<Target>>) -> FrozenResults<Target> {
        list(keyPath)
    }

    /// A list of values, as an array.
    public subscript<Value: _PrimitivePersistable & Sendable>(
        dynamicMember keyPath: KeyPath<Element, List<Value>>
    ) -> [Value] {
        list(keyPath)
    }

    /// A set of values, as an array of its members in the set's order.
    public subscript<Value: _PrimitivePersistable & Sendable>(
        dynamicMember keyPath: KeyPath<Element, MutableSet<Value>>
    ) -> [Value] {
        read { Array($0[keyPath: keyPath]) }
    }

    /// A set of objects: its members, frozen at the same version.
    public subscript<Target: Object>(dynamicMember keyPath: KeyPath<Element, MutableSet<Target>>) -> FrozenResults<
        Target
    > {
        read { object in
            let set = object[keyPath: keyPath]
            let keys = set.compactMap { $0.objectKey }
            let table = set.first?._handle?.table.index ?? 0
            return FrozenResults(frozen: frozen, tableIndex: table, keys: keys)
        }
    }

    /// A map of values, as a dictionary.
    public subscript<Value: _PrimitivePersistable & Sendable>(
        dynamicMember keyPath: KeyPath<Element, Map<String, Value>>
    ) -> [String: Value] {
        read { object in
            var values: [String: Value] = [:]
            for (key, value) in object[keyPath: keyPath] { values[key] = value }
            return values
        }
    }

    /// A map of objects, as a dictionary of its targets frozen at the same version (nil for a
    /// key with no object).
    public subscript<Target: Object>(
        dynamicMember keyPath: KeyPath<Element, Map<String, Target?>>
    ) -> [String: FrozenObject<Target>?] {
        read { object in
            var values: [String: FrozenObject<Target>?] = [:]
            for (key, target) in object[keyPath: keyPath] {
                // `updateValue`, so that a key with no object stays (with nil).
                values.updateValue(
                    target?._handle.map {
                        FrozenObject<Target>(frozen: frozen, tableIndex: $0.table.index, key: $0.key)
                    },
                    forKey: key)
            }
            return values
        }
    }

    /// The objects linking here through a `LinkingObjects` property, frozen at the same version.
    public subscript<Origin: Object>(
        dynamicMember keyPath: KeyPath<Element, LinkingObjects<Origin>>
    ) -> FrozenResults<Origin> {
        list(keyPath)
    }

    /// An unmanaged copy of the object and of everything it links to, as they were at the
    /// frozen version: to add to another realm (`other.write(adding: [frozen.detached()])`).
    public func detached() -> sending Element {
        let copy = read { object in DisconnectedCopy(value: object.detached()) }
        return copy.take()
    }

    /// The object's schema.
    package var objectSchema: ObjectSchema { frozen.withStore { $0.tables[tableIndex].schema } }

    /// An object of the same snapshot by type name and key (a link's target, read as it was);
    /// nil when there was none.
    package func object(ofType typeName: String, key: ObjectKey) -> FrozenObject<Object>? {
        frozen.withStore { store in
            guard let table = store.tablesByName[typeName], table.row(for: key) != nil else { return nil }
            return FrozenObject<Object>(frozen: frozen, tableIndex: table.index, key: key)
        }
    }

    /// A property by name, as a dynamic value.
    public func value(forKey name: String) throws(LiveObjectsError) -> PropertyValue {
        let result: Result<PropertyValue, LiveObjectsError> = read { object in
            Result { () throws(LiveObjectsError) in try object.value(forKey: name) }
        }
        return try result.get()
    }

    /// The object a to-one link points to, frozen at the same version.
    public func link<Target: Object>(_ keyPath: KeyPath<Element, Target?>) -> FrozenObject<Target>? {
        read { object in
            guard let target = object[keyPath: keyPath], let handle = target._handle else { return nil }
            return FrozenObject<Target>(frozen: frozen, tableIndex: handle.table.index, key: handle.key)
        }
    }

    /// The objects of a list, frozen at the same version.
    public func list<Target: Object>(_ keyPath: KeyPath<Element, List<Target>>) -> FrozenResults<Target> {
        read { object in
            let list = object[keyPath: keyPath]
            let keys = list.compactMap { $0.objectKey }
            let table = list.first?._handle?.table.index ?? 0
            return FrozenResults(frozen: frozen, tableIndex: table, keys: keys)
        }
    }

    /// The values of a list of primitives, frozen at the same version.
    public func list<Value: _PrimitivePersistable & Sendable>(_ keyPath: KeyPath<Element, List<Value>>) -> [Value] {
        read { Array($0[keyPath: keyPath]) }
    }

    /// The objects linking here through a `LinkingObjects` property, frozen at the same version.
    public func list<Origin: Object>(_ keyPath: KeyPath<Element, LinkingObjects<Origin>>) -> FrozenResults<Origin> {
        read { object in
            let origins = object[keyPath: keyPath]
            let keys = origins.compactMap { $0.objectKey }
            let table = origins.first?._handle?.table.index ?? 0
            return FrozenResults(frozen: frozen, tableIndex: table, keys: keys)
        }
    }

    func unmanagedCopy() -> Object { detached() }

    public var description: String {
        frozen.withStore { store in
            let table = store.tables[tableIndex]
            guard let row = table.row(for: key) else { return "\(table.name) <invalidated>" }
            let body = table.schema.properties.enumerated().filter { $0.element.isStored }.map {
                "\($0.element.name) = \(table.value(row, $0.offset))"
            }
            return "\(table.name) { " + body.joined(separator: "; ") + " }"
        }
    }
}

/// An immutable, `Sendable` list of objects at one realm version: the snapshot carried by
/// change notifications, and what `freeze()` on results and lists returns.
public struct FrozenResults<Element: Object>: RandomAccessCollection, Sendable {
    let frozen: FrozenStore
    let tableIndex: Int
    private let storage: Storage

    private enum Storage: Sendable {
        case keys([ObjectKey])
        /// Rows of the frozen table, shared with the subscription that made the snapshot.
        case rows(RowList)
        /// Rows of the frozen table, shared with the results that made the snapshot.
        case rowArray([Int32])
        /// The first rows of the frozen table, every one live: a whole table without deletions.
        case firstRows(Int)
    }

    init(frozen: FrozenStore, tableIndex: Int, keys: [ObjectKey]) {
        self.frozen = frozen
        self.tableIndex = tableIndex
        self.storage = .keys(keys)
    }

    init(frozen: FrozenStore, tableIndex: Int, rows: RowList) {
        self.frozen = frozen
        self.tableIndex = tableIndex
        self.storage = .rows(rows)
    }

    init(frozen: FrozenStore, tableIndex: Int, rows: [Int32]) {
        self.frozen = frozen
        self.tableIndex = tableIndex
        self.storage = .rowArray(rows)
    }

    /// Every object of a frozen table, in storage order, without copying its rows when no
    /// slot of it is free.
    init(frozen: FrozenStore, wholeTable table: Table) {
        self.frozen = frozen
        self.tableIndex = table.index
        self.storage = table.liveCount == table.rowCount ? .firstRows(table.rowCount) : .rowArray(table.liveRows)
    }

    /// The row of the frozen table at a position.
    private func row(at position: Int) -> Int32 {
        switch storage {
        case .keys: preconditionFailure("a snapshot of keys has no rows")
        case .rows(let rows): return rows[position]
        case .rowArray(let rows): return rows[position]
        case .firstRows(let count):
            precondition(position >= 0 && position < count, "Index out of range")
            return Int32(position)
        }
    }

    /// The keys of the objects, in order.
    ///
    /// - Complexity: O(n), except for a snapshot made from keys.
    public var keys: [ObjectKey] {
        if case .keys(let keys) = storage { return keys }
        return frozen.withStore { store in
            let table = store.tables[tableIndex]
            return (0..<endIndex).map { table.key(row(at: $0)) }
        }
    }

    /// The realm version of the snapshot.
    public var version: UInt64 { frozen.version }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        switch storage {
        case .keys(let keys): keys.count
        case .rows(let rows): rows.count
        case .rowArray(let rows): rows.count
        case .firstRows(let count): count
        }
    }

    /// The key of the object at a position.
    public func key(at position: Int) -> ObjectKey {
        if case .keys(let keys) = storage { return keys[position] }
        let row = row(at: position)
        return frozen.withStore { $0.tables[tableIndex].key(row) }
    }

    /// - Complexity: O(log n).
    public subscript(position: Int) -> FrozenObject<Element> {
        FrozenObject(frozen: frozen, tableIndex: tableIndex, key: key(at: position))
    }
}

/// Model objects that can be frozen; every `Object` is.
public protocol _Freezable {}
extension Object: _Freezable {}

extension _Freezable where Self: Object {
    /// An immutable snapshot of the object, readable from any actor. Nil for an unmanaged or
    /// deleted object.
    public func freeze() -> FrozenObject<Self>? {
        guard let handle = _handle, handle.isValid else { return nil }
        return FrozenObject(frozen: handle.store.frozenState(), tableIndex: handle.table.index, key: handle.key)
    }
}

extension Store {
    /// A frozen copy of the current state, shared until the store changes.
    func frozenState() -> FrozenStore {
        if let cached = frozenCache, cached.mutationCount == mutationCount {
            return unsafeDowncast(cached.frozen, to: FrozenStore.self)
        }
        let frozen = frozenCopy()
        frozenCache = (mutationCount, frozen)
        return frozen
    }

    /// Lets go of the last frozen copy (``frozenCache``) when nothing but the store holds it:
    /// called when a write opens.
    ///
    /// While the copy shares the columns, the write's first change of a column copies the
    /// column's list of chunks (a retain per chunk: O(rows / 4,096)), and the commit's new copy
    /// then frees the old one, releasing them all again. Let go before the write, the copy
    /// releases one reference per array and the write changes the columns in place. A copy that
    /// a frozen object or result still holds stays the cache: sharing with it is needed anyway,
    /// and a write that changes nothing leaves it current.
    func releaseUnsharedFrozenCopy() {
        // Taken out of the store and cast without a copy left behind, so that the check counts
        // only the other holders (the check needs the class; an `AnyObject` is never unique).
        var taken: (mutationCount: UInt64, frozen: AnyObject)?
        swap(&taken, &frozenCache)
        guard let mutationCount = taken?.mutationCount else { return }
        var frozen = taken.map { unsafeDowncast($0.frozen, to: FrozenStore.self) }
        taken = nil
        if !isKnownUniquelyReferenced(&frozen), let frozen { frozenCache = (mutationCount, frozen) }
    }
}
