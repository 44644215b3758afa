import Foundation

/// A Swift type that a ``PropertyValue`` can be read as, for typed reads of the dynamic API
/// (`object["name", as: String.self]`).
public protocol PropertyValueReadable {
    /// The value as this type, or `nil` when it holds another kind of value (or `null`).
    init?(propertyValue: PropertyValue)
}

extension String: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .string(let value) = propertyValue else { return nil }
        self = value
    }
}

extension Bool: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .bool(let value) = propertyValue else { return nil }
        self = value
    }
}

extension Int: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .int(let value) = propertyValue, let exact = Int(exactly: value) else { return nil }
        self = exact
    }
}

extension Int64: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .int(let value) = propertyValue else { return nil }
        self = value
    }
}

extension Int32: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .int(let value) = propertyValue, let exact = Int32(exactly: value) else { return nil }
        self = exact
    }
}

extension Double: PropertyValueReadable {
    /// Integers and floats read as doubles too.
    public init?(propertyValue: PropertyValue) {
        guard let value = propertyValue.doubleValue else { return nil }
        self = value
    }
}

extension Float: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .float(let value) = propertyValue else { return nil }
        self = value
    }
}

extension Date: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .date(let value) = propertyValue else { return nil }
        self = value
    }
}

extension Data: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .data(let value) = propertyValue else { return nil }
        self = value
    }
}

extension UUID: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .uuid(let value) = propertyValue else { return nil }
        self = value
    }
}

extension ObjectKey: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .object(let value) = propertyValue else { return nil }
        self = value
    }
}
