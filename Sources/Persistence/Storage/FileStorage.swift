import Foundation
import LiveObjects
import Synchronization

extension Realm.Storage {
    /// A realm kept in a file: loaded when the realm opens, saved by the options' policy, with an
    /// optional journal that makes every commit durable before the write returns.
    ///
    /// ```swift
    /// let url = URL(fileURLWithPath: "/data/shop.liveobjects")
    /// let realm = try await Realm.open(.init(file: url, objectTypes: [Product.self], schemaVersion: 2))
    /// ```
    ///
    /// The file is a JSON snapshot (see docs/FORMAT.md); the journal is `<file>.journal` beside
    /// it, saves go through `<file>.tmp`, and `<file>.lock` holds the advisory lock. Give each
    /// file one identifier: the `Configuration(file:…)` initializers use the file's standardized
    /// path. A file can be open in one realm of one process at a time: opening it again under
    /// another identifier fails with `invalidOperation`, and opening it from another process
    /// fails with `fileLocked` (after trying again for up to a second) until the realm is closed
    /// (``Realm/close()``, or when it is released) or its process ends. Opening a file right after releasing its realm waits for
    /// that realm to finish closing it.
    public static func file(_ url: URL, options: FileStorage.Options = .init()) -> Realm.Storage {
        Realm.Storage(backend: FileStorage(url: url, options: options))
    }
}

extension Realm.Configuration {
    /// A configuration for model classes kept in a file; the identifier is the file's
    /// standardized path.
    public init(
        file url: URL, objectTypes: [Object.Type], schemaVersion: UInt64 = 0,
        options: FileStorage.Options = .init()
    ) {
        self.init(
            identifier: url.standardizedFileURL.path, objectTypes: objectTypes, schemaVersion: schemaVersion,
            storage: .file(url, options: options))
    }

    /// A configuration for a schema given as data, kept in a file; the identifier is the file's
    /// standardized path.
    public init(
        file url: URL, schema: Schema, schemaVersion: UInt64 = 0, options: FileStorage.Options = .init()
    ) {
        self.init(
            identifier: url.standardizedFileURL.path, schema: schema, schemaVersion: schemaVersion,
            storage: .file(url, options: options))
    }
}

extension Realm {
    /// Writes the realm's committed state to its file now, atomically, and empties the journal.
    ///
    /// - Throws: `invalidOperation` for a realm that is not kept in a file;
    ///   `alreadyInWriteTransaction` while a write is open (only committed state is saved); `io`
    ///   when the file cannot be written (the previous file is then left as it was); an earlier
    ///   journal write failure, once.
    public func save() throws(LiveObjectsError) {
        guard let storage = configuration.storage.backend as? FileStorage else {
            throw LiveObjectsError(.invalidOperation, "the realm '\(configuration.identifier)' is not kept in a file")
        }
        guard !store.isInWrite else {
            throw LiveObjectsError(.alreadyInWriteTransaction, "a realm cannot be saved while a write is open")
        }
        try storage.save(store, explicit: true)
    }

    /// Runs a save that a coalescing policy deferred.
    func runDeferredSave() {
        guard let storage = configuration.storage.backend as? FileStorage, !store.isInWrite else { return }
        storage.runDeferredSave(store)
    }
}

/// The engine behind ``Realm/Storage/file(_:options:)``.
///
/// One value per configuration; its state is used only inside the isolation of the realm that
/// opened it (open, commits, saves and close all run there).
public final class FileStorage: StorageBackend, @unchecked Sendable {
    // @unchecked: `session` is touched only inside the isolation of the realm that owns it
    // (its init, commit observers, isolated methods and isolated deinit); the rest is immutable.

    /// When the snapshot file is written.
    public enum SavePolicy: Sendable, Hashable {
        /// Only when ``Realm/save()`` is called, and (with the journal on) when the journal is
        /// folded: past its threshold and when the realm closes. Without the journal, changes
        /// not saved are lost when the realm closes.
        case manual
        /// After every commit, before the write returns. Simple and durable, but each commit
        /// rewrites the whole file: for small realms.
        case afterEveryCommit
        /// At most once per interval: a commit saves if the last save is at least `interval`
        /// old, otherwise a save is scheduled for when it is; the realm saves pending changes
        /// when it closes. Commits in between are durable only with the journal.
        case coalesced(Duration)
    }

    /// How a file realm saves, journals and migrates.
    public struct Options: Sendable {
        /// When the snapshot is written. Default: ``SavePolicy/manual`` (with the journal on,
        /// every commit is still durable when its write returns).
        public var savePolicy: SavePolicy = .manual
        /// Whether each commit is appended to the journal (`<file>.journal`) before its write
        /// returns. Default: `true`.
        public var journal: Bool = true
        /// Whether each journal append is synced to the disk (`fsync`) before the write
        /// returns. Without it a commit survives a crash of the process but maybe not of the
        /// machine. Default: `true`.
        public var syncsJournal: Bool = true
        /// The journal size, in bytes, past which it is folded into the snapshot (a save) after
        /// a commit. Default: 4 MiB.
        public var journalFoldThreshold: Int = 4 << 20
        /// The largest snapshot or journal file opening reads, in bytes; a larger one is refused
        /// with `limitExceeded` before it is read, and left as it is. Default: 1 GiB.
        public var maximumFileSize: Int = 1 << 30
        /// Whether opening checks the checksums that the snapshot and each journal line carry
        /// (see docs/FORMAT.md), refusing with `corruptFile` a file changed outside LiveObjects.
        /// Turn it off to open a file edited by hand: its checksum is then neither checked nor
        /// needed, and the next save writes a new one. Files damaged by the disk are opened too
        /// then, so turn it back on once the file is saved. Default: `true`.
        public var verifiesChecksum: Bool = true
        /// Whether to delete the file's data, instead of failing or migrating, when the schema
        /// differs from the file's: for caches. A file with a higher schema version than asked
        /// for is still an error. Default: `false`.
        public var deleteDataIfMigrationNeeded: Bool = false
        /// Called when the file's schema version is lower than the configuration's, after the
        /// automatic changes (new properties get their defaults, removed ones are dropped).
        /// Default: nil (automatic changes only).
        public var migration: MigrationBlock?

        /// Creates options; every argument has the default documented on its property.
        public init(
            savePolicy: SavePolicy = .manual, journal: Bool = true, syncsJournal: Bool = true,
            journalFoldThreshold: Int = 4 << 20, deleteDataIfMigrationNeeded: Bool = false,
            migration: MigrationBlock? = nil, maximumFileSize: Int = 1 << 30, verifiesChecksum: Bool = true
        ) {
            self.savePolicy = savePolicy
            self.journal = journal
            self.syncsJournal = syncsJournal
            self.journalFoldThreshold = journalFoldThreshold
            self.deleteDataIfMigrationNeeded = deleteDataIfMigrationNeeded
            self.migration = migration
            self.maximumFileSize = maximumFileSize
            self.verifiesChecksum = verifiesChecksum
        }
    }

    /// The snapshot file.
    public let url: URL
    /// The options.
    public let options: Options
    let path: String
    let journalPath: String
    let temporaryPath: String
    let directory: String

    private var session: Session?
    /// The descriptor holding the advisory lock on `lockPath` while the file is open.
    private var lockFD: Int32 = -1
    let lockPath: String

    /// The files open in this process, by standardized path.
    static let openPaths = Locked<[String: OpenFile]>([:])

    /// A file open in this process.
    struct OpenFile {
        /// The realm holding it, once attached: nil again as soon as that realm is released,
        /// before its deinit closes the file.
        weak var realm: Realm?
        var attached = false
        /// `Realm.open` calls waiting for the released realm to close the file.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    init(url: URL, options: Options) {
        self.url = url
        self.options = options
        path = url.standardizedFileURL.path
        journalPath = path + ".journal"
        temporaryPath = path + ".tmp"
        lockPath = path + ".lock"
        directory = url.standardizedFileURL.deletingLastPathComponent().path
    }

    /// The state of an open file realm.
    final class Session {
        unowned(unsafe) let store: Store
        let schemaVersion: UInt64
        /// Commits so far (persisted: the snapshot says how many it holds).
        var commit: UInt64
        /// The commit the snapshot on disk holds.
        var savedCommit: UInt64
        var journalFD: Int32 = -1
        var journalSize = 0
        var lastSave = ContinuousClock.now
        var deferredSaveScheduled = false
        weak var realm: Realm?
        /// A journal write that failed: reported by the next save.
        var failure: LiveObjectsError?
        var writer = JSONWriter(capacity: 4096)

        init(store: Store, schemaVersion: UInt64, commit: UInt64) {
            self.store = store
            self.schemaVersion = schemaVersion
            self.commit = commit
            self.savedCommit = commit
        }
    }

    // MARK: StorageBackend

    package func open(_ store: Store, configuration: Realm.Configuration) throws(LiveObjectsError) {
        for type in store.schema.objectSchemas {
            if type.properties.contains(where: { $0.name == "$id" }) {
                throw LiveObjectsError(
                    .invalidSchema, "'$id' is reserved by file storage", objectType: type.name, property: "$id")
            }
        }
        let inserted = Self.openPaths.withLock { (paths) -> Bool in
            guard paths[path] == nil else { return false }
            paths[path] = OpenFile()
            return true
        }
        guard inserted else {
            throw LiveObjectsError(.invalidOperation, "the file is already open in this process", file: path)
        }
        do throws(LiveObjectsError) {
            lockFD = try FileIO.lock(lockPath, file: path)
            session = try load(store, configuration: configuration)
            // What a save that was cut short left behind (the open took the lock: no save runs).
            unlink(temporaryPath)
        } catch {
            release()
            var error = error
            if error.file == nil { error.file = path }
            throw error
        }
        store.commitObservers.append { [self] changes, store in self.committed(changes, store) }
    }

    package func attach(_ realm: Realm) {
        session?.realm = realm
        Self.openPaths.withLock { paths in
            paths[path]?.realm = realm
            paths[path]?.attached = true
        }
    }

    package func prepareToOpen() async {
        // Wait while a released realm's deinit has not yet closed the file (a realm that is
        // still being made is not attached yet: no waiting for it).
        while true {
            let closing = Self.openPaths.withLock { paths in
                paths[path].map { $0.attached && $0.realm == nil } ?? false
            }
            guard closing else { return }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = Self.openPaths.withLock { (paths) -> Bool in
                    guard let file = paths[path], file.attached, file.realm == nil else { return false }
                    paths[path]!.waiters.append(continuation)
                    return true
                }
                if !waiting { continuation.resume() }
            }
        }
    }

    package func close(_ store: Store) throws(LiveObjectsError) {
        guard let session, session.store === store else { return }
        if session.commit != session.savedCommit {
            switch options.savePolicy {
            case .manual where !options.journal: break
            default: try save(store, explicit: false)
            }
        }
        if session.journalFD >= 0 { Glibc_close(session.journalFD) }
        self.session = nil
        release()
    }

    /// Releases the advisory lock and the file's entry in this process, and wakes the opens
    /// waiting for it.
    private func release() {
        if lockFD >= 0 {
            // Closing the descriptor releases the lock; the lock file stays (removing it would
            // let two processes lock two different files of the same name).
            Glibc_close(lockFD)
            lockFD = -1
        }
        let waiters = Self.openPaths.withLock { paths in paths.removeValue(forKey: path)?.waiters ?? [] }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Opening

    private func load(_ store: Store, configuration: Realm.Configuration) throws(LiveObjectsError) -> Session {
        let version = configuration.schemaVersion
        guard FileIO.exists(path) else {
            if FileIO.exists(journalPath) {
                throw LiveObjectsError(
                    .corruptFile, "the journal exists but its snapshot file does not; nothing was changed",
                    file: path)
            }
            let session = Session(store: store, schemaVersion: version, commit: 0)
            store.finishLoading()
            try writeSnapshot(store, session)
            if options.journal { try resetJournal(session) }
            return session
        }
        return try FileIO.withContents(of: path, maximumSize: options.maximumFileSize) {
            (raw) throws(LiveObjectsError) -> Session in
            let journal =
                FileIO.exists(journalPath) ? try FileIO.read(journalPath, maximumSize: options.maximumFileSize) : nil
            var decoder = SnapshotDecoder(raw, fileName: path, verifiesChecksum: options.verifiesChecksum)
            let header = try decoder.readHeader()
            if header.schemaVersion > version {
                throw LiveObjectsError(
                    .schemaVersionMismatch,
                    "the file has schema version \(header.schemaVersion), higher than the \(version) asked for; versions only go up",
                    file: path)
            }
            let diff = SchemaDiff(from: header.schema, to: store.schema)
            if diff.isEmpty && header.schemaVersion == version {
                try decoder.readObjects(into: store)
                let session = Session(store: store, schemaVersion: version, commit: header.commit)
                let replayed = try replayJournal(journal, into: store, header: header, session: session)
                if options.journal {
                    if replayed.valid {
                        try reopenJournal(session, validLength: replayed.length)
                    } else {
                        // A journal that cannot be appended to (an older format, a stale one):
                        // what it added is saved before it is started again.
                        if session.commit != header.commit { try writeSnapshot(store, session) }
                        try resetJournal(session)
                    }
                } else if journal != nil {
                    try writeSnapshot(store, session)
                    unlink(journalPath)
                }
                return session
            }
            if options.deleteDataIfMigrationNeeded {
                let session = Session(store: store, schemaVersion: version, commit: header.commit)
                store.finishLoading()
                try writeSnapshot(store, session)
                if options.journal { try resetJournal(session) } else { unlink(journalPath) }
                return session
            }
            if header.schemaVersion == version {
                throw LiveObjectsError(
                    .schemaVersionMismatch,
                    "the schema differs from the file's at the same schema version \(version) (\(diff)); raise the schema version to migrate",
                    file: path)
            }
            // Migration: load the old data with the old schema, then move it over.
            let old = try Store(schema: header.schema)
            let oldHistory = store.history == nil ? nil : HistoryLog()
            if let oldHistory {
                old.history = oldHistory
                old.commitObservers.append { changes, store in oldHistory.record(changes, store) }
            }
            try decoder.readObjects(into: old)
            let oldSession = Session(store: old, schemaVersion: header.schemaVersion, commit: header.commit)
            _ = try replayJournal(journal, into: old, header: header, session: oldSession)
            try MigrationRunner.migrate(
                from: old, oldVersion: header.schemaVersion, to: store, newVersion: version,
                block: options.migration, file: path)
            // The migration's copy is not a change: the history restarts after it, its token
            // going on from the file's.
            if let oldHistory { store.history?.load(token: oldHistory.token + 1, startToken: oldHistory.token + 1) }
            let session = Session(store: store, schemaVersion: version, commit: oldSession.commit + 1)
            session.savedCommit = 0
            try writeSnapshot(store, session)
            if options.journal { try resetJournal(session) } else { unlink(journalPath) }
            return session
        }
    }

    // MARK: Saving

    /// Saves now.
    func save(_ store: Store, explicit: Bool) throws(LiveObjectsError) {
        guard let session, session.store === store else {
            throw LiveObjectsError(.invalidOperation, "the file realm is closed", file: path)
        }
        if explicit, let failure = session.failure {
            session.failure = nil
            // Save anyway, so that the snapshot holds what the journal missed; then report.
            try writeSnapshot(store, session)
            if options.journal { try resetJournal(session) }
            throw failure
        }
        try writeSnapshot(store, session)
        if options.journal { try resetJournal(session) }
    }

    private func writeSnapshot(_ store: Store, _ session: Session) throws(LiveObjectsError) {
        try FileIO.replaceAtomically(path, temporary: temporaryPath, directory: directory) {
            (fd) throws(LiveObjectsError) in
            try Snapshot.encode(store, schemaVersion: session.schemaVersion, commit: session.commit) {
                (chunk) throws(LiveObjectsError) in
                try FileIO.writeAll(fd, chunk, path: temporaryPath)
            }
        }
        session.savedCommit = session.commit
        session.lastSave = .now
    }

    /// Replaces the journal with one holding only its header, and opens it for appending.
    private func resetJournal(_ session: Session) throws(LiveObjectsError) {
        if session.journalFD >= 0 {
            Glibc_close(session.journalFD)
            session.journalFD = -1
        }
        let header = Journal.header(schemaVersion: session.schemaVersion, base: session.commit)
        try FileIO.replaceAtomically(journalPath, temporary: temporaryPath, directory: directory) {
            (fd) throws(LiveObjectsError) in
            try header.withUnsafeBytesTyped { (raw) throws(LiveObjectsError) in
                try FileIO.writeAll(fd, raw, path: journalPath)
            }
        }
        try reopenJournal(session, validLength: header.count)
    }

    /// Opens the journal for appending after its first `validLength` bytes (cutting off a torn
    /// last line).
    private func reopenJournal(_ session: Session, validLength: Int) throws(LiveObjectsError) {
        let fd = Glibc_open(journalPath, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileIO.error("opening the journal", journalPath) }
        guard ftruncate(fd, off_t(validLength)) == 0, lseek(fd, off_t(validLength), SEEK_SET) >= 0 else {
            let e = FileIO.error("positioning the journal", journalPath)
            Glibc_close(fd)
            throw e
        }
        session.journalFD = fd
        session.journalSize = validLength
    }

    // MARK: Commits

    private func committed(_ changes: ChangeSet, _ store: Store) {
        guard let session, session.store === store else { return }
        session.commit += 1
        if options.journal && session.journalFD >= 0 && session.failure == nil {
            do throws(LiveObjectsError) {
                session.writer.removeAllBytes()
                try Journal.line(commit: session.commit, changes: changes, store: store, writer: &session.writer)
                try session.writer.withUnsafeBytes { (raw) throws(LiveObjectsError) in
                    try FileIO.writeAll(session.journalFD, raw, path: journalPath)
                    session.journalSize += raw.count
                }
                if options.syncsJournal { try FileIO.sync(session.journalFD, path: journalPath) }
            } catch {
                // Stop journaling: the next save writes everything and reports the failure.
                session.failure = error
                Glibc_close(session.journalFD)
                session.journalFD = -1
            }
        }
        switch options.savePolicy {
        case .afterEveryCommit:
            saveQuietly(store, session)
        case .coalesced(let interval):
            if ContinuousClock.now - session.lastSave >= interval {
                saveQuietly(store, session)
            } else {
                scheduleDeferredSave(session, after: interval - (ContinuousClock.now - session.lastSave))
            }
        case .manual:
            break
        }
        if options.journal && session.journalSize > options.journalFoldThreshold
            && session.commit != session.savedCommit
        {
            saveQuietly(store, session)
        }
    }

    /// Saves from a commit, which cannot throw: a failure is kept for the next ``Realm/save()``.
    private func saveQuietly(_ store: Store, _ session: Session) {
        do throws(LiveObjectsError) {
            try writeSnapshot(store, session)
            if options.journal { try resetJournal(session) }
        } catch {
            if session.failure == nil { session.failure = error }
        }
    }

    private func scheduleDeferredSave(_ session: Session, after delay: Duration) {
        guard !session.deferredSaveScheduled, let realm = session.realm else { return }
        session.deferredSaveScheduled = true
        Task { [weak realm] in
            try? await Task.sleep(for: delay)
            await realm?.runDeferredSave()
        }
    }

    func runDeferredSave(_ store: Store) {
        guard let session, session.store === store else { return }
        session.deferredSaveScheduled = false
        if session.commit != session.savedCommit { saveQuietly(store, session) }
    }
}

#if canImport(Glibc)
    @inline(__always) private func Glibc_close(_ fd: Int32) { _ = Glibc.close(fd) }
    @inline(__always) private func Glibc_open(_ path: String, _ flags: Int32) -> Int32 { Glibc.open(path, flags) }
#elseif canImport(Darwin)
    @inline(__always) private func Glibc_close(_ fd: Int32) { _ = Darwin.close(fd) }
    @inline(__always) private func Glibc_open(_ path: String, _ flags: Int32) -> Int32 { Darwin.open(path, flags) }
#endif
