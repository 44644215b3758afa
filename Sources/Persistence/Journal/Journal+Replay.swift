import Foundation
import LiveObjects
import LiveObjectsJSON

extension FileStorage {
    /// Replays the journal lines after the snapshot. Returns whether the journal can be appended
    /// to as it is, and the length of its lines (its torn last line, if any, left out).
    ///
    /// A journal can be appended to when it is of the current format, of the session's schema
    /// version, and its last line is the session's last commit; otherwise the caller starts a
    /// new one (saving first when lines were replayed). A complete line (ended by its line
    /// break) that is damaged is an error, wherever it is; only a last line without its line
    /// break is a torn write, and ignored. See docs/FORMAT.md.
    func replayJournal(
        _ journal: [UInt8]?, into store: Store, header: SnapshotHeader, session: Session
    ) throws(LiveObjectsError) -> (valid: Bool, length: Int) {
        guard let journal else { return (false, 0) }
        return try journal.withUnsafeBytesTyped { (raw) throws(LiveObjectsError) -> (valid: Bool, length: Int) in
            var replay = JournalReplay(raw, path: journalPath, verifiesChecksums: options.verifiesChecksum)
            return try replay.run(into: store, schemaVersion: header.schemaVersion, session: session)
        }
    }
}

/// Reading a journal's lines and applying those after the snapshot.
struct JournalReplay {
    let raw: UnsafeRawBufferPointer
    let path: String
    let verifiesChecksums: Bool
    /// The complete lines, line breaks excluded.
    private(set) var lines: [Range<Int>] = []
    /// Where `raw` starts in the file, and the number of the line before its first.
    let fileOffset: Int
    let lineOffset: Int

    init(
        _ raw: UnsafeRawBufferPointer, path: String, verifiesChecksums: Bool, fileOffset: Int = 0, lineOffset: Int = 0
    ) {
        self.raw = raw
        self.path = path
        self.verifiesChecksums = verifiesChecksums
        self.fileOffset = fileOffset
        self.lineOffset = lineOffset
        // Lines end with '\n'; JSON text written compactly holds no raw line break.
        var start = 0
        for i in 0..<raw.count where raw[i] == 0x0A {
            lines.append(start..<i)
            start = i + 1
        }
    }

    /// The error for line `n` (from 1) that starts at byte `start`, about the byte `offset` (by
    /// default the line's first).
    private func lineError(_ n: Int, at start: Int, _ message: String, offset: Int? = nil) -> LiveObjectsError {
        var error = LiveObjectsError(.corruptFile, "journal line \(n) (at byte \(start)): \(message)", file: path)
        error.inputLocation = InputErrorLocation(offset: offset ?? start, reason: message)
        return error
    }

    /// `error`, raised while reading or applying line `n`, with the line and the journal's file,
    /// and the byte it is about (the line's first when the error does not say).
    private func wrap(_ error: LiveObjectsError, line n: Int, at start: Int) -> LiveObjectsError {
        var wrapped = LiveObjectsError(
            error.code, "journal line \(n) (at byte \(start)): \(error.message)", objectType: error.objectType,
            property: error.property, primaryKey: error.primaryKey, file: path)
        wrapped.inputLocation = error.inputLocation ?? InputErrorLocation(offset: start, reason: error.message)
        return wrapped
    }

    /// Checks the checksum of line `n`, if the line ends with one. Returns whether it does.
    private func checkChecksum(_ n: Int) throws(LiveObjectsError) -> Bool {
        let range = lines[n - 1]
        let line = UnsafeRawBufferPointer(rebasing: raw[range])
        guard let recorded = Journal.recordedChecksum(line) else { return false }
        guard verifiesChecksums else { return true }
        let actual = Journal.actualChecksum(line)
        guard actual == recorded else {
            let hex = { (v: UInt32) in String(decoding: CRC32C.hex(v), as: UTF8.self) }
            let offset = fileOffset + range.upperBound - Journal.checksumSuffixLength + Journal.checksumPrefix.count
            let reason =
                "the line is damaged: the checksum of its bytes is \(hex(actual)), not the \(hex(recorded)) it records"
            var error = LiveObjectsError(.corruptFile, "\(reason) (at byte \(offset))", file: path)
            error.inputLocation = InputErrorLocation(offset: offset, reason: reason)
            throw error
        }
        return true
    }

    /// A decoder of line `n`.
    private func decoder(_ n: Int) -> SnapshotDecoder {
        let range = lines[n - 1]
        return SnapshotDecoder(
            UnsafeRawBufferPointer(rebasing: raw[range]), fileName: path, startOffset: fileOffset + range.lowerBound,
            startLine: lineOffset + n,
            verifiesChecksum: verifiesChecksums)
    }

    mutating func run(into store: Store, schemaVersion: UInt64, session: FileStorage.Session)
        throws(LiveObjectsError) -> (valid: Bool, length: Int)
    {
        let tailStart = lines.last.map { $0.upperBound + 1 } ?? 0
        // A last line without its line break is torn, unless it is a whole line (its checksum
        // right) followed by a byte other than a line break: a damaged line break.
        if raw.count - tailStart >= 2 {
            let body = UnsafeRawBufferPointer(rebasing: raw[tailStart..<(raw.count - 1)])
            if let recorded = Journal.recordedChecksum(body), Journal.actualChecksum(body) == recorded {
                throw lineError(
                    lines.count + 1, at: tailStart,
                    "the line is followed by byte 0x\(String(raw[raw.count - 1], radix: 16)) instead of a line break "
                        + "(at byte \(raw.count - 1))", offset: raw.count - 1)
            }
        }
        // No complete line: a header torn while written, or an empty file. Started again.
        guard !lines.isEmpty else { return (false, 0) }

        let header: JournalHeader
        do throws(LiveObjectsError) {
            _ = try checkChecksum(1)
            var decoder = decoder(1)
            header = try decoder.readJournalHeader()
        } catch {
            throw wrap(error, line: 1, at: 0)
        }
        var validLength = lines[0].upperBound + 1
        // The commit of the previous line (the header: the base).
        var previous = header.base
        for n in stride(from: 2, through: lines.count, by: 1) {
            let range = lines[n - 1]
            var decoder = decoder(n)
            do throws(LiveObjectsError) {
                if header.formatVersion >= 2 {
                    let checked = try checkChecksum(n)
                    if !checked && verifiesChecksums { throw decoder.corrupt("the line has no checksum") }
                }
                let commit = try decoder.readJournalCommit()
                // Version 2: every line is the next commit. Version 1 (written before checksums):
                // commits go up; lines already in the snapshot may be followed by later ones.
                if header.formatVersion >= 2 ? commit != previous + 1 : commit <= previous {
                    throw decoder.corrupt(
                        commit <= previous
                            ? "commit \(commit) comes after commit \(previous): commit numbers must count up by one"
                            : "commit \(previous + 1) is missing from the journal (found \(commit))")
                }
                previous = commit
                if commit <= session.commit {
                    // Already in the snapshot (a save that ended before the journal was restarted).
                    validLength = range.upperBound + 1
                    continue
                }
                guard commit == session.commit + 1 else {
                    throw decoder.corrupt("commit \(session.commit + 1) is missing from the journal (found \(commit))")
                }
                guard header.schemaVersion == schemaVersion else {
                    throw decoder.corrupt(
                        "the journal belongs to schema version \(header.schemaVersion), not \(schemaVersion)")
                }
                let entry = try decoder.readJournalChanges(commit: commit, store: store, version: header.formatVersion)
                try entry.apply(to: store)
                session.commit = commit
                validLength = range.upperBound + 1
            } catch {
                throw wrap(error, line: n, at: range.lowerBound)
            }
        }
        let appendable =
            header.formatVersion == Journal.formatVersion && header.schemaVersion == session.schemaVersion
            && previous == session.commit
        return (appendable, validLength)
    }
}

extension JournalReplay {
    /// Applies the complete lines of `raw`, bytes of a journal of format `formatVersion` past
    /// its header (written by other processes), whose commits come after the session's: each
    /// as a commit of its own, marked as applied from the file so that the realm's storage
    /// does not write it again. Returns the length of the lines read: a last line without its
    /// line break (being written, or torn by a process that died) is left for later.
    ///
    /// - Throws: `corruptFile` for a damaged line or a missing commit; the lines before it are
    ///   applied and counted in `session`.
    mutating func applyAppended(into store: Store, session: FileStorage.Session, formatVersion: Int64)
        throws(LiveObjectsError) -> Int
    {
        var consumed = 0
        for n in stride(from: 1, through: lines.count, by: 1) {
            let range = lines[n - 1]
            var decoder = decoder(n)
            do throws(LiveObjectsError) {
                if formatVersion >= 2 {
                    let checked = try checkChecksum(n)
                    if !checked && verifiesChecksums { throw decoder.corrupt("the line has no checksum") }
                }
                let commit = try decoder.readJournalCommit()
                if commit > session.commit {
                    guard commit == session.commit + 1 else {
                        throw decoder.corrupt(
                            "commit \(session.commit + 1) is missing from the journal (found \(commit))")
                    }
                    let entry = try decoder.readJournalChanges(commit: commit, store: store, version: formatVersion)
                    session.applyingExternal = true
                    defer { session.applyingExternal = false }
                    try entry.apply(to: store)
                    session.commit = commit
                }
            } catch {
                throw wrap(error, line: lineOffset + n, at: fileOffset + range.lowerBound)
            }
            consumed = range.upperBound + 1
            session.journalSize = fileOffset + consumed
            session.journalLines = lineOffset + n
        }
        return consumed
    }
}
