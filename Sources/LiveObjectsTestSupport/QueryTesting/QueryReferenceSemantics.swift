import Foundation
import LiveObjects

// The reference semantics of the randomized query test: comparisons and sort order, written
// from the documentation, independently of the engine.

/// The UTF-8 bytes of a string's NFC form (whose order is the order of its scalars), by the
/// standard library's normalization, the one `==` uses. (Foundation's
/// `precomposedStringWithCanonicalMapping` on Linux leaves a Hangul syllable and a following
/// trailing jamo apart, which `==` composes.)
package func nfc(_ s: String) -> [UInt8] { s._nfcCodeUnits }

/// The meaning of comparisons, written independently of the engine from its documentation:
/// `nil` equals only `nil` and orders with nothing; numbers compare by value across `Int` and
/// `Double`; strings compare by canonical equivalence, and with `[c]`/`[d]` after Foundation's
/// folding (full case folding; removal of diacritics); string operations match whole
/// characters only (Swift's `Character`s of the folded strings); ordering with options
/// compares the folded strings' decomposed (NFD) scalars.
package enum QueryReference {
    /// The string options of a comparison: `[c]` (case) and `[d]` (diacritics).
    package struct Options: OptionSet, Hashable, Sendable {
        package var rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let c = Options(rawValue: 1)
        package static let d = Options(rawValue: 2)

        var text: String {
            isEmpty ? "" : "[" + (contains(.c) ? "c" : "") + (contains(.d) ? "d" : "") + "]"
        }

        var stringOptions: StringOptions {
            var o: StringOptions = []
            if contains(.c) { o.insert(.caseInsensitive) }
            if contains(.d) { o.insert(.diacriticInsensitive) }
            return o
        }
    }

    static func fold(_ s: String, _ options: Options) -> String {
        var o: String.CompareOptions = []
        if options.contains(.c) { o.insert(.caseInsensitive) }
        if options.contains(.d) { o.insert(.diacriticInsensitive) }
        return o.isEmpty ? s : s.folding(options: o, locale: nil)
    }

    /// The documented order of strings without options: the scalars of the NFC forms (not
    /// `String`'s `<`, which is not an order across normalization forms on Linux).
    static func nfcOrder(_ a: String, _ b: String) -> Int {
        let x = nfc(a)
        let y = nfc(b)
        if x == y { return 0 }
        return x.lexicographicallyPrecedes(y) ? -1 : 1
    }

    static func scalarOrder(_ a: String, _ b: String) -> Int {
        let x = a.decomposedStringWithCanonicalMapping.unicodeScalars.map(\.value)
        let y = b.decomposedStringWithCanonicalMapping.unicodeScalars.map(\.value)
        if x == y { return 0 }
        return x.lexicographicallyPrecedes(y) ? -1 : 1
    }

    /// The names `@type` gives the kinds of an `AnyValue` (docs/QUERIES.md).
    package static let kindNames = [
        "null", "bool", "int", "float", "double", "decimal", "string", "data", "date", "objectId", "uuid",
    ]

    /// The kind name of a value, as `payload.@type` reads it.
    static func kindName(_ v: PropertyValue) -> String {
        switch v {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .double: "double"
        case .decimal: "decimal"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .objectID: "objectId"
        case .uuid: "uuid"
        case .object, .list: "?"
        }
    }

    /// The place of a value's kind when an `AnyValue` sorts: null, bools, numbers, strings,
    /// data, dates, object ids, UUIDs (docs/QUERIES.md).
    static func kindRank(_ v: PropertyValue) -> Int {
        switch v {
        case .null: 0
        case .bool: 1
        case .int, .float, .double, .decimal: 2
        case .string: 3
        case .data: 4
        case .date: 5
        case .objectID: 6
        case .uuid: 7
        case .object, .list: 8
        }
    }

    /// A decimal and another number, by value (a double by its shortest text).
    static func decimalOrder(_ a: PropertyValue, _ b: PropertyValue) -> Int? {
        func exact(_ v: PropertyValue) -> Decimal? {
            switch v {
            case .decimal(let d): d.isNaN ? nil : d
            case .int(let i): Decimal(i)
            case .double(let d): d.isFinite ? Decimal(string: "\(d)", locale: Locale(identifier: "en_US_POSIX")) : nil
            default: nil
            }
        }
        guard let x = exact(a), let y = exact(b) else { return nil }
        return x == y ? 0 : (x < y ? -1 : 1)
    }

    static func number(_ v: PropertyValue) -> Double? {
        switch v {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// Negative, zero or positive, or nil when the values do not compare.
    static func order(_ a: PropertyValue, _ b: PropertyValue, _ options: Options = []) -> Int? {
        switch (a, b) {
        case (.null, .null): return 0
        case (.string(let x), .string(let y)):
            if options.isEmpty { return nfcOrder(x, y) }
            return scalarOrder(fold(x, options), fold(y, options))
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.date(let x), .date(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.decimal(let x), .decimal(let y)):
            // NaN sorts before every number and equals only NaN (QueryLanguage.md).
            if x.isNaN || y.isNaN { return x.isNaN == y.isNaN ? 0 : (x.isNaN ? -1 : 1) }
            return x == y ? 0 : (x < y ? -1 : 1)
        case (.objectID(let x), .objectID(let y)):
            // By bytes: the order of the lowercase hex text.
            return x.hexString == y.hexString ? 0 : (x.hexString < y.hexString ? -1 : 1)
        case (.decimal, .int), (.decimal, .double), (.int, .decimal), (.double, .decimal):
            return decimalOrder(a, b)
        default:
            guard let x = number(a), let y = number(b) else { return nil }
            return x == y ? 0 : (x < y ? -1 : 1)
        }
    }

    static func equal(_ a: PropertyValue, _ b: PropertyValue, _ options: Options = []) -> Bool {
        if case .string(let x) = a, case .string(let y) = b { return fold(x, options) == fold(y, options) }
        return order(a, b) == 0
    }

    static func glob(_ s: [Character], _ p: [Character]) -> Bool {
        // Classic backtracking over the last star.
        var i = 0
        var j = 0
        var star = -1
        var mark = 0
        while i < s.count {
            if j < p.count, p[j] == "?" || (p[j] != "*" && p[j] == s[i]) {
                i += 1
                j += 1
            } else if j < p.count, p[j] == "*" {
                star = j
                mark = i
                j += 1
            } else if star >= 0 {
                j = star + 1
                mark += 1
                i = mark
            } else {
                return false
            }
        }
        while j < p.count, p[j] == "*" { j += 1 }
        return j == p.count
    }

    static func stringOperation(_ op: QueryOperator, _ s: String, _ pattern: String, _ options: Options) -> Bool {
        let h = Array(fold(s, options))
        let n = Array(fold(pattern, options))
        switch op {
        case .beginsWith: return h.starts(with: n)
        case .endsWith: return h.reversed().starts(with: n.reversed())
        case .contains:
            if n.isEmpty { return true }
            guard n.count <= h.count else { return false }
            for start in 0...(h.count - n.count) where Array(h[start..<start + n.count]) == n { return true }
            return false
        case .like: return glob(h, n)
        default: return false
        }
    }

    /// One comparison of two values.
    package static func test(_ a: PropertyValue, _ op: QueryOperator, _ b: PropertyValue, _ options: Options) -> Bool {
        switch op {
        case .equal: return equal(a, b, options)
        case .notEqual: return !equal(a, b, options)
        case .less: return order(a, b, options).map { $0 < 0 } ?? false
        case .lessOrEqual: return order(a, b, options).map { $0 <= 0 } ?? false
        case .greater: return order(a, b, options).map { $0 > 0 } ?? false
        case .greaterOrEqual: return order(a, b, options).map { $0 >= 0 } ?? false
        case .beginsWith, .endsWith, .contains, .like:
            guard case .string(let s) = a, case .string(let p) = b else { return false }
            return stringOperation(op, s, p, options)
        case .in:
            guard case .list(let items) = b else { return false }
            return items.contains { equal(a, $0, options) }
        case .between:
            guard case .list(let bounds) = b, bounds.count == 2,
                let low = order(a, bounds[0], options), let high = order(a, bounds[1], options)
            else { return false }
            return low >= 0 && high <= 0
        }
    }
}

/// The documented sort order, written independently: nil first ascending (last descending),
/// strings by `StringComparison`, ties keeping the previous (storage) order.
enum ReferenceSort {
    enum Token: Equatable {
        case scalar(UInt32)
        case number([UInt8])
    }

    /// Scalars of the folded NFD form, with runs of ASCII digits as numbers (no leading zeros).
    static func tokens(_ s: String) -> [Token] {
        var out: [Token] = []
        var digits: [UInt8] = []
        func flush() {
            guard !digits.isEmpty else { return }
            while digits.count > 1 && digits[0] == 0x30 { digits.removeFirst() }
            out.append(.number(digits))
            digits = []
        }
        for scalar in s.decomposedStringWithCanonicalMapping.unicodeScalars {
            if scalar.value >= 0x30 && scalar.value <= 0x39 {
                digits.append(UInt8(scalar.value))
            } else {
                flush()
                out.append(.scalar(scalar.value))
            }
        }
        flush()
        return out
    }

    static func compareTokens(_ a: [Token], _ b: [Token]) -> Int {
        for (x, y) in zip(a, b) {
            switch (x, y) {
            case (.scalar(let p), .scalar(let q)) where p != q: return p < q ? -1 : 1
            case (.number(let p), .number(let q)) where p != q:
                if p.count != q.count { return p.count < q.count ? -1 : 1 }
                return p.lexicographicallyPrecedes(q) ? -1 : 1
            // A number sorts as the digit zero would against other characters.
            case (.number, .scalar(let q)): return 0x30 < q ? -1 : 1
            case (.scalar(let p), .number): return p < 0x30 ? -1 : 1
            default: continue
            }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    static func tieBreak(_ a: String, _ b: String) -> Int {
        let c = QueryReference.nfcOrder(a, b)
        if c != 0 { return c }
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
    }

    static func compareStrings(_ a: String, _ b: String, _ comparison: StringComparison) -> Int {
        switch comparison {
        case .exact:
            return QueryReference.nfcOrder(a, b)
        case .caseInsensitive:
            let c = QueryReference.scalarOrder(QueryReference.fold(a, .c), QueryReference.fold(b, .c))
            return c != 0 ? c : tieBreak(a, b)
        case .natural:
            var c = compareTokens(tokens(QueryReference.fold(a, [.c, .d])), tokens(QueryReference.fold(b, [.c, .d])))
            if c != 0 { return c }
            if !a.utf8.allSatisfy({ $0 < 0x80 }) || !b.utf8.allSatisfy({ $0 < 0x80 }) {
                c = compareTokens(tokens(QueryReference.fold(a, .c)), tokens(QueryReference.fold(b, .c)))
                if c != 0 { return c }
            }
            return tieBreak(a, b)
        }
    }

    static func compare(_ a: PropertyValue, _ b: PropertyValue, _ comparison: StringComparison) -> Int {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case _ where QueryReference.kindRank(a) != QueryReference.kindRank(b):
            return QueryReference.kindRank(a) < QueryReference.kindRank(b) ? -1 : 1
        case (.string(let x), .string(let y)): return compareStrings(x, y, comparison)
        default: return QueryReference.order(a, b) ?? 0
        }
    }

    static func sort(_ items: [RefItem], _ specs: [SortSpec], _ world: RefWorld) -> [RefItem] {
        let indexed = Array(items.enumerated())
        return indexed.sorted { x, y in
            for spec in specs {
                let c = compare(spec.field.value(x.element, world), spec.field.value(y.element, world), spec.comparison)
                if c != 0 { return spec.ascending ? c < 0 : c > 0 }
            }
            return x.offset < y.offset
        }.map(\.element)
    }
}
