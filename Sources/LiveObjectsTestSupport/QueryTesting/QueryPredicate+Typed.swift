import Foundation
import LiveObjects

// A random predicate rendered as a typed query (`where { }`), where the shape allows.

/// A typed query operand, with its static type hidden so that random trees can be built.
protocol TypedOperandProtocol {
    func compare(_ op: QueryOperator, constant: PropertyValue) -> Query<Bool>?
    func compare(_ op: QueryOperator, to other: any TypedOperandProtocol) -> Query<Bool>?
    func compareAsRight<L>(_ op: QueryOperator, left: Query<L>) -> Query<Bool>?
    func string(_ op: QueryOperator, _ pattern: String, _ options: StringOptions) -> Query<Bool>?
    func isIn(_ items: [PropertyValue]) -> Query<Bool>?
    func between(_ low: PropertyValue, _ high: PropertyValue) -> Query<Bool>?
}

struct TypedOperand<V>: TypedOperandProtocol {
    let query: Query<V>

    func compare(_ op: QueryOperator, constant: PropertyValue) -> Query<Bool>? {
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

    func compare(_ op: QueryOperator, to other: any TypedOperandProtocol) -> Query<Bool>? {
        other.compareAsRight(op, left: query)
    }

    func compareAsRight<L>(_ op: QueryOperator, left: Query<L>) -> Query<Bool>? {
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

    func string(_ op: QueryOperator, _ pattern: String, _ options: StringOptions) -> Query<Bool>? { nil }

    func isIn(_ items: [PropertyValue]) -> Query<Bool>? {
        // An AnyValue is compared with values of every kind at once.
        if V.self == AnyValue.self { return query.in(items.compactMap { AnyValue($0) }) }
        guard let first = items.first(where: { !$0.isNull }) ?? items.first else { return query.in([Int]()) }
        switch first {
        case .int, .null: return query.in(items.map { $0.intValue.map(Int.init) })
        case .double: return query.in(items.map { $0.doubleValue })
        case .string: return query.in(items.map(\.stringValue))
        case .bool: return query.in(items.map(\.boolValue))
        case .date:
            return query.in(
                items.map { value -> Date? in if case .date(let d) = value { return d } else { return nil } })
        case .decimal:
            return query.in(
                items.map { value -> Decimal? in if case .decimal(let d) = value { return d } else { return nil } })
        case .objectID:
            return query.in(
                items.map { value -> ObjectID? in if case .objectID(let id) = value { return id } else { return nil } })
        default: return nil
        }
    }

    func between(_ low: PropertyValue, _ high: PropertyValue) -> Query<Bool>? {
        switch (low, high) {
        case (.int(let a), .int(let b)) where a <= b: query.contains(Int(a)...Int(b))
        case (.double(let a), .double(let b)) where a <= b: query.contains(a...b)
        case (.date(let a), .date(let b)) where a <= b: query.contains(a...b)
        case (.decimal(let a), .decimal(let b)) where !a.isNaN && !b.isNaN && a <= b: query.contains(a...b)
        case (.objectID(let a), .objectID(let b)) where a <= b: query.contains(a...b)
        default: nil
        }
    }
}

/// A typed string operand: the string functions too.
struct TypedStringOperand<V: _QueryString>: TypedOperandProtocol {
    let base: TypedOperand<V>
    init(_ query: Query<V>) { base = TypedOperand(query: query) }

    func compare(_ op: QueryOperator, constant: PropertyValue) -> Query<Bool>? { base.compare(op, constant: constant) }
    func compare(_ op: QueryOperator, to other: any TypedOperandProtocol) -> Query<Bool>? {
        base.compare(op, to: other)
    }
    func compareAsRight<L>(_ op: QueryOperator, left: Query<L>) -> Query<Bool>? { base.compareAsRight(op, left: left) }
    func isIn(_ items: [PropertyValue]) -> Query<Bool>? { base.isIn(items) }
    func between(_ low: PropertyValue, _ high: PropertyValue) -> Query<Bool>? { nil }

    func string(_ op: QueryOperator, _ pattern: String, _ options: StringOptions) -> Query<Bool>? {
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
    case .decimal(let d): d
    case .objectID(let id): id
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

    func operand(_ operand: QueryOperand, _ element: TypedElement?) -> (any TypedOperandProtocol)? {
        let q = root
        switch operand {
        case .constant: return nil
        case .field(let field): return fieldOperand(field)
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

    /// The typed operand of a property of the tested item.
    func fieldOperand(_ field: ItemField) -> any TypedOperandProtocol {
        let q = root
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
        case .price: return TypedOperand(query: q.price)
        case .optPrice: return TypedOperand(query: q.optPrice)
        case .ref: return TypedOperand(query: q.ref)
        case .payload: return TypedStringOperand(q.payload)
        case .payloadKind: return TypedOperand(query: q.payload.kind)
        case .ownerName: return TypedStringOperand(q.owner.name)
        case .ownerScore: return TypedOperand(query: q.owner.score)
        case .ownerID: return TypedOperand(query: q.owner.id)
        case .favoriteInt: return TypedOperand(query: q.owner.favorite.int)
        case .favoriteString: return TypedStringOperand(q.owner.favorite.string)
        case .settingsTheme: return TypedStringOperand(q.settings["theme"])
        case .settingsFont: return TypedStringOperand(q.settings["font"])
        case .palsLeadName: return TypedStringOperand(q.pals["lead"].name)
        case .palsLeadScore: return TypedOperand(query: q.pals["lead"].score)
        case .extrasLevel: return TypedStringOperand(q.extras["level"])
        case .extrasLevelKind: return TypedOperand(query: q.extras["level"].kind)
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
