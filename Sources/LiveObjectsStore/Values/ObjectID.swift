import Foundation
import Synchronization

/// A 12-byte identifier, made locally, that sorts by creation time.
///
/// The bytes are: the seconds since 1970 (4 bytes, big-endian), 5 random bytes chosen once per
/// process, and a 3-byte big-endian counter that starts at a random value. Ids made by one
/// process therefore sort in the order they were made (the counter starts low enough that it
/// wraps only after millions of ids). Text forms (``description``, JSON, the shell) use 24
/// lowercase hex digits.
///
/// ```swift
/// let id = ObjectID()
/// let same = ObjectID(hex: id.hexString)
/// assert(same == id)
/// ```
public struct ObjectID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// The 12 bytes, most significant first.
    public let bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

    /// Makes a new id: the current time, this process's random bytes and the next counter value.
    public init() {
        let seconds = UInt32(clamping: Int64(Date().timeIntervalSince1970.rounded(.down)))
        let process = ObjectID.processBytes
        let count = ObjectID.counter.wrappingAdd(1, ordering: .relaxed).newValue & 0xFF_FFFF
        bytes = (
            UInt8(truncatingIfNeeded: seconds >> 24), UInt8(truncatingIfNeeded: seconds >> 16),
            UInt8(truncatingIfNeeded: seconds >> 8), UInt8(truncatingIfNeeded: seconds),
            process.0, process.1, process.2, process.3, process.4,
            UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8),
            UInt8(truncatingIfNeeded: count)
        )
    }

    /// An id from exactly 12 bytes, or `nil` for any other count.
    public init?(bytes: some Collection<UInt8>) {
        let b = Array(bytes)
        guard b.count == 12 else { return nil }
        self.bytes = (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11])
    }

    /// Parses 24 hex digits (either case); `nil` for any other text.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 24 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(12)
        for i in stride(from: 0, to: 24, by: 2) {
            guard let high = ObjectID.nibble(utf8[i]), let low = ObjectID.nibble(utf8[i + 1]) else {
                return nil
            }
            result.append(high << 4 | low)
        }
        self.init(bytes: result)
    }

    /// The all-zero id, the stored default of a non-optional `ObjectID`.
    public static let zero = ObjectID(bytes: [UInt8](repeating: 0, count: 12))!

    /// The 12 bytes as an array.
    public var byteArray: [UInt8] {
        withUnsafeBytes(of: bytes) { Array($0) }
    }

    /// The 24 lowercase hex digits.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(24)
        for byte in byteArray {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// When the id was made, to the second.
    public var timestamp: Date {
        let b = byteArray
        let seconds = UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    public var description: String { hexString }

    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.byteArray == rhs.byteArray
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes(of: bytes) { hasher.combine(bytes: $0) }
    }

    /// Byte order: earlier ids first.
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.byteArray.lexicographicallyPrecedes(rhs.byteArray)
    }

    /// Decodes the id from its 24 hex digits.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = ObjectID(hex: text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "an ObjectID is 24 hex digits, not \"\(text)\""))
        }
        self = id
    }

    /// Encodes the id as its 24 hex digits.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hexString)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Five random bytes, chosen once per process.
    private static let processBytes: (UInt8, UInt8, UInt8, UInt8, UInt8) = (
        .random(in: 0...255), .random(in: 0...255), .random(in: 0...255), .random(in: 0...255),
        .random(in: 0...255)
    )

    /// The counter, starting at a random value in the lower half of its 3 bytes (so that at
    /// least 8,388,608 ids are made before it wraps); its low 3 bytes go into each id.
    private static let counter = Atomic<UInt32>(.random(in: 0..<0x80_0000))
}

extension ObjectID: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .objectID(let value) = propertyValue else { return nil }
        self = value
    }
}

extension Decimal: PropertyValueReadable {
    public init?(propertyValue: PropertyValue) {
        guard case .decimal(let value) = propertyValue else { return nil }
        self = value
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension Decimal {
    /// Orders two decimals exactly (Foundation's comparison, never through `Double`). NaN sorts
    /// before every number and equals only NaN, so the order is total.
    package static func exactOrder(_ a: Decimal, _ b: Decimal) -> Int {
        switch (a.isNaN, b.isNaN) {
        case (true, true): return 0
        case (true, false): return -1
        case (false, true): return 1
        case (false, false):
            if a == b { return 0 }
            return a < b ? -1 : 1
        }
    }

    /// Parses a decimal from its exact text (`"12.50"`, `"-3e-2"`), never through `Double`;
    /// `nil` unless the whole text is one number that a `Decimal` holds exactly (at most 38
    /// significant digits, an exponent in range).
    package init?(exactText text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard Decimal.isNumberText(trimmed),
            let value = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")),
            !value.isNaN
        else { return nil }
        self = value
    }

    /// Whether `text` is `[+-]digits[.digits][(e|E)[+-]digits]` (digits on at least one side of
    /// the point).
    private static func isNumberText(_ text: String) -> Bool {
        var chars = Substring(text)[...]
        func digits() -> Int {
            let count = chars.prefix(while: \.isASCIIDigit).count
            chars = chars.dropFirst(count)
            return count
        }
        if chars.first == "+" || chars.first == "-" { chars = chars.dropFirst() }
        var mantissa = digits()
        if chars.first == "." {
            chars = chars.dropFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        // Significant digits: those between the first and last nonzero digit.
        let significant = text.prefix(text.count - chars.count).filter(\.isASCIIDigit)
            .drop(while: { $0 == "0" }).reversed().drop(while: { $0 == "0" }).count
        guard significant <= 38 else { return false }
        if chars.first == "e" || chars.first == "E" {
            chars = chars.dropFirst()
            if chars.first == "+" || chars.first == "-" { chars = chars.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return chars.isEmpty
    }

    /// The exact text of the decimal ("NaN" for NaN), which ``init(exactText:)`` reads back.
    package var exactText: String {
        isNaN ? "NaN" : description
    }
}
