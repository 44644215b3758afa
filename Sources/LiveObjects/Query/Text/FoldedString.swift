import Foundation
import LiveObjectsStore
import Synchronization

/// A string in the form that string comparisons with `[c]` and `[d]` work on: folded once,
/// then matched many times as UTF-8 bytes.
///
/// The folded form is the string's canonical decomposition (NFD) after:
/// - with ``ComparisonOptions/caseInsensitive`` (`[c]`): full Unicode case folding, in every
///   script (`"Пятёрочка"` → `"пятёрочка"`, `"Straße"` and `"STRASSE"` → `"strasse"`,
///   `"ΣΊΣΥΦΟΣ"` and `"σίσυφος"` alike). The Turkic dotted/dotless i rules are not applied.
/// - with ``ComparisonOptions/diacriticInsensitive`` (`[d]`): nonspacing marks removed
///   (`"Crème Brûlée"` → `"Creme Brulee"`, `"ё"` → `"е"`, `"й"` → `"и"`), and the letters with
///   a stroke that have no decomposition mapped to their base letter (`ø ł đ ħ ŧ`, both cases).
///
/// Without options the form is only the NFD, so byte equality is canonical equivalence, as
/// with `String`'s `==`.
///
/// Pure ASCII strings take a fast path (lowercasing bytes for `[c]`, nothing else). Other
/// strings are folded scalar by scalar through a shared cache of per-scalar results, so each
/// distinct non-ASCII character is analysed once per process.
///
/// A query folds its constant once; the engine can keep a `FoldedString` per stored string
/// (and per option set) and reuse it for every query with those options.
package struct FoldedString: Hashable, Sendable {
    /// The UTF-8 bytes of the folded form.
    package let utf8: [UInt8]
    /// The options the string was folded with.
    package let options: ComparisonOptions
    /// Whether the folded form is pure ASCII without a CR LF pair, so that every byte is a
    /// character of its own (then no grapheme boundary checks are needed).
    package let isASCII: Bool

    /// Folds a string with the given options.
    package init(_ string: String, options: ComparisonOptions) {
        self.options = options
        (utf8, isASCII) = StringFolding.fold(string, options: options)
    }

    /// The folded form as a string.
    package var string: String { String(decoding: utf8, as: UTF8.self) }
}

/// The folding machinery behind ``FoldedString``.
enum StringFolding {
    /// The fold of one non-ASCII scalar: its UTF-8 bytes (canonically ordered), and whether
    /// it starts or ends with a combining mark (a scalar of nonzero combining class): only a
    /// fold starting with a mark right after one ending with a mark may need reordering.
    struct ScalarFold {
        var utf8: [UInt8]
        var startsWithMark: Bool
        var endsWithMark: Bool
    }

    /// The shared per-scalar cache, keyed by scalar value and options. It stops growing at
    /// ``cacheCapacity`` entries; scalars beyond that are folded without caching.
    static let cache = Locked<[UInt32: ScalarFold]>([:])
    static let cacheCapacity = 65_536

    static func fold(_ string: String, options: ComparisonOptions) -> ([UInt8], Bool) {
        var string = string
        let caseInsensitive = options.contains(.caseInsensitive)
        let ascii: [UInt8]? = string.withUTF8 { bytes in
            var high: UInt8 = 0
            for byte in bytes { high |= byte }
            guard high < 0x80 else { return nil }
            guard caseInsensitive else { return Array(bytes) }
            // Not for an empty string: an empty array made this way writes its count into the
            // stdlib's shared empty-array storage, which the thread sanitizer reports as a race
            // with every other read of an empty array.
            guard !bytes.isEmpty else { return [] }
            return [UInt8](unsafeUninitializedCapacity: bytes.count) { out, count in
                for i in 0..<bytes.count {
                    let b = bytes[i]
                    out[i] = b &- 0x41 < 26 ? b | 0x20 : b
                }
                count = bytes.count
            }
        }
        // CR LF is one character.
        if let ascii { return (ascii, !ascii.contains(0x0D) || !hasCRLF(ascii)) }
        let folded = foldNonASCII(string, options: options)
        return (folded, folded.allSatisfy { $0 < 0x80 } && !hasCRLF(folded))
    }

    static func hasCRLF(_ bytes: [UInt8]) -> Bool {
        var i = 1
        while i < bytes.count {
            if bytes[i] == 0x0A && bytes[i - 1] == 0x0D { return true }
            i += 1
        }
        return false
    }

    private static func foldNonASCII(_ string: String, options: ComparisonOptions) -> [UInt8] {
        let caseInsensitive = options.contains(.caseInsensitive)
        let keyBits = UInt32(options.rawValue) << 21
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count + 8)
        var needsReordering = false
        var afterMark = false
        cache.withLock { cache in
            for scalar in string.unicodeScalars {
                let value = scalar.value
                if value < 0x80 {
                    let b = UInt8(truncatingIfNeeded: value)
                    out.append(caseInsensitive && b &- 0x41 < 26 ? b | 0x20 : b)
                    afterMark = false
                    continue
                }
                let key = value | keyBits
                let fold: ScalarFold
                if let cached = cache[key] {
                    fold = cached
                } else {
                    fold = foldScalar(scalar, options: options)
                    if cache.count < cacheCapacity { cache[key] = fold }
                }
                out.append(contentsOf: fold.utf8)
                needsReordering = needsReordering || (afterMark && fold.startsWithMark)
                if !fold.utf8.isEmpty { afterMark = fold.endsWithMark }
            }
        }
        if needsReordering { reorderMarks(&out) }
        return out
    }

    /// Letters with a stroke or bar that have no canonical decomposition, and their base
    /// letter, for `[d]`.
    static let strokeLetters: [Unicode.Scalar: Unicode.Scalar] = [
        "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ħ": "h", "Ħ": "H", "ŧ": "t",
        "Ŧ": "T",
    ]

    /// Folds one scalar: NFD, then case folding and NFD again, then diacritics removed.
    ///
    /// Case folding maps a scalar that changes under case folding or lowercasing to the
    /// lowercase of the uppercase of its lowercase. That gives the equivalence classes of full
    /// Unicode case folding (`ẞ`, `ß` and `SS`; `Σ`, `σ` and `ς`; both Cherokee cases), while
    /// leaving alone what neither folding nor lowercasing changes (so `ı` stays distinct from
    /// `i`, as in full case folding).
    static func foldScalar(_ scalar: Unicode.Scalar, options: ComparisonOptions) -> ScalarFold {
        var text = String(scalar).decomposedStringWithCanonicalMapping
        if options.contains(.caseInsensitive) {
            var folded = String.UnicodeScalarView()
            for s in text.unicodeScalars {
                // Uppercase Cherokee does not change under case folding (lowercase Cherokee folds
                // to it), but does under lowercasing, which this scheme maps everything to.
                if s.properties.changesWhenCaseFolded || s.properties.changesWhenLowercased {
                    for lower in s.properties.lowercaseMapping.unicodeScalars {
                        for upper in lower.properties.uppercaseMapping.unicodeScalars {
                            folded.append(contentsOf: upper.properties.lowercaseMapping.unicodeScalars)
                        }
                    }
                } else {
                    folded.append(s)
                }
            }
            text = String(folded).decomposedStringWithCanonicalMapping
        }
        if options.contains(.diacriticInsensitive) {
            var stripped = String.UnicodeScalarView()
            for s in text.unicodeScalars where s.properties.generalCategory != .nonspacingMark {
                stripped.append(strokeLetters[s] ?? s)
            }
            text = String(stripped)
        }
        let isMark = { (s: Unicode.Scalar?) in (s?.properties.canonicalCombiningClass.rawValue ?? 0) != 0 }
        return ScalarFold(
            utf8: Array(text.utf8), startsWithMark: isMark(text.unicodeScalars.first),
            endsWithMark: isMark(text.unicodeScalars.last))
    }

    /// Puts each run of combining marks in canonical order (stable sort by combining class),
    /// completing the NFD of a string folded scalar by scalar.
    static func reorderMarks(_ bytes: inout [UInt8]) {
        var scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
        var changed = false
        var i = 0
        while i < scalars.count {
            guard scalars[i].properties.canonicalCombiningClass.rawValue != 0 else {
                i += 1
                continue
            }
            var end = i
            while end < scalars.count, scalars[end].properties.canonicalCombiningClass.rawValue != 0 {
                end += 1
            }
            if end - i > 1 {
                // Insertion sort: runs are short, and it is stable.
                for j in (i + 1)..<end {
                    let s = scalars[j]
                    let ccc = s.properties.canonicalCombiningClass.rawValue
                    var k = j
                    while k > i, scalars[k - 1].properties.canonicalCombiningClass.rawValue > ccc {
                        scalars[k] = scalars[k - 1]
                        k -= 1
                    }
                    if k != j {
                        scalars[k] = s
                        changed = true
                    }
                }
            }
            i = end
        }
        if changed {
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars)
            bytes = Array(String(view).utf8)
        }
    }
}
