import LiveObjectsStore

/// Where a managed object lives: its store, table, slot and generation.
@usableFromInline
package struct ObjectHandle {
    // Unowned: handles exist only inside their realm's isolation, where the realm (and so its
    // store and tables) is alive; frozen handles live inside their frozen store's lock. Strong
    // references would cost two reference-count operations per copy, and a handle is copied
    // on every property access.
    @usableFromInline package unowned(unsafe) let store: Store
    @usableFromInline package unowned(unsafe) let table: Table
    @usableFromInline package let row: Int32
    @usableFromInline package let generation: UInt32
    /// The store's mutation count when the handle was last known valid: while it has not
    /// changed, nothing was deleted and the slot-state check can be skipped.
    @usableFromInline var validAt: UInt64

    @inlinable
    package init(store: Store, table: Table, row: Int32, generation: UInt32, validAt: UInt64 = .max) {
        self.store = store
        self.table = table
        self.row = row
        self.generation = generation
        self.validAt = validAt
    }

    /// Whether the object still exists.
    @inlinable @inline(__always)
    package var isValid: Bool { table.isValid(row, generation: generation) }

    /// The row, if the object still exists.
    var validRow: Int32? { isValid ? row : nil }

    /// The object's key.
    package var key: ObjectKey { ObjectKey(row: UInt32(bitPattern: row), generation: generation) }

    /// The error for using a deleted object.
    package func invalidated(property: String? = nil) -> LiveObjectsError {
        LiveObjectsError(
            .objectInvalidated, "the object was deleted or its creation was rolled back",
            objectType: table.name, property: property)
    }
}

/// Where a property of a managed object lives; handed to `_Persistable` conformances.
///
/// Not for direct use.
public struct _AccessContext {
    @usableFromInline package let handle: ObjectHandle
    @usableFromInline package let property: Int

    @usableFromInline static var unresolved: Int { -1 }
    @usableFromInline static var invalid: Int { -2 }

    /// Whether the property is known (not yet known the first time a type's property is used).
    @inlinable var isResolved: Bool { property != -1 }

    /// Whether the property can be read or written (false for a deleted object).
    @inlinable var isUsable: Bool { property >= 0 }

    /// The undo-log position to roll back to if a write through this context fails.
    @usableFromInline var savepoint: Savepoint { handle.store.makeSavepoint() }

    /// Undoes a failed write and records its error for the enclosing realm call.
    @usableFromInline func failed(_ error: any Error, rollingBackTo savepoint: Savepoint) {
        let store = handle.store
        if store.isInWrite { store.rollback(to: savepoint) }
        if let error = error as? LiveObjectsError { store.recordError(error) }
    }

    @usableFromInline package init(handle: ObjectHandle, property: Int) {
        self.handle = handle
        self.property = property
    }

    /// The stored value of the property.
    @usableFromInline var storedValue: PropertyValue { handle.table.value(handle.row, property) }

    /// The stored value of a non-optional scalar property read straight from its column, or
    /// nil when the column is not of that kind.
    @inlinable @inline(__always)
    func scalar<T: ColumnElement>(_ type: T.Type, _ kind: ScalarKind) -> T? {
        let row = Int(handle.row)
        guard let column = handle.table.unretainedColumns[property] else { return nil }
        return column._withUnsafeGuaranteedRef { column in
            guard column.scalarKind == kind else { return nil }
            return unsafeDowncast(column, to: ScalarColumn<T>.self).values.element(at: row)
        }
    }

    /// The object a to-one link property holds: `.some(nil)` for a nil link, nil when the
    /// property is not a to-one link. Read from the link column, with the target's first
    /// properties starting to load into the cache (a link is read to read its target).
    @inline(__always)
    func linkedObject() -> ObjectHandle?? {
        guard let column = handle.table.unretainedColumns[property] else { return nil }
        return column._withUnsafeGuaranteedRef { column -> ObjectHandle?? in
            guard column.isLinkColumn else { return nil }
            let links = unsafeDowncast(column, to: LinkColumn.self)
            let row = links.targets.element(at: Int(handle.row))
            guard row >= 0 else { return .some(nil) }
            return Unmanaged.passUnretained(links.target)._withUnsafeGuaranteedRef { target in
                target.prefetchElement(row: row)
                // A link never points to a deleted object: the target is valid now.
                let now = Unmanaged.passUnretained(handle.store)._withUnsafeGuaranteedRef { $0.mutationCount }
                return ObjectHandle(
                    store: handle.store, table: target, row: row, generation: target.generation(ofLiveRow: row),
                    validAt: now)
            }
        }
    }

    /// The table that a link property points to.
    package var targetTable: Table? {
        switch handle.table.columns[property] {
        case let c as LinkColumn: c.target
        case let c as LinkListColumn: c.target
        default: handle.table.linkingObjectsSources[property]?.source
        }
    }

    /// The schema of the property.
    package var schema: Property { handle.table.schema.properties[property] }
}

/// A value on its way into a realm; made by `_Persistable` conformances.
///
/// Not for direct use.
public struct _Input {
    package let input: Input
    package init(_ input: Input) { self.input = input }
}

/// The stored shape of a Swift property type; made by `_Persistable` conformances.
///
/// Not for direct use.
public struct _PropertyTemplate: Sendable {
    package var type: PropertyType
    package var isOptional: Bool
    package var isList: Bool
    /// Whether the property is a `MutableSet` (``isList`` is then true too).
    package var isSet = false
    /// Whether the property is a `Map` (``isList`` is then true too).
    package var isMap = false
    package var objectType: String?
    /// For an enum (``PersistableEnum``): the raw values of its cases, the only values the
    /// property (or its list's elements) may hold, besides nil when optional.
    var allowedValues: [PropertyValue]?
    /// For an enum: its Swift name, for errors.
    package var enumName: String?
    /// For a ``FailableCustomPersistable`` type: whether it makes a value from a stored one,
    /// the only values the property (or its list's elements) may hold, besides nil.
    var accepts: (@Sendable (PropertyValue) -> Bool)?
    /// For a ``FailableCustomPersistable`` type: its Swift name, for errors.
    var customTypeName: String?

    package init(type: PropertyType, isOptional: Bool = false, isList: Bool = false, objectType: String? = nil) {
        self.type = type
        self.isOptional = isOptional
        self.isList = isList
        self.objectType = objectType
    }
}
