import LiveObjectsStore

// The syntax tree that `PredicateParser` produces from a predicate string such as
// `ANY dogs.name BEGINSWITH[c] 'r' AND age > 30`.
//
// The tree is purely syntactic: property names are not checked against a schema and no value is
// converted to a property's type. A later compile step does that and reports its own errors;
// key paths and comparisons carry the UTF-8 offset of their first character in the predicate
// text (`offset`) so that such errors can point at the right column.
//
// Arguments are already substituted: `$0`, `%@`, `%d` and `%f` become `.value(...)`, and `%K`
// becomes a key path. A tree therefore never contains a placeholder.

/// A predicate: something that is true or false for one object.
///
/// Invariants of trees built by the parser:
/// - `and` and `or` always hold at least two operands. A chain `a AND b AND c` is one `and`
///   with three operands; parentheses are kept: `(a AND b) AND c` is an `and` whose first
///   operand is an `and`.
/// - Nesting (parentheses, `NOT`, `SUBQUERY`, `{…}`) is at most
///   ``PredicateParser/maxNestingDepth`` deep, and `SUBQUERY`s nest at most
///   ``PredicateParser/maxSubqueryDepth`` deep.
package indirect enum PredicateSyntax: Hashable, Sendable {
    /// `TRUEPREDICATE` (`true`) or `FALSEPREDICATE` (`false`).
    case constant(Bool)
    /// `NOT p` or `!p`.
    case not(PredicateSyntax)
    /// `a AND b AND …` or `a && b && …`: true when every operand is.
    case and([PredicateSyntax])
    /// `a OR b OR …` or `a || b || …`: true when any operand is.
    case or([PredicateSyntax])
    /// A comparison such as `name ==[c] 'rex'` or `ANY dogs.age > 3`.
    case comparison(ComparisonSyntax)
}

/// One comparison: `[modifier] lhs operator[options] rhs`.
///
/// Two comparisons are equal when they have the same structure; ``offset`` is not compared.
package struct ComparisonSyntax: Hashable, Sendable {
    /// `ANY`/`SOME`, `ALL` or `NONE` in front of the left-hand side, or ``Quantifier/direct``.
    package var quantifier: Quantifier
    /// The left-hand side.
    package var lhs: ExpressionSyntax
    /// The operator.
    package var op: ComparisonOperator
    /// `[c]`, `[d]` or `[cd]` after the operator.
    package var options: ComparisonOptions
    /// The right-hand side. For ``ComparisonOperator/between`` it is always a
    /// `.value(.list([lower, upper]))`.
    package var rhs: ExpressionSyntax
    /// UTF-8 offset in the predicate text of the comparison's first character (the quantifier
    /// if any, else the left-hand side). Not part of equality.
    package var offset: Int

    /// Creates a comparison.
    package init(
        _ quantifier: Quantifier = .direct, _ lhs: ExpressionSyntax, _ op: ComparisonOperator,
        _ options: ComparisonOptions = [], _ rhs: ExpressionSyntax, offset: Int = 0
    ) {
        self.quantifier = quantifier
        self.lhs = lhs
        self.op = op
        self.options = options
        self.rhs = rhs
        self.offset = offset
    }

    package static func == (a: ComparisonSyntax, b: ComparisonSyntax) -> Bool {
        a.quantifier == b.quantifier && a.op == b.op && a.options == b.options && a.lhs == b.lhs
            && a.rhs == b.rhs
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(quantifier)
        hasher.combine(lhs)
        hasher.combine(op)
        hasher.combine(options)
        hasher.combine(rhs)
    }
}

/// How a comparison treats a to-many left-hand side.
package enum Quantifier: String, Hashable, Sendable, CaseIterable {
    /// No quantifier: the left-hand side is compared as it is.
    case direct = ""
    /// `ANY` or `SOME`: true when the comparison holds for at least one element.
    case any = "ANY"
    /// `ALL`: true when the comparison holds for every element (also when there are none).
    case all = "ALL"
    /// `NONE`: true when the comparison holds for no element.
    case none = "NONE"
}

/// A comparison operator.
package enum ComparisonOperator: String, Hashable, Sendable, CaseIterable {
    /// `==` or `=`.
    case equal = "=="
    /// `!=` or `<>`.
    case notEqual = "!="
    /// `<`.
    case lessThan = "<"
    /// `<=` or `=<`.
    case lessThanOrEqual = "<="
    /// `>`.
    case greaterThan = ">"
    /// `>=` or `=>`.
    case greaterThanOrEqual = ">="
    /// `BETWEEN {lower, upper}`, both bounds included.
    case between = "BETWEEN"
    /// `IN {…}`, `IN $0` or `IN keyPath`: the left-hand side is one of the right-hand values.
    case `in` = "IN"
    /// `BEGINSWITH`.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`.
    case endsWith = "ENDSWITH"
    /// `CONTAINS`.
    case contains = "CONTAINS"
    /// `LIKE`, with `*` (any run of characters) and `?` (one character) as wildcards.
    case like = "LIKE"
    /// `TEXT`: full-text search (``FullTextQuery``), `body TEXT 'coffee -decaf'`.
    case text = "TEXT"
}

/// The `[c]`, `[d]` and `[cd]` options of a comparison.
package struct ComparisonOptions: OptionSet, Hashable, Sendable {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `[c]`: case-insensitive.
    package static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive.
    package static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
}

/// A collection operator in a key path: `dogs.@count`, `dogs.@max.age`.
package enum CollectionOperator: String, Hashable, Sendable, CaseIterable {
    /// `@count`: the number of elements of a list (or of a subquery's result).
    case count
    /// `@size`: the length of a string or binary value, or the number of elements of a list.
    case size
    /// `@min`: the smallest element (or property of the elements).
    case min
    /// `@max`: the largest element (or property of the elements).
    case max
    /// `@sum`: the sum of the elements (or property of the elements).
    case sum
    /// `@avg`: the average of the elements (or property of the elements).
    case avg

    /// Whether the operator can be followed by a property (`@max.age`): `@count` and `@size`
    /// cannot.
    package var takesProperty: Bool { self != .count && self != .size }
}

/// A key path: `name`, `owner.address.city`, `$d.age` (inside a `SUBQUERY`) or `SELF`.
///
/// Two key paths are equal when they have the same variable and components; ``offset`` is not
/// compared.
package struct KeyPathSyntax: Hashable, Sendable {
    /// The `SUBQUERY` variable the path starts from (without the `$`), or `nil` when it starts
    /// from the object being tested.
    package var variable: String?
    /// Property names, followed link by link. Empty for `SELF` or a bare variable (`$d`).
    package var components: [String]
    /// UTF-8 offset in the predicate text of the key path's first character. Not part of
    /// equality.
    package var offset: Int

    /// Creates a key path.
    package init(variable: String? = nil, _ components: [String], offset: Int = 0) {
        self.variable = variable
        self.components = components
        self.offset = offset
    }

    package static func == (a: KeyPathSyntax, b: KeyPathSyntax) -> Bool {
        a.variable == b.variable && a.components == b.components
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(variable)
        hasher.combine(components)
    }
}

/// One side of a comparison.
///
/// Only the cases that nest are boxed: a value or a key path (the sides of most comparisons)
/// is stored in place, without an allocation of its own.
package enum ExpressionSyntax: Hashable, Sendable {
    /// A constant: a literal (`42`, `-0x1F`, `2.5`, `'Rex'`, `TRUE`, `nil`), a substituted
    /// argument (`$0`, `%@`, `%d`, `%f`) or an aggregate `{1, 2, 3}`, which becomes
    /// `.list([...])`. Integer literals are `.int`, floating-point literals `.double`.
    case value(PropertyValue)
    /// A key path: `name`, `owner.name`, `$d.age`, `SELF`, or a `%K` argument.
    case keyPath(KeyPathSyntax)
    /// A collection operator applied to a collection, optionally followed by a property path:
    /// `dogs.@count` is `(.count, .keyPath(dogs), [])`; `dogs.@max.age` is
    /// `(.max, .keyPath(dogs), ["age"])`; `SUBQUERY(…).@count` is `(.count, .subquery(…), [])`.
    indirect case collectionOperation(CollectionOperator, collection: ExpressionSyntax, property: [String])
    /// `SUBQUERY(collection, $variable, predicate)`: the elements of `collection` for which
    /// `predicate` holds, where `predicate` names the element `$variable`. The parser only
    /// produces it as the collection of a ``collectionOperation(_:collection:property:)``.
    indirect case subquery(collection: KeyPathSyntax, variable: String, predicate: PredicateSyntax)
}

// MARK: - Printing

extension PredicateSyntax: CustomStringConvertible {
    /// The predicate in the parser's syntax. Parsing it again gives an equal tree, as long as
    /// every constant is one that has a literal form (`null`, `bool`, `int`, finite `double`,
    /// `string`, and lists of those) and every key path component is an identifier.
    package var description: String {
        switch self {
        case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let operand):
            switch operand {
            case .and, .or: "NOT (\(operand))"
            default: "NOT \(operand)"
            }
        case .and(let operands):
            operands.map { operand in
                switch operand {
                case .and, .or: "(\(operand))"
                default: operand.description
                }
            }.joined(separator: " AND ")
        case .or(let operands):
            operands.map { operand in
                if case .or = operand { return "(\(operand))" }
                return operand.description
            }.joined(separator: " OR ")
        case .comparison(let comparison): comparison.description
        }
    }
}

extension ComparisonSyntax: CustomStringConvertible {
    /// The comparison in the parser's syntax.
    package var description: String {
        var text = quantifier == .direct ? "" : quantifier.rawValue + " "
        text += "\(lhs) \(op.rawValue)"
        if !options.isEmpty {
            text += "["
            if options.contains(.caseInsensitive) { text += "c" }
            if options.contains(.diacriticInsensitive) { text += "d" }
            text += "]"
        }
        return text + " \(rhs)"
    }
}

extension KeyPathSyntax: CustomStringConvertible {
    /// The key path in the parser's syntax; a component that is a reserved word is written
    /// with a `#` in front (`#in`).
    package var description: String {
        var text = variable.map { "$" + $0 } ?? ""
        for component in components {
            if let key = Self.mapKey(component) {
                text += "[" + ExpressionSyntax.literal(.string(key)) + "]"
            } else if let index = Self.index(component) {
                text += "[\(index)]"
            } else if component == Self.everyElementComponent {
                text += "[*]"
            } else {
                text +=
                    (text.isEmpty ? "" : ".")
                    + (Self.mapSteps.contains(component) || component == Self.typeStep
                        ? component : Self.escaped(component))
            }
        }
        return text.isEmpty ? "SELF" : text
    }

    /// The component of a map's value by key (`settings['theme']`): the key after a `[`, which
    /// no property name starts with.
    package static func mapKeyComponent(_ key: String) -> String { "[" + key }

    /// The key of a ``mapKeyComponent(_:)``, or nil for another component.
    package static func mapKey(_ component: String) -> String? {
        component.hasPrefix("[") ? String(component.dropFirst()) : nil
    }

    /// The component of an `AnyValue` list's element by position (`payload[0]`): the index
    /// after a `]`, which no property name starts with.
    package static func indexComponent(_ index: Int) -> String { "]" + String(index) }

    /// The index of an ``indexComponent(_:)``, or nil for another component.
    package static func index(_ component: String) -> Int? {
        component.hasPrefix("]") ? Int(component.dropFirst()) : nil
    }

    /// The component of every element of an `AnyValue` list or dictionary (`payload[*]`).
    package static let everyElementComponent = "]*"

    /// Whether a component reads into a value (a key, an index or `[*]`) rather than naming a
    /// property.
    package static func isSubscript(_ component: String) -> Bool {
        component.hasPrefix("[") || component.hasPrefix("]")
    }

    /// The components of a map's keys and values (`settings.@keys`, `settings.@values`).
    package static let mapSteps: Set<String> = ["@keys", "@values"]
    /// The component that reads the kind of a mixed value (`payload.@type`).
    package static let typeStep = "@type"

    /// A property name as written in a predicate: with `#` in front if it is a keyword.
    static func escaped(_ name: String) -> String {
        PredicateLexer.isReservedWord(name) ? "#" + name : name
    }
}

extension ExpressionSyntax: CustomStringConvertible {
    /// The expression in the parser's syntax.
    package var description: String {
        switch self {
        case .value(let value): Self.literal(value)
        case .keyPath(let keyPath): keyPath.description
        case .collectionOperation(let op, let collection, let property):
            ([collection.description, "@" + op.rawValue] + property.map(KeyPathSyntax.escaped))
                .joined(separator: ".")
        case .subquery(let collection, let variable, let predicate):
            "SUBQUERY(\(collection), $\(variable), \(predicate))"
        }
    }

    /// A constant written as a literal of the predicate language where it has one.
    static func literal(_ value: PropertyValue) -> String {
        var out = ""
        appendLiteral(value, to: &out)
        return out
    }

    /// Appends a constant's literal. Lists nest as deep as the parser allows
    /// (``PredicateParser/maxNestingDepth``), so a level costs this one small frame: the
    /// description of the deepest list fits a 512 KB thread stack even in instrumented builds.
    private static func appendLiteral(_ value: PropertyValue, to out: inout String) {
        guard case .list(let values) = value else {
            out += scalarLiteral(value)
            return
        }
        out += "{"
        for (index, item) in values.enumerated() {
            if index > 0 { out += ", " }
            appendLiteral(item, to: &out)
        }
        out += "}"
    }

    /// A constant that is not a list, as a literal.
    private static func scalarLiteral(_ value: PropertyValue) -> String {
        switch value {
        case .null: return "NULL"
        case .bool(let b): return b ? "TRUE" : "FALSE"
        case .int(let i): return String(i)
        case .float(let f): return String(f)
        case .double(let d): return String(d)
        case .decimal(let d) where !d.isNaN: return d.exactText
        case .objectID(let id): return "oid(\(id.hexString))"
        case .string(let s): return quoted(s)
        default: return "<\(value)>"
        }
    }

    /// A string as a double-quoted literal with escapes.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\0": out += "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
