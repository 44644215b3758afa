import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import LiveObjectsJSON
@testable import Persistence

/// Shortest round-trip formatting and correctly rounded parsing of numbers.
@Suite struct JSONNumberTests {
    // MARK: Tables

    @Test func logarithmApproximationsAreExactOverTheirRange() {
        for e in stride(from: -1100, through: 1100, by: 1) {
            // 10^k <= 2^e < 10^(k+1)
            let k = floorLog10Pow2(e)
            #expect(exactLessOrEqual(1, pow2: 0, pow10: k, 1, pow2: e, pow10: 0), "floorLog10Pow2(\(e))")
            #expect(!exactLessOrEqual(1, pow2: 0, pow10: k + 1, 1, pow2: e, pow10: 0), "floorLog10Pow2(\(e))")
            // 10^k <= 3 * 2^(e-2) < 10^(k+1)
            let k34 = floorLog10ThreeQuartersPow2(e)
            #expect(
                exactLessOrEqual(1, pow2: 0, pow10: k34, 3, pow2: e - 2, pow10: 0), "floorLog10ThreeQuartersPow2(\(e))")
            #expect(
                !exactLessOrEqual(1, pow2: 0, pow10: k34 + 1, 3, pow2: e - 2, pow10: 0),
                "floorLog10ThreeQuartersPow2(\(e))")
        }
        for e in -400...400 {
            // 2^f <= 10^e < 2^(f+1)
            let f = floorLog2Pow10(e)
            #expect(exactLessOrEqual(1, pow2: f, pow10: 0, 1, pow2: 0, pow10: e), "floorLog2Pow10(\(e))")
            #expect(!exactLessOrEqual(1, pow2: f + 1, pow10: 0, 1, pow2: 0, pow10: e), "floorLog2Pow10(\(e))")
        }
    }

    @Test func formattingTableHoldsTheNextIntegerAbovePowersOfTen() {
        let table = DecimalTables.shortestTable
        for k in DecimalTables.shortestMinK...DecimalTables.shortestMaxK {
            let index = 2 * (k - DecimalTables.shortestMinK)
            let (g1, g0) = (table[index], table[index + 1])
            #expect(g0 < 1 << 63 && g1 < 1 << 63)
            // g = g1 * 2^63 + g0, 2^125 < g <= 2^126, (g - 1) * 2^r <= 10^-k < g * 2^r.
            let g = TableBigInt(g1).shifted(by: 63).adding(TableBigInt(g0))
            #expect(g.bitWidth == 126, "k = \(k)")
            let gMinusOne =
                g0 > 0
                ? TableBigInt(g1).shifted(by: 63).adding(TableBigInt(g0 - 1))
                : TableBigInt(g1 - 1).shifted(by: 63).adding(TableBigInt((1 << 63) - 1))
            let r = floorLog2Pow10(-k) - 125
            #expect(exactLessOrEqual(gMinusOne, pow2: r, pow10: 0, TableBigInt(1), pow2: 0, pow10: -k), "k = \(k)")
            #expect(!exactLessOrEqual(g, pow2: r, pow10: 0, TableBigInt(1), pow2: 0, pow10: -k), "k = \(k)")
        }
    }

    @Test func parsingTableHoldsTruncatedPowersOfTen() {
        let table = DecimalTables.parseTable
        for q in DecimalTables.parseMinQ...DecimalTables.parseMaxQ {
            let index = 2 * (q - DecimalTables.parseMinQ)
            #expect(table[index] >> 63 == 1, "q = \(q)")
            // t <= 10^q * 2^(127 - floorLog2(10^q)) < t + 1
            let t = TableBigInt.from(high: table[index], low: table[index + 1])
            let exponent2 = 127 - floorLog2Pow10(q)
            #expect(exactLessOrEqual(t, pow2: 0, pow10: 0, TableBigInt(1), pow2: exponent2, pow10: q), "q = \(q)")
            #expect(
                !exactLessOrEqual(
                    t.adding(TableBigInt(1)), pow2: 0, pow10: 0, TableBigInt(1), pow2: exponent2, pow10: q), "q = \(q)")
        }
    }

    // MARK: Formatting

    @Test func formatsLikeSwiftWithoutExponentPadding() {
        let cases: [(Double, String)] = [
            (0, "0.0"), (-0.0, "-0.0"), (1, "1.0"), (-1.25, "-1.25"), (0.1, "0.1"), (0.3, "0.3"),
            (100, "100.0"), (123456.789, "123456.789"), (0.0001, "0.0001"), (0.00001, "1e-5"),
            (1.5e-7, "1.5e-7"), (1e15, "1000000000000000.0"), (9007199254740992, "9007199254740992.0"),
            (1e16, "1e16"), (1.7976931348623157e308, "1.7976931348623157e308"),
            (Double.leastNonzeroMagnitude, "5e-324"), (2 * Double.leastNonzeroMagnitude, "1e-323"),
            (12 * Double.leastNonzeroMagnitude, "6e-323"),
            (Double.leastNormalMagnitude, "2.2250738585072014e-308"),
            (2.0 / 3.0, "0.6666666666666666"), (0.1 + 0.2, "0.30000000000000004"),
            (.nan, "NaN"), (.infinity, "Infinity"), (-.infinity, "-Infinity"),
        ]
        for (value, text) in cases {
            #expect(JSONWriter.format(value) == text, "\(value)")
        }
        let floats: [(Float, String)] = [
            (0.1, "0.1"), (1.0 / 3.0, "0.33333334"), (16_777_216, "16777216.0"), (3.4028235e38, "3.4028235e38"),
            (Float.leastNonzeroMagnitude, "1e-45"), (Float.leastNormalMagnitude, "1.1754944e-38"), (-0.0, "-0.0"),
        ]
        for (value, text) in floats {
            #expect(JSONWriter.format(value) == text, "\(value)")
        }
    }

    /// Random doubles of every kind: printed with exactly as many digits as Swift's own shortest
    /// `description` and read back bit for bit, by this reader and by the standard library.
    @Test func doublesRoundTripBitForBit() throws {
        var random = SeededRandomNumberGenerator(seed: 0xD0B1E)
        var values: [Double] = [
            0, -0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
            .leastNormalMagnitude.nextDown, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .pi, -.ulpOfOne,
            1, 1.0.nextUp, 1.0.nextDown, 1e23, 8.41e21, 9007199254740994, 0.1, 1e-7, 123e-20,
        ]
        for i in 0..<60_000 {
            switch i % 6 {
            case 0: values.append(Double(bitPattern: random.next()))
            case 1: values.append(Double(bitPattern: random.next() & 0x800F_FFFF_FFFF_FFFF))  // subnormal
            case 2: values.append(Double(Int64(bitPattern: random.next()) % 100_000_000) / 1000)
            case 3: values.append(Double(bitPattern: random.next() & 0xFFF0_0000_0000_0000 | random.next() % 4))
            case 4: values.append(Double.random(in: 0..<100, using: &random))
            default: values.append(Double(bitPattern: random.next() | 0x000F_FFFF_FFFF_FFF0))
            }
        }
        var writer = JSONWriter()
        writer.beginArray()
        for value in values where value.isFinite { writer.double(value) }
        writer.endArray()
        let bytes = writer.takeBytes()
        let finite = values.filter(\.isFinite)
        let back = try JSONReader.withReader(bytes) { (reader) throws(LiveObjectsError) -> [Double] in
            var result: [Double] = []
            try reader.readArray { (reader) throws(LiveObjectsError) in result.append(try reader.readDouble()) }
            try reader.finish()
            return result
        }
        #expect(back.count == finite.count)
        var mismatches = 0
        for (value, parsed) in zip(finite, back) where value.bitPattern != parsed.bitPattern {
            mismatches += 1
            if mismatches < 5 { Issue.record("\(value) read back as \(parsed)") }
        }
        for value in finite.prefix(20_000) {
            let text = JSONWriter.format(value)
            #expect(Double(text)?.bitPattern == value.bitPattern, "\(text)")
            #expect(significantDigits(text) == significantDigits(value.description), "\(text) vs \(value)")
        }
    }

    @Test func floatsRoundTripInTheirOwnShortestForm() throws {
        var random = SeededRandomNumberGenerator(seed: 0xF10A7)
        var values: [Float] = [
            0, -0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude, 0.1, 1.0 / 3.0,
            16_777_216, 7.038531e-26,
        ]
        for i in 0..<60_000 {
            switch i % 3 {
            case 0: values.append(Float(bitPattern: UInt32(truncatingIfNeeded: random.next())))
            case 1: values.append(Float(bitPattern: UInt32(truncatingIfNeeded: random.next()) & 0x807F_FFFF))
            default: values.append(Float.random(in: -1000..<1000, using: &random))
            }
        }
        let finite = values.filter(\.isFinite)
        var writer = JSONWriter()
        writer.beginArray()
        for value in finite { writer.float(value) }
        writer.endArray()
        let back = try JSONReader.withReader(writer.takeBytes()) { (reader) throws(LiveObjectsError) -> [Float] in
            var result: [Float] = []
            try reader.readArray { (reader) throws(LiveObjectsError) in result.append(try reader.readFloat()) }
            return result
        }
        #expect(back.map(\.bitPattern) == finite.map(\.bitPattern))
        for value in finite.prefix(20_000) {
            let text = JSONWriter.format(value)
            #expect(Float(text)?.bitPattern == value.bitPattern, "\(text)")
            // The float's own shortest form, not the widened double's.
            #expect(significantDigits(text) == significantDigits(value.description), "\(text) vs \(value)")
        }
        #expect(
            JSONWriter.format(Float(0.1)) == "0.1" && JSONWriter.format(Double(Float(0.1))) == "0.10000000149011612")
    }

    // MARK: Parsing

    /// Random decimal texts, including long, tiny, huge and half-way ones, parse to the same
    /// value as the standard library's correctly rounded parser gives.
    @Test func parsingIsCorrectlyRounded() throws {
        var random = SeededRandomNumberGenerator(seed: 0x9A25E)
        var texts = [
            "0", "-0", "0.0", "1e-400", "-1e-400", "2.4703282292062327e-324", "2.4703282292062328e-324",
            "4.9406564584124654e-324", "2.2250738585072011e-308", "2.2250738585072012e-308",
            "1.7976931348623157e308", "1.7976931348623158e308", "9007199254740993", "9007199254740992.5",
            "123456789012345678901234567890", "0.000000000000000000000000000000000000000000001",
            "3.40282356779733661637539395458142568448e38", "1.00000005960464477539062499", "7.038531e-26",
            "1.00000005960464477539062500000000000000000000000000000000001", "1e22", "1e23", "8.41e21",
        ]
        for i in 0..<40_000 {
            var text = random.next() & 1 == 0 ? "-" : ""
            let digits = Int(random.next() % 24) + 1
            text += String(random.next() % 9 + 1)
            for _ in 1..<digits { text += String(random.next() % 10) }
            if i % 2 == 0 { text += "." + String(random.next() % 100_000) }
            if i % 3 != 0 { text += "e" + String(Int(random.next() % 700) - 350) }
            texts.append(text)
        }
        for text in texts {
            let expected = try #require(Double(text))
            let expectedFloat = try #require(Float(text))
            let number = try #require(JSONNumber(text: text))
            if expected.isFinite {
                #expect(number.doubleValue?.bitPattern == expected.bitPattern, "\(text)")
            } else {
                #expect(number.doubleValue == nil, "\(text)")
            }
            if expectedFloat.isFinite {
                #expect(number.floatValue?.bitPattern == expectedFloat.bitPattern, "\(text)")
            } else {
                #expect(number.floatValue == nil, "\(text)")
            }
        }
    }

    @Test func integersParseExactlyAcrossTheWholeRange() throws {
        let cases: [Int64] = [
            0, 1, -1, 9, 10, 99, 100, 12_345_678, 123_456_789, .max, .min, .max - 1, .min + 1, 1 << 53 + 1,
        ]
        var random = SeededRandomNumberGenerator(seed: 1)
        let values = cases + (0..<10_000).map { _ in Int64(bitPattern: random.next()) >> (random.next() % 64) }
        var writer = JSONWriter()
        writer.beginArray()
        for value in values { writer.int(value) }
        writer.endArray()
        let text = String(decoding: writer.takeBytes(), as: UTF8.self)
        #expect(text.hasPrefix("[0,1,-1,9,10,99,100,12345678,123456789,9223372036854775807,-9223372036854775808,"))
        let back = try read(text) { (reader) throws(LiveObjectsError) -> [Int64] in
            var result: [Int64] = []
            try reader.readArray { (reader) throws(LiveObjectsError) in result.append(try reader.readInt64()) }
            return result
        }
        #expect(back == values)
        #expect(written { $0.uint(.max) } == "18446744073709551615")
        #expect(try read("-0") { (reader) throws(LiveObjectsError) in try reader.readInt64() } == 0)
    }

    @Test func numberValuesKeepTheirText() throws {
        let value = try parse("[1, 1.0, -0.0, 1e2, 12345678901234567890123, 0.1]")
        let elements = try #require(value.arrayValue)
        let numbers = elements.compactMap(\.numberValue)
        #expect(numbers.map(\.text) == ["1", "1.0", "-0.0", "1e2", "12345678901234567890123", "0.1"])
        #expect(numbers.map(\.int64Value) == [1, nil, nil, nil, nil, nil])
        #expect(numbers.map(\.isInteger) == [true, false, false, false, true, false])
        #expect(numbers[2].doubleValue?.sign == .minus)
        #expect(numbers[4].doubleValue == 1.2345678901234568e22)
        #expect(JSONNumber(text: "01") == nil && JSONNumber(text: "1 ") == nil && JSONNumber(text: "") == nil)
        #expect(JSONNumber(text: "-") == nil && JSONNumber(text: "1.5e+3")?.doubleValue == 1500)
        #expect(JSONNumber(1e300 * 10).doubleValue == 1e301)
        #expect(JSONNumber(text: "1e400")?.doubleValue == nil && JSONNumber(text: "1e39")?.floatValue == nil)
    }
}

/// The significant digits of a decimal text (no sign, point, exponent or outer zeros).
func significantDigits(_ text: String) -> String {
    var mantissa = Substring(text.lowercased())
    if let e = mantissa.firstIndex(of: "e") { mantissa = mantissa[..<e] }
    var digits = mantissa.filter(\.isNumber)
    while digits.hasPrefix("0") { digits.removeFirst() }
    while digits.hasSuffix("0") { digits.removeLast() }
    return digits
}

@Suite struct DigitCountTests {
    /// The digits of every power of ten and its neighbours, and of random values of every
    /// width, as the standard library writes them, with nothing written past 8 bytes or the
    /// digits.
    @Test func decimalDigitsOfEveryWidth() {
        var values: [UInt64] = [0, 1, 9, .max, .max - 1]
        var power: UInt64 = 1
        for n in 0...19 {
            values += [power, power - 1, power + 1]
            if n < 19 { power *= 10 }
        }
        var random = SeededRandomNumberGenerator(seed: 0xD161)
        for _ in 0..<20_000 { values.append(random.next() >> (random.next() % 64)) }
        let guardByte: UInt8 = 0xEE
        for value in values {
            var buffer = [UInt8](repeating: guardByte, count: 32)
            let n = buffer.withUnsafeMutableBufferPointer { storeDecimal(value, at: $0.baseAddress!) }
            let text = String(value)
            #expect(String(decoding: buffer[0..<n], as: UTF8.self) == text)
            #expect(buffer[max(n, 8)...].allSatisfy { $0 == guardByte }, "\(value) wrote past its room")
        }
    }
}
