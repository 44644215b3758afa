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
