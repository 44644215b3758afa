import LiveObjects
import Persistence

enum RoundTrip {
    /// Saves a loaded store, loads the bytes, saves again: both saves must be equal.
    static func check(_ loaded: (store: Store, schemaVersion: UInt64, commit: UInt64)) {
        do {
            let first = try FileStorage.encode(loaded.store, schemaVersion: loaded.schemaVersion, commit: loaded.commit)
            let again = try FileStorage.decode(snapshot: first, journal: nil)
            let second = try FileStorage.encode(again.store, schemaVersion: again.schemaVersion, commit: again.commit)
            guard first == second else {
                fatalError(
                    "a save does not load back to the same bytes:\n\(String(decoding: first, as: UTF8.self))\n\(String(decoding: second, as: UTF8.self))"
                )
            }
        } catch {
            fatalError("what loaded does not save and load again: \(error)")
        }
    }
}
