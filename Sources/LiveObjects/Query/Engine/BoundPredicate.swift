import Foundation
import LiveObjectsStore

/// A predicate bound to a table: key paths resolved, constants checked, string constants
/// folded once. Evaluated row by row, or by scanning a column for the common simple shapes.
///
/// Only the cases that nest are boxed, so that an index lookup (the common lookup by value)
/// needs no allocation for its case.
enum BoundPredicate {
    case constant(Bool)
    case and([BoundPredicate])
    case or([BoundPredicate])
    indirect case not(BoundPredicate)
    indirect case comparison(BoundComparison)
    /// A comparison of one column with a constant, evaluated by scanning the column.
    indirect case scan(ColumnScan, fallback: BoundComparison)
    /// Equality or `IN` on an indexed property, evaluated with the index.
    case index(IndexLookup)
    /// A range on an indexed property, evaluated with the sorted index.
    case range(RangeLookup)
}

/// One side of a bound comparison.
enum BoundExpression {
    case constant(PropertyValue)
    /// A key path from the object being tested (`variable == nil`) or from a subquery variable.
    case path(BoundPath, variable: Int?)
    /// `collection.@op.property`.
    indirect case aggregate(CollectionOperator, collection: BoundPath, variable: Int?, element: BoundPath?)
    /// `SUBQUERY(collection, $v, predicate).@count`. `memo`, when the predicate reads only `$v`
    /// (and constants), so that its answer for an element is the same from every object: the
    /// memo of the evaluation that keeps it per element, computed once.
    indirect case subqueryCount(
        collection: BoundPath, variable: Int?, slot: Int, predicate: BoundPredicate, memo: Int?)

    var isToMany: Bool {
        if case .path(let path, _) = self { return path.isToMany }
        return false
    }
}

struct BoundComparison {
    let quantifier: Quantifier
    let lhs: BoundExpression
    let op: ComparisonOperator
    let options: ComparisonOptions
    let rhs: BoundExpression
    /// The string matcher, when the right-hand side is a string constant and the operator a
    /// string operation.
    let matcher: StringMatcher?
    /// For `ANY`, `ALL` or `NONE` of a path through several lists compared with a constant:
    /// the first of the memos (one per step of the path) that keep, per row reached, whether
    /// the rest of the path from it yields a value that decides (see ``decides(_:)``). Shared
    /// sub-paths are then followed once per evaluation, not once per object tested.
    var memo: Int? = nil
}

/// What one evaluation of a predicate keeps while it tests rows: the values of subquery
/// variables, the memos of the parts whose answer for a row does not depend on the object
/// being tested, and the work done.
struct EvaluationContext {
    var variables: [Int32] = []
    /// Per memo of the query (``BoundQuery/memoCount``): the answers known, by row.
    var memos: [[Int32: Bool]] = []
    /// The work done so far, in units: rows and list elements visited.
    private(set) var work = 0
    /// The most work the evaluation may do (``Realm/Configuration/maximumQueryWork``).
    let budget: Int
    /// Why the evaluation stopped before its end, if it did: every test then fails at once,
    /// and the caller throws instead of using the answer.
    private(set) var stop: Stop?
    /// The work at which the budget and the task's cancellation are checked next.
    private var nextCheck: Int

    enum Stop { case budget, cancelled }

    /// How often, in units of work, the task's cancellation is checked.
    static let checkInterval = 4096

    init(variables: [Int32] = [], memoCount: Int = 0, budget: Int = .max) {
        self.variables = variables
        memos = Array(repeating: [:], count: memoCount)
        self.budget = budget
        nextCheck = budget < Self.checkInterval ? max(budget, -1) + 1 : Self.checkInterval
    }

    /// Counts work; past the budget, or once the task is cancelled, stops the evaluation.
    @inline(__always)
    mutating func spend(_ units: Int) {
        work &+= units
        if work >= nextCheck { check() }
    }

    private mutating func check() {
        if work > budget {
            stop = .budget
        } else if Task.isCancelled || QueryCancellation.isRaised {
            stop = .cancelled
        }
        // The next check comes after the interval, or as soon as the budget is passed.
        let (afterInterval, overflow) = work.addingReportingOverflow(Self.checkInterval)
        nextCheck = stop != nil ? .max : min(overflow ? .max : afterInterval, budget == .max ? .max : budget + 1)
    }
}

/// How deep `NOT`, `AND` and `OR` are followed by recursion (which is fastest); deeper groups
/// are walked with an explicit stack, so that predicates nested up to the limit
/// (``PredicateParser/maxNestingDepth``) run on a small thread stack.
let maximumRecursionDepth = 24

extension BoundPredicate {
    /// Whether a row matches.
    func matches(_ row: Int32, _ context: inout EvaluationContext, depth: Int = 0) -> Bool {
        if depth >= maximumRecursionDepth && isGroup { return matchesWithoutRecursion(row, &context) }
        switch self {
        case .constant(let value): return value
        case .and(let operands):
            for operand in operands where !operand.matches(row, &context, depth: depth + 1) { return false }
            return true
        case .or(let operands):
            for operand in operands where operand.matches(row, &context, depth: depth + 1) { return true }
            return false
        case .not(let operand): return !operand.matches(row, &context, depth: depth + 1)
        case .comparison(let comparison): return comparison.matches(row, &context)
        case .scan(_, let fallback): return fallback.matches(row, &context)
        case .index(let lookup):
            let value = lookup.table.columns[lookup.property]!.value(at: Int(row))
            return lookup.contains(value)
        case .range(let lookup):
            return lookup.matches(lookup.table.columns[lookup.property]!.value(at: Int(row)))
        }
    }
}

extension BoundPredicate {
    /// Whether the predicate is a `NOT`, `AND` or `OR`.
    var isGroup: Bool {
        switch self {
        case .and, .or, .not: true
        default: false
        }
    }

    /// ``matches(_:_:depth:)`` with an explicit stack: the same answer, with the same
    /// short-circuits, in the same order.
    private func matchesWithoutRecursion(_ row: Int32, _ context: inout EvaluationContext) -> Bool {
        var fold = MatchFold(row: row, context: consume context)
        let value = walkPredicateGroups(self, &fold)
        context = fold.context
        return value
    }
}

extension BoundPredicate: PredicateGroupTree {
    var group: (kind: PredicateGroupKind, operands: [BoundPredicate])? {
        switch self {
        case .not(let operand): (.not, [operand])
        case .and(let operands): (.and, operands)
        case .or(let operands): (.or, operands)
        default: nil
        }
    }
}

/// Whether a row matches a predicate, group by group: an `AND` ends at its first false operand,
/// an `OR` at its first true one.
private struct MatchFold: PredicateGroupFold {
    let row: Int32
    var context: EvaluationContext

    mutating func leaf(_ node: BoundPredicate) -> Bool { node.matches(row, &context) }
    func start(_ kind: PredicateGroupKind) {}
    func add(_ result: Bool, to partial: inout Void, of kind: PredicateGroupKind) -> Bool? {
        switch kind {
        case .not: !result
        case .and: result ? nil : false
        case .or: result ? true : nil
        }
    }
    func finish(_ partial: Void, of kind: PredicateGroupKind) -> Bool { kind == .and }
}

extension BoundExpression {
    /// The values of the expression for a row (one value, or several for a to-many path).
    func values(_ row: Int32, _ context: inout EvaluationContext) -> [PropertyValue] {
        switch self {
        case .constant(let value): return [value]
        case .path(let path, let variable):
            let start = variable.map { context.variables[$0] } ?? row
            if path.isToMany {
                let values = path.values(from: start)
                context.spend(max(values.count, 1) * path.steps.count)
                return values
            }
            context.spend(max(path.steps.count, 1))
            return [path.value(from: start)]
        case .aggregate(let op, let collection, let variable, let element):
            let start = variable.map { context.variables[$0] } ?? row
            context.spend(collection.steps.count + (element?.steps.count ?? 0))
            return [Self.aggregate(op, collection, element, start)]
        case .subqueryCount(let collection, let variable, let slot, let predicate, let memo):
            let start = variable.map { context.variables[$0] } ?? row
            var count: Int64 = 0
            let saved = context.variables[slot]
            for (element, ways) in collection.weightedObjectRows(from: start) {
                context.spend(1)
                if context.stop != nil { break }
                let matches: Bool
                if let memo, let known = context.memos[memo][element] {
                    matches = known
                } else {
                    context.variables[slot] = element
                    // Paths without a variable still start from the object being tested.
                    matches = predicate.matches(row, &context)
                    if let memo { context.memos[memo][element] = matches }
                }
                if matches { count = BoundPath.saturatingAdd(count, ways) }
            }
            context.variables[slot] = saved
            return [.int(count)]
        }
    }

    /// A collection operator over the values of `collection` (or of `element` from its objects),
    /// each counted as many times as the path reaches it.
    static func aggregate(
        _ op: CollectionOperator, _ collection: BoundPath, _ element: BoundPath?, _ row: Int32
    ) -> PropertyValue {
        switch op {
        case .count, .size:
            if !collection.isToMany, element == nil, collection.terminal?.type == .mixed {
                // An AnyValue's list or dictionary counts its elements; another value has no count.
                let value = collection.value(from: row)
                if let count = MixedContainer.count(of: value) { return .int(Int64(count)) }
                if op == .count { return .null }
            }
            if op == .size, !collection.isToMany, element == nil {
                switch collection.value(from: row) {
                case .string(let s): return .int(Int64(s.count))
                case .data(let d): return .int(Int64(d.count))
                case .null: return .null
                default: return .int(1)
                }
            }
            var count: Int64 = 0
            BoundPath.weightedValues(collection, element: element, from: row) { _, ways in
                count = BoundPath.saturatingAdd(count, ways)
            }
            return .int(count)
        case .min, .max:
            var best: PropertyValue?
            BoundPath.weightedValues(collection, element: element, from: row) { value, _ in
                guard !value.isNull else { return }
                guard let current = best else {
                    best = value
                    return
                }
                if let c = compareValues(value, current), (op == .min ? c < 0 : c > 0) { best = value }
            }
            return best ?? .null
        case .sum, .avg:
            var allIntegers = true
            var integerTotal: Int64 = 0
            var total = 0.0
            var count: Int64 = 0
            var decimalTotal: Decimal?
            BoundPath.weightedValues(collection, element: element, from: row) { value, ways in
                guard !value.isNull else { return }
                count = BoundPath.saturatingAdd(count, ways)
                if case .int(let i) = value {
                    integerTotal = integerTotal &+ i &* ways
                } else {
                    allIntegers = false
                }
                if case .decimal(let d) = value {
                    // Decimals add up exactly, as decimals.
                    decimalTotal = (decimalTotal ?? 0) + d * Decimal(ways)
                    return
                }
                let d = value.doubleValue ?? 0
                total += ways == 1 ? d : d * Double(ways)
            }
            if op == .avg && count == 0 { return .null }
            if allIntegers && op == .sum { return .int(integerTotal) }
            if let decimalTotal { return .decimal(op == .sum ? decimalTotal : decimalTotal / Decimal(count)) }
            return .double(op == .sum ? total : total / Double(count))
        }
    }
}

extension BoundComparison {
    func matches(_ row: Int32, _ context: inout EvaluationContext) -> Bool {
        guard context.stop == nil else { return false }
        if let memo, case .path(let path, let variable) = lhs {
            let start = variable.map { context.variables[$0] } ?? row
            // ANY and NONE look for a value that passes, ALL for one that fails.
            let found = reaches(path, step: 0, from: start, memo: memo, &context)
            return quantifier == .any || quantifier == .direct ? found : !found
        }
        let left = lhs.values(row, &context)
        switch quantifier {
        case .all:
            return left.allSatisfy { test($0, row, &context) }
        case .none:
            return !left.contains { test($0, row, &context) }
        case .any, .direct:
            return left.contains { test($0, row, &context) }
        }
    }

    /// Whether a comparison can be evaluated with a memo per step (``memo``): `ANY`, `ALL`,
    /// `NONE` (or no quantifier) of a path through several lists, compared with a constant.
    var canMemoize: Bool {
        guard case .path(let path, _) = lhs, path.toManyCount >= 2, case .constant = rhs else { return false }
        return true
    }

    /// The value a path's value must give the test to decide the comparison: `true` for `ANY`
    /// and `NONE` (a value that passes), `false` for `ALL` (a value that fails).
    private var decisiveResult: Bool { quantifier != .all }

    /// Whether following `path` from step `step` on, from `row`, reaches a value whose test
    /// gives ``decisiveResult``. Each row is followed at most once per step in an evaluation:
    /// the answer is kept in the step's memo, so the work is at most the links of each step.
    private func reaches(
        _ path: BoundPath, step: Int, from row: Int32, memo: Int, _ context: inout EvaluationContext
    ) -> Bool {
        if let known = context.memos[memo + step][row] { return known }
        let current = path.steps[step]
        var found = false
        context.spend(1)
        if step == path.steps.count - 1 {
            let want = decisiveResult
            BoundPath.lastValues(current, row) { value in
                guard !found else { return }
                context.spend(1)
                if test(value, row, &context) == want { found = true }
            }
        } else {
            for target in BoundPath.targets(current, row) {
                if context.stop != nil { return false }
                if reaches(path, step: step + 1, from: target, memo: memo, &context) {
                    found = true
                    break
                }
            }
        }
        context.memos[memo + step][row] = found
        return found
    }

    private func test(_ value: PropertyValue, _ row: Int32, _ context: inout EvaluationContext) -> Bool {
        if let matcher {
            // A value that is not a string (nil) matches no string operation, so `!=` holds
            // for it, as in the column scan.
            guard case .string(let s) = value else { return op == .notEqual }
            return op == .notEqual ? !matcher.matches(s) : matcher.matches(s)
        }
        let right = rhs.values(row, &context)
        switch op {
        case .in:
            if case .list(let items)? = right.first, right.count == 1, !rhs.isToMany {
                return items.contains { Self.equal(value, $0, options) }
            }
            return right.contains { Self.equal(value, $0, options) }
        case .between:
            guard case .list(let bounds)? = right.first, bounds.count == 2,
                let low = compareValues(value, bounds[0], options), let high = compareValues(value, bounds[1], options)
            else { return false }
            return low >= 0 && high <= 0
        default:
            return right.contains { Self.apply(op, value, $0, options) }
        }
    }

    static func equal(_ a: PropertyValue, _ b: PropertyValue, _ options: ComparisonOptions) -> Bool {
        if case .string(let x) = a, case .string(let y) = b, !options.isEmpty {
            return FoldedString(x, options: options) == FoldedString(y, options: options)
        }
        return compareValues(a, b) == 0
    }

    static func apply(
        _ op: ComparisonOperator, _ a: PropertyValue, _ b: PropertyValue, _ options: ComparisonOptions
    ) -> Bool {
        switch op {
        case .equal: return equal(a, b, options)
        case .notEqual: return !equal(a, b, options)
        case .lessThan: return compareValues(a, b, options).map { $0 < 0 } ?? false
        case .lessThanOrEqual: return compareValues(a, b, options).map { $0 <= 0 } ?? false
        case .greaterThan: return compareValues(a, b, options).map { $0 > 0 } ?? false
        case .greaterThanOrEqual: return compareValues(a, b, options).map { $0 >= 0 } ?? false
        case .beginsWith, .endsWith, .contains, .like, .text:
            guard case .string(let s) = a, case .string(let pattern) = b,
                let matcher = StringMatcher(operator: op, pattern: pattern, options: options)
            else { return false }
            return matcher.matches(s)
        case .in, .between:
            return false
        }
    }
}

/// Orders two values of comparable kinds: numbers with numbers, strings with strings (by
/// ``StringOrder``, or by their folded forms with options), dates, booleans, UUIDs, data, object
/// keys. `nil` for values that do not compare (and for nil with
/// anything but nil).
func compareValues(_ a: PropertyValue, _ b: PropertyValue, _ options: ComparisonOptions = []) -> Int? {
    @inline(__always) func order<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
    switch (a, b) {
    case (.null, .null): return 0
    case (.int(let x), .int(let y)): return order(x, y)
    case (.string(let x), .string(let y)):
        if options.isEmpty { return StringOrder.compare(x, y) }
        let fx = FoldedString(x, options: options).utf8
        let fy = FoldedString(y, options: options).utf8
        return fx.lexicographicallyPrecedes(fy) ? -1 : (fx == fy ? 0 : 1)
    case (.bool(let x), .bool(let y)): return order(x ? 1 : 0, y ? 1 : 0)
    case (.date(let x), .date(let y)): return order(x, y)
    case (.uuid(let x), .uuid(let y)): return order(x.uuidString, y.uuidString)
    case (.objectID(let x), .objectID(let y)): return order(x, y)
    case (.decimal(let x), .decimal(let y)): return Decimal.exactOrder(x, y)
    case (.decimal(let x), _), (_, .decimal(let x)):
        // A decimal against another number, exactly: an integer as it is, a double by its
        // shortest text (so the literal 9.99 is the decimal 9.99).
        let other = a.tag == .decimal ? b : a
        let y: Decimal
        switch other {
        case .int(let i): y = Decimal(i)
        case .double(let d) where d.isFinite: y = Decimal(exactText: "\(d)") ?? Decimal(d)
        case .float(let f) where f.isFinite: y = Decimal(exactText: "\(f)") ?? Decimal(Double(f))
        default: return nil
        }
        let c = Decimal.exactOrder(x, y)
        return a.tag == .decimal ? c : -c
    case (.data(let x), .data(let y)):
        return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
    case (.object(let x), .object(let y)): return x == y ? 0 : order(x, y)
    case (.list(let x), .list(let y)) where MixedContainer(x) == .link:
        // Links in mixed values: by type name, then key.
        guard let l = MixedContainer.link(of: x), let r = MixedContainer.link(of: y) else { return nil }
        return l.objectType != r.objectType ? order(l.objectType, r.objectType) : order(l.key, r.key)
    default:
        if let x = a.doubleValue, let y = b.doubleValue {
            if case .int(let i) = a, case .double(let d) = b, let exact = Int64(exactly: d) { return order(i, exact) }
            if case .double(let d) = a, case .int(let i) = b, let exact = Int64(exactly: d) { return order(exact, i) }
            return x.isNaN || y.isNaN ? nil : order(x, y)
        }
        return nil
    }
}
