import Foundation

/// A value type that a scalar column stores natively.
@usableFromInline
package protocol ColumnElement {
    /// How a column stores values of this type: a ``ChunkedArray`` of them unless the type
    /// says otherwise (integers are packed: ``PackedIntArray``).
    associatedtype Storage: ColumnStorage = ChunkedArray<Self> where Storage.Element == Self
    init(unchecked value: PropertyValue)
    var propertyValue: PropertyValue { get }
    static var storedZero: Self { get }
}

extension Bool: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) { self = value.boolValue ?? false }
    @inlinable package var propertyValue: PropertyValue { .bool(self) }
    @usableFromInline package static var storedZero: Bool { false }
}

extension Int64: ColumnElement {
    @usableFromInline package typealias Storage = PackedIntArray
    @usableFromInline package init(unchecked value: PropertyValue) { self = value.intValue ?? 0 }
    @inlinable package var propertyValue: PropertyValue { .int(self) }
    @usableFromInline package static var storedZero: Int64 { 0 }
}

extension Float: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) {
        if case .float(let v) = value { self = v } else { self = 0 }
    }
    @inlinable package var propertyValue: PropertyValue { .float(self) }
    @usableFromInline package static var storedZero: Float { 0 }
}

extension Double: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) {
        if case .double(let v) = value { self = v } else { self = 0 }
    }
    @inlinable package var propertyValue: PropertyValue { .double(self) }
    @usableFromInline package static var storedZero: Double { 0 }
}

extension String: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) { self = value.stringValue ?? "" }
    @inlinable package var propertyValue: PropertyValue { .string(self) }
    @usableFromInline package static var storedZero: String { "" }
}

extension Date: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) {
        if case .date(let v) = value { self = v } else { self = .zero }
    }
    @inlinable package var propertyValue: PropertyValue { .date(self) }
    @usableFromInline package static var storedZero: Date { .zero }
}

extension Data: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) {
        if case .data(let v) = value { self = v } else { self = Data() }
    }
    @inlinable package var propertyValue: PropertyValue { .data(self) }
    @usableFromInline package static var storedZero: Data { Data() }
}

extension UUID: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) {
        if case .uuid(let v) = value { self = v } else { self = .zero }
    }
    @inlinable package var propertyValue: PropertyValue { .uuid(self) }
    @usableFromInline package static var storedZero: UUID { .zero }
}

extension Decimal: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) {
        if case .decimal(let v) = value { self = v } else { self = 0 }
    }
    @inlinable package var propertyValue: PropertyValue { .decimal(self) }
    @usableFromInline package static var storedZero: Decimal { 0 }
}

extension ObjectID: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) {
        if case .objectID(let v) = value { self = v } else { self = .zero }
    }
    @inlinable package var propertyValue: PropertyValue { .objectID(self) }
    @usableFromInline package static var storedZero: ObjectID { .zero }
}

/// A mixed column (``PropertyType/mixed``) holds each row's value as it is: every case but
/// ``PropertyValue/object(_:)`` and ``PropertyValue/list(_:)``, which the store refuses.
extension PropertyValue: ColumnElement {
    @inlinable package init(unchecked value: PropertyValue) { self = value }
    @inlinable package var propertyValue: PropertyValue { self }
    @usableFromInline package static var storedZero: PropertyValue { .null }
}

extension Optional: ColumnElement where Wrapped: ColumnElement {
    @usableFromInline package init(unchecked value: PropertyValue) {
        self = value.isNull ? nil : Wrapped(unchecked: value)
    }
    @inlinable package var propertyValue: PropertyValue { self?.propertyValue ?? .null }
    @usableFromInline package static var storedZero: Wrapped? { nil }
}

/// One stored property of a table: a typed array indexed by row.
///
/// Subclasses hold the values natively (packed integers, `[String]`, …); the base class gives the
/// dynamic view used by the dynamic API, persistence and the undo log. Scalar columns are
/// reached through a switch on their kind, so that each access runs specialized code (a call
/// through the class's vtable would run the unspecialized generic code); the link and list
/// columns give their view through ``ContainerColumn``, which the compiler holds each of them to.
@usableFromInline
package class Column {
    package final let property: Property
    /// The element kind of a scalar column; nil for link and list columns.
    @usableFromInline package final let scalarKind: ScalarKind?
    /// Bumped on every change, so that caches derived from the column know when to rebuild.
    @inlinable package final var version: UInt64 {
        get { _version }
        set { _version = newValue }
        _modify { yield &_version }
    }
    @exclusivity(unchecked) @usableFromInline final var _version: UInt64 = 0

    /// Which ``ContainerColumn`` a link or list column is (known without a dynamic cast); nil
    /// for a scalar column.
    @usableFromInline final let containerKind: ContainerKind?

    /// Whether this is a ``LinkColumn``.
    @inlinable package final var isLinkColumn: Bool { containerKind == .link }

    /// A scalar column of the given kind.
    package init(property: Property, scalarKind: ScalarKind) {
        self.property = property
        self.scalarKind = scalarKind
        self.containerKind = nil
    }

    /// A link or list column; only the three ``ContainerColumn`` classes call it.
    fileprivate init(property: Property, containerKind: ContainerKind) {
        self.property = property
        self.scalarKind = nil
        self.containerKind = containerKind
    }

    /// The column as the ``ContainerColumn`` it is; only for a column without a scalar kind.
    @inlinable package final var container: any ContainerColumn {
        switch containerKind! {
        case .link: unsafeDowncast(self, to: LinkColumn.self)
        case .linkList: unsafeDowncast(self, to: LinkListColumn.self)
        case .valueList: unsafeDowncast(self, to: ValueListColumn.self)
        }
    }

    /// The number of rows, live or not.
    @inlinable package final var count: Int {
        if let k = scalarKind { return k.apply(CountOperation(), to: self) }
        return container.containerCount
    }

    /// The value of a row.
    @inlinable package final func value(at row: Int) -> PropertyValue {
        if let k = scalarKind { return k.apply(ValueOperation(row: row), to: self) }
        return container.containerValue(at: row)
    }

    /// Replaces the value of a row. The value is already checked for the property's type.
    package final func set(_ value: PropertyValue, at row: Int) {
        version &+= 1
        if let k = scalarKind { return k.apply(SetOperation(value: value, row: row), to: self) }
        container.containerSet(value, at: row)
    }

    /// Adds a row at the end.
    package final func append(_ value: PropertyValue) {
        version &+= 1
        if let k = scalarKind { return k.apply(AppendOperation(value: value), to: self) }
        container.containerAppend(value)
    }

    /// Removes the last row.
    package final func removeLast() {
        version &+= 1
        if let k = scalarKind { return k.apply(RemoveLastOperation(), to: self) }
        container.containerRemoveLast()
    }

    /// Reserves room for more rows.
    package final func reserve(_ capacity: Int) {
        if let k = scalarKind { return k.apply(ReserveOperation(capacity: capacity), to: self) }
    }

    /// Starts loading a row's value into the cache (scalar and link columns; others do
    /// nothing).
    @inlinable package final func prefetch(row: Int) {
        if let k = scalarKind { return k.apply(PrefetchOperation(row: row), to: self) }
        if isLinkColumn {
            withUnsafeMutablePointer(to: &unsafeDowncast(self, to: LinkColumn.self).targets) {
                $0.pointee.prefetch(row)
            }
        }
    }

    /// A copy sharing storage until one side changes.
    package final func copy() -> Column {
        if let k = scalarKind { return k.apply(CopyOperation(), to: self) }
        return container.containerCopy()
    }
}

/// The three kinds of ``ContainerColumn``.
@usableFromInline
enum ContainerKind: Sendable {
    case link, linkList, valueList
}

/// A column whose rows are not scalars (a link, a list of links, a list of values): what it
/// gives ``Column``'s dynamic view of its rows.
@usableFromInline
package protocol ContainerColumn: Column {
    /// The number of rows, live or not.
    var containerCount: Int { get }
    /// The value of a row, as a ``PropertyValue``.
    func containerValue(at row: Int) -> PropertyValue
    /// Replaces the value of a row.
    func containerSet(_ value: PropertyValue, at row: Int)
    /// Adds a row at the end.
    func containerAppend(_ value: PropertyValue)
    /// Removes the last row.
    func containerRemoveLast()
    /// A copy sharing storage until one side changes.
    func containerCopy() -> Column
}

/// A column of natively stored scalar values.
@usableFromInline
package final class ScalarColumn<Element: ColumnElement>: Column {
    @inlinable package var values: Element.Storage {
        get { _values }
        set { _values = newValue }
        _modify { yield &_values }
    }
    @exclusivity(unchecked) @usableFromInline var _values = Element.Storage()
}

/// The element type of a scalar column.
@usableFromInline
package enum ScalarKind {
    case bool, int, float, double, string, date, data, uuid, decimal, objectID
    case optionalBool, optionalInt, optionalFloat, optionalDouble, optionalString, optionalDate
    case optionalData, optionalUUID, optionalDecimal, optionalObjectID
    /// A mixed column: ``PropertyValue`` per row.
    case mixed

    /// Runs an operation on a column of this kind, with the element type known statically.
    @inlinable @inline(__always)
    package func apply<Op: ScalarOperation>(_ operation: Op, to column: Column)
        -> Op.Result
    {
        switch self {
        case .bool: operation.apply(unsafeDowncast(column, to: ScalarColumn<Bool>.self))
        case .int: operation.apply(unsafeDowncast(column, to: ScalarColumn<Int64>.self))
        case .float: operation.apply(unsafeDowncast(column, to: ScalarColumn<Float>.self))
        case .double: operation.apply(unsafeDowncast(column, to: ScalarColumn<Double>.self))
        case .string: operation.apply(unsafeDowncast(column, to: ScalarColumn<String>.self))
        case .date: operation.apply(unsafeDowncast(column, to: ScalarColumn<Date>.self))
        case .data: operation.apply(unsafeDowncast(column, to: ScalarColumn<Data>.self))
        case .uuid: operation.apply(unsafeDowncast(column, to: ScalarColumn<UUID>.self))
        case .decimal: operation.apply(unsafeDowncast(column, to: ScalarColumn<Decimal>.self))
        case .objectID: operation.apply(unsafeDowncast(column, to: ScalarColumn<ObjectID>.self))
        case .optionalBool: operation.apply(unsafeDowncast(column, to: ScalarColumn<Bool?>.self))
        case .optionalInt: operation.apply(unsafeDowncast(column, to: ScalarColumn<Int64?>.self))
        case .optionalFloat: operation.apply(unsafeDowncast(column, to: ScalarColumn<Float?>.self))
        case .optionalDouble: operation.apply(unsafeDowncast(column, to: ScalarColumn<Double?>.self))
        case .optionalString: operation.apply(unsafeDowncast(column, to: ScalarColumn<String?>.self))
        case .optionalDate: operation.apply(unsafeDowncast(column, to: ScalarColumn<Date?>.self))
        case .optionalData: operation.apply(unsafeDowncast(column, to: ScalarColumn<Data?>.self))
        case .optionalUUID: operation.apply(unsafeDowncast(column, to: ScalarColumn<UUID?>.self))
        case .optionalDecimal:
            operation.apply(unsafeDowncast(column, to: ScalarColumn<Decimal?>.self))
        case .optionalObjectID:
            operation.apply(unsafeDowncast(column, to: ScalarColumn<ObjectID?>.self))
        case .mixed: operation.apply(unsafeDowncast(column, to: ScalarColumn<PropertyValue>.self))
        }
    }
}

/// An operation on a scalar column, written once for every element type.
@usableFromInline
package protocol ScalarOperation {
    associatedtype Result
    func apply<T: ColumnElement>(_ column: ScalarColumn<T>) -> Result
}

@usableFromInline
struct CountOperation: ScalarOperation {
    @inlinable package init() {}
    @inlinable package func apply<T: ColumnElement>(_ column: ScalarColumn<T>) -> Int { column.values.count }
}

@usableFromInline
struct ValueOperation: ScalarOperation {
    @usableFromInline package let row: Int
    @inlinable package init(row: Int) { self.row = row }
    @inlinable package func apply<T: ColumnElement>(_ column: ScalarColumn<T>) -> PropertyValue {
        column.values[row].propertyValue
    }
}

private struct SetOperation: ScalarOperation {
    package let value: PropertyValue
    package let row: Int
    package func apply<T: ColumnElement>(_ column: ScalarColumn<T>) {
        column.values[row] = T(unchecked: value)
    }
}

private struct AppendOperation: ScalarOperation {
    package let value: PropertyValue
    package func apply<T: ColumnElement>(_ column: ScalarColumn<T>) {
        column.values.append(T(unchecked: value))
    }
}

private struct RemoveLastOperation: ScalarOperation {
    package func apply<T: ColumnElement>(_ column: ScalarColumn<T>) { column.values.removeLast() }
}

private struct ReserveOperation: ScalarOperation {
    package let capacity: Int
    package func apply<T: ColumnElement>(_ column: ScalarColumn<T>) {
        column.values.reserveCapacity(capacity)
    }
}

@usableFromInline
struct PrefetchOperation: ScalarOperation {
    @usableFromInline package let row: Int
    @inlinable package init(row: Int) { self.row = row }
    @inlinable package func apply<T: ColumnElement>(_ column: ScalarColumn<T>) {
        withUnsafeMutablePointer(to: &column.values) { $0.pointee.prefetch(row) }
    }
}

private struct CopyOperation: ScalarOperation {
    package func apply<T: ColumnElement>(_ column: ScalarColumn<T>) -> Column {
        let copy = ScalarColumn<T>(property: column.property, scalarKind: column.scalarKind!)
        copy.values = column.values
        return copy
    }
}

/// A column of to-one links, stored as target rows (`-1` for nil).
@usableFromInline
package final class LinkColumn: Column, ContainerColumn {
    @inlinable package var targets: ChunkedArray<Int32> {
        get { _targets }
        set { _targets = newValue }
        _modify { yield &_targets }
    }
    @exclusivity(unchecked) @usableFromInline var _targets: ChunkedArray<Int32> = ChunkedArray()
    package unowned let target: Table

    package init(property: Property, target: Table) {
        self.target = target
        super.init(property: property, containerKind: .link)
    }

    @usableFromInline package var containerCount: Int { targets.count }
    @usableFromInline package func containerValue(at row: Int) -> PropertyValue {
        let t = targets[row]
        return t < 0 ? .null : .object(target.key(Int32(t)))
    }
    @usableFromInline package func containerSet(_ value: PropertyValue, at row: Int) {
        targets[row] = value.objectKey.map { Int32(bitPattern: $0.row) } ?? -1
    }
    @usableFromInline package func containerAppend(_ value: PropertyValue) {
        targets.append(value.objectKey.map { Int32(bitPattern: $0.row) } ?? -1)
    }
    @usableFromInline package func containerRemoveLast() { targets.removeLast() }
    @usableFromInline package func containerCopy() -> Column {
        let c = LinkColumn(property: property, target: target)
        c.targets = targets
        return c
    }
}

/// A column of lists of links, each stored as target rows. For a map of objects
/// (``Property/isMap``) the lists hold the targets in the order of their keys, `-1` for a key
/// whose value is nil (no object), and ``keys`` holds each row's keys, sorted; the column's whole
/// value of a row is then the list of `[.string(key), .object(key) or .null]` pairs.
@usableFromInline
package final class LinkListColumn: Column, ContainerColumn {
    @inlinable package var lists: ChunkedArray<[Int32]> {
        get { _lists }
        set { _lists = newValue }
        _modify { yield &_lists }
    }
    @exclusivity(unchecked) @usableFromInline var _lists: ChunkedArray<[Int32]> = ChunkedArray()
    /// For a map: the keys of each row, sorted, one per target of ``lists``. Empty otherwise.
    @inlinable package var keys: ChunkedArray<[String]> {
        get { _keys }
        set { _keys = newValue }
        _modify { yield &_keys }
    }
    @exclusivity(unchecked) @usableFromInline var _keys: ChunkedArray<[String]> = ChunkedArray()
    package unowned let target: Table
    /// Whether the column holds a map of objects.
    package let isMap: Bool

    package init(property: Property, target: Table) {
        self.target = target
        isMap = property.isMap
        super.init(property: property, containerKind: .linkList)
    }

    @usableFromInline package var containerCount: Int { lists.count }
    @usableFromInline package func containerValue(at row: Int) -> PropertyValue {
        guard isMap else { return .list(lists[row].map { .object(target.key($0)) }) }
        return .list(zip(keys[row], lists[row]).map { .list([.string($0), element($1)]) })
    }
    @usableFromInline package func containerSet(_ value: PropertyValue, at row: Int) {
        guard isMap else {
            lists[row] = Self.rows(value)
            return
        }
        let (k, t) = Self.mapEntries(value)
        keys[row] = k
        lists[row] = t
    }
    @usableFromInline package func containerAppend(_ value: PropertyValue) {
        guard isMap else {
            lists.append(Self.rows(value))
            return
        }
        let (k, t) = Self.mapEntries(value)
        keys.append(k)
        lists.append(t)
    }
    @usableFromInline package func containerRemoveLast() {
        lists.removeLast()
        if isMap { keys.removeLast() }
    }
    @usableFromInline package func containerCopy() -> Column {
        let c = LinkListColumn(property: property, target: target)
        c.lists = lists
        c.keys = keys
        return c
    }

    /// A stored target as a value: the target's key, or null for a map entry with no object.
    package func element(_ t: Int32) -> PropertyValue { t < 0 ? .null : .object(target.key(t)) }

    package static func rows(_ value: PropertyValue) -> [Int32] {
        guard case .list(let items) = value else { return [] }
        return items.compactMap { $0.objectKey.map { Int32(bitPattern: $0.row) } }
    }

    /// A map's keys and targets (`-1` for nil) from its whole value (pairs already checked and
    /// sorted).
    package static func mapEntries(_ value: PropertyValue) -> ([String], [Int32]) {
        guard case .list(let items) = value else { return ([], []) }
        var keys: [String] = []
        var targets: [Int32] = []
        keys.reserveCapacity(items.count)
        targets.reserveCapacity(items.count)
        for item in items {
            guard case .list(let pair) = item, pair.count == 2, case .string(let key) = pair[0] else { continue }
            keys.append(key)
            targets.append(pair[1].objectKey.map { Int32(bitPattern: $0.row) } ?? -1)
        }
        return (keys, targets)
    }
}

/// A column of lists of primitive values. For a map (``Property/isMap``) the lists hold the
/// values in the order of their keys, and ``keys`` holds each row's keys, sorted; the column's
/// whole value of a row is then the list of `[.string(key), value]` pairs.
@usableFromInline
package final class ValueListColumn: Column, ContainerColumn {
    @inlinable package var lists: ChunkedArray<[PropertyValue]> {
        get { _lists }
        set { _lists = newValue }
        _modify { yield &_lists }
    }
    @exclusivity(unchecked) @usableFromInline var _lists: ChunkedArray<[PropertyValue]> = ChunkedArray()
    /// For a map: the keys of each row, sorted, one per value of ``lists``. Empty otherwise.
    @inlinable package var keys: ChunkedArray<[String]> {
        get { _keys }
        set { _keys = newValue }
        _modify { yield &_keys }
    }
    @exclusivity(unchecked) @usableFromInline var _keys: ChunkedArray<[String]> = ChunkedArray()
    /// Whether the column holds a map.
    package let isMap: Bool

    package init(property: Property) {
        isMap = property.isMap
        super.init(property: property, containerKind: .valueList)
    }

    @usableFromInline package var containerCount: Int { lists.count }
    @usableFromInline package func containerValue(at row: Int) -> PropertyValue {
        guard isMap else { return .list(lists[row]) }
        return Self.pairs(keys[row], lists[row])
    }
    @usableFromInline package func containerSet(_ value: PropertyValue, at row: Int) {
        guard isMap else {
            if case .list(let items) = value { lists[row] = items } else { lists[row] = [] }
            return
        }
        let (k, v) = Self.entries(value)
        keys[row] = k
        lists[row] = v
    }
    @usableFromInline package func containerAppend(_ value: PropertyValue) {
        guard isMap else {
            if case .list(let items) = value { lists.append(items) } else { lists.append([]) }
            return
        }
        let (k, v) = Self.entries(value)
        keys.append(k)
        lists.append(v)
    }
    @usableFromInline package func containerRemoveLast() {
        lists.removeLast()
        if isMap { keys.removeLast() }
    }
    @usableFromInline package func containerCopy() -> Column {
        let c = ValueListColumn(property: property)
        c.lists = lists
        c.keys = keys
        return c
    }

    /// A map's whole value: its entries as `[.string(key), value]` pairs.
    package static func pairs(_ keys: [String], _ values: [PropertyValue]) -> PropertyValue {
        .list(zip(keys, values).map { .list([.string($0), $1]) })
    }

    /// A map's keys and values from its whole value (pairs already checked and sorted).
    package static func entries(_ value: PropertyValue) -> ([String], [PropertyValue]) {
        guard case .list(let items) = value else { return ([], []) }
        var keys: [String] = []
        var values: [PropertyValue] = []
        keys.reserveCapacity(items.count)
        values.reserveCapacity(items.count)
        for item in items {
            guard case .list(let pair) = item, pair.count == 2, case .string(let key) = pair[0] else { continue }
            keys.append(key)
            values.append(pair[1])
        }
        return (keys, values)
    }
}

extension Column {
    /// Makes the column that stores `property`.
    package static func make(for property: Property, target: Table?) -> Column {
        if property.type == .object {
            return property.isList
                ? LinkListColumn(property: property, target: target!)
                : LinkColumn(property: property, target: target!)
        }
        if property.isList { return ValueListColumn(property: property) }
        func scalar<T: ColumnElement>(_: T.Type, _ kind: ScalarKind, _ optionalKind: ScalarKind) -> Column {
            property.isOptional
                ? ScalarColumn<T?>(property: property, scalarKind: optionalKind)
                : ScalarColumn<T>(property: property, scalarKind: kind)
        }
        switch property.type {
        case .bool: return scalar(Bool.self, .bool, .optionalBool)
        case .int, .int8, .int16, .int32, .int64: return scalar(Int64.self, .int, .optionalInt)
        case .float: return scalar(Float.self, .float, .optionalFloat)
        case .double: return scalar(Double.self, .double, .optionalDouble)
        case .string: return scalar(String.self, .string, .optionalString)
        case .date: return scalar(Date.self, .date, .optionalDate)
        case .data: return scalar(Data.self, .data, .optionalData)
        case .uuid: return scalar(UUID.self, .uuid, .optionalUUID)
        case .decimal: return scalar(Decimal.self, .decimal, .optionalDecimal)
        case .objectID: return scalar(ObjectID.self, .objectID, .optionalObjectID)
        case .mixed: return ScalarColumn<PropertyValue>(property: property, scalarKind: .mixed)
        case .object, .linkingObjects: fatalError("unreachable")
        }
    }
}

extension Property {
    /// The value a property takes when none is given.
    package var zeroValue: PropertyValue {
        if isList { return .list([]) }
        if isOptional || type == .object { return .null }
        switch type {
        case .bool: return .bool(false)
        case .int, .int8, .int16, .int32, .int64: return .int(0)
        case .float: return .float(0)
        case .double: return .double(0)
        case .string: return .string("")
        case .date: return .date(Date.zero)
        case .data: return .data(Data())
        case .uuid: return .uuid(UUID.zero)
        case .decimal: return .decimal(0)
        case .objectID: return .objectID(.zero)
        case .mixed, .object, .linkingObjects: return .null
        }
    }
}
