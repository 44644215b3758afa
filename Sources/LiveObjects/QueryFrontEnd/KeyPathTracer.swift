import LiveObjectsStore

/// Turns Swift key paths of model classes (`\Dog.owner?.name`) into property names, by reading
/// them on a probe object and recording which persisted properties the read touches.
///
/// The probe lives in a private store with the realm's schema and one object per type, whose
/// links all point at the one object of their target type and whose lists hold one element, so
/// that optional chains and list reads go through. Results are cached per table.
final class KeyPathTracer: PropertyReadRecorder {
    private(set) var accesses: [(table: Table, property: Int)] = []

    func record(_ table: Table, _ property: Int) {
        accesses.append((table, property))
    }
}

extension Store {
    /// The property names a key path of a model class reads, from `table`.
    ///
    /// - Throws: `invalidQuery` when the key path reads no persisted property (a computed or
    ///   ignored property), or reads one that is not reachable from the table.
    func propertyNames<Root: Object>(of keyPath: PartialKeyPath<Root>, from table: Table)
        throws(LiveObjectsError) -> [String]
    {
        try trace(keyPath, from: table).names
    }

    /// The property names a key path reads from `table` and the table they lead to, traced once
    /// per key path and table.
    func trace<Root: Object>(_ keyPath: PartialKeyPath<Root>, from table: Table)
        throws(LiveObjectsError) -> TracedKeyPath
    {
        try trace(keyPath, root: Root.self, from: table)
    }

    /// ``trace(_:from:)`` for a key path whose root is `root` (not generic, so that typed
    /// queries built in other modules call it directly).
    func trace(_ keyPath: AnyKeyPath, root: Object.Type, from table: Table) throws(LiveObjectsError) -> TracedKeyPath {
        try trace(keyPath, root: root, fromTable: table.index)
    }

    /// ``trace(_:root:from:)`` from the table at position `t` in ``tables`` (typed queries hold
    /// their tables by position; the table itself is read only for a key path not traced yet).
    func trace(_ keyPath: AnyKeyPath, root: Object.Type, fromTable t: Int) throws(LiveObjectsError) -> TracedKeyPath {
        let id = ObjectIdentifier(keyPath)
        if let traced = withQueries({ $0.recent(id, table: t) }) { return traced }
        if let traced = withQueries({ queries -> TracedKeyPath? in
            guard let traced = queries.tracedKeyPaths[t][keyPath] else { return nil }
            queries.rememberRecent(keyPath, traced, table: t)
            return traced
        }) {
            return traced
        }
        let table = tables[t]
        // A key path that does not start at a model class (`$0.payload.isNull`, a member of an
        // `AnyValue`, which the compiler lets through a typed query in some closures) would read
        // an object as another type.
        guard let start = type(of: keyPath).rootType as? Object.Type, ObjectIdentifier(start) == ObjectIdentifier(root)
        else {
            throw LiveObjectsError(
                .invalidQuery,
                "the key path \(keyPath) does not start at a \(table.name): a query follows persisted properties, "
                    + "not members of their values",
                objectType: table.name)
        }
        let probe = try makeProbeStore()
        let probeTable = probe.tables[t]
        let object = root.init()
        object._handle = ObjectHandle(store: probe, table: probeTable, row: 0, generation: 0)
        let tracer = KeyPathTracer()
        probe.readRecorder = tracer
        _ = object[keyPath: keyPath]
        probe.readRecorder = nil
        _ = probe.takePendingError()
        // Keep the chain of reads that starts at the root and follows links.
        var names: [String] = []
        var current: Table? = probeTable
        for access in tracer.accesses {
            guard access.table === current else { break }
            let property = access.table.schema.properties[access.property]
            names.append(property.name)
            current = property.objectType.flatMap { probe.tablesByName[$0] }
        }
        guard !names.isEmpty else {
            throw LiveObjectsError(
                .invalidQuery, "the key path \(keyPath) does not read a persisted property",
                objectType: table.name)
        }
        let traced = TracedKeyPath(
            names: names, target: target(of: names, from: table).index, firstProperty: table.propertyIndex[names[0]])
        withQueries { queries in
            queries.tracedKeyPaths[t][keyPath] = traced
            queries.rememberRecent(keyPath, traced, table: t)
        }
        return traced
    }

    /// The table that following `names` from `table` leads to: through each link, stopping at
    /// the first name that is not one.
    private func target(of names: [String], from table: Table) -> Table {
        var current = table
        for name in names {
            guard let p = current.propertyIndex[name],
                let type = current.schema.properties[p].objectType,
                let next = tablesByName[type]
            else { break }
            current = next
        }
        return current
    }

    private func makeProbeStore() throws(LiveObjectsError) -> Store {
        if let probe = queries.probeStore { return probe }
        let probe = try Store(schema: schema)
        for table in tables {
            if let info = table.modelInfo { probe.register(info) }
        }
        probe.isInWrite = true
        for table in probe.tables { _ = probe.insertRow(table, values: table.defaults) }
        for table in probe.tables {
            for (p, property) in table.schema.properties.enumerated() where property.isStored {
                if property.type == .object {
                    let target = probe.tablesByName[property.objectType!]!
                    let key = PropertyValue.object(target.key(0))
                    probe.setValue(property.isList ? .list([key]) : key, table, 0, p)
                } else if property.isList {
                    var element = property
                    element.isList = false
                    element.isSet = false
                    element.isMap = false
                    probe.setValue(.list([element.zeroValue]), table, 0, p)
                }
            }
        }
        probe.undoLog.removeAll()
        probe.isInWrite = false
        queries.probeStore = probe
        return probe
    }
}
