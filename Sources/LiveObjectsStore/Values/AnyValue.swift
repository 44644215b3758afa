import Foundation

/// A value of any kind a mixed property holds: `@Persisted var payload: AnyValue`.
///
/// Each object's value has a kind of its own, which queries read with `payload.@type`. Equality
/// of two `AnyValue`s is by kind and payload (`.int(1) != .double(1)`); queries compare numbers
/// across kinds by value (`payload == 1` matches `.int(1)`, `.double(1)` and `.decimal(1)`),
/// and never a string with a number. `.null` is the property's nil: the property itself is not
/// optional.
///
/// ```swift
/// var value: AnyValue = "hello"
/// value = 42
/// value = .decimal(Decimal(string: "9.99")!)
/// assert(value.kindName == "decimal")
/// ```
///
/// Links to objects and nested lists or maps are not kinds of `AnyValue` yet.
public enum AnyValue: Hashable, Sendable, CustomStringConvertible {
    /// No value.
    case null
    case bool(Bool)
    case int(Int)
    case float(Float)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    /// A Foundation `Decimal`, kept exact.
    case decimal(Decimal)
    case objectID(ObjectID)

    /// The names of the kinds, as `@type` reads them in queries, in sort order: `"null"`,
    /// `"bool"`, `"int"`, `"float"`, `"double"`, `"decimal"`, `"string"`, `"data"`, `"date"`,
    /// `"objectId"`, `"uuid"`.
    public static let kindNames = [
        "null", "bool", "int", "float", "double", "decimal", "string", "data", "date", "objectId", "uuid",
    ]

    /// The name of the value's kind (one of ``kindNames``).
    public var kindName: String { AnyValue.kindName(of: propertyValue) }

    /// Whether the value is ``null``.
    public var isNull: Bool { self == .null }

    public var description: String {
        switch self {
        case .string(let v): "\"\(v)\""
        default: propertyValue.description
        }
    }

    /// The stored form of the value.
    public var propertyValue: PropertyValue {
        switch self {
        case .null: .null
        case .bool(let v): .bool(v)
        case .int(let v): .int(Int64(v))
        case .float(let v): .float(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .date(let v): .date(v)
        case .data(let v): .data(v)
        case .uuid(let v): .uuid(v)
        case .decimal(let v): .decimal(v)
        case .objectID(let v): .objectID(v)
        }
    }

    /// The value of a stored value; nil for a link or a list, which are not kinds of `AnyValue`.
    public init?(_ value: PropertyValue) {
        switch value {
        case .null: self = .null
        case .bool(let v): self = .bool(v)
        case .int(let v): self = .int(Int(v))
        case .float(let v): self = .float(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .date(let v): self = .date(v)
        case .data(let v): self = .data(v)
        case .uuid(let v): self = .uuid(v)
        case .decimal(let v): self = .decimal(v)
        case .objectID(let v): self = .objectID(v)
        case .object, .list: return nil
        }
    }

    /// The kind name of a stored value (``kindNames``); `"object"` and `"list"` for the kinds
    /// a mixed property does not hold.
    package static func kindName(of value: PropertyValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .double: "double"
        case .decimal: "decimal"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .objectID: "objectId"
        case .uuid: "uuid"
        case .object: "object"
        case .list: "list"
        }
    }

    /// The kind names a query's `@type` test accepts for a name (any case): a kind name, the
    /// aliases `binary` (data) and `timestamp` (date), and `numeric` (int, float, double and
    /// decimal); nil for an unknown name.
    package static func kindNames(matching name: String) -> [String]? {
        switch name.lowercased() {
        case "numeric": ["int", "float", "double", "decimal"]
        case "binary": ["data"]
        case "timestamp": ["date"]
        case let lower: kindNames.first { $0.lowercased() == lower }.map { [$0] }
        }
    }

    /// The place of a stored value's kind in the order of a sort over mixed values: null,
    /// bools, numbers (compared by value across kinds), strings, data, dates, object ids, UUIDs.
    package static func sortRank(of value: PropertyValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int, .float, .double, .decimal: 2
        case .string: 3
        case .data: 4
        case .date: 5
        case .objectID: 6
        case .uuid: 7
        case .object: 8
        case .list: 9
        }
    }
}

extension AnyValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
}

/// `Codable` as JSON reads it: null, a bool, an integer (``AnyValue/int(_:)``), a string, and a
/// number with a fraction or exponent (``AnyValue/double(_:)``) are themselves; the other kinds
/// are an object of one member that names the kind: `{"float": 1.5}`, `{"double": 2}` (a double
/// whose value is an integer, or `"NaN"`, `"Infinity"`, `"-Infinity"`), `{"date": seconds since
/// 2001-01-01T00:00:00Z}`, `{"data": "base64"}`, `{"uuid": "…"}`, `{"decimal": "exact text"}`,
/// `{"objectID": "24 hex digits"}`. Every value reads back as the kind and payload it was
/// written with; a string that looks like a date stays a string.
extension AnyValue: Codable {
    /// The member names of the kinds written as an object of one member.
    enum TaggedKey: String, CodingKey, CaseIterable {
        case float, double, date, data, uuid, decimal, objectID
    }

    /// Whether a double is written bare: a finite value that is no integer (which reads back
    /// as a double, not an int).
    package static func writesBare(_ value: Double) -> Bool {
        value.isFinite && Int64(exactly: value) == nil
    }

    /// The text of a non-finite double or float; nil for a finite one.
    package static func nonFiniteText(_ value: Double) -> String? {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return nil
    }

    /// A non-finite number's text read back.
    package static func nonFinite(_ text: String) -> Double? {
        switch text {
        case "NaN": .nan
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        default: nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        func tagged<T: Encodable>(_ key: TaggedKey, _ payload: T) throws {
            var c = encoder.container(keyedBy: TaggedKey.self)
            try c.encode(payload, forKey: key)
        }
        switch self {
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .int(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .string(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .double(let v) where Self.writesBare(v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .double(let v):
            if let text = Self.nonFiniteText(v) { try tagged(.double, text) } else { try tagged(.double, v) }
        case .float(let v):
            if let text = Self.nonFiniteText(Double(v)) { try tagged(.float, text) } else { try tagged(.float, v) }
        case .date(let v): try tagged(.date, v.timeIntervalSinceReferenceDate)
        case .data(let v): try tagged(.data, v.base64EncodedString())
        case .uuid(let v): try tagged(.uuid, v.uuidString)
        case .decimal(let v): try tagged(.decimal, v.exactText)
        case .objectID(let v): try tagged(.objectID, v.hexString)
        }
    }

    public init(from decoder: any Decoder) throws {
        if let c = try? decoder.container(keyedBy: TaggedKey.self) {
            self = try Self.decodeTagged(c)
            return
        }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let v = try? c.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? c.decode(String.self) {
            self = .string(v)
        } else if let v = try? c.decode(Int.self) {
            self = .int(v)
        } else if let v = try? c.decode(Double.self) {
            self = .double(v)
        } else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath,
                    debugDescription: "an AnyValue is null, a bool, a number, a string or an object naming its kind"
                        + " (lists and maps in an AnyValue are not supported yet)"))
        }
    }

    private static func decodeTagged(_ c: KeyedDecodingContainer<TaggedKey>) throws -> AnyValue {
        func corrupt(_ why: String) -> DecodingError {
            .dataCorrupted(.init(codingPath: c.codingPath, debugDescription: why))
        }
        guard c.allKeys.count == 1, let key = c.allKeys.first else {
            throw corrupt(
                "an AnyValue object has one member, naming its kind: "
                    + TaggedKey.allCases.map(\.rawValue).joined(separator: ", "))
        }
        func number() throws -> Double {
            if let text = try? c.decode(String.self, forKey: key) {
                guard let v = nonFinite(text) else { throw corrupt("'\(text)' is not a number") }
                return v
            }
            return try c.decode(Double.self, forKey: key)
        }
        switch key {
        case .float: return .float(Float(try number()))
        case .double: return .double(try number())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try c.decode(Double.self, forKey: key)))
        case .data:
            let text = try c.decode(String.self, forKey: key)
            guard let data = Data(base64Encoded: text) else { throw corrupt("'\(text)' is not base64") }
            return .data(data)
        case .uuid:
            let text = try c.decode(String.self, forKey: key)
            guard let uuid = UUID(uuidString: text) else { throw corrupt("'\(text)' is not a UUID") }
            return .uuid(uuid)
        case .decimal:
            let text = try c.decode(String.self, forKey: key)
            guard let d = Decimal(exactText: text) else { throw corrupt("'\(text)' is not a decimal number") }
            return .decimal(d)
        case .objectID:
            let text = try c.decode(String.self, forKey: key)
            guard let id = ObjectID(hex: text) else { throw corrupt("'\(text)' is not an ObjectID (24 hex digits)") }
            return .objectID(id)
        }
    }
}
