import Foundation
import LiveObjects
import Persistence

/// File realms for the shell, through the Persistence module: JSON snapshots saved on `save`
/// (manual save, no journal, so that unsaved changes are exactly what `save` writes).
public struct PersistenceFileStore: RealmFileStore {
    /// Creates the file store.
    public init() {}

    private static var options: FileStorage.Options { FileStorage.Options(savePolicy: .manual, journal: false) }

    public func open(path: String, create: Bool) async throws -> Realm {
        let url = URL(fileURLWithPath: path)
        if FileManager.default.fileExists(atPath: url.path) {
            let (schema, version) = try FileStorage.header(ofFile: url)
            return try await Realm.open(
                .init(file: url, schema: schema, schemaVersion: version, options: Self.options))
        }
        guard create else {
            throw LiveObjectsError(.io, "the file does not exist (use --create to make it)", file: path)
        }
        let realm = try await Realm.open(
            .init(identifier: "new:" + url.standardizedFileURL.path, schema: Schema([]), schemaVersion: 0))
        try await realm.write { _ in }
        try await FileStorage.writeSnapshot(of: realm, to: url, schemaVersion: 0)
        return realm
    }

    public func save(_ realm: Realm, to path: String) async throws {
        let url = URL(fileURLWithPath: path)
        if realm.configuration.identifier == url.standardizedFileURL.path {
            try await realm.save()
        } else {
            // A realm that lives in memory (a new file, or after `define`): write it out.
            let version = realm.configuration.schemaVersion
            try await realm.read { realm in try FileStorage.writeSnapshot(of: realm, to: url, schemaVersion: version) }
        }
    }

    public func fileSize(path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
