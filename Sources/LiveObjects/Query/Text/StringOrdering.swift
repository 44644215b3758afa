import Foundation
import LiveObjectsStore

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
    func areInIncreasingOrder(_ a: String, _ b: String) -> Bool {
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
        let direct = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in compare(x, y) }
        }
        if let direct, let result = direct { return result }
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in compare(x, y) } }
    }

    /// ``compare(_:_:)`` of a string and the UTF-8 bytes of another in NFC (a constant compared
    /// with many strings), with `isASCII` telling whether those are all ASCII.
    @inline(__always)
    package static func compare(_ a: String, nfc y: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> Int {
        if let result = a.utf8.withContiguousStorageIfAvailable({ x in
            isASCII ? compare(x, ascii: y) : compare(x, y, yIsNFC: true)
        }) {
            return result
        }
        var a = a
        return a.withUTF8 { x in compare(x, y, yIsNFC: true) }
    }

    /// ``compare(_:_:)`` of a string and the UTF-8 bytes of an ASCII string.
    @inline(__always)
    package static func compare(_ a: String, ascii y: UnsafeBufferPointer<UInt8>) -> Int {
        // Most strings differ from the constant at their first character: read it in place.
        let utf8 = a.utf8
        let start = utf8.startIndex
        if !y.isEmpty && start != utf8.endIndex {
            let first = utf8[start]
            if first != y[0] && first < 0x80 {
                let second = utf8.index(after: start)
                if second == utf8.endIndex || utf8[second] < 0x80 { return first < y[0] ? -1 : 1 }
            }
        }
        return utf8.withContiguousStorageIfAvailable { x in
            let n = Swift.min(x.count, y.count)
            var i = 0
            while i < n {
                let byte = x[i]
                if byte != y[i] {
                    if byte < 0x80 && (i + 1 == x.count || x[i + 1] < 0x80) { return byte < y[i] ? -1 : 1 }
                    return compare(x, y, yIsNFC: true)
                }
                i += 1
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        } ?? compare(a, nfc: y, isASCII: false)
    }

    /// ``compare(_:_:)`` of the UTF-8 bytes of a string and of an ASCII string.
    @inline(__always)
    private static func compare(_ x: UnsafeBufferPointer<UInt8>, ascii y: UnsafeBufferPointer<UInt8>) -> Int {
        let n = Swift.min(x.count, y.count)
        var i = 0
        while i < n && x[i] == y[i] { i += 1 }
        if i == n {
            if x.count == y.count { return 0 }
            // What follows the ASCII string's end in the other string either stays after it or
            // composes with its last character into a letter beyond ASCII: greater either way.
            return x.count < y.count ? -1 : 1
        }
        if x[i] < 0x80 && (i + 1 == x.count || x[i + 1] < 0x80) { return x[i] < y[i] ? -1 : 1 }
        return compare(x, y, yIsNFC: true)
    }

    /// ``compare(_:_:)`` on the UTF-8 bytes of two strings; `yIsNFC` when the second is known to
    /// be in NFC already.
    package static func compare(
        _ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>, yIsNFC: Bool = false
    ) -> Int {
        let n = Swift.min(x.count, y.count)
        var i = 0
        if n > 32 && memcmp(x.baseAddress!, y.baseAddress!, n) == 0 { i = n }
        while i < n && x[i] == y[i] { i += 1 }
        if i == x.count && i == y.count { return 0 }
        // An ASCII character never combines with what comes before it, and combines with what
        // follows only when that is not ASCII: a first difference at such characters decides.
        if isStable(x, i) && isStable(y, i) {
            if i == x.count { return -1 }
            if i == y.count { return 1 }
            return x[i] < y[i] ? -1 : 1
        }
        // The start of the scalars that differ (the bytes before are the same in both).
        var p = i
        while p > 0 && (p < x.count ? x[p] : y[p]) & 0xC0 == 0x80 { p -= 1 }
        if let decided = compareScalars(x, y, at: p) { return decided }
        // Otherwise normalize from the last ASCII character at or before the difference.
        var start = p
        if !(p < x.count && p < y.count && x[p] < 0x80 && y[p] < 0x80) {
            start = Swift.max(p - 1, 0)
            while start > 0 && x[start] >= 0x80 { start -= 1 }
        }
        // (A string in NFC is in NFC from any ASCII character on.)
        let a = String(decoding: UnsafeBufferPointer(rebasing: x[start...]), as: UTF8.self)._nfcCodeUnits
        if yIsNFC {
            return a.withUnsafeBufferPointer { a in compareBytes(a, UnsafeBufferPointer(rebasing: y[start...])) }
        }
        let b = String(decoding: UnsafeBufferPointer(rebasing: y[start...]), as: UTF8.self)._nfcCodeUnits
        return a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in compareBytes(a, b) } }
    }

    /// Whether the string ends at `i`, or has there an ASCII character followed by an ASCII
    /// character or the end.
    @inline(__always)
    private static func isStable(_ s: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool {
        i == s.count || (s[i] < 0x80 && (i + 1 == s.count || s[i + 1] < 0x80))
    }

    /// The order of two strings that are the same before byte `p`, where a scalar starts in
    /// both, when the scalars there decide it without normalizing: nil when they might not.
    ///
    /// A scalar that is not a mark (nor a Hangul jamo) and has combining class 0 never combines
    /// with what comes before it (the second scalar of every canonical composition is a mark or
    /// a jamo), so the normalized strings are the normalized common part followed by the
    /// normalized rest. If, in addition, the scalar is its own composition (it is not a
    /// composition exclusion such as the Kelvin sign) and the scalar after it does not combine
    /// with what comes before it either, the normalized rest starts with that scalar.
    private static func compareScalars(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>, at p: Int)
        -> Int?
    {
        if p == x.count { return startsAlone(y, p) ? -1 : nil }
        if p == y.count { return startsAlone(x, p) ? 1 : nil }
        let (a, aLength) = scalar(x, p)
        let (b, bLength) = scalar(y, p)
        guard startsAlone(a), startsAlone(b), isOwnComposition(a), isOwnComposition(b),
            p + aLength == x.count || startsAlone(x, p + aLength),
            p + bLength == y.count || startsAlone(y, p + bLength)
        else { return nil }
        return a.value < b.value ? -1 : (a.value == b.value ? 0 : 1)
    }

    @inline(__always)
    private static func startsAlone(_ s: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool {
        s[i] < 0x80 || startsAlone(scalar(s, i).0)
    }

    /// Whether a scalar is in a range of letters with combining class 0 and no mark (Latin-1
    /// and Latin Extended, Greek, Cyrillic, Armenian, kana, CJK ideographs, Hangul syllables).
    @inline(__always)
    private static func isPlainLetter(_ v: UInt32) -> Bool {
        v < 0x300 || (0x370..<0x483).contains(v) || (0x48A..<0x591).contains(v) || (0x3041..<0x3099).contains(v)
            || (0x309B..<0x3100).contains(v) || (0x4E00..<0xA000).contains(v) || (0xAC00..<0xD7A4).contains(v)
    }

    /// Whether a scalar never combines with what comes before it in normalization.
    private static func startsAlone(_ s: Unicode.Scalar) -> Bool {
        if isPlainLetter(s.value) { return true }
        if (0x1100...0x11FF).contains(s.value) { return false }
        let properties = s.properties
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return false
        default: return properties.canonicalCombiningClass.rawValue == 0
        }
    }

    /// Whether a scalar is its own canonical composition.
    private static func isOwnComposition(_ s: Unicode.Scalar) -> Bool {
        // Greek has singletons (U+0374, U+037E, U+0387): it asks.
        (isPlainLetter(s.value) && !(0x370..<0x400).contains(s.value)) || !s.properties.isFullCompositionExclusion
    }

    /// The scalar starting at byte `i` of valid UTF-8, and its length.
    @inline(__always)
    private static func scalar(_ s: UnsafeBufferPointer<UInt8>, _ i: Int) -> (Unicode.Scalar, Int) {
        let lead = s[i]
        if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
        let length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        var value = UInt32(lead) & (0xFF >> (length + 1))
        for k in 1..<length where i + k < s.count { value = value << 6 | UInt32(s[i + k] & 0x3F) }
        return (Unicode.Scalar(value) ?? "\u{FFFD}", length)
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
