import Foundation
import LiveObjects

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

/// Builds random predicates over the current data (constants are often taken from it).
struct PredicateGenerator {
    var rng: SeededRandomNumberGenerator
    let world: RefWorld

    /// One query of a round: a random predicate, up to three sort criteria, sometimes an offset
    /// and a limit, and the Swift idiom of the Foundation predicate's optional comparisons.
    mutating func queryCase() -> QueryCase {
        let predicate = predicate()
        var sorts: [SortSpec] = []
        for _ in 0..<rng.int(0...3) {
            sorts.append(
                SortSpec(
                    field: rng.element(of: SortSpec.fields), ascending: rng.chance(0.5),
                    comparison: rng.element(of: [StringComparison.exact, .caseInsensitive, .natural])))
        }
        let offset = rng.chance(0.2) ? rng.int(1...3) : 0
        let limit = rng.chance(0.2) ? rng.int(0...5) : nil
        return QueryCase(predicate: predicate, sorts: sorts, offset: offset, limit: limit, form: rng.int(0...2))
    }

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
                var ops: [QueryOperator] = [.equal, .notEqual]
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
        case .settingsTheme: .settingsFont
        case .palsLeadName: .ownerName
        case .palsLeadScore: .ownerScore
        case .code: .string
        case .flag: nil
        case .ownerScore: .int
        default: nil
        }
    }

    mutating func randomOptions() -> QueryReference.Options {
        rng.element(of: [[], [], .c, .d, [.c, .d]])
    }

    mutating func numeric(_ lhs: QueryOperand, sample: PropertyValue) -> QueryPredicate {
        let op = rng.element(of: [QueryOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
        var value = sample
        if rng.chance(0.3) { value = .int(Int64(rng.int(-1...12))) }
        if rng.chance(0.1) { value = .double(Double(rng.int(-4...40)) / 4) }
        if rng.chance(0.05) { value = .null }
        return .compare(.direct, lhs, op, [], .constant(value))
    }

    /// A comparison of an operand with a constant (sometimes a list for IN / BETWEEN).
    mutating func simple(_ lhs: QueryOperand, kind: QueryValueKind, quantifier: RandomQuantifier, sample: PropertyValue)
        -> QueryPredicate
    {
        var ops: [QueryOperator]
        switch kind {
        case .bool: ops = [.equal, .notEqual]
        case .kindName: ops = [.equal, .notEqual, .in]
        case .mixed:
            ops = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .in, .beginsWith, .contains]
        case .string:
            ops = [.equal, .notEqual, .beginsWith, .endsWith, .contains, .like, .in, .less, .greaterOrEqual]
        default: ops = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .in, .between]
        }
        let op = rng.element(of: ops)
        var options: QueryReference.Options = []
        if kind == .mixed && (op.isStringOperation || op == .equal) && sample.stringValue != nil {
            options = randomOptions()
        }
        if kind == .string && op != .less && op != .greaterOrEqual { options = randomOptions() }
        if kind == .string && op.isOrdering && rng.chance(0.3) { options = .c }
        switch op {
        case .in:
            var items: [PropertyValue] = []
            for _ in 0..<rng.int(0...3) { items.append(constant(kind, near: sample)) }
            if rng.chance(0.2) && kind != .kindName { items.append(.null) }
            return .compare(quantifier, lhs, .in, options, .constant(.list(items)))
        case .between:
            var low = constant(kind, near: sample)
            var high = constant(kind, near: sample)
            if rng.chance(0.8), let c = QueryReference.order(low, high), c > 0 { swap(&low, &high) }
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
            if (op == .equal || op == .notEqual) && kind != .kindName && rng.chance(0.15) { value = .null }
            // Booleans do not order (the query is refused); a string option needs a string.
            if op.isOrdering, value.boolValue != nil || value.isNull { value = .int(Int64(rng.int(-3...12))) }
            if value.stringValue == nil { options = [] }
            return .compare(quantifier, lhs, op, options, .constant(value))
        }
    }

    /// A constant of a kind, often the sample or close to it.
    mutating func constant(_ kind: QueryValueKind, near sample: PropertyValue) -> PropertyValue {
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
        case .decimal: return .decimal(QueryWorld.decimal(&rng))
        case .objectID: return .objectID(rng.element(of: QueryWorld.objectIDs))
        case .mixed: return QueryWorld.mixed(&rng)
        case .kindName: return .string(rng.element(of: QueryReference.kindNames))
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
