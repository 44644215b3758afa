import Foundation
import LiveObjects
import Persistence

/// A new, empty directory under the system's temporary directory, for the files of one
/// walkthrough. Remove it with ``removeTemporaryDirectory(_:)``.
func makeTemporaryDirectory(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("liveobjects-playground-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Removes a directory made by ``makeTemporaryDirectory(_:)`` and everything in it.
func removeTemporaryDirectory(_ url: URL) {
    try? FileManager.default.removeItem(at: url)
}

/// The names of the files in a directory, sorted.
func fileNames(in directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

/// Opens a realm kept in a file that a realm of this process may just have let go.
///
/// A realm closes its file in its deinitializer, which runs on the realm's own executor a
/// moment after the last reference to the realm goes away. Until then, opening the file again
/// fails with `invalidOperation` ("already open in this process"); this waits for the close,
/// up to about ten seconds, and then opens the file.
///
/// - Throws: the errors of `Realm.open(_:)`.
func openReleasedFile(_ configuration: Realm.Configuration) async throws -> Realm {
    for _ in 0..<2000 {
        let result: Result<Realm, LiveObjectsError>
        do {
            result = .success(try await Realm.open(configuration))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let realm):
            return realm
        case .failure(let error):
            guard error.code == .invalidOperation, error.message.contains("already open") else { throw error }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
    return try await Realm.open(configuration)
}
