import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

// MARK: - Models of the randomized query tests

/// An object with one property of each kind the query engine handles.
final class QPItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var int = 0
    @Persisted var optInt: Int?
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var optString: String?
    @Persisted var flag = false
    @Persisted var date = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted(indexed: true) var code = ""
    @Persisted var owner: QPOwner?
    @Persisted var tags: List<QPTag>
    @Persisted(originProperty: "favorite") var fans: LinkingObjects<QPOwner>
    /// Not persisted.
    var scratch = 0
}

/// The owner of items (a to-one link target, with a link back).
final class QPOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var score: Int?
    @Persisted var favorite: QPItem?
    @Persisted(originProperty: "owner") var items: LinkingObjects<QPItem>
}

/// The elements of items' lists.
final class QPTag: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var label = ""
    @Persisted var weight = 0
    @Persisted var rating: Double?
}

let queryPropertyModelTypes: [Object.Type] = [QPItem.self, QPOwner.self, QPTag.self]

// MARK: - Random numbers

// MARK: - Reference model

/// The plain-Swift copy of the data that the reference evaluation reads.
struct RefItem: Sendable {
    var id: Int
    var int: Int
    var optInt: Int?
    var double: Double
    var string: String
    var optString: String?
    var flag: Bool
    var date: Date
    var code: String
    var owner: Int?
    var tags: [Int]
}

struct RefOwner: Sendable {
    var id: Int
    var name: String
    var score: Int?
    var favorite: Int?
}

struct RefTag: Sendable {
    var id: Int
    var label: String
    var weight: Int
    var rating: Double?
}

struct RefWorld: Sendable {
    var items: [Int: RefItem] = [:]
    var owners: [Int: RefOwner] = [:]
    var tags: [Int: RefTag] = [:]
    var nextID = 1

    mutating func newID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    /// The owners whose favorite is the item (`fans`).
    func fans(of item: RefItem) -> [RefOwner] { owners.values.filter { $0.favorite == item.id } }

    /// The items of the item's owner (`owner.items`); none without an owner.
    func ownerItems(of item: RefItem) -> [RefItem] {
        guard let owner = item.owner else { return [] }
        return items.values.filter { $0.owner == owner }
    }
}

// MARK: - Text

/// Strings for the data and the constants. They mix ASCII of both cases, accented Latin in
/// composed and decomposed forms, Cyrillic (ё, й), Greek (final sigma, tonos), ß (which folds
/// to two letters), emoji with modifiers and joiners, and digit runs for natural sorting.
///
/// They include regional indicators, alone and as flags (two side by side are one `Character`,
/// a flag, which the engine's matching keeps whole), and the same letters in several
/// normalization forms (composed, decomposed, the Kelvin sign), which compare, sort and match
/// as one string.
///
/// Deliberately absent, because the engine's documented semantics differ from the plain-Swift
/// reference there: letters with a stroke such as ø and ł (the engine's `[d]` maps them to their base letter,
/// Foundation's folding keeps them), Turkic dotted/dotless i, and Greek letters with
/// ypogegrammeni (Foundation's `[cd]` drops the iota that the engine's case folding produces).
/// The characters `*`, `?` and `\` are absent because they are LIKE wildcards.
enum QueryText {
    static let fragments: [String] = [
        "a", "A", "b", "B", "e", "E", "o", "x", "Z", "é", "E\u{301}", "e\u{301}", "è", "ê", "ë", "É", "ü", "Ü",
        "ç", "ñ", "Å", "å", "ö", "ß", "ss", "SS", "ё", "Ё", "е", "Е", "й", "и", "ж", "Ж", "кот", "КОТ", "σ",
        "ς", "Σ", "ά", "Ά", "α", "ω", "Ω", "😀", "👍", "👍🏽", "👨‍👩‍👧", " ", "-", "1", "2", "9", "10", "007",
        "file", "Crème", "brûlée", "Пятёрочка", "\u{1f1eb}", "\u{1f1f7}", "\u{1f1eb}\u{1f1f7}", "\u{1f1e9}\u{1f1ea}",
        "\u{212A}", "K", "\u{415}\u{308}", "\u{e9} ", "e\u{301} ", "\u{1e0b}\u{323}", "d\u{307}\u{323}",
    ]

    static func string(_ rng: inout SeededRandomNumberGenerator, maxFragments: Int = 4) -> String {
        let count = rng.int(0...maxFragments)
        var s = ""
        for _ in 0..<count { s += rng.element(of: fragments) }
        return s
    }

    /// A piece of `s` (whole characters), with its case or accents sometimes changed, to make
    /// matches likely.
    static func piece(of s: String, _ rng: inout SeededRandomNumberGenerator) -> String {
        let characters = Array(s)
        guard !characters.isEmpty else { return "" }
        let start = rng.int(0...characters.count - 1)
        let end = rng.int(start...characters.count)
        var piece = String(characters[start..<end])
        if rng.chance(0.3) { piece = piece.uppercased() }
        if rng.chance(0.2) { piece = piece.lowercased() }
        if rng.chance(0.2) { piece = piece.folding(options: .diacriticInsensitive, locale: nil) }
        if rng.chance(0.2) { piece = piece.decomposedStringWithCanonicalMapping }
        return piece
    }

    /// A LIKE pattern made from a piece of `s`.
    static func likePattern(from s: String, _ rng: inout SeededRandomNumberGenerator) -> String {
        var out = ""
        for character in Array(piece(of: s, &rng)) {
            switch rng.int(0...9) {
            case 0: out += "?"
            case 1: out += "*"
            case 2: out += String(character) + "*"
            default: out.append(character)
            }
        }
        if rng.chance(0.5) { out = "*" + out }
        if rng.chance(0.5) { out += "*" }
        return out
    }
}

// MARK: - Reference semantics

/// The meaning of comparisons, written independently of the engine from its documentation:
/// `nil` equals only `nil` and orders with nothing; numbers compare by value across `Int` and
/// `Double`; strings compare by canonical equivalence, and with `[c]`/`[d]` after Foundation's
/// folding (full case folding; removal of diacritics); string operations match whole
/// characters only (Swift's `Character`s of the folded strings); ordering with options
/// compares the folded strings' decomposed (NFD) scalars.
enum Reference {
    struct Options: OptionSet, Hashable, Sendable {
        var rawValue: UInt8
        static let c = Options(rawValue: 1)
        static let d = Options(rawValue: 2)

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

    static func stringOperation(_ op: Op, _ s: String, _ pattern: String, _ options: Options) -> Bool {
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
    static func test(_ a: PropertyValue, _ op: Op, _ b: PropertyValue, _ options: Options) -> Bool {
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

// MARK: - Random predicates

enum Kind: Sendable { case int, double, string, bool, date }

enum Op: String, Sendable, CaseIterable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", contains = "CONTAINS", like = "LIKE"
    case `in` = "IN", between = "BETWEEN"

    var isStringOperation: Bool { [.beginsWith, .endsWith, .contains, .like].contains(self) }
    var isOrdering: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }
}

/// Single-valued properties of an item, through links where the path says so.
enum ItemField: String, Sendable, CaseIterable {
    case id, int, optInt, double, string, optString, flag, date, code
    case ownerName = "owner.name", ownerScore = "owner.score", ownerID = "owner.id"
    case favoriteInt = "owner.favorite.int", favoriteString = "owner.favorite.string"

    var kind: Kind {
        switch self {
        case .id, .int, .optInt, .ownerScore, .ownerID, .favoriteInt: .int
        case .double: .double
        case .string, .optString, .code, .ownerName, .favoriteString: .string
        case .flag: .bool
        case .date: .date
        }
    }

    func value(_ item: RefItem, _ world: RefWorld) -> PropertyValue {
        let owner = item.owner.flatMap { world.owners[$0] }
        let favorite = owner?.favorite.flatMap { world.items[$0] }
        switch self {
        case .id: return .int(Int64(item.id))
        case .int: return .int(Int64(item.int))
        case .optInt: return item.optInt.map { .int(Int64($0)) } ?? .null
        case .double: return .double(item.double)
        case .string: return .string(item.string)
        case .optString: return item.optString.map { .string($0) } ?? .null
        case .flag: return .bool(item.flag)
        case .date: return .date(item.date)
        case .code: return .string(item.code)
        case .ownerName: return owner.map { .string($0.name) } ?? .null
        case .ownerScore: return owner?.score.map { .int(Int64($0)) } ?? .null
        case .ownerID: return owner.map { .int(Int64($0.id)) } ?? .null
        case .favoriteInt: return favorite.map { .int(Int64($0.int)) } ?? .null
        case .favoriteString: return favorite.map { .string($0.string) } ?? .null
        }
    }
}

/// Lists an item leads to.
enum ListPath: String, Sendable, CaseIterable {
    case tags, fans
    case ownerItems = "owner.items"
    /// Long paths through lists and inverses: every way counts once for `@count`, `@sum`,
    /// `@avg` and `SUBQUERY` (the reference follows them one by one), sets of rows for the rest.
    case ownerItemsLong = "owner.items.owner.items.owner.items"
    case fansFavoriteTags = "fans.favorite.fans.favorite.owner.items.tags"

    var fields: [ElementField] {
        switch self {
        case .tags, .fansFavoriteTags: [.tagID, .weight, .label, .rating]
        case .fans: [.ownerName, .score]
        case .ownerItems, .ownerItemsLong: [.itemInt, .itemString, .itemOptInt]
        }
    }

    /// Whether the path goes through several lists (only string predicates are built for those).
    var isLong: Bool { self == .ownerItemsLong || self == .fansFavoriteTags }

    /// The elements, as (world, element) closures' input.
    func elements(_ item: RefItem, _ world: RefWorld) -> [Element] {
        switch self {
        case .tags: item.tags.compactMap { world.tags[$0] }.map { .tag($0) }
        case .fans: world.fans(of: item).map { .owner($0) }
        case .ownerItems: world.ownerItems(of: item).map { .item($0) }
        case .ownerItemsLong:
            (0..<2).reduce(world.ownerItems(of: item)) { items, _ in items.flatMap { world.ownerItems(of: $0) } }
                .map { .item($0) }
        case .fansFavoriteTags:
            world.fans(of: item).compactMap { $0.favorite.flatMap { world.items[$0] } }
                .flatMap { world.fans(of: $0) }.compactMap { $0.favorite.flatMap { world.items[$0] } }
                .flatMap { world.ownerItems(of: $0) }.flatMap { $0.tags.compactMap { world.tags[$0] } }.map { .tag($0) }
        }
    }

    enum Element {
        case tag(RefTag), owner(RefOwner), item(RefItem)
    }
}

/// Properties of list elements.
enum ElementField: String, Sendable {
    case tagID = "id", weight, label, rating
    case ownerName = "name", score
    case itemInt = "int", itemString = "string", itemOptInt = "optInt"

    var kind: Kind {
        switch self {
        case .tagID, .weight, .score, .itemInt, .itemOptInt: .int
        case .rating: .double
        case .label, .ownerName, .itemString: .string
        }
    }

    func value(_ element: ListPath.Element) -> PropertyValue {
        switch (self, element) {
        case (.tagID, .tag(let t)): .int(Int64(t.id))
        case (.weight, .tag(let t)): .int(Int64(t.weight))
        case (.label, .tag(let t)): .string(t.label)
        case (.rating, .tag(let t)): t.rating.map { .double($0) } ?? .null
        case (.ownerName, .owner(let o)): .string(o.name)
        case (.score, .owner(let o)): o.score.map { .int(Int64($0)) } ?? .null
        case (.itemInt, .item(let i)): .int(Int64(i.int))
        case (.itemString, .item(let i)): .string(i.string)
        case (.itemOptInt, .item(let i)): i.optInt.map { .int(Int64($0)) } ?? .null
        default: .null
        }
    }
}

enum RandomQuantifier: String, Sendable { case direct = "", any = "ANY", all = "ALL", none = "NONE" }

enum AggregateOp: String, Sendable { case min, max, sum, avg }

/// One side of a comparison.
indirect enum Operand: Sendable {
    case constant(PropertyValue)
    /// A property of the tested item.
    case field(ItemField)
    /// A property of the SUBQUERY element `$v`.
    case element(ElementField)
    /// A property of every element of a list (for ANY, ALL, NONE).
    case many(ListPath, ElementField)
    case count(ListPath)
    case aggregate(AggregateOp, ListPath, ElementField)
    /// `SUBQUERY(list, $v, predicate).@count`.
    case subquery(ListPath, QueryPredicate)
}

indirect enum QueryPredicate: Sendable {
    case constant(Bool)
    case not(QueryPredicate)
    case and([QueryPredicate])
    case or([QueryPredicate])
    case compare(RandomQuantifier, Operand, Op, Reference.Options, Operand)
}

/// Builds random predicates over the current data (constants are often taken from it).
struct PredicateGenerator {
    var rng: SeededRandomNumberGenerator
    let world: RefWorld

    mutating func predicate(depth: Int = 0, element list: ListPath? = nil) -> QueryPredicate {
        let roll = rng.int(0...9)
        if depth < 3 && roll < 3 {
            let count = rng.int(2...3)
            var parts: [QueryPredicate] = []
            for _ in 0..<count { parts.append(predicate(depth: depth + 1, element: list)) }
            return roll == 0 ? .or(parts) : (roll == 1 ? .and(parts) : .or(parts))
        }
        if depth < 3 && roll == 3 { return .not(predicate(depth: depth + 1, element: list)) }
        if roll == 4 && rng.chance(0.1) { return .constant(rng.chance(0.5)) }
        return comparison(depth: depth, element: list)
    }

    mutating func comparison(depth: Int, element list: ListPath?) -> QueryPredicate {
        if let list, rng.chance(0.6) {
            // A property of the subquery element.
            let field = rng.element(of: list.fields)
            return simple(.element(field), kind: field.kind, quantifier: .direct, sample: elementSample(field, list))
        }
        switch rng.int(0...9) {
        case 0...4:
            let field = rng.element(of: ItemField.allCases)
            if rng.chance(0.15), let other = partner(of: field) {
                // Two properties of the same object.
                var ops: [Op] = [.equal, .notEqual]
                if field.kind != .bool { ops += [.less, .greaterOrEqual] }
                if field.kind == .string { ops += [.beginsWith, .contains] }
                let op = rng.element(of: ops)
                let options = field.kind == .string && !op.isOrdering ? randomOptions() : []
                return .compare(.direct, .field(field), op, options, .field(other))
            }
            return simple(.field(field), kind: field.kind, quantifier: .direct, sample: itemSample(field))
        case 5...6:
            let path = rng.element(of: ListPath.allCases)
            let field = rng.element(of: path.fields)
            let quantifier = rng.element(of: [RandomQuantifier.any, .all, .none, .direct])
            return simple(
                .many(path, field), kind: field.kind, quantifier: quantifier, sample: elementSample(field, path))
        case 7:
            let path = rng.element(of: ListPath.allCases)
            return numeric(.count(path), sample: .int(Int64(rng.int(0...3))))
        case 8:
            let path = rng.element(of: ListPath.allCases)
            let field = rng.element(of: path.fields.filter { $0.kind != .string } + [path.fields[0]])
            let op = rng.element(of: [AggregateOp.min, .max, .sum, .avg])
            if field.kind == .string && (op == .sum || op == .avg) {
                return numeric(.count(path), sample: .int(Int64(rng.int(0...3))))
            }
            let sample = elementSample(field, path)
            if field.kind == .string {
                return simple(.aggregate(op, path, field), kind: .string, quantifier: .direct, sample: sample)
            }
            return numeric(.aggregate(op, path, field), sample: sample)
        default:
            guard depth < 2 else {
                return simple(.field(.int), kind: .int, quantifier: .direct, sample: itemSample(.int))
            }
            let path = rng.element(of: [ListPath.tags, .fans, .fansFavoriteTags])
            let inner = predicate(depth: depth + 1, element: path)
            return numeric(.subquery(path, inner), sample: .int(Int64(rng.int(0...2))))
        }
    }

    func partner(of field: ItemField) -> ItemField? {
        switch field {
        case .int: .optInt
        case .optInt: .ownerScore
        case .double: .int
        case .string: .optString
        case .optString: .ownerName
        case .code: .string
        case .flag: nil
        case .ownerScore: .int
        default: nil
        }
    }

    mutating func randomOptions() -> Reference.Options {
        rng.element(of: [[], [], .c, .d, [.c, .d]])
    }

    mutating func numeric(_ lhs: Operand, sample: PropertyValue) -> QueryPredicate {
        let op = rng.element(of: [Op.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
        var value = sample
        if rng.chance(0.3) { value = .int(Int64(rng.int(-1...12))) }
        if rng.chance(0.1) { value = .double(Double(rng.int(-4...40)) / 4) }
        if rng.chance(0.05) { value = .null }
        return .compare(.direct, lhs, op, [], .constant(value))
    }

    /// A comparison of an operand with a constant (sometimes a list for IN / BETWEEN).
    mutating func simple(_ lhs: Operand, kind: Kind, quantifier: RandomQuantifier, sample: PropertyValue)
        -> QueryPredicate
    {
        var ops: [Op]
        switch kind {
        case .bool: ops = [.equal, .notEqual]
        case .string:
            ops = [.equal, .notEqual, .beginsWith, .endsWith, .contains, .like, .in, .less, .greaterOrEqual]
        default: ops = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .in, .between]
        }
        let op = rng.element(of: ops)
        var options: Reference.Options = []
        if kind == .string && op != .less && op != .greaterOrEqual { options = randomOptions() }
        if kind == .string && op.isOrdering && rng.chance(0.3) { options = .c }
        switch op {
        case .in:
            var items: [PropertyValue] = []
            for _ in 0..<rng.int(0...3) { items.append(constant(kind, near: sample)) }
            if rng.chance(0.2) { items.append(.null) }
            return .compare(quantifier, lhs, .in, options, .constant(.list(items)))
        case .between:
            var low = constant(kind, near: sample)
            var high = constant(kind, near: sample)
            if rng.chance(0.8), let c = Reference.order(low, high), c > 0 { swap(&low, &high) }
            return .compare(quantifier, lhs, .between, [], .constant(.list([low, high])))
        case .like:
            let base = sample.stringValue ?? QueryText.string(&rng)
            return .compare(
                quantifier, lhs, .like, options, .constant(.string(QueryText.likePattern(from: base, &rng))))
        case .beginsWith, .endsWith, .contains:
            let base = sample.stringValue ?? QueryText.string(&rng)
            return .compare(quantifier, lhs, op, options, .constant(.string(QueryText.piece(of: base, &rng))))
        default:
            var value = constant(kind, near: sample)
            if (op == .equal || op == .notEqual) && rng.chance(0.15) { value = .null }
            return .compare(quantifier, lhs, op, options, .constant(value))
        }
    }

    /// A constant of a kind, often the sample or close to it.
    mutating func constant(_ kind: Kind, near sample: PropertyValue) -> PropertyValue {
        if !sample.isNull && rng.chance(0.5) {
            if kind == .string, case .string(let s) = sample, rng.chance(0.5) {
                return .string(QueryText.piece(of: s, &rng))
            }
            return sample
        }
        switch kind {
        case .int: return .int(Int64(rng.int(-3...15)))
        case .double: return .double(Double(rng.int(-12...40)) / 4)
        case .string: return .string(QueryText.string(&rng, maxFragments: 2))
        case .bool: return .bool(rng.chance(0.5))
        case .date: return .date(QueryWorld.date(rng.int(0...6)))
        }
    }

    mutating func itemSample(_ field: ItemField) -> PropertyValue {
        guard !world.items.isEmpty else { return .null }
        let item = world.items[rng.element(of: world.items.keys.sorted())]!
        return field.value(item, world)
    }

    mutating func elementSample(_ field: ElementField, _ list: ListPath) -> PropertyValue {
        let elements: [ListPath.Element]
        switch list {
        case .tags: elements = world.tags.keys.sorted().map { .tag(world.tags[$0]!) }
        case .fans: elements = world.owners.keys.sorted().map { .owner(world.owners[$0]!) }
        case .ownerItems, .ownerItemsLong: elements = world.items.keys.sorted().map { .item(world.items[$0]!) }
        case .fansFavoriteTags: elements = world.tags.keys.sorted().map { .tag(world.tags[$0]!) }
        }
        guard !elements.isEmpty else { return .null }
        return field.value(rng.element(of: elements))
    }
}

// MARK: - Reference evaluation

extension QueryPredicate {
    /// Whether an item matches, evaluated on the reference model.
    func matches(_ item: RefItem, _ world: RefWorld, element: ListPath.Element? = nil) -> Bool {
        switch self {
        case .constant(let value): return value
        case .not(let p): return !p.matches(item, world, element: element)
        case .and(let ps): return ps.allSatisfy { $0.matches(item, world, element: element) }
        case .or(let ps): return ps.contains { $0.matches(item, world, element: element) }
        case .compare(let quantifier, let lhs, let op, let options, let rhs):
            let left = lhs.values(item, world, element)
            let right = rhs.values(item, world, element)
            let test = { (value: PropertyValue) in right.contains { Reference.test(value, op, $0, options) } }
            switch quantifier {
            case .all: return left.allSatisfy(test)
            case .none: return !left.contains(where: test)
            case .any, .direct: return left.contains(where: test)
            }
        }
    }
}

extension Operand {
    func values(_ item: RefItem, _ world: RefWorld, _ element: ListPath.Element?) -> [PropertyValue] {
        switch self {
        case .constant(let value): return [value]
        case .field(let field): return [field.value(item, world)]
        case .element(let field): return [element.map { field.value($0) } ?? .null]
        case .many(let list, let field): return list.elements(item, world).map { field.value($0) }
        case .count(let list): return [.int(Int64(list.elements(item, world).count))]
        case .aggregate(let op, let list, let field):
            let values = list.elements(item, world).map { field.value($0) }.filter { !$0.isNull }
            switch op {
            case .min, .max:
                var best: PropertyValue?
                for value in values {
                    if let current = best, let c = Reference.order(value, current), op == .min ? c >= 0 : c <= 0 {
                        continue
                    }
                    best = value
                }
                return [best ?? .null]
            case .sum:
                if values.allSatisfy({ $0.intValue != nil }) {
                    return [.int(values.reduce(0) { $0 + $1.intValue! })]
                }
                return [.double(values.reduce(0.0) { $0 + Reference.number($1)! })]
            case .avg:
                if values.isEmpty { return [.null] }
                return [.double(values.reduce(0.0) { $0 + Reference.number($1)! } / Double(values.count))]
            }
        case .subquery(let list, let predicate):
            let count = list.elements(item, world).filter { predicate.matches(item, world, element: $0) }.count
            return [.int(Int64(count))]
        }
    }
}

// MARK: - Rendering as text

struct RenderedQuery {
    var text = ""
    var arguments: [PropertyValue] = []
}

extension QueryPredicate {
    func render(_ out: inout RenderedQuery, variable: String? = nil) {
        switch self {
        case .constant(let value): out.text += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let p):
            out.text += "NOT ("
            p.render(&out, variable: variable)
            out.text += ")"
        case .and(let ps), .or(let ps):
            let joiner: String
            if case .and = self { joiner = " AND " } else { joiner = " || " }
            out.text += "("
            for (i, p) in ps.enumerated() {
                if i > 0 { out.text += joiner }
                p.render(&out, variable: variable)
            }
            out.text += ")"
        case .compare(let quantifier, let lhs, let op, let options, let rhs):
            if quantifier != .direct { out.text += quantifier.rawValue + " " }
            lhs.render(&out, variable: variable)
            out.text += " \(op.rawValue)\(options.text) "
            rhs.render(&out, variable: variable)
        }
    }

    var text: RenderedQuery {
        var out = RenderedQuery()
        render(&out)
        return out
    }
}

extension Operand {
    func render(_ out: inout RenderedQuery, variable: String?) {
        switch self {
        case .constant(let value): Self.literal(value, &out)
        case .field(let field): out.text += field.rawValue
        case .element(let field): out.text += "$\(variable ?? "v").\(field.rawValue)"
        case .many(let list, let field): out.text += "\(list.rawValue).\(field.rawValue)"
        case .count(let list): out.text += "\(list.rawValue).@count"
        case .aggregate(let op, let list, let field): out.text += "\(list.rawValue).@\(op.rawValue).\(field.rawValue)"
        case .subquery(let list, let predicate):
            out.text += "SUBQUERY(\(list.rawValue), $v, "
            predicate.render(&out, variable: "v")
            out.text += ").@count"
        }
    }

    static func literal(_ value: PropertyValue, _ out: inout RenderedQuery) {
        switch value {
        case .null: out.text += "NULL"
        case .bool(let b): out.text += b ? "TRUE" : "FALSE"
        case .int(let i): out.text += String(i)
        case .double(let d): out.text += String(d)
        case .string(let s):
            out.text += "\""
            for character in s.unicodeScalars {
                if character == "\"" || character == "\\" { out.text += "\\" }
                out.text.unicodeScalars.append(character)
            }
            out.text += "\""
        case .list(let items):
            out.text += "{"
            for (i, item) in items.enumerated() {
                if i > 0 { out.text += ", " }
                literal(item, &out)
            }
            out.text += "}"
        default:
            // Dates (and anything without a literal) as arguments.
            out.arguments.append(value)
            out.text += "$\(out.arguments.count - 1)"
        }
    }
}

// MARK: - Rendering as a typed query

/// A typed query operand, with its static type hidden so that random trees can be built.
protocol TypedOperandProtocol {
    func compare(_ op: Op, constant: PropertyValue) -> Query<Bool>?
    func compare(_ op: Op, to other: any TypedOperandProtocol) -> Query<Bool>?
    func compareAsRight<L>(_ op: Op, left: Query<L>) -> Query<Bool>?
    func string(_ op: Op, _ pattern: String, _ options: StringOptions) -> Query<Bool>?
    func isIn(_ items: [PropertyValue]) -> Query<Bool>?
    func between(_ low: PropertyValue, _ high: PropertyValue) -> Query<Bool>?
}

struct TypedOperand<V>: TypedOperandProtocol {
    let query: Query<V>

    func compare(_ op: Op, constant: PropertyValue) -> Query<Bool>? {
        func apply<C: _QueryValue>(_ c: C) -> Query<Bool>? {
            switch op {
            case .equal: query == c
            case .notEqual: query != c
            case .less: query < c
            case .lessOrEqual: query <= c
            case .greater: query > c
            case .greaterOrEqual: query >= c
            default: nil
            }
        }
        return apply(typedConstant(constant))
    }

    func compare(_ op: Op, to other: any TypedOperandProtocol) -> Query<Bool>? {
        other.compareAsRight(op, left: query)
    }

    func compareAsRight<L>(_ op: Op, left: Query<L>) -> Query<Bool>? {
        switch op {
        case .equal: left == query
        case .notEqual: left != query
        case .less: left < query
        case .lessOrEqual: left <= query
        case .greater: left > query
        case .greaterOrEqual: left >= query
        default: nil
        }
    }

    func string(_ op: Op, _ pattern: String, _ options: StringOptions) -> Query<Bool>? { nil }

    func isIn(_ items: [PropertyValue]) -> Query<Bool>? {
        guard let first = items.first(where: { !$0.isNull }) ?? items.first else { return query.in([Int]()) }
        switch first {
        case .int, .null: return query.in(items.map { $0.intValue.map(Int.init) })
        case .double: return query.in(items.map { $0.doubleValue })
        case .string: return query.in(items.map(\.stringValue))
        case .bool: return query.in(items.map(\.boolValue))
        case .date:
            return query.in(
                items.map { value -> Date? in if case .date(let d) = value { return d } else { return nil } })
        default: return nil
        }
    }

    func between(_ low: PropertyValue, _ high: PropertyValue) -> Query<Bool>? {
        switch (low, high) {
        case (.int(let a), .int(let b)) where a <= b: query.contains(Int(a)...Int(b))
        case (.double(let a), .double(let b)) where a <= b: query.contains(a...b)
        case (.date(let a), .date(let b)) where a <= b: query.contains(a...b)
        default: nil
        }
    }
}

/// A typed string operand: the string functions too.
struct TypedStringOperand<V: _QueryString>: TypedOperandProtocol {
    let base: TypedOperand<V>
    init(_ query: Query<V>) { base = TypedOperand(query: query) }

    func compare(_ op: Op, constant: PropertyValue) -> Query<Bool>? { base.compare(op, constant: constant) }
    func compare(_ op: Op, to other: any TypedOperandProtocol) -> Query<Bool>? { base.compare(op, to: other) }
    func compareAsRight<L>(_ op: Op, left: Query<L>) -> Query<Bool>? { base.compareAsRight(op, left: left) }
    func isIn(_ items: [PropertyValue]) -> Query<Bool>? { base.isIn(items) }
    func between(_ low: PropertyValue, _ high: PropertyValue) -> Query<Bool>? { nil }

    func string(_ op: Op, _ pattern: String, _ options: StringOptions) -> Query<Bool>? {
        let q = base.query
        switch op {
        case .equal: return q.equals(pattern, options: options)
        case .notEqual: return !q.equals(pattern, options: options)
        case .beginsWith: return q.starts(with: pattern, options: options)
        case .endsWith: return q.ends(with: pattern, options: options)
        case .contains: return q.contains(pattern, options: options)
        case .like: return q.like(pattern, options: options)
        default: return nil
        }
    }
}

func typedConstant(_ value: PropertyValue) -> any _QueryValue {
    switch value {
    case .int(let i): Int(i)
    case .double(let d): d
    case .string(let s): s
    case .bool(let b): b
    case .date(let d): d
    default: Int?.none
    }
}

/// The element of a typed subquery.
enum TypedElement {
    case tag(Query<QPTag>)
    case owner(Query<QPOwner>)
}

/// Builds typed queries from random predicates, where the shape allows (not ALL, not
/// TRUEPREDICATE, not options on orderings or IN, not string functions against properties).
struct TypedBuilder {
    let root: Query<QPItem>

    func build(_ p: QueryPredicate, element: TypedElement? = nil) -> Query<Bool>? {
        switch p {
        case .constant: return nil
        case .not(let inner): return build(inner, element: element).map { !$0 }
        case .and(let ps), .or(let ps):
            var result: Query<Bool>?
            for part in ps {
                guard let q = build(part, element: element) else { return nil }
                if let current = result {
                    if case .and = p { result = current && q } else { result = current || q }
                } else {
                    result = q
                }
            }
            return result
        case .compare(let quantifier, let lhs, let op, let options, let rhs):
            guard quantifier != .all, let left = operand(lhs, element) else { return nil }
            var result: Query<Bool>?
            switch rhs {
            case .constant(let value):
                if op.isStringOperation || ((op == .equal || op == .notEqual) && !options.isEmpty) {
                    guard case .string(let s) = value else { return nil }
                    // `!equals(…)` is NOT ANY, not ANY !=.
                    if op == .notEqual, case .many = lhs { return nil }
                    result = left.string(op, s, options.stringOptions)
                } else if op == .in {
                    guard options.isEmpty, case .list(let items) = value else { return nil }
                    result = left.isIn(items)
                } else if op == .between {
                    guard case .list(let bounds) = value, bounds.count == 2 else { return nil }
                    result = left.between(bounds[0], bounds[1])
                } else {
                    guard options.isEmpty else { return nil }
                    result = left.compare(op, constant: value)
                }
            default:
                guard options.isEmpty, !op.isStringOperation, let right = operand(rhs, element) else { return nil }
                result = left.compare(op, to: right)
            }
            if quantifier == .none { return result.map { !$0 } }
            return result
        }
    }

    func operand(_ operand: Operand, _ element: TypedElement?) -> (any TypedOperandProtocol)? {
        let q = root
        switch operand {
        case .constant: return nil
        case .field(let field):
            switch field {
            case .id: return TypedOperand(query: q.id)
            case .int: return TypedOperand(query: q.int)
            case .optInt: return TypedOperand(query: q.optInt)
            case .double: return TypedOperand(query: q.double)
            case .string: return TypedStringOperand(q.string)
            case .optString: return TypedStringOperand(q.optString)
            case .flag: return TypedOperand(query: q.flag)
            case .date: return TypedOperand(query: q.date)
            case .code: return TypedStringOperand(q.code)
            case .ownerName: return TypedStringOperand(q.owner.name)
            case .ownerScore: return TypedOperand(query: q.owner.score)
            case .ownerID: return TypedOperand(query: q.owner.id)
            case .favoriteInt: return TypedOperand(query: q.owner.favorite.int)
            case .favoriteString: return TypedStringOperand(q.owner.favorite.string)
            }
        case .element(let field):
            switch (element, field) {
            case (.tag(let t)?, .tagID): return TypedOperand(query: t.id)
            case (.tag(let t)?, .weight): return TypedOperand(query: t.weight)
            case (.tag(let t)?, .label): return TypedStringOperand(t.label)
            case (.tag(let t)?, .rating): return TypedOperand(query: t.rating)
            case (.owner(let o)?, .ownerName): return TypedStringOperand(o.name)
            case (.owner(let o)?, .score): return TypedOperand(query: o.score)
            default: return nil
            }
        case .many(let list, let field):
            switch (list, field) {
            case (.tags, .tagID): return TypedOperand(query: q.tags.id)
            case (.tags, .weight): return TypedOperand(query: q.tags.weight)
            case (.tags, .label): return TypedStringOperand(q.tags.label)
            case (.tags, .rating): return TypedOperand(query: q.tags.rating)
            case (.fans, .ownerName): return TypedStringOperand(q.fans.name)
            case (.fans, .score): return TypedOperand(query: q.fans.score)
            case (.ownerItems, .itemInt): return TypedOperand(query: q.owner.items.int)
            case (.ownerItems, .itemString): return TypedStringOperand(q.owner.items.string)
            case (.ownerItems, .itemOptInt): return TypedOperand(query: q.owner.items.optInt)
            default: return nil
            }
        case .count(let list):
            switch list {
            case .tags: return TypedOperand(query: q.tags.count)
            case .fans: return TypedOperand(query: q.fans.count)
            case .ownerItems: return TypedOperand(query: q.owner.items.count)
            case .ownerItemsLong, .fansFavoriteTags: return nil
            }
        case .aggregate(let op, let list, let field):
            switch (list, field) {
            case (.tags, .weight): return aggregate(op, q.tags, \.weight)
            case (.tags, .tagID): return aggregate(op, q.tags, \.id)
            case (.tags, .rating): return aggregate(op, q.tags, \.rating)
            case (.tags, .label) where op == .min: return TypedStringOperand(q.tags.min(of: \.label))
            case (.tags, .label) where op == .max: return TypedStringOperand(q.tags.max(of: \.label))
            case (.fans, .score): return aggregate(op, q.fans, \.score)
            case (.fans, .ownerName) where op == .min: return TypedStringOperand(q.fans.min(of: \.name))
            case (.fans, .ownerName) where op == .max: return TypedStringOperand(q.fans.max(of: \.name))
            case (.ownerItems, .itemInt): return aggregate(op, q.owner.items, \.int)
            case (.ownerItems, .itemOptInt): return aggregate(op, q.owner.items, \.optInt)
            case (.ownerItems, .itemString) where op == .min: return TypedStringOperand(q.owner.items.min(of: \.string))
            case (.ownerItems, .itemString) where op == .max: return TypedStringOperand(q.owner.items.max(of: \.string))
            default: return nil
            }
        case .subquery(let list, let predicate):
            var failed = false
            let count: Query<Int>
            switch list {
            case .tags:
                count =
                    q.tags.where { t in
                        guard let p = build(predicate, element: .tag(t)) else {
                            failed = true
                            return t.id == t.id
                        }
                        return p
                    }.count
            case .fans:
                count =
                    q.fans.where { o in
                        guard let p = build(predicate, element: .owner(o)) else {
                            failed = true
                            return o.id == o.id
                        }
                        return p
                    }.count
            case .ownerItems, .ownerItemsLong, .fansFavoriteTags:
                return nil
            }
            return failed ? nil : TypedOperand(query: count)
        }
    }

    func aggregate<C: _ObjectCollection, V>(_ op: AggregateOp, _ list: Query<C>, _ keyPath: KeyPath<C._Element, V>)
        -> any TypedOperandProtocol
    {
        switch op {
        case .min: TypedOperand(query: list.min(of: keyPath))
        case .max: TypedOperand(query: list.max(of: keyPath))
        case .sum: TypedOperand(query: list.sum(of: keyPath))
        case .avg: TypedOperand(query: list.average(of: keyPath))
        }
    }
}

// MARK: - Sorting

/// One random sort criterion.
struct SortSpec: Sendable, CustomStringConvertible {
    var field: ItemField
    var ascending: Bool
    var comparison: StringComparison

    static let fields: [ItemField] = [
        .id, .int, .optInt, .double, .string, .optString, .flag, .date, .code, .ownerName, .ownerScore, .favoriteString,
    ]

    var description: String { "\(field.rawValue) \(ascending ? "asc" : "desc") \(comparison)" }

    var sortField: SortField { SortField(field.rawValue, ascending: ascending, comparison: comparison) }

    var keyPath: PartialKeyPath<QPItem> {
        switch field {
        case .id: \.id
        case .int: \.int
        case .optInt: \.optInt
        case .double: \.double
        case .string: \.string
        case .optString: \.optString
        case .flag: \.flag
        case .date: \.date
        case .code: \.code
        case .ownerName: \.owner?.name
        case .ownerScore: \.owner?.score
        case .ownerID: \.owner?.id
        case .favoriteInt: \.owner?.favorite?.int
        case .favoriteString: \.owner?.favorite?.string
        }
    }

    /// The same criterion as a Foundation sort descriptor, when there is one on every platform
    /// (Booleans are not `Comparable`; only the lexical string comparator exists everywhere).
    var descriptor: SortDescriptor<QPItem>? {
        let order: SortOrder = ascending ? .forward : .reverse
        guard comparison == .exact || field.kind != .string else { return nil }
        switch field {
        case .id: return SortDescriptor(\.id, order: order)
        case .int: return SortDescriptor(\.int, order: order)
        case .optInt: return SortDescriptor(\.optInt, order: order)
        case .double: return SortDescriptor(\.double, order: order)
        case .string: return SortDescriptor(\.string, comparator: .lexical, order: order)
        case .optString: return SortDescriptor(\.optString, order: order)
        case .date: return SortDescriptor(\.date, order: order)
        case .code: return SortDescriptor(\.code, order: order)
        case .ownerName: return SortDescriptor(\.owner?.name, order: order)
        case .ownerScore: return SortDescriptor(\.owner?.score, order: order)
        default: return nil
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
        let c = Reference.nfcOrder(a, b)
        if c != 0 { return c }
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
    }

    static func compareStrings(_ a: String, _ b: String, _ comparison: StringComparison) -> Int {
        switch comparison {
        case .exact:
            return Reference.nfcOrder(a, b)
        case .caseInsensitive:
            let c = Reference.scalarOrder(Reference.fold(a, .c), Reference.fold(b, .c))
            return c != 0 ? c : tieBreak(a, b)
        case .natural:
            var c = compareTokens(tokens(Reference.fold(a, [.c, .d])), tokens(Reference.fold(b, [.c, .d])))
            if c != 0 { return c }
            if !a.utf8.allSatisfy({ $0 < 0x80 }) || !b.utf8.allSatisfy({ $0 < 0x80 }) {
                c = compareTokens(tokens(Reference.fold(a, .c)), tokens(Reference.fold(b, .c)))
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
        case (.string(let x), .string(let y)): return compareStrings(x, y, comparison)
        default: return Reference.order(a, b) ?? 0
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

// MARK: - Random data

enum QueryWorld {
    static func date(_ i: Int) -> Date { Date(timeIntervalSinceReferenceDate: Double(i) * 86_400 + 0.25) }

    static let codes = ["a", "A", "b", "é", "E\u{301}", "ё", "Ё", "10", "9"]

    static func randomItem(_ id: Int, _ rng: inout SeededRandomNumberGenerator, _ world: RefWorld) -> RefItem {
        RefItem(
            id: id, int: rng.int(-3...12), optInt: rng.chance(0.3) ? nil : rng.int(-3...12),
            double: Double(rng.int(-12...40)) / 4, string: QueryText.string(&rng),
            optString: rng.chance(0.3) ? nil : QueryText.string(&rng, maxFragments: 3), flag: rng.chance(0.5),
            date: date(rng.int(0...6)), code: rng.element(of: codes),
            owner: rng.chance(0.25) || world.owners.isEmpty ? nil : rng.element(of: world.owners.keys.sorted()),
            tags: world.tags.isEmpty ? [] : (0..<rng.int(0...4)).map { _ in rng.element(of: world.tags.keys.sorted()) })
    }

    static func randomOwner(_ id: Int, _ rng: inout SeededRandomNumberGenerator) -> RefOwner {
        RefOwner(
            id: id, name: QueryText.string(&rng, maxFragments: 3), score: rng.chance(0.3) ? nil : rng.int(-2...9),
            favorite: nil)
    }

    static func randomTag(_ id: Int, _ rng: inout SeededRandomNumberGenerator) -> RefTag {
        RefTag(
            id: id, label: QueryText.string(&rng, maxFragments: 2), weight: rng.int(-2...9),
            rating: rng.chance(0.3) ? nil : Double(rng.int(-4...12)) / 4)
    }

    static func values(_ item: RefItem) -> [String: Any] {
        [
            "id": item.id, "int": item.int, "optInt": item.optInt as Any, "double": item.double,
            "string": item.string, "optString": item.optString as Any, "flag": item.flag, "date": item.date,
            "code": item.code, "owner": item.owner as Any,
        ]
    }

    /// Fills a realm and its reference copy.
    static func populate(_ realm: Realm, _ world: inout RefWorld, _ rng: inout SeededRandomNumberGenerator) async throws
    {
        for _ in 0..<rng.int(0...5) {
            let id = world.newID()
            world.owners[id] = randomOwner(id, &rng)
        }
        for _ in 0..<rng.int(0...6) {
            let id = world.newID()
            world.tags[id] = randomTag(id, &rng)
        }
        for _ in 0..<(rng.chance(0.1) ? rng.int(0...2) : rng.int(3...18)) {
            let id = world.newID()
            world.items[id] = randomItem(id, &rng, world)
        }
        for id in world.owners.keys.sorted() where !world.items.isEmpty && rng.chance(0.6) {
            world.owners[id]!.favorite = rng.element(of: world.items.keys.sorted())
        }
        let snapshot = world
        try await realm.write { r in
            for owner in snapshot.owners.values.sorted(by: { $0.id < $1.id }) {
                _ = try r.create(
                    QPOwner.self, value: ["id": owner.id, "name": owner.name, "score": owner.score as Any])
            }
            for tag in snapshot.tags.values.sorted(by: { $0.id < $1.id }) {
                _ = try r.create(
                    QPTag.self,
                    value: [
                        "id": tag.id, "label": tag.label, "weight": tag.weight, "rating": tag.rating as Any,
                    ])
            }
            for item in snapshot.items.values.sorted(by: { $0.id < $1.id }) {
                let object = try r.create(QPItem.self, value: values(item))
                for tag in item.tags { object.tags.append(r.object(ofType: QPTag.self, forPrimaryKey: tag)!) }
            }
            for owner in snapshot.owners.values {
                r.object(ofType: QPOwner.self, forPrimaryKey: owner.id)!.favorite =
                    owner.favorite.flatMap { r.object(ofType: QPItem.self, forPrimaryKey: $0) }
            }
        }
    }

    /// Random changes, made to the realm and to the reference copy.
    enum Change: Sendable {
        case item(RefItem), newItem(RefItem), deleteItem(Int)
        case owner(RefOwner), deleteOwner(Int)
        case tag(RefTag), deleteTag(Int)
    }

    static func mutate(_ realm: Realm, _ world: inout RefWorld, _ rng: inout SeededRandomNumberGenerator) async throws {
        var changes: [Change] = []
        for _ in 0..<rng.int(1...6) {
            switch rng.int(0...9) {
            case 0...3 where !world.items.isEmpty:
                var item = world.items[rng.element(of: world.items.keys.sorted())]!
                let fresh = randomItem(item.id, &rng, world)
                switch rng.int(0...6) {
                case 0: item.int = fresh.int; item.optInt = fresh.optInt
                case 1: item.string = fresh.string; item.optString = fresh.optString
                case 2: item.code = fresh.code; item.flag = fresh.flag
                case 3: item.owner = fresh.owner
                case 4: item.tags = fresh.tags
                case 5: item.double = fresh.double; item.date = fresh.date
                default: item = fresh
                }
                world.items[item.id] = item
                changes.append(.item(item))
            case 4:
                let id = world.newID()
                let item = randomItem(id, &rng, world)
                world.items[id] = item
                changes.append(.newItem(item))
            case 5 where !world.items.isEmpty:
                let id = rng.element(of: world.items.keys.sorted())
                world.items[id] = nil
                for (o, owner) in world.owners where owner.favorite == id { world.owners[o]!.favorite = nil }
                changes.append(.deleteItem(id))
            case 6 where !world.owners.isEmpty:
                var owner = world.owners[rng.element(of: world.owners.keys.sorted())]!
                let fresh = randomOwner(owner.id, &rng)
                owner.name = rng.chance(0.5) ? fresh.name : owner.name
                owner.score = fresh.score
                owner.favorite =
                    world.items.isEmpty || rng.chance(0.3) ? nil : rng.element(of: world.items.keys.sorted())
                world.owners[owner.id] = owner
                changes.append(.owner(owner))
            case 7 where !world.owners.isEmpty && rng.chance(0.5):
                let id = rng.element(of: world.owners.keys.sorted())
                world.owners[id] = nil
                for (i, item) in world.items where item.owner == id { world.items[i]!.owner = nil }
                changes.append(.deleteOwner(id))
            case 8 where !world.tags.isEmpty:
                var tag = randomTag(rng.element(of: world.tags.keys.sorted()), &rng)
                if rng.chance(0.5) { tag.label = world.tags[tag.id]!.label }
                world.tags[tag.id] = tag
                changes.append(.tag(tag))
            case 9 where !world.tags.isEmpty:
                let id = rng.element(of: world.tags.keys.sorted())
                world.tags[id] = nil
                for (i, item) in world.items { world.items[i]!.tags = item.tags.filter { $0 != id } }
                changes.append(.deleteTag(id))
            default:
                break
            }
        }
        let batch = changes
        try await realm.write { r in
            for change in batch {
                switch change {
                case .item(let item):
                    let object = r.object(ofType: QPItem.self, forPrimaryKey: item.id)!
                    object.int = item.int
                    object.optInt = item.optInt
                    object.double = item.double
                    object.string = item.string
                    object.optString = item.optString
                    object.flag = item.flag
                    object.date = item.date
                    object.code = item.code
                    object.owner = item.owner.flatMap { r.object(ofType: QPOwner.self, forPrimaryKey: $0) }
                    object.tags.removeAll()
                    for tag in item.tags { object.tags.append(r.object(ofType: QPTag.self, forPrimaryKey: tag)!) }
                case .newItem(let item):
                    let object = try r.create(QPItem.self, value: values(item))
                    for tag in item.tags { object.tags.append(r.object(ofType: QPTag.self, forPrimaryKey: tag)!) }
                case .deleteItem(let id):
                    try r.delete(r.object(ofType: QPItem.self, forPrimaryKey: id)!)
                case .owner(let owner):
                    let object = r.object(ofType: QPOwner.self, forPrimaryKey: owner.id)!
                    object.name = owner.name
                    object.score = owner.score
                    object.favorite = owner.favorite.flatMap { r.object(ofType: QPItem.self, forPrimaryKey: $0) }
                case .deleteOwner(let id):
                    try r.delete(r.object(ofType: QPOwner.self, forPrimaryKey: id)!)
                case .tag(let tag):
                    let object = r.object(ofType: QPTag.self, forPrimaryKey: tag.id)!
                    object.label = tag.label
                    object.weight = tag.weight
                    object.rating = tag.rating
                case .deleteTag(let id):
                    try r.delete(r.object(ofType: QPTag.self, forPrimaryKey: id)!)
                }
            }
        }
    }
}

// MARK: - The test

/// One query of a round: a predicate, a sort and a slice.
struct QueryCase: Sendable {
    var predicate: QueryPredicate
    var sorts: [SortSpec]
    var offset: Int
    var limit: Int?
    /// How the Foundation predicate compares optionals (see FoundationBuilder).
    var form: Int

    var text: RenderedQuery { predicate.text }

    var description: String {
        let rendered = text
        var s = "filter(\"\(rendered.text)\""
        if !rendered.arguments.isEmpty { s += ", arguments: \(rendered.arguments)" }
        s += ")"
        if !sorts.isEmpty { s += " sorted by [\(sorts.map(\.description).joined(separator: ", "))]" }
        if offset > 0 { s += " offset \(offset)" }
        if let limit { s += " limit \(limit)" }
        return s
    }

    func slice(_ ids: [Int]) -> [Int] {
        let rest = Array(ids.dropFirst(offset))
        return limit.map { Array(rest.prefix($0)) } ?? rest
    }
}

/// What the engine answered to one query, by each front end.
struct QueryAnswer: Sendable {
    var text: Result<[Int], LiveObjectsError>
    /// The typed `where { }` query, sorted by Swift key paths; nil where the shape has none.
    var typed: [Int]?
    /// Sorted with Foundation sort descriptors; nil where a criterion has none.
    var descriptors: [Int]?
    /// The predicate built as a Foundation `Predicate`, sorted like the text query; nil where
    /// the shape has none.
    var foundation: Result<[Int], LiveObjectsError>?
    /// The items Foundation's own evaluation of that predicate keeps, in storage order.
    var foundationEvaluated: [Int]?
}

@Suite struct QueryPropertyTests {
    static func run(_ cases: [QueryCase], in realm: Realm) async throws -> (base: [Int], answers: [QueryAnswer]) {
        try await realm.read { r in
            let all = r.objects(QPItem.self)
            var answers: [QueryAnswer] = []
            for c in cases {
                let rendered = c.text
                let text: Result<[Int], LiveObjectsError>
                do {
                    let results = try all.filter(rendered.text, arguments: rendered.arguments)
                        .sorted(by: c.sorts.map(\.sortField))
                    text = .success(c.slice(results.map(\.id)))
                } catch let error as LiveObjectsError {
                    text = .failure(error)
                } catch {
                    text = .failure(LiveObjectsError(.invalidQuery, "\(error)"))
                }
                var typedAnswer: [Int]?
                var failed = false
                let typed = all.where { q in
                    guard let p = TypedBuilder(root: q).build(c.predicate) else {
                        failed = true
                        return q.id == q.id
                    }
                    return p
                }
                if !failed {
                    let sorted = typed.sorted(
                        by: c.sorts.map { ($0.keyPath, ascending: $0.ascending, comparison: $0.comparison) })
                    typedAnswer = c.slice(sorted.map(\.id))
                }
                var descriptorAnswer: [Int]?
                let descriptors = c.sorts.compactMap(\.descriptor)
                if descriptors.count == c.sorts.count, case .success = text {
                    let results = try all.filter(rendered.text, arguments: rendered.arguments).sorted(
                        using: descriptors)
                    descriptorAnswer = c.slice(results.map(\.id))
                }
                var unsupported = false
                let predicate = Predicate<QPItem> { v in
                    guard let e = FoundationBuilder(root: v, form: c.form).build(c.predicate) else {
                        unsupported = true
                        return PE.Value(true)
                    }
                    return e
                }
                var foundation: Result<[Int], LiveObjectsError>?
                var evaluated: [Int]?
                if !unsupported {
                    do {
                        let results = try all.filter(predicate).sorted(by: c.sorts.map(\.sortField))
                        foundation = .success(c.slice(results.map(\.id)))
                    } catch let error as LiveObjectsError {
                        foundation = .failure(error)
                    }
                    evaluated = try all.filter { try predicate.evaluate($0) }.map(\.id)
                }
                answers.append(
                    QueryAnswer(
                        text: text, typed: typedAnswer, descriptors: descriptorAnswer, foundation: foundation,
                        foundationEvaluated: evaluated))
            }
            return (all.map(\.id), answers)
        }
    }

    /// Random data, random predicates and sorts; every answer must equal the reference's.
    ///
    /// `LIVEOBJECTS_QUERY_SEED` (a number, or `random`) and `LIVEOBJECTS_QUERY_ITERATIONS`
    /// change the seed and the number of data sets.
    @Test func randomQueriesMatchTheReferenceModel() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_QUERY_SEED") ?? 20_261_122
        let iterations = TestEnvironment.int("LIVEOBJECTS_QUERY_ITERATIONS") ?? 40
        let queriesPerRound = 12
        print(
            "QueryPropertyTests: seed \(seed), \(iterations) iterations (LIVEOBJECTS_QUERY_SEED, LIVEOBJECTS_QUERY_ITERATIONS)"
        )
        var rng = SeededRandomNumberGenerator(seed: seed)
        var failures = 0
        var checked = (text: 0, typed: 0, descriptors: 0, selective: 0, foundation: 0)
        for iteration in 0..<iterations where failures < 5 {
            let realm = try await Realm.open(
                .init(identifier: "query-property-\(UUID())", objectTypes: queryPropertyModelTypes))
            var world = RefWorld()
            try await QueryWorld.populate(realm, &world, &rng)
            for round in 0..<2 where failures < 5 {
                var generator = PredicateGenerator(rng: rng, world: world)
                var cases: [QueryCase] = []
                for _ in 0..<queriesPerRound {
                    let predicate = generator.predicate()
                    var sorts: [SortSpec] = []
                    for _ in 0..<generator.rng.int(0...3) {
                        sorts.append(
                            SortSpec(
                                field: generator.rng.element(of: SortSpec.fields), ascending: generator.rng.chance(0.5),
                                comparison: generator.rng.element(of: [
                                    StringComparison.exact, .caseInsensitive, .natural,
                                ])))
                    }
                    let offset = generator.rng.chance(0.2) ? generator.rng.int(1...3) : 0
                    let limit = generator.rng.chance(0.2) ? generator.rng.int(0...5) : nil
                    cases.append(
                        QueryCase(
                            predicate: predicate, sorts: sorts, offset: offset, limit: limit,
                            form: generator.rng.int(0...2)))
                }
                rng = generator.rng
                let (base, answers) = try await Self.run(cases, in: realm)
                // The unsorted order is the storage order, which the reference takes from the
                // engine (it is not insertion order once objects were deleted).
                let ordered = base.map { world.items[$0]! }
                #expect(
                    Set(base) == Set(world.items.keys), "seed \(seed) iteration \(iteration): the realm lost objects")
                for (c, answer) in zip(cases, answers) {
                    let matching = ordered.filter { c.predicate.matches($0, world) }
                    let expected = c.slice(ReferenceSort.sort(matching, c.sorts, world).map(\.id))
                    let context = "seed \(seed) iteration \(iteration) round \(round): \(c.description)"
                    if !matching.isEmpty && matching.count < ordered.count { checked.selective += 1 }
                    switch answer.text {
                    case .success(let ids):
                        checked.text += 1
                        if ids != expected {
                            failures += 1
                            Issue.record("\(context)\n  expected \(expected)\n  got      \(ids)")
                        }
                    case .failure(let error):
                        failures += 1
                        Issue.record("\(context)\n  failed: \(error)")
                    }
                    if let typed = answer.typed {
                        checked.typed += 1
                        if typed != expected {
                            failures += 1
                            Issue.record("\(context) (typed where { })\n  expected \(expected)\n  got      \(typed)")
                        }
                    }
                    if let evaluated = answer.foundationEvaluated {
                        checked.foundation += 1
                        // Foundation's own evaluation checks the reference semantics too.
                        if evaluated != matching.map(\.id) {
                            failures += 1
                            Issue.record(
                                "\(context) (Foundation's evaluation, form \(c.form))\n  reference \(matching.map(\.id))\n  Foundation \(evaluated)"
                            )
                        }
                    }
                    switch answer.foundation {
                    case .success(let ids) where ids != expected:
                        failures += 1
                        Issue.record(
                            "\(context) (Foundation Predicate, form \(c.form))\n  expected \(expected)\n  got      \(ids)"
                        )
                    case .failure(let error):
                        failures += 1
                        Issue.record("\(context) (Foundation Predicate, form \(c.form))\n  failed: \(error)")
                    default:
                        break
                    }
                    if let sorted = answer.descriptors {
                        checked.descriptors += 1
                        if sorted != expected {
                            failures += 1
                            Issue.record("\(context) (SortDescriptor)\n  expected \(expected)\n  got      \(sorted)")
                        }
                    }
                }
                if round == 0 { try await QueryWorld.mutate(realm, &world, &rng) }
            }
        }
        print(
            "QueryPropertyTests: checked \(checked.text) text queries (\(checked.selective) matching some but not all "
                + "objects), \(checked.typed) typed, \(checked.foundation) as Foundation predicates, \(checked.descriptors) with "
                + "sort descriptors")
        if failures == 0 {
            #expect(checked.text == iterations * 2 * queriesPerRound)
            #expect(checked.typed > checked.text / 3)
            #expect(checked.foundation > checked.text / 5)
            // The predicates are not mostly trivially true or false.
            #expect(checked.selective > checked.text / 3)
        }
    }
}
