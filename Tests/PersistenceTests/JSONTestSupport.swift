import LiveObjects
import Testing

@testable import LiveObjectsJSON
@testable import Persistence

/// Parses `text` as a whole document.
func parse(_ text: String, options: JSONReader.Options = .init()) throws(LiveObjectsError) -> JSONValue {
    try JSONValue(parsing: text, options: options, errors: LiveObjectsError.self)
}

/// Parses raw bytes as a whole document.
func parse(_ bytes: [UInt8], options: JSONReader.Options = .init()) throws(LiveObjectsError) -> JSONValue {
    try JSONValue(parsing: bytes, options: options, errors: LiveObjectsError.self)
}

/// The error `body` throws, if it is a ``LiveObjectsError``.
func liveObjectsError(_ body: () throws(LiveObjectsError) -> Void) -> LiveObjectsError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

/// Expects `body` to fail with `code` at byte `offset`, with a message containing `fragment`.
func expectFailure(
    _ code: LiveObjectsError.Code = .corruptFile, at offset: Int, _ fragment: String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws(LiveObjectsError) -> Void
) {
    guard let error = liveObjectsError(body) else {
        Issue.record("expected an error at byte \(offset), but none was thrown", sourceLocation: sourceLocation)
        return
    }
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    #expect(error.message.contains("at byte \(offset) ("), "\(error)", sourceLocation: sourceLocation)
    if !fragment.isEmpty {
        #expect(error.message.contains(fragment), "\(error)", sourceLocation: sourceLocation)
    }
}

/// Expects parsing `text` as a document to fail at byte `offset`.
func expectRejected(
    _ text: String, at offset: Int, _ fragment: String = "", code: LiveObjectsError.Code = .corruptFile,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectFailure(code, at: offset, fragment, sourceLocation: sourceLocation) { () throws(LiveObjectsError) in
        _ = try parse(text)
    }
}

/// Expects parsing `bytes` as a document to fail at byte `offset`.
func expectRejected(
    bytes: [UInt8], at offset: Int, _ fragment: String = "", code: LiveObjectsError.Code = .corruptFile,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectFailure(code, at: offset, fragment, sourceLocation: sourceLocation) { () throws(LiveObjectsError) in
        _ = try parse(bytes)
    }
}

/// Writes a single value with a fresh compact writer and returns the text.
func written(_ body: (inout JSONWriter) -> Void) -> String {
    var writer = JSONWriter()
    body(&writer)
    return String(decoding: writer.takeBytes(), as: UTF8.self)
}

/// Reads a single-value document with `body`, checking that nothing follows.
func read<R>(_ text: String, _ body: (inout JSONReader) throws(LiveObjectsError) -> R) throws(LiveObjectsError) -> R {
    try JSONReader.withReader(Array(text.utf8)) { (reader) throws(LiveObjectsError) -> R in
        let result = try body(&reader)
        try reader.finish()
        return result
    }
}

extension TableBigInt {
    /// Big-integer comparison.
    static func < (lhs: TableBigInt, rhs: TableBigInt) -> Bool {
        if lhs.limbs.count != rhs.limbs.count { return lhs.limbs.count < rhs.limbs.count }
        for i in lhs.limbs.indices.reversed() where lhs.limbs[i] != rhs.limbs[i] {
            return lhs.limbs[i] < rhs.limbs[i]
        }
        return false
    }

    static func <= (lhs: TableBigInt, rhs: TableBigInt) -> Bool { !(rhs < lhs) }

    /// `self * 2^p * 10^q` for non-negative exponents.
    func scaled(pow2 p: Int, pow10 q: Int) -> TableBigInt {
        multiplied(by: powersOfTen[q]).shifted(by: p)
    }

    /// Schoolbook product.
    func multiplied(by other: TableBigInt) -> TableBigInt {
        var result = [UInt32](repeating: 0, count: limbs.count + other.limbs.count + 1)
        for (i, a) in limbs.enumerated() {
            var carry: UInt64 = 0
            for (j, b) in other.limbs.enumerated() {
                let sum = UInt64(a) * UInt64(b) + UInt64(result[i + j]) + carry
                result[i + j] = UInt32(truncatingIfNeeded: sum)
                carry = sum >> 32
            }
            var k = i + other.limbs.count
            while carry != 0 {
                let sum = UInt64(result[k]) + carry
                result[k] = UInt32(truncatingIfNeeded: sum)
                carry = sum >> 32
                k += 1
            }
        }
        return TableBigInt(limbs: result)
    }

    /// The 128-bit value `high * 2^64 + low`.
    static func from(high: UInt64, low: UInt64) -> TableBigInt {
        TableBigInt(high).shifted(by: 64).adding(TableBigInt(low))
    }

    /// Sum of two big integers.
    func adding(_ other: TableBigInt) -> TableBigInt {
        var result: [UInt32] = []
        var carry: UInt64 = 0
        for i in 0..<max(limbs.count, other.limbs.count) {
            let sum =
                UInt64(i < limbs.count ? limbs[i] : 0) + UInt64(i < other.limbs.count ? other.limbs[i] : 0) + carry
            result.append(UInt32(truncatingIfNeeded: sum))
            carry = sum >> 32
        }
        if carry != 0 { result.append(UInt32(carry)) }
        return TableBigInt(limbs: result)
    }
}

/// 10^0 ... 10^1300.
let powersOfTen: [TableBigInt] = {
    var powers = [TableBigInt(1)]
    for _ in 0..<1300 {
        var next = powers[powers.count - 1]
        next.multiply(by: 10)
        powers.append(next)
    }
    return powers
}()

/// Whether `a * 2^p * 10^q <= b * 2^s * 10^t`, exactly.
func exactLessOrEqual(_ a: TableBigInt, pow2 p: Int, pow10 q: Int, _ b: TableBigInt, pow2 s: Int, pow10 t: Int) -> Bool
{
    let shift2 = max(0, -p, -s)
    let shift10 = max(0, -q, -t)
    return a.scaled(pow2: p + shift2, pow10: q + shift10) <= b.scaled(pow2: s + shift2, pow10: t + shift10)
}

/// Whether `a * 2^p * 10^q <= b * 2^s * 10^t`, exactly.
func exactLessOrEqual(_ a: UInt64, pow2 p: Int, pow10 q: Int, _ b: UInt64, pow2 s: Int, pow10 t: Int) -> Bool {
    exactLessOrEqual(TableBigInt(a), pow2: p, pow10: q, TableBigInt(b), pow2: s, pow10: t)
}

/// The reader as Persistence uses it: its errors are `LiveObjectsError`s.
typealias JSONReader = LiveObjectsJSON.JSONReader<LiveObjectsError>
