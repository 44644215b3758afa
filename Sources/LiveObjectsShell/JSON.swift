import Foundation
import LiveObjects
import LiveObjectsJSON

/// A JSON value whose objects keep their keys in order, so that output follows the schema's
/// property order and input keeps the order it was written in.
///
/// Integers and other numbers are kept apart: `3` is ``int(_:)`` and `3.0` is ``double(_:)``.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let v): hasher.combine(v)
        case .int(let v): hasher.combine(v)
        case .double(let v): hasher.combine(v)
        case .string(let v): hasher.combine(v)
        case .array(let v): hasher.combine(v)
        case .object(let pairs):
            for (k, v) in pairs {
                hasher.combine(k)
                hasher.combine(v)
            }
        }
    }

    /// The value of a key of an object (the first one with that name).
    subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    // MARK: Writing

    /// Compact JSON text: `{"id":1,"name":"Rex"}`.
    public var compact: String {
        var out = ""
        write(to: &out, spaced: false)
        return out
    }

    /// JSON text with a space after `:` and `,`, for reading: `{"id": 1, "name": "Rex"}`.
    public var spaced: String {
        var out = ""
        write(to: &out, spaced: true)
        return out
    }

    func write(to out: inout String, spaced: Bool) {
        switch self {
        case .null: out += "null"
        case .bool(let v): out += v ? "true" : "false"
        case .int(let v): out += String(v)
        case .double(let v):
            if v.isFinite {
                // Shortest round-trip form; keep a fraction so the value reads back as a double.
                var text = "\(v)"
                if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { text += ".0" }
                out += text
            } else {
                out += "null"
            }
        case .string(let v): JSONValue.writeString(v, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += spaced ? ", " : "," }
                item.write(to: &out, spaced: spaced)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (i, (key, value)) in pairs.enumerated() {
                if i > 0 { out += spaced ? ", " : "," }
                JSONValue.writeString(key, to: &out)
                out += spaced ? ": " : ":"
                value.write(to: &out, spaced: spaced)
            }
            out += "}"
        }
    }

    static func writeString(_ s: String, to out: inout String) {
        // The shell has always written U+0008 and U+000C as \u0008 and \u000c.
        JSONWriter.appendQuoted(s, to: &out, shortBackspaceAndFormFeed: false)
    }

    // MARK: Reading

    /// Parses one JSON value filling the whole text (surrounding white space allowed).
    ///
    /// - Throws: ``JSONParseError`` with the UTF-8 offset of the problem.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(bytes: Array(text.utf8))
    }

    static func parse(bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try read(bytes, at: 0) { (reader) throws(LiveObjectsError) in
            let value = try readValue(&reader)
            try reader.finish()
            return value
        }.value
    }
}

extension JSONValue {
    /// Parses the JSON value that starts at `start` in `bytes`; returns it and the offset just
    /// past it.
    static func parsePrefix(of bytes: [UInt8], at start: Int) throws(JSONParseError) -> (JSONValue, Int) {
        let (value, end) = try read(bytes, at: start) { (reader) throws(LiveObjectsError) in try readValue(&reader) }
        return (value, end)
    }

    /// The deepest nesting of arrays and objects read.
    static let maxDepth = 200

    /// Calls `body` with a reader of `bytes` from `start` on; returns its result and the offset
    /// where the reader stopped. The reader's errors become ``JSONParseError``s.
    private static func read(
        _ bytes: [UInt8], at start: Int, _ body: (inout JSONReader) throws(LiveObjectsError) -> JSONValue
    ) throws(JSONParseError) -> (value: JSONValue, end: Int) {
        do {
            return try bytes.withUnsafeBytesTyped { (raw) throws(LiveObjectsError) -> (JSONValue, Int) in
                var reader = JSONReader(
                    UnsafeRawBufferPointer(rebasing: raw[start...]),
                    options: .init(maxDepth: maxDepth, acceptsNonFiniteStrings: false, startOffset: start))
                let value = try body(&reader)
                return (value, reader.fileOffset)
            }
        } catch {
            throw JSONParseError(error, at: start)
        }
    }

    /// Reads one value (recursing at most ``maxDepth`` levels: the reader stops deeper input).
    private static func readValue(_ reader: inout JSONReader) throws(LiveObjectsError) -> JSONValue {
        switch try reader.peekKind() {
        case .null:
            _ = try reader.readNull()
            return .null
        case .bool:
            return .bool(try reader.readBool())
        case .string:
            return .string(try reader.readString())
        case .number:
            let number = try reader.readNumber()
            if number.isInteger, let value = number.int64Value { return .int(value) }
            // Beyond Double's range, a number reads as an infinity.
            return .double(number.doubleValue ?? (number.text.hasPrefix("-") ? -.infinity : .infinity))
        case .array:
            var items: [JSONValue] = []
            try reader.beginArray()
            while try reader.nextElement() { items.append(try readValue(&reader)) }
            return .array(items)
        case .object:
            var pairs: [(String, JSONValue)] = []
            try reader.beginObject()
            while let key = try reader.nextKey() { pairs.append((key, try readValue(&reader))) }
            return .object(pairs)
        }
    }
}

/// A JSON syntax error and where it is.
public struct JSONParseError: Error, Sendable, Equatable {
    public var message: String
    /// The UTF-8 offset of the problem.
    public var offset: Int
}

extension JSONParseError {
    /// The shell's wording of the reader's syntax errors, by what the reader expected.
    private static let messages: [String: String] = [
        "a value": "expected a JSON value",
        "'true'": "expected a JSON value",
        "'false'": "expected a JSON value",
        "'null'": "expected a JSON value",
        "a string key or '}'": "expected a key in double quotes",
        "a string key after ','": "expected a key in double quotes",
        "':' after an object key": "expected ':' after the key",
        "',' or '}' after an object member": "expected ',' or '}'",
        "',' or ']' after an array element": "expected ',' or ']'",
        "the end of the input after the top-level value": "unexpected text after the JSON value",
        "a digit after '-'": "expected digits",
        "no leading zeros in a number ('.', 'e' or the end of the number)": "a number cannot start with 0",
        "a digit after the decimal point": "expected digits after '.'",
        "a digit in the exponent": "expected digits in the exponent",
        "4 hex digits after \\u": "expected four hex digits",
        "a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u followed by 4 hex digits)": "invalid escape",
    ]

    /// The error of the shared JSON reader, worded for the shell.
    init(_ error: LiveObjectsError, at start: Int) {
        guard let location = error.inputLocation else {
            self.init(message: error.message, offset: start)
            return
        }
        if error.code == .limitExceeded {
            self.init(message: "JSON nested too deeply", offset: location.offset)
        } else if let expected = location.expected, let message = Self.messages[expected] {
            self.init(message: message, offset: location.offset)
        } else {
            self.init(message: location.reason, offset: location.offset)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements) }
}
