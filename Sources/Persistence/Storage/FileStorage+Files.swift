import Foundation
import LiveObjects

extension FileStorage {
    /// The schema and schema version a snapshot file records, read from its header only.
    ///
    /// Tools that open files whose schema they do not know (the `liveobj` shell) read it first,
    /// then open the file with `Realm.Configuration(file:schema:schemaVersion:options:)`.
    ///
    /// - Throws: `io` when the file cannot be read, `corruptFile` when it is not a LiveObjects
    ///   snapshot. The file is never changed.
    public static func header(ofFile url: URL) throws(LiveObjectsError) -> (schema: Schema, schemaVersion: UInt64) {
        let path = url.standardizedFileURL.path
        let bytes = try FileIO.read(path, maximumSize: FileStorage.Options().maximumFileSize)
        let result: Result<SnapshotHeader, LiveObjectsError> = bytes.withUnsafeBytes { buffer in
            var reader = SnapshotDecoder(buffer, fileName: path, verifiesChecksum: false)
            return Result { () throws(LiveObjectsError) in try reader.readHeader() }
        }
        let header = try result.get()
        return (header.schema, header.schemaVersion)
    }

    /// Writes the current state of a realm, of any storage, to a snapshot file, replacing the
    /// file atomically (a reader or a crash sees the old file or the new one). For "save as"
    /// and for realms that live in memory. The file's advisory lock (`<file>.lock`) is held
    /// while writing, so a file that a realm has open is never replaced under it.
    ///
    /// - Throws: `fileLocked` when a realm of this or another process has the file open;
    ///   `io` when writing fails. The old file is then untouched.
    public static func writeSnapshot(
        of realm: isolated Realm, to url: URL, schemaVersion: UInt64
    ) throws(LiveObjectsError) {
        let path = url.standardizedFileURL.path
        let directory = url.standardizedFileURL.deletingLastPathComponent().path
        let temporary = path + ".tmp"
        let store = realm.store
        let lock = try FileIO.lock(path + ".lock", file: path)
        defer { FileIO.unlock(lock) }
        try FileIO.replaceAtomically(path, temporary: temporary, directory: directory) {
            (fd) throws(LiveObjectsError) in
            try Snapshot.encode(store, schemaVersion: schemaVersion, commit: 0) { (chunk) throws(LiveObjectsError) in
                try FileIO.writeAll(fd, chunk, path: temporary)
            }
        }
    }
}
