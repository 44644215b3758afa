import Foundation

/// How strings are ordered when sorting.
package enum StringSortOrder: Sendable, Hashable, CaseIterable {
    /// Unicode code point order of the canonical compositions (NFC), as ``StringOrder``:
    /// `"Banana" < "apple" < "Émile" < "Яна"`. Canonically equivalent strings are equal.
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
/// Keys of different orders must not be compared with each other. For
/// ``StringSortOrder/caseInsensitive`` and ``StringSortOrder/natural`` equal keys mean equal
/// strings (the last tie-breaks are ``StringOrder`` and then the strings' bytes); for
/// ``StringSortOrder/exact`` they mean canonically equivalent strings, as `==`. A sort that must
/// keep the original order of equal strings should be stable, or break ties by row.
package struct StringSortKey: Comparable, Sendable {
    /// Compared first: the folded (or natural) form's bytes; for ``StringSortOrder/exact``, the
    /// NFC form's bytes (see ``StringOrder``).
    private let primary: [UInt8]
    /// Compared second, for ``StringSortOrder/natural`` on non-ASCII strings: the natural form
    /// with diacritics kept.
    private let secondary: [UInt8]?
    /// The string itself, for the final tie-breaks.
    private let string: String
    /// Whether the key is of ``StringSortOrder/exact``, which has no tie-break.
    private let isExact: Bool

    /// Makes the key of a string.
    package init(_ string: String, order: StringSortOrder) {
        self.string = string
        isExact = order == .exact
        switch order {
        case .exact:
            primary = StringOrder.key(string)
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

    /// ``compare(_:_:)`` of an ASCII string's ``StringSortOrder/exact`` key (which would be its
    /// bytes) with an exact key, without making the first key.
    package static func compare(exactASCII a: String, _ b: StringSortKey) -> Int {
        var a = a
        return a.withUTF8 { x in b.primary.withUnsafeBufferPointer { StringOrder.compareBytes(x, $0) } }
    }

    /// Negative, zero or positive as `a` sorts before, with or after `b`.
    package static func compare(_ a: StringSortKey, _ b: StringSortKey) -> Int {
        var result = compareBytes(a.primary, b.primary)
        if result != 0 { return result }
        if a.secondary != nil || b.secondary != nil {
            result = compareBytes(a.secondary ?? a.primary, b.secondary ?? b.primary)
            if result != 0 { return result }
        }
        if a.isExact { return 0 }
        result = StringOrder.compare(a.string, b.string)
        if result != 0 { return result }
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

/// The one order of strings in queries: comparisons (`<`, `<=`, `>`, `>=`, `BETWEEN`), sorts
/// (``StringComparison/exact``), sorted indexes, `@min` and `@max`.
///
/// Strings are ordered by the Unicode scalar values of their canonical composition (NFC),
/// compared one by one, a string coming before every longer string that starts with it: the
/// order of the NFC forms' UTF-8 bytes. Two strings are in the same place exactly when they are
/// canonically equivalent, which is when `String`'s `==` holds: `"é"` written as U+00E9 or as
/// `e` + U+0301 is one string, and the Kelvin sign U+212A is the letter `K`. The order is total,
/// so an ascending sort is the reverse of a descending one (equal strings aside).
///
/// It does not use `String`'s `<`, which on Linux (Swift 6.3) is not an order when the
/// composition of one string extends the other's: `"é "` and `"e\u{301}"` are each not less than
/// the other, and not equal (a test keeps that reproduction).
///
/// Strings that differ first at ASCII characters are compared by their bytes, without being
/// normalized; otherwise only the parts from the last ASCII character before the first
/// difference are normalized.
package enum StringOrder {
    /// Negative, zero or positive as `a` comes before, with or after `b`.
    package static func compare(_ a: String, _ b: String) -> Int {
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in compare(x, y) } }
    }

    /// ``compare(_:_:)`` on the UTF-8 bytes of two strings.
    package static func compare(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Int {
        let n = Swift.min(x.count, y.count)
        var i = n
        if n > 0, memcmp(x.baseAddress!, y.baseAddress!, n) != 0 {
            i = 0
            while x[i] == y[i] { i += 1 }
        }
        if i == x.count && i == y.count { return 0 }
        // An ASCII character never combines with what comes before it, and combines with what
        // follows only when that is not ASCII: a first difference at such characters decides.
        if isStable(x, i) && isStable(y, i) {
            if i == x.count { return -1 }
            if i == y.count { return 1 }
            return x[i] < y[i] ? -1 : 1
        }
        // Otherwise normalize from the last ASCII character at or before the difference (where
        // both strings are the same before).
        var start = i
        if !(i < x.count && i < y.count && x[i] < 0x80 && y[i] < 0x80) {
            start = Swift.max(i - 1, 0)
            while start > 0 && x[start] >= 0x80 { start -= 1 }
        }
        let a = String(decoding: UnsafeBufferPointer(rebasing: x[start...]), as: UTF8.self)._nfcCodeUnits
        let b = String(decoding: UnsafeBufferPointer(rebasing: y[start...]), as: UTF8.self)._nfcCodeUnits
        return a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in compareBytes(a, b) } }
    }

    /// Whether the string ends at `i`, or has there an ASCII character followed by an ASCII
    /// character or the end.
    @inline(__always)
    private static func isStable(_ s: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool {
        i == s.count || (s[i] < 0x80 && (i + 1 == s.count || s[i + 1] < 0x80))
    }

    /// Lexicographic order of byte strings.
    static func compareBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = Swift.min(a.count, b.count)
        let c = n == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, n)
        if c != 0 { return c < 0 ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Whether a string is all ASCII (then it is its own NFC form).
    package static func isASCII(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { bytes in
            var high: UInt8 = 0
            for byte in bytes { high |= byte }
            return high < 0x80
        }
    }

    /// The bytes whose order is the string's place: its NFC form's UTF-8 (the standard
    /// library's normalization, the one its `==` uses).
    package static func key(_ s: String) -> [UInt8] {
        isASCII(s) ? Array(s.utf8) : s._nfcCodeUnits
    }
}
