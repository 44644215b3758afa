import LiveObjectsStore

/// An object addressed by type and property names, with dynamic values: the API of the shell,
/// migrations and persistence.
///
/// Like a model object it is a live handle, valid inside its realm's isolation only.
public struct DynamicObject: CustomStringConvertible {
    let handle: ObjectHandle

    init(handle: ObjectHandle) {
        self.handle = handle
    }

    /// The dynamic view of a managed object, such as an element of ``Realm/dynamicResults(_:)``;
    /// nil for an unmanaged object.
    public init?(_ object: Object) {
        guard let handle = object._handle else { return nil }
        self.handle = handle
    }

    /// The name of the object's type.
    public var typeName: String { handle.table.name }

    /// The object's key.
    public var key: ObjectKey { handle.key }

    /// The schema of the object's type.
    public var objectSchema: ObjectSchema { handle.table.schema }

    /// Whether the object was deleted.
    public var isInvalidated: Bool { !handle.isValid }

    /// The value of a property (`LinkingObjects` as a list of keys).
    ///
    /// - Throws: `unknownProperty`, `objectInvalidated`.
    public func value(_ property: String) throws(LiveObjectsError) -> PropertyValue {
        guard handle.isValid else { throw handle.invalidated(property: property) }
        return handle.table.value(handle.row, try index(property))
    }

    /// The value of a property, or `.null` for an unknown property or a deleted object.
    ///
    /// Setting it, inside a write or a migration, is ``set(_:to:)`` for code that cannot
    /// throw there: an error is recorded and thrown by the enclosing write or migration, which
    /// then changes nothing.
    public subscript(property: String) -> PropertyValue {
        get { (try? value(property)) ?? .null }
        nonmutating set {
            do {
                try set(property, to: newValue)
            } catch {
                handle.store.recordError(error)
            }
        }
    }

    /// The value of a property as a Swift type: `old["name", as: String.self]`. `nil` for
    /// `null`, an unknown property, a deleted object, or a value of another type (an integer
    /// that does not fit, say).
    public subscript<Value: PropertyValueReadable>(property: String, as type: Value.Type) -> Value? {
        Value(propertyValue: self[property])
    }

    /// Every property's value by name.
    public var values: [String: PropertyValue] {
        guard handle.isValid else { return [:] }
        var result: [String: PropertyValue] = [:]
        for (i, p) in handle.table.schema.properties.enumerated() {
            result[p.name] = handle.table.value(handle.row, i)
        }
        return result
    }

    /// The object a to-one link points to.
    public func linkedObject(_ property: String) throws(LiveObjectsError) -> DynamicObject? {
        let p = try index(property)
        guard case .object(let key) = try value(property) else { return nil }
        return target(p).flatMap { t in t.row(for: key).map { DynamicObject(row: $0, table: t, handle: handle) } }
    }

    /// The objects of a list of links or a `LinkingObjects` property.
    public func linkedObjects(_ property: String) throws(LiveObjectsError) -> [DynamicObject] {
        let p = try index(property)
        guard case .list(let items) = try value(property), let t = target(p) else { return [] }
        return items.compactMap {
            $0.objectKey.flatMap { t.row(for: $0) }.map { DynamicObject(row: $0, table: t, handle: handle) }
        }
    }

    /// The entries of a map of objects in the order of their keys, each with its object (nil for
    /// a key with no object); none for another property.
    package func linkedObjectMap(_ property: String) throws(LiveObjectsError) -> [(key: String, object: DynamicObject?)]
    {
        let p = try index(property)
        guard case .list(let pairs) = try value(property), let t = target(p) else { return [] }
        return pairs.compactMap { pair in
            guard case .list(let entry) = pair, entry.count == 2, case .string(let key) = entry[0] else { return nil }
            let object = entry[1].objectKey.flatMap { t.row(for: $0) }.map {
                DynamicObject(row: $0, table: t, handle: handle)
            }
            return (key, object)
        }
    }

    /// Sets a stored property, inside a write. A link can be given as `.object(key)` or as the
    /// target's primary key; a list as `.list(...)`.
    ///
    /// - Throws: `notInWriteTransaction`, `unknownProperty`, `typeMismatch`, `primaryKeyChange`,
    ///   `objectInvalidated`, `embeddedObjectAlreadyOwned`. On error nothing changes.
    public func set(_ property: String, to value: PropertyValue) throws(LiveObjectsError) {
        try mutate(property) { (p) throws(LiveObjectsError) in
            try handle.store.set(
                .value(value), handle.table, handle.row, p, context: AddContext(update: .error), force: false)
        }
    }

    /// Creates an embedded object from property values and sets it on a to-one link (replacing
    /// and deleting the old one) or appends it to a list.
    public func setEmbedded(_ property: String, values: [String: PropertyValue]) throws(LiveObjectsError)
        -> DynamicObject
    {
        var created: DynamicObject?
        try mutate(property) { (p) throws(LiveObjectsError) in
            let input = Input.dictionary(values.mapValues { .value($0) })
            let context = AddContext(update: .error)
            guard let target = target(p), target.schema.isEmbedded else {
                throw LiveObjectsError(
                    .invalidOperation, "the property does not hold embedded objects", objectType: typeName,
                    property: property)
            }
            if handle.table.schema.properties[p].isList {
                try handle.store.insertElement(
                    input, handle.table, handle.row, p, at: handle.store.listCount(handle.table, handle.row, p),
                    context: context)
                let list = handle.table.linkListColumn(p)
                created = DynamicObject(row: list.lists[Int(handle.row)].last!, table: target, handle: handle)
            } else {
                try handle.store.set(input, handle.table, handle.row, p, context: context, force: false)
                let link = handle.table.linkColumn(p)
                created = DynamicObject(row: link.targets[Int(handle.row)], table: target, handle: handle)
            }
        }
        return created!
    }

    /// Creates an embedded object from property values and sets it as the value of `key` in a
    /// map of embedded objects (deleting the object the key held).
    ///
    /// - Throws: `invalidOperation` for a property that is not a map of embedded objects, and as
    ///   ``set(_:to:)``.
    public func setEmbedded(_ property: String, key: String, values: [String: PropertyValue])
        throws(LiveObjectsError) -> DynamicObject
    {
        var created: DynamicObject?
        try mutate(property) { (p) throws(LiveObjectsError) in
            guard let target = target(p), target.schema.isEmbedded, handle.table.schema.properties[p].isMap else {
                throw LiveObjectsError(
                    .invalidOperation, "the property is not a map of embedded objects", objectType: typeName,
                    property: property)
            }
            let store = handle.store
            try store.mapSet(
                .dictionary(values.mapValues { .value($0) }), for: key, handle.table, handle.row, p,
                context: AddContext(update: .error))
            let (index, _) = store.mapPosition(of: key, handle.table, handle.row, p)
            created = DynamicObject(
                row: handle.table.linkListColumn(p).lists[Int(handle.row)][index], table: target, handle: handle)
        }
        return created!
    }

    /// Inserts an element into a list property.
    public func insert(_ value: PropertyValue, into property: String, at index: Int) throws(LiveObjectsError) {
        try mutate(property) { (p) throws(LiveObjectsError) in
            try handle.store.insertElement(
                .value(value), handle.table, handle.row, p, at: index, context: AddContext(update: .error))
        }
    }

    /// Appends an element to a list property.
    public func append(_ value: PropertyValue, to property: String) throws(LiveObjectsError) {
        try mutate(property) { (p) throws(LiveObjectsError) in
            try handle.store.insertElement(
                .value(value), handle.table, handle.row, p, at: handle.store.listCount(handle.table, handle.row, p),
                context: AddContext(update: .error))
        }
    }

    /// Removes an element from a list property.
    public func remove(from property: String, at index: Int) throws(LiveObjectsError) {
        try mutate(property) { (p) throws(LiveObjectsError) in
            try handle.store.removeElement(handle.table, handle.row, p, at: index)
        }
    }

    /// Moves an element of a list property.
    public func move(in property: String, from: Int, to: Int) throws(LiveObjectsError) {
        try mutate(property) { (p) throws(LiveObjectsError) in
            try handle.store.moveElement(handle.table, handle.row, p, from: from, to: to)
        }
    }

    /// Replaces an element of a list property.
    public func replace(in property: String, at index: Int, with value: PropertyValue) throws(LiveObjectsError) {
        try mutate(property) { (p) throws(LiveObjectsError) in
            try handle.store.replaceElement(
                .value(value), handle.table, handle.row, p, at: index, context: AddContext(update: .error))
        }
    }

    public var description: String {
        guard handle.isValid else { return "\(typeName) <invalidated>" }
        let body = handle.table.schema.properties.enumerated().map { i, p in
            "\(p.name) = \(handle.table.value(handle.row, i))"
        }
        return "\(typeName) { " + body.joined(separator: "; ") + " }"
    }

    private init(row: Int32, table: Table, handle: ObjectHandle) {
        self.handle = ObjectHandle(store: handle.store, table: table, row: row, generation: table.generation(row))
    }

    private func index(_ property: String) throws(LiveObjectsError) -> Int {
        guard let p = handle.table.propertyIndex[property] else {
            throw LiveObjectsError(
                .unknownProperty, "there is no property '\(property)'", objectType: typeName, property: property)
        }
        return p
    }

    private func target(_ p: Int) -> Table? {
        _AccessContext(handle: handle, property: p).targetTable
    }

    private func mutate(_ property: String, _ body: (Int) throws(LiveObjectsError) -> Void) throws(LiveObjectsError) {
        let p = try index(property)
        guard handle.isValid else { throw handle.invalidated(property: property) }
        try handle.store.requireWrite(handle.table, property: property)
        let savepoint = handle.store.makeSavepoint()
        do {
            try body(p)
        } catch {
            handle.store.rollback(to: savepoint)
            throw error
        }
    }
}

extension DynamicObject {
    /// A dynamic handle on a row of a store, for other modules (migrations).
    package init(store: Store, table: Table, row: Int32) {
        self.init(handle: ObjectHandle(store: store, table: table, row: row, generation: table.generation(row)))
    }
}

/// All objects of a type, addressed by name: a lazy, live collection of ``DynamicObject``.
public struct DynamicResults: RandomAccessCollection {
    let store: Store
    let table: Table

    public var startIndex: Int { 0 }

    /// - Complexity: O(1).
    public var endIndex: Int { table.liveCount }

    public subscript(position: Int) -> DynamicObject {
        let row = table.liveCount == table.rowCount ? Int32(position) : table.liveRows[position]
        return DynamicObject(
            handle: ObjectHandle(store: store, table: table, row: row, generation: table.generation(row)))
    }
}

extension Realm {
    /// All objects of a named type.
    ///
    /// - Throws: `unknownType`.
    public func dynamicObjects(_ typeName: String) throws(LiveObjectsError) -> DynamicResults {
        DynamicResults(store: store, table: try store.table(named: typeName))
    }

    /// All objects of a named type as ``Results``, to filter, sort, limit and observe by name.
    /// The elements are plain `Object` handles: read them through ``DynamicObject/init(_:)``
    /// or `value(forKey:)`.
    ///
    /// ```swift
    /// let young = try realm.dynamicResults("Dog").filter("age < %@", 3).sorted(by: [SortField("name")])
    /// ```
    ///
    /// - Throws: `unknownType`.
    public func dynamicResults(_ typeName: String) throws(LiveObjectsError) -> Results<Object> {
        Results(store: store, table: try store.table(named: typeName))
    }

    /// The object of a named type with a primary key, or nil.
    ///
    /// - Throws: `unknownType`, `typeMismatch` for a key of the wrong type.
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: PropertyValue)
        throws(LiveObjectsError) -> DynamicObject?
    {
        let table = try store.table(named: typeName)
        guard let pk = table.primaryKeyProperty else {
            throw LiveObjectsError(.invalidOperation, "the type has no primary key", objectType: typeName)
        }
        let checked = try store.check(key, for: table.schema.properties[pk], in: table)
        return table.row(forPrimaryKey: checked).map { dynamicObject(table, $0) }
    }

    /// The object of a named type with a key, or nil if it no longer exists.
    public func dynamicObject(ofType typeName: String, key: ObjectKey) throws(LiveObjectsError) -> DynamicObject? {
        let table = try store.table(named: typeName)
        return table.row(for: key).map { dynamicObject(table, $0) }
    }

    /// Creates an object of a named type from property values (links by key or primary key),
    /// inside a write.
    ///
    /// - Throws: as ``create(_:value:update:)``.
    @discardableResult
    public func dynamicCreate(
        _ typeName: String, value: [String: PropertyValue], update: UpdatePolicy = .error
    ) throws(LiveObjectsError) -> DynamicObject {
        try store.requireWrite()
        let table = try store.table(named: typeName)
        guard !table.schema.isEmbedded else {
            throw LiveObjectsError(
                .invalidOperation, "an embedded object is created through its parent",
                objectType: typeName)
        }
        let row = try atomically { () throws(LiveObjectsError) in
            try store.create(
                table, from: .dictionary(value.mapValues { .value($0) }), context: AddContext(update: update))
        }
        return dynamicObject(table, row)
    }

    /// Deletes an object addressed dynamically; see ``delete(_:)-(Object)``.
    public func delete(_ object: DynamicObject) throws(LiveObjectsError) {
        try store.requireWrite()
        guard object.handle.store === store else {
            throw LiveObjectsError(.wrongRealm, "the object belongs to another realm", objectType: object.typeName)
        }
        guard let row = object.handle.validRow else { throw object.handle.invalidated() }
        try atomically { () throws(LiveObjectsError) in try store.delete([(object.handle.table, row)]) }
    }

    /// Deletes every object of a named type.
    public func deleteAll(_ typeName: String) throws(LiveObjectsError) {
        try store.requireWrite()
        let table = try store.table(named: typeName)
        try atomically { () throws(LiveObjectsError) in try store.deleteAll(table) }
    }

    private func dynamicObject(_ table: Table, _ row: Int32) -> DynamicObject {
        DynamicObject(handle: ObjectHandle(store: store, table: table, row: row, generation: table.generation(row)))
    }
}
