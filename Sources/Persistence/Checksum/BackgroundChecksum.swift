import Foundation

/// The CRC-32C of a large snapshot computed on a thread of its own while the loader reads the
/// snapshot's records on its own thread: on two cores the check then costs the open nothing.
///
/// The loader checks the value (``value()``) before it uses anything it read: the header's
/// schema before acting on it, the objects before their links are set (``SnapshotDecoder``).
/// The bytes must stay valid until the checksum is let go: letting it go waits for its thread,
/// so a decoder that holds it cannot outlive the bytes it reads while the thread still reads
/// them.
final class BackgroundChecksum {
    /// What the thread and its owner share: the thread may outlive a checksum let go before it
    /// finished only by the few instructions after it signals, so the state is an object of
    /// its own that the thread holds.
    private final class Run: @unchecked Sendable {
        // @unchecked: `computed` is written by the thread once, before it signals `finished`,
        // and read only after a wait on `finished`; `bytes` are only read.
        let bytes: UnsafeRawBufferPointer
        var computed: UInt32 = 0
        let finished = DispatchSemaphore(value: 0)

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        func run() {
            computed = CRC32C.checksum(bytes)
            finished.signal()
        }
    }

    private let run: Run
    /// The checksum, once waited for.
    private var computed: UInt32?

    /// Starts computing the checksum of `bytes`, which must stay valid and unchanged until
    /// this object is let go.
    init(_ bytes: UnsafeRawBufferPointer) {
        let run = Run(bytes)
        self.run = run
        // A thread of its own rather than a dispatch queue: the loading thread may be one of
        // the concurrency runtime's, which a queue's work could be waiting for.
        Thread.detachNewThread { run.run() }
    }

    /// The checksum of the bytes, waiting for the thread to finish it.
    func value() -> UInt32 {
        if let computed { return computed }
        run.finished.wait()
        computed = run.computed
        return run.computed
    }

    deinit {
        if computed == nil { run.finished.wait() }
    }
}
