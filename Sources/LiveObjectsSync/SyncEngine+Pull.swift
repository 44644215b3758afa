import Foundation
import LiveObjects

/// A local change not sent yet, as the merge sees it.
struct UnsentChange: Sendable {
    var isDeletion: Bool
    /// The properties it changed; nil for an object created locally (every property).
    var properties: Set<String>?
}

extension SyncEngine {
    /// Pulls page after page until the server has no more.
    ///
    /// When the server no longer has the history the cursor needs (`resetRequired`: compaction
    /// removed deletions after it), the device pulls everything again from the beginning, then
    /// removes the objects it had from the server that this pull did not bring (deleted there
    /// meanwhile) and that have no local change waiting.
    ///
    /// With subscriptions, the round then fetches the targets of links the pull brought and the
    /// objects linked to that left the subscriptions, and removes the objects that neither match
    /// them nor are linked from one that does (``settleView(_:afterWalk:)``).
    func pullRound(_ report: inout SyncReport) async throws {
        // A pull from the beginning under subscriptions (the first, or one the engine starts to
        // get an object's current state again) leaves out what does not match: what the device
        // holds counts only when the walk brings it again.
        if subscriptionList != nil, cursor == nil, !viewWalkPending { startViewWalk() }
        let before = report.pulled
        while try await pullPage(&report) {}
        guard report.pullFailure == nil else { return }
        if subscriptionList != nil, viewWalkPending || report.pulled > before || !viewStale.isEmpty {
            try await settleView(&report, afterWalk: viewWalkPending)
            guard report.pullFailure == nil else { return }
        }
        if viewWalkPending {
            viewWalkPending = false
            noteSetsChanged()
        }
        if let seen = resetSeen {
            try await forgetObjects(notIn: seen)
            resetSeen = nil
            report.didReset = true
        }
        if progress?.isComplete == false { finishProgress(report) }
        try await saveState()
    }

    /// After a pull from the beginning: removes, in a remote write, the objects that were on the
    /// server before and that the pull did not bring, unless a local change of them waits.
    private func forgetObjects(notIn seen: Set<SyncObjectID>) async throws {
        let waiting = try await unsentChanges()
        let gone = serverIDs.keys.filter { !seen.contains($0) && waiting[$0] == nil }
        guard !gone.isEmpty else { return }
        try await realm.writeRemote { realm in
            for id in gone {
                if let object = try realm.dynamicObject(ofType: id.typeName, forPrimaryKey: id.primaryKey) {
                    try realm.delete(object)
                }
            }
        }
        forgetEngineState(of: gone)
        try await saveState()
    }

    /// Forgets what the engine knew of objects removed here.
    func forgetEngineState(of gone: some Sequence<SyncObjectID>) {
        for id in gone {
            serverIDs[id] = nil
            serverVersions[id] = nil
            pushedVersions[id] = nil
            listBases[id] = nil
            statuses[id] = nil
            viewRoots.remove(id)
            viewStale.remove(id)
            noteObjectChanged(id)
        }
        let goneSet = Set(gone)
        for key in pendingLinks.keys where goneSet.contains(key.object) {
            pendingLinks[key] = nil
            noteLinkChanged(key)
        }
    }

    /// The local changes not sent yet, by object: collected since the last sync, to send again
    /// as new, and refused ones waiting for the app (with the changes made since).
    func unsentChanges() async throws -> [SyncObjectID: UnsentChange] {
        let collected = try await collect()
        var unsent: [SyncObjectID: UnsentChange] = [:]
        for change in collected.levels.joined() + collected.deletions + collected.largePayloads {
            var entry = unsent[change.object] ?? UnsentChange(isDeletion: change.kind == .delete, properties: [])
            if change.kind == .create {
                entry.properties = nil
            } else {
                entry.properties?.formUnion(change.values.keys)
            }
            unsent[change.object] = entry
        }
        for id in recreate { unsent[id] = UnsentChange(isDeletion: false, properties: nil) }
        // A refused change waiting for the app keeps its values here, with the changes made since.
        for (id, refused) in rejected where refused.discardedAt == nil {
            var entry = unsent[id] ?? UnsentChange(isDeletion: refused.kind == .delete, properties: [])
            if let properties = refused.properties {
                entry.properties?.formUnion(properties)
                entry.properties?.formUnion(collected.heldChanges[id] ?? [])
            } else {
                entry.properties = nil
            }
            unsent[id] = entry
        }
        return unsent
    }

    /// One pull: fetch, keep the newest state per object, merge.
    ///
    /// - Returns: Whether the server has more changes after the new cursor.
    private func pullPage(_ report: inout SyncReport) async throws -> Bool {
        let cursor = cursor
        let subscriptions = subscriptionList
        let pulled: SyncPull
        do {
            pulled = try await withRetries { try await transport.pull(after: cursor, subscriptions: subscriptions) }
        } catch let error as SyncHTTPError where error.code == .resetRequired && cursor != nil && resetSeen == nil {
            // Everything again, from the beginning (see `pullRound`); with subscriptions, as
            // after a change of them.
            if subscriptionList != nil {
                startViewWalk()
                report.didReset = true
            } else {
                resetSeen = []
            }
            self.cursor = nil
            notePositionChanged()
            return true
        } catch {
            // Reported, as a failed push is: the pages before are merged and kept.
            report.pullFailure = SyncPullFailure(error)
            return false
        }
        var changes = pulled.changes
        if subscriptions != nil {
            // Out of this device's view: removed at the end of the round unless linked to (an
            // object the device never had from the server is nothing to remove).
            for change in changes where change.isHidden && types[change.object.typeName] != nil {
                let wasRoot = viewRoots.remove(change.object) != nil
                let known = wasRoot || serverIDs[change.object] != nil
                let added = known && viewStale.insert(change.object).inserted
                if wasRoot || added { noteObjectChanged(change.object) }
            }
            changes.removeAll(where: \.isHidden)
        }
        if resetSeen != nil {
            for change in changes where !change.isDeleted { resetSeen?.insert(change.object) }
        }
        try await apply(changes, &report, matching: subscriptions != nil)
        noteProgress(pulled, report)
        if pulled.cursor != self.cursor {
            self.cursor = pulled.cursor
            notePositionChanged()
        }
        try await saveState()
        // A page that does not move the cursor ends the round, whatever it says.
        return pulled.hasMore && pulled.cursor != cursor
    }

    /// Merges server states: keeps the newest per object, leaves out those not newer than what
    /// the device has, reports a deletion of an object with a local change as a conflict.
    ///
    /// - Parameter matching: Whether the states came because they match the subscriptions (the
    ///   objects become roots of what the device keeps), rather than as link targets.
    func apply(_ changes: [ServerChange], _ report: inout SyncReport, matching: Bool) async throws {
        var newest: [SyncObjectID: ServerChange] = [:]
        for change in changes where types[change.object.typeName] != nil {
            // Newer than what was pulled, and not older than this device's own last write (a
            // state at that version includes the write, and the other devices' before it).
            guard change.serverVersion > (serverVersions[change.object] ?? 0),
                change.serverVersion >= (pushedVersions[change.object] ?? 0)
            else {
                if matching, !change.isDeleted, viewRoots.insert(change.object).inserted {
                    noteObjectChanged(change.object)
                }
                continue
            }
            if let known = newest[change.object], known.serverVersion >= change.serverVersion { continue }
            newest[change.object] = change
        }
        let unsent = try await unsentChanges()
        var conflicts: [SyncConflict] = []
        var applied: [ServerChange] = []
        for change in newest.values.sorted(by: { $0.serverVersion < $1.serverVersion }) {
            if openConflicts[change.object] != nil { continue }
            if change.isDeleted, let local = unsent[change.object], !local.isDeletion {
                let names = local.properties ?? types[change.object.typeName]!.sentNames
                conflicts.append(SyncConflict(object: change.object, serverID: change.serverID, localChanges: names))
                continue
            }
            applied.append(change)
        }
        let types = types
        let toApply = applied
        let unsentChanges = unsent
        let waiting = pendingLinks
        let merged = try await realm.writeRemote { realm in
            try Self.merge(toApply, unsent: unsentChanges, pending: waiting, types: types, into: realm)
        }
        let (links, bases, unreadable) = (merged.updates, merged.bases, merged.unreadable)
        // A state this device cannot read is seen (not applied again until a newer one comes)
        // and reported; the object stays as it was here.
        for (id, error) in unreadable {
            if let change = newest[id] { serverVersions[id] = change.serverVersion }
            report.unreadable[id] = error
            noteObjectChanged(id)
        }
        applied.removeAll { unreadable[$0.object] != nil }
        for (key, value) in links where pendingLinks[key] != value {
            pendingLinks[key] = value
            noteLinkChanged(key)
        }
        for (key, value) in bases where listBases[key.object]?[key.property] != value {
            listBases[key.object, default: [:]][key.property] = value
            noteObjectChanged(key.object)
        }
        for change in applied {
            if change.isDeleted, listBases.removeValue(forKey: change.object) != nil {
                noteObjectChanged(change.object)
            }
            if viewStale.remove(change.object) != nil { noteObjectChanged(change.object) }
            if change.isDeleted {
                if viewRoots.remove(change.object) != nil { noteObjectChanged(change.object) }
            } else if matching, viewRoots.insert(change.object).inserted {
                noteObjectChanged(change.object)
            }
            serverVersions[change.object] = change.serverVersion
            if change.isDeleted {
                serverIDs[change.object] = nil
            } else {
                serverIDs[change.object] = change.serverID
            }
            noteObjectChanged(change.object)
            if unsent[change.object] == nil { setStatus(.synced, of: change.object) }
        }
        // A conflict's version is seen too: the same deletion is not reported twice.
        for conflict in conflicts {
            if let change = newest[conflict.object] { serverVersions[conflict.object] = change.serverVersion }
            // The conflict's resolution settles the object: a refused change of it goes.
            if rejected.removeValue(forKey: conflict.object) != nil { noteSetsChanged() }
            noteObjectChanged(conflict.object)
            raise(conflict)
        }
        report.pulled += applied.count
        report.conflicts += conflicts.count
    }

    /// Applies server states inside a remote write: plain values first (creating objects), then
    /// links, so that a link to an object created by the same pull resolves; then the links
    /// pulled earlier whose targets this pull brought.
    ///
    /// A link whose target is not here yet (a later page, or a later pull, brings it) is set to
    /// the targets that are (a list keeps their order) and kept in `pending`, the server's value,
    /// until every target has arrived; a later server state or a local change of the property,
    /// or the object's deletion, replaces it.
    ///
    /// A state this device's model cannot read (an id of another kind, a value of another type,
    /// nil where the model has none, a link to another type: a space without a schema stores
    /// anything) changes nothing here and is returned with the error, so that the rest of the
    /// pull goes on; properties the model does not have (a newer app's) are left out.
    private static func merge(
        _ changes: [ServerChange], unsent: [SyncObjectID: UnsentChange], pending: [PendingLink: SyncValue],
        types: [String: SyncedType], into realm: isolated Realm
    ) throws -> MergeOutcome {
        var merge = MergeOutcome(unsent: unsent, types: types)
        var linked: [(ServerChange, DynamicObject)] = []
        for change in changes {
            do {
                let change = types[change.object.typeName]!.readingMapsOfObjects(change)
                try types[change.object.typeName]!.checkShape(of: change, types)
                let object = try realm.atomically { () throws -> DynamicObject? in
                    try plainValues(of: change, &merge, in: realm)
                }
                if let object { linked.append((change, object)) }
            } catch {
                merge.unreadable[change.object] = LiveObjectsError(error, objectType: change.object.typeName)
            }
        }
        for (change, object) in linked {
            do {
                let found = try realm.atomically { () throws -> [PendingLink: PulledLink] in
                    try links(of: change, object, merge, in: realm)
                }
                merge.arrived.insert(change.object)
                for (key, link) in found {
                    if let base = link.base { merge.bases[key] = base }
                    if let waiting = link.waiting {
                        merge.updates[key] = .some(waiting)
                    } else if pending[key] != nil {
                        merge.updates[key] = .some(nil)
                    }
                }
            } catch {
                merge.unreadable[change.object] = LiveObjectsError(error, objectType: change.object.typeName)
            }
        }
        try settle(pending, &merge, in: realm)
        return merge
    }

    /// Deletes, creates or updates the object of a state, with its plain values; returns the
    /// object when it is here and its links are to be set.
    private static func plainValues(
        of change: ServerChange, _ merge: inout MergeOutcome, in realm: isolated Realm
    ) throws -> DynamicObject? {
        let id = change.object
        let type = merge.types[id.typeName]!
        let existing = try realm.dynamicObject(ofType: id.typeName, forPrimaryKey: id.primaryKey)
        if change.isDeleted {
            merge.deleted.insert(id)
            // A local deletion not sent yet, or an object never seen: nothing to do.
            if let existing, merge.unsent[id] == nil { try realm.delete(existing) }
            return nil
        }
        if merge.unsent[id]?.isDeletion == true { return nil }
        let object: DynamicObject
        if let existing {
            object = existing
        } else {
            var values: [String: PropertyValue] = [type.primaryKey: id.primaryKey]
            for (name, value) in change.values where type.sends(name) {
                if let plain = type.storedValue(value, for: name) { values[name] = plain }
            }
            object = try realm.dynamicCreate(id.typeName, value: values)
        }
        if object[type.serverIDProperty].stringValue != change.serverID {
            try object.set(type.serverIDProperty, to: .string(change.serverID))
        }
        for (name, value) in change.values where type.sends(name) && !merge.isLocal(id, name) {
            guard let plain = type.storedValue(value, for: name) else { continue }
            if object[name] != plain { try object.set(name, to: plain) }
        }
        return object
    }

    /// Sets the links of a state to the targets present.
    ///
    /// - Returns: By property, the list set (of values too: the base of the next local edit)
    ///   and the link still waiting for a target, if one does.
    private static func links(
        of change: ServerChange, _ object: DynamicObject, _ merge: MergeOutcome, in realm: isolated Realm
    ) throws -> [PendingLink: PulledLink] {
        let type = merge.types[change.object.typeName]!
        var found: [PendingLink: PulledLink] = [:]
        for (name, value) in change.values where type.sends(name) {
            let key = PendingLink(object: change.object, property: name)
            if merge.isLocal(change.object, name) {
                // A local change of a link wins: the server's value no longer waits.
                if !value.isPlain { found[key] = PulledLink(base: nil, waiting: nil) }
                continue
            }
            if value.isPlain {
                // An AnyValue is replaced whole: a nested list has no base.
                if value.isList && !type.mixedNames.contains(name) {
                    found[key] = PulledLink(base: value, waiting: nil)
                }
                continue
            }
            let settled = try setLink(object, name, value, merge.types, in: realm)
            found[key] = PulledLink(
                base: value.isList ? try present(value, in: realm) : nil, waiting: settled ? nil : value)
        }
        return found
    }

    /// Settles the links pulled earlier whose targets arrived now, or whose object was deleted.
    private static func settle(
        _ pending: [PendingLink: SyncValue], _ merge: inout MergeOutcome, in realm: isolated Realm
    ) throws {
        for (key, value) in pending where merge.updates[key] == nil {
            if merge.deleted.contains(key.object) {
                merge.updates[key] = .some(nil)
                continue
            }
            guard value.linkTargets.contains(where: { merge.arrived.contains($0.object) }) else { continue }
            guard !merge.isLocal(key.object, key.property),
                let object = try realm.dynamicObject(ofType: key.object.typeName, forPrimaryKey: key.object.primaryKey)
            else {
                merge.updates[key] = .some(nil)
                continue
            }
            if try setLink(object, key.property, value, merge.types, in: realm) { merge.updates[key] = .some(nil) }
            if value.isList { merge.bases[key] = try present(value, in: realm) }
        }
    }

    /// A list of links as set: the targets present; a map of objects as set: nil for a key
    /// whose target is not here; a list or map of `AnyValue`s as set: null for a link whose
    /// target is not here.
    private static func present(_ value: SyncValue, in realm: isolated Realm) throws -> SyncValue {
        switch value {
        case .references(let targets):
            return .references(try targets.filter { try exists($0, in: realm) })
        case .referenceMap(let entries):
            var present: [String: SyncReference?] = [:]
            for (key, target) in entries {
                present[key] = .some(try target.flatMap { try exists($0, in: realm) ? $0 : nil })
            }
            return .referenceMap(present)
        case .mixedList(let elements):
            // An element linking to an object not here is null until it arrives.
            return .mixedList(try elements.map { try $0.mappingReferences { try exists($0, in: realm) ? $0 : nil } })
        case .mixedMap(let entries):
            return .mixedMap(
                try entries.mapValues { try $0.mappingReferences { try exists($0, in: realm) ? $0 : nil } })
        default:
            return value
        }
    }

    /// Whether the object a reference names is on the device.
    private static func exists(_ target: SyncReference, in realm: isolated Realm) throws -> Bool {
        try realm.dynamicObject(ofType: target.object.typeName, forPrimaryKey: target.object.primaryKey) != nil
    }

    /// Sets a link to the targets present; returns whether every target is.
    private static func setLink(
        _ object: DynamicObject, _ name: String, _ value: SyncValue, _ types: [String: SyncedType],
        in realm: isolated Realm
    ) throws -> Bool {
        switch value {
        case .value, .map:
            return true
        case .mixed, .mixedList, .mixedMap:
            return try setMixed(object, name, value, in: realm)
        case .reference(let target):
            let current = try object.linkedObject(name).map { primaryKey(of: $0, types) }
            guard let target else {
                if current != nil { try object.set(name, to: .null) }
                return true
            }
            // A target missing here is set when it arrives; until then the link is empty,
            // never a value the server no longer has.
            guard try exists(target, in: realm) else {
                if current != nil { try object.set(name, to: .null) }
                return false
            }
            if current != target.object.primaryKey { try object.set(name, to: target.object.primaryKey) }
            return true
        case .references(let targets):
            var keys: [PropertyValue] = []
            for target in targets where try exists(target, in: realm) { keys.append(target.object.primaryKey) }
            let current = try object.linkedObjects(name).map { primaryKey(of: $0, types) }
            if current != keys { try object.set(name, to: .list(keys)) }
            return keys.count == targets.count
        case .referenceMap(let entries):
            // A key whose target is not here yet is kept with nil until the target arrives.
            var pairs: [PropertyValue] = []
            var isComplete = true
            for (key, target) in entries.sorted(by: { ListMerge.mapKeyPrecedes($0.key, $1.key) }) {
                var value = PropertyValue.null
                if let target {
                    if try exists(target, in: realm) { value = target.object.primaryKey } else { isComplete = false }
                }
                pairs.append(.list([.string(key), value]))
            }
            let current = try object.linkedObjectMap(name).map { entry -> PropertyValue in
                .list([.string(entry.key), entry.object.map { primaryKey(of: $0, types) } ?? .null])
            }
            if current != pairs { try object.set(name, to: .list(pairs)) }
            return isComplete
        }
    }

    /// Sets an `AnyValue`, or a list, set or map of them, with each reference made a link to
    /// its target, or null while the target is not here; returns whether every target is.
    private static func setMixed(
        _ object: DynamicObject, _ name: String, _ value: SyncValue, in realm: isolated Realm
    ) throws -> Bool {
        var isComplete = true
        func resolved(_ mixed: SyncMixedValue) throws -> PropertyValue {
            try mixed.anyValue { target in
                guard
                    let linked = try realm.dynamicObject(
                        ofType: target.object.typeName, forPrimaryKey: target.object.primaryKey)
                else {
                    isComplete = false
                    return nil
                }
                return AnyValue.Link(objectType: linked.typeName, key: linked.key)
            }.propertyValue
        }
        let stored: PropertyValue
        switch value {
        case .mixed(let mixed): stored = try resolved(mixed)
        case .mixedList(let elements): stored = .list(try elements.map(resolved))
        case .mixedMap(let entries): stored = SyncValue.mapValue(try entries.mapValues(resolved))
        default: return true
        }
        if object[name] != stored { try object.set(name, to: stored) }
        return isComplete
    }

    private static func primaryKey(of object: DynamicObject, _ types: [String: SyncedType]) -> PropertyValue {
        object[types[object.typeName]?.primaryKey ?? ""]
    }
}

/// What a pull's merge decided, object by object.
struct MergeOutcome: Sendable {
    let unsent: [SyncObjectID: UnsentChange]
    let types: [String: SyncedType]
    /// The changes to the links waiting for their targets: a value still waiting, or nil when
    /// settled.
    var updates: [PendingLink: SyncValue?] = [:]
    /// The lists set from the server's values, as set: the bases of the next local edits.
    var bases: [PendingLink: SyncValue] = [:]
    /// The objects created or updated.
    var arrived = Set<SyncObjectID>()
    /// The objects the server deleted.
    var deleted = Set<SyncObjectID>()
    /// The states this device's model cannot read, and why.
    var unreadable: [SyncObjectID: LiveObjectsError] = [:]

    init(unsent: [SyncObjectID: UnsentChange], types: [String: SyncedType]) {
        self.unsent = unsent
        self.types = types
    }

    /// Whether a property of the object has a local change not sent yet.
    func isLocal(_ id: SyncObjectID, _ property: String) -> Bool {
        guard let local = unsent[id] else { return false }
        return local.properties?.contains(property) ?? true
    }
}

/// What setting one pulled link or list did.
struct PulledLink {
    /// The list as set (the targets present), the base of the next local edit; nil for a
    /// to-one link.
    var base: SyncValue?
    /// The server's value when a target has not arrived yet.
    var waiting: SyncValue?
}

extension SyncValue {
    /// Whether the value is a plain value, a list of them or a map of them (not a link, nor a
    /// mixed value holding one).
    var isPlain: Bool {
        switch self {
        case .value, .map: true
        case .mixed(let value): !value.holdsReference
        case .mixedList(let elements): !elements.contains { $0.holdsReference }
        case .mixedMap(let entries): !entries.values.contains { $0.holdsReference }
        case .reference, .references, .referenceMap: false
        }
    }
}

extension LiveObjectsError {
    /// Why a pulled state of an object could not be read: the realm's error, or another one
    /// as `typeMismatch`.
    init(_ error: any Error, objectType: String) {
        self = error as? LiveObjectsError ?? LiveObjectsError(.typeMismatch, "\(error)", objectType: objectType)
    }
}

extension SyncedType {
    /// Whether the engine sends and pulls a property of the type.
    func sends(_ name: String) -> Bool { sentNames.contains(name) }

    /// The value to set a pulled property to: an `AnyValue` property's by its kind
    /// (``SyncValue/mixedValue``), any other's plain value; nil for a link, or a mixed value
    /// holding one (set with the links).
    func storedValue(_ value: SyncValue, for name: String) -> PropertyValue? {
        guard mixedNames.contains(name) else { return value.plainValue }
        return value.mixedValue?.anyValue?.propertyValue
    }

    /// A pulled state with each map of objects whose values are all nil (the wire cannot tell
    /// it from a map of plain values) read as a map of objects, and each list, set or map of
    /// `AnyValue`s as one (``readingMixedCollections(_:)``).
    func readingMapsOfObjects(_ change: ServerChange) -> ServerChange {
        var change = change
        for property in sentProperties where property.type == .object && property.isMap {
            change.values[property.name] = change.values[property.name]?.readAsMapOfObjects
        }
        change.values = readingMixedCollections(change.values)
        return change
    }

    /// Values with each `AnyValue` read as ``SyncValue/mixed(_:)`` (from a plain value or a
    /// link), each list, set or map of `AnyValue`s as ``SyncValue/mixedList(_:)`` or
    /// ``SyncValue/mixedMap(_:)`` from the forms the wire gives it (a list of plain values, a
    /// nested list, a map of plain values or of objects); a value of another shape is left as it is, for
    /// ``checkShape(of:_:)`` to refuse.
    func readingMixedCollections(_ values: [String: SyncValue]) -> [String: SyncValue] {
        guard !mixedNames.isEmpty || !mixedListNames.isEmpty || !mixedMapNames.isEmpty else { return values }
        var values = values
        for name in mixedNames {
            if let value = values[name]?.mixedValue { values[name] = .mixed(value) }
        }
        for name in mixedListNames {
            if let elements = values[name]?.mixedListElements { values[name] = .mixedList(elements) }
        }
        for name in mixedMapNames {
            if let entries = values[name]?.mixedMapEntries { values[name] = .mixedMap(entries) }
        }
        return values
    }

    /// Checks what the realm cannot check by itself in a pulled state: the kind of the object's
    /// id, and that a link is sent as a link, of the property's type, with an id of its kind.
    ///
    /// - Throws: `typeMismatch`, naming the object and the property.
    func checkShape(of change: ServerChange, _ types: [String: SyncedType]) throws(LiveObjectsError) {
        let id = change.object
        guard Self.isKey(id.primaryKey, of: primaryKeyType) else {
            throw LiveObjectsError(
                .typeMismatch, "the id \(id.primaryKey) is not of the primary key's type, \(primaryKeyType.rawValue)",
                objectType: name, property: primaryKey)
        }
        for property in sentProperties {
            guard let value = change.values[property.name] else { continue }
            func mismatch(_ why: String) -> LiveObjectsError {
                LiveObjectsError(
                    .typeMismatch, why, objectType: name, property: property.name, primaryKey: id.primaryKey)
            }
            if property.type == .mixed {
                switch value {
                case .mixedList where property.isList && !property.isMap, .mixedMap where property.isMap: break
                case _ where property.isList:
                    let model = property.isMap ? "a Map of AnyValues" : "a list of AnyValues"
                    throw mismatch("\(value) where the model has \(model)")
                default:
                    guard value.mixedValue != nil else { throw mismatch("\(value) where the model has an AnyValue") }
                }
                // A link in an AnyValue names an object of a synced type by an id of its key's kind.
                for target in value.linkTargets {
                    guard let type = types[target.object.typeName],
                        Self.isKey(target.object.primaryKey, of: type.primaryKeyType)
                    else { throw mismatch("an AnyValue links to \(target.object), which is not a synced object") }
                }
                continue
            }
            guard property.type == .object else {
                switch value {
                case .mixed, .mixedList, .mixedMap:
                    throw mismatch("\(value) where the model has a \(property.type.rawValue)")
                default: break
                }
                guard value.isPlain else { throw mismatch("a link where the model has a \(property.type.rawValue)") }
                let isMap = if case .map = value { true } else { false }
                guard isMap == property.isMap else {
                    throw mismatch(
                        property.isMap ? "\(value) where the model has a Map" : "a map where the model has no Map")
                }
                continue
            }
            let targets: [SyncReference]
            switch value {
            case .referenceMap where property.isMap: targets = value.linkTargets
            case .reference(let target) where !property.isList: targets = target.map { [$0] } ?? []
            case .references(let list) where property.isList && !property.isMap: targets = list
            default:
                let model = property.isMap ? "a map of objects" : property.isList ? "a list of links" : "a link"
                throw mismatch("\(value) where the model has \(model)")
            }
            for target in targets {
                guard target.object.typeName == property.objectType, let type = types[target.object.typeName],
                    Self.isKey(target.object.primaryKey, of: type.primaryKeyType)
                else {
                    throw mismatch("a link to \(target.object) where the model links to \(property.objectType ?? "")")
                }
            }
        }
    }

    /// Whether a value is a primary key of a type.
    static func isKey(_ value: PropertyValue, of type: PropertyType) -> Bool {
        switch (type, value) {
        case (.string, .string), (.uuid, .uuid), (.objectID, .objectID), (.int, .int), (.int64, .int): true
        case (.int32, .int(let value)): Int32(exactly: value) != nil
        case (.int16, .int(let value)): Int16(exactly: value) != nil
        case (.int8, .int(let value)): Int8(exactly: value) != nil
        default: false
        }
    }
}
