import Foundation
import LiveObjects

// One query of the randomized query test (predicate, sort, slice) and what the engine answered.

/// One random sort criterion.
struct SortSpec: Sendable, CustomStringConvertible {
    var field: ItemField
    var ascending: Bool
    var comparison: StringComparison

    static let fields: [ItemField] = [
        .id, .int, .optInt, .double, .string, .optString, .flag, .date, .code, .ownerName, .ownerScore, .favoriteString,
        .price, .optPrice, .ref, .payload,
    ]

    var description: String { "\(field.rawValue) \(ascending ? "asc" : "desc") \(comparison)" }

    var sortField: SortField { SortField(field.rawValue, ascending: ascending, comparison: comparison) }

    var keyPath: PartialKeyPath<QPItem> {
        switch field {
        case .id: \.id
        case .int: \.int
        case .optInt: \.optInt
        case .double: \.double
        case .string: \.string
        case .optString: \.optString
        case .flag: \.flag
        case .date: \.date
        case .code: \.code
        case .price: \.price
        case .optPrice: \.optPrice
        case .ref: \.ref
        case .ownerName: \.owner?.name
        case .ownerScore: \.owner?.score
        case .ownerID: \.owner?.id
        case .favoriteInt: \.owner?.favorite?.int
        case .favoriteString: \.owner?.favorite?.string
        case .settingsTheme, .settingsFont: \.settings  // not a sort field (see `fields`)
        case .palsLeadName, .palsLeadScore: \.pals  // not a sort field
        case .payload, .payloadKind: \.payload
        case .extrasLevel, .extrasLevelKind: \.extras  // not a sort field
        }
    }

    /// The same criterion as a Foundation sort descriptor, when there is one on every platform
    /// (Booleans are not `Comparable`; only the lexical string comparator exists everywhere).
    var descriptor: SortDescriptor<QPItem>? {
        let order: SortOrder = ascending ? .forward : .reverse
        guard comparison == .exact || field.kind != .string else { return nil }
        switch field {
        case .id: return SortDescriptor(\.id, order: order)
        case .int: return SortDescriptor(\.int, order: order)
        case .optInt: return SortDescriptor(\.optInt, order: order)
        case .double: return SortDescriptor(\.double, order: order)
        case .string: return SortDescriptor(\.string, comparator: .lexical, order: order)
        case .optString: return SortDescriptor(\.optString, order: order)
        case .date: return SortDescriptor(\.date, order: order)
        case .code: return SortDescriptor(\.code, order: order)
        case .price: return SortDescriptor(\.price, order: order)
        case .optPrice: return SortDescriptor(\.optPrice, order: order)
        case .ref: return SortDescriptor(\.ref, order: order)
        case .ownerName: return SortDescriptor(\.owner?.name, order: order)
        case .ownerScore: return SortDescriptor(\.owner?.score, order: order)
        default: return nil
        }
    }
}

/// One query of a round: a predicate, a sort and a slice.
struct QueryCase: Sendable {
    var predicate: QueryPredicate
    var sorts: [SortSpec]
    var offset: Int
    var limit: Int?
    /// How the Foundation predicate compares optionals (see FoundationBuilder).
    var form: Int

    var text: RenderedQuery { predicate.text }

    var description: String {
        let rendered = text
        var s = "filter(\"\(rendered.text)\""
        if !rendered.arguments.isEmpty { s += ", arguments: \(rendered.arguments)" }
        s += ")"
        if !sorts.isEmpty { s += " sorted by [\(sorts.map(\.description).joined(separator: ", "))]" }
        if offset > 0 { s += " offset \(offset)" }
        if let limit { s += " limit \(limit)" }
        return s
    }

    func slice(_ ids: [Int]) -> [Int] {
        let rest = Array(ids.dropFirst(offset))
        return limit.map { Array(rest.prefix($0)) } ?? rest
    }
}

/// What the engine answered to one query, by each front end.
struct QueryAnswer: Sendable {
    var text: Result<[Int], LiveObjectsError>
    /// The typed `where { }` query, sorted by Swift key paths; nil where the shape has none.
    var typed: [Int]?
    /// Sorted with Foundation sort descriptors; nil where a criterion has none.
    var descriptors: [Int]?
    /// The predicate built as a Foundation `Predicate`, sorted like the text query; nil where
    /// the shape has none.
    var foundation: Result<[Int], LiveObjectsError>?
    /// The items Foundation's own evaluation of that predicate keeps, in storage order.
    var foundationEvaluated: [Int]?
}
