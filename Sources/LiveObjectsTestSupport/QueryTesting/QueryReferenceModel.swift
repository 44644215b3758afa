import Foundation
import LiveObjects

// The reference model of the randomized query test: a plain-Swift copy of the data, and the
// evaluation of a random predicate on it.

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
    var price: Decimal
    var optPrice: Decimal?
    var ref: ObjectID
    var owner: Int?
    var tags: [Int]
    var settings: [String: String] = [:]
    /// `pals`: an owner's id, or nil for a key with no object.
    var pals: [String: Int?] = [:]
    /// An `AnyValue` of a random kind (its stored form).
    var payload: PropertyValue = .null
    /// `extras`: `AnyValue`s (their stored forms) by key.
    var extras: [String: PropertyValue] = [:]
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
            let test = { (value: PropertyValue) in right.contains { QueryReference.test(value, op, $0, options) } }
            switch quantifier {
            case .all: return left.allSatisfy(test)
            case .none: return !left.contains(where: test)
            case .any, .direct: return left.contains(where: test)
            }
        }
    }
}

extension QueryOperand {
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
                    if let current = best, let c = QueryReference.order(value, current), op == .min ? c >= 0 : c <= 0 {
                        continue
                    }
                    best = value
                }
                return [best ?? .null]
            case .sum:
                if values.allSatisfy({ $0.intValue != nil }) {
                    return [.int(values.reduce(0) { $0 + $1.intValue! })]
                }
                return [.double(values.reduce(0.0) { $0 + QueryReference.number($1)! })]
            case .avg:
                if values.isEmpty { return [.null] }
                return [.double(values.reduce(0.0) { $0 + QueryReference.number($1)! } / Double(values.count))]
            }
        case .subquery(let list, let predicate):
            let count = list.elements(item, world).filter { predicate.matches(item, world, element: $0) }.count
            return [.int(Int64(count))]
        }
    }
}
