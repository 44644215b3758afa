import Foundation
import LiveObjects

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small log of checksummed JSON lines kept beside a file realm (`<file><suffix>`), for state
/// that another module keeps with the realm: the sync engine's.
///
/// Each line is a JSON object that ends with the same `"crc32c"` member as a journal line (see
/// docs/FORMAT.md). An append writes one line and, when the realm's journal syncs, syncs it;
/// when the write or the sync fails, the file is cut back to its length before the append and
/// the error is thrown, so a failed append leaves nothing behind. A crash can leave a last
/// line without its line break: reading ignores it and the next append cuts it off.
/// ``replace(with:)`` writes a new log through a temporary file and a rename, as a snapshot is
/// saved; ``read(maximumSize:)`` removes a temporary file that a crash left.
///
/// Used only inside the isolation of one owner (the sync engine's actor).
package final class SidecarLog: @unchecked Sendable {
    // @unchecked: used by one actor at a time (see above); the descriptor is closed in deinit.

    /// The log's path.
    package let path: String
    /// Whether appends are synced to the disk before they return.
    package let syncs: Bool
    private let temporaryPath: String
    private let directory: String
    private var fd: Int32 = -1
    /// The length of the complete lines, in bytes.
    package private(set) var size = 0

    /// The log beside a realm kept in a file, or nil for a realm kept in memory.
    package static func beside(_ realm: Realm, suffix: String) -> SidecarLog? {
        guard let storage = realm.configuration.storage.backend as? FileStorage else { return nil }
        return SidecarLog(path: storage.path + suffix, syncs: !storage.options.journal || storage.options.syncsJournal)
    }

    package init(path: String, syncs: Bool) {
        self.path = path
        self.syncs = syncs
        temporaryPath = path + ".tmp"
        directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// The complete lines of the log (each without its checksum member and line break, so a
    /// JSON object), oldest first; none when there is no log.
    ///
    /// - Throws: `corruptFile` (with the byte position) for a complete line whose checksum does
    ///   not match; `limitExceeded` for a log larger than `maximumSize`; `io`.
    package func read(maximumSize: Int = 1 << 30) throws(LiveObjectsError) -> [[UInt8]] {
        // A rewrite that a crash stopped before its rename: the log is still the old one.
        if FileIO.exists(temporaryPath) { try? FileIO.remove(temporaryPath) }
        guard FileIO.exists(path) else {
            size = 0
            return []
        }
        let bytes = try FileIO.read(path, maximumSize: maximumSize)
        var lines: [[UInt8]] = []
        var start = 0
        var position = 0
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            let line = bytes[start..<end]
            let payload: [UInt8]? = line.withUnsafeBytes { raw -> [UInt8]? in
                guard let recorded = Journal.recordedChecksum(raw), recorded == Journal.actualChecksum(raw) else {
                    return nil
                }
                // The object without its checksum member: the bytes before it, and `}`.
                return Array(raw[..<(raw.count - Journal.checksumSuffixLength)]) + [0x7D]
            }
            guard let payload else {
                let reason = "a line of the log does not match its checksum"
                var error = LiveObjectsError(.corruptFile, "\(reason) (byte \(position))", file: path)
                error.inputLocation = InputErrorLocation(offset: position, reason: reason)
                throw error
            }
            lines.append(payload)
            start = end + 1
            position = start
        }
        size = start
        return lines
    }

    /// Appends one line: `object` is a JSON object's bytes (`{` … `}`, with at least one
    /// member).
    ///
    /// - Throws: `io` when the disk refuses the write or the sync; the log is then as before.
    package func append(_ object: [UInt8]) throws(LiveObjectsError) {
        let line = Self.line(object)
        if fd < 0 {
            let existed = FileIO.exists(path)
            let opened = FileIO.openForWriting(path, O_WRONLY | O_CREAT)
            guard opened >= 0 else { throw FileIO.error("opening the log", path) }
            fd = opened
            // A line cut by a crash goes first.
            try FileIO.truncate(fd, to: size, path: path)
            if !existed && syncs { try FileIO.syncDirectory(directory) }
        }
        do throws(LiveObjectsError) {
            guard lseek(fd, off_t(size), SEEK_SET) >= 0 else { throw FileIO.error("seeking in the log", path) }
            try Self.write(line, to: fd, path: path)
            if syncs { try FileIO.sync(fd, path: path) }
        } catch {
            // Nothing half-written stays: the next read or append starts from the old length.
            try? FileIO.truncate(fd, to: size, path: path)
            throw error
        }
        size += line.count
    }

    /// Replaces the whole log with these lines, atomically.
    ///
    /// - Throws: `io`; the previous log is then left as it was.
    package func replace(with objects: [[UInt8]]) throws(LiveObjectsError) {
        var bytes: [UInt8] = []
        for object in objects { bytes += Self.line(object) }
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        try FileIO.replaceAtomically(path, temporary: temporaryPath, directory: directory) {
            fd throws(LiveObjectsError) in
            try Self.write(bytes, to: fd, path: path)
        }
        size = bytes.count
    }

    private static func write(_ bytes: [UInt8], to fd: Int32, path: String) throws(LiveObjectsError) {
        var failure: LiveObjectsError?
        bytes.withUnsafeBytes { raw in
            do throws(LiveObjectsError) {
                try FileIO.writeAll(fd, raw, path: path)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// An object as a line: its checksum member added before the closing brace, and a line
    /// break.
    private static func line(_ object: [UInt8]) -> [UInt8] {
        precondition(object.count > 2 && object.first == 0x7B && object.last == 0x7D, "a log line is a JSON object")
        var line = Array(object.dropLast())
        let crc = line.withUnsafeBytes { CRC32C.checksum($0) }
        line += Journal.checksumPrefix
        line += CRC32C.hex(crc)
        line += [0x22, 0x7D, 0x0A]
        return line
    }
}
