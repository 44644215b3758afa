import Foundation
import LiveObjectsStore

/// How `add` and `create` treat an object whose primary key already exists.
public enum UpdatePolicy: Sendable, Hashable {
    /// Fail with `duplicatePrimaryKey`.
    case error
    /// Update the existing object, changing (and reporting as modified) only the properties whose
    /// values differ.
    case modified
    /// Update the existing object, setting (and reporting as modified) every given property.
    case all
}

/// A value to store, before it is checked against the schema: what `create` and `add` accept.
package enum Input {
    /// A plain value; for a link property, a scalar is the target's primary key.
    case value(PropertyValue)
    /// Property values by name, for a new (or updated) object.
    case dictionary([String: Input])
    /// Property values in property order, for a new (or updated) object, or a list's elements.
    case array([Input])
    /// A model object: managed (linked as is) or unmanaged (added).
    case object(Object)
}

/// The objects added during one `add` or `create` call, so that cycles resolve.
package final class AddContext {
    var rows: [ObjectIdentifier: (Table, Int32)] = [:]
    let update: UpdatePolicy
    init(update: UpdatePolicy) { self.update = update }
}

extension Store {
    // MARK: Creating objects

    /// Creates (or, with a primary key and an update policy, updates) an object from input.
    ///
    /// The caller rolls back to a savepoint when this throws.
    package func create(_ table: Table, from input: Input, context: AddContext)
        throws(LiveObjectsError) -> Int32
    {
        try requireWrite(table)
        if case .object(let object) = input {
            return try add(object, to: table, context: context)
        }
        var given = [Input?](repeating: nil, count: table.schema.properties.count)
        switch input {
        case .dictionary(let dict):
            for (name, value) in dict {
                guard let p = table.propertyIndex[name] else {
                    throw LiveObjectsError(
                        .unknownProperty, "there is no property '\(name)'", objectType: table.name,
                        property: name)
                }
                if table.schema.properties[p].isStored { given[p] = value }
            }
        case .array(let items):
            let stored = table.schema.properties.indices.filter {
                table.schema.properties[$0].isStored
            }
            guard items.count <= stored.count else {
                throw LiveObjectsError(
                    .typeMismatch,
                    "\(items.count) values given for \(stored.count) stored properties",
                    objectType: table.name)
            }
            for (i, item) in items.enumerated() { given[stored[i]] = item }
        case .value(let v):
            // A bare primary key creates an object with defaults.
            if let pk = table.primaryKeyProperty {
                given[pk] = .value(v)
            } else {
                throw LiveObjectsError(
                    .typeMismatch, "cannot create an object from \(v)", objectType: table.name)
            }
        case .object:
            preconditionFailure("handled above")
        }
        return try createRow(table, given: given, context: context, object: nil)
    }

    /// Adds an unmanaged model object (and the unmanaged objects it links to).
    func add(_ object: Object, to table: Table, context: AddContext) throws(LiveObjectsError)
        -> Int32
    {
        if let handle = object._handle {
            guard handle.store === self else {
                throw LiveObjectsError(
                    .wrongRealm, "the object belongs to another realm", objectType: table.name)
            }
            guard let row = handle.validRow else {
                throw LiveObjectsError(
                    .objectInvalidated, "the object was deleted", objectType: table.name)
            }
            return row
        }
        if !context.rows.isEmpty, let (_, row) = context.rows[ObjectIdentifier(object)] { return row }
        let type = Swift.type(of: object)
        let table = table.objectType == type ? table : (tablesByType[ObjectIdentifier(type)] ?? table)
        guard let info = table.modelInfo else {
            throw LiveObjectsError(.unknownType, "not a model type of this realm", objectType: table.name)
        }
        // Fast path: read plain values straight into a row; links are set after the insert.
        // The row's values go in the table's reused array, not one made per object.
        var values = table.takeRowValues()
        var links: [(Int, Input)] = []
        // Nil links and empty lists: nothing to set on a new object, but they clear the links
        // of an existing one.
        var emptyLinks: [(Int, Input)] = []
        // The fields read in place (a copy of a field's description retains its strings).
        withExtendedLifetime(object) {
            let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
            info.fields.withUnsafeBufferPointer { fields in
                for i in fields.indices {
                    let p = fields[i].propertyIndex
                    switch table.storage[p] {
                    case .computed:
                        continue
                    case .link where fields[i].isToOneLink:
                        // The linked object read as the reference it is, not through an `Input`.
                        guard let target = fields[i].linkedObject(in: base) else {
                            emptyLinks.append((p, .value(.null)))
                            continue
                        }
                        if let key = managedKey(target, property: p, of: table) {
                            values[p] = .object(key)
                        } else {
                            links.append((p, .object(target)))
                        }
                    case .link:
                        let input = fields[i].accessor._input(at: base + fields[i].offset)
                        switch input {
                        case .value(.null): emptyLinks.append((p, input))
                        case .array(let items) where items.isEmpty: emptyLinks.append((p, input))
                        // An empty map of objects.
                        case .dictionary(let entries) where entries.isEmpty: emptyLinks.append((p, input))
                        case .object(let target) where !table.schema.properties[p].isList:
                            // A link to an object already in this realm goes into the row directly.
                            if let key = managedKey(target, property: p, of: table) {
                                values[p] = .object(key)
                            } else {
                                links.append((p, input))
                            }
                        default: links.append((p, input))
                        }
                    case .value:
                        values[p] = fields[i].accessor._unmanagedValue(at: base + fields[i].offset)
                    }
                }
            }
        }
        for p in table.valueProperties where !table.accepts(values[p], p) {
            values[p] = try check(values[p], for: table.schema.properties[p], in: table)
        }
        if let pk = table.primaryKeyProperty, table.row(forPrimaryKey: values[pk]) != nil {
            // An existing object: the general path applies the update policy.
            var given = [Input?](repeating: nil, count: values.count)
            for p in table.valueProperties { given[p] = .value(values[p]) }
            for p in values.indices where table.storage[p] == .link && values[p].objectKey != nil {
                given[p] = .value(values[p])
            }
            for (p, input) in links + emptyLinks { given[p] = input }
            return try createRow(table, given: given, context: context, object: object)
        }
        let row = insertRow(table, values: values)
        table.giveBackRowValues(&values)
        if !links.isEmpty {
            context.rows[ObjectIdentifier(object)] = (table, row)
            for (p, input) in links { try set(input, table, row, p, context: context, force: false) }
        }
        object._handle = ObjectHandle(
            store: self, table: table, row: row, generation: table.generation(row))
        return row
    }

    /// The key of a managed, live, non-embedded object of this store that a link property of
    /// `table` may point to.
    ///
    /// The target's table is borrowed, not retained (a retain and a release per link are atomic
    /// operations), and whether the target is live is read from its table's live bits or counts
    /// rather than its slot's state: the targets of a bulk insert's links come in random order,
    /// and the state of each was a cache miss.
    private func managedKey(_ object: Object, property p: Int, of table: Table) -> ObjectKey? {
        guard let handle = object._handle, handle.store === self else { return nil }
        let isLinkable = Unmanaged.passUnretained(handle.table)._withUnsafeGuaranteedRef { target in
            target.isValidFromLiveBits(handle.row, generation: handle.generation)
                && !target.schema.isEmbedded && target.name == table.schema.properties[p].objectType
        }
        return isLinkable ? handle.key : nil
    }

    private func createRow(
        _ table: Table, given: [Input?], context: AddContext, object: Object?
    ) throws(LiveObjectsError) -> Int32 {
        let properties = table.schema.properties
        // Find an existing object by primary key.
        var existing: Int32?
        var pkValue: PropertyValue?
        if let pk = table.primaryKeyProperty {
            // No key given: the model's declared default, when it makes a new key per object
            // (`var localId = UUID().uuidString`), as an offline-first app relies on.
            let keyInput = given[pk] == nil ? declaredPrimaryKey(of: table).map { Input.value($0) } : given[pk]
            guard case .value(let raw)? = keyInput else {
                if keyInput == nil {
                    throw LiveObjectsError(
                        .missingValue, "a value for the primary key is required",
                        objectType: table.name, property: properties[pk].name)
                }
                throw LiveObjectsError(
                    .typeMismatch, "the primary key must be a plain value",
                    objectType: table.name, property: properties[pk].name)
            }
            let key = try check(raw, for: properties[pk], in: table)
            pkValue = key
            existing = table.row(forPrimaryKey: key)
            if existing != nil && context.update == .error {
                throw LiveObjectsError(
                    .duplicatePrimaryKey, "an object with this primary key already exists",
                    objectType: table.name, property: properties[pk].name, primaryKey: key)
            }
        }
        if let row = existing {
            if let object { context.rows[ObjectIdentifier(object)] = (table, row) }
            for (p, input) in given.enumerated() where p != table.primaryKeyProperty {
                guard let input else { continue }
                try set(input, table, row, p, context: context, force: context.update == .all)
            }
            if let object { bind(object, table, row, context) }
            return row
        }
        // Insert scalars first (links resolve after, so cycles work).
        var values = table.defaults
        var linkInputs: [(Int, Input)] = []
        for p in properties.indices where properties[p].isStored {
            guard let input = given[p] else {
                if properties[p].type == .object { values[p] = properties[p].zeroValue }
                continue
            }
            if properties[p].type == .object {
                values[p] = properties[p].zeroValue
                linkInputs.append((p, input))
            } else {
                values[p] = try checkedValue(input, properties[p], table)
            }
        }
        if let pkValue, let pk = table.primaryKeyProperty { values[pk] = pkValue }
        let row = insertRow(table, values: values)
        if let object, !linkInputs.isEmpty { context.rows[ObjectIdentifier(object)] = (table, row) }
        for (p, input) in linkInputs {
            try set(input, table, row, p, context: context, force: false)
        }
        if let object { bind(object, table, row, context) }
        return row
    }

    /// A fresh primary key as the model class declares it, when the declaration makes a new
    /// one per object (`var localId = UUID().uuidString`); nil for a constant default (`var id =
    /// 0` is no key: two objects created without one would collide, so the key must be given)
    /// and for a type without a model class (the dynamic API on a schema given as data).
    private func declaredPrimaryKey(of table: Table) -> PropertyValue? {
        guard let type = table.objectType, let info = table.modelInfo, let pk = table.primaryKeyProperty,
            let field = info.fields.first(where: { $0.propertyIndex == pk })
        else { return nil }
        func fresh() -> PropertyValue {
            let object = type.init()
            return withExtendedLifetime(object) {
                field.accessor._unmanagedValue(
                    at: UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field.offset)
            }
        }
        let value = fresh()
        // Not a ternary: with `nil` in one branch it would make `PropertyValue.null`, which is
        // expressible by a nil literal, instead of no value.
        if value == fresh() { return nil }
        return value
    }

    private func bind(_ object: Object, _ table: Table, _ row: Int32, _ context: AddContext) {
        object._handle = ObjectHandle(store: self, table: table, row: row, generation: table.generation(row))
    }

    /// Sets a primitive property of a managed object.
    func setPrimitive(_ value: PropertyValue, _ handle: ObjectHandle, _ p: Int) throws(LiveObjectsError) {
        let table = handle.table
        let property = table.schema.properties[p]
        try requireWrite(table, property: property.name)
        let checked = try check(value, for: property, in: table)
        if p == table.primaryKeyProperty {
            if checked != table.column(p).value(at: Int(handle.row)) {
                throw LiveObjectsError(
                    .primaryKeyChange, "the primary key of an existing object cannot be changed",
                    objectType: table.name, property: property.name,
                    primaryKey: table.primaryKey(of: handle.row))
            }
            return
        }
        setValue(checked, table, handle.row, p)
    }

    private func checkedValue(_ input: Input, _ property: Property, _ table: Table)
        throws(LiveObjectsError) -> PropertyValue
    {
        switch input {
        case .value(let v):
            return try check(v, for: property, in: table)
        case .array(let items) where property.type == .mixed && property.isList && !property.isMap:
            // A list or set of AnyValues: each element as an AnyValue.
            var values: [PropertyValue] = []
            for item in items { values.append(try mixedValue(item, property, table).propertyValue) }
            return try check(.list(values), for: property, in: table)
        case .dictionary(let entries) where property.type == .mixed && property.isMap:
            var pairs: [PropertyValue] = []
            for (key, item) in entries {
                pairs.append(.list([.string(key), try mixedValue(item, property, table).propertyValue]))
            }
            return try check(.list(pairs), for: property, in: table)
        case .array where property.type == .mixed && !property.isList,
            .dictionary where property.type == .mixed && !property.isList,
            .object where property.type == .mixed && !property.isList:
            // A Swift array or dictionary for an AnyValue: a nested list or dictionary.
            return try check(try mixedValue(input, property, table).propertyValue, for: property, in: table)
        case .array(let items) where property.isList:
            var values: [PropertyValue] = []
            for item in items {
                guard case .value(let v) = item else {
                    throw LiveObjectsError(
                        .typeMismatch, "a list of values holds only plain values",
                        objectType: table.name, property: property.name)
                }
                values.append(v)
            }
            return try check(.list(values), for: property, in: table)
        case .dictionary(let entries) where property.isMap:
            var pairs: [PropertyValue] = []
            for (key, item) in entries {
                guard case .value(let v) = item else {
                    throw LiveObjectsError(
                        .typeMismatch, "a map holds only plain values", objectType: table.name,
                        property: property.name)
                }
                pairs.append(.list([.string(key), v]))
            }
            return try check(.list(pairs), for: property, in: table)
        default:
            throw LiveObjectsError(
                .typeMismatch, "expected a plain value", objectType: table.name,
                property: property.name)
        }
    }

    /// The `AnyValue` of input for a mixed property: a plain value as it is, an array a nested
    /// list, a dictionary a nested dictionary, a managed object of this realm a link to it; an
    /// unmanaged object, or one of another realm, is refused.
    private func mixedValue(_ input: Input, _ property: Property, _ table: Table) throws(LiveObjectsError)
        -> AnyValue
    {
        switch input {
        case .object(let object):
            guard let handle = object._handle, handle.store === self else {
                throw LiveObjectsError(
                    .typeMismatch, "an AnyValue links to an object of this realm: add the object first",
                    objectType: table.name, property: property.name)
            }
            return try .object(object)
        case .value(let v):
            if let value = AnyValue(v) { return value }
        case .array(let items):
            var values: [AnyValue] = []
            for item in items { values.append(try mixedValue(item, property, table)) }
            return .list(values)
        case .dictionary(let entries):
            var values: [String: AnyValue] = [:]
            for (key, item) in entries { values[key] = try mixedValue(item, property, table) }
            return .dictionary(values)
        }
        throw LiveObjectsError(
            .typeMismatch, "an AnyValue holds plain values, links to objects, and lists and dictionaries of them",
            objectType: table.name, property: property.name)
    }

    // MARK: Setting properties

    /// Sets a stored property from input, creating linked objects as needed.
    package func set(
        _ input: Input, _ table: Table, _ row: Int32, _ p: Int, context: AddContext, force: Bool
    ) throws(LiveObjectsError) {
        let property = table.schema.properties[p]
        try requireWrite(table, property: property.name)
        guard property.isStored else {
            throw LiveObjectsError(
                .invalidOperation, "LinkingObjects cannot be set", objectType: table.name,
                property: property.name)
        }
        if p == table.primaryKeyProperty {
            let value = try checkedValue(input, property, table)
            if value != table.column(p).value(at: Int(row)) {
                throw LiveObjectsError(
                    .primaryKeyChange, "the primary key of an existing object cannot be changed",
                    objectType: table.name, property: property.name,
                    primaryKey: table.primaryKey(of: row))
            }
            return
        }
        guard property.type == .object else {
            setValue(try checkedValue(input, property, table), table, row, p, force: force)
            return
        }
        let target = tablesByName[property.objectType!]!
        if property.isMap {
            try replaceLinkMap(input, table, row, p, target: target, context: context, force: force)
        } else if property.isList {
            let items: [Input]
            switch input {
            case .array(let a): items = a
            case .value(.list(let values)): items = values.map { .value($0) }
            case .value(.null): items = []
            default:
                throw LiveObjectsError(
                    .typeMismatch, "expected a list", objectType: table.name, property: property.name)
            }
            var rows: [Int32] = []
            for item in items { rows.append(try resolveLink(item, target, context: context)) }
            if property.isSet { rows = Store.distinctMembers(rows) }
            try replaceList(table, row, p, with: rows, force: force)
        } else {
            let newRow: Int32? =
                if case .value(.null) = input { nil } else {
                    try resolveLink(input, target, context: context)
                }
            try setLink(table, row, p, to: newRow, force: force)
        }
    }

    /// Replaces the whole content of a map of objects from input: a dictionary of link inputs
    /// (null for a key with no object), or `[key, link]` pairs. With `force`, a map given as it
    /// already is counts as modified (`update: .all`).
    private func replaceLinkMap(
        _ input: Input, _ table: Table, _ row: Int32, _ p: Int, target: Table, context: AddContext, force: Bool
    ) throws(LiveObjectsError) {
        let property = table.schema.properties[p]
        var entries: [(String, Input)] = []
        switch input {
        case .dictionary(let items): entries = items.map { ($0.key, $0.value) }
        case .value(.null): break
        case .value(.list(let pairs)):
            for pair in pairs {
                guard case .list(let kv) = pair, kv.count == 2, case .string(let key) = kv[0] else {
                    throw LiveObjectsError(
                        .typeMismatch, "a map's entry is a string key and a value, not \(pair)",
                        objectType: table.name, property: property.name)
                }
                entries.append((key, .value(kv[1])))
            }
        default:
            throw LiveObjectsError(
                .typeMismatch, "expected a map", objectType: table.name, property: property.name)
        }
        var pairs: [PropertyValue] = []
        for (key, item) in entries.sorted(by: { $0.0 < $1.0 }) {
            var value = PropertyValue.null
            if case .value(.null) = item {
            } else {
                value = .object(target.key(try resolveLink(item, target, context: context)))
            }
            pairs.append(.list([.string(key), value]))
        }
        let checked = try check(.list(pairs), for: property, in: table)
        let column = table.linkListColumn(p)
        if column.containerValue(at: Int(row)) == checked {
            if force { setValue(checked, table, row, p, force: true) }
            return
        }
        let old = column.lists[Int(row)].filter { $0 >= 0 }
        let rows = Store.linkRows(checked)
        if target.schema.isEmbedded {
            // Each embedded object has one parent: new to the map, or kept under one key.
            let kept = Set(old)
            var seen = Set<Int32>()
            for r in rows where !seen.insert(r).inserted || !(kept.contains(r) || target.linkCount(to: r) == 0) {
                throw alreadyOwned(table, property.name)
            }
        }
        for i in stride(from: column.lists[Int(row)].count - 1, through: 0, by: -1) {
            listRemove(table, row, p, at: i)
        }
        guard case .list(let sorted) = checked else { return }
        for (i, pair) in sorted.enumerated() { listInsert(pair, table, row, p, at: i) }
        if target.schema.isEmbedded {
            let dropped = Set(old).subtracting(rows)
            if !dropped.isEmpty { try delete(dropped.sorted().map { (target, $0) }) }
        }
    }

    /// Sets the value of a key of a map property from input: a plain value, or for a map of
    /// objects a link input (an object, added with its links when unmanaged; a primary key; the
    /// values of a new object) or null for no object.
    package func mapSet(
        _ input: Input, for key: String, _ table: Table, _ row: Int32, _ p: Int, context: AddContext
    ) throws(LiveObjectsError) {
        try requireWrite(table)
        let property = table.schema.properties[p]
        guard property.type == .object else {
            guard case .value(let value) = input else {
                throw LiveObjectsError(
                    .typeMismatch, "a map holds plain values", objectType: table.name, property: property.name)
            }
            try mapSet(value, for: key, table, row, p)
            return
        }
        if let why = Property.mapKeyProblem(key) {
            throw LiveObjectsError(.typeMismatch, why, objectType: table.name, property: property.name)
        }
        var value = PropertyValue.null
        if case .value(.null) = input {
        } else {
            let target = tablesByName[property.objectType!]!
            value = .object(target.key(try resolveLink(input, target, context: context)))
        }
        try mapSet(value, for: key, table, row, p)
    }

    /// The row a link input names, creating the target when the input describes a new object.
    func resolveLink(_ input: Input, _ target: Table, context: AddContext) throws(LiveObjectsError)
        -> Int32
    {
        switch input {
        case .value(.object(let key)):
            guard let row = target.row(for: key) else {
                throw LiveObjectsError(
                    .objectInvalidated, "the linked object \(key) does not exist",
                    objectType: target.name)
            }
            return row
        case .value(let v) where target.primaryKeyProperty != nil:
            let key = try check(v, for: target.schema.properties[target.primaryKeyProperty!], in: target)
            guard let row = target.row(forPrimaryKey: key) else {
                throw LiveObjectsError(
                    .missingValue, "there is no object with this primary key",
                    objectType: target.name, primaryKey: key)
            }
            return row
        case .value(let v):
            throw LiveObjectsError(
                .typeMismatch, "\(v) does not name an object", objectType: target.name)
        case .dictionary, .array, .object:
            return try create(target, from: input, context: context)
        }
    }

    // MARK: List elements

    /// A map's entries are set by key, never by position.
    private func refuseMapElement(_ table: Table, _ p: Int) throws(LiveObjectsError) {
        guard table.schema.properties[p].isMap else { return }
        throw LiveObjectsError(
            .invalidOperation, "a map's entries are set by key, not by position", objectType: table.name,
            property: table.schema.properties[p].name)
    }

    /// Inserts an element into a list property. A set property that already holds the member
    /// is left as it is.
    func insertElement(
        _ input: Input, _ table: Table, _ row: Int32, _ p: Int, at index: Int, context: AddContext
    )
        throws(LiveObjectsError)
    {
        try requireWrite(table)
        try refuseMapElement(table, p)
        let count = listCount(table, row, p)
        guard index >= 0 && index <= count else { throw outOfBounds(table, p, index, count + 1) }
        let property = table.schema.properties[p]
        if let column = table.columns[p] as? LinkListColumn {
            let r = try resolveLink(input, column.target, context: context)
            if property.isSet && indexOfLinkMember(targetRow: r, column, table, row, p) != nil { return }
            if column.target.schema.isEmbedded && column.target.linkCount(to: r) > 0 {
                throw alreadyOwned(table, property.name)
            }
            let stamp = mutationCount
            listInsert(.object(column.target.key(r)), table, row, p, at: index)
            if property.isSet { noteLinkMemberAppended(targetRow: r, table, row, p, at: index, stampBefore: stamp) }
        } else {
            var element = property
            element.isList = false
            element.isSet = false
            element.isMap = false
            let value = try checkedValue(input, element, table)
            if property.isSet && indexOfMember(value, table, row, p) != nil { return }
            let stamp = mutationCount
            listInsert(value, table, row, p, at: index)
            if property.isSet { noteMemberAppended(value, table, row, p, at: index, stampBefore: stamp) }
        }
    }

    /// Replaces an element of a list property.
    func replaceElement(
        _ input: Input, _ table: Table, _ row: Int32, _ p: Int, at index: Int, context: AddContext
    )
        throws(LiveObjectsError)
    {
        try requireWrite(table)
        try refuseMapElement(table, p)
        let count = listCount(table, row, p)
        guard index >= 0 && index < count else { throw outOfBounds(table, p, index, count) }
        if let column = table.columns[p] as? LinkListColumn {
            let old = column.lists[Int(row)][index]
            let r = try resolveLink(input, column.target, context: context)
            if r == old { return }
            if column.property.isSet && column.lists[Int(row)].contains(r) {
                // The member is already in the set: replacing another one by it removes that one.
                listRemove(table, row, p, at: index)
                return
            }
            if column.target.schema.isEmbedded && column.target.linkCount(to: r) > 0 {
                throw alreadyOwned(table, column.property.name)
            }
            listReplace(.object(column.target.key(r)), table, row, p, at: index)
            if column.target.schema.isEmbedded { try delete([(column.target, old)]) }
        } else {
            var element = table.schema.properties[p]
            element.isList = false
            element.isSet = false
            element.isMap = false
            let value = try checkedValue(input, element, table)
            if table.schema.properties[p].isSet, let other = indexOfMember(value, table, row, p) {
                if other != index { listRemove(table, row, p, at: index) }
                return
            }
            listReplace(value, table, row, p, at: index)
        }
    }
}

extension AddContext {
    /// A context for one `create` call from another module.
    package static func make(update: UpdatePolicy) -> AddContext { AddContext(update: update) }
}
