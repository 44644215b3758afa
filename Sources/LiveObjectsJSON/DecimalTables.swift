// Power-of-ten tables for the floating-point formatter and parser.
//
// Both tables hold 128-bit approximations of powers of ten. They are computed once, on first use,
// with a small exact big-integer routine, so that no opaque constants live in the source and the
// tables can be re-derived and checked by the tests.

/// `floor(e * log10(2))`, exact for `-5456 <= e <= 5456` (wider than any caller needs).
@inlinable @inline(__always)
func floorLog10Pow2(_ e: Int) -> Int { (e &* 661_971_961_083) >> 41 }

/// `floor(e * log10(2) + log10(3/4))`, exact for the exponents of `Double` and `Float`.
@inlinable @inline(__always)
func floorLog10ThreeQuartersPow2(_ e: Int) -> Int { (e &* 661_971_961_083 &- 274_743_187_321) >> 41 }

/// `floor(e * log2(10))`, exact for `-1233 <= e <= 1233` (wider than any caller needs).
@inlinable @inline(__always)
func floorLog2Pow10(_ e: Int) -> Int { (e &* 913_124_641_741) >> 38 }

/// The precomputed tables.
@usableFromInline
package enum DecimalTables {
    /// Smallest `k` of ``shortestTable``.
    @usableFromInline static let shortestMinK = -324
    /// Largest `k` of ``shortestTable``.
    static let shortestMaxK = 292

    /// For `k` in `shortestMinK...shortestMaxK`: write `10^-k = b * 2^r` with `2^125 <= b < 2^126`
    /// and let `g = floor(b) + 1`. Entry `2 * (k - shortestMinK)` is the high 63 bits of `g`,
    /// the next entry its low 63 bits. Used by the shortest-representation formatter.
    package static let shortestTable: [UInt64] = makeShortestTable()

    /// Smallest decimal exponent of ``parseTable``.
    static let parseMinQ = -348
    /// Largest decimal exponent of ``parseTable``.
    static let parseMaxQ = 347

    /// For `q` in `parseMinQ...parseMaxQ`: `10^q` scaled by a power of two into `[2^127, 2^128)`
    /// and rounded down. Entry `2 * (q - parseMinQ)` is the high 64 bits, the next one the low
    /// 64 bits. Used by the fast decimal-to-binary parser.
    package static let parseTable: [UInt64] = makeParseTable()

    static func makeShortestTable() -> [UInt64] {
        var table = [UInt64](repeating: 0, count: 2 * (shortestMaxK - shortestMinK + 1))
        func store(_ k: Int, _ g: TableBigInt) {
            let index = 2 * (k - shortestMinK)
            table[index] = g.bits(from: 63, count: 63)
            table[index + 1] = g.bits(from: 0, count: 63)
        }
        // k <= 0: 10^-k is an integer.
        var power = TableBigInt(1)
        for k in stride(from: 0, through: shortestMinK, by: -1) {
            if k < 0 { power.multiply(by: 10) }
            let r = floorLog2Pow10(-k) - 125
            var g = power.shifted(by: -r)
            g.addOne()
            store(k, g)
        }
        // k > 0: 10^-k = 1 / 10^k, so b = 2^-r / 10^k.
        for k in 1...shortestMaxK {
            let r = floorLog2Pow10(-k) - 125
            var g = TableBigInt.floorPowerOfTwo(-r, dividedByPowerOfTen: k)
            g.addOne()
            store(k, g)
        }
        return table
    }

    static func makeParseTable() -> [UInt64] {
        var table = [UInt64](repeating: 0, count: 2 * (parseMaxQ - parseMinQ + 1))
        func store(_ q: Int, _ t: TableBigInt) {
            let index = 2 * (q - parseMinQ)
            table[index] = t.bits(from: 64, count: 64)
            table[index + 1] = t.bits(from: 0, count: 64)
        }
        var power = TableBigInt(1)
        for q in 0...parseMaxQ {
            if q > 0 { power.multiply(by: 10) }
            store(q, power.shifted(by: 128 - power.bitWidth))
        }
        power = TableBigInt(1)
        for m in 1...(-parseMinQ) {
            power.multiply(by: 10)
            store(-m, TableBigInt.floorPowerOfTwo(127 + power.bitWidth, dividedByPowerOfTen: m))
        }
        return table
    }
}

/// A minimal unsigned big integer, only used to build the tables (and by the tests to check them).
struct TableBigInt: Equatable {
    /// Little-endian 32-bit limbs without high zero limbs.
    var limbs: [UInt32]

    init(_ value: UInt64) {
        limbs = [UInt32(truncatingIfNeeded: value), UInt32(truncatingIfNeeded: value >> 32)]
        normalize()
    }

    init(limbs: [UInt32]) {
        self.limbs = limbs
        normalize()
    }

    /// `2^exponent`.
    static func powerOfTwo(_ exponent: Int) -> TableBigInt {
        var limbs = [UInt32](repeating: 0, count: exponent / 32 + 1)
        limbs[exponent / 32] = 1 << UInt32(exponent % 32)
        return TableBigInt(limbs: limbs)
    }

    /// `10^exponent`.
    static func powerOfTen(_ exponent: Int) -> TableBigInt {
        var value = TableBigInt(1)
        for _ in 0..<exponent { value.multiply(by: 10) }
        return value
    }

    /// `floor(2^e / 10^m)`, by repeated exact floor division.
    static func floorPowerOfTwo(_ e: Int, dividedByPowerOfTen m: Int) -> TableBigInt {
        var value = powerOfTwo(e)
        var remaining = m
        while remaining >= 9 {
            value.divide(by: 1_000_000_000)
            remaining -= 9
        }
        var last: UInt32 = 1
        for _ in 0..<remaining { last *= 10 }
        value.divide(by: last)
        return value
    }

    mutating func normalize() {
        while let last = limbs.last, last == 0 { limbs.removeLast() }
    }

    /// The number of significant bits.
    var bitWidth: Int {
        guard let last = limbs.last else { return 0 }
        return limbs.count * 32 - last.leadingZeroBitCount
    }

    mutating func multiply(by factor: UInt32) {
        var carry: UInt64 = 0
        for i in limbs.indices {
            let product = UInt64(limbs[i]) * UInt64(factor) + carry
            limbs[i] = UInt32(truncatingIfNeeded: product)
            carry = product >> 32
        }
        if carry != 0 { limbs.append(UInt32(carry)) }
    }

    /// Floor division by a small divisor.
    mutating func divide(by divisor: UInt32) {
        var remainder: UInt64 = 0
        for i in limbs.indices.reversed() {
            let current = remainder << 32 | UInt64(limbs[i])
            limbs[i] = UInt32(current / UInt64(divisor))
            remainder = current % UInt64(divisor)
        }
        normalize()
    }

    mutating func addOne() {
        for i in limbs.indices {
            limbs[i] &+= 1
            if limbs[i] != 0 { return }
        }
        limbs.append(1)
    }

    /// Bit `index` (0 is the least significant).
    func bit(_ index: Int) -> Bool {
        guard index >= 0, index / 32 < limbs.count else { return false }
        return limbs[index / 32] >> UInt32(index % 32) & 1 == 1
    }

    /// `count` (at most 64) bits starting at bit `start`, as an integer.
    func bits(from start: Int, count: Int) -> UInt64 {
        var result: UInt64 = 0
        for i in stride(from: count - 1, through: 0, by: -1) {
            result = result << 1 | (bit(start + i) ? 1 : 0)
        }
        return result
    }

    /// `self * 2^amount` for positive amounts, `floor(self / 2^-amount)` for negative ones.
    func shifted(by amount: Int) -> TableBigInt {
        if amount >= 0 {
            let words = amount / 32
            let bits = UInt32(amount % 32)
            var result = [UInt32](repeating: 0, count: limbs.count + words + 1)
            for (i, limb) in limbs.enumerated() {
                result[i + words] |= limb << bits
                if bits > 0 { result[i + words + 1] |= limb >> (32 - bits) }
            }
            return TableBigInt(limbs: result)
        }
        let words = -amount / 32
        let bits = UInt32(-amount % 32)
        guard words < limbs.count else { return TableBigInt(0) }
        var result = [UInt32](repeating: 0, count: limbs.count - words)
        for i in result.indices {
            result[i] = limbs[i + words] >> bits
            if bits > 0 && i + words + 1 < limbs.count { result[i] |= limbs[i + words + 1] << (32 - bits) }
        }
        return TableBigInt(limbs: result)
    }
}
