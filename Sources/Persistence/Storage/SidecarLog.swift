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
/// line without its line break: reading ignores it and the next append cuts it off. Any other
/// damage is an error of ``read(maximumSize:)`` that leaves the file as it is.
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

    /// A line of the log: its object, and where it starts in the file.
    package struct Line: Sendable {
        /// The line's JSON object, without its checksum member and line break.
        package var bytes: [UInt8]
        /// The byte of the file the line starts at.
        package var offset: Int
    }

    /// The complete lines of the log, oldest first; none when there is no log.
    ///
    /// The rules are the journal's (docs/FORMAT.md): every line that ends with a line break
    /// must carry its right checksum; the bytes after the last line break are a torn append,
    /// ignored (and cut off by the next ``append(_:)``), unless they are a whole line with its
    /// right checksum followed by one byte (a damaged line break). The first line is written
    /// only by ``replace(with:)`` (a rename), never torn: a log without a complete first line
    /// (empty, or cut inside it) is damaged.
    ///
    /// - Throws: `corruptFile` with the byte of the damage (`LiveObjectsError.inputLocation`),
    ///   the file left as it is; `limitExceeded` for a log larger than `maximumSize`; `io`.
    package func read(maximumSize: Int = 1 << 30) throws(LiveObjectsError) -> [Line] {
        // A rewrite that a crash stopped before its rename: the log is still the old one.
        if FileIO.exists(temporaryPath) { try? FileIO.remove(temporaryPath) }
        guard FileIO.exists(path) else {
            size = 0
            return []
        }
        let bytes = try FileIO.read(path, maximumSize: maximumSize)
        var lines: [Line] = []
        var start = 0
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            guard let payload = Self.payload(bytes[start..<end]) else {
                throw damaged("a line of the log does not match its checksum", at: start)
            }
            lines.append(Line(bytes: payload, offset: start))
            start = end + 1
        }
        if bytes.count - start >= 2, Self.payload(bytes[start..<(bytes.count - 1)]) != nil {
            throw damaged(
                "the last line is followed by byte 0x\(String(bytes[bytes.count - 1], radix: 16)) instead of a line break",
                at: bytes.count - 1)
        }
        guard !lines.isEmpty else {
            throw damaged(
                bytes.isEmpty
                    ? "the log is empty: its first line, which names the device, is missing"
                    : "the log's first line, which names the device, is cut short", at: bytes.count)
        }
        size = start
        return lines
    }

    /// The object of a line (without its line break) whose checksum is right, without its
    /// checksum member; nil for any other bytes.
    private static func payload(_ line: ArraySlice<UInt8>) -> [UInt8]? {
        line.withUnsafeBytes { raw -> [UInt8]? in
            guard let recorded = Journal.recordedChecksum(raw), recorded == Journal.actualChecksum(raw) else {
                return nil
            }
            // The object without its checksum member: the bytes before it, and `}`.
            return Array(raw[..<(raw.count - Journal.checksumSuffixLength)]) + [0x7D]
        }
    }

    /// The error for damage at byte `offset` of the log.
    package func damaged(_ reason: String, at offset: Int) -> LiveObjectsError {
        var error = LiveObjectsError(
            .corruptFile, "\(reason) (at byte \(offset)); the file was left as it is", file: path)
        error.inputLocation = InputErrorLocation(offset: offset, reason: reason)
        return error
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
