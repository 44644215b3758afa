import Foundation

// The `PredicateExpressions` node types LiveObjects translates (see FoundationPredicate.swift).

typealias Translator = FoundationPredicateTranslator

// MARK: - Leaves

extension PredicateExpressions.Value: PredicateTranslatable, PredicateLeaf {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        t.constant(value as Any)
    }
}

extension PredicateExpressions.NilLiteral: PredicateTranslatable, PredicateLeaf {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        t.constant(Wrapped?.none as Any)
    }
}

extension PredicateExpressions.Variable: PredicateTranslatable, PredicateLeaf {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        try t.lookUp(key)
    }
}

// MARK: - Key paths

extension PredicateExpressions.KeyPath: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let base = try t.translate(root)
        var alternatives: [PredicateAlternative] = []
        for alternative in base.alternatives {
            let operand = try t.member(
                keyPath as AnyKeyPath, of: alternative.operand, rootType: Root.Output.self,
                valueType: Output.self)
            alternatives.append(PredicateAlternative(condition: alternative.condition, operand: operand))
        }
        if Output.self == Bool.self {
            // A Boolean property read as a condition.
            return PredicateTerm(
                .condition(try t.predicate(of: PredicateTerm(.value(alternatives)))),
                failure: base.failure, isConstant: base.isConstant)
        }
        return PredicateTerm(.value(alternatives), failure: base.failure, isConstant: base.isConstant)
    }
}

extension Translator {
    /// The value a key path reads from an operand.
    func member(_ keyPath: AnyKeyPath, of operand: PredicateOperand, rootType: Any.Type, valueType: Any.Type)
        throws(LiveObjectsError) -> PredicateOperand
    {
        switch operand {
        case .constant(let value):
            if isNilValue(value) { return .constant(Optional<Int>.none as Any) }
            guard let result = value[keyPath: keyPath] else {
                throw failure("the key path \(keyPath) cannot be applied to \(type(of: value))")
            }
            return .constant(result)
        case .path(let path):
            if let model = rootType as? Object.Type, let table = path.table, !path.isToMany {
                guard let names = try model.tracedNames(keyPath, store: store, table: table) else {
                    throw failure("the key path \(keyPath) does not start at \(table.name)")
                }
                return .path(try extend(path, by: names, valueType: valueType, keyPath: keyPath))
            }
            if let countable = rootType as? any PredicateCountable.Type {
                let isString = rootType == String.self
                guard path.isToMany || isString else { break }
                let count: ExpressionSyntax =
                    isString
                    ? .collectionOperation(.size, collection: .keyPath(path.keyPath), property: [])
                    : self.count(of: path)
                if keyPath == countable.countKeyPath {
                    return .aggregate(count, canBeNil: false)
                }
                if keyPath == countable.isEmptyKeyPath {
                    if isString {
                        return .condition(
                            .comparison(
                                ComparisonSyntax(.direct, .keyPath(path.keyPath), .equal, [], .value(.string("")))))
                    }
                    return .condition(.comparison(ComparisonSyntax(.direct, count, .equal, [], .value(.int(0)))))
                }
                throw failure(
                    "the key path \(keyPath) is not supported on \(isString ? "a string" : "a list"): "
                        + "only count and isEmpty are")
            }
        case .aggregate, .condition:
            break
        }
        throw failure("the key path \(keyPath) cannot be read from \(rootType) in a query")
    }
}

// MARK: - Comparisons

extension PredicateExpressions.Equal: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        try t.compare(t.translate(lhs), .equal, t.translate(rhs))
    }
}

extension PredicateExpressions.NotEqual: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        try t.compare(t.translate(lhs), .notEqual, t.translate(rhs))
    }
}

extension PredicateExpressions.Comparison: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let engineOperator: ComparisonOperator =
            if op == .lessThan { .lessThan } else if op == .lessThanOrEqual {
                .lessThanOrEqual
            } else if op == .greaterThan { .greaterThan } else if op == .greaterThanOrEqual { .greaterThanOrEqual } else
            { throw t.failure("the comparison operator \(op) is not supported") }
        return try t.compare(t.translate(lhs), engineOperator, t.translate(rhs))
    }
}

// MARK: - Logic

extension PredicateExpressions.Conjunction: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let a = try t.translate(lhs)
        let b = try t.translate(rhs)
        let (p, q) = (try t.predicate(of: a), try t.predicate(of: b))
        // The right side is evaluated only when the left one holds.
        return PredicateTerm(
            .condition(Translator.and(p, q)), failure: Translator.or(a.failure, Translator.and(p, b.failure)),
            isConstant: a.isConstant && b.isConstant)
    }
}

extension PredicateExpressions.Disjunction: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let a = try t.translate(lhs)
        let b = try t.translate(rhs)
        let (p, q) = (try t.predicate(of: a), try t.predicate(of: b))
        // The right side is evaluated only when the left one does not hold.
        return PredicateTerm(
            .condition(Translator.or(p, q)),
            failure: Translator.or(a.failure, Translator.and(Translator.not(p), b.failure)),
            isConstant: a.isConstant && b.isConstant)
    }
}

extension PredicateExpressions.Negation: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let a = try t.translate(wrapped)
        return PredicateTerm(
            .condition(Translator.not(try t.predicate(of: a))), failure: a.failure, isConstant: a.isConstant)
    }
}

extension PredicateExpressions.Conditional: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let test = try t.translate(self.test)
        let a = try t.translate(trueBranch)
        let b = try t.translate(falseBranch)
        let p = try t.predicate(of: test)
        let failure = Translator.or(
            test.failure, Translator.and(p, a.failure), Translator.and(Translator.not(p), b.failure))
        let isConstant = test.isConstant && a.isConstant && b.isConstant
        if If.Output.self == Bool.self {
            let condition = Translator.or(
                Translator.and(p, try t.predicate(of: a)), Translator.and(Translator.not(p), try t.predicate(of: b)))
            return PredicateTerm(.condition(condition), failure: failure, isConstant: isConstant)
        }
        var alternatives: [PredicateAlternative] = []
        for alternative in a.alternatives {
            alternatives.append(
                PredicateAlternative(
                    condition: Translator.and(p, alternative.condition),
                    operand: alternative.operand))
        }
        for alternative in b.alternatives {
            alternatives.append(
                PredicateAlternative(
                    condition: Translator.and(Translator.not(p), alternative.condition),
                    operand: alternative.operand))
        }
        try t.checkAlternatives(alternatives.count)
        return PredicateTerm(.value(alternatives), failure: failure, isConstant: isConstant)
    }
}

// MARK: - Optionals

extension PredicateExpressions.NilCoalesce: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let a = try t.translate(lhs)
        let b = try t.translate(rhs)
        var alternatives: [PredicateAlternative] = []
        for alternative in a.alternatives {
            let isNil = t.isNil(alternative.operand)
            if isNil != .constant(true) {
                alternatives.append(
                    PredicateAlternative(
                        condition: Translator.and(alternative.condition, Translator.not(isNil)),
                        operand: alternative.operand.unwrapped))
            }
            if isNil != .constant(false) {
                for fallback in b.alternatives {
                    alternatives.append(
                        PredicateAlternative(
                            condition: Translator.and(alternative.condition, isNil, fallback.condition),
                            operand: fallback.operand))
                }
            }
        }
        try t.checkAlternatives(alternatives.count)
        let failure = Translator.or(a.failure, Translator.and(t.isNil(a), b.failure))
        let term = PredicateTerm(.value(alternatives), failure: failure, isConstant: a.isConstant && b.isConstant)
        if RHS.Output.self == Bool.self {
            return PredicateTerm(.condition(try t.predicate(of: term)), failure: failure, isConstant: term.isConstant)
        }
        return term
    }
}

extension PredicateExpressions.ForcedUnwrap: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let a = try t.translate(inner)
        // Foundation's evaluation throws where the value is nil.
        let failure = Translator.or(a.failure, t.isNil(a))
        let alternatives = a.alternatives.map {
            PredicateAlternative(condition: $0.condition, operand: $0.operand.unwrapped)
        }
        let term = PredicateTerm(.value(alternatives), failure: failure, isConstant: a.isConstant)
        if Wrapped.self == Bool.self {
            return PredicateTerm(.condition(try t.predicate(of: term)), failure: failure, isConstant: a.isConstant)
        }
        return term
    }
}

extension PredicateExpressions.OptionalFlatMap: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let a = try t.translate(wrapped)
        var alternatives: [PredicateAlternative] = []
        var failure = a.failure
        for alternative in a.alternatives {
            let isNil = t.isNil(alternative.operand)
            if isNil == .constant(true) {
                alternatives.append(alternative)
                continue
            }
            let present = Translator.and(alternative.condition, Translator.not(isNil))
            t.bind(variable.key, to: PredicateTerm(operand: alternative.operand.unwrapped))
            let b = try t.translate(transform)
            failure = Translator.or(failure, Translator.and(present, b.failure))
            // A key path that continues a path: the engine's value is already nil where
            // Swift's is (a nil link gives nil).
            if b.alternatives.count == 1, case .path(let outer) = alternative.operand,
                case .path(var inner) = b.alternatives[0].operand, b.alternatives[0].condition == .constant(true),
                !inner.isToMany, inner.keyPath.variable == outer.keyPath.variable,
                inner.keyPath.components.starts(with: outer.keyPath.components)
            {
                inner.canBeNil = true
                alternatives.append(PredicateAlternative(condition: alternative.condition, operand: .path(inner)))
                continue
            }
            for result in b.alternatives {
                alternatives.append(
                    PredicateAlternative(
                        condition: Translator.and(present, result.condition), operand: result.operand))
            }
            if isNil != .constant(false) {
                alternatives.append(
                    PredicateAlternative(
                        condition: Translator.and(alternative.condition, isNil),
                        operand: .constant(Optional<Int>.none as Any)))
            }
        }
        try t.checkAlternatives(alternatives.count)
        return PredicateTerm(.value(alternatives), failure: failure, isConstant: false)
    }
}

extension PredicateOperand {
    /// The operand where it is known not to be nil.
    var unwrapped: PredicateOperand {
        switch self {
        case .path(var path):
            path.canBeNil = false
            return .path(path)
        case .aggregate(let expression, _):
            return .aggregate(expression, canBeNil: false)
        default:
            return self
        }
    }
}

// MARK: - Strings

extension PredicateExpressions.CollectionContainsCollection: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        guard Base.Output.self == String.self, Other.Output.self == String.self else {
            throw t.failure("contains(_:) with a sequence argument is supported on strings only")
        }
        return try t.compare(t.translate(base), .contains, t.translate(other))
    }
}

extension PredicateExpressions.SequenceStartsWith: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        guard Base.Output.self == String.self, Prefix.Output.self == String.self else {
            throw t.failure("starts(with:) is supported on strings only")
        }
        return try t.compare(t.translate(base), .beginsWith, t.translate(prefix))
    }
}

#if canImport(Darwin)
    // Only Apple's Foundation has these nodes; they are not built on other platforms.
    extension PredicateExpressions.StringLocalizedStandardContains: PredicateTranslatable {
        func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
            try t.compare(
                t.translate(root), .contains, t.translate(other), options: [.caseInsensitive, .diacriticInsensitive])
        }
    }
#endif

// MARK: - Sequences

extension PredicateExpressions.SequenceContains: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let sequence = try t.translate(self.sequence)
        let element = try t.translate(self.element)
        if LHS.Output.self == String.self {
            // A string and a Character.
            guard element.alternatives.count == 1, case .constant(let value) = element.alternatives[0].operand,
                let character = value as? Character
            else {
                throw t.failure("contains(_:) on a string needs a constant character or string")
            }
            return try t.compare(sequence, .contains, t.constant(String(character)))
        }
        var parts: [PredicateSyntax] = []
        try t.checkAlternatives(sequence.alternatives.count * element.alternatives.count)
        for s in sequence.alternatives {
            for e in element.alternatives {
                parts.append(Translator.and(s.condition, e.condition, try t.contains(s.operand, e.operand)))
            }
        }
        return PredicateTerm(
            .condition(Translator.or(parts)), failure: Translator.or(sequence.failure, element.failure),
            isConstant: sequence.isConstant && element.isConstant)
    }
}

extension Translator {
    /// Whether a sequence contains an element.
    func contains(_ sequence: PredicateOperand, _ element: PredicateOperand) throws(LiveObjectsError) -> PredicateSyntax
    {
        switch sequence {
        case .constant(let value):
            let items = try sequenceItems(value)
            if case .condition = element {
                var parts: [PredicateSyntax] = []
                for item in items { parts.append(try compare(element, .equal, .constant(item), [])) }
                return Self.or(parts)
            }
            var values: [PropertyValue] = []
            for item in items { values.append(try propertyValue(item)) }
            return .comparison(ComparisonSyntax(.direct, try expression(element), .in, [], .value(.list(values))))
        case .path(let path) where path.isToMany:
            if path.filter == nil {
                return .comparison(ComparisonSyntax(.any, .keyPath(path.keyPath), .equal, [], try expression(element)))
            }
            let (variable, item, filter) = try elements(of: path)
            let test = try compare(.path(item), .equal, element, [])
            return .comparison(
                ComparisonSyntax(
                    .direct, subqueryCount(path, variable, Self.and(filter, test)), .greaterThan, [], .value(.int(0))))
        default:
            break
        }
        throw failure("contains(_:) is supported on lists, strings and captured sequences only")
    }

    /// The elements of a captured sequence.
    func sequenceItems(_ value: Any) throws(LiveObjectsError) -> [Any] {
        func open<S: Sequence>(_ s: S) -> [Any] { s.map { $0 as Any } }
        guard let sequence = value as? any Sequence else { throw failure("\(type(of: value)) is not a sequence") }
        return open(sequence)
    }
}

extension PredicateExpressions.SequenceContainsWhere: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        try t.quantified(sequence: sequence, variable: variable.key, test: test, all: false)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        try t.quantified(sequence: sequence, variable: variable.key, test: test, all: true)
    }
}

extension Translator {
    /// The most elements of a captured sequence that a closure is unrolled over.
    static let maxUnrolledElements = 1_000

    /// `contains(where:)` (`all == false`) or `allSatisfy(_:)`.
    func quantified(sequence node: Any, variable: PredicateExpressions.VariableID, test: Any, all: Bool)
        throws(LiveObjectsError) -> PredicateTerm
    {
        let sequence = try translate(node)
        var parts: [PredicateSyntax] = []
        var failure = sequence.failure
        for alternative in sequence.alternatives {
            switch alternative.operand {
            case .constant(let value):
                // A captured sequence: one test per element.
                let items = try sequenceItems(value)
                if items.count > Self.maxUnrolledElements {
                    throw self.failure(
                        "a closure over a captured sequence of more than \(Self.maxUnrolledElements) elements is not supported"
                    )
                }
                var tests: [PredicateSyntax] = []
                // Swift stops at the first element that decides: an element's test is evaluated
                // only when every test before it went the other way.
                var reached: PredicateSyntax = .constant(true)
                for item in items {
                    bind(variable, to: constant(item))
                    let term = try translate(test)
                    let p = try predicate(of: term)
                    failure = Self.or(failure, Self.and(alternative.condition, reached, term.failure))
                    reached = Self.and(reached, all ? p : Self.not(p))
                    tests.append(p)
                }
                parts.append(Self.and(alternative.condition, all ? Self.and(tests) : Self.or(tests)))
            case .path(let path) where path.isToMany:
                let (name, element, filter) = try elements(of: path)
                bind(variable, to: PredicateTerm(operand: .path(element)))
                let term = try translate(test)
                let p = try predicate(of: term)
                let matching: PredicateSyntax
                if all {
                    matching = .comparison(
                        ComparisonSyntax(
                            .direct, subqueryCount(path, name, Self.and(filter, Self.not(p))), .equal, [],
                            .value(.int(0))))
                } else {
                    matching = .comparison(
                        ComparisonSyntax(
                            .direct, subqueryCount(path, name, Self.and(filter, p)), .greaterThan, [], .value(.int(0))))
                }
                parts.append(Self.and(alternative.condition, matching))
                if term.failure != .constant(false) {
                    failure = Self.or(
                        failure,
                        Self.and(
                            alternative.condition,
                            .comparison(
                                ComparisonSyntax(
                                    .direct, subqueryCount(path, name, Self.and(filter, term.failure)), .greaterThan,
                                    [],
                                    .value(.int(0))))))
                }
            default:
                throw self.failure(
                    "\(all ? "allSatisfy(_:)" : "contains(where:)") is supported on lists of objects and captured sequences only"
                )
            }
        }
        return PredicateTerm(.condition(Self.or(parts)), failure: failure)
    }
}

extension PredicateExpressions.Filter: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let sequence = try t.translate(self.sequence)
        guard sequence.alternatives.count == 1, case .path(var path) = sequence.alternatives[0].operand,
            path.isToMany
        else {
            throw t.failure("filter(_:) is supported on lists of objects only")
        }
        let condition = sequence.alternatives[0].condition
        let (name, element, previous) = try t.elements(of: path)
        t.bind(variable.key, to: PredicateTerm(operand: .path(element)))
        let term = try t.translate(filter)
        let p = try t.predicate(of: term)
        var failure = sequence.failure
        if term.failure != .constant(false) {
            // filter(_:) tests every element.
            failure = Translator.or(
                failure,
                Translator.and(
                    condition,
                    .comparison(
                        ComparisonSyntax(
                            .direct, t.subqueryCount(path, name, Translator.and(previous, term.failure)), .greaterThan,
                            [],
                            .value(.int(0))))))
        }
        path.filter = (name, Translator.and(previous, p))
        return PredicateTerm(
            .value([PredicateAlternative(condition: condition, operand: .path(path))]), failure: failure)
    }
}

extension PredicateExpressions.SequenceMaximum: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        try t.extreme(elements, .max)
    }
}

extension PredicateExpressions.SequenceMinimum: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        try t.extreme(elements, .min)
    }
}

extension Translator {
    /// `max()` or `min()` of a list of values.
    func extreme(_ node: Any, _ op: CollectionOperator) throws(LiveObjectsError) -> PredicateTerm {
        let sequence = try translate(node)
        var alternatives: [PredicateAlternative] = []
        for alternative in sequence.alternatives {
            guard case .path(let path) = alternative.operand, path.isToMany, path.table == nil, path.filter == nil
            else {
                throw failure("max() and min() are supported on lists of values only")
            }
            alternatives.append(
                PredicateAlternative(
                    condition: alternative.condition,
                    operand: .aggregate(
                        .collectionOperation(op, collection: .keyPath(path.keyPath), property: []),
                        canBeNil: true)))
        }
        return PredicateTerm(.value(alternatives), failure: sequence.failure)
    }
}

// MARK: - Ranges

/// `lower...upper` and `lower..<upper` nodes.
protocol PredicateRangeNode {
    var lowerNode: Any { get }
    var upperNode: Any { get }
    var isClosed: Bool { get }
}

extension PredicateExpressions.ClosedRange: PredicateRangeNode {
    var lowerNode: Any { lower }
    var upperNode: Any { upper }
    var isClosed: Bool { true }
}

extension PredicateExpressions.Range: PredicateRangeNode {
    var lowerNode: Any { lower }
    var upperNode: Any { upper }
    var isClosed: Bool { false }
}

/// Swift's range types, captured as constants.
protocol ConstantRange {
    /// The lower bound (nil for none) and the upper bound (nil for none), and whether the upper
    /// bound is included.
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { get }
}

extension ClosedRange: ConstantRange {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, upperBound, true) }
}
extension Range: ConstantRange {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, upperBound, false) }
}
extension PartialRangeFrom: ConstantRange {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, nil, true) }
}
extension PartialRangeThrough: ConstantRange {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (nil, upperBound, true) }
}
extension PartialRangeUpTo: ConstantRange {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (nil, upperBound, false) }
}

extension PredicateExpressions.RangeExpressionContains: PredicateTranslatable {
    func translate(_ t: Translator) throws(LiveObjectsError) -> PredicateTerm {
        let element = try t.translate(self.element)
        var lower: PredicateTerm?
        var upper: PredicateTerm?
        var closed: Bool
        var isConstant = element.isConstant
        if let node = range as? any PredicateRangeNode {
            lower = try t.translate(node.lowerNode)
            upper = try t.translate(node.upperNode)
            closed = node.isClosed
            isConstant = isConstant && lower!.isConstant && upper!.isConstant
        } else {
            let term = try t.translate(range)
            guard term.alternatives.count == 1, case .constant(let value) = term.alternatives[0].operand,
                let constant = value as? any ConstantRange
            else {
                throw t.failure("contains(_:) is supported on ranges whose bounds do not depend on the object")
            }
            let bounds = constant.bounds
            lower = bounds.lower.map { t.constant($0) }
            upper = bounds.upper.map { t.constant($0) }
            closed = bounds.closed
        }
        // A closed range of constants is one BETWEEN.
        if closed, let lower, let upper, lower.isConstant, upper.isConstant, element.alternatives.count == 1,
            case .constant(let low) = lower.alternatives[0].operand,
            case .constant(let high) = upper.alternatives[0].operand,
            element.alternatives[0].condition == .constant(true)
        {
            switch element.alternatives[0].operand {
            case .path, .aggregate:
                let between = ComparisonSyntax(
                    .direct, try t.expression(element.alternatives[0].operand), .between, [],
                    .value(.list([try t.propertyValue(low), try t.propertyValue(high)])))
                return PredicateTerm(.condition(.comparison(between)), failure: element.failure)
            default:
                break
            }
        }
        var parts: [PredicateSyntax] = []
        var failure = element.failure
        if let lower {
            let term = try t.compare(lower, .lessThanOrEqual, element)
            parts.append(try t.predicate(of: term))
            failure = Translator.or(failure, term.failure)
        }
        if let upper {
            let term = try t.compare(element, closed ? .lessThanOrEqual : .lessThan, upper)
            parts.append(try t.predicate(of: term))
            failure = Translator.or(failure, term.failure)
        }
        return PredicateTerm(.condition(Translator.and(parts)), failure: failure, isConstant: isConstant)
    }
}
