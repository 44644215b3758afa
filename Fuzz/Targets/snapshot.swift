import LiveObjects
import Persistence

// Snapshot files: any bytes are loaded; what loads must save to bytes that load back to the
// same bytes (nothing is lost or changed by a load).

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzSnapshot(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let loaded: (store: Store, schemaVersion: UInt64, commit: UInt64)
    do {
        loaded = try FileStorage.decode(snapshot: bytes, journal: nil)
    } catch {
        if Fixture.verbose { print(error) }
        return 0
    }
    RoundTrip.check(loaded)
    return 0
}
