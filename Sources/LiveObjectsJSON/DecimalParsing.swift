// Strict scanning of JSON numbers and their correctly rounded conversion to Double and Float.
//
// Conversion tries, in order: the exact fast path (a significand of at most 53 bits and a small
// power of ten, both exact, one rounding), then the Eisel-Lemire method (a 128-bit product with
// a precomputed power of ten; it gives up in the rare cases where the product cannot decide the
// rounding), and finally the standard library's correctly rounded parser.

/// A syntax error found while scanning, before it is turned into a ``LiveObjectsError``.
struct JSONSyntaxIssue: Error {
    /// Byte offset of the problem.
    var offset: Int
    /// What was expected there.
    var expected: String
}

/// A number token, scanned but not yet converted.
struct ScannedNumber {
    /// Offset of the first byte (`-` or a digit).
    var start: Int
    /// Offset just past the last byte.
    var end: Int
    /// The significant digits as an integer (0 when ``truncated``).
    var significand: UInt64
    /// The power of ten to apply to ``significand`` (meaningless when ``truncated``).
    var exponent: Int
    /// Whether a `-` sign is present.
    var negative: Bool
    /// Whether the token has neither a fraction nor an exponent part.
    var isInteger: Bool
    /// Whether there were more than 19 significant digits.
    var truncated: Bool
}

@inline(__always)
func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

/// Whether the 8 bytes (little-endian) are all ASCII digits.
@inline(__always)
func areEightDigits(_ v: UInt64) -> Bool {
    // A byte is a digit when its high nibble is 3 and adding 6 leaves the high nibble at 3.
    (v & 0xF0F0_F0F0_F0F0_F0F0) | ((v &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4
        == 0x3333_3333_3333_3333
}

/// The value of 8 ASCII digits loaded little-endian (the first digit in the lowest byte).
@inline(__always)
func valueOfEightDigits(_ v: UInt64) -> UInt64 {
    var x = v &- 0x3030_3030_3030_3030
    // Each even byte becomes the two-digit number of itself and the next byte.
    x = x &* 10 &+ x >> 8
    // Bytes 0 and 4 weigh 10^6 and 10^2, bytes 2 and 6 weigh 10^4 and 1; the sum lands in the high
    // 32 bits.
    let a = (x & 0x0000_00FF_0000_00FF) &* (100 &+ 1_000_000 << 32)
    let b = (x >> 16 & 0x0000_00FF_0000_00FF) &* (1 &+ 10_000 << 32)
    return (a &+ b) >> 32
}

/// The number of ASCII digits (0 to 8) that 8 bytes loaded little-endian start with.
///
/// A byte is a digit when its high nibble is 3 and adding 6 to it leaves the high nibble at 3.
/// Adding or subtracting across the word carries only out of a byte that is not a digit, into
/// the bytes after it, so the bytes before the first one that is not a digit are judged right.
@inlinable @inline(__always)
func leadingDigitCount(_ v: UInt64) -> Int {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let high = v & (0xF0 &* ones)
    let shifted = (v &+ 0x06 &* ones) & (0xF0 &* ones)
    let notDigit = (high ^ (0x30 &* ones)) | (shifted ^ (0x30 &* ones))
    return notDigit == 0 ? 8 : notDigit.trailingZeroBitCount >> 3
}

/// The value of the first `count` (1 to 8) bytes of 8 loaded little-endian, when they are
/// ASCII digits (the first digit in the lowest byte): the digits moved to the top of the word,
/// below them zeros, and the eight valued as one number.
@inlinable @inline(__always)
func valueOfLeadingDigits(_ v: UInt64, count: Int) -> UInt64 {
    // Subtracting '0' from every byte borrows only out of bytes past the digits; the shift
    // drops those bytes.
    var x = (v &- 0x3030_3030_3030_3030) << UInt64(truncatingIfNeeded: 64 - 8 * count)
    // Each even byte becomes the two-digit number of itself and the next byte.
    x = x &* 10 &+ x >> 8
    // Bytes 0 and 4 weigh 10^6 and 10^2, bytes 2 and 6 weigh 10^4 and 1; the sum lands in the
    // high 32 bits.
    let a = (x & 0x0000_00FF_0000_00FF) &* (100 &+ 1_000_000 << 32)
    let b = (x >> 16 & 0x0000_00FF_0000_00FF) &* (1 &+ 10_000 << 32)
    return (a &+ b) >> 32
}

/// Loads 8 bytes at `p` as a little-endian integer.
@inlinable @inline(__always)
func loadEightBytes(_ p: UnsafePointer<UInt8>) -> UInt64 {
    UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
}

/// Scans a run of digits starting at `i`, accumulating them into `w` (wrapping on overflow).
@inline(__always)
func scanDigits(_ base: UnsafePointer<UInt8>, count: Int, from i: inout Int, into w: inout UInt64) {
    while i &+ 8 <= count {
        let v = loadEightBytes(base + i)
        guard areEightDigits(v) else { break }
        w = w &* 100_000_000 &+ valueOfEightDigits(v)
        i &+= 8
    }
    while i < count {
        let d = base[i] &- 0x30
        if d >= 10 { break }
        w = w &* 10 &+ UInt64(d)
        i &+= 1
    }
}

/// Scans the RFC 8259 number starting at `start` (which holds `-` or a digit).
@inline(__always)
func scanNumber(_ base: UnsafePointer<UInt8>, count: Int, at start: Int) throws(JSONSyntaxIssue) -> ScannedNumber {
    var i = start
    let negative = base[i] == 0x2D
    if negative { i += 1 }
    guard i < count, isDigit(base[i]) else {
        throw JSONSyntaxIssue(offset: i, expected: "a digit after '-'")
    }
    let integerStart = i
    var w: UInt64 = 0
    if base[i] == 0x30 {
        i += 1
        if i < count && isDigit(base[i]) {
            throw JSONSyntaxIssue(
                offset: i, expected: "no leading zeros in a number ('.', 'e' or the end of the number)")
        }
    } else {
        scanDigits(base, count: count, from: &i, into: &w)
    }
    var digitCount = i - integerStart
    var exponent = 0
    var isInteger = true
    if i < count && base[i] == 0x2E {
        isInteger = false
        i += 1
        let fractionStart = i
        scanDigits(base, count: count, from: &i, into: &w)
        guard i > fractionStart else {
            throw JSONSyntaxIssue(offset: i, expected: "a digit after the decimal point")
        }
        digitCount += i - fractionStart
        exponent = fractionStart - i
    }
    if i < count && base[i] | 0x20 == 0x65 {
        isInteger = false
        i += 1
        var exponentNegative = false
        if i < count && (base[i] == 0x2B || base[i] == 0x2D) {
            exponentNegative = base[i] == 0x2D
            i += 1
        }
        guard i < count, isDigit(base[i]) else {
            throw JSONSyntaxIssue(offset: i, expected: "a digit in the exponent")
        }
        var e = 0
        while i < count {
            let d = base[i] &- 0x30
            if d >= 10 { break }
            if e < 1_000_000 { e = e &* 10 &+ Int(d) }
            i += 1
        }
        exponent += exponentNegative ? -e : e
    }
    var truncated = false
    if digitCount > 19 {
        // Leading zeros (and the point between them) do not count.
        var j = integerStart
        while j < i && (base[j] == 0x30 || base[j] == 0x2E) {
            if base[j] == 0x30 { digitCount -= 1 }
            j += 1
        }
        if digitCount > 19 {
            truncated = true
            w = 0
        }
    }
    return ScannedNumber(
        start: start, end: i, significand: w, exponent: exponent, negative: negative,
        isInteger: isInteger, truncated: truncated)
}

/// 10^n for 0 <= n <= 22, the powers of ten that are exact as `Double`.
@inline(__always)
func exactDoublePowerOfTen(_ n: Int) -> Double {
    switch n {
    case 0: 1e0
    case 1: 1e1
    case 2: 1e2
    case 3: 1e3
    case 4: 1e4
    case 5: 1e5
    case 6: 1e6
    case 7: 1e7
    case 8: 1e8
    case 9: 1e9
    case 10: 1e10
    case 11: 1e11
    case 12: 1e12
    case 13: 1e13
    case 14: 1e14
    case 15: 1e15
    case 16: 1e16
    case 17: 1e17
    case 18: 1e18
    case 19: 1e19
    case 20: 1e20
    case 21: 1e21
    default: 1e22
    }
}

/// The Eisel-Lemire step (Daniel Lemire, "Number Parsing at a Gigabyte per Second", 2021): the bits of the binary value (without sign) nearest to `w * 10^q`, or
/// `nil` when the 128-bit product cannot decide or the result is subnormal, infinite or zero.
/// `explicitBits` is 52 for `Double`, 23 for `Float`; `bias` 1023 or 127; `infiniteExponent`
/// 0x7FF or 0xFF; `table` the base address of ``DecimalTables/parseTable``.
@inline(__always)
func eiselLemire(
    _ w: UInt64, _ q: Int, explicitBits: Int, bias: Int, infiniteExponent: Int, table: UnsafePointer<UInt64>
) -> UInt64? {
    guard w != 0, q >= DecimalTables.parseMinQ, q <= DecimalTables.parseMaxQ else { return nil }
    let index = 2 * (q - DecimalTables.parseMinQ)
    let power1 = table[index]
    let power0 = table[index + 1]
    let leadingZeros = w.leadingZeroBitCount
    let wn = w << UInt64(leadingZeros)
    var (hi, lo) = wn.multipliedFullWidth(by: power1)
    let mask = UInt64.max >> UInt64(explicitBits + 3)
    if hi & mask == mask && lo &+ wn < wn {
        // The truncated low half of the power may carry into the bits we keep: use it.
        let (yHi, yLo) = wn.multipliedFullWidth(by: power0)
        var mergedHi = hi
        let mergedLo = lo &+ yHi
        if mergedLo < lo { mergedHi &+= 1 }
        if mergedHi & mask == mask && mergedLo &+ 1 == 0 && yLo &+ wn < wn { return nil }
        hi = mergedHi
        lo = mergedLo
    }
    let top = Int(hi >> 63)
    var mantissa = hi >> UInt64(top + 64 - explicitBits - 3)
    var exponent = floorLog2Pow10(q) + 64 + bias - leadingZeros - (1 ^ top)
    // Exactly half-way on the truncated product: the true value may be just above. Give up.
    if lo == 0 && hi & mask == 0 && mantissa & 3 == 1 { return nil }
    mantissa += mantissa & 1
    mantissa >>= 1
    if mantissa >> UInt64(explicitBits + 1) != 0 {
        mantissa >>= 1
        exponent += 1
    }
    if exponent <= 0 || exponent >= infiniteExponent { return nil }
    return UInt64(exponent) << UInt64(explicitBits) | mantissa & ((1 << UInt64(explicitBits)) - 1)
}

extension ScannedNumber {
    /// The correctly rounded `Double`; infinite when the magnitude is too large. `base` is the
    /// buffer the number was scanned from, `table` the base address of
    /// ``DecimalTables/parseTable``.
    @inline(__always)
    func doubleValue(_ base: UnsafePointer<UInt8>, table: UnsafePointer<UInt64>) -> Double {
        let w = significand
        if w == 0 && !truncated { return negative ? -0.0 : 0.0 }
        if !truncated {
            if w <= 1 << 53 && exponent >= -22 && exponent <= 22 {
                let d = Double(w)
                let magnitude =
                    exponent < 0
                    ? d / exactDoublePowerOfTen(-exponent) : d * exactDoublePowerOfTen(exponent)
                return negative ? -magnitude : magnitude
            }
            if let bits = eiselLemire(w, exponent, explicitBits: 52, bias: 1023, infiniteExponent: 0x7FF, table: table)
            {
                return Double(bitPattern: bits | (negative ? 1 << 63 : 0))
            }
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
        return Double(text) ?? .nan
    }

    /// The correctly rounded `Float` (rounded once, straight from the decimal); infinite when
    /// the magnitude is too large. Arguments as for ``doubleValue(_:table:)``.
    @inline(__always)
    func floatValue(_ base: UnsafePointer<UInt8>, table: UnsafePointer<UInt64>) -> Float {
        let w = significand
        if w == 0 && !truncated { return negative ? -0.0 : 0.0 }
        if !truncated {
            if w <= 1 << 24 && exponent >= -10 && exponent <= 10 {
                let f = Float(w)
                let magnitude =
                    exponent < 0
                    ? f / Float(exactDoublePowerOfTen(-exponent)) : f * Float(exactDoublePowerOfTen(exponent))
                return negative ? -magnitude : magnitude
            }
            if let bits = eiselLemire(w, exponent, explicitBits: 23, bias: 127, infiniteExponent: 0xFF, table: table) {
                return Float(bitPattern: UInt32(truncatingIfNeeded: bits) | (negative ? 1 << 31 : 0))
            }
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
        return Float(text) ?? .nan
    }

    /// The exact `Int64`, or `nil` when the token is not an integer or out of range.
    @inline(__always)
    var int64Value: Int64? {
        guard isInteger else { return nil }
        if !truncated {
            // At most 19 digits: fits in UInt64.
            if negative {
                if w <= 1 << 63 { return w == 1 << 63 ? .min : -Int64(w) }
                return nil
            }
            return w <= UInt64(Int64.max) ? Int64(w) : nil
        }
        return nil
    }

    private var w: UInt64 { significand }
}
