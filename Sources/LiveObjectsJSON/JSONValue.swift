/// A JSON value as a tree: the convenient, allocating representation.
///
/// Objects keep their members in document order, duplicates included (``subscript(_:)-(String)``
/// finds the first). Numbers keep their text (see ``JSONNumber``), so nothing is rounded until a
/// type is chosen. Equality is structural and compares numbers by text: `1.0` and `1` differ.
///
/// For loading many records, the cursor methods of the package's `JSONReader` avoid building the
/// tree. Outside the package (the sync server), parse with `init(parsing:options:)` and
/// write with ``jsonBytes(options:)``.
public enum JSONValue: Sendable, Hashable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its text.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object: its members in document order.
    case object([(key: String, value: JSONValue)])

    /// An integer number.
    public static func int(_ value: Int64) -> JSONValue { .number(JSONNumber(value)) }

    /// A `Double` in its shortest round-trip form; a non-finite one as the string `"NaN"`,
    /// `"Infinity"` or `"-Infinity"`, the convention of ``JSONWriter/double(_:)``.
    public static func double(_ value: Double) -> JSONValue {
        value.isFinite ? .number(JSONNumber(value)) : .string(JSONWriter.format(value))
    }

    /// A `Float` in its own shortest round-trip form; non-finite ones as for ``double(_:)``.
    public static func float(_ value: Float) -> JSONValue {
        value.isFinite ? .number(JSONNumber(value)) : .string(JSONWriter.format(value))
    }

    /// Parses a complete JSON text (one value, optionally surrounded by whitespace).
    ///
    /// - Throws: A ``JSONError`` of kind ``JSONError/Kind-swift.enum/syntax`` for malformed input,
    ///   ``JSONError/Kind-swift.enum/nesting`` when nesting is deeper than `options.maxDepth`.
    public init(parsing bytes: [UInt8], options: JSONReaderOptions = .init()) throws(JSONError) {
        try self.init(parsing: bytes, options: options, errors: JSONError.self)
    }

    /// Parses a complete JSON text given as a string.
    ///
    /// - Throws: A ``JSONError``, as for the bytes of the text.
    public init(parsing text: String, options: JSONReaderOptions = .init()) throws(JSONError) {
        try self.init(parsing: Array(text.utf8), options: options, errors: JSONError.self)
    }

    /// Parses a complete JSON text, throwing a caller's error type.
    ///
    /// - Parameter errors: The error type thrown, made from a ``JSONError``.
    package init<Failure: JSONReadingError>(
        parsing bytes: [UInt8], options: JSONReaderOptions = .init(), errors: Failure.Type
    ) throws(Failure) {
        self = try bytes.withUnsafeBytesTyped { (raw) throws(Failure) -> JSONValue in
            var reader = JSONReader<Failure>(raw, options: options)
            let value = try reader.readValue()
            try reader.finish()
            return value
        }
    }

    /// Parses a complete JSON text given as a string, throwing a caller's error type.
    package init<Failure: JSONReadingError>(
        parsing text: String, options: JSONReaderOptions = .init(), errors: Failure.Type
    ) throws(Failure) {
        try self.init(parsing: Array(text.utf8), options: options, errors: errors)
    }

    /// The JSON text of the value.
    public func jsonBytes(options: JSONWriter.Options = .compact) -> [UInt8] {
        var writer = JSONWriter(options: options)
        writer.value(self)
        return writer.takeBytes()
    }

    /// The compact JSON text of the value.
    public var description: String {
        String(decoding: jsonBytes(), as: UTF8.self)
    }

    // MARK: Access

    /// Whether the value is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The boolean, if the value is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The string, if the value is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, if the value is one.
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The exact integer, if the value is an integer number within `Int64`.
    public var int64Value: Int64? { numberValue?.int64Value }

    /// The value as a `Double`: a finite number, or one of the strings `"NaN"`, `"Infinity"`,
    /// `"-Infinity"`.
    public var doubleValue: Double? {
        switch self {
        case .number(let number): number.doubleValue
        case .string(let text): nonFiniteValue(text).map { $0 }
        default: nil
        }
    }

    /// The value as a `Float` (rounded once, from the decimal text), as for ``doubleValue``.
    public var floatValue: Float? {
        switch self {
        case .number(let number): number.floatValue
        case .string(let text): nonFiniteValue(text).map { Float($0) }
        default: nil
        }
    }

    /// The elements, if the value is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members in document order, if the value is an object.
    public var objectValue: [(key: String, value: JSONValue)]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The value of the first member named `key`, if the value is an object that has one.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The element at `index`, if the value is an array that long.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    // MARK: Equality

    /// Structural equality; numbers compare by text, object members in order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// Hashes the structure, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0)
        case .bool(let value):
            hasher.combine(1)
            hasher.combine(value)
        case .number(let value):
            hasher.combine(2)
            hasher.combine(value)
        case .string(let value):
            hasher.combine(3)
            hasher.combine(value)
        case .array(let elements):
            hasher.combine(4)
            hasher.combine(elements)
        case .object(let members):
            hasher.combine(5)
            hasher.combine(members.count)
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }
}

/// The value of the strings standing for non-finite numbers.
func nonFiniteValue(_ text: String) -> Double? {
    switch text {
    case "NaN": .nan
    case "Infinity": .infinity
    case "-Infinity": -.infinity
    default: nil
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer number.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A `Double` number.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object, members in the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(elements.map { (key: $0.0, value: $0.1) })
    }
}

/// A JSON number, kept as its text: exact until the caller picks a type.
///
/// The text is always a valid RFC 8259 number.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number as written.
    public let text: String

    /// A number from its JSON text; `nil` unless `text` is exactly one valid RFC 8259 number.
    public init?(text: String) {
        var copy = text
        let valid = copy.withUTF8 { utf8 -> Bool in
            guard let base = utf8.baseAddress, let first = utf8.first, first == 0x2D || isDigit(first) else {
                return false
            }
            guard let scanned = try? scanNumber(base, count: utf8.count, at: 0) else { return false }
            return scanned.end == utf8.count
        }
        guard valid else { return nil }
        self.text = text
    }

    /// A number from text already validated by the reader.
    init(validatedText: String) {
        text = validatedText
    }

    /// An integer.
    public init(_ value: Int64) {
        text = String(value)
    }

    /// A non-negative integer.
    public init(_ value: UInt64) {
        text = String(value)
    }

    /// A finite `Double` in its shortest round-trip form.
    public init(_ value: Double) {
        precondition(value.isFinite, "JSONNumber: \(value) is not a JSON number")
        text = JSONWriter.format(value)
    }

    /// A finite `Float` in its own shortest round-trip form.
    public init(_ value: Float) {
        precondition(value.isFinite, "JSONNumber: \(value) is not a JSON number")
        text = JSONWriter.format(value)
    }

    /// The number's text.
    public var description: String { text }

    /// Whether the text has neither a fraction nor an exponent.
    public var isInteger: Bool { withScan { scan, _ in scan.isInteger } }

    /// The exact value, if the number is an integer (no fraction, no exponent) within `Int64`.
    public var int64Value: Int64? { withScan { scan, _ in scan.int64Value } }

    /// The correctly rounded `Double`, or `nil` if the magnitude is too large for one.
    public var doubleValue: Double? {
        let table = DecimalTables.parseTable
        let value = withScan { scan, base in
            table.withUnsafeBufferPointer { scan.doubleValue(base, table: $0.baseAddress!) }
        }
        return value.isFinite ? value : nil
    }

    /// The correctly rounded `Float` (rounded once, from the decimal text), or `nil` if the
    /// magnitude is too large for one.
    public var floatValue: Float? {
        let table = DecimalTables.parseTable
        let value = withScan { scan, base in
            table.withUnsafeBufferPointer { scan.floatValue(base, table: $0.baseAddress!) }
        }
        return value.isFinite ? value : nil
    }

    /// Calls `body` with the scanned text and its bytes.
    private func withScan<R>(_ body: (ScannedNumber, UnsafePointer<UInt8>) -> R) -> R {
        var copy = text
        return copy.withUTF8 { utf8 in
            // The text was validated when the number was made.
            let scan = try! scanNumber(utf8.baseAddress!, count: utf8.count, at: 0)
            return body(scan, utf8.baseAddress!)
        }
    }
}
