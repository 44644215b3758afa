import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

private let c: ComparisonOptions = .caseInsensitive
private let d: ComparisonOptions = .diacriticInsensitive
private let cd: ComparisonOptions = [.caseInsensitive, .diacriticInsensitive]

private func matches(
    _ string: String, _ operation: StringMatcher.Operation, _ pattern: String, _ options: ComparisonOptions = []
) -> Bool {
    StringMatcher(operation, pattern, options: options).matches(string)
}

@Suite struct StringFoldingTests {
    @Test func asciiFastPath() {
        let folded = FoldedString("Hello, World! 123", options: c)
        #expect(folded.isASCII)
        #expect(folded.string == "hello, world! 123")
        #expect(FoldedString("Hello", options: []).string == "Hello")
        #expect(FoldedString("Hello", options: d).string == "Hello")
    }

    @Test func caseFoldingInEveryScript() {
        #expect(matches("Пятёрочка", .contains, "пятёр", c))
        #expect(matches("ПЯТЁРОЧКА", .equal, "пятёрочка", c))
        #expect(!matches("ПЯТЁРОЧКА", .equal, "пятёрочка"))
        #expect(matches("ΣΊΣΥΦΟΣ", .equal, "σίσυφος", c))  // final sigma folds like sigma
        #expect(matches("Ωμέγα", .beginsWith, "ΩΜΈ", c))
        #expect(matches("Բարեւ", .equal, "բԱՐԵՒ", c))  // Armenian
        #expect(matches("𐐀𐐁", .equal, "𐐨𐐩", c))  // Deseret, outside the BMP
        #expect(matches("Ꭰ", .equal, "ꭰ", c))  // Cherokee
        #expect(matches("\u{1C5}emal", .equal, "\u{1C4}EMAL", c))  // titlecase and uppercase digraph
        #expect(matches("ﬁle", .equal, "FILE", c))  // ligature
        #expect(!FoldedString("Пятёрочка", options: c).isASCII)
        // Dotless ı is a letter of its own under full case folding.
        #expect(!matches("ı", .equal, "i", c))
        #expect(matches("I", .equal, "i", c))
    }

    @Test func sharpS() {
        #expect(matches("Straße", .equal, "STRASSE", c))
        #expect(matches("STRASSE", .equal, "straße", c))
        #expect(matches("ẞ", .equal, "ss", c))
        #expect(matches("Straße", .contains, "SS", c))
        #expect(!matches("Straße", .equal, "Strasse"))
    }

    @Test func diacriticFolding() {
        #expect(matches("Crème Brûlée", .equal, "creme brulee", cd))
        #expect(matches("Crème Brûlée", .equal, "Creme Brulee", d))
        #expect(!matches("Crème Brûlée", .equal, "creme brulee", d))
        #expect(!matches("Crème Brûlée", .equal, "creme brulee", c))
        #expect(matches("Crème Brûlée", .equal, "crème brûlée", c))
        #expect(matches("ёлка", .equal, "елка", d))
        #expect(matches("ЁЛКА", .equal, "елка", cd))
        #expect(!matches("ёлка", .equal, "елка"))
        #expect(matches("İstanbul", .equal, "istanbul", cd))
        #expect(matches("Łódź", .equal, "lodz", cd))
        #expect(matches("Øresund", .equal, "oresund", cd))
        #expect(matches("Ἀθῆναι", .equal, "αθηναι", cd))
        #expect(FoldedString("Crème", options: cd).string == "creme")
        #expect(FoldedString("Crème", options: cd).isASCII)
    }

    @Test func canonicalEquivalence() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        for options in [[], c, d, cd] as [ComparisonOptions] {
            #expect(FoldedString(composed, options: options) == FoldedString(decomposed, options: options))
            #expect(matches(composed, .equal, decomposed, options))
        }
        // Marks in another order are reordered canonically (dot below before acute).
        let a = "a\u{301}\u{323}"
        let b = "a\u{323}\u{301}"
        #expect(a == b)
        #expect(FoldedString(a, options: []) == FoldedString(b, options: []))
        #expect(FoldedString(a, options: c) == FoldedString("A\u{323}\u{301}", options: c))
        #expect(FoldedString("Ạ\u{301}", options: c) == FoldedString(a, options: c))
    }
}

@Suite struct StringMatcherTests {
    @Test(
        arguments: [
            // (string, operation, pattern, options, expected)
            ("Пятёрочка", StringMatcher.Operation.beginsWith, "ПЯТ", c, true),
            ("Пятёрочка", .beginsWith, "ПЯТ", [], false),
            ("Пятёрочка", .endsWith, "РОЧКА", c, true),
            ("Пятёрочка", .contains, "ТЕР", cd, true),
            ("Пятёрочка", .contains, "тер", c, false),
            ("Пятёрочка", .contains, "тер", d, true),
            ("Crème Brûlée", .endsWith, "BRULEE", cd, true),
            ("Crème Brûlée", .endsWith, "brûlée", c, true),
            ("Crème Brûlée", .contains, "reme", [], false),
            ("Crème Brûlée", .contains, "reme", d, true),
            ("Crème Brûlée", .beginsWith, "CR", c, true),
            ("Rex", .equal, "rex", [], false),
            ("Rex", .equal, "rex", c, true),
            ("Rex", .equal, "Re", c, false),
            ("Rex", .contains, "", [], true),
            ("Rex", .beginsWith, "", [], true),
            ("Rex", .endsWith, "", [], true),
            ("", .contains, "", [], true),
            ("", .contains, "a", [], false),
            ("Rex", .equal, "", [], false),
            ("ab", .contains, "abc", [], false),
            ("ab", .endsWith, "xab", [], false),
            ("abcabd", .contains, "abd", [], true),
            // Matches respect character boundaries.
            ("cafe\u{301}", .contains, "cafe", [], false),
            ("cafe\u{301}", .beginsWith, "caf", [], true),
            ("cafe\u{301}", .beginsWith, "cafe", [], false),
            ("cafe\u{301}", .beginsWith, "cafe", d, true),
            ("café", .contains, "cafe", [], false),
            ("café", .endsWith, "é", [], true),
            ("café", .endsWith, "\u{301}", [], false),
            ("e\u{301}x", .contains, "\u{301}", [], false),
            ("👨‍👩‍👧", .contains, "👩", [], false),
            ("👨‍👩‍👧", .beginsWith, "👨", [], false),
            ("👨‍👩‍👧 and 👩", .endsWith, "👩", [], true),
            ("👍🏽", .equal, "👍🏽", [], true),
            ("👍🏽", .contains, "👍", [], false),
            ("가나", .contains, "가", [], true),
            ("가나", .contains, "\u{1100}", [], false),  // the leading jamo of 가
            ("x가", .endsWith, "가", c, true),
        ] as [(String, StringMatcher.Operation, String, ComparisonOptions, Bool)])
    func operations(
        string: String, operation: StringMatcher.Operation, pattern: String, options: ComparisonOptions, expected: Bool
    ) {
        #expect(matches(string, operation, pattern, options) == expected)
    }

    @Test(
        arguments: [
            ("Rex", "R?x", [], true),
            ("Rex", "r?x", [], false),
            ("Rex", "r*", c, true),
            ("Rex", "*", [], true),
            ("", "*", [], true),
            ("", "?", [], false),
            ("", "", [], true),
            ("a", "", [], false),
            ("abc", "*c", [], true),
            ("abc", "a*", [], true),
            ("abc", "*b*", [], true),
            ("abc", "a?c", [], true),
            ("abc", "a??c", [], false),
            ("abcbc", "*bc", [], true),
            ("abcbd", "*bc", [], false),
            ("mississippi", "*iss*ppi", [], true),
            ("mississippi", "m*iss*iss*", [], true),
            ("mississippi", "m*iss*iss*iss*", [], false),
            ("a*b", #"a\*b"#, [], true),
            ("axb", #"a\*b"#, [], false),
            ("a?b", #"a\?b"#, [], true),
            ("axb", #"a\?b"#, [], false),
            (#"a\b"#, #"a\\b"#, [], true),
            ("Пятёрочка", "пят?р*", c, true),
            ("Пятёрочка", "пятер*", cd, true),
            ("Пятёрочка", "пятер*", c, false),
            ("Crème Brûlée", "cr?me*", cd, true),
            ("cre\u{301}me", "cr?me", [], true),  // é written as e + accent is one character
            ("cre\u{301}me", "cr??me", [], false),
            ("👨‍👩‍👧", "?", [], true),
            ("가", "?", [], true),
            ("Straße", "*SS*", c, true),
        ] as [(String, String, ComparisonOptions, Bool)])
    func like(string: String, pattern: String, options: ComparisonOptions, expected: Bool) {
        #expect(matches(string, .like, pattern, options) == expected)
    }

    @Test func likeWithManyStarsFinishes() {
        // Backtracking only to the last star keeps this linear-ish; a naive matcher would not finish.
        let string = String(repeating: "a", count: 2_000)
        #expect(!matches(string, .like, String(repeating: "*a", count: 30) + "*b"))
        #expect(matches(string, .like, String(repeating: "*a", count: 30) + "*"))
    }

    @Test func matcherForComparisonOperators() {
        #expect(StringMatcher(operator: .contains, pattern: "x", options: [])?.operation == .contains)
        #expect(StringMatcher(operator: .equal, pattern: "x", options: [])?.operation == .equal)
        #expect(StringMatcher(operator: .like, pattern: "x", options: [])?.operation == .like)
        #expect(StringMatcher(operator: .lessThan, pattern: "x", options: []) == nil)
        #expect(StringMatcher(operator: .in, pattern: "x", options: []) == nil)
    }

    @Test func prefoldedRowsGiveTheSameAnswers() {
        let rows = ["Пятёрочка", "Crème Brûlée", "Straße", "Rex", "rEX", "", "ёлка"]
        for options in [[], c, d, cd] as [ComparisonOptions] {
            let folded = rows.map { FoldedString($0, options: options) }
            for operation in [StringMatcher.Operation.equal, .beginsWith, .endsWith, .contains, .like] {
                let matcher = StringMatcher(operation, "е", options: options)
                #expect(zip(rows, folded).allSatisfy { matcher.matches($0) == matcher.matches($1) })
            }
        }
    }

    /// On ASCII, the matchers agree with the standard library on lowercased strings.
    @Test func agreesWithStandardLibraryOnRandomASCII() {
        var rng = SeededRandomNumberGenerator(seed: 99)
        let alphabet = Array("abAB c")
        func random(_ range: ClosedRange<Int>) -> String {
            String((0..<Int.random(in: range, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
        }
        for _ in 0..<3_000 {
            let string = random(0...10)
            let pattern = random(0...3)
            let (s, p) = (string.lowercased(), pattern.lowercased())
            #expect(matches(string, .contains, pattern, c) == (p.isEmpty || s.contains(p)), "\(string) \(pattern)")
            #expect(matches(string, .beginsWith, pattern, c) == s.hasPrefix(p))
            #expect(matches(string, .endsWith, pattern, c) == s.hasSuffix(p))
            #expect(matches(string, .equal, pattern, c) == (s == p))
            #expect(matches(string, .contains, pattern) == (pattern.isEmpty || string.contains(pattern)))
        }
    }

    /// LIKE agrees with a slow, obviously correct recursive matcher.
    @Test func likeAgreesWithReferenceOnRandomInput() {
        func reference(_ s: Substring, _ p: Substring) -> Bool {
            guard let first = p.first else { return s.isEmpty }
            switch first {
            case "*": return reference(s, p.dropFirst()) || (!s.isEmpty && reference(s.dropFirst(), p))
            case "?": return !s.isEmpty && reference(s.dropFirst(), p.dropFirst())
            default: return s.first == first && reference(s.dropFirst(), p.dropFirst())
            }
        }
        var rng = SeededRandomNumberGenerator(seed: 5)
        let letters = Array("abé")
        let patternLetters = Array("ab*?é")
        for _ in 0..<3_000 {
            let s = String((0..<Int.random(in: 0...7, using: &rng)).map { _ in letters.randomElement(using: &rng)! })
            let p = String(
                (0..<Int.random(in: 0...5, using: &rng)).map { _ in patternLetters.randomElement(using: &rng)! })
            #expect(matches(s, .like, p) == reference(s[...], p[...]), "\(s) LIKE \(p)")
        }
    }

    /// On Cyrillic, `[c]` agrees with lowercasing (which is plain case mapping there).
    @Test func agreesWithLowercasingOnRandomCyrillic() {
        var rng = SeededRandomNumberGenerator(seed: 11)
        let alphabet = Array("абвЁёЯя Ж")
        func random(_ range: ClosedRange<Int>) -> String {
            String((0..<Int.random(in: range, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
        }
        for _ in 0..<2_000 {
            let string = random(0...8)
            let pattern = random(0...3)
            let (s, p) = (string.lowercased(), pattern.lowercased())
            #expect(matches(string, .contains, pattern, c) == (p.isEmpty || s.contains(p)), "\(string) \(pattern)")
            #expect(matches(string, .beginsWith, pattern, c) == s.hasPrefix(p))
            #expect(matches(string, .endsWith, pattern, c) == s.hasSuffix(p))
        }
    }
}

@Suite struct StringOrderingTests {
    private func sorted(_ strings: [String], _ order: StringSortOrder) -> [String] {
        strings.map { (StringSortKey($0, order: order), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    @Test func exactIsCodePointOrder() {
        #expect(sorted(["b", "B", "a", "A", "é", "Z", "Я", "ё"], .exact) == ["A", "B", "Z", "a", "b", "é", "Я", "ё"])
        #expect(StringSortOrder.exact.compare("Banana", "apple") < 0)
        // Canonically equivalent spellings are equal, as with `==`.
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(StringSortOrder.exact.compare(composed, decomposed) == 0)
        #expect(StringSortOrder.exact.compare(composed + " ", decomposed) > 0)
        #expect(StringSortOrder.exact.compare(decomposed, composed + " ") < 0)
    }

    @Test func caseInsensitive() {
        #expect(sorted(["b", "B", "a", "A", "c"], .caseInsensitive) == ["A", "a", "B", "b", "c"])
        #expect(sorted(["Борис", "анна", "Анна", "борис"], .caseInsensitive) == ["Анна", "анна", "Борис", "борис"])
        #expect(StringSortOrder.caseInsensitive.compare("apple", "Banana") < 0)
    }

    @Test func natural() {
        let input = ["file10", "file2", "File1", "file1", "apple", "Banana", "Élan", "elan", "eland", "file02"]
        #expect(
            sorted(input, .natural)
                == ["apple", "Banana", "elan", "Élan", "eland", "File1", "file1", "file02", "file2", "file10"])
        #expect(
            sorted(["Яна", "антон", "Борис", "ёж", "Елена"], .natural) == ["антон", "Борис", "ёж", "Елена", "Яна"])
        #expect(sorted(["v1.10", "v1.9", "v1.10.1", "v1"], .natural) == ["v1", "v1.9", "v1.10", "v1.10.1"])
        #expect(sorted(["file1", "fileA", "file-1", "file"], .natural) == ["file", "file-1", "file1", "fileA"])
        let big = "x" + String(repeating: "9", count: 30)
        let bigger = "x1" + String(repeating: "0", count: 30)
        #expect(StringSortOrder.natural.compare(big, bigger) < 0)
        #expect(StringSortOrder.natural.compare("a0", "a00") != 0)
        #expect(
            StringSortOrder.natural.compare("cote", "Côte") < 0 && StringSortOrder.natural.compare("Côte", "coter") < 0)
    }

    /// Every order is total and consistent: antisymmetric, zero only for identical strings,
    /// and sorting by keys puts every pair in order.
    @Test(arguments: StringSortOrder.allCases)
    func ordersAreTotal(order: StringSortOrder) {
        var rng = SeededRandomNumberGenerator(seed: 3)
        let alphabet = Array("aAbB01 9éeЁё\u{301}")
        let strings = (0..<150).map { _ in
            String((0..<Int.random(in: 0...6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
        }
        for a in strings.prefix(60) {
            for b in strings {
                let ab = order.compare(a, b)
                #expect(ab.signum() == -order.compare(b, a).signum())
                // Exact order ties canonically equivalent strings (as `==`); the others break
                // ties down to the bytes.
                #expect((ab == 0) == (order == .exact ? a == b : Array(a.utf8) == Array(b.utf8)), "\(a) vs \(b)")
            }
        }
        let result = sorted(strings, order)
        for i in result.indices {
            for j in result.indices where i < j {
                #expect(order.compare(result[i], result[j]) <= 0)
            }
        }
    }
}
