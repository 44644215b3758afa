import Observation

/// The observation registrars of a realm's managed objects, by row, and the step of its commit
/// pipeline that tells them which properties a commit really changed.
///
/// Registrars no instance refers to any more are dropped when the registry has doubled since
/// the last sweep, so its size stays proportional to the live instances that were read (plus at
/// most as many dead ones).
final class ObservationRegistry: CommitListener {
    let stage = CommitStage.observation
    unowned let store: Store
    /// Where the commit context made here is left for the subscription step.
    let shared: NotificationListeners.SharedContext?
    /// The registrars of managed objects, by row (see ``observation(of:)``).
    private var observations: [ObservedRow: ObjectObservation] = [:]
    /// The number of entries of ``observations`` per table index.
    private var observedRowCounts: [Int]
    /// The registry size at which registrars no instance refers to are swept out.
    private var sweepCount = 1024

    init(store: Store, shared: NotificationListeners.SharedContext?) {
        self.store = store
        self.shared = shared
        self.observedRowCounts = Array(repeating: 0, count: store.tables.count)
    }

    /// What ``Results`` read inside `withObservationTracking` register with; told after every
    /// commit that changed the realm.
    private let results = ResultsObservation()
    /// Whether a tracked read of results ever happened (until then, commits skip telling
    /// ``results``).
    private var resultsAreTracked = false

    /// Registrars hear of a commit once it is final.
    func prepare(_ commit: Commit) throws(LiveObjectsError) {}

    func abandon(_ commit: Commit) {}

    /// Nothing was changed, so no registrar is told.
    func cancelled() {}

    func committed(_ commit: Commit) {
        guard !commit.isEmpty else { return }
        if concerns(commit.changes) {
            let context = CommitContext(store: store, changes: commit.changes, undoLog: commit.undoLog)
            shared?.context = context
            notify(context)
        }
        if resultsAreTracked { results.registrar.withMutation(of: results, keyPath: \.commits) {} }
    }

    /// Registers a tracked read of results of this store.
    func trackResultsRead() {
        resultsAreTracked = true
        results.registrar.access(results, keyPath: \.commits)
    }

    /// The registrar shared by the instances of a managed object; made on first use.
    func observation(of handle: ObjectHandle) -> ObjectObservation {
        let key = ObservedRow(table: Int32(handle.table.index), row: handle.row, generation: handle.generation)
        if observations.count >= sweepCount { sweep() }
        var made = false
        let observation = Self.existing(
            &observations[
                key,
                default: {
                    made = true; return ObjectObservation(row: key)
                }()])
        if made { observedRowCounts[handle.table.index] += 1 }
        return observation
    }

    /// The value of a dictionary slot, found or inserted with one hash lookup.
    private static func existing(_ slot: inout ObjectObservation) -> ObjectObservation { slot }

    /// Drops the registrars that only the registry refers to.
    private func sweep() {
        var dead: [ObservedRow] = []
        var index = observations.startIndex
        while index != observations.endIndex {
            if isKnownUniquelyReferenced(&observations.values[index]) {
                dead.append(observations.keys[index])
            }
            observations.formIndex(after: &index)
        }
        for key in dead {
            observations.removeValue(forKey: key)
            observedRowCounts[Int(key.table)] -= 1
        }
        sweepCount = max(1024, observations.count * 2)
    }

    /// Whether a commit may concern an observed object: one of its tables has observed rows,
    /// or a table whose `LinkingObjects` read one of them does.
    private func concerns(_ changes: ChangeSet) -> Bool {
        guard !observations.isEmpty else { return false }
        for name in changes.tables.keys {
            guard let table = store.tablesByName[name] else { continue }
            if observedRowCounts[table.index] > 0 { return true }
            for other in store.tables where observedRowCounts[other.index] > 0 {
                if other.linkingObjectsSources.contains(where: { $0?.source === table }) { return true }
            }
        }
        return false
    }

    /// The properties of a table that objects were read through (a `@Persisted` wrapper
    /// resolved to them): the ones a registrar can have tracked.
    private func reportable(_ table: Table) -> [Int] {
        table.schema.properties.indices.filter { table.field(ofProperty: $0) != nil }
    }

    /// Tells the registrars of the changed objects which of their properties really changed
    /// (the old value, rebuilt from the undo log, differs from the new one), and those of the
    /// deleted objects that all their properties did.
    private func notify(_ context: CommitContext) {
        let tables = store.tables
        var changed: [(ObjectObservation, Table, Int32, [Int])] = []
        var modifiedCount = 0
        for rows in context.modified.values { modifiedCount += rows.count }
        func check(_ observation: ObjectObservation, _ table: Table, _ row: Int32, _ properties: Set<Int>) {
            let id = RowID(table, row)
            let really = properties.sorted().filter { p in
                table.field(ofProperty: p) != nil && context.oldValue(id, p) != table.value(row, p)
            }
            if !really.isEmpty { changed.append((observation, table, row, really)) }
        }
        if modifiedCount <= observations.count {
            for (t, rows) in context.modified {
                let table = tables[t]
                guard observedRowCounts[t] > 0 else { continue }
                for (row, properties) in rows {
                    let key = ObservedRow(table: Int32(t), row: row, generation: table.generation(row))
                    if let observation = observations[key] { check(observation, table, row, properties) }
                }
            }
        } else {
            for (key, observation) in observations {
                guard let properties = context.modified[Int(key.table)]?[key.row] else { continue }
                let table = tables[Int(key.table)]
                guard table.isValid(key.row, generation: key.generation) else { continue }
                check(observation, table, key.row, properties)
            }
        }
        var deleted: [(ObjectObservation, Table, Int32, [Int])] = []
        for (t, rows) in context.deleted where observedRowCounts[t] > 0 {
            let table = tables[t]
            for (row, generation) in rows {
                let key = ObservedRow(table: Int32(t), row: row, generation: generation)
                guard let observation = observations.removeValue(forKey: key) else { continue }
                observedRowCounts[t] -= 1
                deleted.append((observation, table, row, reportable(table)))
            }
        }
        // Reported after all the checks, so that observers never run while old values are
        // still being rebuilt.
        for (observation, table, row, properties) in changed + deleted {
            guard let type = table.objectType else { continue }
            let subject = type.init()
            subject._handle = ObjectHandle(
                store: store, table: table, row: row, generation: observation.row?.generation ?? 0)
            for p in properties {
                guard let field = table.field(ofProperty: p) else { continue }
                observation.registrar.withMutation(of: subject, keyPath: Object.observedKeyPath(field: field)) {}
            }
        }
    }
}

extension Store {
    /// The observation registry of this store: the Observation step of its commit pipeline
    /// (installed by its realm; made on first use for a store without one).
    var observationRegistry: ObservationRegistry {
        if let registry = listener(ObservationRegistry.self) { return registry }
        let registry = ObservationRegistry(store: self, shared: nil)
        addCommitListener(registry)
        return registry
    }
}

/// The subject that tracked reads of ``Results`` register with: any commit that changed the
/// realm may change what results hold, so every such commit reports it.
final class ResultsObservation: Observable {
    let registrar = ObservationRegistrar()
    /// Never read: the key path the reads and the commits name.
    var commits: Int { 0 }
}

extension Store {
    /// Registers a read of results with Observation when it happens inside
    /// `withObservationTracking` (never for a store that does not change).
    @inline(__always)
    func observeResultsRead() {
        if isLive && ObservationProbe.shared.isTracking { observationRegistry.trackResultsRead() }
    }
}
