import Foundation
import LiveObjects
import LiveObjectsSync

/// One device of a sync test: a realm in memory that keeps history, its engine, and the id of
/// the object of type `Root` that the test edits on every device.
public struct SyncTestDevice<Root: Object & SyncableObject>: Sendable {
    /// The device's realm.
    public let realm: Realm
    /// The device's engine.
    public let engine: SyncEngine
    /// The primary key of the object the test edits.
    public let rootID: String

    /// Opens a realm of `types` named after `name` and an engine on `transport`.
    public init(
        _ name: String, transport: any SyncTransport, types: [any SyncableObject.Type], rootID: String,
        configuration: SyncEngine.Configuration
    ) async throws {
        var realmConfiguration = Realm.Configuration(
            identifier: "\(name)-\(UUID())", objectTypes: types.map { $0 as Object.Type })
        realmConfiguration.keepsHistory = true
        realm = try await Realm.open(realmConfiguration)
        engine = try await SyncEngine(realm: realm, transport: transport, types: types, configuration: configuration)
        self.rootID = rootID
    }

    /// Syncs once.
    @discardableResult
    public func sync() async throws -> SyncReport { try await engine.sync() }

    /// Edits the object, in a write; the closure's second argument finds a holder by id.
    public func edit(_ body: @escaping @Sendable (Root, (String) -> Holder) throws -> Void) async throws {
        let id = rootID
        try await realm.write { r in
            try body(r.object(ofType: Root.self, forPrimaryKey: id)!) {
                r.object(ofType: Holder.self, forPrimaryKey: $0)!
            }
        }
    }

    /// Reads the object (nil before it reached this device).
    public func read<T: Sendable>(_ body: @escaping @Sendable (Root?) -> T) async throws -> T {
        let id = rootID
        return try await realm.read { r in body(r.object(ofType: Root.self, forPrimaryKey: id)) }
    }
}
