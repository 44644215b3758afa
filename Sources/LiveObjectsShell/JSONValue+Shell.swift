import Foundation
import LiveObjects
import LiveObjectsJSON

/// The members of a JSON object, in order.
typealias JSONMembers = [(key: String, value: JSONValue)]

/// The shell's use of the package's JSON value tree: its numbers as the shell has always printed
/// them, its layouts (compact, and spaced on one line) and its reading of command lines and
/// import files.
///
/// Numbers read by the shell are kept in one form: an integer within `Int64` as its digits, any
/// other number as the shortest `Double` that reads back the same (`3.0`, `1e+16`), so that `1.50`
/// and `1.5` are one value. A non-finite `Double` is written as the string `"NaN"`, `"Infinity"`
/// or `"-Infinity"`, as in snapshot files (docs/FORMAT.md), and read back from those strings by
/// float and double properties.
extension JSONValue {
    /// A `Double` as the shell prints it: the shortest round-trip form with a fraction or an
    /// exponent (`3.0`, `0.1`, `1e+16`); a non-finite one as the string `"NaN"`, `"Infinity"` or
    /// `"-Infinity"`.
    static func shellDouble(_ value: Double) -> JSONValue {
        guard value.isFinite else { return .double(value) }
        var text = "\(value)"
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { text += ".0" }
        // Swift's description of a finite Double is a JSON number; the fallback is never taken.
        return .number(JSONNumber(text: text) ?? JSONNumber(value))
    }

    /// Whether the value is an integer number within `Int64`.
    var isInteger: Bool { int64Value != nil }

    /// The value of a number as a `Double`: rounded to the nearest, infinite beyond the range of
    /// `Double`. `nil` for anything but a number.
    var numberAsDouble: Double? {
        guard case .number(let number) = self else { return nil }
        return number.doubleValue ?? (number.text.hasPrefix("-") ? -.infinity : .infinity)
    }

    /// The value for a float or double property: a number, or one of the strings `"NaN"`,
    /// `"Infinity"` and `"-Infinity"` that the shell writes for non-finite values.
    var floatingPointValue: Double? {
        if case .string = self { return doubleValue }
        return numberAsDouble
    }

    // MARK: Writing

    /// Compact JSON text: `{"id":1,"name":"Rex"}`.
    var compact: String {
        var out = ""
        write(to: &out, spaced: false)
        return out
    }

    /// JSON text on one line with a space after `:` and `,`, for reading: `{"id": 1, "name": "Rex"}`.
    var spaced: String {
        var out = ""
        write(to: &out, spaced: true)
        return out
    }

    private func write(to out: inout String, spaced: Bool) {
        switch self {
        case .null: out += "null"
        case .bool(let v): out += v ? "true" : "false"
        case .number(let number): out += number.text
        case .string(let v): Self.writeString(v, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += spaced ? ", " : "," }
                item.write(to: &out, spaced: spaced)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { out += spaced ? ", " : "," }
                Self.writeString(member.key, to: &out)
                out += spaced ? ": " : ":"
                member.value.write(to: &out, spaced: spaced)
            }
            out += "}"
        }
    }

    /// Appends a quoted JSON string.
    static func writeString(_ s: String, to out: inout String) {
        // The shell has always written U+0008 and U+000C as \u0008 and \u000c.
        JSONWriter.appendQuoted(s, to: &out, shortBackspaceAndFormFeed: false)
    }

    // MARK: Reading

    /// The deepest nesting of arrays and objects read.
    static let maxDepth = 200

    /// Parses one JSON value filling the whole text (surrounding white space allowed).
    ///
    /// - Throws: ``JSONParseError`` with the UTF-8 offset of the problem.
    static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(bytes: Array(text.utf8))
    }

    /// Parses one JSON value filling all of `bytes` (surrounding white space allowed).
    static func parse(bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try read(bytes, at: 0) { (reader) throws(LiveObjectsError) in
            let value = try reader.readValue()
            try reader.finish()
            return value
        }.value
    }

    /// Parses the JSON value that starts at `start` in `bytes`; returns it and the offset just
    /// past it.
    static func parsePrefix(of bytes: [UInt8], at start: Int) throws(JSONParseError) -> (JSONValue, Int) {
        let (value, end) = try read(bytes, at: start) { (reader) throws(LiveObjectsError) in try reader.readValue() }
        return (value, end)
    }

    /// Calls `body` with a reader of `bytes` from `start` on; returns its result, numbers in the
    /// shell's form, and the offset where the reader stopped. The reader's errors become
    /// ``JSONParseError``s.
    private static func read(
        _ bytes: [UInt8], at start: Int, _ body: (inout JSONReader) throws(LiveObjectsError) -> JSONValue
    ) throws(JSONParseError) -> (value: JSONValue, end: Int) {
        do {
            let (value, end) = try bytes.withUnsafeBytesTyped { (raw) throws(LiveObjectsError) -> (JSONValue, Int) in
                var reader = JSONReader(
                    UnsafeRawBufferPointer(rebasing: raw[start...]),
                    options: .init(maxDepth: maxDepth, startOffset: start))
                let value = try body(&reader)
                return (value, reader.fileOffset)
            }
            return (value.withShellNumbers, end)
        } catch {
            throw JSONParseError(error, at: start)
        }
    }

    /// The value with every number in the shell's form: an integer within `Int64` as its digits,
    /// another number as ``shellDouble(_:)`` writes it (a number beyond the range of `Double`,
    /// or with more digits than a `Double` keeps, stays as written: a `Decimal` property takes
    /// them all).
    private var withShellNumbers: JSONValue {
        switch self {
        case .number(let number):
            if let integer = number.int64Value { return .int(integer) }
            guard let value = number.doubleValue else { return self }
            if let exact = Decimal(exactText: number.text), Decimal(exactText: "\(value)") != exact { return self }
            return .shellDouble(value)
        case .array(let items):
            return .array(items.map(\.withShellNumbers))
        case .object(let members):
            return .object(members.map { (key: $0.key, value: $0.value.withShellNumbers) })
        case .null, .bool, .string:
            return self
        }
    }
}

/// A JSON syntax error and where it is.
struct JSONParseError: Error, Sendable, Equatable {
    /// What is wrong, in the shell's words.
    package var message: String
    /// The UTF-8 offset of the problem.
    package var offset: Int
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
