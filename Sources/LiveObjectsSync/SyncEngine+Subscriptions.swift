import LiveObjects

// Sync by query (docs/SYNC-PROTOCOL.md, "Subscriptions"): the device's queries go with every
// pull; the server sends the objects that match one and hides the ones that stop matching. The
// engine keeps the objects that match (its roots, `viewRoots`) and the objects they link to,
// fetching link targets the pull did not bring, and removes the others as remote writes (the
// server keeps them). A change of the subscriptions starts a walk from the beginning; objects are
// removed only when it has finished.

extension SyncEngine {
    /// The queries this device syncs by; nil while it syncs the whole space (the default).
    public var subscriptions: [SyncSubscription]? { subscriptionList }

    /// Adds a subscription, or replaces the one of the same name. The next sync pulls what the
    /// subscriptions now match, from the beginning (``downloadProgress`` follows it), and
    /// removes from the device the objects that none matches or links to (they stay on the
    /// server, and a local change of one is still sent first). Kept in the state log: an engine
    /// started again syncs by the same subscriptions.
    ///
    /// A device that has no subscription syncs the whole space; its first subscription makes it
    /// sync only what its subscriptions match.
    ///
    /// - Throws: `unknownType` for a type the engine does not sync, `invalidOperation` for an
    ///   empty name; `io` when the state log cannot be written.
    public func subscribe(_ subscription: SyncSubscription) async throws {
        var list = subscriptionList ?? []
        if let index = list.firstIndex(where: { $0.name == subscription.name }) {
            list[index] = subscription
        } else {
            list.append(subscription)
        }
        try await setSubscriptions(list)
    }

    /// Removes the subscription of a name; the next sync removes from the device the objects it
    /// no longer needs. Removing the last leaves a device that syncs nothing (call
    /// ``setSubscriptions(_:)`` with nil to sync the whole space again).
    ///
    /// - Returns: Whether there was one of the name.
    @discardableResult
    public func unsubscribe(named name: String) async throws -> Bool {
        guard var list = subscriptionList, let index = list.firstIndex(where: { $0.name == name }) else {
            return false
        }
        list.remove(at: index)
        try await setSubscriptions(list)
        return true
    }

    /// Replaces every subscription; nil syncs the whole space again. Waits for a sync under way.
    ///
    /// - Throws: `unknownType` for a type the engine does not sync, `invalidOperation` for an
    ///   empty name or a name twice; `io` when the state log cannot be written.
    public func setSubscriptions(_ subscriptions: [SyncSubscription]?) async throws {
        var names = Set<String>()
        for subscription in subscriptions ?? [] {
            guard types[subscription.typeName] != nil else {
                throw LiveObjectsError(
                    .unknownType, "subscription \"\(subscription.name)\": the engine does not sync this type",
                    objectType: subscription.typeName)
            }
            guard !subscription.name.isEmpty, names.insert(subscription.name).inserted else {
                throw LiveObjectsError(
                    .invalidOperation, "a subscription needs a name of its own (\"\(subscription.name)\")")
            }
        }
        try await exclusively {
            guard subscriptions != subscriptionList else { return }
            // A state the disk refuses changes nothing: the engine keeps its queries.
            let before = (subscriptionList, viewRoots, viewStale, viewWalkPending, cursor, progress)
            do {
                try await changeSubscriptions(to: subscriptions)
            } catch {
                (subscriptionList, viewRoots, viewStale, viewWalkPending, cursor, progress) = before
                throw error
            }
        }
    }

    private func changeSubscriptions(to subscriptions: [SyncSubscription]?) async throws {
        subscriptionList = subscriptions
        if subscriptions == nil {
            // The whole space again: everything from the beginning; nothing to remove.
            for id in viewRoots.union(viewStale) { noteObjectChanged(id) }
            viewRoots = []
            viewStale = []
            viewWalkPending = false
            cursor = nil
            notePositionChanged()
            noteSetsChanged()
            startProgress()
        } else {
            // What the device holds was pulled under other queries (or none, for the whole
            // space): every object is a candidate for removal until the walk brings it.
            startViewWalk()
        }
        try await saveState()
    }

    /// How far the download that follows a change of the subscriptions (or a device's first
    /// sync) has come; nil before any.
    public var downloadProgress: SyncProgress? { progress }

    /// The progress of downloads from now on: a value per pulled page, and one when the download
    /// completes.
    public func progressUpdates() -> AsyncStream<SyncProgress> {
        let (stream, continuation) = AsyncStream<SyncProgress>.makeStream(bufferingPolicy: .bufferingNewest(64))
        subscriberCounter += 1
        let id = subscriberCounter
        progressSubscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribeProgress(id) } }
        return stream
    }

    private func unsubscribeProgress(_ id: UInt64) { progressSubscribers[id] = nil }

    // MARK: The walk and its progress

    /// Starts a walk from the beginning under the subscriptions: no object is a root until the
    /// walk brings it.
    func startViewWalk() {
        for id in viewRoots { noteObjectChanged(id) }
        viewRoots = []
        viewWalkPending = true
        cursor = nil
        notePositionChanged()
        noteSetsChanged()
        startProgress()
    }

    private func startProgress() {
        publish(SyncProgress(pulledObjects: 0, version: 0, latestVersion: 0, isComplete: false))
    }

    /// Follows a page of a download under way.
    func noteProgress(_ page: SyncPull, _ report: SyncReport) {
        guard var current = progress, !current.isComplete else {
            // A device's first pull is a download too.
            guard progress == nil, cursor == nil else { return }
            progress = SyncProgress(pulledObjects: 0, version: 0, latestVersion: 0, isComplete: false)
            noteProgress(page, report)
            return
        }
        current.pulledObjects += page.changes.count
        if let version = page.version { current.version = max(current.version, version) }
        if let latest = page.latestVersion { current.latestVersion = max(current.latestVersion, latest) }
        publish(current)
    }

    /// Ends the download under way.
    func finishProgress(_ report: SyncReport) {
        guard var current = progress else { return }
        current.isComplete = true
        current.version = max(current.version, current.latestVersion)
        publish(current)
    }

    private func publish(_ value: SyncProgress) {
        progress = value
        for continuation in progressSubscribers.values { continuation.yield(value) }
    }

    // MARK: Keeping what the subscriptions need

    /// After the pages of a round: fetches the link targets the kept objects wait for and the
    /// kept objects the server hid (with their current values, or learning that the user may no
    /// longer read them), round after round while new ones are wanted; then removes, as remote
    /// writes, the objects that are neither roots nor reached from one through links, unless a
    /// local change of them waits or a conflict holds them.
    ///
    /// - Parameter afterWalk: Whether the round ended a walk from the beginning, which sends no
    ///   removal of what it leaves out: every object kept for a link is then asked for again.
    func settleView(_ report: inout SyncReport, afterWalk: Bool) async throws {
        var asked = Set<SyncObjectID>()
        var refused = Set<SyncObjectID>()
        for _ in 0..<Self.maximumFetchRounds {
            let unsent = try await unsentChanges()
            let held = Set(unsent.keys).union(openConflicts.keys)
            let reach = try await reachable(from: viewRoots.union(held))
            // Kept objects whose state here may be old: hidden ones, and after a walk every one
            // kept for a link.
            var doubtful = viewStale.intersection(reach.kept)
            if afterWalk { doubtful.formUnion(reach.kept.subtracting(viewRoots).subtracting(held)) }
            let wanted = reach.missing.union(doubtful).subtracting(asked)
            guard !wanted.isEmpty else { break }
            asked.formUnion(wanted)
            let ids = wanted.sorted { $0.description < $1.description }
            let states: [ServerChange]
            do {
                states = try await withRetries { try await transport.objects(ids) }
            } catch {
                report.pullFailure = SyncPullFailure(error)
                return
            }
            let found = Set(states.map(\.object))
            // A kept object the server did not give back is not for this user any more.
            refused.formUnion(doubtful.intersection(wanted).subtracting(found))
            try await apply(states.filter { !$0.isDeleted }, &report, matching: false)
            for id in found where viewStale.remove(id) != nil { noteObjectChanged(id) }
        }
        let unsent = try await unsentChanges()
        let held = Set(unsent.keys).union(openConflicts.keys)
        let reach = try await reachable(from: viewRoots.union(held))
        let gone = reach.present.subtracting(reach.kept).union(refused).subtracting(held)
        // A hidden object no longer here needs no removal.
        for id in viewStale.subtracting(reach.present) {
            viewStale.remove(id)
            noteObjectChanged(id)
        }
        guard !gone.isEmpty else { return }
        let types = types
        try await realm.writeRemote { realm in
            for id in gone where types[id.typeName] != nil {
                if let object = try realm.dynamicObject(ofType: id.typeName, forPrimaryKey: id.primaryKey) {
                    try realm.delete(object)
                }
            }
        }
        report.removedFromView += gone.count
        forgetEngineState(of: gone)
    }

    /// The most rounds of link targets fetched after one pull round (a chain of links longer
    /// than this waits for the next sync).
    static var maximumFetchRounds: Int { 8 }

    /// The objects here reached from some through links of synced types (them included), the
    /// targets of their links that are not here (from the server's values waiting for them),
    /// and every object of a synced type here.
    private func reachable(from roots: Set<SyncObjectID>) async throws -> (
        kept: Set<SyncObjectID>, missing: Set<SyncObjectID>, present: Set<SyncObjectID>
    ) {
        let types = types
        var waiting: [SyncObjectID: [SyncObjectID]] = [:]
        for (key, value) in pendingLinks where !value.linkTargets.isEmpty {
            waiting[key.object, default: []] += value.linkTargets.map(\.object)
        }
        let links = waiting
        return try await realm.read { realm in
            var kept = Set<SyncObjectID>()
            var missing = Set<SyncObjectID>()
            var queue = Array(roots)
            while let id = queue.popLast() {
                guard !kept.contains(id), let type = types[id.typeName],
                    let object = try realm.dynamicObject(ofType: id.typeName, forPrimaryKey: id.primaryKey)
                else {
                    if types[id.typeName] != nil, !kept.contains(id), roots.contains(id) == false { missing.insert(id) }
                    continue
                }
                kept.insert(id)
                for property in type.sentProperties where property.type == .object {
                    let targets =
                        property.isMap
                        ? try object.linkedObjectMap(property.name).compactMap(\.object)
                        : property.isList
                            ? try object.linkedObjects(property.name)
                            : try object.linkedObject(property.name).map { [$0] } ?? []
                    for target in targets {
                        guard let targetType = types[target.typeName] else { continue }
                        queue.append(SyncObjectID(typeName: target.typeName, primaryKey: target[targetType.primaryKey]))
                    }
                }
                // Links inside AnyValues keep their targets too.
                for property in type.sentProperties where property.type == .mixed {
                    for link in AnyValue.links(inStored: try object.value(property.name), of: property) {
                        guard let targetType = types[link.objectType],
                            let target = try realm.dynamicObject(ofType: link.objectType, key: link.key)
                        else { continue }
                        queue.append(SyncObjectID(typeName: link.objectType, primaryKey: target[targetType.primaryKey]))
                    }
                }
                for target in links[id] ?? [] { queue.append(target) }
            }
            var present = Set<SyncObjectID>()
            for type in types.values {
                for object in try realm.dynamicObjects(type.name) {
                    present.insert(SyncObjectID(typeName: type.name, primaryKey: object[type.primaryKey]))
                }
            }
            return (kept, missing, present)
        }
    }
}
