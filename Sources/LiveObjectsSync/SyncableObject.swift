import LiveObjects

/// A model class whose objects a ``SyncEngine`` sends to a server.
///
/// The object's primary key is its **local id**: it names the object on every device and in
/// every request, so it should be unique across devices (a `UUID` or a string made from one).
/// The **server id** is optional: an optional `String` property, `serverID` unless
/// ``serverIDProperty`` says otherwise, that the engine fills from the server's receipt after the
/// object's creation reached the server. The engine writes it as a remote write: it is never
/// sent back as a local change.
///
/// ```swift
/// final class Card: Object, SyncableObject {
///     @Persisted(primaryKey: true) var id = UUID().uuidString
///     @Persisted var serverID: String?
///     @Persisted var name = ""
///     @Persisted var owner: Holder?          // sent after its Holder is created
///     @Persisted var photo = Data()
///     static var largePayloadProperties: Set<String> { ["photo"] }   // sent last
/// }
/// ```
public protocol SyncableObject: Object {
    /// The name of the optional `String` property holding the server's id. Default: `"serverID"`.
    static var serverIDProperty: String { get }
    /// Properties holding large payloads (images, files): they are sent in a last round of
    /// updates, after every other change. Default: none.
    static var largePayloadProperties: Set<String> { get }
}

extension SyncableObject {
    public static var serverIDProperty: String { "serverID" }
    public static var largePayloadProperties: Set<String> { [] }
}

/// Names one object across devices: its type name and its primary key (the local id).
public struct SyncObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The object's type name.
    public var typeName: String
    /// The object's primary key.
    public var primaryKey: PropertyValue

    /// Creates an id.
    public init(typeName: String, primaryKey: PropertyValue) {
        self.typeName = typeName
        self.primaryKey = primaryKey
    }

    /// The id of an object of a model class.
    public init(_ type: Object.Type, _ primaryKey: PropertyValue) {
        self.init(typeName: type.className, primaryKey: primaryKey)
    }

    public var description: String { "\(typeName)[\(primaryKey)]" }
}

/// What the engine knows of one synced type.
struct SyncedType: Sendable {
    var name: String
    var primaryKey: String
    /// The primary key's type: a string, a UUID or an integer type.
    var primaryKeyType: PropertyType
    var serverIDProperty: String
    var largePayloadProperties: Set<String>
    /// Stored properties sent to the server: every one but the primary key, the server id and
    /// links to embedded or unsynced types.
    let sentProperties: [Property]
    /// The names of ``sentProperties``: a pull looks up every property of every state it reads.
    let sentNames: Set<String>
    /// The names of the `AnyValue` properties sent (not the lists, sets and maps of them): a
    /// pulled value is read by its kind, and replaced whole (it has no base).
    let mixedNames: Set<String>
    /// The names of the `List<AnyValue>` and `MutableSet<AnyValue>` properties sent: a pulled
    /// value is read as their elements (``SyncValue/mixedListElements``).
    let mixedListNames: Set<String>
    /// The names of the `Map<String, AnyValue>` properties sent: a pulled value is read as
    /// their entries (``SyncValue/mixedMapEntries``).
    let mixedMapNames: Set<String>

    init(
        name: String, primaryKey: String, primaryKeyType: PropertyType, serverIDProperty: String,
        largePayloadProperties: Set<String>, sentProperties: [Property]
    ) {
        self.name = name
        self.primaryKey = primaryKey
        self.primaryKeyType = primaryKeyType
        self.serverIDProperty = serverIDProperty
        self.largePayloadProperties = largePayloadProperties
        self.sentProperties = sentProperties
        self.sentNames = Set(sentProperties.map(\.name))
        let mixed = sentProperties.filter { $0.type == .mixed }
        self.mixedNames = Set(mixed.filter { !$0.isList }.map(\.name))
        self.mixedListNames = Set(mixed.filter { $0.isList && !$0.isMap }.map(\.name))
        self.mixedMapNames = Set(mixed.filter(\.isMap).map(\.name))
    }
}
