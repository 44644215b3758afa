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
/// boundary: `"cafe\u{301}"` (é written as e + combining accent) does not contain `"cafe"`
/// without `[d]`. Boundaries are found with a close approximation of grapheme clusters: a
/// character is a scalar followed by its combining marks, joiners (ZWJ, ZWNJ), variation
/// selectors, emoji modifiers, tag characters and Hangul vowel/trailing jamo.
///
/// The empty string is a prefix, suffix and part of every string. In `LIKE` patterns `*`
/// matches any run of characters (also none), `?` exactly one character, and `\` makes the
/// next character literal (`\*`, `\?`, `\\`).
package struct StringMatcher: Sendable {
    /// A string operation.
    package enum Operation: Sendable, Hashable {
        case equal, beginsWith, endsWith, contains, like
    }

    /// The operation.
    package let operation: Operation
    /// The options stored strings must be folded with (``FoldedString/options``).
    package let options: ComparisonOptions
    /// The folded constant.
    package let pattern: FoldedString
    private let startsWithExtender: Bool
    private let likeAtoms: [LikeAtom]

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
        startsWithExtender = !self.pattern.isASCII && Self.isExtender(at: 0, in: bytes)
        likeAtoms = operation == .like ? Self.compileLike(bytes) : []
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
    /// whether those bytes are all ASCII.
    package func matches(folded haystack: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> Bool {
        let checkBoundaries = !(isASCII && pattern.isASCII)
        do {
            return pattern.utf8.withUnsafeBufferPointer { needle in
                switch operation {
                case .equal:
                    return haystack.count == needle.count && Self.equal(haystack, 0, needle)
                case .beginsWith:
                    return needle.count <= haystack.count && Self.equal(haystack, 0, needle)
                        && (!checkBoundaries || !Self.isExtender(at: needle.count, in: haystack))
                case .endsWith:
                    let start = haystack.count - needle.count
                    return start >= 0 && Self.equal(haystack, start, needle)
                        && (!checkBoundaries || needle.isEmpty || isStartBoundary(start, in: haystack))
                case .contains:
                    return contains(needle, in: haystack, checkBoundaries: checkBoundaries)
                case .like:
                    return like(haystack)
                }
            }
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

    private func contains(
        _ needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>, checkBoundaries: Bool
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
                if j == m
                    && (!checkBoundaries
                        || (isStartBoundary(i, in: haystack) && !Self.isExtender(at: i + m, in: haystack)))
                {
                    return true
                }
            }
            i += 1
        }
        return false
    }

    /// Whether a match of the pattern may start at `index`: not inside a character.
    private func isStartBoundary(_ index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if index == 0 { return true }
        if startsWithExtender { return false }
        // After a zero-width joiner (E2 80 8D) the next scalar belongs to the same character.
        return !(index >= 3 && bytes[index - 3] == 0xE2 && bytes[index - 2] == 0x80 && bytes[index - 1] == 0x8D)
    }

    /// Whether the scalar at `index` continues the character before it.
    static func isExtender(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard index < bytes.count, bytes[index] >= 0x80 else { return false }
        return isExtender(scalar(at: index, in: bytes).0)
    }

    static func isExtender(at index: Int, in bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isExtender(at: index, in: $0) }
    }

    static func isExtender(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x200C, 0x200D, 0x1F3FB...0x1F3FF, 0xE0020...0xE007F, 0x1160...0x11FF, 0xD7B0...0xD7FF:
            return true
        default:
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark: return true
            default: return false
            }
        }
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

    /// The index after the character starting at `index`.
    static func characterEnd(from index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var i = index + scalar(at: index, in: bytes).1
        while i < bytes.count, bytes[i] >= 0x80 {
            let (s, length) = scalar(at: i, in: bytes)
            let previousIsJoiner = i >= 3 && bytes[i - 3] == 0xE2 && bytes[i - 2] == 0x80 && bytes[i - 1] == 0x8D
            guard isExtender(s) || previousIsJoiner else { break }
            i += length
        }
        return min(i, bytes.count)
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
    private func like(_ haystack: UnsafeBufferPointer<UInt8>) -> Bool {
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
                        position = Self.characterEnd(from: position, in: haystack)
                        atom += 1
                        continue
                    }
                case .literal(let bytes):
                    let end = position + bytes.count
                    if end <= n,
                        bytes.withUnsafeBufferPointer({ Self.equal(haystack, position, $0) }),
                        !Self.isExtender(at: end, in: haystack)
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
            starPosition = Self.characterEnd(from: starPosition, in: haystack)
            position = starPosition
            atom = starAtom + 1
        }
    }
}
