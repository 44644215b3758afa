import Foundation
import LiveObjects

// The random predicates of the randomized query test, as a tree that the reference evaluates
// and that renders as text, as a typed query and as a Foundation predicate.

enum QueryValueKind: Sendable {
    case int, double, string, bool, date, decimal, objectID
    /// Any kind (an `AnyValue`).
    case mixed
    /// The name of an `AnyValue`'s kind (`payload.@type`).
    case kindName
}

/// The operator of a comparison, spelled as in the string query language.
package enum QueryOperator: String, Sendable, CaseIterable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", contains = "CONTAINS", like = "LIKE"
    case `in` = "IN", between = "BETWEEN"

    var isStringOperation: Bool { [.beginsWith, .endsWith, .contains, .like].contains(self) }
    var isOrdering: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }
}

/// Single-valued properties of an item, through links where the path says so.
enum ItemField: String, Sendable, CaseIterable {
    case id, int, optInt, double, string, optString, flag, date, code, price, optPrice, ref
    case ownerName = "owner.name", ownerScore = "owner.score", ownerID = "owner.id"
    case favoriteInt = "owner.favorite.int", favoriteString = "owner.favorite.string"
    /// A map's value by key (nil when the map lacks the key).
    case settingsTheme = "settings['theme']", settingsFont = "settings['font']"
    /// A property of a map of objects' object by key (nil when the map lacks the key or holds nil).
    case palsLeadName = "pals['lead'].name", palsLeadScore = "pals['lead'].score"
    /// An `AnyValue`, and the name of its kind (not in Foundation predicates).
    case payload, payloadKind = "payload.@type"
    /// A map of `AnyValue`s' value by key (null when the map lacks the key), and its kind.
    case extrasLevel = "extras['level']", extrasLevelKind = "extras['level'].@type"

    /// Whether the field reads a map by key (not in Foundation predicates).
    var isMapValue: Bool {
        [.settingsTheme, .settingsFont, .palsLeadName, .palsLeadScore, .extrasLevel, .extrasLevelKind].contains(self)
    }

    /// Whether Foundation predicates cannot read the field (a map's value, an `AnyValue`).
    var isOutsideFoundation: Bool { isMapValue || self == .payload || self == .payloadKind }

    var kind: QueryValueKind {
        switch self {
        case .id, .int, .optInt, .ownerScore, .ownerID, .favoriteInt, .palsLeadScore: .int
        case .double: .double
        case .string, .optString, .code, .ownerName, .favoriteString, .settingsTheme, .settingsFont, .palsLeadName:
            .string
        case .flag: .bool
        case .date: .date
        case .price, .optPrice: .decimal
        case .ref: .objectID
        case .payload, .extrasLevel: .mixed
        case .payloadKind, .extrasLevelKind: .kindName
        }
    }

    func value(_ item: RefItem, _ world: RefWorld) -> PropertyValue {
        let owner = item.owner.flatMap { world.owners[$0] }
        let favorite = owner?.favorite.flatMap { world.items[$0] }
        let lead = item.pals["lead"].flatMap { $0 }.flatMap { world.owners[$0] }
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
        case .price: return .decimal(item.price)
        case .optPrice: return item.optPrice.map { .decimal($0) } ?? .null
        case .ref: return .objectID(item.ref)
        case .ownerName: return owner.map { .string($0.name) } ?? .null
        case .ownerScore: return owner?.score.map { .int(Int64($0)) } ?? .null
        case .ownerID: return owner.map { .int(Int64($0.id)) } ?? .null
        case .favoriteInt: return favorite.map { .int(Int64($0.int)) } ?? .null
        case .favoriteString: return favorite.map { .string($0.string) } ?? .null
        case .settingsTheme: return item.settings["theme"].map { .string($0) } ?? .null
        case .settingsFont: return item.settings["font"].map { .string($0) } ?? .null
        case .palsLeadName: return lead.map { .string($0.name) } ?? .null
        case .palsLeadScore: return lead?.score.map { .int(Int64($0)) } ?? .null
        case .payload: return item.payload
        case .payloadKind: return .string(QueryReference.kindName(item.payload))
        case .extrasLevel: return item.extras["level"] ?? .null
        case .extrasLevelKind: return .string(QueryReference.kindName(item.extras["level"] ?? .null))
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

    var kind: QueryValueKind {
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
indirect enum QueryOperand: Sendable {
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
    case compare(RandomQuantifier, QueryOperand, QueryOperator, QueryReference.Options, QueryOperand)
}
