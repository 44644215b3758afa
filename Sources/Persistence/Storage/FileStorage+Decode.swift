import Foundation
import LiveObjects
import LiveObjectsJSON

extension FileStorage {
    /// Decodes the bytes of a snapshot file, and of its journal when given, into a new store
    /// with the file's schema, the way opening a file realm reads them, without touching any
    /// file. Returns the store and the commit it holds.
    ///
    /// For tools that check the loader on arbitrary bytes (the fuzz targets) and for tests.
    ///
    /// - Throws: ``LiveObjectsError`` with code `corruptFile` or `limitExceeded`, as opening
    ///   would for the same bytes.
    /// With `checksumInBackground`, the snapshot's checksum is computed on another thread while
    /// the objects are read, as opening a large file does.
    package static func decode(
        snapshot: [UInt8], journal: [UInt8]?, verifiesChecksum: Bool = true, checksumInBackground: Bool = false
    ) throws(LiveObjectsError) -> (store: Store, schemaVersion: UInt64, commit: UInt64) {
        let storage = FileStorage(
            url: URL(fileURLWithPath: "/snapshot"), options: .init(verifiesChecksum: verifiesChecksum))
        return try snapshot.withUnsafeBytesTyped {
            (raw) throws(LiveObjectsError) -> (store: Store, schemaVersion: UInt64, commit: UInt64) in
            var decoder = SnapshotDecoder(raw, fileName: "snapshot", verifiesChecksum: verifiesChecksum)
            let header = try decoder.readHeader(checksumInBackground: checksumInBackground)
            let store: Store
            do throws(LiveObjectsError) {
                store = try Store(schema: header.schema)
            } catch {
                // A schema a damaged file gives: refused as damage.
                try decoder.settleChecksum()
                throw error
            }
            try decoder.readObjects(into: store)
            let session = Session(store: store, schemaVersion: header.schemaVersion, commit: header.commit)
            _ = try storage.replayJournal(journal, into: store, header: header, session: session)
            return (store, header.schemaVersion, session.commit)
        }
    }

    /// The snapshot file's bytes for a store: what saving writes.
    package static func encode(_ store: Store, schemaVersion: UInt64, commit: UInt64) throws(LiveObjectsError)
        -> [UInt8]
    {
        try Snapshot.encode(store, schemaVersion: schemaVersion, commit: commit)
    }
}
