import Foundation
import LiveObjectsStore

/// Predicates of the string language already parsed, by text, so that running the same text
/// again with other arguments (`filter("name == %@", name)` in a loop) does not parse it again.
///
/// A text is parsed once more with a marker value in place of each argument: a UUID, which no
/// literal of the language produces. Later calls with that text and as many arguments get a
/// copy of that tree with their arguments in place of the markers, which is the tree the
/// parser gives for them. A text whose parse depends on the arguments' values (`%K`, `%d`,
/// `%f`, `BETWEEN %@`) fails with markers (or gives a tree that does not match the first
/// call's) and is then always parsed directly; so is a text that does not parse, so errors
/// always come from the parser itself.
///
/// The cache belongs to one store and is used one caller at a time; it keeps at most
/// ``capacity`` texts of at most ``maxTextLength`` bytes, and starts over when full.
package final class PredicateTemplates {
    /// The most texts kept.
    package static let capacity = 128
    /// The longest text kept, in UTF-8 bytes.
    package static let maxTextLength = 1024

    private struct Key: Hashable {
        var text: String
        var argumentCount: Int
    }

    /// Per text: the tree with markers, or nil when the text must be parsed directly.
    @exclusivity(unchecked) private var templates: [Key: Template?] = [:]
    /// The text used last and its entry, found by comparing the text before hashing it: a loop
    /// that runs one text with new arguments finds it here.
    @exclusivity(unchecked) private var last: (key: Key, template: Template?)?

    /// A parsed text with markers in place of its arguments.
    final class Template {
        let tree: PredicateSyntax
        /// For `property == %@` (either way round), the usual lookup: the property and the
        /// argument's position.
        let equality: (property: String, argument: Int)?
        /// Where that property was found last (checked by name before it is used again).
        @exclusivity(unchecked) private var lastPosition = -1

        init(_ tree: PredicateSyntax) {
            self.tree = tree
            equality = Self.equality(in: tree)
        }

        private static func equality(in tree: PredicateSyntax) -> (property: String, argument: Int)? {
            guard case .comparison(let c) = tree, c.quantifier == .direct, c.op == .equal, c.options.isEmpty
            else { return nil }
            let path: KeyPathSyntax
            let marker: UUID
            if case .keyPath(let k) = c.lhs, case .value(.uuid(let m)) = c.rhs {
                (path, marker) = (k, m)
            } else if case .value(.uuid(let m)) = c.lhs, case .keyPath(let k) = c.rhs {
                (path, marker) = (k, m)
            } else {
                return nil
            }
            guard path.variable == nil, path.components.count == 1, let argument = argumentIndex(marker) else {
                return nil
            }
            return (path.components[0], argument)
        }

        /// The position in `table` of the property of ``equality``; nil when it has none.
        func position(in table: Table) -> Int? {
            guard let property = equality?.property else { return nil }
            let properties = table.schema.properties
            if lastPosition >= 0, lastPosition < properties.count, properties[lastPosition].name == property {
                return lastPosition
            }
            guard let p = table.position(ofProperty: property) else { return nil }
            lastPosition = p
            return p
        }
    }

    /// What a text with its arguments says: for the usual lookup, `property == value`, its
    /// value and its template (``PredicateSyntax/substituting(_:)`` with the arguments gives
    /// the template's tree as the parser gives it); else its tree.
    enum Parsed {
        case equality(value: PropertyValue, template: Template)
        case tree(PredicateSyntax)
    }

    /// The number of texts kept (for tests).
    package var count: Int { templates.count }

    package init() {}

    /// The tree `PredicateParser.parse(text, arguments:)` gives, from the cache when it can.
    package func parse(_ text: String, arguments: [PropertyValue]) throws(LiveObjectsError) -> PredicateSyntax {
        switch try parseForLookup(text, arguments: arguments) {
        case .tree(let tree): tree
        case .equality(_, let template): template.tree.substituting(arguments)
        }
    }

    /// ``parse(_:arguments:)``, telling the usual lookup apart without making its tree.
    func parseForLookup(_ text: String, arguments: [PropertyValue]) throws(LiveObjectsError) -> Parsed {
        let key = Key(text: text, argumentCount: arguments.count)
        var found: Template??
        if let last, last.key == key {
            found = last.template
        } else if let entry = templates[key] {
            found = entry
            last = (key, entry)
        }
        if let found {
            guard let template = found else { return .tree(try PredicateParser.parse(text, arguments: arguments)) }
            if let argument = template.equality?.argument {
                return .equality(value: arguments[argument], template: template)
            }
            return .tree(template.tree.substituting(arguments))
        }
        let tree = try PredicateParser.parse(text, arguments: arguments)
        if text.utf8.count <= Self.maxTextLength {
            if templates.count >= Self.capacity {
                templates.removeAll(keepingCapacity: true)
                last = nil
            }
            // Kept only if it gives back this call's tree: a parse that treats an argument by
            // its value without failing on a marker is then not reused either.
            let markers = arguments.indices.map(Self.marker)
            let template = try? PredicateParser.parse(text, arguments: markers)
            templates[key] = template.flatMap { $0.substituting(arguments) == tree ? Template($0) : nil }
        }
        return .tree(tree)
    }

    // MARK: Markers

    /// The first half of every marker; the second half is the argument's position.
    private static let markerTag: UInt64 = 0x7E3A_91C4_5B20_D8F6

    static func marker(_ index: Int) -> PropertyValue {
        .uuid(UUID(uuid: unsafeBitCast((markerTag, UInt64(index)), to: uuid_t.self)))
    }

    /// The argument position a marker stands for; nil for any other value.
    static func argumentIndex(_ value: UUID) -> Int? {
        let (tag, index) = unsafeBitCast(value.uuid, to: (UInt64, UInt64).self)
        return tag == markerTag ? Int(index) : nil
    }
}

extension PredicateSyntax {
    /// The tree with `arguments` in place of the markers of ``PredicateTemplates``.
    func substituting(_ arguments: [PropertyValue]) -> PredicateSyntax {
        switch self {
        case .constant: return self
        case .not(let operand): return .not(operand.substituting(arguments))
        case .and(let operands): return .and(operands.map { $0.substituting(arguments) })
        case .or(let operands): return .or(operands.map { $0.substituting(arguments) })
        case .comparison(var comparison):
            comparison.lhs = comparison.lhs.substituting(arguments)
            comparison.rhs = comparison.rhs.substituting(arguments)
            return .comparison(comparison)
        }
    }
}

extension ExpressionSyntax {
    func substituting(_ arguments: [PropertyValue]) -> ExpressionSyntax {
        switch self {
        case .value(let value): .value(value.substituting(arguments))
        case .keyPath: self
        case .collectionOperation(let op, let collection, let property):
            .collectionOperation(op, collection: collection.substituting(arguments), property: property)
        case .subquery(let collection, let variable, let predicate):
            .subquery(collection: collection, variable: variable, predicate: predicate.substituting(arguments))
        }
    }
}

extension PropertyValue {
    fileprivate func substituting(_ arguments: [PropertyValue]) -> PropertyValue {
        switch self {
        case .uuid(let uuid): PredicateTemplates.argumentIndex(uuid).map { arguments[$0] } ?? self
        case .list(let items): .list(items.map { $0.substituting(arguments) })
        default: self
        }
    }
}
