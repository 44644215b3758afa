import LiveObjectsJSON

/// A message of the wire that is not the protocol's: not JSON, or JSON of another shape.
public struct SyncWireFormatError: Error, Hashable, Sendable, CustomStringConvertible, JSONReadingError {
    /// What is wrong, and where in the message.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The error of a text that is not JSON.
    public init(_ error: JSONError) { message = error.message }

    /// The message.
    public var description: String { message }
}

extension JSONValue {
    /// Parses a message of the wire.
    ///
    /// - Throws: ``SyncWireFormatError`` for a text that is not JSON.
    package init(wire bytes: some Collection<UInt8>) throws(SyncWireFormatError) {
        try self.init(parsing: Array(bytes), errors: SyncWireFormatError.self)
    }

    /// An object of members in order, the absent ones (nil) left out.
    package static func members(_ members: [(String, JSONValue?)]) -> JSONValue {
        .object(members.compactMap { key, value in value.map { (key: key, value: $0) } })
    }
}

/// The members of an object of the wire, read as the protocol's messages read them: an absent
/// member and a `null` one are the same for an optional member, unknown members are ignored.
package struct WireObject {
    /// The members, in order.
    package let members: [(key: String, value: JSONValue)]
    /// What the object is, for error messages (`"a receipt"`).
    package let what: String

    /// Reads an object.
    ///
    /// - Throws: ``SyncWireFormatError`` when `value` is not an object.
    package init(_ value: JSONValue, _ what: String) throws(SyncWireFormatError) {
        guard let members = value.objectValue else { throw SyncWireFormatError("\(what) is not a JSON object") }
        self.members = members
        self.what = what
    }

    /// The member, nil when it is absent or `null`.
    package subscript(key: String) -> JSONValue? {
        guard let value = members.first(where: { $0.key == key })?.value, !value.isNull else { return nil }
        return value
    }

    /// Whether the object has the member, `null` included.
    package func contains(_ key: String) -> Bool { members.contains { $0.key == key } }

    /// The error of a member of the wrong type.
    package func wrong(_ key: String, _ expected: String) -> SyncWireFormatError {
        SyncWireFormatError("the member \"\(key)\" of \(what) is not \(expected)")
    }

    /// A required member.
    package func required(_ key: String) throws(SyncWireFormatError) -> JSONValue {
        guard let value = self[key] else { throw SyncWireFormatError("\(what) has no member \"\(key)\"") }
        return value
    }

    /// A required string.
    package func string(_ key: String) throws(SyncWireFormatError) -> String {
        guard let text = try required(key).stringValue else { throw wrong(key, "a string") }
        return text
    }

    /// An optional string.
    package func optionalString(_ key: String) throws(SyncWireFormatError) -> String? {
        guard let value = self[key] else { return nil }
        guard let text = value.stringValue else { throw wrong(key, "a string") }
        return text
    }

    /// A required boolean.
    package func bool(_ key: String) throws(SyncWireFormatError) -> Bool {
        guard let flag = try required(key).boolValue else { throw wrong(key, "a boolean") }
        return flag
    }

    /// An optional boolean.
    package func optionalBool(_ key: String) throws(SyncWireFormatError) -> Bool? {
        guard let value = self[key] else { return nil }
        guard let flag = value.boolValue else { throw wrong(key, "a boolean") }
        return flag
    }

    /// An optional integer within `Int64`.
    func optionalInt64(_ key: String) throws(SyncWireFormatError) -> Int64? {
        guard let value = self[key] else { return nil }
        guard let number = value.int64Value else { throw wrong(key, "an integer") }
        return number
    }

    /// An optional integer within `Int`.
    package func optionalInt(_ key: String) throws(SyncWireFormatError) -> Int? {
        guard let number = try optionalInt64(key) else { return nil }
        guard let int = Int(exactly: number) else { throw wrong(key, "an integer") }
        return int
    }

    /// An optional integer within `UInt64`.
    package func optionalUInt64(_ key: String) throws(SyncWireFormatError) -> UInt64? {
        guard let value = self[key] else { return nil }
        guard let number = value.numberValue, number.isInteger, let unsigned = UInt64(number.text) else {
            throw wrong(key, "a non-negative integer")
        }
        return unsigned
    }

    /// A required integer within `UInt64`.
    package func uint64(_ key: String) throws(SyncWireFormatError) -> UInt64 {
        _ = try required(key)
        return try optionalUInt64(key)!
    }

    /// A required array.
    package func array(_ key: String) throws(SyncWireFormatError) -> [JSONValue] {
        guard let elements = try required(key).arrayValue else { throw wrong(key, "an array") }
        return elements
    }

    /// An optional array.
    package func optionalArray(_ key: String) throws(SyncWireFormatError) -> [JSONValue]? {
        guard let value = self[key] else { return nil }
        guard let elements = value.arrayValue else { throw wrong(key, "an array") }
        return elements
    }

    /// An optional object, as its members (of a repeated name, the first, as Foundation's decoder
    /// kept it).
    package func optionalObject(_ key: String) throws(SyncWireFormatError) -> [String: JSONValue]? {
        guard let value = self[key] else { return nil }
        guard let members = value.objectValue else { throw wrong(key, "an object") }
        return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

/// A message of the wire with values of the realm: the device's side reads and writes it as a
/// ``JSONValue``.
package protocol WireJSONConvertible {
    /// The JSON of the message.
    ///
    /// - Throws: ``SyncWireFormatError`` for a value the wire cannot carry.
    func json() throws(SyncWireFormatError) -> JSONValue

    /// Reads the message.
    ///
    /// - Throws: ``SyncWireFormatError`` for JSON of another shape.
    init(json: JSONValue) throws(SyncWireFormatError)
}

extension WireJSONConvertible {
    /// The compact JSON text of the message.
    package func jsonBytes() throws(SyncWireFormatError) -> [UInt8] { try json().jsonBytes() }

    /// Reads the message from its JSON text.
    package init(jsonBytes bytes: some Collection<UInt8>) throws(SyncWireFormatError) {
        try self.init(json: JSONValue(wire: bytes))
    }
}
