import LiveObjectsStore

/// A string operation of a predicate, with its constant folded once: `==`, `BEGINSWITH`,
/// `ENDSWITH`, `CONTAINS` or `LIKE`, under `[c]`, `[d]` or `[cd]` (or none).
///
/// ```swift
/// let matcher = StringMatcher(.contains, "пятёр", options: .caseInsensitive)
/// matcher.matches("Пятёрочка")                  // true
/// let row = FoldedString("Пятёрочка", options: matcher.options)  // cacheable per row
/// matcher.matches(row)                          // true, no folding
/// ```
///
/// Matching works on the folded UTF-8 bytes. A match must start and end on a character
/// boundary of the (folded) string: `"cafe\u{301}"` (é written as e + combining accent) does
/// not contain `"cafe"` without `[d]`, and a flag (two regional indicators) is one character.
/// The boundaries are Swift's `Character` boundaries (extended grapheme clusters), found only
/// for strings that are not plain ASCII and only when a match needs them.
///
/// The empty string is a prefix, suffix and part of every string. In `LIKE` patterns `*`
/// matches any run of characters (also none), `?` exactly one character, and `\` makes the
/// next character literal (`\*`, `\?`, `\\`).
package struct StringMatcher: Sendable {
    /// A string operation.
    package enum Operation: Sendable, Hashable {
        case equal, beginsWith, endsWith, contains, like
        /// `TEXT`: the words of the string match ``StringMatcher/fullText``.
        case fullText
    }

    /// The operation.
    package let operation: Operation
    /// The options stored strings must be folded with (``FoldedString/options``).
    package let options: ComparisonOptions
    /// The folded constant.
    package let pattern: FoldedString
    private let likeAtoms: [LikeAtom]
    /// The query of a ``Operation/fullText`` matcher.
    package let fullText: FullTextQuery?

    private enum LikeAtom: Sendable {
        case literal([UInt8])
        case oneCharacter
        case anyRun
    }

    /// Folds the constant for an operation.
    package init(_ operation: Operation, _ pattern: String, options: ComparisonOptions) {
        self.operation = operation
        self.options = options
        self.pattern = FoldedString(pattern, options: options)
        let bytes = self.pattern.utf8
        likeAtoms = operation == .like ? Self.compileLike(bytes) : []
        fullText = nil
    }

    /// The matcher of a full-text query: stored strings are folded with `[cd]`
    /// (``FullTextTokenizer/options``) and split into words.
    package init(fullText query: FullTextQuery) {
        operation = .fullText
        options = FullTextTokenizer.options
        pattern = FoldedString(query.text, options: options)
        likeAtoms = []
        fullText = query
    }

    /// The matcher for a comparison operator, or nil if the operator is not a string
    /// operation (`==`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` are).
    package init?(operator op: ComparisonOperator, pattern: String, options: ComparisonOptions) {
        switch op {
        case .equal: self.init(.equal, pattern, options: options)
        case .beginsWith: self.init(.beginsWith, pattern, options: options)
        case .endsWith: self.init(.endsWith, pattern, options: options)
        case .contains: self.init(.contains, pattern, options: options)
        case .like: self.init(.like, pattern, options: options)
        case .text:
            guard let query = try? FullTextQuery(pattern) else { return nil }
            self.init(fullText: query)
        default: return nil
        }
    }

    /// Whether a string matches, folding it first.
    package func matches(_ string: String) -> Bool {
        matches(FoldedString(string, options: options))
    }

    /// Whether a string folded with ``options`` matches.
    package func matches(_ folded: FoldedString) -> Bool {
        assert(folded.options == options, "the string was folded with other options")
        return folded.utf8.withUnsafeBufferPointer { matches(folded: $0, isASCII: folded.isASCII) }
    }

    /// Whether the UTF-8 bytes of a string folded with ``options`` match; `isASCII` tells
    /// whether those bytes are all ASCII without a CR LF pair (``FoldedString/isASCII``).
    package func matches(folded haystack: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> Bool {
        withPattern { matches(folded: haystack, isASCII: isASCII, pattern: $0) }
    }

    /// Calls `body` with the folded pattern's bytes, for ``matches(folded:isASCII:pattern:)``:
    /// a scan takes them once, not per row.
    package func withPattern<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        pattern.utf8.withUnsafeBufferPointer(body)
    }

    /// ``matches(folded:isASCII:)`` with the pattern's bytes given (``withPattern(_:)``).
    @inline(__always)
    package func matches(
        folded haystack: UnsafeBufferPointer<UInt8>, isASCII: Bool, pattern needle: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        if isASCII {
            // Every offset of plain ASCII without CR LF starts a character: no boundary checks
            // (and no boundary state to make and drop per string a scan tests).
            switch operation {
            case .equal:
                return haystack.count == needle.count && Self.equal(haystack, 0, needle)
            case .beginsWith:
                return needle.count <= haystack.count && Self.equal(haystack, 0, needle)
            case .endsWith:
                let start = haystack.count - needle.count
                return start >= 0 && Self.equal(haystack, start, needle)
            case .contains:
                return Self.contains(needle, in: haystack)
            case .like, .fullText:
                break
            }
        }
        var boundaries = CharacterBoundaries(haystack, isASCII: isASCII)
        switch operation {
        case .equal:
            return haystack.count == needle.count && Self.equal(haystack, 0, needle)
        case .beginsWith:
            return needle.count <= haystack.count && Self.equal(haystack, 0, needle)
                && boundaries.isBoundary(needle.count)
        case .endsWith:
            let start = haystack.count - needle.count
            return start >= 0 && Self.equal(haystack, start, needle) && boundaries.isBoundary(start)
        case .contains:
            return contains(needle, in: haystack, &boundaries)
        case .like:
            return like(haystack, &boundaries)
        case .fullText:
            return fullText?.matches(words: FullTextTokenizer.words(folded: haystack, isASCII: isASCII)) ?? false
        }
    }

    // MARK: Byte-level helpers

    /// Whether `needle` occurs in `haystack` at `offset` (which must leave room for it).
    @inline(__always)
    private static func equal(
        _ haystack: UnsafeBufferPointer<UInt8>, _ offset: Int, _ needle: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        var i = 0
        while i < needle.count {
            if haystack[offset + i] != needle[i] { return false }
            i += 1
        }
        return true
    }

    /// Whether `needle` occurs anywhere in `haystack`, byte for byte.
    @inline(__always)
    private static func contains(_ needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>) -> Bool
    {
        let m = needle.count
        guard m > 0 else { return true }
        guard m <= haystack.count else { return false }
        let first = needle[0]
        var i = 0
        while i <= haystack.count - m {
            if haystack[i] == first && equal(haystack, i, needle) { return true }
            i &+= 1
        }
        return false
    }

    private func contains(
        _ needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>,
        _ boundaries: inout CharacterBoundaries
    ) -> Bool {
        let m = needle.count
        guard m > 0 else { return true }
        guard m <= haystack.count else { return false }
        let first = needle[0]
        let last = haystack.count - m
        var i = 0
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < m && haystack[i + j] == needle[j] { j += 1 }
                if j == m && boundaries.isBoundary(i) && boundaries.isBoundary(i + m) { return true }
            }
            i += 1
        }
        return false
    }

    /// Decodes the scalar starting at `index` (valid UTF-8), with its length.
    @inline(__always)
    static func scalar(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (Unicode.Scalar, Int) {
        let lead = bytes[index]
        if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
        let length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        var value = UInt32(lead) & (0xFF >> (length + 1))
        for i in 1..<length where index + i < bytes.count {
            value = value << 6 | UInt32(bytes[index + i] & 0x3F)
        }
        return (Unicode.Scalar(value) ?? "\u{FFFD}", length)
    }

    // MARK: LIKE

    private static func compileLike(_ bytes: [UInt8]) -> [LikeAtom] {
        var atoms: [LikeAtom] = []
        var literal: [UInt8] = []
        func flush() {
            if !literal.isEmpty { atoms.append(.literal(literal)) }
            literal = []
        }
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "*"):
                flush()
                // Consecutive stars are one.
                if case .anyRun = atoms.last {} else { atoms.append(.anyRun) }
            case UInt8(ascii: "?"):
                flush()
                atoms.append(.oneCharacter)
            case UInt8(ascii: "\\") where i + 1 < bytes.count:
                i += 1
                literal.append(bytes[i])
            default:
                literal.append(b)
            }
            i += 1
        }
        flush()
        return atoms
    }

    /// Glob matching with backtracking to the last `*` only: O(pattern × string) at worst.
    private func like(_ haystack: UnsafeBufferPointer<UInt8>, _ boundaries: inout CharacterBoundaries) -> Bool {
        let n = haystack.count
        var atom = 0
        var position = 0
        var starAtom = -1
        var starPosition = 0
        while true {
            if atom < likeAtoms.count {
                switch likeAtoms[atom] {
                case .anyRun:
                    starAtom = atom
                    starPosition = position
                    atom += 1
                    continue
                case .oneCharacter:
                    if position < n {
                        position = boundaries.next(after: position)
                        atom += 1
                        continue
                    }
                case .literal(let bytes):
                    let end = position + bytes.count
                    if end <= n,
                        bytes.withUnsafeBufferPointer({ Self.equal(haystack, position, $0) }),
                        boundaries.isBoundary(end)
                    {
                        position = end
                        atom += 1
                        continue
                    }
                }
            } else if position == n {
                return true
            }
            // Mismatch: let the last `*` take one more character.
            guard starAtom >= 0, starPosition < n else { return false }
            starPosition = boundaries.next(after: starPosition)
            position = starPosition
            atom = starAtom + 1
        }
    }
}

/// The character boundaries of a string's UTF-8 bytes, as Swift's `Character`s (extended
/// grapheme clusters) have them. Between two ASCII characters there is always one (but inside
/// CR LF); elsewhere the string's clusters are found once, on the first question.
struct CharacterBoundaries {
    let bytes: UnsafeBufferPointer<UInt8>
    /// Every offset is a boundary (plain ASCII without CR LF).
    let everywhere: Bool
    private var map: [Bool]?

    init(_ bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) {
        self.bytes = bytes
        everywhere = isASCII
    }

    /// Whether a character starts (or the string ends) at `i`.
    @inline(__always)
    mutating func isBoundary(_ i: Int) -> Bool {
        if everywhere || i == 0 || i >= bytes.count { return true }
        let byte = bytes[i]
        let before = bytes[i - 1]
        if byte < 0x80 && before < 0x80 { return !(before == 0x0D && byte == 0x0A) }
        if byte & 0xC0 == 0x80 { return false }
        // The common cases without asking for the clusters: never before a combining mark,
        // variation selector, joiner or skin tone; always before a letter of the common scripts
        // after anything but a character that may hold on to it.
        let next = StringMatcher.scalar(at: i, in: bytes).0.value
        var start = i - 1
        while start > 0 && bytes[start] & 0xC0 == 0x80 { start -= 1 }
        let previous = StringMatcher.scalar(at: start, in: bytes).0.value
        if Self.isExtend(next) && !Self.mayBeControl(previous) { return false }
        if Self.isSimple(next) && next != 0xA9 && next != 0xAE && Self.letsGo(previous) { return true }
        if map == nil { map = Self.clusters(bytes) }
        return map![i]
    }

    /// Whether a scalar is in a range of letters and symbols (Latin, Greek, Cyrillic, Armenian,
    /// kana, CJK ideographs, Hangul syllables) that holds no mark, joiner, prepended character,
    /// regional indicator or jamo (© and ®, which are pictographs, are left to the caller).
    @inline(__always)
    private static func isSimple(_ v: UInt32) -> Bool {
        v < 0x300 || (0x370..<0x483).contains(v) || (0x48A..<0x591).contains(v) || (0x3041..<0x3099).contains(v)
            || (0x309B..<0x3100).contains(v) || (0x4E00..<0xA000).contains(v) || (0xAC00..<0xD7A4).contains(v)
    }

    /// Whether a scalar is in a range of grapheme extenders (combining diacritical marks,
    /// Cyrillic combining marks, kana voicing marks, variation selectors, ZWNJ and ZWJ, skin
    /// tones, tags), before which there is never a boundary.
    @inline(__always)
    private static func isExtend(_ v: UInt32) -> Bool {
        (0x300..<0x370).contains(v) || (0x483..<0x48A).contains(v) || v == 0x3099 || v == 0x309A
            || (0xFE00..<0xFE10).contains(v) || v == 0x200C || v == 0x200D || (0x1F3FB..<0x1F400).contains(v)
            || (0xE0020..<0xE0080).contains(v) || (0xE0100..<0xE01F0).contains(v)
    }

    /// Whether a scalar may be a control character, after which there is always a boundary
    /// (even before an extender).
    @inline(__always)
    private static func mayBeControl(_ v: UInt32) -> Bool {
        v < 0x20 || (0x7F..<0xA0).contains(v) || v == 0xAD || (0x600..<0x700).contains(v) || v == 0x180E
            || (0x2000..<0x2070).contains(v) || v == 0xFEFF || (0xFFF0..<0x10000).contains(v)
            || (0x13430..<0x13460).contains(v) || (0x1BCA0..<0x1BCA4).contains(v) || (0x1D173..<0x1D17B).contains(v)
            || v >= 0xE0000
    }

    /// Whether a scalar is certain not to hold on to a simple letter after it: not a prepended
    /// character (Arabic and Brahmic number signs and the like), regional indicator, Hangul
    /// jamo, ZWJ or CR, nor in a range that might hold one.
    @inline(__always)
    private static func letsGo(_ v: UInt32) -> Bool {
        (v < 0x600 && v != 0x0D) || (0x900..<0xD4E).contains(v) || (0xD4F..<0x1100).contains(v)
            || (0x1200..<0x200D).contains(v) || (0x200E..<0xA960).contains(v) || (0xA980..<0xD7B0).contains(v)
            || (0xE000..<0x11000).contains(v) || (0x1F300..<0x1FB00).contains(v)
    }

    /// The end of the character starting at `i` (which must be before the end).
    mutating func next(after i: Int) -> Int {
        var j = i + 1
        while j < bytes.count && !isBoundary(j) { j += 1 }
        return j
    }

    private static func clusters(_ bytes: UnsafeBufferPointer<UInt8>) -> [Bool] {
        var map = [Bool](repeating: false, count: bytes.count + 1)
        var offset = 0
        for character in String(decoding: bytes, as: UTF8.self) {
            map[offset] = true
            offset += character.utf8.count
        }
        map[bytes.count] = true
        return map
    }
}
