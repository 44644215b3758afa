import LiveObjects
import Persistence

// Journals replayed over the fixture's snapshot: any bytes are replayed; what replays must save
// to bytes that load back to the same bytes.

let snapshotBytes = Array(Fixture.snapshot.utf8)

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzJournal(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let loaded: (store: Store, schemaVersion: UInt64, commit: UInt64)
    do {
        loaded = try FileStorage.decode(snapshot: snapshotBytes, journal: bytes)
    } catch {
        if Fixture.verbose { print(error) }
        return 0
    }
    // No line applied: the fixture itself, whose round trip the snapshot target checks.
    if loaded.commit > 0 { RoundTrip.check(loaded) }
    return 0
}
