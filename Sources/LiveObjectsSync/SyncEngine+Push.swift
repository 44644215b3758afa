import Foundation
import LiveObjects

/// The pending changes of one round.
struct CollectedChanges: Sendable {
    /// The history token the round covers up to.
    var upTo: HistoryToken
    /// Creates and updates, in dependency levels (each level after the ones before it).
    var levels: [[SyncChange]] = []
    var deletions: [SyncChange] = []
    /// Updates of large payload properties.
    var largePayloads: [SyncChange] = []
    /// Objects with a change not acknowledged yet.
    var pendingObjects = Set<SyncObjectID>()
    /// The properties changed since the synced token of objects whose refused change waits for
    /// the app: they wait with it.
    var heldChanges: [SyncObjectID: Set<String>] = [:]
    /// Refused changes the app retried that have nothing left to send (an object created and
    /// deleted here that the server never had).
    var droppedRetries = Set<SyncObjectID>()
    /// Changes refused on the device whose object was edited since: the edit is a retry.
    var editedRetries = Set<SyncObjectID>()
}

extension SyncEngine {
    /// Reads the pending local changes.
    func collect() async throws -> CollectedChanges {
        let types = typeOrder.map { self.types[$0]! }
        let since = syncedToken
        let serverIDs = serverIDs
        let held = Set(openConflicts.keys)
        let recreate = recreate
        let acknowledged = acknowledged
        let device = deviceID
        let rejected = rejected
        let bases = listBases
        return try await realm.read { realm in
            try Self.collect(
                realm, types: types, since: since, serverIDs: serverIDs, held: held, recreate: recreate,
                rejected: rejected, acknowledged: acknowledged, device: device, bases: bases)
        }
    }

    private static func collect(
        _ realm: isolated Realm, types: [SyncedType], since: HistoryToken, serverIDs: [SyncObjectID: String],
        held: Set<SyncObjectID>, recreate: Set<SyncObjectID>, rejected: [SyncObjectID: RejectedChange],
        acknowledged: Set<String>, device: String, bases: [SyncObjectID: [String: SyncValue]]
    ) throws -> CollectedChanges {
        var result = CollectedChanges(upTo: realm.currentHistoryToken)
        var changes: [SyncChange] = []
        let byName = Dictionary(uniqueKeysWithValues: types.map { ($0.name, $0) })
        var covered = Set<SyncObjectID>()

        func add(_ change: SyncChange, large: Bool) {
            guard !acknowledged.contains(change.idempotencyKey) else { return }
            result.pendingObjects.insert(change.object)
            if large {
                result.largePayloads.append(change)
            } else if change.kind == .delete {
                result.deletions.append(change)
            } else {
                changes.append(change)
            }
        }

        func send(
            _ type: SyncedType, _ object: DynamicObject, id: SyncObjectID, kind: SyncChange.Kind,
            properties: Set<String>?, key: String
        ) throws {
            let serverID = recreate.contains(id) ? nil : (object[type.serverIDProperty].stringValue ?? serverIDs[id])
            let sent = try objectChanges(
                type, object, id: id, kind: kind, properties: properties, key: key, serverID: serverID,
                base: bases[id] ?? [:], byName, serverIDs, in: realm)
            for (change, large) in sent { add(change, large: large) }
        }

        for type in types {
            let pending = try realm.localChanges(type.name, since: since)
            for (primaryKey, change) in pending.sorted(by: { $0.value.lastToken < $1.value.lastToken }) {
                let id = SyncObjectID(typeName: type.name, primaryKey: primaryKey)
                guard !held.contains(id) else { continue }
                if let refused = rejected[id] {
                    if let at = refused.discardedAt {
                        // Discarded: not sent, unless changed again since.
                        if change.lastToken <= at { continue }
                    } else {
                        // Waits with the refused change (or goes with its retry, below). A change
                        // refused on the device is retried once the object is edited.
                        let names =
                            change.kind == .update ? change.properties : type.sentNames
                        result.heldChanges[id, default: []].formUnion(names)
                        if refused.refusedOnDevice { result.editedRetries.insert(id) }
                        continue
                    }
                }
                covered.insert(id)
                // History tokens count this device's commits: the device's id makes the key
                // unique in the space.
                let key = idempotencyKey(
                    device, id, change.lastToken, recreate.contains(id) ? "/recreate" : "")
                switch change.kind {
                case .delete:
                    // Created and deleted since the synced token: sent only if the server got
                    // the creation (an earlier round that did not finish).
                    if change.wasInserted && serverIDs[id] == nil { continue }
                    add(
                        SyncChange(
                            idempotencyKey: key, object: id, serverID: serverIDs[id], kind: .delete, values: [:]),
                        large: false)
                case .insert, .update:
                    // An object deleted by a remote write (an accepted server deletion) has
                    // nothing left to send.
                    guard let object = try realm.dynamicObject(ofType: type.name, forPrimaryKey: primaryKey) else {
                        continue
                    }
                    let isNew = change.kind == .insert || recreate.contains(id)
                    try send(
                        type, object, id: id, kind: isNew ? .create : .update,
                        properties: isNew ? nil : change.properties, key: key)
                }
            }
        }
        // Objects kept after a conflict but not changed since: sent whole.
        for id in recreate where !covered.contains(id) && !held.contains(id) {
            guard let type = byName[id.typeName],
                let object = try realm.dynamicObject(ofType: id.typeName, forPrimaryKey: id.primaryKey)
            else { continue }
            try send(
                type, object, id: id, kind: .create, properties: nil,
                key: idempotencyKey(device, id, result.upTo.rawValue, "/recreate"))
        }
        let (upTo, editedRetries, heldChanges) = (result.upTo, result.editedRetries, result.heldChanges)
        let dropped = try collectRetries(
            realm, rejected: rejected.filter { !held.contains($0.key) && !covered.contains($0.key) }, upTo: upTo,
            editedRetries: editedRetries, heldChanges: heldChanges, byName: byName, serverIDs: serverIDs,
            device: device, add: add, send: send)
        result.droppedRetries.formUnion(dropped)
        result.levels = dependencyLevels(changes)
        return result
    }

    /// Refused changes the app retries: their properties and the ones changed since, sent from
    /// the object as it is now. Returns the retries dropped (an object created and refused,
    /// deleted since: nothing to send).
    private static func collectRetries(
        _ realm: isolated Realm, rejected: [SyncObjectID: RejectedChange], upTo: HistoryToken,
        editedRetries: Set<SyncObjectID>, heldChanges: [SyncObjectID: Set<String>], byName: [String: SyncedType],
        serverIDs: [SyncObjectID: String], device: String, add: (SyncChange, Bool) -> Void,
        send: (SyncedType, DynamicObject, SyncObjectID, SyncChange.Kind, Set<String>?, String) throws -> Void
    ) throws -> Set<SyncObjectID> {
        var dropped = Set<SyncObjectID>()
        for (id, refused) in rejected where (refused.retry || editedRetries.contains(id)) && refused.discardedAt == nil
        {
            guard let type = byName[id.typeName] else { continue }
            let key = idempotencyKey(device, id, upTo.rawValue, "/retry")
            guard let object = try realm.dynamicObject(ofType: id.typeName, forPrimaryKey: id.primaryKey) else {
                if serverIDs[id] != nil || refused.kind == .delete {
                    add(
                        SyncChange(
                            idempotencyKey: key, object: id, serverID: serverIDs[id], kind: .delete, values: [:]),
                        false)
                } else {
                    dropped.insert(id)
                }
                continue
            }
            var properties = refused.properties
            properties?.formUnion(heldChanges[id] ?? [])
            let isNew = refused.kind != .update || properties == nil
            try send(type, object, id, isNew ? .create : .update, isNew ? nil : properties, key)
        }
        return dropped
    }

    /// The changes that send an object: its properties, and its large payloads in a change of
    /// their own that goes last (unless they are empty). An updated list goes with its base.
    private static func objectChanges(
        _ type: SyncedType, _ object: DynamicObject, id: SyncObjectID, kind: SyncChange.Kind,
        properties: Set<String>?, key: String, serverID: String?, base: [String: SyncValue],
        _ byName: [String: SyncedType], _ serverIDs: [SyncObjectID: String], in realm: isolated Realm
    ) throws -> [(change: SyncChange, large: Bool)] {
        let names = type.sentProperties.map(\.name).filter { properties?.contains($0) ?? true }
        func isLarge(_ name: String) -> Bool {
            guard type.largePayloadProperties.contains(name) else { return false }
            switch object[name] {
            case .null: return false
            case .data(let data): return !data.isEmpty
            case .string(let text): return !text.isEmpty
            case .list(let items): return !items.isEmpty
            default: return true
            }
        }
        let normal = names.filter { !isLarge($0) }
        let large = names.filter(isLarge)
        var changes: [(change: SyncChange, large: Bool)] = []
        if kind == .create || !normal.isEmpty {
            let sent = try values(of: object, type, normal, byName, serverIDs, in: realm)
            // The server merges the difference between a list's base and the list sent.
            let listBases =
                kind == .update ? base.filter { sent[$0.key] != nil && !type.mixedNames.contains($0.key) } : [:]
            changes.append(
                (
                    SyncChange(
                        idempotencyKey: key, object: id, serverID: serverID, kind: kind, values: sent, bases: listBases),
                    false
                ))
        }
        if !large.isEmpty {
            changes.append(
                (
                    SyncChange(
                        idempotencyKey: key + "/large", object: id, serverID: serverID, kind: .update,
                        values: try values(of: object, type, large, byName, serverIDs, in: realm)),
                    true
                ))
        }
        return changes
    }

    /// A change's idempotency key: the device, the object and the token of its last change, as
    /// `DEVICE/Card["c1"]@41`. An object whose description is over 120 bytes (a long primary
    /// key) is named by its type (at most 40 characters) and a 64-bit FNV-1a hash of the
    /// description instead, since servers bound key lengths (512 bytes for
    /// `liveobjects-sync-server`); a key is then at most about 250 bytes.
    static func idempotencyKey(_ device: String, _ id: SyncObjectID, _ token: UInt64, _ suffix: String) -> String {
        var object = id.description
        if object.utf8.count > 120 {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in object.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
            object = String(id.typeName.prefix(40)) + "#" + String(hash, radix: 16)
        }
        return "\(device)/\(object)@\(token)" + suffix
    }

    /// The values of some properties of an object, links as references.
    static func values(
        of object: DynamicObject, _ type: SyncedType, _ names: [String], _ types: [String: SyncedType],
        _ serverIDs: [SyncObjectID: String], in realm: isolated Realm
    ) throws -> [String: SyncValue] {
        func reference(_ target: DynamicObject) -> SyncReference? {
            guard let targetType = types[target.typeName] else { return nil }
            let id = SyncObjectID(typeName: target.typeName, primaryKey: target[targetType.primaryKey])
            return SyncReference(object: id, serverID: target[targetType.serverIDProperty].stringValue ?? serverIDs[id])
        }
        // A link inside an AnyValue names its target by type and primary key; one to an object
        // of a type that is not synced is refused (docs/SYNC-PROTOCOL.md, "Mixed values").
        func mixedReference(_ link: AnyValue.Link, _ property: Property) throws -> SyncMixedValue {
            guard types[link.objectType] != nil else {
                throw LiveObjectsError(
                    .typeMismatch, "an AnyValue links to a \(link.objectType), a type that is not synced",
                    objectType: type.name, property: property.name)
            }
            // A link to a deleted object reads as null, as the store holds it.
            guard let target = try realm.dynamicObject(ofType: link.objectType, key: link.key) else { return .null }
            return reference(target).map(SyncMixedValue.reference) ?? .null
        }
        var values: [String: SyncValue] = [:]
        for property in type.sentProperties where names.contains(property.name) {
            if property.type == .object {
                if property.isMap {
                    var entries: [String: SyncReference?] = [:]
                    for (key, target) in try object.linkedObjectMap(property.name) {
                        // A target of a type not synced is sent as nil, as a to-one link's.
                        entries[key] = .some(target.flatMap(reference))
                    }
                    values[property.name] = .referenceMap(entries)
                } else if property.isList {
                    values[property.name] = .references(try object.linkedObjects(property.name).compactMap(reference))
                } else {
                    values[property.name] = .reference(try object.linkedObject(property.name).flatMap(reference))
                }
            } else if property.type == .mixed {
                values[property.name] = try mixedValue(
                    try object.value(property.name), property, type, references: mixedReference)
            } else if property.isMap {
                values[property.name] = .map(pairs: try object.value(property.name))
            } else {
                values[property.name] = .value(try object.value(property.name))
            }
        }
        return values
    }

    /// The value of an `AnyValue`, `List<AnyValue>`, `MutableSet<AnyValue>` or
    /// `Map<String, AnyValue>` property from the store's: its value, elements or entries, each
    /// link named by `references`.
    private static func mixedValue(
        _ stored: PropertyValue, _ property: Property, _ type: SyncedType,
        references: (AnyValue.Link, Property) throws -> SyncMixedValue
    ) throws -> SyncValue {
        func element(_ stored: PropertyValue) throws -> SyncMixedValue {
            guard let mixed = AnyValue(stored) else {
                throw LiveObjectsError(
                    .typeMismatch, "the stored value is not an AnyValue", objectType: type.name,
                    property: property.name)
            }
            return try SyncMixedValue(mixed) { try references($0, property) }
        }
        guard property.isList else { return .mixed(try element(stored)) }
        guard case .list(let items) = stored else { return property.isMap ? .mixedMap([:]) : .mixedList([]) }
        guard property.isMap else { return .mixedList(try items.map(element)) }
        var entries: [String: SyncMixedValue] = [:]
        for pair in items {
            guard case .list(let entry) = pair, entry.count == 2, case .string(let key) = entry[0] else { continue }
            entries[key] = try element(entry[1])
        }
        return .mixedMap(entries)
    }

    /// Groups changes so that an object created in the round comes in a level before every
    /// change that links to it. A cycle is cut where it closes.
    private static func dependencyLevels(_ changes: [SyncChange]) -> [[SyncChange]] {
        var creates: [SyncObjectID: Int] = [:]
        for (i, change) in changes.enumerated() where change.kind == .create { creates[change.object] = i }
        var level = [Int?](repeating: nil, count: changes.count)
        var visiting = Set<Int>()
        func depth(_ i: Int) -> Int {
            if let known = level[i] { return known }
            visiting.insert(i)
            var result = 0
            for value in changes[i].values.values {
                for target in value.linkTargets {
                    guard let j = creates[target.object], j != i, !visiting.contains(j) else { continue }
                    result = max(result, depth(j) + 1)
                }
            }
            visiting.remove(i)
            level[i] = result
            return result
        }
        var levels: [[SyncChange]] = []
        for i in changes.indices {
            let d = depth(i)
            while levels.count <= d { levels.append([]) }
            levels[d].append(changes[i])
        }
        return levels
    }

    // MARK: Pushing

    /// One push round: every pending change, level by level.
    func pushRound(_ report: inout SyncReport) async throws {
        guard try await confirmUnconfirmed(&report) else { return }
        let collected = try await collect()
        for object in collected.pendingObjects where statuses[object] != .conflict { setStatus(.pending, of: object) }
        foldHeldChanges(collected)
        rejectedThisRound = []
        // Cut to the batch size and the server's limits; a change it could never take is refused here.
        for chunk in await chunks(of: collected, &report) {
            let sent = await send(chunk, &report)
            try await saveState()
            if !sent {
                for change in chunk where !acknowledged.contains(change.idempotencyKey) {
                    report.failed.insert(change.object)
                    setStatus(.failed, of: change.object)
                }
                noteUnconfirmed(chunk)
                try await saveState()
                return
            }
        }
        // A change the server refused waits in `rejected` (kept in the state) for the app: the
        // round ends without it.
        syncedToken = collected.upTo
        noteRoundFinished()
        // Discarded changes the round has passed are forgotten.
        for (id, refused) in rejected where (refused.discardedAt ?? .max) <= collected.upTo.rawValue {
            rejected[id] = nil
            noteSetsChanged()
        }
        // Every change of the round is acknowledged: objects kept after a conflict are re-created.
        if !recreate.isDisjoint(with: collected.pendingObjects) {
            recreate.subtract(collected.pendingObjects)
            noteSetsChanged()
        }
        // The state first: a trim saved before it would leave the log's synced token behind
        // the history's start (the engine then starts from the start).
        try await saveState()
        if configuration.trimsHistory { try await realm.trimHistory(upTo: collected.upTo) }
        let still = try await collect().pendingObjects
        for object in collected.pendingObjects
        where !still.contains(object) && statuses[object] != .conflict && !isHeldByRejection(object) {
            setStatus(.synced, of: object)
        }
    }

    /// Keeps the changes of a batch that failed whose lists the server merges, and that got no
    /// answer: the server may have applied them (``unconfirmed``).
    private func noteUnconfirmed(_ batch: [SyncChange]) {
        for change in batch
        where !change.bases.isEmpty && !isAnswered(change.idempotencyKey) && unconfirmed[change.object] == nil {
            unconfirmed[change.object] = change
            noteSetsChanged()
        }
    }

    /// Sends the ``unconfirmed`` changes again, with their keys, before anything else: a server
    /// applies each at most once and answers it, and the lists acknowledged become the bases of
    /// the changes read next.
    ///
    /// - Returns: Whether every one was answered; if not, the round goes no further.
    private func confirmUnconfirmed(_ report: inout SyncReport) async throws -> Bool {
        guard !unconfirmed.isEmpty else { return true }
        let batch = unconfirmed.values.sorted { $0.idempotencyKey < $1.idempotencyKey }
        let sent = await send(batch, &report)
        for change in batch where isAnswered(change.idempotencyKey) || isHeldByRejection(change.object) {
            unconfirmed[change.object] = nil
            noteSetsChanged()
        }
        try await saveState()
        if !sent {
            for change in batch {
                report.failed.insert(change.object)
                setStatus(.failed, of: change.object)
            }
        }
        return sent
    }

    /// Adds the changes made since to the refused changes waiting for the app, marks the edited
    /// ones refused on the device as retried, and forgets the retries with nothing to send.
    private func foldHeldChanges(_ collected: CollectedChanges) {
        for id in collected.editedRetries where rejected[id]?.retry == false {
            rejected[id]?.retry = true
            noteSetsChanged()
        }
        for (id, names) in collected.heldChanges {
            guard var refused = rejected[id], let properties = refused.properties, !names.isSubset(of: properties)
            else { continue }
            refused.properties = properties.union(names)
            rejected[id] = refused
            noteSetsChanged()
        }
        for id in collected.droppedRetries {
            rejected[id] = nil
            noteSetsChanged()
            setStatus(.synced, of: id)
        }
    }

    /// Whether an object has a refused change waiting for the app (not retried, not discarded).
    func isHeldByRejection(_ object: SyncObjectID) -> Bool {
        guard let refused = rejected[object] else { return false }
        return refused.discardedAt == nil && !refused.retry
    }

    /// Sends a batch until every change is acknowledged or the attempts run out.
    private func send(_ batch: [SyncChange], _ report: inout SyncReport) async -> Bool {
        var delay = configuration.initialBackoff
        for attempt in 1...configuration.maxAttempts {
            let remaining = batch.filter { !isSettled($0) }.map(withKnownServerIDs)
            if remaining.isEmpty { return true }
            do {
                let receipts = try await transport.push(remaining)
                await accept(receipts, for: remaining, &report)
                if batch.allSatisfy(isSettled) { return true }
            } catch let error as SyncHTTPError where !error.isTransient {
                // A refusal of the whole request (a token the server does not take, a role that
                // may not push): asking again gives the same answer. Each change says why.
                for change in remaining {
                    report.rejections[change.object] = SyncRejection(code: error.code, message: error.message)
                }
                return false
            } catch {
                // Lost, or the server failed: tried again after the backoff.
            }
            if attempt < configuration.maxAttempts {
                do { try await configuration.sleep(delay) } catch { return false }
                delay = min(delay * 2, configuration.maxBackoff)
            }
        }
        return false
    }

    /// Whether a change needs no more sending this round: acknowledged, refused, or of an
    /// object whose change the server refused, waiting for the app (its large payloads, say).
    /// A change refused on the device holds back only the object's changes after it, and
    /// those are left out of the chunks.
    private func isSettled(_ change: SyncChange) -> Bool {
        isAnswered(change.idempotencyKey)
            || (isHeldByRejection(change.object) && rejected[change.object]?.refusedOnDevice == false)
    }

    /// Whether the server answered a key this round: acknowledged, or refused.
    private func isAnswered(_ key: String) -> Bool {
        acknowledged.contains(key) || rejectedThisRound.contains(key)
    }

    /// A change with the server ids learned since it was read.
    private func withKnownServerIDs(_ change: SyncChange) -> SyncChange {
        var change = change
        if change.serverID == nil, !recreate.contains(change.object) { change.serverID = serverIDs[change.object] }
        for (name, value) in change.values {
            switch value {
            case .reference(var target?):
                if target.serverID == nil { target.serverID = serverIDs[target.object] }
                change.values[name] = .reference(target)
            case .references(let list):
                change.values[name] = .references(
                    list.map { target in
                        var target = target
                        if target.serverID == nil { target.serverID = serverIDs[target.object] }
                        return target
                    })
            case .referenceMap(let entries):
                change.values[name] = .referenceMap(
                    entries.mapValues { target in
                        guard var target else { return nil }
                        if target.serverID == nil { target.serverID = serverIDs[target.object] }
                        return target
                    })
            default:
                break
            }
        }
        return change
    }

    /// Keeps a refused change for the app, with the properties of any earlier refusal of the
    /// object; `onDevice`, refused before sending (an edit of the object is then a retry).
    func noteRejected(_ change: SyncChange, _ rejection: SyncRejection, onDevice: Bool = false) {
        var refused =
            rejected[change.object]
            ?? RejectedChange(object: change.object, kind: change.kind, properties: [], rejection: rejection)
        if refused.discardedAt != nil {
            refused = RejectedChange(object: change.object, kind: change.kind, properties: [], rejection: rejection)
        }
        refused.rejection = rejection
        refused.retry = false
        refused.refusedOnDevice = onDevice
        if change.kind == .create {
            refused.kind = .create
            refused.properties = nil
        } else if change.kind == .delete {
            if refused.kind != .create { refused.kind = .delete }
        } else {
            refused.properties?.formUnion(change.values.keys)
        }
        rejected[change.object] = refused
        noteSetsChanged()
    }

    /// Records receipts: keys acknowledged, server ids (written to the objects), versions,
    /// conflicts.
    private func accept(_ receipts: [SyncReceipt], for changes: [SyncChange], _ report: inout SyncReport) async {
        let byKey = Dictionary(changes.map { ($0.idempotencyKey, $0) }, uniquingKeysWith: { a, _ in a })
        var newIDs: [(SyncObjectID, String)] = []
        for receipt in receipts {
            guard let change = byKey[receipt.idempotencyKey], !isAnswered(receipt.idempotencyKey) else {
                continue
            }
            if case .rejected(let rejection) = receipt.outcome {
                rejectedThisRound.insert(receipt.idempotencyKey)
                report.failed.insert(change.object)
                report.rejections[change.object] = rejection
                noteRejected(change, rejection)
                setStatus(.failed, of: change.object)
                continue
            }
            if change.idempotencyKey.contains("/retry"), rejected[change.object] != nil {
                rejected[change.object] = nil
                noteSetsChanged()
            }
            noteAcknowledged(receipt.idempotencyKey)
            noteObjectChanged(change.object)
            switch receipt.outcome {
            case .applied:
                report.pushed += 1
                if change.kind == .delete {
                    serverIDs[change.object] = nil
                } else {
                    if serverIDs[change.object] != receipt.serverID { newIDs.append((change.object, receipt.serverID)) }
                    serverIDs[change.object] = receipt.serverID
                }
                pushedVersions[change.object] = max(pushedVersions[change.object] ?? 0, receipt.serverVersion)
                // The lists sent are the bases of the next edits.
                if change.kind == .delete {
                    listBases[change.object] = nil
                } else {
                    // An AnyValue has no base, even when a change read back from the state log
                    // holds its flat list as a plain one.
                    let mixed = types[change.object.typeName]?.mixedNames ?? []
                    for (name, value) in change.values where value.isList && !mixed.contains(name) {
                        listBases[change.object, default: [:]][name] = value
                    }
                }
                // The change reached the server in an attempt whose answer was lost, and another
                // device's write came after it: a pull merged that newer state while this
                // change was taken as not sent, keeping its properties local (or, for a
                // deletion, skipping a later re-creation). They are not the last write: pull
                // again from the start, where the newer state is applied whole (other objects'
                // states are not newer than the ones pulled, so they are left). A change with
                // lists merged on the server: the state at its own version, pulled so, may hold
                // more than it sent, and is pulled again too.
                let merged = !change.bases.isEmpty
                if let seen = serverVersions[change.object],
                    seen > receipt.serverVersion || (merged && seen == receipt.serverVersion)
                {
                    serverVersions[change.object] = receipt.serverVersion - (merged ? 1 : 0)
                    cursor = nil
                    notePositionChanged()
                }
            case .deletedOnServer:
                report.conflicts += 1
                let properties = Set(change.values.keys)
                raise(SyncConflict(object: change.object, serverID: receipt.serverID, localChanges: properties))
            case .rejected:
                break
            }
        }
        guard !newIDs.isEmpty else { return }
        let types = types
        let ids = newIDs
        // Server ids are written as remote changes: never sent back.
        try? await realm.writeRemote { realm in
            for (object, serverID) in ids {
                guard let type = types[object.typeName],
                    let local = try realm.dynamicObject(ofType: object.typeName, forPrimaryKey: object.primaryKey),
                    local[type.serverIDProperty].stringValue != serverID
                else { continue }
                try local.set(type.serverIDProperty, to: .string(serverID))
            }
        }
    }
}
