import Foundation
import LiveObjects
import LiveObjectsJSON
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
    /// it, saves go through `<file>.tmp`, and `<file>.lock` and `<file>.write-lock` hold the
    /// advisory locks. Give each file one identifier: the `Configuration(file:…)` initializers
    /// use the file's standardized path. Within a process, a file is open in one realm at a
    /// time: opening it again under another identifier fails with `invalidOperation`.
    ///
    /// With the journal on, several processes can have the file open: a write takes the write
    /// lock and first applies the commits the others appended, and each realm hears the
    /// others' commits (when the journal changes, and before each read) with the change sets
    /// and notifications of commits of its own. Without the journal, the file is the realm's
    /// alone: opening it from another process fails with `fileLocked` (after trying again for
    /// up to a second) until the realm is closed (``Realm/close()``, or when it is released) or
    /// its process ends. A migration while other processes have the file open fails with
    /// `fileInUse`. Opening a file right after releasing its realm waits for that realm to
    /// finish closing it.
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
    ///   when the file cannot be written (the previous file and the journal are then left as
    ///   they were, so every commit stays durable) or when the fresh journal cannot be started
    ///   (the saved file then holds every commit, and the next write saves again before it
    ///   returns).
    public func save() throws(LiveObjectsError) {
        guard let storage = configuration.storage.backend as? FileStorage else {
            throw LiveObjectsError(.invalidOperation, "the realm '\(configuration.identifier)' is not kept in a file")
        }
        guard !store.isInWrite else {
            throw LiveObjectsError(.alreadyInWriteTransaction, "a realm cannot be saved while a write is open")
        }
        try storage.save(store)
    }

    /// Runs a save that a coalescing policy deferred.
    func runDeferredSave() {
        guard let storage = configuration.storage.backend as? FileStorage, !store.isInWrite else { return }
        storage.runDeferredSave(store)
    }
}

/// The engine behind `Realm.Storage.file(_:options:)`.
///
/// **Durability.** When a write returns, its commit is on disk under the options' policy: with
/// the journal, its line is appended (and synced, with ``Options/syncsJournal``); with
/// ``SavePolicy/afterEveryCommit``, the saved file holds it. When that fails (a full disk, an
/// I/O error), the write throws `io` and is rolled back: the realm and its files are exactly as
/// before it. Nothing turns durability off: the next write tries the files again, and every
/// write throws while they cannot be written. Saves the policy makes on its own (folding the
/// journal, ``SavePolicy/coalesced(_:)``) come after the commit is durable; when one fails,
/// the journal or the previous file still holds every commit, and the save is tried again
/// later. See docs/DURABILITY.md.
///
/// One value per configuration; its state is used only inside the isolation of the realm that
/// opened it (open, commits, saves and close all run there).
public final class FileStorage: StorageBackend, CommitListener, @unchecked Sendable {
    // @unchecked: `session` is touched only inside the isolation of the realm that owns it
    // (its init, commit observers, isolated methods and isolated deinit); the rest is immutable.

    /// When the snapshot file is written.
    public enum SavePolicy: Sendable, Hashable {
        /// Only when `Realm.save()` is called, and (with the journal on) when the journal is
        /// folded: past its threshold and when the realm closes. Without the journal, changes
        /// not saved are lost when the realm closes.
        case manual
        /// After every commit, before the write returns: when a write returns, the saved file
        /// holds its commit; when the save fails, the write throws `io` and is rolled back.
        /// Simple, but each commit rewrites the whole file: for small realms. (With the journal
        /// on, it is restarted after each save and never holds more than its header.)
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
        /// Whether the realm only reads the file (an extension beside the app that writes it):
        /// opening creates and changes no file (not even the lock files) and never holds the
        /// write lock exclusively (only shared, while it reads the journal), and the realm sees
        /// the commits of the processes that write the file as they make them. A write, or a save,
        /// throws `readOnly`; the file must exist and need no migration. Default: `false`.
        public var readOnly: Bool = false
        /// How long a write, a save or an open waits while another process holds the file's
        /// write lock (it is writing, or has a write transaction open) before it fails with
        /// `fileInUse` and changes nothing. The wait blocks the realm's thread. Default: 10
        /// seconds.
        public var writeLockTimeout: Duration = .seconds(10)

        /// Creates options; every argument has the default documented on its property.
        public init(
            savePolicy: SavePolicy = .manual, journal: Bool = true, syncsJournal: Bool = true,
            journalFoldThreshold: Int = 4 << 20, deleteDataIfMigrationNeeded: Bool = false,
            migration: MigrationBlock? = nil, maximumFileSize: Int = 1 << 30, verifiesChecksum: Bool = true,
            readOnly: Bool = false, writeLockTimeout: Duration = .seconds(10)
        ) {
            self.readOnly = readOnly
            self.writeLockTimeout = writeLockTimeout
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

    var session: Session?
    /// The descriptor holding the open lock on `lockPath` while the file is open: shared with
    /// the journal (other processes may open the file too), exclusive without it.
    var lockFD: Int32 = -1
    let lockPath: String
    /// The descriptor of the write lock (`<file>.write-lock`), held exclusively from before a
    /// write's body runs to its commit or cancel, and while saving; shared while catching up.
    var writeLockFD: Int32 = -1
    let writeLockPath: String
    /// What tells the realm that another process appended to the journal.
    var watcher: JournalWatcher?
    /// Whether other processes may have the file open at the same time (the journal is on, or
    /// the realm only reads).
    var isShared: Bool { options.journal || options.readOnly }

    /// The files open in this process, by standardized path.
    static let openPaths = Locked<[String: OpenFile]>([:])

    /// A file open in this process.
    struct OpenFile {
        /// The realm holding it, once attached: nil again as soon as that realm is released,
        /// before its deinit closes the file.
        weak var realm: Realm?
        var attached = false
        /// The storage's own tasks running on the realm now (a catch-up, a deferred save): each
        /// holds the realm for a moment, which is not the app keeping it open.
        var visits = 0
        /// `Realm.open` calls waiting for the released realm to close the file, or for a visit
        /// to end.
        var waiters: [CheckedContinuation<Void, Never>] = []

        /// Whether `Realm.open` must wait: the realm was released and its deinit has not yet
        /// closed the file, or a task of the storage holds it (once the task ends, the realm is
        /// either still the app's or released).
        var isSettling: Bool { attached && (realm == nil || visits > 0) }
    }

    init(url: URL, options: Options) {
        self.url = url
        self.options = options
        path = url.standardizedFileURL.path
        journalPath = path + ".journal"
        temporaryPath = path + ".tmp"
        lockPath = path + ".lock"
        writeLockPath = path + ".write-lock"
        directory = url.standardizedFileURL.deletingLastPathComponent().path
    }

    /// What the durability step wrote for a commit.
    enum PreparedCommit {
        /// A journal line, appended after `size` bytes and `lines` lines, for the commit after
        /// `commit`.
        case journalLine(size: Int, lines: Int, commit: UInt64)
        /// The snapshot, saved with the commit.
        case snapshot
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
        /// The length of the journal's lines this process has read (and applied or written).
        var journalSize = 0
        /// Which file `journalFD` is: a fold by another process renames a new journal over it.
        var journalID: FileID?
        /// The format version of the open journal's header.
        var journalFormat = Journal.formatVersion
        /// The number of lines of the open journal read so far (for errors).
        var journalLines = 1
        /// Whether this process holds the write lock exclusively.
        var writeLocked = false
        /// Whether a write of this realm holds the write lock (released when it commits or is
        /// cancelled).
        var writing = false
        /// Whether commits of other processes are being applied (they are on disk already).
        var applyingExternal = false
        var lastSave = ContinuousClock.now
        var deferredSaveScheduled = false
        weak var realm: Realm?
        /// Set when syncing the directory failed after a snapshot was renamed into place: the
        /// next commit syncs it before it returns.
        var directoryNeedsSync = false
        /// What the durability step did for the commit being prepared, until it is final: what
        /// ``abandon(_:)`` undoes.
        var prepared: PreparedCommit?
        /// Whether the snapshot holds a commit that was abandoned after it was saved: the
        /// write's ``cancelled()`` saves the rolled-back state again.
        var snapshotHoldsAbandoned = false
        /// Whether the files hold an abandoned commit that could not be taken back: the next
        /// commit saves the snapshot (and starts the journal again) instead of appending.
        var savesSnapshotNext = false
        var writer = JSONWriter(capacity: 4096)
        /// The store's change history, found once (it is installed before the storage opens):
        /// a commit it records as remote is marked so in the journal.
        let history: HistoryLog?

        init(store: Store, schemaVersion: UInt64, commit: UInt64) {
            self.store = store
            self.schemaVersion = schemaVersion
            self.commit = commit
            self.savedCommit = commit
            self.history = store.history
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
            lockFD = try FileIO.lock(lockPath, file: path, shared: isShared, readOnly: options.readOnly)
            if isShared {
                // Loading under the write lock: no other process folds or appends meanwhile.
                if options.readOnly {
                    writeLockFD = Self.openIfPresent(writeLockPath)
                } else {
                    writeLockFD = FileIO.openForWriting(writeLockPath, O_RDWR | O_CREAT)
                    guard writeLockFD >= 0 else { throw FileIO.error("opening the lock file \(writeLockPath)", path) }
                }
                if writeLockFD >= 0 {
                    try FileIO.flockWaiting(
                        writeLockFD, exclusive: !options.readOnly, timeout: options.writeLockTimeout, path: path)
                }
            }
            session = try load(store, configuration: configuration)
            // What a save that was cut short left behind (the open holds the write lock, or the
            // file alone: no save runs).
            if !options.readOnly { try? FileIO.remove(temporaryPath) }
            if writeLockFD >= 0 { FileIO.funlock(writeLockFD) }
        } catch {
            release()
            var error = error
            if error.file == nil { error.file = path }
            throw error
        }
        store.addCommitListener(self)
    }

    package func attach(_ realm: Realm) {
        session?.realm = realm
        if isShared { watcher = JournalWatcher(storage: self, realm: realm) }
        Self.openPaths.withLock { paths in
            paths[path]?.realm = realm
            paths[path]?.attached = true
        }
    }

    package func prepareToOpen() async {
        // Wait while a released realm's deinit has not yet closed the file, or while a task of
        // this storage holds the realm (a realm that is still being made is not attached yet:
        // no waiting for it).
        while true {
            let settling = Self.openPaths.withLock { paths in paths[path]?.isSettling ?? false }
            guard settling else { return }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = Self.openPaths.withLock { (paths) -> Bool in
                    guard paths[path]?.isSettling == true else { return false }
                    paths[path]!.waiters.append(continuation)
                    return true
                }
                if !waiting { continuation.resume() }
            }
        }
    }

    /// Runs `body` on the realm that holds the file, if the app still has it. While `body`
    /// runs, `Realm.open` of this file waits: the realm is kept alive by the storage, not by
    /// the app, and opening the file with another schema version must not fail because of it.
    func visitRealm(_ body: @Sendable (Realm) async -> Void) async {
        guard await Self.visit(path, body) else { return }
        let waiters = Self.openPaths.withLock { (paths) -> [CheckedContinuation<Void, Never>] in
            guard paths[path] != nil else { return [] }
            paths[path]!.visits -= 1
            guard paths[path]!.visits == 0 else { return [] }
            defer { paths[path]!.waiters = [] }
            return paths[path]!.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Takes the realm for a visit and runs `body`; the realm is released when this returns,
    /// before the visit is counted as ended. Returns whether there was a realm.
    private static func visit(_ path: String, _ body: @Sendable (Realm) async -> Void) async -> Bool {
        let realm = openPaths.withLock { (paths) -> Realm? in
            guard let realm = paths[path]?.realm else { return nil }
            paths[path]!.visits += 1
            return realm
        }
        guard let realm else { return false }
        await body(realm)
        return true
    }

    package func close(_ store: Store) throws(LiveObjectsError) {
        guard let session, session.store === store else { return }
        if options.readOnly {
        } else if options.journal {
            // The journal is folded by the last process to close the file (folding while others
            // have it open would make them switch journals for nothing).
            try exclusively(store, session) { () throws(LiveObjectsError) in
                guard session.commit != session.savedCommit, FileIO.tryExclusive(lockFD) else { return }
                do throws(LiveObjectsError) {
                    try writeSnapshot(store, session, commit: session.commit)
                    try resetJournal(session)
                } catch {
                    FileIO.share(lockFD)
                    throw error
                }
            }
        } else if session.commit != session.savedCommit && options.savePolicy != .manual {
            try save(store)
        }
        if session.journalFD >= 0 { Glibc_close(session.journalFD) }
        self.session = nil
        release()
    }

    package func release(_ store: Store) {
        do throws(LiveObjectsError) {
            try close(store)
        } catch {
            guard let session, session.store === store else { return }
            if session.journalFD >= 0 { Glibc_close(session.journalFD) }
            self.session = nil
            release()
        }
    }

    /// Releases the advisory lock and the file's entry in this process, and wakes the opens
    /// waiting for it.
    private func release() {
        watcher?.cancel()
        watcher = nil
        if writeLockFD >= 0 {
            Glibc_close(writeLockFD)
            writeLockFD = -1
        }
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
        if options.readOnly { return try loadReadOnly(store, configuration: configuration) }
        guard FileIO.exists(path) else {
            if FileIO.exists(journalPath) {
                throw LiveObjectsError(
                    .corruptFile, "the journal exists but its snapshot file does not; nothing was changed",
                    file: path)
            }
            let session = Session(store: store, schemaVersion: version, commit: 0)
            store.finishLoading()
            // A first open that fails leaves no file behind: what it made is removed.
            do throws(LiveObjectsError) {
                try writeSnapshot(store, session, commit: session.commit)
                if options.journal { try resetJournal(session) }
            } catch {
                closeJournal(session)
                FileIO.removeMade(journalPath)
                FileIO.removeMade(path)
                throw error
            }
            return session
        }
        return try FileIO.withContents(of: path, maximumSize: options.maximumFileSize) {
            (raw) throws(LiveObjectsError) -> Session in
            let journal =
                FileIO.exists(journalPath) ? try FileIO.read(journalPath, maximumSize: options.maximumFileSize) : nil
            var decoder = SnapshotDecoder(raw, fileName: path, verifiesChecksum: options.verifiesChecksum)
            let header = try decoder.readHeader(checksumInBackground: raw.count >= Snapshot.backgroundChecksumSize)
            let diff = SchemaDiff(from: header.schema, to: store.schema)
            let readsAsIs = diff.isEmpty && header.schemaVersion == version
            // Anything but reading the objects acts on the header: its checksum first.
            if !readsAsIs { try decoder.settleChecksum() }
            if header.schemaVersion > version {
                throw LiveObjectsError(
                    .schemaVersionMismatch,
                    "the file has schema version \(header.schemaVersion), higher than the \(version) asked for; versions only go up",
                    file: path)
            }
            if readsAsIs {
                try decoder.readObjects(into: store)
                let session = Session(store: store, schemaVersion: version, commit: header.commit)
                let replayed = try replayJournal(journal, into: store, header: header, session: session)
                if options.journal {
                    if replayed.valid {
                        try reopenJournal(session, validLength: replayed.length)
                        session.journalLines = journal?[..<replayed.length].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } ?? 1
                    } else {
                        // A journal that cannot be appended to (an older format, a stale one):
                        // what it added is saved before it is started again.
                        if session.commit != header.commit { try writeSnapshot(store, session, commit: session.commit) }
                        try resetJournal(session)
                    }
                } else if journal != nil {
                    try writeSnapshot(store, session, commit: session.commit)
                    try FileIO.remove(journalPath)
                }
                return session
            }
            if options.deleteDataIfMigrationNeeded {
                try requireAlone(fileVersion: header.schemaVersion, version: version)
                defer { if options.journal { FileIO.share(lockFD) } }
                let session = Session(store: store, schemaVersion: version, commit: header.commit)
                store.finishLoading()
                try writeSnapshot(store, session, commit: session.commit)
                if options.journal { try resetJournal(session) } else { try FileIO.remove(journalPath) }
                return session
            }
            if header.schemaVersion == version {
                throw LiveObjectsError(
                    .schemaVersionMismatch,
                    "the schema differs from the file's at the same schema version \(version) (\(diff)); raise the schema version to migrate",
                    file: path)
            }
            // Migration: load the old data with the old schema, then move it over.
            try requireAlone(fileVersion: header.schemaVersion, version: version)
            defer { if options.journal { FileIO.share(lockFD) } }
            let old = try Store(schema: header.schema)
            let oldHistory = store.history == nil ? nil : HistoryLog()
            if let oldHistory { old.addCommitListener(oldHistory) }
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
            try writeSnapshot(store, session, commit: session.commit)
            if options.journal { try resetJournal(session) } else { try FileIO.remove(journalPath) }
            return session
        }
    }

    /// Takes the open lock exclusively for a change of the schema, which needs the file to
    /// itself (the caller gives it back as shared when done).
    ///
    /// - Throws: `fileInUse` when another process has the file open.
    private func requireAlone(fileVersion: UInt64, version: UInt64) throws(LiveObjectsError) {
        guard FileIO.tryExclusive(lockFD, grace: .seconds(1)) else {
            throw LiveObjectsError(
                .fileInUse,
                "the file has schema version \(fileVersion) and another process has it open: migrating it to "
                    + "version \(version) (or deleting its data) needs every other process to close it first; "
                    + "nothing was changed",
                file: path)
        }
    }

    // MARK: Saving

    /// Saves now: writes the snapshot and starts a fresh journal.
    ///
    /// - Throws: `io` when the snapshot cannot be written (the old one is then as it was, and
    ///   the journal still holds every commit), or when the fresh journal cannot be started (the
    ///   snapshot then holds every commit, and the next commit saves again before it returns).
    func save(_ store: Store) throws(LiveObjectsError) {
        guard let session, session.store === store else {
            throw LiveObjectsError(.invalidOperation, "the file realm is closed", file: path)
        }
        if options.readOnly {
            throw LiveObjectsError(.readOnly, "the realm was opened read-only: it cannot save", file: path)
        }
        // Under the write lock, after the commits of other processes: the snapshot holds them.
        try exclusively(store, session) { () throws(LiveObjectsError) in
            try writeSnapshot(store, session, commit: session.commit)
            if options.journal { try resetJournal(session) }
        }
    }

    /// Writes the snapshot of the store's current state as commit `commit`.
    ///
    /// - Throws: `io`. When the rename over the old snapshot was done before the failure (only
    ///   syncing the directory failed), the new snapshot is what readers see: it is recorded as
    ///   saved and the error is not thrown, but the next commit syncs the directory again first
    ///   (see ``makeDurable(_:_:)``).
    private func writeSnapshot(_ store: Store, _ session: Session, commit: UInt64) throws(LiveObjectsError) {
        var replaced = false
        do throws(LiveObjectsError) {
            try FileIO.replaceAtomically(path, temporary: temporaryPath, directory: directory, replaced: &replaced) {
                (fd) throws(LiveObjectsError) in
                try Snapshot.encode(store, schemaVersion: session.schemaVersion, commit: commit) {
                    (chunk) throws(LiveObjectsError) in
                    try FileIO.writeAll(fd, chunk, path: temporaryPath)
                }
            }
        } catch {
            guard replaced else { throw error }
            session.directoryNeedsSync = true
        }
        session.savedCommit = commit
        session.lastSave = .now
    }

    /// Replaces the journal with one holding only its header, and opens it for appending.
    ///
    /// A failure before the new journal's rename leaves the old journal open and in use (its
    /// lines up to the snapshot's commit are skipped at replay). A failure after it leaves no
    /// journal open: the next commit then saves the whole snapshot before it returns.
    private func resetJournal(_ session: Session) throws(LiveObjectsError) {
        let header = Journal.header(schemaVersion: session.schemaVersion, base: session.savedCommit)
        var replaced = false
        do throws(LiveObjectsError) {
            try FileIO.replaceAtomically(
                journalPath, temporary: temporaryPath, directory: directory, replaced: &replaced
            ) { (fd) throws(LiveObjectsError) in
                try header.withUnsafeBytesTyped { (raw) throws(LiveObjectsError) in
                    try FileIO.writeAll(fd, raw, path: journalPath)
                }
            }
        } catch {
            if replaced { closeJournal(session) }
            throw error
        }
        closeJournal(session)
        try reopenJournal(session, validLength: header.count)
    }

    func closeJournal(_ session: Session) {
        if session.journalFD >= 0 {
            Glibc_close(session.journalFD)
            session.journalFD = -1
        }
    }

    /// Opens the journal for appending after its first `validLength` bytes (cutting off a torn
    /// last line).
    private func reopenJournal(_ session: Session, validLength: Int) throws(LiveObjectsError) {
        let fd = FileIO.openForWriting(journalPath, O_RDWR)
        guard fd >= 0 else { throw FileIO.error("opening the journal", journalPath) }
        do throws(LiveObjectsError) {
            try FileIO.truncate(fd, to: validLength, path: journalPath)
        } catch {
            Glibc_close(fd)
            throw error
        }
        session.journalFD = fd
        session.journalSize = validLength
        session.journalID = FileIO.identity(fd: fd)?.id
        session.journalFormat = Journal.formatVersion
        session.journalLines = 1
    }

    // MARK: Commits

    /// The durability step of the commit pipeline.
    package var stage: CommitStage { .durability }

    package func prepare(_ commit: Commit) throws(LiveObjectsError) {
        try makeDurable(commit.changes, commit.store)
    }

    /// Undoes the durability step for a commit that a listener after it cancelled (none of the
    /// package's does: the stages after durability prepare nothing; the pipeline allows it).
    ///
    /// A journal line appended for the commit is cut off, as a failed append's is. A snapshot
    /// saved with the commit is saved again in ``cancelled()``, once the write is rolled back.
    /// When the cut or the save fails, the next commit saves the snapshot, which replaces what
    /// the files hold (until then they hold the abandoned commit: a crash in between keeps it,
    /// and another process reading the journal in between may apply it).
    package func abandon(_ commit: Commit) {
        guard let session, session.store === commit.store, !session.applyingExternal,
            let prepared = session.prepared
        else { return }
        session.prepared = nil
        switch prepared {
        case .journalLine(let size, let lines, let previous):
            do throws(LiveObjectsError) {
                try FileIO.truncate(session.journalFD, to: size, path: journalPath)
            } catch {
                // The line stays, counted as this process's own (so that catching up does not
                // apply it), until the next commit's snapshot replaces the journal.
                session.savesSnapshotNext = true
                return
            }
            session.commit = previous
            session.journalLines = lines
            session.journalSize = size
            if options.syncsJournal { try? FileIO.sync(session.journalFD, path: journalPath) }
        case .snapshot:
            session.snapshotHoldsAbandoned = true
        }
    }

    package func committed(_ commit: Commit) {
        guard let session, session.store === commit.store, !session.applyingExternal else { return }
        session.prepared = nil
        if !commit.isEmpty { committed(commit.changes, commit.store) }
        endWrite(session)
    }

    package func cancelled() {
        guard let session, !session.applyingExternal else { return }
        if session.snapshotHoldsAbandoned {
            session.snapshotHoldsAbandoned = false
            saveAfterAbandon(session)
        }
        endWrite(session)
    }

    /// Saves the snapshot again after the commit it was saved with was abandoned and rolled
    /// back. On failure, the next commit saves it.
    private func saveAfterAbandon(_ session: Session) {
        do throws(LiveObjectsError) {
            try writeSnapshot(session.store, session, commit: session.commit)
        } catch {
            session.savesSnapshotNext = true
            return
        }
        if options.journal { try? resetJournal(session) }
    }

    /// Makes a commit durable before its write returns (the durability step of the store's
    /// commit pipeline): the write is still open, so throwing rolls it back.
    ///
    /// - With the journal, the commit's line is appended and synced. If that fails, the
    ///   journal is cut back to its length before the line and the error is thrown.
    /// - With ``SavePolicy/afterEveryCommit``, or when no journal is open because starting a
    ///   fresh one failed, the snapshot is saved with the commit instead.
    /// - A directory sync that failed after an earlier rename is done again first.
    ///
    /// - Throws: `io`; the files then hold exactly what they held before the write.
    private func makeDurable(_ changes: ChangeSet, _ store: Store) throws(LiveObjectsError) {
        guard let session, session.store === store, !session.applyingExternal else { return }
        let commit = session.commit + 1
        if session.directoryNeedsSync {
            try FileIO.syncDirectory(directory)
            session.directoryNeedsSync = false
        }
        if options.journal && session.journalFD < 0 { reattachJournal(session) }
        if options.savePolicy == .afterEveryCommit && options.journal && session.journalFD >= 0 {
            // The line first, so that other processes, reading the journal, get the commit
            // before the journal is started again; the snapshot holds it when the write returns.
            let length = session.journalSize
            try append(changes, commit: commit, session, store)
            do throws(LiveObjectsError) {
                try writeSnapshot(store, session, commit: commit)
            } catch {
                do throws(LiveObjectsError) {
                    try FileIO.truncate(session.journalFD, to: length, path: journalPath)
                    if options.syncsJournal { try FileIO.sync(session.journalFD, path: journalPath) }
                    session.journalSize = length
                } catch {
                    closeJournal(session)
                }
                throw error
            }
            session.commit = commit
            session.savesSnapshotNext = false
            try? resetJournal(session)
            session.prepared = .snapshot
            return
        }
        if options.savePolicy == .afterEveryCommit || (options.journal && session.journalFD < 0)
            || session.savesSnapshotNext
        {
            try writeSnapshot(store, session, commit: commit)
            session.commit = commit
            session.savesSnapshotNext = false
            session.prepared = .snapshot
            // The snapshot holds the commit: a journal that cannot be started now is started
            // by the next commit.
            if options.journal { try? resetJournal(session) }
            return
        }
        if options.journal {
            let size = session.journalSize
            let lines = session.journalLines
            try append(changes, commit: commit, session, store)
            session.prepared = .journalLine(size: size, lines: lines, commit: session.commit)
        }
        session.commit = commit
    }

    /// Appends a commit's line to the journal and syncs it; on failure cuts the journal back.
    private func append(_ changes: ChangeSet, commit: UInt64, _ session: Session, _ store: Store)
        throws(LiveObjectsError)
    {
        // At the end of the journal (other processes may have appended since this one last did).
        guard lseek(session.journalFD, off_t(session.journalSize), SEEK_SET) >= 0 else {
            throw FileIO.error("seeking in the journal", journalPath)
        }
        session.writer.removeAllBytes()
        try Journal.line(
            commit: commit, changes: changes, store: store, isRemote: session.history?.isRecordingRemote == true,
            writer: &session.writer)
        do throws(LiveObjectsError) {
            try session.writer.withUnsafeBytes { (raw) throws(LiveObjectsError) in
                try FileIO.writeAll(session.journalFD, raw, path: journalPath)
            }
            if options.syncsJournal { try FileIO.sync(session.journalFD, path: journalPath) }
        } catch {
            // Part of the line may be in the file: cut it off, so that a reopen (or another
            // process) does not replay a commit that was rolled back. If even that fails, stop
            // using the journal: the next commit saves the snapshot, which replaces it. (When
            // only syncing the cut fails, the file as everyone reads it is cut: it stays in use.)
            do throws(LiveObjectsError) {
                try FileIO.truncate(session.journalFD, to: session.journalSize, path: journalPath)
            } catch {
                closeJournal(session)
                throw error
            }
            if options.syncsJournal { try? FileIO.sync(session.journalFD, path: journalPath) }
            throw error
        }
        session.journalSize += session.writer.count
        session.journalLines += 1
    }

    /// Work a commit leaves for after it is durable: the save policy's saves and folding the
    /// journal. These cannot fail the commit, which is already durable; a failed one is tried
    /// again later (the next commit past the fold threshold, the next interval, the close).
    private func committed(_ changes: ChangeSet, _ store: Store) {
        guard let session, session.store === store else { return }
        switch options.savePolicy {
        case .afterEveryCommit, .manual:
            break
        case .coalesced(let interval):
            if ContinuousClock.now - session.lastSave >= interval {
                saveQuietly(store, session)
            } else {
                scheduleDeferredSave(session, after: interval - (ContinuousClock.now - session.lastSave))
            }
        }
        if options.journal && session.journalSize > options.journalFoldThreshold
            && session.commit != session.savedCommit
        {
            saveQuietly(store, session)
        }
    }

    /// Saves after a commit: a failure leaves the journal, or the previous snapshot, holding
    /// what it held, and the save is tried again later.
    private func saveQuietly(_ store: Store, _ session: Session) {
        do throws(LiveObjectsError) {
            try save(store)
        } catch {
            session.lastSave = .now
            if case .coalesced(let interval) = options.savePolicy { scheduleDeferredSave(session, after: interval) }
        }
    }

    private func scheduleDeferredSave(_ session: Session, after delay: Duration) {
        guard !session.deferredSaveScheduled, session.realm != nil else { return }
        session.deferredSaveScheduled = true
        Task { [self] in
            try? await Task.sleep(for: delay)
            await visitRealm { realm in await realm.runDeferredSave() }
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
#elseif canImport(Darwin)
    @inline(__always) private func Glibc_close(_ fd: Int32) { _ = Darwin.close(fd) }
#endif
