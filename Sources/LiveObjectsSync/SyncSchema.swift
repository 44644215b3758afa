import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSyncProtocol

/// The schema a sync space declares, written from an app's model: the synced types, each with
/// its primary key and the properties a ``SyncEngine`` sends (not the server id, not links to
/// unsynced types). `liveobjects-sync-server space schema NAME --file schema.json` uploads its
/// JSON (docs/SYNC-PROTOCOL.md, "Schemas"), and the server then refuses every change that does
/// not fit it, so that no device ever pulls what it cannot read.
///
/// ```swift
/// import Foundation
/// import LiveObjects
/// import LiveObjectsSync
///
/// final class Holder: Object, SyncableObject {
///     @Persisted(primaryKey: true) var id = ""
///     @Persisted var serverID: String?
///     @Persisted var name = ""
/// }
///
/// let configuration = Realm.Configuration(identifier: "schema", objectTypes: [Holder.self])
/// let realm = try await Realm.open(configuration)
/// let schema = try SyncSchema(realm.schema, types: [Holder.self])
/// print(String(decoding: schema.jsonData(), as: UTF8.self))
/// ```
public struct SyncSchema: Codable, Hashable, Sendable {
    /// A primary key: the object id on the wire.
    public struct PrimaryKey: Codable, Hashable, Sendable {
        /// The property's name.
        public var name: String
        /// `string`, `uuid`, `objectID`, `int`, `int8`, `int16`, `int32` or `int64`.
        public var type: String
    }

    /// A property the engine sends.
    public struct Property: Codable, Hashable, Sendable {
        /// The property's name.
        public var name: String
        /// `bool`, an int type, `float`, `double`, `string`, `date`, `data`, `uuid`, `decimal`,
        /// `objectID`, `mixed` (an `AnyValue`) or `link`.
        public var type: String
        /// Whether nil is accepted (of the value, or of a list's elements); written only when
        /// true.
        public var optional: Bool?
        /// Whether the value is a list; written only when true.
        public var list: Bool?
        /// For `link`: the type linked to.
        public var target: String?
        /// Whether the list is a `MutableSet`, merged per member (docs/SYNC-PROTOCOL.md,
        /// "Sets"); written only when true, beside `list`.
        public var set: Bool?
        /// Whether the value is a `Map` with `String` keys and values of ``type`` (nil values
        /// when ``optional``), merged per key (docs/SYNC-PROTOCOL.md, "Maps"); written only when
        /// true, without `list`.
        public var map: Bool?
    }

    /// A synced type.
    public struct ObjectType: Codable, Hashable, Sendable {
        /// The model class's name.
        public var name: String
        /// Its primary key.
        public var primaryKey: PrimaryKey
        /// The properties sent, by name.
        public var properties: [Property]
    }

    /// The synced types, by name.
    public var types: [ObjectType]

    /// The schema of the synced types of a realm's schema.
    ///
    /// - Parameters:
    ///   - schema: The realm's schema (`realm.schema`).
    ///   - types: The synced model classes, as given to ``SyncEngine``.
    /// - Throws: `LiveObjectsError` `invalidSchema` when a type is not in the schema, is
    ///   embedded or has no primary key, as ``SyncEngine/init(realm:transport:types:configuration:)``
    ///   throws.
    public init(_ schema: Schema, types: [any SyncableObject.Type]) throws(LiveObjectsError) {
        let names = Set(types.map { $0.className })
        var result: [ObjectType] = []
        for type in types {
            let name = type.className
            guard let object = schema[name], !object.isEmbedded, let key = object.primaryKey else {
                throw LiveObjectsError(
                    .invalidSchema, "a synced type must be a top-level type of the realm with a primary key",
                    objectType: name)
            }
            // The properties the engine sends (SyncEngine.init chooses them the same way).
            let sent = object.properties.filter { p in
                guard p.isStored, !p.isPrimaryKey, p.name != type.serverIDProperty else { return false }
                if p.type == .object { return names.contains(p.objectType ?? "") }
                return true
            }
            result.append(
                ObjectType(
                    name: name, primaryKey: PrimaryKey(name: key.name, type: key.type.rawValue),
                    properties: sent.map { p in
                        let isLink = p.type == .object
                        return Property(
                            name: p.name, type: isLink ? "link" : p.type.rawValue,
                            optional: p.isOptional ? true : nil, list: p.isList && !p.isMap ? true : nil,
                            target: isLink ? p.objectType : nil, set: p.isSet ? true : nil, map: p.isMap ? true : nil)
                    }.sorted { $0.name < $1.name }))
        }
        self.types = result.sorted { $0.name < $1.name }
    }

    /// The JSON a server takes: sorted keys, indented.
    public func jsonData() -> Data {
        func property(_ p: Property) -> JSONValue {
            .members([
                ("list", p.list.map(JSONValue.bool)), ("map", p.map.map(JSONValue.bool)), ("name", .string(p.name)),
                ("optional", p.optional.map(JSONValue.bool)), ("set", p.set.map(JSONValue.bool)),
                ("target", p.target.map(JSONValue.string)), ("type", .string(p.type)),
            ])
        }
        let types = types.map { type -> JSONValue in
            [
                "name": .string(type.name),
                "primaryKey": ["name": .string(type.primaryKey.name), "type": .string(type.primaryKey.type)],
                "properties": .array(type.properties.map(property)),
            ]
        }
        let json: JSONValue = ["types": .array(types)]
        return Data(json.jsonBytes(options: .pretty))
    }
}
