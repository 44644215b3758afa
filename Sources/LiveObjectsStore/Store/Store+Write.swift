import Foundation

extension Store {
    /// The longest string a column holds, in UTF-8 bytes (``Realm/Limits/maximumStringLength``).
    package static let maximumStringLength = 16 << 20
    /// The largest `Data` a column holds, in bytes (``Realm/Limits/maximumDataLength``).
    package static let maximumDataLength = 16 << 20

    // MARK: Checking values

    /// Checks a plain value against a property and converts it to its stored form.
    package func check(_ value: PropertyValue, for property: Property, in table: Table)
        throws(LiveObjectsError) -> PropertyValue
    {
        let checked =
            property.type == .mixed && !property.isList
            ? try checkMixed(value, for: property, in: table) : try checkType(value, for: property, in: table)
        // An enum property of a model class holds only the raw values of its cases.
        if !table.enumCases.isEmpty, !property.isList, !checked.isNull, let cases = table.enumCases[property.name],
            !cases.values.contains(checked)
        {
            throw LiveObjectsError(
                .typeMismatch, "\(checked) is not the raw value of a case of \(cases.enumName)",
                objectType: table.name, property: property.name)
        }
        if !table.valueChecks.isEmpty, !property.isList, !checked.isNull, let check = table.valueChecks[property.name],
            !check.accepts(checked)
        {
            throw LiveObjectsError(
                .typeMismatch, "\(checked) does not make a \(check.typeName)",
                objectType: table.name, property: property.name)
        }
        return checked
    }

    private func checkType(_ value: PropertyValue, for property: Property, in table: Table)
        throws(LiveObjectsError) -> PropertyValue
    {
        func mismatch(_ why: String) -> LiveObjectsError {
            LiveObjectsError(.typeMismatch, why, objectType: table.name, property: property.name)
        }
        if property.isMap { return try checkMap(value, for: property, in: table) }
        if property.isList {
            guard case .list(let items) = value else {
                if value.isNull { return .list([]) }
                throw mismatch("expected a list, got \(value)")
            }
            var element = property
            element.isList = false
            element.isSet = false
            element.isMap = false
            if property.type == .object { element.isOptional = false }
            var checked: [PropertyValue] = []
            checked.reserveCapacity(items.count)
            for item in items { checked.append(try check(item, for: element, in: table)) }
            return .list(property.isSet ? Store.distinctMembers(checked, mixed: property.type == .mixed) : checked)
        }
        if case .null = value {
            guard property.isOptional || property.type == .object else {
                throw mismatch("nil is not allowed for a non-optional property")
            }
            if property.type == .object && !property.isOptional {
                throw mismatch("a list of links cannot hold nil")
            }
            return .null
        }
        switch (property.type, value) {
        case (.string, .string(let string)):
            let length = string.utf8.count
            guard length <= Store.maximumStringLength else {
                throw LiveObjectsError(
                    .limitExceeded,
                    "a string of \(length) bytes is longer than the \(Store.maximumStringLength) allowed",
                    objectType: table.name, property: property.name)
            }
            return value
        case (.data, .data(let data)):
            guard data.count <= Store.maximumDataLength else {
                throw LiveObjectsError(
                    .limitExceeded,
                    "data of \(data.count) bytes is larger than the \(Store.maximumDataLength) allowed",
                    objectType: table.name, property: property.name)
            }
            return value
        case (.bool, .bool), (.date, .date), (.uuid, .uuid), (.double, .double), (.float, .float),
            (.decimal, .decimal), (.objectID, .objectID):
            return value
        case (.decimal, .int(let v)): return .decimal(Decimal(v))
        case (.decimal, .double(let v)):
            // The shortest text of the double, read exactly: 9.99 stays 9.99.
            guard v.isFinite, let d = Decimal(exactText: "\(v)") else {
                throw mismatch("\(v) is not a finite number")
            }
            return .decimal(d)
        case (.decimal, .float(let v)):
            guard v.isFinite, let d = Decimal(exactText: "\(v)") else {
                throw mismatch("\(v) is not a finite number")
            }
            return .decimal(d)
        case (.decimal, .string(let text)):
            guard let d = Decimal(exactText: text) else {
                throw mismatch("\"\(text)\" is not a decimal number")
            }
            return .decimal(d)
        case (.objectID, .string(let text)):
            guard let id = ObjectID(hex: text) else {
                throw mismatch("\"\(text)\" is not an ObjectID (24 hex digits)")
            }
            return .objectID(id)
        case (.int, .int(let v)), (.int8, .int(let v)), (.int16, .int(let v)),
            (.int32, .int(let v)), (.int64, .int(let v)):
            guard property.type.integerRange.contains(v) else {
                throw mismatch("\(v) is out of range for \(property.type.rawValue)")
            }
            return value
        case (.double, .int(let v)): return .double(Double(v))
        case (.double, .float(let v)): return .double(Double(v))
        case (.float, .int(let v)): return .float(Float(v))
        case (.float, .double(let v)): return .float(Float(v))
        case (.int, .double(let v)), (.int64, .double(let v)), (.int32, .double(let v)),
            (.int16, .double(let v)), (.int8, .double(let v)):
            guard let i = Int64(exactly: v) else {
                throw mismatch("\(v) is not an integer")
            }
            return try check(.int(i), for: property, in: table)
        case (.object, .object(let key)):
            let target = tablesByName[property.objectType!]!
            guard target.row(for: key) != nil else {
                throw LiveObjectsError(
                    .objectInvalidated, "the linked \(target.name) \(key) does not exist",
                    objectType: table.name, property: property.name)
            }
            return value
        default:
            throw mismatch("expected a value of type \(property.type.rawValue), got \(value)")
        }
    }

    // MARK: Setting links

    /// Points a to-one link at a row (or nil), deleting an embedded object it replaces.
    package func setLink(_ table: Table, _ row: Int32, _ p: Int, to newRow: Int32?, force: Bool = false)
        throws(LiveObjectsError)
    {
        let column = table.linkColumn(p)
        let old = column.targets[Int(row)]
        let new = newRow ?? -1
        if old == new {
            if force { setValue(column.value(at: Int(row)), table, row, p, force: true) }
            return
        }
        let target = column.target
        if target.schema.isEmbedded, new >= 0, target.linkCount(to: new) > 0 {
            throw alreadyOwned(table, column.property.name)
        }
        setValue(new >= 0 ? .object(target.key(new)) : .null, table, row, p)
        if target.schema.isEmbedded && old >= 0 {
            try delete([(target, old)])
        }
    }

    /// Replaces the whole content of a list of links. With `force`, a list given as it already
    /// is counts as modified (`update: .all`).
    package func replaceList(_ table: Table, _ row: Int32, _ p: Int, with rows: [Int32], force: Bool = false)
        throws(LiveObjectsError)
    {
        let column = table.linkListColumn(p)
        let old = column.lists[Int(row)]
        if old == rows {
            if force { setValue(column.value(at: Int(row)), table, row, p, force: true) }
            return
        }
        let target = column.target
        let embedded = target.schema.isEmbedded
        if embedded {
            let kept = Set(old)
            var seen = Set<Int32>()
            for r in rows {
                guard seen.insert(r).inserted, kept.contains(r) || target.linkCount(to: r) == 0 else {
                    throw alreadyOwned(table, column.property.name)
                }
            }
        }
        for i in stride(from: old.count - 1, through: 0, by: -1) { listRemove(table, row, p, at: i) }
        for (i, r) in rows.enumerated() { listInsert(.object(target.key(r)), table, row, p, at: i) }
        if embedded {
            let dropped = Set(old).subtracting(rows)
            if !dropped.isEmpty { try delete(dropped.sorted().map { (target, $0) }) }
        }
    }

    // MARK: List elements

    /// Removes an element from a list property (deleting it if it is embedded).
    package func removeElement(_ table: Table, _ row: Int32, _ p: Int, at index: Int)
        throws(LiveObjectsError)
    {
        try requireWrite(table)
        let count = listCount(table, row, p)
        guard index >= 0 && index < count else { throw outOfBounds(table, p, index, count) }
        if let column = table.columns[p] as? LinkListColumn, column.target.schema.isEmbedded {
            let r = column.lists[Int(row)][index]
            listRemove(table, row, p, at: index)
            // A map's key with no object (-1) has nothing to delete.
            if r >= 0 { try delete([(column.target, r)]) }
        } else {
            listRemove(table, row, p, at: index)
        }
    }

    /// Moves an element of a list property.
    package func moveElement(_ table: Table, _ row: Int32, _ p: Int, from: Int, to: Int)
        throws(LiveObjectsError)
    {
        try requireWrite(table)
        if table.schema.properties[p].isMap {
            throw LiveObjectsError(
                .invalidOperation, "a map's entries are kept in the order of their keys", objectType: table.name,
                property: table.schema.properties[p].name)
        }
        let count = listCount(table, row, p)
        guard from >= 0 && from < count else { throw outOfBounds(table, p, from, count) }
        guard to >= 0 && to < count else { throw outOfBounds(table, p, to, count) }
        if from != to { listMove(table, row, p, from: from, to: to) }
    }

    // MARK: Mixed values

    /// Checks a mixed (``AnyValue``) value: any plain value as it is, a string or data within
    /// the limits, a nested list or dictionary in its stored form (``MixedContainer``, made
    /// canonical: keys in order) with every element checked, at most
    /// ``AnyValue/maximumNestingDepth`` deep, a link (``MixedContainer/link``) to an existing
    /// object of a type that is not embedded; a bare `.object` is refused, as is a list in no
    /// stored form of a nested value.
    private func checkMixed(_ value: PropertyValue, for property: Property, in table: Table, depth: Int = 0)
        throws(LiveObjectsError) -> PropertyValue
    {
        func mismatch(_ why: String) -> LiveObjectsError {
            LiveObjectsError(.typeMismatch, why, objectType: table.name, property: property.name)
        }
        switch value {
        case .null, .bool, .int, .float, .double, .date, .uuid, .decimal, .objectID:
            return value
        case .string, .data:
            var plain = property
            plain.type = value.tag == .string ? .string : .data
            return try checkType(value, for: plain, in: table)
        case .object:
            throw mismatch(
                "a link in an AnyValue property is an AnyValue.link (its type's name and key), not a bare key")
        case .list(let stored) where MixedContainer(stored) == .link:
            return try checkMixedLink(stored, for: property, in: table)
        case .list(let stored):
            guard depth < AnyValue.maximumNestingDepth else {
                throw mismatch("an AnyValue nests lists and dictionaries at most \(AnyValue.maximumNestingDepth) deep")
            }
            guard MixedContainer(stored) != nil, let nested = AnyValue(.list(stored)) else {
                throw mismatch(
                    "a list in an AnyValue property is the stored form of an AnyValue.list or .dictionary;"
                        + " set it from an AnyValue (AnyValue.propertyValue)")
            }
            guard case .list(let canonical) = nested.propertyValue else { return nested.propertyValue }
            var checked = [canonical[0]]
            checked.reserveCapacity(canonical.count)
            for element in canonical.dropFirst() {
                checked.append(try checkMixed(element, for: property, in: table, depth: depth + 1))
            }
            return .list(checked)
        }
    }

    // MARK: Maps

    /// Checks a map's whole value (`[.string(key), value]` pairs) and returns it sorted by key;
    /// a key given twice keeps its last value.
    private func checkMap(_ value: PropertyValue, for property: Property, in table: Table)
        throws(LiveObjectsError) -> PropertyValue
    {
        guard case .list(let items) = value else {
            if value.isNull { return .list([]) }
            throw LiveObjectsError(
                .typeMismatch, "expected a map, got \(value)", objectType: table.name, property: property.name)
        }
        var element = property
        element.isList = false
        element.isMap = false
        var entries: [String: PropertyValue] = [:]
        for item in items {
            guard case .list(let pair) = item, pair.count == 2, case .string(let key) = pair[0] else {
                throw LiveObjectsError(
                    .typeMismatch, "a map's entry is a string key and a value, not \(item)",
                    objectType: table.name, property: property.name)
            }
            entries[try checkedMapKey(key, property, table)] = try check(pair[1], for: element, in: table)
        }
        return .list(entries.keys.sorted().map { .list([.string($0), entries[$0]!]) })
    }

    private func checkedMapKey(_ key: String, _ property: Property, _ table: Table) throws(LiveObjectsError) -> String {
        if let why = Property.mapKeyProblem(key) {
            throw LiveObjectsError(.typeMismatch, why, objectType: table.name, property: property.name)
        }
        return key
    }

    /// The position of a key in a map property: where it is, or where it would go.
    package func mapPosition(of key: String, _ table: Table, _ row: Int32, _ p: Int) -> (index: Int, found: Bool) {
        guard let keys = mapKeys(table, row, p) else { return (0, false) }
        var low = 0
        var high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid] < key { low = mid + 1 } else { high = mid }
        }
        return (low, low < keys.count && keys[low] == key)
    }

    /// The keys of a map property, sorted; nil for a property that is not a map.
    package func mapKeys(_ table: Table, _ row: Int32, _ p: Int) -> [String]? {
        switch table.columns[p] {
        case let column as ValueListColumn where column.isMap: column.keys[Int(row)]
        case let column as LinkListColumn where column.isMap: column.keys[Int(row)]
        default: nil
        }
    }

    /// The value of entry `index` of a map property: a plain value, or for a map of objects the
    /// target's key or null.
    package func mapValue(at index: Int, _ table: Table, _ row: Int32, _ p: Int) -> PropertyValue {
        switch table.columns[p] {
        case let column as ValueListColumn: column.lists[Int(row)][index]
        case let column as LinkListColumn: column.element(column.lists[Int(row)][index])
        default: .null
        }
    }

    /// Sets the value of a key of a map property (adding the key when the map lacks it).
    package func mapSet(_ value: PropertyValue, for key: String, _ table: Table, _ row: Int32, _ p: Int)
        throws(LiveObjectsError)
    {
        try requireWrite(table)
        let property = table.schema.properties[p]
        var element = property
        element.isList = false
        element.isMap = false
        let checked = try check(value, for: element, in: table)
        let (index, found) = mapPosition(of: try checkedMapKey(key, property, table), table, row, p)
        let old = found ? mapValue(at: index, table, row, p) : .null
        if found && old == checked { return }
        // An embedded object has one parent: the value must be new to it, and the one it
        // replaces goes.
        let embedded = (table.columns[p] as? LinkListColumn).flatMap { $0.target.schema.isEmbedded ? $0.target : nil }
        if let target = embedded, let newKey = checked.objectKey, let r = target.row(for: newKey),
            target.linkCount(to: r) > 0
        {
            throw alreadyOwned(table, property.name)
        }
        let pair = PropertyValue.list([.string(key), checked])
        if found {
            listReplace(pair, table, row, p, at: index)
        } else {
            listInsert(pair, table, row, p, at: index)
        }
        if let target = embedded, let oldKey = old.objectKey, let r = target.row(for: oldKey) {
            try delete([(target, r)])
        }
    }

    /// Removes a key of a map property (deleting its object if it is embedded). Returns whether
    /// the map held it.
    @discardableResult
    package func mapRemove(_ key: String, _ table: Table, _ row: Int32, _ p: Int) throws(LiveObjectsError) -> Bool {
        try requireWrite(table)
        let (index, found) = mapPosition(of: key, table, row, p)
        if found { try removeElement(table, row, p, at: index) }
        return found
    }

    /// The members of a set given as a list: each once, where it first appears.
    package static func distinctMembers<Member: Hashable>(_ items: [Member]) -> [Member] {
        guard items.count > 1 else { return items }
        var seen = Set<Member>()
        seen.reserveCapacity(items.count)
        return items.filter { seen.insert($0).inserted }
    }

    /// The members of a set of values given as a list: each once, where it first appears; for a
    /// set of ``AnyValue``s (`mixed`), numbers compared by value (``PropertyValue/mixedMemberKey``).
    package static func distinctMembers(_ items: [PropertyValue], mixed: Bool) -> [PropertyValue] {
        guard mixed, items.count > 1 else { return distinctMembers(items) }
        var seen = Set<PropertyValue>()
        seen.reserveCapacity(items.count)
        return items.filter { seen.insert($0.mixedMemberKey).inserted }
    }

    /// The position of a member in a set property (or of an element in a list), if it holds it.
    /// A set of ``AnyValue``s holds a number when it holds one of the same value, of any kind.
    ///
    /// - Complexity: O(1) on average for a set looked up in again with no other change between
    ///   (its members are kept by value, ``SetMembers``), O(*n*) otherwise. A frozen copy,
    ///   read from any thread, keeps nothing and scans.
    package func indexOfMember(_ value: PropertyValue, _ table: Table, _ row: Int32, _ p: Int) -> Int? {
        switch table.columns[p] {
        case let c as LinkListColumn:
            guard case .object(let key) = value, let r = c.target.row(for: key) else { return nil }
            return indexOfLinkMember(targetRow: r, c, table, row, p)
        case let c as ValueListColumn where c.property.isSet && c.property.type == .mixed:
            let list = c.lists[Int(row)]
            let member = value.mixedMemberKey
            guard isLive, list.count >= SetMembers.smallest else {
                return list.firstIndex { $0.mixedMemberKey == member }
            }
            return memberPosition(member, table, row, p, count: list.count) { i in
                list[i].mixedMemberKey == member
            } members: {
                list.map(\.mixedMemberKey)
            }
        case let c as ValueListColumn:
            let list = c.lists[Int(row)]
            guard isLive, c.property.isSet, list.count >= SetMembers.smallest else {
                return list.firstIndex(of: value)
            }
            return memberPosition(value, table, row, p, count: list.count) { i in
                list[i] == value
            } members: {
                list
            }
        default:
            return nil
        }
    }

    /// The position of a link in a set (or list) of links, by its target's row.
    package func indexOfLinkMember(targetRow r: Int32, _ c: LinkListColumn, _ table: Table, _ row: Int32, _ p: Int)
        -> Int?
    {
        let list = c.lists[Int(row)]
        guard isLive, c.property.isSet, list.count >= SetMembers.smallest else { return list.firstIndex(of: r) }
        return memberPosition(.int(Int64(r)), table, row, p, count: list.count) { i in
            list[i] == r
        } members: {
            list.map { .int(Int64($0)) }
        }
    }

    /// The position of a member of a large set, through the members kept for it when nothing
    /// changed since (rebuilt otherwise). `holds` confirms a position found.
    private func memberPosition(
        _ member: PropertyValue, _ table: Table, _ row: Int32, _ p: Int, count: Int, holds: (Int) -> Bool,
        members: () -> [PropertyValue]
    ) -> Int? {
        if let kept = setMembers, kept.isCurrent(table.index, row, p, stamp: mutationCount, count: count) {
            guard let i = kept.positions[member] else { return nil }
            if i < count && holds(i) { return i }
        }
        var positions: [PropertyValue: Int] = [:]
        positions.reserveCapacity(count)
        for (i, m) in members().enumerated() where positions[m] == nil { positions[m] = i }
        setMembers = SetMembers(table: table.index, row: row, property: p, stamp: mutationCount, positions: positions)
        return positions[member]
    }

    /// Keeps the members of a set current after `value` was appended at `index` to it, when
    /// they were current before (`stamp`: the mutation count before the append); a member
    /// placed anywhere else drops them.
    package func noteMemberAppended(
        _ value: PropertyValue, _ table: Table, _ row: Int32, _ p: Int, at index: Int, stampBefore stamp: UInt64
    ) {
        let mixed = table.schema.properties[p].type == .mixed
        noteKept(mixed ? value.mixedMemberKey : value, table, row, p, at: index, stampBefore: stamp)
    }

    /// ``noteMemberAppended(_:_:_:_:at:stampBefore:)`` for a link, by its target's row.
    package func noteLinkMemberAppended(
        targetRow r: Int32, _ table: Table, _ row: Int32, _ p: Int, at index: Int, stampBefore stamp: UInt64
    ) {
        noteKept(.int(Int64(r)), table, row, p, at: index, stampBefore: stamp)
    }

    private func noteKept(
        _ member: PropertyValue, _ table: Table, _ row: Int32, _ p: Int, at index: Int, stampBefore stamp: UInt64
    ) {
        guard var kept = setMembers, kept.isCurrent(table.index, row, p, stamp: stamp, count: index) else { return }
        kept.positions[member] = index
        kept.stamp = mutationCount
        setMembers = kept
    }

    /// The number of elements of a list property.
    package func listCount(_ table: Table, _ row: Int32, _ p: Int) -> Int {
        switch table.columns[p] {
        case let c as LinkListColumn: c.lists[Int(row)].count
        case let c as ValueListColumn: c.lists[Int(row)].count
        default: table.linkingObjectsSources[p]?.rows[Int(row)].count ?? 0
        }
    }

    package func outOfBounds(_ table: Table, _ p: Int, _ index: Int, _ count: Int) -> LiveObjectsError {
        LiveObjectsError(
            .indexOutOfBounds, "index \(index) is out of bounds (0..<\(count))",
            objectType: table.name, property: table.schema.properties[p].name)
    }
}

extension Store {
    /// The error for an embedded object given a second parent through `property` of `table`.
    package func alreadyOwned(_ table: Table, _ property: String) -> LiveObjectsError {
        LiveObjectsError(
            .embeddedObjectAlreadyOwned, "the embedded object already has a parent", objectType: table.name,
            property: property)
    }
}

/// The members of one large set by value (a link's by its target's row, as `.int`), with their
/// positions: what makes `MutableSet.contains` and `insert` O(1) on average when one set is used
/// again and again. Valid while the store's mutation count is the one it was built at (every
/// change, a rollback's too, counts) and the set has as many members.
struct SetMembers {
    /// Below this many members, a set is scanned.
    static let smallest = 16

    let table: Int
    let row: Int32
    let property: Int
    var stamp: UInt64
    var positions: [PropertyValue: Int]

    func isCurrent(_ table: Int, _ row: Int32, _ property: Int, stamp: UInt64, count: Int) -> Bool {
        self.table == table && self.row == row && self.property == property && self.stamp == stamp
            && positions.count == count
    }
}
