/// A position in a realm's change history: every commit of a realm that keeps history gets the
/// next token. Tokens only go up, and survive a reopen of a file realm.
public struct HistoryToken: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number of commits recorded before this position.
    public var rawValue: UInt64

    /// A token from its raw value (as stored by an app).
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The token before the first commit: ``Realm/changes(since:)`` with it returns everything
    /// still kept.
    public static let initial = HistoryToken(rawValue: 0)

    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "#\(rawValue)" }
}

/// The coalesced changes of one object type, named by primary key.
///
/// Each object appears at most once: changes after one another are folded (insert then update is
/// an insert, insert then delete is nothing, update then delete is a delete, delete then insert
/// of the same primary key is an update of every property).
public struct TypeChangeHistory: Sendable, Hashable {
    /// Primary keys of the objects inserted.
    public var inserted: Set<PropertyValue> = []
    /// Primary keys of the objects updated, with the names of the properties that changed.
    public var updated: [PropertyValue: Set<String>] = [:]
    /// Primary keys of the objects deleted.
    public var deleted: Set<PropertyValue> = []

    /// Creates an empty value.
    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// What changed in a realm between two history tokens, per object type; see
/// ``Realm/changes(since:)``.
public struct ChangeHistory: Sendable, Hashable {
    /// The token the changes start after.
    public var since: HistoryToken
    /// The token of the last commit included: pass it to the next ``Realm/changes(since:)``.
    public var token: HistoryToken
    /// The changes per type name; types without changes are absent.
    public var types: [String: TypeChangeHistory]

    /// The changes of a type name (empty when it did not change).
    public subscript(typeName: String) -> TypeChangeHistory { types[typeName] ?? TypeChangeHistory() }

    /// Whether nothing changed.
    public var isEmpty: Bool { types.values.allSatisfy(\.isEmpty) }
}
