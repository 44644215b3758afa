import LiveObjects
import LiveObjectsJSON

/// A query a device syncs by: the objects of one type that match it (and that the server's
/// rules let the user read) come to the device, with the objects they link to; the others stay
/// on the server (docs/SYNC-PROTOCOL.md, "Subscriptions").
///
/// The query is in the part of the query language that the server's rules use: `==` and `!=`
/// of a key path with `$user` (the signed-in user's name), a string, an integer, `true`,
/// `false` or `nil`; `$user IN path`; `ANY`, `ALL` and `NONE` before a key path through a list;
/// `AND`, `OR`, `NOT` and parentheses. The server checks it against the space's schema, and a
/// pull with a query that does not fit fails with `badRequest` naming it.
///
/// ```swift
/// let mine = SyncSubscription(name: "my tasks", TaskItem.self, where: "ANY board.members == $user")
/// ```
public struct SyncSubscription: Sendable, Hashable {
    /// The name ``SyncEngine/subscribe(_:)`` and ``SyncEngine/unsubscribe(named:)`` know it by.
    public var name: String
    /// The type's name.
    public var typeName: String
    /// The query; nil matches every object of the type.
    public var query: String?

    /// Creates a subscription to the objects of a type, by its name.
    public init(name: String, typeName: String, where query: String? = nil) {
        self.name = name
        self.typeName = typeName
        self.query = query
    }

    /// Creates a subscription to the objects of a model class.
    public init<T: SyncableObject>(name: String, _ type: T.Type, where query: String? = nil) {
        self.init(name: name, typeName: T.className, where: query)
    }

    /// The subscriptions as the pull's parameter: `[{"type": "TaskItem", "where": "…"}]`.
    package static func wireText(_ subscriptions: [SyncSubscription]) -> String {
        let entries = subscriptions.map { subscription -> JSONValue in
            .members([("type", .string(subscription.typeName)), ("where", subscription.query.map(JSONValue.string))])
        }
        return String(decoding: JSONValue.array(entries).jsonBytes(), as: UTF8.self)
    }
}

/// How far the download of a walk from the beginning has come: the one that follows a change
/// of the subscriptions, or the first sync of a device.
///
/// The server's versions measure it: a space's objects have versions up to the newest one, and
/// a walk pulls them in version order, so the fraction grows as pages come, unevenly when
/// versions are spread unevenly among the objects.
public struct SyncProgress: Sendable, Hashable {
    /// The objects applied so far in this download.
    public var pulledObjects: Int
    /// The server version the download has reached.
    public var version: UInt64
    /// The server's newest version when the download last asked.
    public var latestVersion: UInt64
    /// Whether the download has finished (every page pulled, links fetched, the objects that left
    /// the subscriptions removed).
    public var isComplete: Bool

    /// The part done, from 0 to 1.
    public var fractionCompleted: Double {
        if isComplete || latestVersion == 0 { return 1 }
        return min(1, Double(version) / Double(latestVersion))
    }
}
