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
