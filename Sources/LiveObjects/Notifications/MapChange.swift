import LiveObjectsStore

/// Which keys of a map a write changed: read from an object's ``PropertyChange`` of a map
/// property (`object.changes(keyPaths: [\.settings])`).
public struct MapChange: Sendable, Hashable {
    /// The keys the write added, in order.
    public var insertions: [String]
    /// The keys whose value the write changed, in order.
    public var modifications: [String]
    /// The keys the write removed, in order.
    public var deletions: [String]

    public init(insertions: [String] = [], modifications: [String] = [], deletions: [String] = []) {
        self.insertions = insertions
        self.modifications = modifications
        self.deletions = deletions
    }

    /// The keys that changed between the old and new value of a map property; nil when the
    /// change is not of a map (its values are not lists of key and value pairs).
    public init?(_ change: PropertyChange) {
        guard let old = Self.entries(change.oldValue), let new = Self.entries(change.newValue) else { return nil }
        self.init(
            insertions: new.keys.filter { old[$0] == nil }.sorted(),
            modifications: new.keys.filter { old[$0] != nil && old[$0] != new[$0] }.sorted(),
            deletions: old.keys.filter { new[$0] == nil }.sorted())
    }

    private static func entries(_ value: PropertyValue) -> [String: PropertyValue]? {
        guard case .list(let items) = value else { return value.isNull ? [:] : nil }
        var result: [String: PropertyValue] = [:]
        for item in items {
            guard case .list(let pair) = item, pair.count == 2, case .string(let key) = pair[0] else { return nil }
            result[key] = pair[1]
        }
        return result
    }
}
