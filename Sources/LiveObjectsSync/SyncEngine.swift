import Foundation
import LiveObjects
import Persistence

/// Sends a realm's local changes to a server and merges the server's changes back: the building
/// blocks of an offline-first app.
///
/// ```swift
/// var configuration = Realm.Configuration(file: url, objectTypes: [Card.self, Holder.self])
/// configuration.keepsHistory = true                      // the engine reads the change history
/// let realm = try await Realm.open(configuration)
/// let engine = try await SyncEngine(realm: realm, transport: MyHTTPTransport(), types: [Holder.self, Card.self])
/// // … edit offline as usual …
/// let report = try await engine.sync()                     // when the network is back
/// ```
///
/// **Push.** Pending changes are the local changes in the realm's history after the engine's
/// synced token, coalesced per object (``SyncChange``). They are sent in dependency order: an
/// object created in this round goes before the objects that link to it (to-one links and lists
/// of links; in a cycle the order is arbitrary), then deletions, then the
/// ``SyncableObject/largePayloadProperties`` of every object. A failed push is retried with
/// exponential backoff (``Configuration``); a batch that still fails marks its objects
/// ``SyncStatus/failed`` and ends the round. A refusal of a whole request by an HTTP server (a
/// ``SyncHTTPError`` that is not ``SyncHTTPError/isTransient``: a token it does not take, a
/// role that may not push) is not tried again: the batch fails at once, with the reason in
/// ``SyncReport/rejections``, and a refused pull is the report's ``SyncReport/pullFailure``. A
/// change the server refuses alone (a ``SyncReceipt/Outcome/rejected(_:)`` receipt) holds back
/// nothing else: the round ends without it, and it waits in ``rejectedChanges()`` for the app's
/// ``retry(_:)`` or ``discard(_:)``. Each change carries an idempotency key (the
/// device's id, the object and the token of its last change): a change the server acknowledged
/// is never sent again, and a retry after a lost response repeats the key, so a server applies
/// it once. When every
/// change of a round is acknowledged, the synced token moves to the round's end and (by default)
/// the history is trimmed up to it.
///
/// **Pull.** The server sends the current state of changed objects with a server version. The
/// merge is last-writer-wins in the server's order: a state is applied when its version is
/// higher than any state the engine pulled for the object and not lower than the version of
/// this device's last acknowledged change to it (duplicated, reordered or stale answers change
/// nothing), except for the properties of a local change not sent yet, which stay local (they
/// reach the server later, so they are the last write there too; when one had in fact reached
/// the server in an attempt whose answer was lost, before the state pulled, its receipt says so,
/// and the engine pulls again from the start to take the later state). A local deletion not sent yet
/// wins over a server update. A list is not replaced whole: an update of a list carries its
/// base (``SyncChange/bases``, the list as this device last had it from the server), and the
/// server merges the difference into its list (docs/SYNC-PROTOCOL.md, "Lists"; a `MutableSet`
/// travels as a list and is merged per member, "Sets"; a `Map` travels as ``SyncValue/map(_:)``,
/// of objects as ``SyncValue/referenceMap(_:)``, and is merged per key, "Maps"); the engine keeps each list's and map's
/// base, from the last pull that set it or the last push acknowledged. An
/// object deleted on the server while it has a local change not sent yet is a ``SyncConflict``,
/// left for the app (``conflicts()``, ``resolve(_:with:)``).
/// Server changes are applied as remote writes: the history marks them, and they are never sent
/// back. Pages come in version order, not link order: a link (or a list element, or a map's value) naming an object
/// not here yet is set when that object arrives, on a later page or in a later pull; the engine
/// keeps it in its state meanwhile.
///
/// **State.** For a realm kept in a file, the engine keeps its state (the pull cursor, server
/// ids and versions, the keys acknowledged in a round not finished, the synced token, open
/// conflicts, refused changes, links waiting for their targets, the lists' bases, changes with
/// merged lists sent without an answer) in a log beside it, `<file>.sync`: a line is appended
/// after each push batch and each pulled page, synced to the disk when the realm's journal is,
/// and the log is rewritten as one line when it grows. So a restarted app neither sends an
/// acknowledged change again nor pulls from the beginning; after a crash it repeats at most the
/// batch or the page in flight, which the idempotency keys and the merge make harmless. A line newer than the realm (whose
/// last commits were lost with an unsynced journal) is not used. One engine per realm file. A
/// realm kept in memory keeps the state in memory, and after a restart pulls from the
/// beginning.
public actor SyncEngine {
    /// How the engine retries.
    public struct Configuration: Sendable {
        /// Attempts per batch before its objects are marked failed. Default: 5.
        public var maxAttempts: Int
        /// The wait after the first failure; it doubles after each further one. Default: 1 s.
        public var initialBackoff: Duration
        /// The longest wait between attempts. Default: 60 s.
        public var maxBackoff: Duration
        /// The most changes sent in one push. Default: 100.
        public var batchSize: Int
        /// Whether the history is trimmed up to the synced token after a round. Default: `true`.
        public var trimsHistory: Bool
        /// How the engine waits between attempts: inject one in tests so that they do not wait.
        /// Default: `Task.sleep(for:)`.
        public var sleep: @Sendable (Duration) async throws -> Void
        /// Whether the engine of a realm kept in a file keeps its state in `<file>.sync` beside
        /// it (see ``SyncEngine``). Default: `true`.
        public var keepsState: Bool

        /// Creates a configuration; every argument has the default documented on its property.
        public init(
            maxAttempts: Int = 5, initialBackoff: Duration = .seconds(1), maxBackoff: Duration = .seconds(60),
            batchSize: Int = 100, trimsHistory: Bool = true, keepsState: Bool = true,
            sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
        ) {
            self.keepsState = keepsState
            self.maxAttempts = max(1, maxAttempts)
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
            self.batchSize = max(1, batchSize)
            self.trimsHistory = trimsHistory
            self.sleep = sleep
        }
    }

    /// The realm synced.
    public let realm: Realm
    let transport: any SyncTransport
    let configuration: Configuration
    let types: [String: SyncedType]
    let typeOrder: [String]

    /// This device's id in idempotency keys: a random UUID, kept in the state log (a new one per
    /// engine for a realm kept in memory).
    var deviceID = UUID().uuidString
    /// Local changes up to this token have all reached the server.
    public internal(set) var syncedToken: HistoryToken
    /// Keys the server acknowledged.
    var acknowledged = Set<String>()
    var serverIDs: [SyncObjectID: String] = [:]
    /// The newest server state pulled, per object.
    var serverVersions: [SyncObjectID: UInt64] = [:]
    /// The server version of the last change of this device acknowledged, per object.
    var pushedVersions: [SyncObjectID: UInt64] = [:]
    var cursor: String?
    /// While the device pulls everything again (the server answered `resetRequired`): the
    /// objects the pull brought so far. Nil otherwise.
    var resetSeen: Set<SyncObjectID>?
    var statuses: [SyncObjectID: SyncStatus] = [:]
    var openConflicts: [SyncObjectID: SyncConflict] = [:]
    /// Objects to send again as new (a conflict resolved with ``SyncConflictResolution/keepLocal``).
    var recreate = Set<SyncObjectID>()
    /// Keys the server refused in the current push round: not sent again before the next one.
    var rejectedThisRound = Set<String>()
    /// Links pulled before their targets, by object and property: the server's value, set when
    /// the targets arrive.
    var pendingLinks: [PendingLink: SyncValue] = [:]
    /// Per object, the value of each list property as this device last had it from the server
    /// (pulled, or pushed and acknowledged): the base a change of the list is sent with.
    var listBases: [SyncObjectID: [String: SyncValue]] = [:]
    /// Changes with lists merged on the server (``SyncChange/bases``) that a round sent without
    /// getting their receipt: the server may have applied them. Sent again, with their key,
    /// before the next round reads the object's later changes, so that their edits are not
    /// merged twice.
    var unconfirmed: [SyncObjectID: SyncChange] = [:]
    /// Changes the server refused, until the app retries or discards them (and, for a discarded
    /// one, until the round that passes it ends).
    var rejected: [SyncObjectID: RejectedChange] = [:]
    /// The queries this device syncs by (``SyncSubscription``); nil: the whole space.
    var subscriptionList: [SyncSubscription]?
    /// With subscriptions: the objects the server sent because they match one (the roots of
    /// what the device keeps; the objects they link to are kept with them).
    var viewRoots = Set<SyncObjectID>()
    /// With subscriptions: objects the server no longer sends (hidden removals) that are still
    /// here; kept with fresh values while an object the device keeps links to them, removed
    /// otherwise (``settleView(_:afterWalk:)``).
    var viewStale = Set<SyncObjectID>()
    /// Whether a walk from the beginning for changed subscriptions has not finished yet: until
    /// it has, no object is removed for leaving them.
    var viewWalkPending = false
    /// The download of the walk from the beginning under way, or the last one.
    var progress: SyncProgress?
    var progressSubscribers: [UInt64: AsyncStream<SyncProgress>.Continuation] = [:]
    /// Wakes ``syncContinuously(onReport:)`` when a local write commits.
    var localWake: AsyncStream<Void>.Continuation?
    /// The state log beside a file realm (nil for a realm in memory, or without
    /// ``Configuration/keepsState``), what changed since it was last written, and the size of
    /// its last rewrite.
    let stateLog: SidecarLog?
    var stateChanges = SyncStateChanges()
    var compactedStateSize = 0
    private var statusSubscribers:
        [UInt64: (filter: SyncObjectID?, continuation: AsyncStream<SyncStatusUpdate>.Continuation)] = [:]
    private var conflictSubscribers: [UInt64: AsyncStream<SyncConflict>.Continuation] = [:]
    var subscriberCounter: UInt64 = 0
    private var isBusy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Creates an engine for a realm that keeps history.
    ///
    /// - Parameters:
    ///   - realm: A realm opened with `Realm.Configuration.keepsHistory`.
    ///   - transport: The app's connection to its server.
    ///   - types: The model classes to sync. Links to other types are not sent.
    ///   - configuration: Retries and backoff.
    /// - Throws: `invalidOperation` when the realm keeps no history; `invalidSchema` when a type
    ///   is not in the realm, has no primary key, or lacks its optional `String` server id
    ///   property; `corruptFile` when the state log beside the realm's file is damaged (remove
    ///   it to start over: the engine then pulls from the beginning); `io`.
    public init(
        realm: Realm, transport: any SyncTransport, types: [any SyncableObject.Type],
        configuration: Configuration = .init()
    ) async throws(LiveObjectsError) {
        guard realm.configuration.keepsHistory else {
            throw LiveObjectsError(
                .invalidOperation, "a sync engine needs a realm that keeps history (Configuration.keepsHistory)")
        }
        let names = Set(types.map { $0.className })
        var synced: [String: SyncedType] = [:]
        for type in types {
            let name = type.className
            guard let schema = realm.schema[name], !schema.isEmbedded, let pk = schema.primaryKey else {
                throw LiveObjectsError(
                    .invalidSchema, "a synced type must be a top-level type of the realm with a primary key",
                    objectType: name)
            }
            let serverID = type.serverIDProperty
            guard let property = schema[serverID], property.type == .string, property.isOptional, !property.isList
            else {
                throw LiveObjectsError(
                    .invalidSchema, "a synced type needs an optional String property for its server id",
                    objectType: name, property: serverID)
            }
            let sent = schema.properties.filter { p in
                guard p.isStored, !p.isPrimaryKey, p.name != serverID else { return false }
                if p.type == .object { return names.contains(p.objectType ?? "") }
                return true
            }
            synced[name] = SyncedType(
                name: name, primaryKey: pk.name, primaryKeyType: pk.type, serverIDProperty: serverID,
                largePayloadProperties: type.largePayloadProperties, sentProperties: sent)
        }
        self.realm = realm
        self.transport = transport
        self.configuration = configuration
        self.types = synced
        self.typeOrder = types.map { $0.className }
        self.syncedToken = await realm.oldestHistoryToken
        self.stateLog = configuration.keepsState ? SidecarLog.beside(realm, suffix: ".sync") : nil
        try await loadState()
        await realm.addCommitObserver { [weak self] _, store in
            guard let self, store.history?.isRecordingRemote != true else { return }
            Task {
                await self.wakeForLocalChange()
                try? await self.refreshStatuses()
            }
        }
        try? await refreshStatuses()
    }

    // MARK: Public operations

    /// Pushes pending local changes, then pulls and merges the server's changes.
    ///
    /// Calls do not overlap: a call made while another runs waits for it.
    ///
    /// A failure of the transport never throws: a push that failed after every retry, or that
    /// the server refused, is in the report's ``SyncReport/failed`` and
    /// ``SyncReport/rejections``, and a pull that failed is its ``SyncReport/pullFailure`` (the
    /// pages before it are merged, and the next pull goes on from the last of them).
    ///
    /// - Returns: What was sent, applied, found in conflict and failed.
    /// - Throws: a realm error: the history needed was trimmed by someone else
    ///   (`historyTrimmed`), or writing the merge or the state log failed (`io`).
    @discardableResult
    public func sync() async throws -> SyncReport {
        try await exclusively {
            var report = SyncReport()
            try await pushRound(&report)
            try await pullRound(&report)
            // Objects pulled after a keep-local resolution, or changed while pulling.
            if !recreate.isEmpty, report.pullFailure == nil { try await pushRound(&report) }
            return report
        }
    }

    /// Pushes pending local changes only.
    ///
    /// - Throws: as ``sync()``: failures of the transport are in the report.
    @discardableResult
    public func push() async throws -> SyncReport {
        try await exclusively {
            var report = SyncReport()
            try await pushRound(&report)
            return report
        }
    }

    /// Pulls and merges the server's changes only.
    ///
    /// - Throws: as ``sync()``: a failed pull is the report's ``SyncReport/pullFailure``.
    @discardableResult
    public func pull() async throws -> SyncReport {
        try await exclusively {
            var report = SyncReport()
            try await pullRound(&report)
            return report
        }
    }

    /// The sync status of an object, counting the local writes committed so far:
    /// ``SyncStatus/synced`` for an object with no local change the engine knows of.
    public func status(of object: SyncObjectID) async -> SyncStatus {
        try? await refreshStatuses()
        return currentStatus(object)
    }

    func currentStatus(_ object: SyncObjectID) -> SyncStatus {
        statuses[object] ?? .synced
    }

    /// The conflicts waiting for ``resolve(_:with:)``.
    public var conflictsToResolve: [SyncConflict] {
        openConflicts.values.sorted { $0.object.description < $1.object.description }
    }

    /// The status changes of every object, or of one object (starting with its current status).
    public func statusUpdates(for object: SyncObjectID? = nil) -> SyncStatusUpdates {
        let (stream, continuation) = AsyncStream<SyncStatusUpdate>.makeStream(bufferingPolicy: .unbounded)
        subscriberCounter += 1
        let id = subscriberCounter
        statusSubscribers[id] = (object, continuation)
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribeStatus(id) } }
        if let object { continuation.yield(SyncStatusUpdate(object: object, status: currentStatus(object))) }
        return SyncStatusUpdates(stream: stream)
    }

    /// The conflicts found from now on (the ones already open are in ``conflictsToResolve``).
    public func conflicts() -> SyncConflicts {
        let (stream, continuation) = AsyncStream<SyncConflict>.makeStream(bufferingPolicy: .unbounded)
        subscriberCounter += 1
        let id = subscriberCounter
        conflictSubscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribeConflicts(id) } }
        return SyncConflicts(stream: stream)
    }

    /// Settles a conflict; the next ``sync()`` acts on it.
    ///
    /// - Throws: `invalidOperation` when the object has no open conflict; a realm error when
    ///   deleting the local object fails.
    public func resolve(_ object: SyncObjectID, with resolution: SyncConflictResolution) async throws {
        guard openConflicts[object] != nil else {
            throw LiveObjectsError(
                .invalidOperation, "the object has no conflict to resolve", objectType: object.typeName,
                primaryKey: object.primaryKey)
        }
        let type = types[object.typeName]!
        switch resolution {
        case .keepLocal:
            serverIDs[object] = nil
            serverVersions[object] = nil
            pushedVersions[object] = nil
            noteObjectChanged(object)
            let exists = try await realm.writeRemote { realm -> Bool in
                guard let local = try realm.dynamicObject(ofType: object.typeName, forPrimaryKey: object.primaryKey)
                else {
                    return false
                }
                if !local[type.serverIDProperty].isNull { try local.set(type.serverIDProperty, to: .null) }
                return true
            }
            openConflicts[object] = nil
            if exists {
                recreate.insert(object)
                setStatus(.pending, of: object)
            } else {
                setStatus(.synced, of: object)
            }
        case .acceptDeletion:
            try await realm.writeRemote { realm in
                if let local = try realm.dynamicObject(ofType: object.typeName, forPrimaryKey: object.primaryKey) {
                    try realm.delete(local)
                }
            }
            openConflicts[object] = nil
            setStatus(.synced, of: object)
        }
        noteSetsChanged()
        try await saveState()
    }

    // MARK: Refused changes

    /// The local changes the server refused, with the reason and the object's local values,
    /// waiting for the app's ``retry(_:)`` or ``discard(_:)``.
    ///
    /// A refused change is not sent again on its own, and while it waits the properties it
    /// changed keep their local values (later changes of the object wait with it). Other
    /// changes are not held back: the rest of its batch and later rounds go on.
    ///
    /// - Throws: a realm error when reading the objects fails.
    public func rejectedChanges() async throws -> [SyncRejectedChange] {
        let waiting = rejected.values.filter { $0.discardedAt == nil }.sorted {
            $0.object.description < $1.object.description
        }
        let types = types
        let serverIDs = serverIDs
        return try await realm.read { realm in
            try waiting.map { change in
                var values: [String: SyncValue] = [:]
                if let type = types[change.object.typeName],
                    let object = try realm.dynamicObject(
                        ofType: change.object.typeName, forPrimaryKey: change.object.primaryKey)
                {
                    let names = type.sentProperties.map(\.name).filter { change.properties?.contains($0) ?? true }
                    values = try Self.values(of: object, type, names, types, serverIDs, in: realm)
                }
                return SyncRejectedChange(
                    object: change.object, kind: change.kind, rejection: change.rejection, isRetrying: change.retry,
                    localValues: values)
            }
        }
    }

    /// Sends a refused change again at the next push (say once the user has a grant, or after
    /// the app corrected the object): its properties, with their values at that time, and the
    /// object's changes made since.
    ///
    /// - Throws: `invalidOperation` when the object has no refused change; `io` when the state
    ///   log cannot be written.
    public func retry(_ object: SyncObjectID) async throws {
        try await exclusively {
            guard var change = rejected[object], change.discardedAt == nil else {
                throw Self.noRejection(object)
            }
            change.retry = true
            rejected[object] = change
            noteSetsChanged()
            setStatus(.pending, of: object)
            try await saveState()
        }
    }

    /// Drops a refused change and every local change of the object not yet on the server, and
    /// restores the server's version of the object: the next ``sync()`` or ``pull()`` pulls
    /// from the beginning and applies the object's current server state whole (so a correction
    /// made on the server is seen, now and later). An object the server refused to create is
    /// deleted here (and comes back if the server has an object of that id); an object whose
    /// deletion was refused comes back.
    ///
    /// - Throws: `invalidOperation` when the object has no refused change; a realm error when
    ///   deleting the object fails; `io` when the state log cannot be written.
    public func discard(_ object: SyncObjectID) async throws {
        try await exclusively {
            guard var change = rejected[object], change.discardedAt == nil else {
                throw Self.noRejection(object)
            }
            if change.kind == .create {
                try await realm.writeRemote { realm in
                    if let local = try realm.dynamicObject(ofType: object.typeName, forPrimaryKey: object.primaryKey) {
                        try realm.delete(local)
                    }
                }
            }
            // The object's changes up to now are not sent; the record goes when a round passes them.
            change.discardedAt = await realm.currentHistoryToken.rawValue
            change.retry = false
            rejected[object] = change
            serverVersions[object] = nil
            noteObjectChanged(object)
            noteSetsChanged()
            cursor = nil
            notePositionChanged()
            setStatus(.synced, of: object)
            try await saveState()
        }
    }

    private static func noRejection(_ object: SyncObjectID) -> LiveObjectsError {
        LiveObjectsError(
            .invalidOperation, "the object has no refused change", objectType: object.typeName,
            primaryKey: object.primaryKey)
    }

    // MARK: Internals

    func exclusively<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        while isBusy { await withCheckedContinuation { waiters.append($0) } }
        isBusy = true
        defer {
            isBusy = false
            if !waiters.isEmpty { waiters.removeFirst().resume() }
        }
        return try await body()
    }

    private func unsubscribeStatus(_ id: UInt64) { statusSubscribers[id] = nil }
    private func unsubscribeConflicts(_ id: UInt64) { conflictSubscribers[id] = nil }

    func setStatus(_ status: SyncStatus, of object: SyncObjectID) {
        guard currentStatus(object) != status || statuses[object] == nil else { return }
        statuses[object] = status
        let update = SyncStatusUpdate(object: object, status: status)
        for subscriber in statusSubscribers.values where subscriber.filter == nil || subscriber.filter == object {
            subscriber.continuation.yield(update)
        }
    }

    func raise(_ conflict: SyncConflict) {
        openConflicts[conflict.object] = conflict
        noteSetsChanged()
        setStatus(.conflict, of: conflict.object)
        for subscriber in conflictSubscribers.values { subscriber.yield(conflict) }
    }

    /// Marks objects with unsent changes pending, and objects no longer pending synced.
    func refreshStatuses() async throws {
        let collected = try await collect()
        for object in collected.pendingObjects where statuses[object] != .conflict && statuses[object] != .failed {
            setStatus(.pending, of: object)
        }
        for (object, status) in statuses where status == .pending && !collected.pendingObjects.contains(object) {
            setStatus(.synced, of: object)
        }
    }

    /// Retries an operation with backoff; rethrows its last error.
    func withRetries<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        var delay = configuration.initialBackoff
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let error as SyncHTTPError where !error.isTransient {
                // A refusal: asking again gives the same answer.
                throw error
            } catch {
                if attempt >= configuration.maxAttempts { throw error }
            }
            try await configuration.sleep(delay)
            delay = min(delay * 2, configuration.maxBackoff)
            attempt += 1
        }
    }
}
