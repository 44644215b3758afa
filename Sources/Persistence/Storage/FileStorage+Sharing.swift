import Foundation
import LiveObjects
import LiveObjectsJSON
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// One file, several processes: the journal is the log they share. The open lock
// (`<file>.lock`) is held shared by every process that has the file open with the journal (and
// exclusively without it, or while the schema changes); the write lock (`<file>.write-lock`)
// is held exclusively from before a write's body runs to its commit or cancel, and while
// saving, and shared while catching up. See docs/DURABILITY.md and docs/FORMAT.md.
extension FileStorage {
    /// A descriptor of a file opened for reading only, or -1 (a read-only realm creates nothing).
    static func openIfPresent(_ path: String) -> Int32 {
        openFile(path, O_RDONLY | O_CLOEXEC)
    }

    /// Loads the file for a read-only realm: nothing is created or changed. The journal is read
    /// before the snapshot, so that a fold by another process between the two reads cannot
    /// hide a commit (the lines of the journal read are either after the snapshot read, or in
    /// it and skipped).
    func loadReadOnly(_ store: Store, configuration: Realm.Configuration) throws(LiveObjectsError) -> Session {
        let version = configuration.schemaVersion
        guard FileIO.exists(path) else {
            throw LiveObjectsError(
                .io, "the file does not exist, and a read-only open creates nothing", file: path)
        }
        let journalFD = Self.openIfPresent(journalPath)
        var kept = false
        defer { if !kept && journalFD >= 0 { closeFile(journalFD) } }
        var journal: [UInt8]?
        if journalFD >= 0 {
            if let size = FileIO.identity(fd: journalFD)?.size, size > options.maximumFileSize {
                throw LiveObjectsError(
                    .limitExceeded,
                    "the journal is \(size) bytes, more than the \(options.maximumFileSize) allowed "
                        + "(FileStorage.Options.maximumFileSize); nothing was read or changed",
                    file: journalPath)
            }
            journal = try FileIO.readToEnd(journalFD, from: 0, path: journalPath)
        }
        let session = try FileIO.withContents(of: path, maximumSize: options.maximumFileSize) {
            (raw) throws(LiveObjectsError) -> Session in
            var decoder = SnapshotDecoder(raw, fileName: path, verifiesChecksum: options.verifiesChecksum)
            let header = try decoder.readHeader()
            guard header.schemaVersion == version, SchemaDiff(from: header.schema, to: store.schema).isEmpty else {
                throw LiveObjectsError(
                    .schemaVersionMismatch,
                    "the file has schema version \(header.schemaVersion) and another schema than the one asked for "
                        + "(version \(version)); a read-only open cannot migrate it",
                    file: path)
            }
            try decoder.readObjects(into: store)
            let session = Session(store: store, schemaVersion: version, commit: header.commit)
            let replayed = try replayJournal(journal, into: store, header: header, session: session)
            if journalFD >= 0 {
                session.journalFD = journalFD
                session.journalID = FileIO.identity(fd: journalFD)?.id
                session.journalSize = replayed.length
                session.journalLines = journal?[..<replayed.length].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } ?? 1
            }
            return session
        }
        kept = true
        return session
    }

    // MARK: Writes

    package func willBeginWrite(_ store: Store) throws(LiveObjectsError) {
        guard let session, session.store === store else { return }
        if options.readOnly {
            throw LiveObjectsError(.readOnly, "the realm was opened read-only: it cannot write", file: path)
        }
        guard options.journal, !session.writeLocked else { return }
        try lockForWriting(store, session)
        session.writing = true
    }

    /// Releases the write lock a write took, once it is committed or cancelled.
    func endWrite(_ session: Session) {
        guard session.writing else { return }
        session.writing = false
        unlockWriting(session)
    }

    /// Takes the write lock (waiting for another process's write to end), then applies the
    /// commits the other processes appended and cuts a line torn by one that died.
    ///
    /// - Throws: `io`, or `corruptFile` for a damaged line; the lock is then released.
    func lockForWriting(_ store: Store, _ session: Session) throws(LiveObjectsError) {
        try FileIO.flockWaiting(writeLockFD, exclusive: true, timeout: options.writeLockTimeout, path: path)
        session.writeLocked = true
        do throws(LiveObjectsError) {
            try applyAppended(store, session, cutsTornLine: true)
        } catch {
            unlockWriting(session)
            throw error
        }
    }

    func unlockWriting(_ session: Session) {
        session.writeLocked = false
        FileIO.funlock(writeLockFD)
    }

    /// Runs `body` (a save) holding the write lock, after applying the commits of the other
    /// processes; directly when the lock is held already (a fold after a commit) or the file
    /// is not shared.
    func exclusively(_ store: Store, _ session: Session, _ body: () throws(LiveObjectsError) -> Void)
        throws(LiveObjectsError)
    {
        guard options.journal, !session.writeLocked, writeLockFD >= 0 else { return try body() }
        try lockForWriting(store, session)
        defer { unlockWriting(session) }
        try body()
    }

    // MARK: Catching up

    package func catchUp(_ store: Store) {
        guard let session, session.store === store, isShared, !session.writeLocked, !session.applyingExternal else {
            return
        }
        // The common case, one system call: no news from the watcher (which hears of folds),
        // and no new bytes in the journal.
        let told = watcher?.willCatchUp() ?? true
        if !told, session.journalFD >= 0, FileIO.identity(fd: session.journalFD)?.size == session.journalSize {
            return
        }
        if writeLockFD < 0 { writeLockFD = Self.openIfPresent(writeLockPath) }
        if writeLockFD >= 0 {
            // A shared hold: no process is in the middle of a write, whose line it could still
            // cut if the write fails. When one is, the watcher tries again once it is done.
            guard (try? FileIO.flockWaiting(writeLockFD, exclusive: false, wait: false, path: path)) == true else {
                watcher?.retryWhenUnlocked()
                return
            }
        }
        defer { if writeLockFD >= 0 { FileIO.funlock(writeLockFD) } }
        // An error here (a damaged line) is thrown by the next write, which reads the same line.
        try? applyAppended(store, session, cutsTornLine: false)
    }

    /// Applies the journal lines past those this process has read, following the journal
    /// through folds. The caller holds the write lock (shared or exclusive).
    func applyAppended(_ store: Store, _ session: Session, cutsTornLine: Bool) throws(LiveObjectsError) {
        while true {
            if session.journalFD >= 0 {
                let start = session.journalSize
                let bytes = try FileIO.readToEnd(session.journalFD, from: start, path: journalPath)
                if !bytes.isEmpty {
                    let consumed = try bytes.withUnsafeBytesTyped { (raw) throws(LiveObjectsError) -> Int in
                        var replay = JournalReplay(
                            raw, path: journalPath, verifiesChecksums: options.verifiesChecksum, fileOffset: start,
                            lineOffset: session.journalLines)
                        return try replay.applyAppended(
                            into: store, session: session, formatVersion: session.journalFormat)
                    }
                    if consumed < bytes.count && cutsTornLine && !options.readOnly {
                        // The start of a line that a process which died did not finish (the
                        // write lock is held: no one is writing it): cut, as FORMAT.md allows.
                        try FileIO.truncate(session.journalFD, to: session.journalSize, path: journalPath)
                    }
                }
            }
            // A journal renamed over the one this process reads, or one to start reading again
            // (starting a fresh one failed after its rename).
            guard let current = FileIO.identity(path: journalPath),
                current != session.journalID || session.journalFD < 0,
                try switchJournal(store, session)
            else { return }
        }
    }

    /// Moves to the journal now at the journal's path, which a fold renamed there after this
    /// process had read the previous one to its end. When the new journal starts after this
    /// realm's last commit (two folds since it last read, or a save of commits that are only
    /// in the snapshot), the realm is brought to the file's state in one commit instead.
    /// Returns whether it moved to a journal with lines still to read.
    private func switchJournal(_ store: Store, _ session: Session) throws(LiveObjectsError) -> Bool {
        let fd = options.readOnly ? Self.openIfPresent(journalPath) : FileIO.openForWriting(journalPath, O_RDWR)
        guard fd >= 0 else {
            if errno == ENOENT { return false }
            throw FileIO.error("opening the journal", journalPath)
        }
        var kept = false
        defer { if !kept { closeFile(fd) } }
        let bytes = try FileIO.readToEnd(fd, from: 0, path: journalPath)
        guard let end = bytes.firstIndex(of: 0x0A) else { return false }
        let header = try Array(bytes[..<end]).withUnsafeBytesTyped { (raw) throws(LiveObjectsError) -> JournalHeader in
            if options.verifiesChecksum, let recorded = Journal.recordedChecksum(raw),
                Journal.actualChecksum(raw) != recorded
            {
                throw LiveObjectsError(.corruptFile, "journal line 1: the header is damaged", file: journalPath)
            }
            var decoder = SnapshotDecoder(raw, fileName: journalPath, verifiesChecksum: options.verifiesChecksum)
            return try decoder.readJournalHeader()
        }
        guard header.schemaVersion == session.schemaVersion else {
            throw LiveObjectsError(
                .corruptFile,
                "the journal belongs to schema version \(header.schemaVersion), not \(session.schemaVersion)",
                file: journalPath)
        }
        if header.base > session.commit {
            try resynchronize(store, session)
            return false
        }
        closeJournal(session)
        session.journalFD = fd
        kept = true
        session.journalID = FileIO.identity(fd: fd)?.id
        session.journalSize = end + 1
        session.journalFormat = header.formatVersion
        session.journalLines = 1
        return true
    }

    /// Brings the realm to the state of the file (snapshot and journal) in one commit, its
    /// change set the difference, when commits are missing from the journal this process
    /// follows. The caller holds the write lock (shared or exclusive).
    private func resynchronize(_ store: Store, _ session: Session) throws(LiveObjectsError) {
        let fresh = try Store(schema: store.schema)
        let journalFD = options.readOnly ? Self.openIfPresent(journalPath) : FileIO.openForWriting(journalPath, O_RDWR)
        guard journalFD >= 0 else { throw FileIO.error("opening the journal", journalPath) }
        var kept = false
        defer { if !kept { closeFile(journalFD) } }
        let journal = try FileIO.readToEnd(journalFD, from: 0, path: journalPath)
        let loaded = Session(store: fresh, schemaVersion: session.schemaVersion, commit: 0)
        let length = try FileIO.withContents(of: path, maximumSize: options.maximumFileSize) {
            (raw) throws(LiveObjectsError) -> Int in
            var decoder = SnapshotDecoder(raw, fileName: path, verifiesChecksum: options.verifiesChecksum)
            let header = try decoder.readHeader()
            guard header.schemaVersion == session.schemaVersion else {
                throw LiveObjectsError(
                    .corruptFile,
                    "the file has schema version \(header.schemaVersion), not \(session.schemaVersion)", file: path)
            }
            try decoder.readObjects(into: fresh)
            loaded.commit = header.commit
            return try replayJournal(journal, into: fresh, header: header, session: loaded).length
        }
        if loaded.commit > session.commit {
            session.applyingExternal = true
            defer { session.applyingExternal = false }
            for entry in JournalEntry.difference(from: store, to: fresh, commit: loaded.commit) {
                try entry.apply(to: store)
            }
            session.commit = loaded.commit
        }
        closeJournal(session)
        session.journalFD = journalFD
        kept = true
        session.journalID = FileIO.identity(fd: journalFD)?.id
        session.journalSize = length
        session.journalFormat = Journal.formatVersion
        session.journalLines = journal[..<length].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }

    /// Opens the journal again after a failed start of a fresh one left none open, when the
    /// journal on disk starts at this realm's last commit (the rename was done): other
    /// processes then keep reading every commit from it.
    func reattachJournal(_ session: Session) {
        let fd = FileIO.openForWriting(journalPath, O_RDWR)
        guard fd >= 0 else { return }
        guard let bytes = try? FileIO.readToEnd(fd, from: 0, path: journalPath),
            let end = bytes.firstIndex(of: 0x0A), end + 1 == bytes.count,
            let header = try? Array(bytes[..<end]).withUnsafeBytesTyped({
                (raw) throws(LiveObjectsError) -> JournalHeader in
                var decoder = SnapshotDecoder(raw, fileName: journalPath, verifiesChecksum: false)
                return try decoder.readJournalHeader()
            }),
            header.base == session.commit, header.schemaVersion == session.schemaVersion,
            header.formatVersion == Journal.formatVersion
        else {
            closeFile(fd)
            return
        }
        session.journalFD = fd
        session.journalID = FileIO.identity(fd: fd)?.id
        session.journalSize = bytes.count
        session.journalFormat = header.formatVersion
        session.journalLines = 1
    }
}

extension JournalEntry {
    /// The entries that take `old` to the state of `new` (same schema, the keys of `new`):
    /// objects only in `new` inserted, objects only in `old` deleted, the changed properties
    /// of the others updated. One entry, or two when an object of `new` has the slot of one
    /// deleted from `old` (an entry never reuses a slot it frees): the deletions first.
    static func difference(from old: Store, to new: Store, commit: UInt64) -> [JournalEntry] {
        var entry = JournalEntry(commit: commit, changes: [])
        var reusesSlots = false
        for table in old.tables {
            guard let other = new.tablesByName[table.name] else { continue }
            var inserts: [JournalRecord] = []
            var updates: [JournalRecord] = []
            var deletes: [(key: ObjectKey, offset: Int)] = []
            for row in 0..<Int32(other.rowCount) where other.isLive(row) {
                let key = other.key(row)
                let mine = table.row(for: key)
                var fields: [(property: Int, value: JournalField, offset: Int)] = []
                for (p, property) in table.schema.properties.enumerated() where property.isStored {
                    let value = other.value(row, p)
                    if let mine, table.value(mine, p) == value { continue }
                    fields.append((p, field(property, value), 0))
                }
                if mine == nil {
                    if Int(key.row) < table.rowCount && table.isLive(Int32(key.row)) { reusesSlots = true }
                    inserts.append(JournalRecord(key: key, fields: fields, offset: 0))
                } else if !fields.isEmpty {
                    updates.append(JournalRecord(key: key, fields: fields, offset: 0))
                }
            }
            for row in 0..<Int32(table.rowCount) where table.isLive(row) {
                let key = table.key(row)
                if other.row(for: key) == nil { deletes.append((key, 0)) }
            }
            if !inserts.isEmpty || !updates.isEmpty || !deletes.isEmpty {
                entry.changes.append((table, inserts, updates, deletes))
            }
        }
        guard reusesSlots else { return [entry] }
        var deletions = JournalEntry(commit: commit, changes: [])
        deletions.changes = entry.changes.map { ($0.table, [], [], $0.deletes) }
        entry.changes = entry.changes.map { ($0.table, $0.inserts, $0.updates, []) }
        return [deletions, entry]
    }

    private static func field(_ property: Property, _ value: PropertyValue) -> JournalField {
        guard property.type == .object else { return .plain(value) }
        if property.isList {
            guard case .list(let items) = value else { return .list([], ends: []) }
            let keys = items.compactMap { item -> ObjectKey? in
                if case .object(let key) = item { return key }
                return nil
            }
            return .list(keys, ends: Array(repeating: 0, count: keys.count))
        }
        if case .object(let key) = value { return .link(key) }
        return .link(nil)
    }
}

/// Tells a realm whose file other processes share that its journal changed: a watch on the
/// file's directory (inotify on Linux; elsewhere the journal's size is polled), coalesced (at
/// most one catch-up waiting), and held back while a process is in the middle of a write.
final class JournalWatcher: @unchecked Sendable {
    // @unchecked: the descriptors and names are immutable; `pending` is atomic; the realm is
    // behind a lock; `source` is set in init and only cancelled after.

    private struct WeakRealm {
        weak var realm: Realm?
    }

    private let queue = DispatchQueue(label: "LiveObjects.JournalWatcher")
    private let realm: Locked<WeakRealm>
    /// The storage that owns this watcher (weak: the storage holds the watcher).
    private weak var storage: FileStorage?
    private let pending = Atomic<Bool>(false)
    /// A descriptor of its own on the write-lock file, to wait for a write to end.
    private let lockFD: Int32
    private let journalName: String
    private var source: (any DispatchSourceProtocol)?

    init(storage: FileStorage, realm: Realm) {
        self.realm = Locked(WeakRealm(realm: realm))
        self.storage = storage
        lockFD = FileStorage.openIfPresent(storage.writeLockPath)
        journalName = URL(fileURLWithPath: storage.journalPath).lastPathComponent
        #if os(Linux)
            let fd = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
            if fd >= 0,
                inotify_add_watch(fd, storage.directory, UInt32(IN_MODIFY) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE))
                    >= 0
            {
                let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
                source.setEventHandler { [weak self] in self?.readEvents(fd) }
                let lockFD = lockFD
                source.setCancelHandler {
                    closeFile(fd)
                    if lockFD >= 0 { closeFile(lockFD) }
                }
                self.source = source
                source.resume()
                return
            }
            if fd >= 0 { closeFile(fd) }
        #endif
        // Polling, where there is no inotify.
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(20), repeating: .milliseconds(20))
        let path = storage.journalPath
        let last = Locked<(FileID?, Int)>((nil, 0))
        timer.setEventHandler { [weak self] in
            var info = stat()
            let now: (FileID?, Int) =
                stat(path, &info) == 0
                ? (
                    FileID(
                        device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino)),
                    Int(info.st_size)
                ) : (nil, 0)
            let changed = last.withLock { (seen) -> Bool in
                defer { seen = now }
                return seen.0 != now.0 || seen.1 != now.1
            }
            if changed { self?.schedule() }
        }
        let lockFD = lockFD
        timer.setCancelHandler { if lockFD >= 0 { closeFile(lockFD) } }
        source = timer
        timer.resume()
    }

    /// Stops watching (the realm closed).
    func cancel() {
        source?.cancel()
    }

    /// The realm starts catching up: a change after this point needs another catch-up.
    /// Returns whether a change was waiting.
    func willCatchUp() -> Bool {
        pending.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// A catch-up found a write in progress: try again when it ends.
    func retryWhenUnlocked() {
        queue.async { [weak self] in self?.schedule() }
    }

    #if os(Linux)
        /// Reads the waiting inotify events; schedules a catch-up if one is about the journal.
        private func readEvents(_ fd: Int32) {
            var relevant = false
            let name = Array(journalName.utf8)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                if n <= 0 { break }
                var offset = 0
                while offset + 16 <= n {
                    let length = buffer.withUnsafeBytes {
                        Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    }
                    let field = buffer[(offset + 16)..<min(offset + 16 + length, n)]
                    let eventName = field.prefix { $0 != 0 }
                    if eventName.elementsEqual(name) { relevant = true }
                    offset += 16 + length
                }
            }
            if relevant { schedule() }
        }
    #endif

    /// Asks the realm to catch up, once no write is in progress; at most one waits at a time.
    private func schedule() {
        guard !pending.exchange(true, ordering: .sequentiallyConsistent) else { return }
        if lockFD >= 0 {
            while flock(lockFD, LOCK_SH) != 0 && errno == EINTR {}
            while flock(lockFD, LOCK_UN) != 0 && errno == EINTR {}
        }
        guard realm.withLock({ $0.realm }) != nil, let storage else { return }
        Task { await storage.visitRealm { realm in await realm.catchUpWithStorage() } }
    }
}

#if canImport(Glibc)
    @inline(__always) private func openFile(_ path: String, _ flags: Int32) -> Int32 { Glibc.open(path, flags) }
    @inline(__always) private func closeFile(_ fd: Int32) { _ = Glibc.close(fd) }
#elseif canImport(Musl)
    @inline(__always) private func openFile(_ path: String, _ flags: Int32) -> Int32 { Musl.open(path, flags) }
    @inline(__always) private func closeFile(_ fd: Int32) { _ = Musl.close(fd) }
#elseif canImport(Darwin)
    @inline(__always) private func openFile(_ path: String, _ flags: Int32) -> Int32 { Darwin.open(path, flags) }
    @inline(__always) private func closeFile(_ fd: Int32) { _ = Darwin.close(fd) }
#endif
