import Foundation
import LiveObjects
import Testing

@testable import Persistence

/// A fresh, empty directory for one test.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("persistence-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Opens a realm. `Realm.open` itself waits while the previous realm of the same file finishes
/// closing it (a realm releases its file in its deinit, which runs on its own executor).
func openRealm(_ configuration: Realm.Configuration) async throws -> Realm {
    try await Realm.open(configuration)
}

/// Runs `body` with a realm and lets the realm go, waiting until it has closed its file.
func withRealm<T: Sendable>(
    _ configuration: Realm.Configuration, _ body: (Realm) async throws -> T
) async throws -> T {
    var realm: Realm? = try await openRealm(configuration)
    let result = try await body(realm!)
    realm = nil
    _ = realm
    // Wait for the deinit (which saves and releases the file).
    for _ in 0..<1000 where FileStorage.isOpen(configuration) {
        try await Task.sleep(for: .milliseconds(5))
    }
    return result
}

extension FileStorage {
    /// Whether the configuration's file is open in this process.
    static func isOpen(_ configuration: Realm.Configuration) -> Bool {
        guard let storage = configuration.storage.backend as? FileStorage else { return false }
        return openPaths.withLock { $0[storage.path] != nil }
    }
}

/// The bytes of a file, or nil if it does not exist.
func fileBytes(_ url: URL) -> Data? {
    try? Data(contentsOf: url)
}

/// Flips one bit of every byte of the snapshot that `snapshot` (a snapshot's text) saves as,
/// one byte at a time: each damaged file must be refused as corrupt or open with exactly the
/// same content. Then cuts the file short every `stride` bytes: each must be refused.
func expectEverySingleByteChangeCaught(
    _ snapshot: String, truncationStride: Int, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let loaded = try FileStorage.decode(snapshot: Array(snapshot.utf8), journal: nil)
    let good = try FileStorage.encode(loaded.store, schemaVersion: 0, commit: 3)
    for offset in good.indices {
        var bad = good
        bad[offset] ^= 0x01
        do {
            let opened = try FileStorage.decode(snapshot: bad, journal: nil)
            #expect(
                try FileStorage.encode(opened.store, schemaVersion: 0, commit: 3) == good, "byte \(offset)",
                sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .corruptFile, "byte \(offset): \(error)", sourceLocation: sourceLocation)
        }
    }
    for length in stride(from: 0, to: good.count - 1, by: truncationStride) {
        #expect(throws: LiveObjectsError.self, "length \(length)", sourceLocation: sourceLocation) {
            _ = try FileStorage.decode(snapshot: Array(good[..<length]), journal: nil)
        }
    }
}
