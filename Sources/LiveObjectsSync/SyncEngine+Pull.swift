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
    func pullRound(_ report: inout SyncReport) async throws {
        while try await pullPage(&report) {}
    }

    /// One pull: fetch, keep the newest state per object, merge.
    ///
    /// - Returns: Whether the server has more changes after the new cursor.
    private func pullPage(_ report: inout SyncReport) async throws -> Bool {
        let cursor = cursor
        let pulled: SyncPull
        do {
            pulled = try await withRetries { try await transport.pull(after: cursor) }
        } catch {
            // Reported, as a failed push is: the pages before are merged and kept.
            report.pullFailure = SyncPullFailure(error)
            return false
        }
        var newest: [SyncObjectID: ServerChange] = [:]
        for change in pulled.changes where types[change.object.typeName] != nil {
            // Newer than what was pulled, and not older than this device's own last write (a
            // state at that version includes the write, and the other devices' before it).
            guard change.serverVersion > (serverVersions[change.object] ?? 0),
                change.serverVersion >= (pushedVersions[change.object] ?? 0)
            else { continue }
            if let known = newest[change.object], known.serverVersion >= change.serverVersion { continue }
            newest[change.object] = change
        }
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
        var conflicts: [SyncConflict] = []
        var applied: [ServerChange] = []
        for change in newest.values.sorted(by: { $0.serverVersion < $1.serverVersion }) {
            if openConflicts[change.object] != nil { continue }
            if change.isDeleted, let local = unsent[change.object], !local.isDeletion {
                let names = local.properties ?? Set(types[change.object.typeName]!.sentProperties.map(\.name))
                conflicts.append(SyncConflict(object: change.object, serverID: change.serverID, localChanges: names))
                continue
            }
            applied.append(change)
        }
        let types = types
        let toApply = applied
        let unsentChanges = unsent
        let waiting = pendingLinks
        let (links, bases) = try await realm.writeRemote { realm in
            try Self.merge(toApply, unsent: unsentChanges, pending: waiting, types: types, into: realm)
        }
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
        if pulled.cursor != self.cursor {
            self.cursor = pulled.cursor
            notePositionChanged()
        }
        try await saveState()
        // A page that does not move the cursor ends the round, whatever it says.
        return pulled.hasMore && pulled.cursor != cursor
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
    /// - Returns: The changes to the pending links (a value still waiting, or nil when settled),
    ///   and the lists set from the server's values, as set: the bases of the next local edits.
    private static func merge(
        _ changes: [ServerChange], unsent: [SyncObjectID: UnsentChange], pending: [PendingLink: SyncValue],
        types: [String: SyncedType], into realm: isolated Realm
    ) throws -> ([PendingLink: SyncValue?], [PendingLink: SyncValue]) {
        func isLocal(_ id: SyncObjectID, _ property: String) -> Bool {
            guard let local = unsent[id] else { return false }
            return local.properties?.contains(property) ?? true
        }
        func exists(_ target: SyncReference) throws -> Bool { try Self.exists(target, in: realm) }
        func setLink(_ object: DynamicObject, _ name: String, _ value: SyncValue) throws -> Bool {
            try Self.setLink(object, name, value, types, in: realm)
        }
        var updates: [PendingLink: SyncValue?] = [:]
        var bases: [PendingLink: SyncValue] = [:]
        /// A list of links as set: the targets present.
        func present(_ value: SyncValue) throws -> SyncValue {
            guard case .references(let targets) = value else { return value }
            return .references(try targets.filter(exists))
        }
        var arrived = Set<SyncObjectID>()
        var deleted = Set<SyncObjectID>()
        var linked: [(ServerChange, DynamicObject)] = []
        for change in changes {
            let id = change.object
            let type = types[id.typeName]!
            let existing = try realm.dynamicObject(ofType: id.typeName, forPrimaryKey: id.primaryKey)
            if change.isDeleted {
                deleted.insert(id)
                // A local deletion not sent yet, or an object never seen: nothing to do.
                if let existing, unsent[id] == nil { try realm.delete(existing) }
                continue
            }
            if unsent[id]?.isDeletion == true { continue }
            let object: DynamicObject
            if let existing {
                object = existing
            } else {
                var values: [String: PropertyValue] = [type.primaryKey: id.primaryKey]
                for (name, value) in change.values {
                    if case .value(let plain) = value { values[name] = plain }
                }
                object = try realm.dynamicCreate(id.typeName, value: values)
            }
            arrived.insert(id)
            if object[type.serverIDProperty].stringValue != change.serverID {
                try object.set(type.serverIDProperty, to: .string(change.serverID))
            }
            for (name, value) in change.values where !isLocal(id, name) {
                guard case .value(let plain) = value, type.sentProperties.contains(where: { $0.name == name }) else {
                    continue
                }
                if object[name] != plain { try object.set(name, to: plain) }
                if value.isList { bases[PendingLink(object: id, property: name)] = value }
            }
            linked.append((change, object))
        }
        for (change, object) in linked {
            let type = types[change.object.typeName]!
            for (name, value) in change.values {
                guard type.sentProperties.contains(where: { $0.name == name }) else { continue }
                let key = PendingLink(object: change.object, property: name)
                if case .value = value { continue }
                // A local change of the link wins: the server's value no longer waits.
                let local = isLocal(change.object, name)
                let settled = try local || setLink(object, name, value)
                if !local, value.isList { bases[key] = try present(value) }
                if settled {
                    if pending[key] != nil { updates[key] = .some(nil) }
                } else {
                    updates[key] = .some(value)
                }
            }
        }
        // Links pulled earlier whose targets arrived now, or whose object was deleted.
        for (key, value) in pending where updates[key] == nil {
            if deleted.contains(key.object) {
                updates[key] = .some(nil)
                continue
            }
            let targets: [SyncReference]
            switch value {
            case .value: targets = []
            case .reference(let target): targets = target.map { [$0] } ?? []
            case .references(let list): targets = list
            }
            guard targets.contains(where: { arrived.contains($0.object) }) else { continue }
            guard !isLocal(key.object, key.property),
                let object = try realm.dynamicObject(ofType: key.object.typeName, forPrimaryKey: key.object.primaryKey)
            else {
                updates[key] = .some(nil)
                continue
            }
            if try setLink(object, key.property, value) { updates[key] = .some(nil) }
            if value.isList { bases[key] = try present(value) }
        }
        return (updates, bases)
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
        case .value:
            return true
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
        }
    }

    private static func primaryKey(of object: DynamicObject, _ types: [String: SyncedType]) -> PropertyValue {
        object[types[object.typeName]?.primaryKey ?? ""]
    }
}
