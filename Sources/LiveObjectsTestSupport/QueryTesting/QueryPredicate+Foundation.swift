import Foundation
import LiveObjects

// Random Foundation predicates for the randomized query test: the same random predicate trees
// built as `PredicateExpressions` nodes, where the shape allows. Closures over lists hold one
// comparison each (a closure's body must have one static type), and there are no `[c]`/`[d]`
// options, LIKE, ENDSWITH or aggregates, which Foundation predicates do not have on every
// platform. Optional values are compared in one of three Swift idioms chosen at random:
// `x != nil && x! < c`, `x.flatMap { $0 < c } ?? false` and `x == nil ? false : x! < c`.

typealias PE = PredicateExpressions
typealias BoolExpression = any StandardPredicateExpression<Bool>

func conjunction(_ a: BoolExpression, _ b: BoolExpression) -> BoolExpression {
    func open<A: StandardPredicateExpression<Bool>>(_ a: A) -> BoolExpression {
        func open2<B: StandardPredicateExpression<Bool>>(_ b: B) -> BoolExpression { PE.Conjunction(lhs: a, rhs: b) }
        return open2(b)
    }
    return open(a)
}

func disjunction(_ a: BoolExpression, _ b: BoolExpression) -> BoolExpression {
    func open<A: StandardPredicateExpression<Bool>>(_ a: A) -> BoolExpression {
        func open2<B: StandardPredicateExpression<Bool>>(_ b: B) -> BoolExpression { PE.Disjunction(lhs: a, rhs: b) }
        return open2(b)
    }
    return open(a)
}

func negation(_ a: BoolExpression) -> BoolExpression {
    func open<A: StandardPredicateExpression<Bool>>(_ a: A) -> BoolExpression { PE.Negation(a) }
    return open(a)
}

func swiftConstant<T>(_ value: PropertyValue, as type: T.Type) -> T? {
    switch value {
    case .int(let i): (Int(i) as? T) ?? (Double(i) as? T)
    case .double(let d): d as? T
    case .string(let s): s as? T
    case .date(let d): d as? T
    case .bool(let b): b as? T
    case .decimal(let d): d as? T
    case .objectID(let id): id as? T
    default: nil
    }
}

func comparisonOperator(_ op: QueryOperator) -> PE.ComparisonOperator? {
    switch op {
    case .less: .lessThan
    case .lessOrEqual: .lessThanOrEqual
    case .greater: .greaterThan
    case .greaterOrEqual: .greaterThanOrEqual
    default: nil
    }
}

/// A value expression of a random Foundation predicate.
protocol FoundationOperand {
    func compare(_ op: QueryOperator, _ constant: PropertyValue, form: Int) -> BoolExpression?
    func string(_ op: QueryOperator, _ pattern: String) -> BoolExpression?
}

/// A non-optional value.
struct PlainOperand<E: StandardPredicateExpression>: FoundationOperand where E.Output: Comparable & Codable & Sendable {
    let expression: E

    func compare(_ op: QueryOperator, _ constant: PropertyValue, form: Int) -> BoolExpression? {
        switch op {
        case .in:
            guard case .list(let items) = constant else { return nil }
            let values = items.compactMap { swiftConstant($0, as: E.Output.self) }
            return PE.SequenceContains(sequence: PE.Value(values), element: expression)
        case .between:
            guard case .list(let bounds) = constant, bounds.count == 2,
                let low = swiftConstant(bounds[0], as: E.Output.self),
                let high = swiftConstant(bounds[1], as: E.Output.self)
            else { return nil }
            if low > high {
                return conjunction(
                    PE.Comparison(lhs: PE.Value(low), rhs: expression, op: .lessThanOrEqual),
                    PE.Comparison(lhs: expression, rhs: PE.Value(high), op: .lessThanOrEqual))
            }
            if form == 0 { return PE.RangeExpressionContains(range: PE.Value(low...high), element: expression) }
            return PE.RangeExpressionContains(
                range: PE.ClosedRange(lower: PE.Value(low), upper: PE.Value(high)),
                element: expression)
        default:
            guard let c = swiftConstant(constant, as: E.Output.self) else { return nil }
            if op == .equal { return PE.Equal(lhs: expression, rhs: PE.Value(c)) }
            if op == .notEqual { return PE.NotEqual(lhs: expression, rhs: PE.Value(c)) }
            guard let peOp = comparisonOperator(op) else { return nil }
            return PE.Comparison(lhs: expression, rhs: PE.Value(c), op: peOp)
        }
    }

    func string(_ op: QueryOperator, _ pattern: String) -> BoolExpression? { nil }
}

/// A Boolean value (equality only).
struct BoolOperand<E: StandardPredicateExpression>: FoundationOperand where E.Output == Bool {
    let expression: E

    func compare(_ op: QueryOperator, _ constant: PropertyValue, form: Int) -> BoolExpression? {
        guard case .bool(let b) = constant else { return nil }
        if op == .equal { return PE.Equal(lhs: expression, rhs: PE.Value(b)) }
        if op == .notEqual { return PE.NotEqual(lhs: expression, rhs: PE.Value(b)) }
        return nil
    }

    func string(_ op: QueryOperator, _ pattern: String) -> BoolExpression? { nil }
}

/// A non-optional string.
struct StringOperand<E: StandardPredicateExpression>: FoundationOperand where E.Output == String {
    let expression: E

    func compare(_ op: QueryOperator, _ constant: PropertyValue, form: Int) -> BoolExpression? {
        PlainOperand(expression: expression).compare(op, constant, form: form)
    }

    func string(_ op: QueryOperator, _ pattern: String) -> BoolExpression? {
        switch op {
        case .contains: PE.CollectionContainsCollection(base: expression, other: PE.Value(pattern))
        case .beginsWith: PE.SequenceStartsWith(base: expression, prefix: PE.Value(pattern))
        default: nil
        }
    }
}

/// An optional value.
struct OptionalOperand<E: StandardPredicateExpression, W>: FoundationOperand
where E.Output == W?, W: Comparable & Codable & Sendable {
    let expression: E

    func compare(_ op: QueryOperator, _ constant: PropertyValue, form: Int) -> BoolExpression? {
        switch op {
        case .equal, .notEqual:
            let value: W? = swiftConstant(constant, as: W.self)
            if value == nil && !constant.isNull { return nil }
            if constant.isNull && form == 1 {
                return op == .equal
                    ? PE.Equal(lhs: expression, rhs: PE.NilLiteral<W>())
                    : PE.NotEqual(lhs: expression, rhs: PE.NilLiteral<W>())
            }
            return op == .equal
                ? PE.Equal(lhs: expression, rhs: PE.Value(value)) : PE.NotEqual(lhs: expression, rhs: PE.Value(value))
        case .in:
            guard case .list(let items) = constant else { return nil }
            let values: [W?] = items.map { swiftConstant($0, as: W.self) }
            return PE.SequenceContains(sequence: PE.Value(values), element: expression)
        case .between:
            guard case .list(let bounds) = constant, bounds.count == 2,
                let low = swiftConstant(bounds[0], as: W.self), let high = swiftConstant(bounds[1], as: W.self),
                low <= high
            else { return nil }
            return PE.NilCoalesce(
                lhs: PE.OptionalFlatMap(expression) { x in
                    PE.RangeExpressionContains(
                        range: PE.ClosedRange(lower: PE.Value(low), upper: PE.Value(high)), element: x)
                },
                rhs: PE.Value(false))
        default:
            guard let c = swiftConstant(constant, as: W.self), let peOp = comparisonOperator(op) else { return nil }
            switch form {
            case 0:
                return PE.Conjunction(
                    lhs: PE.NotEqual(lhs: expression, rhs: PE.NilLiteral<W>()),
                    rhs: PE.Comparison(lhs: PE.ForcedUnwrap(expression), rhs: PE.Value(c), op: peOp))
            case 1:
                return PE.NilCoalesce(
                    lhs: PE.OptionalFlatMap(expression) { x in PE.Comparison(lhs: x, rhs: PE.Value(c), op: peOp) },
                    rhs: PE.Value(false))
            default:
                return PE.Conditional(
                    test: PE.Equal(lhs: expression, rhs: PE.NilLiteral<W>()), trueBranch: PE.Value(false),
                    falseBranch: PE.Comparison(lhs: PE.ForcedUnwrap(expression), rhs: PE.Value(c), op: peOp))
            }
        }
    }

    func string(_ op: QueryOperator, _ pattern: String) -> BoolExpression? {
        guard W.self == String.self else { return nil }
        func open<S: StandardPredicateExpression>(_ e: S) -> BoolExpression? where S.Output == String? {
            switch op {
            case .contains:
                PE.NilCoalesce(
                    lhs: PE.OptionalFlatMap(e) { s in PE.CollectionContainsCollection(base: s, other: PE.Value(pattern))
                    },
                    rhs: PE.Value(false))
            case .beginsWith:
                PE.NilCoalesce(
                    lhs: PE.OptionalFlatMap(e) { s in PE.SequenceStartsWith(base: s, prefix: PE.Value(pattern)) },
                    rhs: PE.Value(false))
            default: nil
            }
        }
        return (expression as? any StandardPredicateExpression<String?>).flatMap { open($0) }
    }
}

/// Builds Foundation predicates from random predicate trees, where the shape allows.
struct FoundationBuilder {
    let root: PE.Variable<QPItem>
    /// Picks the Swift idiom for optional comparisons.
    var form: Int

    typealias Item = PE.Variable<QPItem>

    func build(_ p: QueryPredicate) -> BoolExpression? {
        switch p {
        case .constant(let b): return PE.Value(b)
        case .not(let inner): return build(inner).map(negation)
        case .and(let ps), .or(let ps):
            var result: BoolExpression?
            for part in ps {
                guard let e = build(part) else { return nil }
                if let current = result {
                    if case .and = p { result = conjunction(current, e) } else { result = disjunction(current, e) }
                } else {
                    result = e
                }
            }
            return result
        case .compare(let quantifier, let lhs, let op, let options, let rhs):
            guard options.isEmpty, case .constant(let constant) = rhs else { return nil }
            switch lhs {
            case .field(let field):
                guard quantifier == .direct, !field.isOutsideFoundation else { return nil }
                return leaf(operand(field), op, constant)
            case .many(let list, let field):
                return quantified(list, field, quantifier, op, constant)
            case .count(let list):
                guard quantifier == .direct, op != .in, op != .between, !list.isLong else { return nil }
                return count(list).compare(op, constant, form: form)
            case .subquery(let list, .compare(.direct, .element(let field), let innerOp, [], .constant(let c))):
                guard quantifier == .direct, op != .in, op != .between else { return nil }
                return subqueryCount(list, field, innerOp, c)?.compare(op, constant, form: form)
            default:
                return nil
            }
        }
    }

    func leaf(_ operand: any FoundationOperand, _ op: QueryOperator, _ constant: PropertyValue) -> BoolExpression? {
        if op.isStringOperation {
            guard case .string(let pattern) = constant else { return nil }
            return operand.string(op, pattern)
        }
        return operand.compare(op, constant, form: form)
    }

    func flatMapOptional<W, R>(
        _ wrapped: some StandardPredicateExpression<W?>, _ keyPath: any KeyPath<W, R?> & Sendable
    )
        -> some StandardPredicateExpression<R?>
    {
        PE.OptionalFlatMap(wrapped) { (w: PE.Variable<W>) -> PE.KeyPath<PE.Variable<W>, R?> in
            PE.KeyPath(root: w, keyPath: keyPath)
        }
    }

    func flatMapValue<W, R>(_ wrapped: some StandardPredicateExpression<W?>, _ keyPath: any KeyPath<W, R> & Sendable)
        -> some StandardPredicateExpression<R?>
    {
        PE.OptionalFlatMap(wrapped) { (w: PE.Variable<W>) -> PE.KeyPath<PE.Variable<W>, R> in
            PE.KeyPath(root: w, keyPath: keyPath)
        }
    }

    func operand(_ field: ItemField) -> any FoundationOperand {
        let owner = PE.KeyPath(root: root, keyPath: \QPItem.owner)
        switch field {
        case .settingsTheme, .settingsFont, .palsLeadName, .palsLeadScore, .payload, .payloadKind, .extrasLevel,
            .extrasLevelKind:
            preconditionFailure("a map's value by key and an AnyValue have no Foundation predicate")
        case .id: return PlainOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.id))
        case .int: return PlainOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.int))
        case .optInt: return OptionalOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.optInt))
        case .double: return PlainOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.double))
        case .string: return StringOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.string))
        case .optString: return OptionalOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.optString))
        case .flag: return BoolOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.flag))
        case .date: return PlainOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.date))
        case .code: return StringOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.code))
        case .price: return PlainOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.price))
        case .optPrice: return OptionalOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.optPrice))
        case .ref: return PlainOperand(expression: PE.KeyPath(root: root, keyPath: \QPItem.ref))
        case .ownerName: return OptionalOperand(expression: flatMapValue(owner, \QPOwner.name))
        case .ownerScore: return OptionalOperand(expression: flatMapOptional(owner, \QPOwner.score))
        case .ownerID: return OptionalOperand(expression: flatMapValue(owner, \QPOwner.id))
        case .favoriteInt:
            return OptionalOperand(
                expression: PE.OptionalFlatMap(owner) { o in
                    flatMapValue(PE.KeyPath(root: o, keyPath: \QPOwner.favorite), \QPItem.int)
                })
        case .favoriteString:
            return OptionalOperand(
                expression: PE.OptionalFlatMap(owner) { o in
                    flatMapValue(PE.KeyPath(root: o, keyPath: \QPOwner.favorite), \QPItem.string)
                })
        }
    }

    func count(_ list: ListPath) -> any FoundationOperand {
        switch list {
        case .tags:
            return PlainOperand(
                expression: PE.KeyPath(
                    root: PE.KeyPath(root: root, keyPath: \QPItem.tags), keyPath: \List<QPTag>.count))
        case .fans:
            return PlainOperand(
                expression: PE.KeyPath(
                    root: PE.KeyPath(root: root, keyPath: \QPItem.fans), keyPath: \LinkingObjects<QPOwner>.count))
        case .ownerItems:
            // No owner: no items.
            return PlainOperand(
                expression: PE.NilCoalesce(
                    lhs: PE.OptionalFlatMap(PE.KeyPath(root: root, keyPath: \QPItem.owner)) { o in
                        PE.KeyPath(
                            root: PE.KeyPath(root: o, keyPath: \QPOwner.items), keyPath: \LinkingObjects<QPItem>.count)
                    },
                    rhs: PE.Value(0)))
        case .ownerItemsLong, .fansFavoriteTags:
            preconditionFailure("no Foundation predicate is built for long paths")
        }
    }

    /// `ANY`/`ALL`/`NONE` with one comparison on an element property.
    func quantified(
        _ list: ListPath, _ field: ElementField, _ quantifier: RandomQuantifier, _ op: QueryOperator,
        _ constant: PropertyValue
    )
        -> BoolExpression?
    {
        switch (list, field) {
        case (.tags, .tagID):
            return each(PE.KeyPath(root: root, keyPath: \QPItem.tags), \QPTag.id, quantifier, op, constant)
        case (.tags, .weight):
            return each(PE.KeyPath(root: root, keyPath: \QPItem.tags), \QPTag.weight, quantifier, op, constant)
        case (.tags, .label):
            return eachString(PE.KeyPath(root: root, keyPath: \QPItem.tags), \QPTag.label, quantifier, op, constant)
        case (.tags, .rating):
            return eachOptional(PE.KeyPath(root: root, keyPath: \QPItem.tags), \QPTag.rating, quantifier, op, constant)
        case (.fans, .ownerName):
            return eachString(PE.KeyPath(root: root, keyPath: \QPItem.fans), \QPOwner.name, quantifier, op, constant)
        case (.fans, .score):
            return eachOptional(PE.KeyPath(root: root, keyPath: \QPItem.fans), \QPOwner.score, quantifier, op, constant)
        default: return nil
        }
    }

    func quantify<S: StandardPredicateExpression, R: StandardPredicateExpression<Bool>>(
        _ sequence: S, _ quantifier: RandomQuantifier, _ body: (PE.Variable<S.Output.Element>) -> R
    ) -> BoolExpression where S.Output: Sequence {
        switch quantifier {
        case .any, .direct: PE.SequenceContainsWhere(sequence, builder: body)
        case .all: PE.SequenceAllSatisfy(sequence, builder: body)
        case .none: PE.Negation(PE.SequenceContainsWhere(sequence, builder: body))
        }
    }

    func each<S: StandardPredicateExpression, V: Comparable & Codable & Sendable>(
        _ sequence: S, _ keyPath: any KeyPath<S.Output.Element, V> & Sendable, _ quantifier: RandomQuantifier,
        _ op: QueryOperator,
        _ constant: PropertyValue
    ) -> BoolExpression? where S.Output: Sequence {
        guard let c = swiftConstant(constant, as: V.self) else { return nil }
        if op == .equal {
            return quantify(sequence, quantifier) { e in
                PE.Equal(lhs: PE.KeyPath(root: e, keyPath: keyPath), rhs: PE.Value(c))
            }
        }
        if op == .notEqual {
            return quantify(sequence, quantifier) { e in
                PE.NotEqual(lhs: PE.KeyPath(root: e, keyPath: keyPath), rhs: PE.Value(c))
            }
        }
        guard let peOp = comparisonOperator(op) else { return nil }
        return quantify(sequence, quantifier) { e in
            PE.Comparison(lhs: PE.KeyPath(root: e, keyPath: keyPath), rhs: PE.Value(c), op: peOp)
        }
    }

    func eachString<S: StandardPredicateExpression>(
        _ sequence: S, _ keyPath: any KeyPath<S.Output.Element, String> & Sendable, _ quantifier: RandomQuantifier,
        _ op: QueryOperator,
        _ constant: PropertyValue
    ) -> BoolExpression? where S.Output: Sequence {
        guard case .string(let pattern) = constant else { return nil }
        switch op {
        case .contains:
            return quantify(sequence, quantifier) { e in
                PE.CollectionContainsCollection(base: PE.KeyPath(root: e, keyPath: keyPath), other: PE.Value(pattern))
            }
        case .beginsWith:
            return quantify(sequence, quantifier) { e in
                PE.SequenceStartsWith(base: PE.KeyPath(root: e, keyPath: keyPath), prefix: PE.Value(pattern))
            }
        default:
            return each(sequence, keyPath, quantifier, op, constant)
        }
    }

    func eachOptional<S: StandardPredicateExpression, W: Comparable & Codable & Sendable>(
        _ sequence: S, _ keyPath: any KeyPath<S.Output.Element, W?> & Sendable, _ quantifier: RandomQuantifier,
        _ op: QueryOperator,
        _ constant: PropertyValue
    ) -> BoolExpression? where S.Output: Sequence {
        let value: W? = swiftConstant(constant, as: W.self)
        if value == nil && !constant.isNull { return nil }
        if op == .equal {
            return quantify(sequence, quantifier) { e in
                PE.Equal(lhs: PE.KeyPath(root: e, keyPath: keyPath), rhs: PE.Value(value))
            }
        }
        if op == .notEqual {
            return quantify(sequence, quantifier) { e in
                PE.NotEqual(lhs: PE.KeyPath(root: e, keyPath: keyPath), rhs: PE.Value(value))
            }
        }
        guard let c = value, let peOp = comparisonOperator(op) else { return nil }
        return quantify(sequence, quantifier) { e in
            PE.NilCoalesce(
                lhs: PE.OptionalFlatMap(PE.KeyPath(root: e, keyPath: keyPath)) { x in
                    PE.Comparison(lhs: x, rhs: PE.Value(c), op: peOp)
                },
                rhs: PE.Value(false))
        }
    }

    /// `filter { one comparison }.count`.
    func subqueryCount(_ list: ListPath, _ field: ElementField, _ op: QueryOperator, _ constant: PropertyValue) -> (
        any FoundationOperand
    )? {
        func filtered<S: StandardPredicateExpression, V: Comparable & Codable & Sendable>(
            _ sequence: S, _ keyPath: any KeyPath<S.Output.Element, V> & Sendable
        ) -> (any FoundationOperand)? where S.Output: Sequence {
            guard let c = swiftConstant(constant, as: V.self) else { return nil }
            if op == .equal {
                return PlainOperand(
                    expression: PE.KeyPath(
                        root: PE.Filter(sequence) { e in
                            PE.Equal(lhs: PE.KeyPath(root: e, keyPath: keyPath), rhs: PE.Value(c))
                        },
                        keyPath: \[S.Output.Element].count))
            }
            guard let peOp = comparisonOperator(op) else { return nil }
            return PlainOperand(
                expression: PE.KeyPath(
                    root: PE.Filter(sequence) { e in
                        PE.Comparison(lhs: PE.KeyPath(root: e, keyPath: keyPath), rhs: PE.Value(c), op: peOp)
                    },
                    keyPath: \[S.Output.Element].count))
        }
        switch (list, field) {
        case (.tags, .weight): return filtered(PE.KeyPath(root: root, keyPath: \QPItem.tags), \QPTag.weight)
        case (.tags, .label): return filtered(PE.KeyPath(root: root, keyPath: \QPItem.tags), \QPTag.label)
        case (.tags, .tagID): return filtered(PE.KeyPath(root: root, keyPath: \QPItem.tags), \QPTag.id)
        case (.fans, .ownerName): return filtered(PE.KeyPath(root: root, keyPath: \QPItem.fans), \QPOwner.name)
        default: return nil
        }
    }
}
