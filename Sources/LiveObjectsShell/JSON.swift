import Foundation

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
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out +=
                        "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                        + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    // MARK: Reading

    /// Parses one JSON value filling the whole text (surrounding white space allowed).
    ///
    /// - Throws: ``JSONParseError`` with the UTF-8 offset of the problem.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(bytes: Array(text.utf8))
    }

    static func parse(bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var parser = JSONReader(bytes: bytes)
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.position == parser.bytes.count else {
            throw JSONParseError(message: "unexpected text after the JSON value", offset: parser.position)
        }
        return value
    }
}

extension JSONValue {
    /// Parses the JSON value that starts at `start` in `bytes`; returns it and the offset just
    /// past it.
    static func parsePrefix(of bytes: [UInt8], at start: Int) throws(JSONParseError) -> (JSONValue, Int) {
        var parser = JSONReader(bytes: bytes)
        parser.position = start
        let value = try parser.value(depth: 0)
        return (value, parser.position)
    }
}

/// A JSON syntax error and where it is.
public struct JSONParseError: Error, Sendable, Equatable {
    public var message: String
    /// The UTF-8 offset of the problem.
    public var offset: Int
}

/// A recursive-descent JSON reader over UTF-8 bytes, with a nesting limit.
private struct JSONReader {
    let bytes: [UInt8]
    var position = 0
    static let maxDepth = 200

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    func fail(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: position) }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < Self.maxDepth else { throw fail("JSON nested too deeply") }
        skipSpace()
        guard position < bytes.count else { throw fail("expected a JSON value") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            var pairs: [(String, JSONValue)] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(pairs)
            }
            while true {
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                    throw fail("expected a key in double quotes")
                }
                let key = try string()
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                    throw fail("expected ':' after the key")
                }
                position += 1
                pairs.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard position < bytes.count else { throw fail("expected ',' or '}'") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                } else if bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return .object(pairs)
                } else {
                    throw fail("expected ',' or '}'")
                }
            }
        case UInt8(ascii: "["):
            position += 1
            var items: [JSONValue] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(items)
            }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard position < bytes.count else { throw fail("expected ',' or ']'") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                } else if bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return .array(items)
                } else {
                    throw fail("expected ',' or ']'")
                }
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number()
        default:
            throw fail("expected a JSON value")
        }
    }

    mutating func literal(_ word: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let w = Array(word.utf8)
        guard position + w.count <= bytes.count, Array(bytes[position..<position + w.count]) == w else {
            throw fail("expected a JSON value")
        }
        position += w.count
        return value
    }

    mutating func number() throws(JSONParseError) -> JSONValue {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        func digits(_ p: inout Int) -> Int {
            let s = p
            while p < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[p]) { p += 1 }
            return p - s
        }
        let intStart = position
        guard digits(&position) > 0 else { throw fail("expected digits") }
        if bytes[intStart] == UInt8(ascii: "0") && position - intStart > 1 {
            position = intStart
            throw fail("a number cannot start with 0")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard digits(&position) > 0 else { throw fail("expected digits after '.'") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits(&position) > 0 else { throw fail("expected digits in the exponent") }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger, let v = Int64(text) { return .int(v) }
        guard let v = Double(text) else {
            position = start
            throw fail("invalid number")
        }
        return .double(v)
    }

    mutating func string() throws(JSONParseError) -> String {
        position += 1  // opening quote
        var result: [UInt8] = []
        while true {
            guard position < bytes.count else { throw fail("unterminated string") }
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                position += 1
                return String(decoding: result, as: UTF8.self)
            }
            if b < 0x20 { throw fail("control character in a string") }
            if b != UInt8(ascii: "\\") {
                result.append(b)
                position += 1
                continue
            }
            position += 1
            guard position < bytes.count else { throw fail("unterminated string") }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): result.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): result.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): result.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    else { throw fail("unpaired surrogate") }
                    position += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let s = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                result.append(contentsOf: Array(String(s).utf8))
            default:
                position -= 1
                throw fail("invalid escape")
            }
        }
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= bytes.count,
            let v = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
        else { throw fail("expected four hex digits") }
        position += 4
        return v
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
