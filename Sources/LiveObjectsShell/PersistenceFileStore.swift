import Foundation
import LiveObjects
import Persistence

/// File realms for the shell, through the Persistence module. The shell uses a file as any file
/// realm does: from the moment it is opened (or made, with `--create`) until the shell ends, a
/// realm holds it and its lock, and every commit is appended to the journal and synced before
/// the command returns, so nothing is lost if the shell is killed. `save` folds the journal into
/// the snapshot (``Realm/save()``), as closing the realm does when the shell ends.
package struct PersistenceFileStore: RealmFileStore {
    /// Creates the file store.
    package init() {}

    private static var options: FileStorage.Options { FileStorage.Options(savePolicy: .manual, journal: true) }

    package var keepsEveryCommit: Bool { true }

    package func open(path: String, create: Bool) async throws -> Realm {
        let url = URL(fileURLWithPath: path)
        if FileManager.default.fileExists(atPath: url.path) {
            let (schema, version) = try FileStorage.header(ofFile: url)
            return try await Realm.open(.init(file: url, schema: schema, schemaVersion: version, options: Self.options))
        }
        guard create else {
            throw LiveObjectsError(.io, "the file does not exist (use --create to make it)", file: path)
        }
        // A new file realm writes its (empty) snapshot as it opens.
        return try await Realm.open(.init(file: url, schema: Schema([]), schemaVersion: 0, options: Self.options))
    }

    package func save(_ realm: Realm, to path: String) async throws {
        let url = URL(fileURLWithPath: path)
        if realm.configuration.identifier == url.standardizedFileURL.path {
            try await realm.save()
        } else {
            // A realm that lives in memory: write it out (refused while the file is open).
            let version = realm.configuration.schemaVersion
            try await realm.read { realm in try FileStorage.writeSnapshot(of: realm, to: url, schemaVersion: version) }
        }
    }

    /// Moves the file to the larger schema through the file's own migration: the realm closes
    /// (folding its journal into the snapshot) and the file opens again with the new schema and
    /// schema version, which copies every object over and writes the new snapshot before the
    /// open returns. The file is released only between the two, for as long as the migration's
    /// open waits for it (a second at most, while another process holds it).
    ///
    /// - Throws: what closing the realm or opening the file with the new schema throws
    ///   (`fileLocked` when another process took the file in between). `realm` is then the file
    ///   opened again as it is (with its old schema, since a failed open changes no file; with
    ///   the new one, and no error, when the migration was written and only what followed it
    ///   failed); if even that fails, the error says so and the shell must be started again (the
    ///   file holds every commit).
    package func changeSchema(of realm: inout Realm, path: String, to schema: Schema, schemaVersion: UInt64)
        async throws
    {
        guard realm.configuration.identifier == URL(fileURLWithPath: path).standardizedFileURL.path else {
            realm = try await RealmDump.copy(realm, to: schema, schemaVersion: schemaVersion)
            return
        }
        let url = URL(fileURLWithPath: path)
        try await realm.close()
        do {
            realm = try await Realm.open(
                .init(file: url, schema: schema, schemaVersion: schemaVersion, options: Self.options))
        } catch {
            // Go on with the file as it now is: as it was (a failed open changes no file), or
            // already migrated when only what followed the new snapshot failed.
            var failure = error
            do {
                realm = try await open(path: path, create: false)
            } catch {
                let reason = (error as? LiveObjectsError).map(Operations.message) ?? "\(error)"
                failure.message +=
                    "; opening the file again failed too (\(reason)): every change so far is in the file; quit and start the shell again"
                throw failure
            }
            if realm.configuration.schemaVersion == schemaVersion && realm.schema == schema { return }
            failure.message = "the schema was not changed: " + failure.message
            throw failure
        }
    }

    package func fileSize(path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
