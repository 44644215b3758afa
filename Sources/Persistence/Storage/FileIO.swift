import Foundation
import LiveObjects

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which file a descriptor or path is: a file replaced by a rename has a new one.
struct FileID: Equatable {
    var device: UInt64
    var inode: UInt64
}

/// Thin wrappers over the POSIX calls that atomic saving and journaling need.
enum FileIO {
    static func error(_ what: String, _ path: String, _ code: Int32 = errno) -> LiveObjectsError {
        LiveObjectsError(.io, "\(what) failed: \(String(cString: strerror(code)))", file: path)
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The whole content of a file.
    ///
    /// - Throws: `io`, or `limitExceeded` (before reading) for a file larger than `maximumSize`.
    static func read(_ path: String, maximumSize: Int = .max) throws(LiveObjectsError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("opening the file", path) }
        defer { close(fd) }
        let size = try checkedSize(fd, path, maximumSize: maximumSize)
        // Read into uninitialized storage: zeroing it first would cost one more pass over it.
        var failure: LiveObjectsError?
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            do throws(LiveObjectsError) {
                count = try readAll(fd, into: UnsafeMutableRawBufferPointer(buffer), path)
            } catch {
                failure = error
                count = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Calls `body` with the whole content of a file. A large file is mapped into memory
    /// (read-only, private) rather than copied: its pages come straight from the system's file
    /// cache, with no fresh memory to clear and fill. This module replaces files by renaming a
    /// new one over them, never by writing into them, so the mapped bytes do not change while
    /// `body` runs; a file that cannot be mapped is read.
    ///
    /// - Throws: as ``read(_:maximumSize:)``, or what `body` throws.
    static func withContents<R>(
        of path: String, maximumSize: Int = .max, _ body: (UnsafeRawBufferPointer) throws(LiveObjectsError) -> R
    ) throws(LiveObjectsError) -> R {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("opening the file", path) }
        var isOpen = true
        defer { if isOpen { close(fd) } }
        let size = try checkedSize(fd, path, maximumSize: maximumSize)
        if size >= mappedSize, let address = map(fd, size) {
            defer { munmap(address, size) }
            close(fd)
            isOpen = false
            return try body(UnsafeRawBufferPointer(start: address, count: size))
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 16)
        defer { buffer.deallocate() }
        let count = try readAll(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<size]), path)
        close(fd)
        isOpen = false
        return try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
    }

    /// Files at least this large are mapped by ``withContents(of:maximumSize:_:)``.
    static let mappedSize = 1 << 20

    /// Maps `size` bytes of a file read-only (on Linux with its pages loaded at once), or nil.
    private static func map(_ fd: Int32, _ size: Int) -> UnsafeMutableRawPointer? {
        #if os(Linux)
            let flags = MAP_PRIVATE | MAP_POPULATE
        #else
            let flags = MAP_PRIVATE
        #endif
        guard let address = mmap(nil, size, PROT_READ, flags, fd, 0), address != MAP_FAILED else { return nil }
        return address
    }

    /// The size of an open file, checked against a maximum.
    private static func checkedSize(_ fd: Int32, _ path: String, maximumSize: Int) throws(LiveObjectsError) -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error("reading the file's size", path) }
        guard Int64(info.st_size) <= Int64(maximumSize) else {
            throw LiveObjectsError(
                .limitExceeded,
                "the file is \(info.st_size) bytes, more than the \(maximumSize) allowed "
                    + "(FileStorage.Options.maximumFileSize); nothing was read or changed",
                file: path)
        }
        return Int(info.st_size)
    }

    /// Reads from `fd` until `buffer` is full or the file ends; returns the number of bytes read
    /// (fewer than the buffer holds for a file that shrank while being read).
    private static func readAll(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, _ path: String)
        throws(LiveObjectsError) -> Int
    {
        var done = 0
        while done < buffer.count {
            let n = Foundation.read(fd, buffer.baseAddress! + done, buffer.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw error("reading the file", path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    // MARK: Calls that change files
    //
    // Each asks `FileFaults` first, so that tests can make any one of them fail.

    /// Opens a file for writing (`open(2)` with `flags`, which include `O_WRONLY` or `O_RDWR`),
    /// or a directory to sync it; -1 with `errno` set on failure.
    static func openForWriting(_ path: String, _ flags: Int32, mode: mode_t = 0o600) -> Int32 {
        if let code = FileFaults.check(.open, path) {
            errno = code
            return -1
        }
        return open(path, flags | O_CLOEXEC, mode)
    }

    /// Writes all of `bytes` to `fd`.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(LiveObjectsError) {
        if let code = FileFaults.check(.write, path) { throw error("writing", path, code) }
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw error("writing", path)
            }
            done += n
        }
    }

    /// Flushes a file's content to the disk. On Apple platforms `fsync` only reaches the
    /// drive's cache, so `F_FULLFSYNC` asks the drive to write it through (falling back to
    /// `fsync` on file systems that do not support it).
    static func sync(_ fd: Int32, path: String) throws(LiveObjectsError) {
        if let code = FileFaults.check(.sync, path) { throw error("syncing", path, code) }
        #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) == 0 { return }
        #endif
        guard fsync(fd) == 0 else { throw error("syncing", path) }
    }

    /// Flushes a directory entry change (a rename) to disk.
    static func syncDirectory(_ path: String) throws(LiveObjectsError) {
        let fd = openForWriting(path, O_RDONLY)
        guard fd >= 0 else { throw error("opening the directory", path) }
        defer { close(fd) }
        if let code = FileFaults.check(.syncDirectory, path + "/") {
            throw error("syncing the directory", path, code)
        }
        #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) == 0 { return }
        #endif
        guard fsync(fd) == 0 || errno == EINVAL else { throw error("syncing the directory", path) }
    }

    /// Cuts a file open for writing to `length` bytes and places its offset there.
    static func truncate(_ fd: Int32, to length: Int, path: String) throws(LiveObjectsError) {
        if let code = FileFaults.check(.truncate, path) { throw error("cutting the file", path, code) }
        guard ftruncate(fd, off_t(length)) == 0, lseek(fd, off_t(length), SEEK_SET) >= 0 else {
            throw error("cutting the file", path)
        }
    }

    /// Removes a file; a file that does not exist is not an error.
    static func remove(_ path: String) throws(LiveObjectsError) {
        if let code = FileFaults.check(.unlink, path) { throw error("removing the file", path, code) }
        guard unlink(path) == 0 || errno == ENOENT else { throw error("removing the file", path) }
    }

    /// Removes a file that a failed operation made itself, to leave things as they were: not
    /// counted by ``FileFaults`` (it undoes a failure already being reported, and has no remedy
    /// of its own if it fails).
    static func removeMade(_ path: String) {
        _ = unlink(path)
    }

    /// Renames `from` over `to`.
    static func rename(_ from: String, over to: String) throws(LiveObjectsError) {
        if let code = FileFaults.check(.rename, to) {
            throw error("renaming the temporary file over the file", to, code)
        }
        guard Foundation.rename(from, to) == 0 else { throw error("renaming the temporary file over the file", to) }
    }

    /// Replaces the file at `path` atomically: the content goes to `temporary` (same directory,
    /// created with mode 0600, or the mode of the file it replaces), is synced, renamed over
    /// `path`, and the directory is synced. A reader or a crash sees the old file or the new one.
    ///
    /// The rename is the point of no return: once it is done, `replaced` is set, and readers
    /// see the new file even if syncing the directory then fails (the error is still thrown).
    /// Before it, a failure removes the temporary file and leaves `path` as it was.
    static func replaceAtomically(
        _ path: String, temporary: String, directory: String, replaced: inout Bool,
        write body: (_ fd: Int32) throws(LiveObjectsError) -> Void
    ) throws(LiveObjectsError) {
        var mode: mode_t = 0o600
        var info = stat()
        if stat(path, &info) == 0 { mode = info.st_mode & 0o777 }
        let fd = openForWriting(temporary, O_WRONLY | O_CREAT | O_TRUNC, mode: mode)
        guard fd >= 0 else { throw error("creating the temporary file", temporary) }
        var isOpen = true
        do throws(LiveObjectsError) {
            _ = fchmod(fd, mode)
            try body(fd)
            try sync(fd, path: temporary)
            close(fd)
            isOpen = false
            try rename(temporary, over: path)
        } catch {
            if isOpen { close(fd) }
            try? remove(temporary)
            throw error
        }
        replaced = true
        try syncDirectory(directory)
    }

    /// ``replaceAtomically(_:temporary:directory:replaced:write:)`` for callers that need not
    /// know whether the rename was done.
    static func replaceAtomically(
        _ path: String, temporary: String, directory: String,
        write body: (_ fd: Int32) throws(LiveObjectsError) -> Void
    ) throws(LiveObjectsError) {
        var replaced = false
        try replaceAtomically(path, temporary: temporary, directory: directory, replaced: &replaced, write: body)
    }

    /// Takes the advisory lock of a file realm: a `flock` on `lockPath` (created with mode 0600
    /// if needed), exclusive or shared, held by the returned descriptor until it is closed or
    /// the process ends. A shared open (`readOnly`) does not create the lock file: it returns -1
    /// when there is none (no process has the file open).
    ///
    /// A lock that is held is tried again for up to `grace` before the open fails: a lock
    /// released a moment ago can still be held by a child process that this process forked
    /// while the file was open (the child has a copy of the lock's descriptor until it starts
    /// its program, which closes it), and a realm reopened right after its close must not
    /// fail because of that.
    ///
    /// - Throws: `fileLocked` when another process (or another descriptor, even of this
    ///   process) holds it in a mode that excludes this one; `io` when the lock file cannot be
    ///   opened.
    static func lock(
        _ lockPath: String, file: String, shared: Bool = false, readOnly: Bool = false, grace: Duration = .seconds(1)
    ) throws(LiveObjectsError) -> Int32 {
        let fd: Int32
        if readOnly {
            fd = open(lockPath, O_RDONLY | O_CLOEXEC)
            if fd < 0 && errno == ENOENT { return -1 }
        } else {
            fd = openForWriting(lockPath, O_RDWR | O_CREAT)
        }
        guard fd >= 0 else { throw error("opening the lock file \(lockPath)", file) }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: grace)
        while flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK && clock.now < deadline {
                usleep(2_000)
                continue
            }
            close(fd)
            if code == EWOULDBLOCK {
                throw LiveObjectsError(
                    .fileLocked,
                    shared
                        ? "the file is open in another process or realm that keeps it to itself (a realm without a journal, or a migration; its lock file \(lockPath) is held)"
                        : "the file is open for writing in another process or realm (its lock file \(lockPath) is held)",
                    file: file)
            }
            throw error("locking \(lockPath)", file, code)
        }
        return fd
    }

    /// Turns a shared lock taken by ``lock(_:file:shared:readOnly:grace:)`` into an exclusive
    /// one if no other descriptor holds it; returns whether it did. On failure the descriptor
    /// holds the shared lock again (`flock` does not change a lock's mode atomically: it is
    /// released, then taken again).
    ///
    /// A lock still held is tried again for up to `grace`: for the same reason as in `lock`, a
    /// child process forked a moment ago can hold a copy of another descriptor of the file's
    /// lock until it starts its program.
    static func tryExclusive(_ fd: Int32, grace: Duration = .zero) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: grace)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK && clock.now < deadline {
                usleep(2_000)
                continue
            }
            share(fd)
            return false
        }
        return true
    }

    /// Turns an exclusive lock back into a shared one (or takes the shared lock again after a
    /// failed ``tryExclusive(_:)``). Not waiting for good: an exclusive lock another descriptor
    /// took in between (a realm without the journal) is held for that realm's whole life, so
    /// after a second the descriptor is left without a lock (its realm is closing or failing
    /// to open then).
    static func share(_ fd: Int32) {
        let deadline = ContinuousClock.now.advanced(by: .seconds(1))
        while flock(fd, LOCK_SH | LOCK_NB) != 0 {
            guard errno == EINTR || (errno == EWOULDBLOCK && ContinuousClock.now < deadline) else { return }
            if errno == EWOULDBLOCK { usleep(1_000) }
        }
    }

    /// Takes a `flock` on an open descriptor, waiting for it (`wait`) or not; returns whether
    /// it is held.
    ///
    /// - Throws: `io` when `flock` fails for another reason than the lock being held.
    @discardableResult
    static func flockWaiting(_ fd: Int32, exclusive: Bool, wait: Bool = true, path: String) throws(LiveObjectsError)
        -> Bool
    {
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)
        while flock(fd, operation) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK { return false }
            throw error("locking", path, code)
        }
        return true
    }

    /// Takes a `flock` on an open descriptor, waiting at most `timeout` for another process to
    /// release it (tried again after pauses that grow from 1 to 20 ms, so a short write of
    /// another process costs little wait and a long one no busy loop).
    ///
    /// - Throws: `fileInUse` when the lock is still held after `timeout`; `io` when `flock`
    ///   fails for another reason.
    static func flockWaiting(_ fd: Int32, exclusive: Bool, timeout: Duration, path: String) throws(LiveObjectsError) {
        if try flockWaiting(fd, exclusive: exclusive, wait: false, path: path) { return }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause = Duration.milliseconds(1)
        while clock.now < deadline {
            let (seconds, attoseconds) = min(pause, deadline - clock.now).components
            var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
            if try flockWaiting(fd, exclusive: exclusive, wait: false, path: path) { return }
            pause = min(pause * 2, .milliseconds(20))
        }
        throw LiveObjectsError(
            .fileInUse,
            "another process has held the file's write lock for \(timeout) (it is writing, or has a write transaction open): nothing was changed",
            file: path)
    }

    /// Releases a `flock` taken by ``flockWaiting(_:exclusive:wait:path:)``.
    static func funlock(_ fd: Int32) {
        while flock(fd, LOCK_UN) != 0 && errno == EINTR {}
    }

    /// Reads the bytes of an open file from `offset` to its end (as it is now).
    static func readToEnd(_ fd: Int32, from offset: Int, path: String) throws(LiveObjectsError) -> [UInt8] {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error("reading the file's size", path) }
        let size = Int(info.st_size)
        guard size > offset else { return [] }
        var bytes = [UInt8](repeating: 0, count: size - offset)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw error("reading the file", path)
            }
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(bytes.count - done)
        return bytes
    }

    /// The device and inode of an open file, or of a path (nil when it does not exist), and
    /// its size.
    static func identity(fd: Int32) -> (id: FileID, size: Int)? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return (
            FileID(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino)),
            Int(info.st_size)
        )
    }

    static func identity(path: String) -> FileID? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileID(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
    }

    /// Releases a lock taken by ``lock(_:file:)``.
    static func unlock(_ fd: Int32) {
        close(fd)
    }
}
