import Foundation
import LiveObjects

/// A migration closure: called at open when the file's schema version is lower than the
/// configuration's, after the automatic changes. An error it throws makes the open fail and
/// leaves the file untouched.
public typealias MigrationBlock = @Sendable (_ migration: Migration) throws -> Void

/// An object of the file as it was before the migration: its key and its values by property
/// name (links as `.object(key)`; keys are the same in the old and the new data).
public struct MigrationObject: Sendable, Hashable {
    /// The object's type name.
    public let typeName: String
    /// The object's key, the same as that of its new counterpart.
    public let key: ObjectKey
    /// The values of the old schema's stored properties, by name.
    public let values: [String: PropertyValue]

    /// The old value of a property, or `.null` if the old schema has no such property.
    public subscript(property: String) -> PropertyValue { values[property] ?? .null }

    /// The value of a property as a Swift type: `old["name", as: String.self]`; `nil` for
    /// `null`, a property the old schema did not have, or a value of another type.
    public subscript<Value: PropertyValueReadable>(property: String, as type: Value.Type) -> Value? {
        Value(propertyValue: self[property])
    }
}

/// What a ``MigrationBlock`` works with: the old data (read-only) and the new (writable).
///
/// Before the block runs, every object of a type present in both schemas has been copied with
/// its key: properties present in both (with the same type) keep their values, new ones get
/// their defaults, removed ones are dropped.
public final class Migration {
    /// The file's schema version.
    public let oldSchemaVersion: UInt64
    /// The configuration's schema version.
    public let newSchemaVersion: UInt64
    /// The file's schema.
    public var oldSchema: Schema { old.schema }
    /// The configuration's schema.
    public var newSchema: Schema { new.schema }

    let old: Store
    let new: Store

    init(old: Store, oldVersion: UInt64, new: Store, newVersion: UInt64) {
        self.old = old
        self.new = new
        oldSchemaVersion = oldVersion
        newSchemaVersion = newVersion
    }

    /// Calls `body` for each object of a type in the old data, with its new counterpart (nil if
    /// the type is gone from the new schema or the object was deleted).
    ///
    /// - Throws: what `body` throws.
    public func enumerateObjects(
        ofType typeName: String, _ body: (_ old: MigrationObject, _ new: DynamicObject?) throws -> Void
    ) rethrows {
        guard let oldTable = old.tablesByName[typeName] else { return }
        let newTable = new.tablesByName[typeName]
        for row in oldTable.liveRows {
            let key = oldTable.key(row)
            let object = oldObject(oldTable, row)
            let counterpart = newTable.flatMap { t in
                t.row(for: key).map { DynamicObject(store: new, table: t, row: $0) }
            }
            try body(object, counterpart)
        }
    }

    /// Gives every object of a type the old value of property `from` as its new property `to`.
    ///
    /// - Throws: `unknownType` or `unknownProperty` when `from` is not in the old schema or `to`
    ///   not in the new one; `typeMismatch` when the values do not fit.
    public func renameProperty(onType typeName: String, from: String, to: String) throws(LiveObjectsError) {
        guard let oldTable = old.tablesByName[typeName], let newTable = new.tablesByName[typeName] else {
            throw LiveObjectsError(.unknownType, "the type is not in both schemas", objectType: typeName)
        }
        guard let from = oldTable.propertyIndex[from] else {
            throw LiveObjectsError(
                .unknownProperty, "the old schema has no such property", objectType: typeName, property: from)
        }
        guard let to = newTable.propertyIndex[to], newTable.schema.properties[to].isStored else {
            throw LiveObjectsError(
                .unknownProperty, "the new schema has no such property", objectType: typeName, property: to)
        }
        for row in oldTable.liveRows {
            guard let newRow = newTable.row(for: oldTable.key(row)) else { continue }
            let value = MigrationRunner.carry(
                oldTable.value(row, from), into: new, property: newTable.schema.properties[to])
            try new.set(.value(value), newTable, newRow, to, context: AddContext.make(update: .modified), force: false)
        }
    }

    /// Deletes every object of a type from the new data.
    ///
    /// - Throws: `unknownType`; `deleteDenied` when a `deny` rule refuses.
    public func deleteData(forType typeName: String) throws(LiveObjectsError) {
        try new.deleteAll(try new.table(named: typeName))
    }

    /// Creates an object in the new data.
    ///
    /// - Throws: as `Realm.dynamicCreate`.
    @discardableResult
    public func create(_ typeName: String, value: [String: PropertyValue]) throws(LiveObjectsError) -> DynamicObject {
        let table = try new.table(named: typeName)
        let row = try new.create(
            table, from: .dictionary(value.mapValues { .value($0) }), context: AddContext.make(update: .error))
        return DynamicObject(store: new, table: table, row: row)
    }

    /// Deletes an object from the new data.
    ///
    /// - Throws: `objectInvalidated` if it was deleted already; `deleteDenied`.
    public func delete(_ object: DynamicObject) throws(LiveObjectsError) {
        let table = try new.table(named: object.typeName)
        guard let row = table.row(for: object.key) else {
            throw LiveObjectsError(.objectInvalidated, "the object was deleted", objectType: object.typeName)
        }
        try new.delete([(table, row)])
    }

    private func oldObject(_ table: Table, _ row: Int32) -> MigrationObject {
        var values: [String: PropertyValue] = [:]
        for (p, property) in table.schema.properties.enumerated() where property.isStored {
            values[property.name] = table.value(row, p)
        }
        return MigrationObject(typeName: table.name, key: table.key(row), values: values)
    }
}

/// Moves data from a store of the old schema into an empty store of the new one.
enum MigrationRunner {
    static func migrate(
        from old: Store, oldVersion: UInt64, to new: Store, newVersion: UInt64, block: MigrationBlock?, file: String
    ) throws(LiveObjectsError) {
        func fail(_ error: LiveObjectsError) -> LiveObjectsError {
            LiveObjectsError(
                .schemaVersionMismatch,
                "migration from schema version \(oldVersion) to \(newVersion) failed: \(error.message)",
                objectType: error.objectType, property: error.property, primaryKey: error.primaryKey, file: file)
        }
        do throws(LiveObjectsError) {
            try copy(from: old, to: new)
        } catch {
            throw fail(error)
        }
        guard let block else { return }
        try new.beginWrite()
        do {
            try block(Migration(old: old, oldVersion: oldVersion, new: new, newVersion: newVersion))
            if let error = new.takePendingError() { throw error }
            try new.commitWrite()
        } catch {
            new.cancelWrite()
            if let error = error as? LiveObjectsError { throw fail(error) }
            throw fail(LiveObjectsError(.invalidOperation, "the migration block threw \(error)"))
        }
    }

    /// A value of the old data as a value of `property`, or nil if it does not fit.
    static func carry(_ value: PropertyValue, into store: Store, property: Property) -> PropertyValue {
        if property.type == .object {
            guard let target = store.tablesByName[property.objectType!] else { return property.zeroValue }
            if property.isMap { return mapWithoutMissing(value, target) }
            switch value {
            case .object(let key): return target.row(for: key) != nil ? value : .null
            case .list(let items): return .list(items.filter { $0.objectKey.flatMap { target.row(for: $0) } != nil })
            default: return property.zeroValue
            }
        }
        return value
    }

    /// A map of objects' `[key, link]` pairs, a link to an object `target` lacks made null (the
    /// key stays, as when the object is deleted).
    static func mapWithoutMissing(_ value: PropertyValue, _ target: Table) -> PropertyValue {
        guard case .list(let pairs) = value else { return .list([]) }
        return .list(
            pairs.map { pair in
                guard case .list(let entry) = pair, entry.count == 2, let key = entry[1].objectKey,
                    target.row(for: key) == nil
                else { return pair }
                return .list([entry[0], .null])
            })
    }

    /// Copies every object of the types in both schemas, with its key.
    private static func copy(from old: Store, to new: Store) throws(LiveObjectsError) {
        var links: [(Table, Int32, Int, PropertyValue)] = []
        for table in new.tables {
            guard let oldTable = old.tablesByName[table.name] else { continue }
            let properties = table.schema.properties
            // For each new property: the old property it keeps, if its type did not change.
            let sources: [Int?] = properties.map { p in
                guard p.isStored, let o = oldTable.propertyIndex[p.name] else { return nil }
                let q = oldTable.schema.properties[o]
                // A plain value becomes an AnyValue as it is (a String its string, nil null).
                if p.type == .mixed && !p.isList && !q.isList && q.type != .object && q.type != .linkingObjects {
                    return o
                }
                // A list, set or map of plain values becomes one of AnyValues, each element as it is.
                if p.type == .mixed && p.isList && q.isList && p.isSet == q.isSet && p.isMap == q.isMap
                    && q.type != .object && q.type != .linkingObjects
                {
                    return o
                }
                guard q.type == p.type, q.isList == p.isList, q.isMap == p.isMap, q.objectType == p.objectType,
                    !q.isOptional || p.isOptional || p.type == .object
                else { return nil }
                return o
            }
            for row in oldTable.liveRows {
                var values = table.defaults
                for (p, property) in properties.enumerated() {
                    if property.type == .object { values[p] = property.zeroValue }
                    guard let o = sources[p] else { continue }
                    var value = oldTable.value(row, o)
                    // A list that becomes a set keeps each member once, where it first appears.
                    if property.isSet, case .list(let items) = value { value = .list(Store.distinctMembers(items)) }
                    if property.type == .object {
                        if !value.isNull { links.append((table, row, p, value)) }
                    } else if !(value.isNull && !property.isOptional) {
                        values[p] = value
                    }
                }
                let placed = try new.loadRow(table, at: oldTable.key(row), values: values)
                precondition(placed == row)
            }
            for row in oldTable.freeRows { try new.loadFreeSlot(table, at: oldTable.key(row)) }
        }
        for (table, row, p, value) in links {
            let target = new.tablesByName[table.schema.properties[p].objectType!]!
            if table.schema.properties[p].isMap {
                try new.loadMap(table, row, p, to: mapWithoutMissing(value, target))
                continue
            }
            switch value {
            case .object(let key):
                if target.row(for: key) != nil { try new.loadLink(table, row, p, to: key) }
            case .list(let items):
                try new.loadList(
                    table, row, p,
                    to: items.compactMap { $0.objectKey.flatMap { target.row(for: $0) != nil ? $0 : nil } })
            default:
                break
            }
        }
        new.finishLoading()
    }
}
