import Foundation
import LiveObjects

extension FileStorage {
    /// Replays the journal lines after the snapshot. Returns the length of the valid prefix and
    /// whether the journal can be appended to (its header matches).
    func replayJournal(
        _ journal: [UInt8]?, into store: Store, header: SnapshotHeader, session: Session
    ) throws(LiveObjectsError) -> (valid: Bool, length: Int) {
        guard let journal else { return (false, 0) }
        return try journal.withUnsafeBytesTyped { (raw) throws(LiveObjectsError) -> (valid: Bool, length: Int) in
            // Lines end with '\n'; JSON text written compactly holds no raw line break.
            var lines: [Range<Int>] = []
            var start = 0
            for i in 0..<raw.count where raw[i] == 0x0A {
                lines.append(start..<i)
                start = i + 1
            }
            // A last line without its line break is a torn write: ignored.
            guard let first = lines.first else { return (false, 0) }
            var decoder = SnapshotDecoder(UnsafeRawBufferPointer(rebasing: raw[first]), fileName: journalPath)
            let journalHeader: (schemaVersion: UInt64, base: UInt64)
            do throws(LiveObjectsError) {
                journalHeader = try decoder.readJournalHeader()
                try decoder.reader.finish()
            } catch {
                if lines.count == 1 { return (false, 0) }
                throw error
            }
            var validLength = first.upperBound + 1
            for (n, line) in lines.enumerated().dropFirst() {
                let isLast = n == lines.count - 1
                var decoder = SnapshotDecoder(UnsafeRawBufferPointer(rebasing: raw[line]), fileName: journalPath)
                var parsed = false
                do throws(LiveObjectsError) {
                    let commit = try decoder.readJournalCommit()
                    if commit <= session.commit {
                        validLength = line.upperBound + 1
                        continue
                    }
                    guard commit == session.commit + 1 else {
                        throw decoder.corrupt(
                            "commit \(session.commit + 1) is missing from the journal (found \(commit))")
                    }
                    guard journalHeader.schemaVersion == header.schemaVersion else {
                        throw decoder.corrupt(
                            "the journal belongs to schema version \(journalHeader.schemaVersion), not \(header.schemaVersion)"
                        )
                    }
                    let entry = try decoder.readJournalChanges(commit: commit, store: store)
                    parsed = true
                    try entry.apply(to: store)
                    session.commit = commit
                    validLength = line.upperBound + 1
                } catch {
                    // A last line that does not parse is a torn write too.
                    if isLast && !parsed && error.code == .corruptFile { break }
                    throw LiveObjectsError(
                        error.code, "journal line \(n + 1): \(error.message)", objectType: error.objectType,
                        property: error.property, file: journalPath)
                }
            }
            return (journalHeader.schemaVersion == session.schemaVersion, validLength)
        }
    }
}
