import Observation

/// Model objects take part in the Observation framework: reading a `@Persisted` property inside
/// `withObservationTracking` (and so in a SwiftUI view's body) tracks it, and the tracking is
/// told when the property really changes.
///
/// - A managed object reports a property after a commit that changed its value, whichever
///   object instance (or dynamic API call) made the write: all instances of one object share
///   their tracking. Writing a property with the value it already has, or changing it and back
///   in one write, reports nothing. Appending to, removing from, moving or replacing elements
///   of a `List` counts as a change of the list property; a change of the links that make up a
///   `LinkingObjects` counts as a change of that property. Deleting the object reports every
///   property that was tracked. Observers run after the commit, inside the realm's
///   isolation, and see the new values.
/// - An unmanaged object reports a property when it is set (unless it is set to the same plain
///   value).
/// - Tracking lasts as long as an instance of the object is alive: keep the instance you
///   observe (as a SwiftUI view keeps its model).
extension Object: Observable {}

/// The observation registrar of a model object, made on the first property read of an object
/// instance.
///
/// All instances of one managed object share one registrar, kept in the store by row (see
/// ``Store/observation(of:)``), so that a write through any instance, or through the dynamic
/// API, reaches the trackers of every instance; an unmanaged object has its own.
///
/// Why a registrar per object, cached on the instance, rather than a lookup per read: reading
/// a property must stay cheap. After an instance's first read, registering an access costs
/// one load, one nil check and the registrar's own `access` call (which does nothing outside
/// `withObservationTracking`); the row lookup happens once per instance. A registrar is a
/// class allocation, so it is made lazily (objects that are never read, such as those of a
/// bulk insert, never get one) and dropped by the store once no instance refers to it.
@usableFromInline
final class ObjectObservation {
    @usableFromInline let registrar = ObservationRegistrar()
    /// The row the registrar belongs to, for a managed object.
    let row: ObservedRow?

    init(row: ObservedRow?) {
        self.row = row
    }
}

/// The identity of a managed object in its store, for the registry of registrars.
struct ObservedRow: Hashable {
    let table: Int32
    let row: Int32
    let generation: UInt32
}

/// Reports a property change to a registrar; one per property, made when a `@Persisted`
/// wrapper is first resolved (it knows the property's Swift key path and type).
typealias ObservationReporter = (ObservationRegistrar, Object) -> Void

extension Object {
    /// Makes the instance's registrar on its first tracked read. Does nothing for objects of
    /// stores that never change (frozen snapshots, key-path probes).
    @usableFromInline @inline(never)
    final func _beginObservation<Subject: Object, Member>(
        _ subject: Subject, _ keyPath: KeyPath<Subject, Member>
    ) {
        let observation: ObjectObservation
        if let handle = _handle {
            guard handle.store.observesObjects else { return }
            observation = handle.store.observation(of: handle)
        } else {
            observation = ObjectObservation(row: nil)
        }
        _observation = observation
        observation.registrar.access(subject, keyPath: keyPath)
    }

    /// Sets a property of an unmanaged object, reporting it to the instance's registrar if it
    /// has one (without one, nothing was tracked).
    @usableFromInline
    final func _setUnmanaged<Subject: Object, Value: _Persistable>(
        _ subject: Subject, _ keyPath: KeyPath<Subject, Value>,
        _ storageKeyPath: ReferenceWritableKeyPath<Subject, Persisted<Value>>, _ newValue: Value
    ) {
        guard let observation = _observation else {
            subject[keyPath: storageKeyPath].storage = newValue
            return
        }
        if case .value(let old) = subject[keyPath: storageKeyPath].storage._encode().input,
            case .value(let new) = newValue._encode().input, old == new
        {
            subject[keyPath: storageKeyPath].storage = newValue
            return
        }
        observation.registrar.withMutation(of: subject, keyPath: keyPath) {
            subject[keyPath: storageKeyPath].storage = newValue
        }
    }
}

extension Store {
    /// The registrar shared by the instances of a managed object; made on first use.
    ///
    /// Registrars no instance refers to any more are dropped when the registry has doubled
    /// since the last sweep, so its size stays proportional to the live instances that were
    /// read (plus at most as many dead ones).
    func observation(of handle: ObjectHandle) -> ObjectObservation {
        let key = ObservedRow(table: Int32(handle.table.index), row: handle.row, generation: handle.generation)
        if let existing = observations[key] { return existing }
        if observations.count >= observationSweepCount { sweepObservations() }
        let made = ObjectObservation(row: key)
        observations[key] = made
        observedRowCounts[handle.table.index] += 1
        return made
    }

    /// Drops the registrars that only the registry refers to.
    private func sweepObservations() {
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
        observationSweepCount = max(1024, observations.count * 2)
    }

    /// Whether a commit may concern an observed object: one of its tables has observed rows,
    /// or a table whose `LinkingObjects` read one of them does.
    func commitConcernsObservers(_ changes: ChangeSet) -> Bool {
        guard !observations.isEmpty else { return false }
        for name in changes.tables.keys {
            guard let table = tablesByName[name] else { continue }
            if observedRowCounts[table.index] > 0 { return true }
            for other in tables where observedRowCounts[other.index] > 0 {
                if other.linkingObjectsSources.contains(where: { $0?.source === table }) { return true }
            }
        }
        return false
    }

    /// Tells the registrars of the changed objects which of their properties really changed
    /// (the old value, rebuilt from the undo log, differs from the new one), and those of the
    /// deleted objects that all their properties did.
    func notifyObservers(_ context: CommitContext) {
        var changed: [(ObjectObservation, Table, Int32, [Int])] = []
        var modifiedCount = 0
        for rows in context.modified.values { modifiedCount += rows.count }
        func check(_ observation: ObjectObservation, _ table: Table, _ row: Int32, _ properties: Set<Int>) {
            let id = RowID(table, row)
            let really = properties.sorted().filter { p in
                table.observationReporters[p] != nil && context.oldValue(id, p) != table.value(row, p)
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
                let all = table.observationReporters.indices.filter { table.observationReporters[$0] != nil }
                deleted.append((observation, table, row, all))
            }
        }
        // Reported after all the checks, so that observers never run while old values are
        // still being rebuilt.
        for (observation, table, row, properties) in changed + deleted {
            guard let type = table.objectType else { continue }
            let subject = type.init()
            subject._handle = ObjectHandle(
                store: self, table: table, row: row, generation: observation.row?.generation ?? 0)
            for p in properties { table.observationReporters[p]?(observation.registrar, subject) }
        }
    }
}
