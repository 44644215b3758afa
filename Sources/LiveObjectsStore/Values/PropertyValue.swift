import Foundation

/// A stable reference to an object inside one table of one realm.
///
/// A key stays the same for the whole life of the object. Once the object is deleted, its key no
/// longer resolves, even if the storage slot is later reused: keys carry a generation.
public struct ObjectKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The storage slot of the object in its table.
    public var row: UInt32
    /// Tells apart the objects that use the same slot over time: it goes up whenever the slot
    /// is freed (or the creation of an object in it is rolled back).
    public var generation: UInt32

    /// Creates a key from its slot and generation.
    @inlinable public init(row: UInt32, generation: UInt32) {
        self.row = row
        self.generation = generation
    }

    @inlinable public static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        (lhs.row, lhs.generation) < (rhs.row, rhs.generation)
    }

    public var description: String { generation == 0 ? "#\(row)" : "#\(row).\(generation)" }
}

/// A dynamically typed property value, used by the dynamic (schema-as-data) API.
///
/// Integer properties of every width use ``int(_:)``; links use ``object(_:)`` with the key of the
/// target object; `List` properties use ``list(_:)``.
public enum PropertyValue: Hashable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    /// A Foundation `Decimal`, kept exact (never converted through `Double`).
    case decimal(Decimal)
    case objectID(ObjectID)
    case object(ObjectKey)
    case list([PropertyValue])

    /// The case of a value, without its payload.
    @usableFromInline package enum Tag {
        case null, bool, int, float, double, string, date, data, uuid, decimal, objectID, object, list
    }

    /// The case of the value.
    @inlinable package var tag: Tag {
        switch self {
        case .null: .null
        case .bool: .bool
        case .int: .int
        case .float: .float
        case .double: .double
        case .string: .string
        case .date: .date
        case .data: .data
        case .uuid: .uuid
        case .decimal: .decimal
        case .objectID: .objectID
        case .object: .object
        case .list: .list
        }
    }

    /// Whether the value is ``null``.
    @inlinable public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let v): String(v)
        case .int(let v): String(v)
        case .float(let v): String(v)
        case .double(let v): String(v)
        case .string(let v): "\"\(v)\""
        case .date(let v): v.formatted(.iso8601)
        case .data(let v): "<\(v.count) bytes>"
        case .uuid(let v): v.uuidString
        case .decimal(let v): v.exactText
        case .objectID(let v): v.hexString
        case .object(let key): key.description
        case .list(let values) where MixedContainer(values) != nil:
            // An AnyValue's nested list or dictionary, as itself.
            AnyValue(self)?.description ?? "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .list(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        }
    }

    /// The value as an `Int64`, if it is an integer.
    @inlinable public var intValue: Int64? {
        if case .int(let v) = self { return v }
        return nil
    }

    /// The value as a `String`, if it is a string.
    @inlinable public var stringValue: String? {
        if case .string(let v) = self { return v }
        return nil
    }

    /// The value as a `Double`, if it is a number of any kind.
    @inlinable public var doubleValue: Double? {
        switch self {
        case .int(let v): Double(v)
        case .float(let v): Double(v)
        case .double(let v): v
        default: nil
        }
    }

    /// The value as a `Bool`, if it is a boolean.
    @inlinable public var boolValue: Bool? {
        if case .bool(let v) = self { return v }
        return nil
    }

    /// The key, if the value is a link.
    @inlinable public var objectKey: ObjectKey? {
        if case .object(let key) = self { return key }
        return nil
    }
}

extension PropertyValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral
{
    @inlinable public init(nilLiteral: ()) { self = .null }
    @inlinable public init(booleanLiteral value: Bool) { self = .bool(value) }
    @inlinable public init(integerLiteral value: Int64) { self = .int(value) }
    @inlinable public init(floatLiteral value: Double) { self = .double(value) }
    @inlinable public init(stringLiteral value: String) { self = .string(value) }
    @inlinable public init(arrayLiteral elements: PropertyValue...) { self = .list(elements) }
}

extension Date {
    /// The stored default of a non-optional `Date`: 2001-01-01T00:00:00Z.
    package static let zero = Date(timeIntervalSinceReferenceDate: 0)
}

extension UUID {
    /// The all-zero UUID, the stored default of a non-optional `UUID`.
    package static let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
