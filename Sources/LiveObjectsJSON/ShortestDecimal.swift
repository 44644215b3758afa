// Shortest round-trip formatting of binary floating-point numbers.
//
// The digit selection follows Raffaello Giulietti's "Schubfach" method ("The Schubfach way to
// render doubles", 2020): the rounding interval of the binary value is scaled by a 126-bit
// approximation of a power of ten, and the shortest decimal inside it, closest to the value, is
// picked with a few integer comparisons. Unlike the published variant, which always produces at
// least two digits, this one returns the truly shortest digits (`5e-324`, not `4.9e-324`).

/// The decimal `digits * 10^exponent` closest to `c * 2^q` among the shortest decimals that round
/// to it. `c` and `q` come from an IEEE binary value whose normal values have `c >= cMin`
/// and whose smallest exponent is `qMin`. `digits` may still end in zeros.
@inlinable @inline(__always)
func shortestDecimal(
    c: UInt64, q: Int, cMin: UInt64, qMin: Int, table: UnsafePointer<UInt64>
) -> (digits: UInt64, exponent: Int) {
    let out: UInt64 = c & 1
    let cb = c << 2
    let cbr = cb + 2
    let cbl: UInt64
    let k: Int
    if c != cMin || q == qMin {
        cbl = cb - 2
        k = floorLog10Pow2(q)
    } else {
        // The spacing below a power of two is half the spacing above it.
        cbl = cb - 1
        k = floorLog10ThreeQuartersPow2(q)
    }
    let h = q + floorLog2Pow10(-k) + 2
    let index = 2 * (k - DecimalTables.shortestMinK)
    let g1 = table[index]
    let g0 = table[index + 1]

    let vb = roundToOdd(g1, g0, cb << UInt64(h))
    let vbl = roundToOdd(g1, g0, cbl << UInt64(h))
    let vbr = roundToOdd(g1, g0, cbr << UInt64(h))

    let s = vb >> 2
    if s >= 10 {
        // One digit fewer: the multiples of ten around s.
        let sp10 = s / 10 * 10
        let tp10 = sp10 + 10
        let upin = vbl + out <= sp10 << 2
        let wpin = (tp10 << 2) + out <= vbr
        if upin != wpin { return (upin ? sp10 : tp10, k) }
    }
    let t = s + 1
    let uin = vbl + out <= s << 2
    let win = (t << 2) + out <= vbr
    if uin != win { return (uin ? s : t, k) }
    // Both in the interval: the closer one, the even one on a tie.
    let cmp = Int64(bitPattern: vb) - Int64(bitPattern: (s + t) << 1)
    return (cmp < 0 || (cmp == 0 && s & 1 == 0) ? s : t, k)
}

/// `(g * cp) >> 127` for the 126-bit `g = g1 * 2^63 + g0`, with the lowest bit set when the
/// discarded bits are not all zero ("round to odd").
@inlinable @inline(__always)
func roundToOdd(_ g1: UInt64, _ g0: UInt64, _ cp: UInt64) -> UInt64 {
    let mask63: UInt64 = (1 << 63) - 1
    let x1 = g0.multipliedFullWidth(by: cp).high
    let y = g1.multipliedFullWidth(by: cp)
    let z = (y.low >> 1) &+ x1
    let vbp = y.high &+ (z >> 63)
    return vbp | (((z & mask63) &+ mask63) >> 63)
}

/// Shortest decimal of a finite, nonzero `Double` magnitude. `table` is the base address of
/// ``DecimalTables/shortestTable``.
@inlinable @inline(__always)
func shortestDecimal(_ value: Double, table: UnsafePointer<UInt64>) -> (digits: UInt64, exponent: Int) {
    let bits = value.bitPattern
    let fraction = bits & ((1 << 52) - 1)
    let biased = Int(bits >> 52 & 0x7FF)
    if biased == 0 { return shortestDecimal(c: fraction, q: -1074, cMin: 1 << 52, qMin: -1074, table: table) }
    let c = fraction | 1 << 52
    let q = biased - 1075
    if q < 0 && q > -53 {
        // Integers below 2^53 print exactly.
        let f = c >> UInt64(-q)
        if f << UInt64(-q) == c { return (f, 0) }
    }
    return shortestDecimal(c: c, q: q, cMin: 1 << 52, qMin: -1074, table: table)
}

/// Shortest decimal of a finite, nonzero `Float` magnitude (the float's own shortest form).
/// `table` is the base address of ``DecimalTables/shortestTable``.
@inlinable @inline(__always)
func shortestDecimal(_ value: Float, table: UnsafePointer<UInt64>) -> (digits: UInt64, exponent: Int) {
    let bits = UInt64(value.bitPattern)
    let fraction = bits & ((1 << 23) - 1)
    let biased = Int(bits >> 23 & 0xFF)
    if biased == 0 { return shortestDecimal(c: fraction, q: -149, cMin: 1 << 23, qMin: -149, table: table) }
    let c = fraction | 1 << 23
    let q = biased - 150
    if q < 0 && q > -24 {
        let f = c >> UInt64(-q)
        if f << UInt64(-q) == c { return (f, 0) }
    }
    return shortestDecimal(c: c, q: q, cMin: 1 << 23, qMin: -149, table: table)
}

/// The binary floating-point types written in their own shortest round-trip form.
@usableFromInline
package protocol ShortestDecimalFormattable: BinaryFloatingPoint {
    /// The shortest decimal of a finite, nonzero magnitude; `table` is the base address of
    /// ``DecimalTables/shortestTable``.
    func shortestDecimal(table: UnsafePointer<UInt64>) -> (digits: UInt64, exponent: Int)
}

extension Double: ShortestDecimalFormattable {
    @inlinable @inline(__always)
    package func shortestDecimal(table: UnsafePointer<UInt64>) -> (digits: UInt64, exponent: Int) {
        LiveObjectsJSON.shortestDecimal(self, table: table)
    }
}

extension Float: ShortestDecimalFormattable {
    @inlinable @inline(__always)
    package func shortestDecimal(table: UnsafePointer<UInt64>) -> (digits: UInt64, exponent: Int) {
        LiveObjectsJSON.shortestDecimal(self, table: table)
    }
}

/// The eight decimal digits of `value` (below 10^8, with leading zeros) as ASCII, the first
/// digit in the lowest byte: stored little-endian, they read in order. Four lanes of two digits,
/// then eight lanes of one, split with multiplications in place of divisions.
@inlinable @inline(__always)
func eightDigits(_ value: UInt32) -> UInt64 {
    let high = value / 10_000
    // Two 32-bit lanes below 10,000: the first four digits in the low lane.
    var v = UInt64(high) | UInt64(value &- high &* 10_000) << 32
    // x / 100 is (x * 10486) >> 20 for x < 10,000: four 16-bit lanes below 100.
    let hundreds = (v &* 10486) >> 20 & 0x0000_007F_0000_007F
    v = hundreds | (v &- hundreds &* 100) << 16
    // x / 10 is (x * 103) >> 10 for x < 100: eight 8-bit lanes below 10.
    let tens = (v &* 103) >> 10 & 0x000F_000F_000F_000F
    v = tens | (v &- tens &* 10) << 8
    return v | 0x3030_3030_3030_3030
}

/// The number of leading zeros (0...7: the last digit always counts) among eight digits made
/// by ``eightDigits(_:)``.
@inlinable @inline(__always)
func leadingZeroDigits(_ digits: UInt64) -> Int {
    min((digits & 0x0F0F_0F0F_0F0F_0F0F).trailingZeroBitCount >> 3, 7)
}

/// Writes `value` in decimal, without leading zeros, from `p` on, and returns the number of
/// digits (1...20). It writes in 8-byte stores, so it may overwrite the bytes after the digits
/// up to `p + 8`.
@inlinable @inline(__always)
func storeDecimal(_ value: UInt64, at p: UnsafeMutablePointer<UInt8>) -> Int {
    @inline(__always)
    func store(_ digits: UInt64, _ at: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(at).storeBytes(of: digits.littleEndian, as: UInt64.self)
    }
    /// Stores the digits of `head` (below 10^8) without leading zeros; returns how many.
    @inline(__always)
    func storeHead(_ head: UInt64) -> Int {
        let digits = eightDigits(UInt32(truncatingIfNeeded: head))
        let zeros = leadingZeroDigits(digits)
        store(digits >> (8 * zeros), p)
        return 8 - zeros
    }
    if value < 100_000_000 { return storeHead(value) }
    if value < 10_000_000_000_000_000 {
        let high = value / 100_000_000
        let n = storeHead(high)
        store(eightDigits(UInt32(truncatingIfNeeded: value &- high &* 100_000_000)), p + n)
        return n + 8
    }
    let high = value / 10_000_000_000_000_000
    let rest = value &- high &* 10_000_000_000_000_000
    let middle = rest / 100_000_000
    let n = storeHead(high)
    store(eightDigits(UInt32(truncatingIfNeeded: middle)), p + n)
    store(eightDigits(UInt32(truncatingIfNeeded: rest &- middle &* 100_000_000)), p + n + 8)
    return n + 16
}

/// The largest number of bytes ``formatDecimal(negative:digits:exponent:into:)`` writes.
@usableFromInline
package let maxFormattedDecimalLength = 32

/// Formats `±digits * 10^exponent` (at most 17 significant digits) into `buffer`, which must hold
/// ``maxFormattedDecimalLength`` bytes (all of which it may overwrite), and returns the length.
///
/// Magnitudes in `[1e-4, 1e16)` are written positionally with at least one digit after the
/// point (`0.0001`, `12.5`, `3.0`, `9007199254740992.0`); others in exponent form (`1e16`,
/// `1.5e-7`, `5e-324`), like Swift's `description` but without the exponent's `+` and padding.
@inlinable @inline(__always)
func formatDecimal(negative: Bool, digits: UInt64, exponent: Int, into buffer: UnsafeMutablePointer<UInt8>) -> Int {
    var f = digits
    var e = exponent
    if f % 10 == 0 && f != 0 {
        repeat {
            f /= 10
            e += 1
        } while f % 10 == 0
    }
    var p = buffer
    if negative {
        p[0] = 0x2D
        p += 1
    }
    // The digits go one place to the right, where every layout but two can use them as they are.
    let n = storeDecimal(f, at: p + 1)
    let x = n + e - 1  // exponent of the first digit
    if x >= -4 && x < 16 {
        if e >= 0 {
            // Integer: digits, zeros, ".0".
            for i in 0..<n { p[i] = p[i + 1] }
            p += n
            for _ in 0..<e {
                p[0] = 0x30
                p += 1
            }
            p[0] = 0x2E
            p[1] = 0x30
            return p + 2 - buffer
        } else if x >= 0 {
            // The point inside the digits: those before it moved back.
            for i in 0...x { p[i] = p[i + 1] }
            p[x + 1] = 0x2E
            return p + n + 1 - buffer
        } else {
            // 0.000ddd
            p[0] = 0x30
            p[1] = 0x2E
            p += 2
            for _ in 0..<(-x - 1) {
                p[0] = 0x30
                p += 1
            }
            _ = storeDecimal(f, at: p)
            return p + n - buffer
        }
    }
    // d.ddde-x: the first digit moved before the point.
    p[0] = p[1]
    if n > 1 {
        p[1] = 0x2E
        p += n + 1
    } else {
        p += 1
    }
    p[0] = 0x65  // e
    p += 1
    var magnitude = x
    if x < 0 {
        p[0] = 0x2D
        p += 1
        magnitude = -x
    }
    return p + storeDecimal(UInt64(magnitude), at: p) - buffer
}
