import Foundation

/// A value type that a scalar column stores natively.
package protocol ColumnElement {
    init(unchecked value: PropertyValue)
    var propertyValue: PropertyValue { get }
    static var storedZero: Self { get }
}

extension Bool: ColumnElement {
    package init(unchecked value: PropertyValue) { self = value.boolValue ?? false }
    package var propertyValue: PropertyValue { .bool(self) }
    package static var storedZero: Bool { false }
}

extension Int64: ColumnElement {
    package init(unchecked value: PropertyValue) { self = value.intValue ?? 0 }
    package var propertyValue: PropertyValue { .int(self) }
    package static var storedZero: Int64 { 0 }
}

extension Float: ColumnElement {
    package init(unchecked value: PropertyValue) {
        if case .float(let v) = value { self = v } else { self = 0 }
    }
    package var propertyValue: PropertyValue { .float(self) }
    package static var storedZero: Float { 0 }
}

extension Double: ColumnElement {
    package init(unchecked value: PropertyValue) {
        if case .double(let v) = value { self = v } else { self = 0 }
    }
    package var propertyValue: PropertyValue { .double(self) }
    package static var storedZero: Double { 0 }
}

extension String: ColumnElement {
    package init(unchecked value: PropertyValue) { self = value.stringValue ?? "" }
    package var propertyValue: PropertyValue { .string(self) }
    package static var storedZero: String { "" }
}

extension Date: ColumnElement {
    package init(unchecked value: PropertyValue) {
        if case .date(let v) = value { self = v } else { self = .zero }
    }
    package var propertyValue: PropertyValue { .date(self) }
    package static var storedZero: Date { .zero }
}

extension Data: ColumnElement {
    package init(unchecked value: PropertyValue) {
        if case .data(let v) = value { self = v } else { self = Data() }
    }
    package var propertyValue: PropertyValue { .data(self) }
    package static var storedZero: Data { Data() }
}

extension UUID: ColumnElement {
    package init(unchecked value: PropertyValue) {
        if case .uuid(let v) = value { self = v } else { self = .zero }
    }
    package var propertyValue: PropertyValue { .uuid(self) }
    package static var storedZero: UUID { .zero }
}

extension Optional: ColumnElement where Wrapped: ColumnElement {
    package init(unchecked value: PropertyValue) {
        self = value.isNull ? nil : Wrapped(unchecked: value)
    }
    package var propertyValue: PropertyValue { self?.propertyValue ?? .null }
    package static var storedZero: Wrapped? { nil }
}

/// One stored property of a table: a typed array indexed by row.
///
/// Subclasses hold the values natively (`[Int64]`, `[String]`, …); the base class gives the
/// dynamic view used by the dynamic API, persistence and the undo log.
package class Column {
    package final let property: Property

    init(property: Property) {
        self.property = property
    }

    /// The number of rows, live or not.
    package var count: Int { fatalError("abstract") }
    /// The value of a row.
    package func value(at row: Int) -> PropertyValue { fatalError("abstract") }
    /// Replaces the value of a row. The value is already checked for the property's type.
    func set(_ value: PropertyValue, at row: Int) { fatalError("abstract") }
    /// Adds a row at the end.
    func append(_ value: PropertyValue) { fatalError("abstract") }
    /// Removes the last row.
    func removeLast() { fatalError("abstract") }
    /// Reserves room for more rows.
    func reserve(_ capacity: Int) {}
    /// A copy sharing storage until one side changes.
    func copy() -> Column { fatalError("abstract") }
}

/// A column of natively stored scalar values.
package final class ScalarColumn<Element: ColumnElement>: Column {
    package var values: [Element] = []

    override package var count: Int { values.count }
    override package func value(at row: Int) -> PropertyValue { values[row].propertyValue }
    override func set(_ value: PropertyValue, at row: Int) { values[row] = Element(unchecked: value) }
    override func append(_ value: PropertyValue) { values.append(Element(unchecked: value)) }
    override func removeLast() { values.removeLast() }
    override func reserve(_ capacity: Int) { values.reserveCapacity(capacity) }
    override func copy() -> Column {
        let c = ScalarColumn<Element>(property: property)
        c.values = values
        return c
    }
}

/// A column of to-one links, stored as target rows (`-1` for nil).
package final class LinkColumn: Column {
    package var targets: [Int32] = []
    package unowned let target: Table

    init(property: Property, target: Table) {
        self.target = target
        super.init(property: property)
    }

    override package var count: Int { targets.count }
    override package func value(at row: Int) -> PropertyValue {
        let t = targets[row]
        return t < 0 ? .null : .object(target.key(Int32(t)))
    }
    override func set(_ value: PropertyValue, at row: Int) {
        targets[row] = value.objectKey.map { Int32(bitPattern: $0.row) } ?? -1
    }
    override func append(_ value: PropertyValue) {
        targets.append(value.objectKey.map { Int32(bitPattern: $0.row) } ?? -1)
    }
    override func removeLast() { targets.removeLast() }
    override func reserve(_ capacity: Int) { targets.reserveCapacity(capacity) }
    override func copy() -> Column {
        let c = LinkColumn(property: property, target: target)
        c.targets = targets
        return c
    }
}

/// A column of lists of links, each stored as target rows.
package final class LinkListColumn: Column {
    package var lists: [[Int32]] = []
    package unowned let target: Table

    init(property: Property, target: Table) {
        self.target = target
        super.init(property: property)
    }

    override package var count: Int { lists.count }
    override package func value(at row: Int) -> PropertyValue {
        .list(lists[row].map { .object(target.key($0)) })
    }
    override func set(_ value: PropertyValue, at row: Int) {
        lists[row] = Self.rows(value)
    }
    override func append(_ value: PropertyValue) { lists.append(Self.rows(value)) }
    override func removeLast() { lists.removeLast() }
    override func copy() -> Column {
        let c = LinkListColumn(property: property, target: target)
        c.lists = lists
        return c
    }

    static func rows(_ value: PropertyValue) -> [Int32] {
        guard case .list(let items) = value else { return [] }
        return items.compactMap { $0.objectKey.map { Int32(bitPattern: $0.row) } }
    }
}

/// A column of lists of primitive values.
package final class ValueListColumn: Column {
    package var lists: [[PropertyValue]] = []

    override package var count: Int { lists.count }
    override package func value(at row: Int) -> PropertyValue { .list(lists[row]) }
    override func set(_ value: PropertyValue, at row: Int) {
        if case .list(let items) = value { lists[row] = items } else { lists[row] = [] }
    }
    override func append(_ value: PropertyValue) {
        if case .list(let items) = value { lists.append(items) } else { lists.append([]) }
    }
    override func removeLast() { lists.removeLast() }
    override func copy() -> Column {
        let c = ValueListColumn(property: property)
        c.lists = lists
        return c
    }
}

extension Column {
    /// Makes the column that stores `property`.
    static func make(for property: Property, target: Table?) -> Column {
        if property.type == .object {
            return property.isList
                ? LinkListColumn(property: property, target: target!)
                : LinkColumn(property: property, target: target!)
        }
        if property.isList { return ValueListColumn(property: property) }
        func scalar<T: ColumnElement>(_: T.Type) -> Column {
            property.isOptional
                ? ScalarColumn<T?>(property: property) : ScalarColumn<T>(property: property)
        }
        switch property.type {
        case .bool: return scalar(Bool.self)
        case .int, .int8, .int16, .int32, .int64: return scalar(Int64.self)
        case .float: return scalar(Float.self)
        case .double: return scalar(Double.self)
        case .string: return scalar(String.self)
        case .date: return scalar(Date.self)
        case .data: return scalar(Data.self)
        case .uuid: return scalar(UUID.self)
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
        case .object, .linkingObjects: return .null
        }
    }
}
