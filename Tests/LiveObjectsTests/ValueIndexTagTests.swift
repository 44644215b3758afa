import LiveObjectsTestSupport
import Testing

@testable import LiveObjects

/// The hash bits a value index keeps per string (`ValueIndex.tag`): equal strings, Swift's
/// canonical equivalence included, get equal tags whichever way they are spelled, and values
/// whose tags collide stay apart in the index.
@Suite struct ValueIndexTagTests {
    /// Pairs of strings that `==` calls equal, spelled differently: an ASCII string and its
    /// equivalents outside ASCII (each of the three scalars that decompose into ASCII, short and
    /// past 8 and 16 bytes), and strings outside ASCII in their precomposed and decomposed forms.
    static let equivalentPairs: [(String, String)] = [
        ("\u{212A}", "K"),
        ("\u{212A}ay", "Kay"),
        ("\u{037E}", ";"),
        ("\u{1FEF}", "`"),
        ("a name past sixteen \u{212A}", "a name past sixteen K"),
        ("\u{212A}elvin\u{037E} 12", "Kelvin; 12"),
        ("x\u{1FEF}y", "x`y"),
        ("\u{E9}", "e\u{301}"),
        ("Ren\u{E9}e", "Rene\u{301}e"),
        ("a long r\u{E9}sum\u{E9} of names", "a long re\u{301}sume\u{301} of names"),
        ("\u{212A}\u{301}", "\u{1E30}"),
        ("\u{212A}\u{301}", "K\u{301}"),
    ]

    /// Seeds of the string hash: fixed ones and the process's own.
    static let seeds: [UInt64] = [0, 1, 0x9E37_79B9_7F4A_7C15, ValueIndex().seed]

    @Test(arguments: seeds)
    func equalStringsHaveEqualTags(seed: UInt64) {
        let index = ValueIndex()
        index.seed = seed
        for (a, b) in Self.equivalentPairs {
            #expect(a == b, "the pair \(Array(a.unicodeScalars)) is not equal in Swift")
            #expect(
                index.tag(a) == index.tag(b), "seed \(seed): \(Array(a.unicodeScalars)) and \(Array(b.unicodeScalars))")
            #expect(index.tag(.string(a)) == index.tag(.string(b)))
        }
    }

    /// An index holding rows of one spelling finds them from the other, counts them together,
    /// and removes a row by either.
    @Test(arguments: seeds)
    func anIndexFindsEveryEquivalentSpelling(seed: UInt64) {
        let values = ValueIndexTests.Column()
        let index = ValueIndexTests.index(values)
        index.seed = seed
        var row: Int32 = 0
        for (a, b) in Self.equivalentPairs {
            values.values[row] = .string(a)
            index.insert(.string(a), row: row)
            values.values[row + 1] = .string(b)
            index.insert(.string(b), row: row + 1)
            row += 2
        }
        for (n, (a, b)) in Self.equivalentPairs.enumerated() {
            // Pairs may share a value with another pair ("\u{212A}\u{301}" twice).
            let expected = Self.equivalentPairs.indices.filter { Self.equivalentPairs[$0].0 == a }.flatMap {
                [Int32($0 * 2), Int32($0 * 2 + 1)]
            }
            #expect(index.rows(of: .string(a)) == expected, "seed \(seed): pair \(n) by its first spelling")
            #expect(index.rows(of: .string(b)) == expected, "seed \(seed): pair \(n) by its second spelling")
        }
        #expect(index.layoutFaults.isEmpty)
        index.remove(.string("Kay"), row: 2)
        #expect(index.rows(of: .string("\u{212A}ay")) == [3])
        #expect(index.layoutFaults.isEmpty)
    }

    /// The only scalars outside ASCII that `==` finds equal to an ASCII string of one or two
    /// scalars are the three the hash replaces, and each equals the ASCII scalar it is replaced
    /// by: a string is equivalent to an ASCII string exactly when its scalars are ASCII or these
    /// (no canonical decomposition is longer than two scalars).
    @Test func theScalarsOutsideASCIIThatEqualASCIIAreTheOnesReplaced() {
        var ascii = Set<String>()
        for a in 0..<128 {
            let first = String(Unicode.Scalar(UInt8(a)))
            ascii.insert(first)
            for b in 0..<128 { ascii.insert(first + String(Unicode.Scalar(UInt8(b)))) }
        }
        var found: [UInt32: String] = [:]
        for value in UInt32(0x80)...0x10_FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let string = String(scalar)
            // The ASCII spelling the set holds, which `==` calls equal to the scalar's.
            if let i = ascii.firstIndex(of: string) { found[value] = ascii[i] }
        }
        #expect(found == [0x037E: ";", 0x1FEF: "`", 0x212A: "K"])
        for (value, string) in found {
            #expect(
                ValueIndex.asciiEquivalent(of: Unicode.Scalar(value)!) == string.utf8.first,
                "U+\(String(value, radix: 16)) is \(string) but not replaced by it")
        }
        for value in UInt32(0x80)...0x10_FFFF {
            guard let scalar = Unicode.Scalar(value), let byte = ValueIndex.asciiEquivalent(of: scalar) else {
                continue
            }
            #expect(found[value] == String(Unicode.Scalar(byte)), "U+\(String(value, radix: 16)) replaced")
        }
        #expect(found.count == 3)
    }

    /// Different strings whose tags collide (found by trying many names under a fixed seed)
    /// keep their own rows through inserts and removals; each is found by comparing the column.
    @Test func collidingTagsKeepTheirValuesApart() throws {
        let probe = ValueIndex()
        probe.seed = 42
        var byTag: [UInt32: String] = [:]
        var collisions: [(String, String)] = []
        for i in 0..<300_000 {
            let name = "name \(i)"
            let tag = probe.tag(name)
            if let other = byTag[tag] { collisions.append((other, name)) } else { byTag[tag] = name }
        }
        try #require(collisions.count >= 2, "too few collisions to test: \(collisions.count)")
        let values = ValueIndexTests.Column()
        let index = ValueIndexTests.index(values)
        index.seed = 42
        var row: Int32 = 0
        var model: [String: [Int32]] = [:]
        for (a, b) in collisions {
            #expect(index.tag(a) == index.tag(b) && a != b)
            for name in [a, b, a, b, b] {
                values.values[row] = .string(name)
                index.insert(.string(name), row: row)
                model[name, default: []].append(row)
                row += 1
            }
        }
        for (name, rows) in model {
            #expect(index.rows(of: .string(name)) == rows, "\(name)")
            #expect(index.count(of: .string(name)) == rows.count, "\(name)")
        }
        // The first value of each pair loses all its rows: the second must stay found.
        for (a, b) in collisions {
            for r in model[a]! { index.remove(.string(a), row: r) }
            #expect(index.rows(of: .string(a)) == nil, "\(a) removed")
            #expect(index.rows(of: .string(b)) == model[b], "\(b) after \(a) was removed")
        }
        #expect(index.layoutFaults.isEmpty)
    }
}
