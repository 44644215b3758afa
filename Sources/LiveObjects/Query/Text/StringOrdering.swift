import Foundation

/// How strings are ordered when sorting.
package enum StringSortOrder: Sendable, Hashable, CaseIterable {
    /// Unicode code point order, as `String`'s `<` (which compares the NFC forms);
    /// canonically equivalent strings in different forms are then ordered by their bytes.
    /// `"Banana" < "apple" < "Émile" < "Яна"`.
    case exact
    /// Code point order of the case-folded forms (see ``FoldedString``), then ``exact``.
    /// `"apple" < "Banana" < "cherry"`.
    case caseInsensitive
    /// Natural order for people: case and diacritics are ignored at first, and runs of ASCII
    /// digits compare by numeric value (`"file2" < "file10"`, `"apple" < "Banana"`,
    /// `"cote" < "Côte" < "coter"`). Ties are broken by diacritics, then by ``exact``.
    ///
    /// Letters compare by code point of their folded form (Latin before Greek before
    /// Cyrillic …), not by a locale's alphabet: this is not a tailored collation.
    case natural
}

/// A precomputed key that orders a string by a ``StringSortOrder``: build one per row once,
/// then sort the keys.
///
/// Keys of different orders must not be compared with each other. Equal keys mean equal
/// strings (the last tie-break compares the strings' bytes), so the order is total; a sort
/// that must keep the original order of equal strings should be stable, or break ties by
/// row.
package struct StringSortKey: Comparable, Sendable {
    /// Compared first: the folded (or natural) form's bytes. Empty for ``StringSortOrder/exact``.
    private let primary: [UInt8]
    /// Compared second, for ``StringSortOrder/natural`` on non-ASCII strings: the natural form
    /// with diacritics kept.
    private let secondary: [UInt8]?
    /// The string itself, for the final tie-breaks.
    private let string: String

    /// Makes the key of a string.
    package init(_ string: String, order: StringSortOrder) {
        self.string = string
        switch order {
        case .exact:
            primary = []
            secondary = nil
        case .caseInsensitive:
            primary = FoldedString(string, options: .caseInsensitive).utf8
            secondary = nil
        case .natural:
            let folded = FoldedString(string, options: [.caseInsensitive, .diacriticInsensitive])
            primary = Self.naturalForm(folded.utf8)
            let isASCII = string.utf8.allSatisfy { $0 < 0x80 }
            secondary = isASCII ? nil : Self.naturalForm(FoldedString(string, options: .caseInsensitive).utf8)
        }
    }

    package static func < (a: StringSortKey, b: StringSortKey) -> Bool {
        compare(a, b) < 0
    }

    package static func == (a: StringSortKey, b: StringSortKey) -> Bool {
        compare(a, b) == 0
    }

    /// Negative, zero or positive as `a` sorts before, with or after `b`.
    package static func compare(_ a: StringSortKey, _ b: StringSortKey) -> Int {
        var result = compareBytes(a.primary, b.primary)
        if result != 0 { return result }
        if a.secondary != nil || b.secondary != nil {
            result = compareBytes(a.secondary ?? a.primary, b.secondary ?? b.primary)
            if result != 0 { return result }
        }
        if a.string != b.string { return a.string < b.string ? -1 : 1 }
        return compareBytes(Array(a.string.utf8), Array(b.string.utf8))
    }

    /// Lexicographic order of byte strings (which is code point order for UTF-8).
    static func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let n = min(a.count, b.count)
        let result =
            n == 0 ? 0 : a.withUnsafeBytes { a in b.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, n) } }
        if result != 0 { return result < 0 ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Rewrites each run of ASCII digits so that byte order is numeric order: the byte `0`,
    /// the number of significant digits in four bytes, then those digits. Text never holds a
    /// digit byte there, so a number still compares with text as its first digit would.
    static func naturalForm(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            guard b >= 0x30 && b <= 0x39 else {
                out.append(b)
                i += 1
                continue
            }
            var start = i
            while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
            while start < i - 1, bytes[start] == 0x30 { start += 1 }
            let length = UInt32(i - start)
            out.append(0x30)
            out.append(contentsOf: [
                UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
            ])
            out.append(contentsOf: bytes[start..<i])
        }
        return out
    }
}

extension StringSortOrder {
    /// Compares two strings: negative, zero or positive as `a` sorts before, with or after `b`.
    /// For sorting many strings, build a ``StringSortKey`` per string instead.
    package func compare(_ a: String, _ b: String) -> Int {
        StringSortKey.compare(StringSortKey(a, order: self), StringSortKey(b, order: self))
    }

    /// Whether `a` sorts before `b`.
    package func areInIncreasingOrder(_ a: String, _ b: String) -> Bool {
        compare(a, b) < 0
    }
}
