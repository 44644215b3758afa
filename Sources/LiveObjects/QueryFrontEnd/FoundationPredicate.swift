import Foundation
import LiveObjectsStore

// Foundation `Predicate`s (and `#Predicate`) as LiveObjects queries.
//
// A `Predicate` is a tree of `PredicateExpressions` nodes. The translator walks it and builds the
// same `PredicateSyntax` tree that the string parser and the typed `where { }` builder produce,
// so that one engine evaluates every kind of query. Each supported node type conforms to
// `PredicateTranslatable` (see FoundationPredicateNodes.swift); any other node that depends on
// the object being tested is refused with an `invalidQuery` error that names it. A node that
// does not depend on it (`limit + 1` on captured values) is evaluated once by Foundation and
// used as a constant.
//
// The translation keeps Swift's meaning, including where the query language differs by default:
//
// - Optionals. `$0.owner?.name == "Ann"` is false when there is no owner, and
//   `$0.owner?.name != "Ann"` is true. A value that may be nil is described by alternatives:
//   `($0.score ?? 0) > 3` becomes `(score != nil AND score > 3) OR (score == nil AND 0 > 3)`,
//   which simplifies to the first part.
// - Short-circuiting and errors. Foundation's evaluation throws when a forced unwrap (`!`) meets
//   nil. Every term carries the condition under which its evaluation would throw, following
//   Swift's evaluation order (`&&`, `||`, `?:`, `??` evaluate their right side only when
//   needed), and objects for which the whole predicate would throw are left out of the results:
//   `$0.owner == nil || $0.owner!.age > 3` keeps the objects without an owner. Inside
//   `contains(where:)`, `allSatisfy` and `filter`, an element whose test would throw leaves the
//   object out even if Swift would have stopped before reaching that element.
// - Closures over lists become `SUBQUERY`s, so that several conditions in one closure hold for
//   the same element: `$0.dogs.contains { $0.age > 3 && $0.name == "Rex" }`.

/// A node of a Foundation predicate that LiveObjects can translate into its own predicate tree.
protocol PredicateTranslatable {
    /// The node's meaning in the query engine's terms.
    func translate(_ translator: FoundationPredicateTranslator) throws(LiveObjectsError) -> PredicateTerm
}

/// What one expression of a Foundation predicate stands for.
struct PredicateTerm {
    enum Body {
        /// A Boolean expression, as a predicate.
        case condition(PredicateSyntax)
        /// A value: exactly one alternative's condition holds for each object, and the value is
        /// that alternative's operand.
        case value([PredicateAlternative])
    }

    var body: Body
    /// Holds for the objects for which Foundation's evaluation of the expression would throw.
    var failure: PredicateSyntax = .constant(false)
    /// Whether the expression depends on no variable, so that Foundation can evaluate it once.
    var isConstant = false

    init(_ body: Body, failure: PredicateSyntax = .constant(false), isConstant: Bool = false) {
        self.body = body
        self.failure = failure
        self.isConstant = isConstant
    }

    /// A value with a single alternative.
    init(operand: PredicateOperand, failure: PredicateSyntax = .constant(false), isConstant: Bool = false) {
        self.init(
            .value([PredicateAlternative(condition: .constant(true), operand: operand)]), failure: failure,
            isConstant: isConstant)
    }

    /// The alternatives of the value (a condition is one alternative).
    var alternatives: [PredicateAlternative] {
        switch body {
        case .condition(let p): [PredicateAlternative(condition: .constant(true), operand: .condition(p))]
        case .value(let alternatives): alternatives
        }
    }
}

/// One possible value of an expression, and when it is the value.
struct PredicateAlternative {
    var condition: PredicateSyntax
    var operand: PredicateOperand
}

/// A value in the query engine's terms.
enum PredicateOperand {
    /// A Swift value known before the query runs.
    case constant(Any)
    /// A key path from the tested object or from a subquery variable.
    case path(PathOperand)
    /// A collection operation such as `dogs.@count`.
    case aggregate(ExpressionSyntax, canBeNil: Bool)
    /// A Boolean value given by a predicate.
    case condition(PredicateSyntax)
}

/// A key path operand.
struct PathOperand {
    var keyPath: KeyPathSyntax
    /// The table of the objects the path leads to, when it leads to objects (or is `SELF`).
    var table: Table?
    /// Whether the path yields a list (a `List` or `LinkingObjects` property).
    var isToMany: Bool
    /// For a list narrowed by `filter(_:)`: the subquery variable and the condition on it.
    var filter: (variable: String, predicate: PredicateSyntax)?
    /// Whether the Swift value can be nil (its type is optional).
    var canBeNil: Bool
}

/// Translates Foundation predicates into ``PredicateSyntax`` trees for one table.
final class FoundationPredicateTranslator {
    let store: Store
    let root: Table
    private var bindings: [PredicateExpressions.VariableID: PredicateTerm] = [:]
    private var variableCount = 0
    private var depth = 0

    /// The most alternatives one comparison may combine (`??` and `?:` multiply them).
    static let maxAlternatives = 64
    /// The most nodes the translated predicate may have.
    static let maxNodes = 100_000

    init(store: Store, root: Table) {
        self.store = store
        self.root = root
    }

    /// Translates a predicate on the objects of `table`.
    static func translate<Element>(_ predicate: Predicate<Element>, table: Table, store: Store)
        throws(LiveObjectsError) -> PredicateSyntax
    {
        let translator = FoundationPredicateTranslator(store: store, root: table)
        let object = PathOperand(
            keyPath: KeyPathSyntax([]), table: table, isToMany: false, filter: nil, canBeNil: false)
        translator.bind(predicate.variable.key, to: PredicateTerm(operand: .path(object)))
        let term = try translator.translate(predicate.expression)
        let result = and(not(term.failure), try translator.predicate(of: term))
        if result.nodeCount > maxNodes {
            throw LiveObjectsError(
                .limitExceeded,
                "the predicate translates into more than \(maxNodes) query nodes; simplify its optionals, "
                    + "forced unwraps and conditionals",
                objectType: table.name)
        }
        return result
    }

    // MARK: Nodes

    /// Translates one node of the expression tree.
    func translate(_ node: Any) throws(LiveObjectsError) -> PredicateTerm {
        depth += 1
        defer { depth -= 1 }
        if depth > PredicateParser.maxNestingDepth {
            throw LiveObjectsError(
                .limitExceeded, "the predicate is nested more than \(PredicateParser.maxNestingDepth) levels deep",
                objectType: root.name)
        }
        if let translatable = node as? any PredicateTranslatable {
            let term = try translatable.translate(self)
            if term.isConstant, !(node is any PredicateLeaf), let expression = node as? any PredicateExpression,
                let value = Self.evaluate(expression)
            {
                return constant(value)
            }
            return term
        }
        // A node the engine has no counterpart for: usable only when it does not depend on the
        // object being tested.
        if let expression = node as? any PredicateExpression, let value = Self.evaluate(expression) {
            return constant(value)
        }
        throw unsupported(node)
    }

    /// Evaluates an expression that depends on no variable; nil when it cannot be evaluated.
    private static func evaluate(_ expression: any PredicateExpression) -> Any? {
        func open<E: PredicateExpression>(_ e: E) -> Any? {
            do {
                let value: E.Output = try e.evaluate(PredicateBindings())
                return value as Any
            } catch {
                return nil
            }
        }
        return open(expression)
    }

    /// A constant term.
    func constant(_ value: Any) -> PredicateTerm {
        if !isNilValue(value), let flag = value as? Bool {
            return PredicateTerm(.condition(.constant(flag)), isConstant: true)
        }
        return PredicateTerm(operand: .constant(value), isConstant: true)
    }

    // MARK: Variables

    func bind(_ variable: PredicateExpressions.VariableID, to term: PredicateTerm) {
        bindings[variable] = term
    }

    func lookUp(_ variable: PredicateExpressions.VariableID) throws(LiveObjectsError) -> PredicateTerm {
        guard let term = bindings[variable] else {
            throw LiveObjectsError(
                .invalidQuery, "the predicate uses a variable that is not bound at that place", objectType: root.name)
        }
        return term
    }

    /// A new subquery variable name.
    func newVariable() -> String {
        variableCount += 1
        return "e\(variableCount)"
    }

    // MARK: Errors

    func failure(_ message: String) -> LiveObjectsError {
        LiveObjectsError(.invalidQuery, message, objectType: root.name)
    }

    /// The error for a node that cannot be translated.
    func unsupported(_ node: Any) -> LiveObjectsError {
        let name = Self.nodeName(node)
        let hint: String
        switch name.split(separator: ".").last.map(String.init) ?? name {
        case "Arithmetic", "UnaryMinus", "IntDivision", "IntRemainder", "FloatDivision":
            hint =
                "arithmetic on properties cannot be evaluated by the query engine; compute the other side of the comparison instead"
        case "StringContainsRegex":
            hint = "regular expressions are not supported; use contains(_:) or starts(with:)"
        case "CollectionIndexSubscript", "CollectionRangeSubscript", "DictionaryKeySubscript",
            "DictionaryKeyDefaultValueSubscript":
            hint = "subscripts are not supported; use contains(where:), allSatisfy(_:) or filter(_:) on lists"
        case "TypeCheck", "ConditionalCast", "ForceCast":
            hint = "type casts are not supported"
        case "SequenceMaximum", "SequenceMinimum":
            hint = "max() and min() are supported on lists of values only"
        default:
            hint = "it has no counterpart in LiveObjects queries"
        }
        return failure("\(name) is not supported in a predicate on \(root.name): \(hint)")
    }

    /// The name of a node's type without module and generic arguments
    /// (`PredicateExpressions.Arithmetic`).
    static func nodeName(_ node: Any) -> String {
        var name = String(reflecting: type(of: node))
        if let angle = name.firstIndex(of: "<") { name = String(name[..<angle]) }
        let parts = name.split(separator: ".")
        if let index = parts.firstIndex(of: "PredicateExpressions") {
            return parts[index...].joined(separator: ".")
        }
        return parts.last.map(String.init) ?? name
    }

    // MARK: Conditions and values

    /// The predicate for a Boolean term.
    func predicate(of term: PredicateTerm) throws(LiveObjectsError) -> PredicateSyntax {
        switch term.body {
        case .condition(let p): return p
        case .value(let alternatives):
            var parts: [PredicateSyntax] = []
            for alternative in alternatives {
                parts.append(Self.and(alternative.condition, try truth(alternative.operand, is: true)))
            }
            return Self.or(parts)
        }
    }

    /// The predicate that a Boolean operand is `value`.
    func truth(_ operand: PredicateOperand, is value: Bool) throws(LiveObjectsError) -> PredicateSyntax {
        switch operand {
        case .constant(let constant):
            if isNilValue(constant) { return .constant(false) }
            guard let flag = constant as? Bool else { throw failure("\(constant) is not a Boolean value") }
            return .constant(flag == value)
        case .condition(let p):
            return value ? p : Self.not(p)
        case .path(let path):
            guard !path.isToMany else { throw failure("a list is not a Boolean value") }
            return .comparison(ComparisonSyntax(.direct, .keyPath(path.keyPath), .equal, [], .value(.bool(value))))
        case .aggregate(let expression, _):
            throw failure("\(expression) is not a Boolean value")
        }
    }

    /// The predicate that holds where an operand is nil.
    func isNil(_ operand: PredicateOperand) -> PredicateSyntax {
        switch operand {
        case .constant(let value): return .constant(isNilValue(value))
        case .condition: return .constant(false)
        case .path(let path):
            guard path.canBeNil, !path.isToMany else { return .constant(false) }
            return .comparison(ComparisonSyntax(.direct, .keyPath(path.keyPath), .equal, [], .value(.null)))
        case .aggregate(let expression, let canBeNil):
            guard canBeNil else { return .constant(false) }
            return .comparison(ComparisonSyntax(.direct, expression, .equal, [], .value(.null)))
        }
    }

    /// The predicate that holds where a term's value is nil.
    func isNil(_ term: PredicateTerm) -> PredicateSyntax {
        Self.or(term.alternatives.map { Self.and($0.condition, isNil($0.operand)) })
    }

    /// An operand as one side of a comparison.
    func expression(_ operand: PredicateOperand) throws(LiveObjectsError) -> ExpressionSyntax {
        switch operand {
        case .constant(let value): return .value(try propertyValue(value))
        case .aggregate(let expression, _): return expression
        case .condition(let p): throw failure("the condition \(p) cannot be compared with a value here")
        case .path(let path):
            guard !path.isToMany else {
                throw failure(
                    "the list \(path.keyPath) cannot be compared as a whole; use contains(_:), contains(where:), "
                        + "allSatisfy(_:) or count")
            }
            return .keyPath(path.keyPath)
        }
    }

    /// A Swift constant as a query value.
    func propertyValue(_ value: Any) throws(LiveObjectsError) -> PropertyValue {
        if let object = value as? Object {
            guard let handle = object._handle else {
                throw failure("an unmanaged object cannot be compared in a query")
            }
            guard handle.store === store else {
                throw LiveObjectsError(
                    .wrongRealm, "the object compared in the query belongs to another realm",
                    objectType: root.name)
            }
        }
        if isNilValue(value) { return .null }
        do {
            return try PropertyValue(argument: value)
        } catch {
            throw failure("a value of type \(type(of: value)) cannot be used in a query")
        }
    }

    // MARK: Comparisons

    /// Compares two terms, alternative by alternative.
    func compare(
        _ lhs: PredicateTerm, _ op: ComparisonOperator, _ rhs: PredicateTerm, options: ComparisonOptions = []
    ) throws(LiveObjectsError) -> PredicateTerm {
        let left = lhs.alternatives
        let right = rhs.alternatives
        try checkAlternatives(left.count * right.count)
        var parts: [PredicateSyntax] = []
        for a in left {
            for b in right {
                parts.append(Self.and(a.condition, b.condition, try compare(a.operand, op, b.operand, options)))
            }
        }
        return PredicateTerm(
            .condition(Self.or(parts)), failure: Self.or(lhs.failure, rhs.failure),
            isConstant: lhs.isConstant && rhs.isConstant)
    }

    /// Compares two operands.
    func compare(
        _ a: PredicateOperand, _ op: ComparisonOperator, _ b: PredicateOperand, _ options: ComparisonOptions
    ) throws(LiveObjectsError) -> PredicateSyntax {
        if case .constant(let x) = a, case .constant(let y) = b {
            let (x, y) = (try propertyValue(x), try propertyValue(y))
            return .constant(BoundComparison.apply(op, x, y, options))
        }
        var isCondition = false
        if case .condition = a { isCondition = true }
        if case .condition = b { isCondition = true }
        if isCondition {
            guard op == .equal || op == .notEqual else {
                throw failure("Boolean values cannot be compared with \(op.rawValue)")
            }
            let same = Self.or(
                Self.and(try truth(a, is: true), try truth(b, is: true)),
                Self.and(try truth(a, is: false), try truth(b, is: false)))
            return op == .equal ? same : Self.not(same)
        }
        if let exact = try mixedComparison(a, op, b, options) { return exact }
        return .comparison(ComparisonSyntax(.direct, try expression(a), op, options, try expression(b)))
    }

    /// A property compared with a constant `AnyValue`, by Swift's `==`: the kinds must be the
    /// same (`.int(3) != .double(3)`), where the query language compares numbers across kinds,
    /// so the comparison also compares `@type`. Nil for any other comparison.
    func mixedComparison(
        _ a: PredicateOperand, _ op: ComparisonOperator, _ b: PredicateOperand, _ options: ComparisonOptions
    ) throws(LiveObjectsError) -> PredicateSyntax? {
        let path: PathOperand
        let constant: Any
        switch (a, b) {
        case (.path(let p), .constant(let c)), (.constant(let c), .path(let p)): (path, constant) = (p, c)
        default: return nil
        }
        guard op == .equal || op == .notEqual, let value = constant as? AnyValue else { return nil }
        switch value {
        case .list, .dictionary:
            throw failure(
                "\(path.keyPath) cannot be compared with a whole nested list or dictionary; compare its kind or count")
        default: break
        }
        let kind = KeyPathSyntax(variable: path.keyPath.variable, path.keyPath.components + [KeyPathSyntax.typeStep])
        let same = Self.and(
            .comparison(
                ComparisonSyntax(.direct, .keyPath(path.keyPath), .equal, options, .value(value.propertyValue))),
            .comparison(ComparisonSyntax(.direct, .keyPath(kind), .equal, [], .value(.string(value.kindName)))))
        return op == .equal ? same : Self.not(same)
    }

    func checkAlternatives(_ count: Int) throws(LiveObjectsError) {
        if count > Self.maxAlternatives {
            throw LiveObjectsError(
                .limitExceeded,
                "the predicate combines more than \(Self.maxAlternatives) alternatives of optional or conditional values",
                objectType: root.name)
        }
    }

    // MARK: Paths

    /// The table and shape of a path that extends `base` by property names.
    func extend(_ base: PathOperand, by names: [String], valueType: Any.Type, keyPath: AnyKeyPath)
        throws(LiveObjectsError) -> PathOperand
    {
        guard let table = base.table else { throw failure("\(keyPath) does not start at an object") }
        let bound: BoundPath
        do {
            bound = try BoundPath.resolve(names, from: table, store: store)
        } catch {
            throw LiveObjectsError(error.code, error.message, objectType: error.objectType, property: error.property)
        }
        for step in bound.steps.dropLast() where step.isToMany {
            throw failure(
                "the key path \(keyPath) reads inside a list; use contains(where:), allSatisfy(_:) or filter(_:) instead"
            )
        }
        let isToMany = bound.steps.last?.isToMany ?? false
        guard isToMany == (valueType is any PredicateCountable.Type && valueType != String.self) else {
            throw failure("the key path \(keyPath) does not read a persisted property as it is")
        }
        return PathOperand(
            keyPath: KeyPathSyntax(variable: base.keyPath.variable, base.keyPath.components + names),
            table: bound.objectTable, isToMany: isToMany, filter: nil, canBeNil: isOptionalType(valueType))
    }

    /// `count` of a list (a subquery count when the list is filtered).
    func count(of path: PathOperand) -> ExpressionSyntax {
        if let filter = path.filter {
            return .collectionOperation(
                .count,
                collection: .subquery(collection: path.keyPath, variable: filter.variable, predicate: filter.predicate),
                property: [])
        }
        return .collectionOperation(.count, collection: .keyPath(path.keyPath), property: [])
    }

    /// The elements of a list as a subquery: the variable and the conditions already on it.
    func elements(of path: PathOperand) throws(LiveObjectsError) -> (
        variable: String, element: PathOperand, filter: PredicateSyntax
    ) {
        guard path.isToMany, let table = path.table else {
            throw failure("\(path.keyPath) is not a list of objects; closures over lists of values are not supported")
        }
        let variable = path.filter?.variable ?? newVariable()
        let element = PathOperand(
            keyPath: KeyPathSyntax(variable: variable, []), table: table, isToMany: false, filter: nil, canBeNil: false)
        return (variable, element, path.filter?.predicate ?? .constant(true))
    }

    /// `SUBQUERY(path, $variable, predicate).@count`.
    func subqueryCount(_ path: PathOperand, _ variable: String, _ predicate: PredicateSyntax) -> ExpressionSyntax {
        .collectionOperation(
            .count, collection: .subquery(collection: path.keyPath, variable: variable, predicate: predicate),
            property: [])
    }

    // MARK: Logic

    static func and(_ parts: PredicateSyntax...) -> PredicateSyntax { and(parts) }

    static func and(_ parts: [PredicateSyntax]) -> PredicateSyntax {
        var out: [PredicateSyntax] = []
        for part in parts {
            switch part {
            case .constant(true): continue
            case .constant(false): return .constant(false)
            case .and(let inner): out += inner
            default: out.append(part)
            }
        }
        return out.isEmpty ? .constant(true) : out.count == 1 ? out[0] : .and(out)
    }

    static func or(_ parts: PredicateSyntax...) -> PredicateSyntax { or(parts) }

    static func or(_ parts: [PredicateSyntax]) -> PredicateSyntax {
        var out: [PredicateSyntax] = []
        for part in parts {
            switch part {
            case .constant(false): continue
            case .constant(true): return .constant(true)
            case .or(let inner): out += inner
            default: out.append(part)
            }
        }
        return out.isEmpty ? .constant(false) : out.count == 1 ? out[0] : .or(out)
    }

    static func not(_ p: PredicateSyntax) -> PredicateSyntax {
        switch p {
        case .constant(let value): .constant(!value)
        case .not(let inner): inner
        default: .not(p)
        }
    }
}

// MARK: - Helpers

/// Nodes whose value is already a constant (no need to evaluate them again).
protocol PredicateLeaf {}

/// Whether a value is nil (an `Optional` holding nothing).
func isNilValue(_ value: Any) -> Bool {
    let mirror = Mirror(reflecting: value)
    return mirror.displayStyle == .optional && mirror.children.isEmpty
}

/// Whether a type is an `Optional`.
func isOptionalType(_ type: Any.Type) -> Bool {
    type is any OptionalMarker.Type
}

protocol OptionalMarker {}
extension Optional: OptionalMarker {}

/// Collections whose `count` and `isEmpty` key paths a predicate may read.
protocol PredicateCountable {
    static var countKeyPath: AnyKeyPath { get }
    static var isEmptyKeyPath: AnyKeyPath { get }
}

extension List: PredicateCountable {
    static var countKeyPath: AnyKeyPath { \List<Element>.count }
    static var isEmptyKeyPath: AnyKeyPath { \List<Element>.isEmpty }
}

extension MutableSet: PredicateCountable {
    static var countKeyPath: AnyKeyPath { \MutableSet<Element>.count }
    static var isEmptyKeyPath: AnyKeyPath { \MutableSet<Element>.isEmpty }
}

extension Map: PredicateCountable {
    static var countKeyPath: AnyKeyPath { \Map<Key, Value>.count }
    static var isEmptyKeyPath: AnyKeyPath { \Map<Key, Value>.isEmpty }
}

extension LinkingObjects: PredicateCountable {
    static var countKeyPath: AnyKeyPath { \LinkingObjects<Element>.count }
    static var isEmptyKeyPath: AnyKeyPath { \LinkingObjects<Element>.isEmpty }
}

extension Array: PredicateCountable {
    static var countKeyPath: AnyKeyPath { \Array<Element>.count }
    static var isEmptyKeyPath: AnyKeyPath { \Array<Element>.isEmpty }
}

extension String: PredicateCountable {
    static var countKeyPath: AnyKeyPath { \String.count }
    static var isEmptyKeyPath: AnyKeyPath { \String.isEmpty }
}

extension Object {
    /// The property names a key path of this model class reads, or nil when the key path does
    /// not start at this class.
    static func tracedNames(_ keyPath: AnyKeyPath, store: Store, table: Table) throws(LiveObjectsError) -> [String]? {
        guard let typed = keyPath as? PartialKeyPath<Self> else { return nil }
        return try store.propertyNames(of: typed, from: table)
    }
}

extension PredicateSyntax {
    /// The number of nodes of the tree (predicates, comparisons and expressions).
    var nodeCount: Int {
        switch self {
        case .constant: 1
        case .not(let p): 1 + p.nodeCount
        case .and(let ps), .or(let ps): 1 + ps.reduce(0) { $0 + $1.nodeCount }
        case .comparison(let c): 1 + c.lhs.nodeCount + c.rhs.nodeCount
        }
    }
}

extension ExpressionSyntax {
    var nodeCount: Int {
        switch self {
        case .value, .keyPath: 1
        case .collectionOperation(_, let collection, _): 1 + collection.nodeCount
        case .subquery(_, _, let predicate): 1 + predicate.nodeCount
        }
    }
}

// MARK: - Results

extension Results {
    /// Results that also match a Foundation predicate, such as one written with `#Predicate`.
    ///
    /// ```swift
    /// let dogs = try realm.objects(Dog.self).filter(#Predicate {
    ///     $0.age > 3 && $0.owner?.name == "Ann" && $0.toys.contains { $0.name.contains("ball") }
    /// })
    /// ```
    ///
    /// The predicate is translated into a LiveObjects query and evaluated by the query engine
    /// (with its indexes), not object by object. Its meaning is Swift's: comparisons with
    /// optionals, `??`, `?:`, `&&` and `||` behave as in Swift. Supported: `==`, `!=`, `<`, `<=`,
    /// `>`, `>=`, `&&`, `||`, `!`, `?:`, `??`, `?.`, `!`, key paths through persisted properties
    /// and links, `contains(_:)` and `starts(with:)` on strings, `contains(_:)` on captured
    /// sequences (`IN`) and on lists, ranges' `contains(_:)`, `contains(where:)`,
    /// `allSatisfy(_:)`, `filter(_:)`, `count` and `isEmpty` on lists, sets and maps, `count` on
    /// strings, `==` and `!=` with a constant `AnyValue` (the kinds must be the same, as Swift's
    /// `==` says), `max()` and `min()` on lists of values, and any expression that does not
    /// depend on the object being tested (computed once).
    ///
    /// Objects for which Foundation's own evaluation would throw (a forced unwrap that meets nil)
    /// are left out.
    ///
    /// - Parameter predicate: The predicate.
    /// - Returns: The results that also match the predicate.
    /// - Throws: `invalidQuery` naming the expression node that has no counterpart in the query
    ///   engine (arithmetic on properties, regular expressions, subscripts, casts, key paths that
    ///   do not read persisted properties) or for comparisons the schema refuses;
    ///   `limitExceeded` for a predicate nested too deeply or that translates into too large a
    ///   query; `wrongRealm` for an object of another realm used as a constant.
    public func filter(_ predicate: Predicate<Element>) throws(LiveObjectsError) -> Results {
        guard let table else { return self }
        let syntax = try FoundationPredicateTranslator.translate(predicate, table: table, store: store)
        return try adding(syntax, text: nil)
    }
}
