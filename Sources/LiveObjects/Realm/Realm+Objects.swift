import Foundation
import LiveObjectsStore

extension Realm {
    // MARK: Adding and creating

    /// Adds an unmanaged object, and the unmanaged objects it links to, inside a write. The
    /// object (and they) become managed.
    ///
    /// Adding an object that is already managed by this realm does nothing.
    ///
    /// - Parameters:
    ///   - object: The object to add.
    ///   - update: What to do when an object with the same primary key exists.
    /// - Throws: `notInWriteTransaction`, `duplicatePrimaryKey` (with `.error`), `typeMismatch`,
    ///   `unknownType` for a class that is not in the configuration, `invalidOperation` for an
    ///   embedded object (add it through its parent). On error nothing is added.
    public func add(_ object: Object, update: UpdatePolicy = .error) throws(LiveObjectsError) {
        try store.requireWrite()
        let table = try store.table(for: type(of: object))
        guard !table.schema.isEmbedded else {
            throw LiveObjectsError(
                .invalidOperation, "an embedded object is added by setting it on its parent",
                objectType: table.name)
        }
        try atomically { () throws(LiveObjectsError) in
            _ = try store.create(table, from: .object(object), context: AddContext(update: update))
        }
    }

    /// Adds a sequence of objects; see ``add(_:update:)``. Either all are added or none.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) throws(LiveObjectsError)
    where S.Element: Object {
        try store.requireWrite()
        try atomically { () throws(LiveObjectsError) in
            for object in objects { try add(object, update: update) }
        }
    }

    /// Creates an object from a value, inside a write, and returns it managed.
    ///
    /// The value can be a dictionary of property values by name (missing properties take their
    /// defaults), an array of values in property order, or another object, managed or not, or
    /// frozen (copying it and the objects it links to). Links can be given as objects, as
    /// dictionaries or arrays (creating the target), or as the target's primary key.
    ///
    /// ```swift
    /// let rex = try realm.create(Dog.self, value: ["id": 1, "name": "Rex", "owner": ["id": 7, "name": "Ann"]])
    /// try realm.create(Dog.self, value: ["id": 1, "age": 4], update: .modified)  // upsert
    /// ```
    ///
    /// A frozen object is `Sendable`, so copying an object from another realm is one write:
    /// `try await archive.write { try $0.create(Dog.self, value: frozenRex, update: .modified) }`.
    ///
    /// - Throws: `notInWriteTransaction`, `duplicatePrimaryKey` (with `.error`), `missingValue`
    ///   (no primary key), `unknownProperty`, `typeMismatch`, `invalidOperation` for an
    ///   embedded type. On error nothing is created.
    @discardableResult
    public func create<T: Object>(
        _ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error
    ) throws(LiveObjectsError) -> T {
        try store.requireWrite()
        let table = try store.table(for: type)
        guard !table.schema.isEmbedded else {
            throw LiveObjectsError(
                .invalidOperation, "an embedded object is created by setting it on its parent",
                objectType: table.name)
        }
        let input = try Input(any: value, objectType: table.name)
        let row = try atomically { () throws(LiveObjectsError) in
            try store.create(table, from: input, context: AddContext(update: update))
        }
        let object = T()
        object._handle = ObjectHandle(
            store: store, table: table, row: row, generation: table.generation(row))
        return object
    }

    // MARK: Deleting

    /// Deletes an object, applying delete rules (see ``DeleteRule``): embedded children and
    /// cascade targets go too, links to it are removed.
    ///
    /// - Throws: `notInWriteTransaction`, `objectInvalidated`, `wrongRealm`, `deleteDenied`
    ///   (nothing is deleted), `invalidOperation` for an unmanaged object.
    public func delete(_ object: Object) throws(LiveObjectsError) {
        try delete([object])
    }

    /// Deletes a sequence of objects at once (delete rules see them as one deletion).
    public func delete<S: Sequence>(_ objects: S) throws(LiveObjectsError) where S.Element: Object {
        try store.requireWrite()
        var rows: [(Table, Int32)] = []
        for object in objects { rows.append(try managedRow(object)) }
        try atomically { () throws(LiveObjectsError) in try store.delete(rows) }
    }

    /// Deletes every object of a type.
    public func deleteAll<T: Object>(_ type: T.Type) throws(LiveObjectsError) {
        try store.requireWrite()
        let table = try store.table(for: type)
        try atomically { () throws(LiveObjectsError) in try store.deleteAll(table) }
    }

    /// Deletes every object of every type.
    public func deleteAll() throws(LiveObjectsError) {
        try store.requireWrite()
        try atomically { () throws(LiveObjectsError) in try store.deleteAll() }
    }

    // MARK: Reading

    /// All objects of a type, as a lazy, live collection.
    ///
    /// For a type that is not part of the realm the result is empty and the enclosing
    /// ``read(_:)`` or ``write(_:)`` throws `unknownType`.
    public func objects<T: Object>(_ type: T.Type) -> Results<T> {
        do {
            return Results(store: store, table: try store.table(for: type))
        } catch {
            store.recordError(error)
            return Results(store: store, table: nil)
        }
    }

    /// The object with a primary key, or nil.
    ///
    /// Integer keys given in creation order (auto-incremented ids) are found by their position
    /// alone, without reading an index; the lookup also starts loading the object's first
    /// properties, so that reading them right after does not wait for each in turn.
    ///
    /// - Complexity: O(1).
    @inlinable
    public func object<T: Object, Key: _PrimitivePersistable>(ofType type: T.Type, forPrimaryKey key: Key)
        -> T?
    {
        Self._object(type, forPrimaryKey: key, in: store)
    }

    /// The lookup of ``object(ofType:forPrimaryKey:)``, compiled into the caller with its types
    /// known: no generic calls through witness tables, and, as a static function of the actor,
    /// not isolated, so that the closure it hands the borrowed table to carries no check of the
    /// executor it runs on (the caller is inside the realm's isolation already).
    @inlinable @inline(__always)
    static func _object<T: Object, Key: _PrimitivePersistable>(
        _ type: T.Type, forPrimaryKey key: Key, in store: Store
    ) -> T? {
        // The table borrowed, not retained: a retain and a release are atomic operations,
        // which wait for the loads in flight (the row's values asked for ahead among them).
        guard let table = store.unretainedTable(for: type) else {
            _unknownType(T.self, in: store)
            return nil
        }
        return table._withUnsafeGuaranteedRef { table in
            guard case .int(let k) = key._propertyValue else {
                guard let row = _row(forPrimaryKey: key, in: table) else { return nil }
                return _object(T.self, store, table, row, table.generation(row))
            }
            // The index holds the generation too: no slot-state read, and the handle is known
            // valid until the store changes.
            guard let (row, generation) = table.entry(forPrimaryKey: k) else { return nil }
            table.prefetch(row: row)
            return _object(T.self, store, table, row, generation)
        }
    }

    /// The row of a key that is not an integer (a string, a UUID, an object ID).
    @usableFromInline
    static func _row<Key: _PrimitivePersistable>(forPrimaryKey key: Key, in table: Table) -> Int32? {
        table.row(forPrimaryKey: key._propertyValue)
    }

    /// Records `unknownType` for a lookup of a type the realm was not opened with.
    @usableFromInline @inline(never)
    static func _unknownType(_ type: Object.Type, in store: Store) {
        store.recordError(
            LiveObjectsError(.unknownType, "the type is not part of this realm", objectType: type.className))
    }

    /// A managed object of a live row, its handle known valid at the store's mutation count.
    @inlinable @inline(__always)
    static func _object<T: Object>(
        _ type: T.Type, _ store: Store, _ table: Table, _ row: Int32, _ generation: UInt32
    ) -> T {
        let object = T()
        object._handle = ObjectHandle(
            store: store, table: table, row: row, generation: generation, validAt: store.mutationCount)
        return object
    }

    /// The object an ``AnyValue`` links to (``AnyValue/link(_:)``), or nil when it is not of
    /// type `T` or no longer exists.
    ///
    /// ```swift
    /// if let link = note.payload.link, let dog = realm.object(ofType: Dog.self, for: link) { print(dog.name) }
    /// ```
    ///
    /// - Complexity: O(1).
    public func object<T: Object>(ofType type: T.Type, for link: AnyValue.Link) -> T? {
        guard let table = try? store.table(for: type), table.name == link.objectType,
            let row = table.row(for: link.key)
        else { return nil }
        let object = T()
        object._handle = ObjectHandle(
            store: store, table: table, row: row, generation: table.generation(row), validAt: store.mutationCount)
        return object
    }

    // MARK: Helpers

    /// Runs `body`; if it throws, undoes what it changed (the rest of the write stays).
    package func atomically<R, Failure: Error>(_ body: () throws(Failure) -> R) throws(Failure) -> R {
        let savepoint = store.makeSavepoint()
        do {
            return try body()
        } catch {
            store.rollback(to: savepoint)
            throw error
        }
    }

    func managedRow(_ object: Object) throws(LiveObjectsError) -> (Table, Int32) {
        guard let handle = object._handle else {
            throw LiveObjectsError(
                .invalidOperation, "the object is not managed by a realm",
                objectType: type(of: object).className)
        }
        guard handle.store === store else {
            throw LiveObjectsError(
                .wrongRealm, "the object belongs to another realm", objectType: handle.table.name)
        }
        guard let row = handle.validRow else { throw handle.invalidated() }
        return (handle.table, row)
    }
}

extension Input {
    /// Converts a loosely typed value (dictionaries, arrays, Swift primitives, objects) to input.
    init(any value: Any, objectType: String) throws(LiveObjectsError) {
        switch value {
        case let v as PropertyValue: self = .value(v)
        case let v as Object: self = .object(v)
        case let v as any FrozenObjectInput: self = .object(v.unmanagedCopy())
        case let v as [String: Any]:
            var dict: [String: Input] = [:]
            for (k, item) in v { dict[k] = try Input(any: item, objectType: objectType) }
            self = .dictionary(dict)
        case let v as [Any]:
            var items: [Input] = []
            for item in v { items.append(try Input(any: item, objectType: objectType)) }
            self = .array(items)
        case let v as Bool: self = .value(.bool(v))
        case let v as Int: self = .value(.int(Int64(v)))
        case let v as Int8: self = .value(.int(Int64(v)))
        case let v as Int16: self = .value(.int(Int64(v)))
        case let v as Int32: self = .value(.int(Int64(v)))
        case let v as Int64: self = .value(.int(v))
        case let v as Float: self = .value(.float(v))
        case let v as Double: self = .value(.double(v))
        case let v as String: self = .value(.string(v))
        case let v as Date: self = .value(.date(v))
        case let v as Data: self = .value(.data(v))
        case let v as UUID: self = .value(.uuid(v))
        case let v as Decimal: self = .value(.decimal(v))
        case let v as ObjectID: self = .value(.objectID(v))
        case let v as AnyValue: self = .value(v.propertyValue)
        case is NSNull: self = .value(.null)
        case let v as any _Persistable: self = v._encode().input
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                if let wrapped = mirror.children.first?.value {
                    self = try Input(any: wrapped, objectType: objectType)
                } else {
                    self = .value(.null)
                }
                return
            }
            throw LiveObjectsError(
                .typeMismatch, "cannot store a value of type \(type(of: value))",
                objectType: objectType)
        }
    }
}
