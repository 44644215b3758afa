import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Prints a note (the seed of the sequence being run and how to replay it) when the process
/// crashes, since a crash ends the run before the harness can report anything. Chains to the
/// previous handlers, so the runtime's own crash report still follows.
///
/// Several runs may use it at once (tests run in parallel): the handlers stay installed while
/// any run uses them, and the note is the one set last.
enum CrashNote {
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        private static let signals: [Int32] = [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]
        private static let capacity = 1024
        /// The number of runs using the handlers; every change to the state below holds it.
        private static let users = Mutex(0)
        // Read by the signal handler, which cannot take the lock.
        nonisolated(unsafe) private static let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
        nonisolated(unsafe) private static var length = 0
        nonisolated(unsafe) private static let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: 6)

        /// Sets the note printed on a crash.
        static func set(_ note: String) {
            users.withLock { _ in
                let bytes = Array(note.utf8.prefix(capacity))
                length = 0
                bytes.withUnsafeBytes { raw in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress!, byteCount: raw.count)
                }
                length = bytes.count
            }
        }

        /// Installs the handlers (if no other run has).
        static func install() {
            users.withLock { users in
                users += 1
                guard users == 1 else { return }
                for (i, sig) in signals.enumerated() {
                    var action = sigaction()
                    #if canImport(Darwin)
                        action.__sigaction_u.__sa_handler = handle
                    #else
                        action.__sigaction_handler.sa_handler = handle
                    #endif
                    sigemptyset(&action.sa_mask)
                    action.sa_flags = 0
                    sigaction(sig, &action, previous + i)
                }
            }
        }

        /// Puts the previous handlers back once no run uses them.
        static func uninstall() {
            users.withLock { users in
                users -= 1
                guard users == 0 else { return }
                length = 0
                for (i, sig) in signals.enumerated() { sigaction(sig, previous + i, nil) }
            }
        }

        private static let handle: @convention(c) (Int32) -> Void = { sig in
            if CrashNote.length > 0 { _ = write(2, CrashNote.buffer, CrashNote.length) }
            for (i, s) in CrashNote.signals.enumerated() where s == sig {
                sigaction(sig, CrashNote.previous + i, nil)
            }
            // A fault runs its instruction again on return, now under the previous handler; a
            // raised signal has to be raised again.
            if sig == SIGABRT || sig == SIGTRAP { raise(sig) }
        }
    #else
        static func set(_ note: String) {}
        static func install() {}
        static func uninstall() {}
    #endif
}
