import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSyncProtocol
import Persistence

/// One line of the engine's state log (`<realm file>.sync`): what changed in the engine's state
/// since the line before. The first line of a log is the whole state.
struct SyncStateRecord {
    /// On the first line: the format's name and version, and the device's id.
    var format: String?
    var version: Int?
    var device: String?
    /// The realm's history token when the line was written: a line newer than the realm (whose
    /// last commits were lost) is not applied, nor any line after it.
    var realmToken: UInt64
    var syncedToken: UInt64
    var cursor: String?
    /// Whether the acknowledged keys were forgotten before `acknowledged` (a round finished).
    var acknowledgedReset: Bool?
    var acknowledged: [String]?
    /// The objects whose server id or versions changed, as they are now.
    var objects: [ObjectState]?
    /// The whole sets, when they changed.
    var recreate: [ObjectRef]?
    var conflicts: [ConflictState]?
    /// The pending links whose targets changed, as they are now (`targets` nil: resolved).
    var links: [LinkState]?
    /// The whole set of changes the server refused and the app has not settled, when it changed.
    var rejected: [RejectedState]?
    /// The whole set of changes with merged lists sent without an answer, when it changed.
    var unconfirmed: [WireChange]?
    /// The subscriptions and whether their walk is under way, when they changed.
    var view: ViewState?

    struct ObjectRef: Hashable {
        var type: String
        var key: WireValue

        init(_ id: SyncObjectID) {
            type = id.typeName
            key = WireValue(id.primaryKey)
        }

        var id: SyncObjectID { SyncObjectID(typeName: type, primaryKey: key.value) }
    }

    struct ObjectState {
        var object: ObjectRef
        var serverID: String?
        var serverVersion: UInt64?
        var pushedVersion: UInt64?
        /// The lists' bases (``SyncEngine/listBases``).
        var bases: [String: WireSyncValue]?
        /// It matches a subscription (``SyncEngine/viewRoots``).
        var root: Bool?
        /// The server hid it (``SyncEngine/viewStale``).
        var stale: Bool?
    }

    /// The device's subscriptions (nil: the whole space) and whether the walk that follows a
    /// change of them is under way.
    struct ViewState {
        var subscriptions: [SyncSubscription]?
        var walkPending: Bool
    }

    struct ConflictState {
        var object: ObjectRef
        var serverID: String?
        var localChanges: [String]
    }

    /// A link pulled before its target: the link's object and property, and the targets the
    /// server names (one for a to-one link; in order for a list).
    struct LinkState {
        var object: ObjectRef
        var property: String
        var list: Bool?
        var targets: [ObjectRef]?
        /// A map of objects waiting for targets: the server's map, `{"map": [[key, {"ref": …}
        /// or {"null": true}], …]}` (format 4; `targets` is then nil).
        var map: WireSyncValue?
        /// An `AnyValue`, or a list, set or map of them, waiting for the targets of its links:
        /// the server's value, its links as `{"ref": …}` (format 5; `targets` is then nil).
        var mixed: WireSyncValue?
    }

    struct RejectedState {
        var object: ObjectRef
        var kind: String
        /// The properties refused; nil for a creation (every property).
        var properties: [String]?
        var code: String
        var message: String
        /// The app asked for it to be sent again.
        var retry: Bool?
        /// The app discarded it at this history token: the object's changes up to it are not sent.
        var discardedAt: UInt64?
        /// Refused on the device, not by the server: an edit of the object is a retry.
        var local: Bool?
    }

    static let formatName = "LiveObjects sync state"
    /// 2: pending links and refused changes. 3: subscriptions. 4: pending maps of objects.
    /// 5: pending links inside `AnyValue`s.
    static let formatVersion = 5
}

/// What the engine has changed in its state since it last wrote it.
struct SyncStateChanges {
    var objects = Set<SyncObjectID>()
    var links = Set<PendingLink>()
    var acknowledged: [String] = []
    var acknowledgedReset = false
    var sets = false
    /// The cursor or the synced token moved.
    var position = false

    var isEmpty: Bool {
        objects.isEmpty && links.isEmpty && acknowledged.isEmpty && !acknowledgedReset && !sets && !position
    }
}

extension SyncEngine {
    /// Reads the state log beside a file realm and takes its state, keeping the lines the realm
    /// has caught up with; rewrites the log as one line when it dropped some. Only a realm
    /// without a log gets a new device id: a damaged log is an error (the file left as it is),
    /// never replaced, since the id is in the idempotency keys of changes not yet acknowledged.
    func loadState() async throws(LiveObjectsError) {
        guard let log = stateLog else { return }
        let lines = try log.read()
        guard !lines.isEmpty else {
            // No log yet: the device's id is kept before any key is made with it.
            try await compactState()
            return
        }
        let current = await realm.currentHistoryToken.rawValue
        let oldest = await realm.oldestHistoryToken.rawValue
        var applied = 0
        for (index, line) in lines.enumerated() {
            let record: SyncStateRecord
            do {
                record = try SyncStateRecord(json: JSONValue(wire: line.bytes))
            } catch {
                throw log.damaged(
                    "line \(index + 1) of the sync state is not a state record: \(error)", at: line.offset)
            }
            if index == 0 {
                guard record.format == SyncStateRecord.formatName, let version = record.version,
                    let device = record.device, !device.isEmpty
                else {
                    throw log.damaged("the file is not a sync state log", at: line.offset)
                }
                guard version <= SyncStateRecord.formatVersion else {
                    throw log.damaged(
                        "the sync state log has version \(version), newer than this library reads", at: line.offset)
                }
                deviceID = device
            }
            // The realm lost commits this line knew of (its journal was not synced): the state
            // stays where the realm is; what follows is pulled or acknowledged again.
            guard record.realmToken <= current else { break }
            apply(record)
            applied += 1
        }
        syncedToken = HistoryToken(rawValue: min(max(syncedToken.rawValue, oldest), current))
        if applied < lines.count { try await compactState() }
    }

    private func apply(_ record: SyncStateRecord) {
        syncedToken = HistoryToken(rawValue: record.syncedToken)
        cursor = record.cursor
        if record.acknowledgedReset == true { acknowledged.removeAll() }
        acknowledged.formUnion(record.acknowledged ?? [])
        for state in record.objects ?? [] {
            let id = state.object.id
            serverIDs[id] = state.serverID
            serverVersions[id] = state.serverVersion
            pushedVersions[id] = state.pushedVersion
            listBases[id] = state.bases.map { bases in
                let values = bases.mapValues(\.value)
                return types[id.typeName]?.readingMixedCollections(values) ?? values
            }
            if state.root == true { viewRoots.insert(id) } else { viewRoots.remove(id) }
            if state.stale == true { viewStale.insert(id) } else { viewStale.remove(id) }
        }
        if let view = record.view {
            subscriptionList = view.subscriptions
            viewWalkPending = view.walkPending
        }
        if let list = record.recreate { recreate = Set(list.map(\.id)) }
        if let list = record.conflicts {
            openConflicts = Dictionary(
                list.map {
                    (
                        $0.object.id,
                        SyncConflict(object: $0.object.id, serverID: $0.serverID, localChanges: Set($0.localChanges))
                    )
                },
                uniquingKeysWith: { a, _ in a })
            for id in openConflicts.keys { statuses[id] = .conflict }
        }
        for state in record.links ?? [] {
            let key = PendingLink(object: state.object.id, property: state.property)
            if let mixed = state.mixed?.value {
                // Read by the property's type, as a pulled value is.
                let read = types[key.object.typeName]?.readingMixedCollections([key.property: mixed])
                pendingLinks[key] = read?[key.property]
            } else if let map = state.map?.value {
                pendingLinks[key] = map.readAsMapOfObjects
            } else if let targets = state.targets {
                let ids = targets.map(\.id)
                pendingLinks[key] =
                    state.list == true
                    ? .references(ids.map { SyncReference(object: $0) })
                    : .reference(ids.first.map { SyncReference(object: $0) })
            } else {
                pendingLinks[key] = nil
            }
        }
        if let list = record.unconfirmed {
            unconfirmed = Dictionary(
                list.compactMap { try? $0.change() }.map { change in
                    var change = change
                    if let type = types[change.object.typeName] {
                        change.values = type.readingMixedCollections(change.values)
                        change.bases = type.readingMixedCollections(change.bases)
                    }
                    return (change.object, change)
                }, uniquingKeysWith: { first, _ in first })
        }
        if let list = record.rejected {
            rejected = [:]
            for state in list {
                let kind: SyncChange.Kind =
                    switch state.kind {
                    case "create": .create
                    case "delete": .delete
                    default: .update
                    }
                let id = state.object.id
                var change = RejectedChange(
                    object: id, kind: kind, properties: state.properties.map(Set.init),
                    rejection: SyncRejection(code: SyncHTTPError.Code(rawValue: state.code), message: state.message))
                change.retry = state.retry == true
                change.discardedAt = state.discardedAt
                change.refusedOnDevice = state.local == true
                rejected[id] = change
                if change.discardedAt == nil { statuses[id] = change.retry ? .pending : .failed }
            }
        }
    }

    /// Writes what changed in the state since the last write, as one line of the log (or the
    /// whole state, when the log has grown past its threshold).
    ///
    /// - Throws: `io` when the disk refuses; the changes stay to be written next time.
    func saveState() async throws(LiveObjectsError) {
        guard let log = stateLog, !stateChanges.isEmpty else { return }
        let realmToken = await realm.currentHistoryToken.rawValue
        if log.size == 0 || log.size > max(64 << 10, 4 * compactedStateSize) {
            try await compactState(realmToken: realmToken)
            return
        }
        var record = SyncStateRecord(realmToken: realmToken, syncedToken: syncedToken.rawValue, cursor: cursor)
        if stateChanges.acknowledgedReset { record.acknowledgedReset = true }
        if !stateChanges.acknowledged.isEmpty { record.acknowledged = stateChanges.acknowledged }
        if !stateChanges.objects.isEmpty { record.objects = stateChanges.objects.map(objectState) }
        if stateChanges.sets {
            record.recreate = recreate.map(SyncStateRecord.ObjectRef.init)
            record.conflicts = conflictStates()
            record.rejected = rejectedStates()
            record.unconfirmed = unconfirmedStates()
            record.view = viewState()
        }
        if !stateChanges.links.isEmpty { record.links = stateChanges.links.map(linkState) }
        try log.append(try encode(record, log))
        stateChanges = SyncStateChanges()
    }

    /// Rewrites the log as one line holding the whole state.
    func compactState(realmToken: UInt64? = nil) async throws(LiveObjectsError) {
        guard let log = stateLog else { return }
        let token: UInt64
        if let realmToken { token = realmToken } else { token = await realm.currentHistoryToken.rawValue }
        var record = SyncStateRecord(
            format: SyncStateRecord.formatName, version: SyncStateRecord.formatVersion, device: deviceID,
            realmToken: token,
            syncedToken: syncedToken.rawValue, cursor: cursor)
        record.acknowledged = acknowledged.sorted()
        let ids = Set(serverIDs.keys).union(serverVersions.keys).union(pushedVersions.keys).union(listBases.keys)
            .union(viewRoots).union(viewStale)
        record.objects = ids.map(objectState)
        if subscriptionList != nil { record.view = viewState() }
        record.recreate = recreate.map(SyncStateRecord.ObjectRef.init)
        record.conflicts = conflictStates()
        record.rejected = rejectedStates()
        record.unconfirmed = unconfirmedStates()
        record.links = pendingLinks.keys.map(linkState)
        try log.replace(with: [try encode(record, log)])
        compactedStateSize = log.size
        stateChanges = SyncStateChanges()
    }

    private func unconfirmedStates() -> [WireChange] {
        unconfirmed.values.sorted { $0.idempotencyKey < $1.idempotencyKey }.map(WireChange.init)
    }

    private func objectState(_ id: SyncObjectID) -> SyncStateRecord.ObjectState {
        SyncStateRecord.ObjectState(
            object: .init(id), serverID: serverIDs[id], serverVersion: serverVersions[id],
            pushedVersion: pushedVersions[id], bases: listBases[id]?.mapValues(WireSyncValue.init),
            root: viewRoots.contains(id) ? true : nil, stale: viewStale.contains(id) ? true : nil)
    }

    private func viewState() -> SyncStateRecord.ViewState {
        SyncStateRecord.ViewState(subscriptions: subscriptionList, walkPending: viewWalkPending)
    }

    private func linkState(_ key: PendingLink) -> SyncStateRecord.LinkState {
        var state = SyncStateRecord.LinkState(object: .init(key.object), property: key.property)
        switch pendingLinks[key] {
        case .reference(let target):
            state.targets = target.map { [.init($0.object)] } ?? []
        case .references(let targets):
            state.list = true
            state.targets = targets.map { .init($0.object) }
        case .referenceMap:
            state.map = pendingLinks[key].map(WireSyncValue.init)
        case .mixed, .mixedList, .mixedMap:
            state.mixed = pendingLinks[key].map(WireSyncValue.init)
        case .value, .map, nil:
            break
        }
        return state
    }

    private func rejectedStates() -> [SyncStateRecord.RejectedState] {
        rejected.values.map {
            let kind =
                switch $0.kind {
                case .create: "create"
                case .update: "update"
                case .delete: "delete"
                }
            return SyncStateRecord.RejectedState(
                object: .init($0.object), kind: kind, properties: $0.properties?.sorted(),
                code: $0.rejection.code.rawValue, message: $0.rejection.message, retry: $0.retry ? true : nil,
                discardedAt: $0.discardedAt, local: $0.refusedOnDevice ? true : nil)
        }
    }

    private func conflictStates() -> [SyncStateRecord.ConflictState] {
        openConflicts.values.map {
            SyncStateRecord.ConflictState(
                object: .init($0.object), serverID: $0.serverID, localChanges: $0.localChanges.sorted())
        }
    }

    private func encode(_ record: SyncStateRecord, _ log: SidecarLog) throws(LiveObjectsError) -> [UInt8] {
        do {
            return try record.json().jsonBytes()
        } catch {
            throw LiveObjectsError(.io, "the sync state could not be encoded: \(error)", file: log.path)
        }
    }

    // MARK: Recording changes

    func noteObjectChanged(_ id: SyncObjectID) { stateChanges.objects.insert(id) }

    func noteLinkChanged(_ key: PendingLink) { stateChanges.links.insert(key) }

    func noteAcknowledged(_ key: String) {
        acknowledged.insert(key)
        stateChanges.acknowledged.append(key)
    }

    func noteRoundFinished() {
        stateChanges.position = true
        acknowledged.removeAll()
        stateChanges.acknowledged.removeAll()
        stateChanges.acknowledgedReset = true
    }

    func noteSetsChanged() { stateChanges.sets = true }

    func notePositionChanged() { stateChanges.position = true }
}
