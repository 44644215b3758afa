import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files the shell writes itself (`export`): created with mode 0600 (owner read and write,
/// whatever the umask) and replaced atomically: the bytes go to a new temporary file in the
/// same directory, which is synced and renamed over the file; the directory is then synced. A
/// reader or a crash sees the old file or the new one.
enum PrivateFile {
    /// Writes `bytes` to `path`, replacing the file if there is one. Without `sync` the file
    /// and its directory are not synced (the history: losing its last line in a crash is fine).
    ///
    /// - Throws: `ShellError` naming the file and the system's reason.
    static func save(_ bytes: [UInt8], to path: String, sync: Bool = true) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/." + url.lastPathComponent + ".\(UUID().uuidString).tmp"
        func failure(_ what: String) -> ShellError {
            ShellError("cannot write \(path): \(what) failed: \(String(cString: strerror(errno)))")
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("creating a temporary file") }
        var done = 0
        var failed: ShellError?
        // The umask only narrows the mode given to open: set it exactly.
        if fchmod(fd, 0o600) != 0 { failed = failure("setting the file's mode") }
        while failed == nil && done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                failed = failure("writing")
            } else {
                done += n
            }
        }
        if failed == nil && sync && fsync(fd) != 0 { failed = failure("syncing") }
        close(fd)
        if failed == nil && rename(temporary, path) != 0 { failed = failure("renaming the temporary file") }
        if let failed {
            unlink(temporary)
            throw failed
        }
        guard sync else { return }
        let directoryFD = open(directory, O_RDONLY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }
}
