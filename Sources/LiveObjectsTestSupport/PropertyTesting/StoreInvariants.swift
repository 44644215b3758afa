import LiveObjects

/// Checks the invariants of a store against its own data, whatever its schema: the backlink index
/// (and so every `LinkingObjects`) is the inverse of the forward links, no link or list entry
/// points to a deleted object, every embedded object has exactly one parent, primary keys are
/// unique and the primary-key index agrees with the data, every secondary index agrees with the
/// data, and the slot bookkeeping is consistent.
package enum StoreInvariants {
    /// Every broken invariant, one line each (empty when the store is sound).
    package static func violations(in store: Store, limit: Int = 25) -> [String] {
        var lines: [String] = []
        func fail(_ message: @autoclosure () -> String) {
            if lines.count < limit { lines.append(message()) }
        }
        for table in store.tables {
            table.finishValueIndexBuild()
            checkSlots(table, store, fail)
            checkLinks(table, fail)
            checkMixedLinks(table, store, fail)
            checkPrimaryKey(table, fail)
            checkValueIndexes(table, fail)
        }
        checkBacklinks(store, fail)
        return lines
    }

    /// Every link in a live object's `AnyValue` names a live object of a type that is not
    /// embedded (a deleted object's links were made null).
    private static func checkMixedLinks(_ table: Table, _ store: Store, _ fail: (@autoclosure () -> String) -> Void) {
        for (p, property) in table.schema.properties.enumerated() where property.type == .mixed {
            for row in table.liveRows {
                MixedContainer.forEachLink(in: table.column(p).value(at: Int(row))) { link in
                    guard let target = store.tablesByName[link.objectType], !target.schema.isEmbedded,
                        target.row(for: link.key) != nil
                    else {
                        return fail("\(name(table, row)).\(property.name) links to \(link), which does not exist")
                    }
                }
            }
        }
    }

    /// Names a row for messages: its primary key if it has one, else its slot.
    static func name(_ table: Table, _ row: Int32) -> String {
        if let pk = table.primaryKeyProperty, Int(row) < table.rowCount,
            let column = table.columns[pk], Int(row) < column.count
        {
            return "\(table.name)[\(column.value(at: Int(row)))]"
        }
        return "\(table.name)#\(row)"
    }

    private static func checkSlots(_ table: Table, _ store: Store, _ fail: (@autoclosure () -> String) -> Void) {
        let n = table.rowCount
        if !table.slotBookkeepingIsConsistent {
            fail("\(table.name): the live bits or the first-generation promise disagree with the slot states")
        }
        for (p, column) in table.columns.enumerated() {
            if let column, column.count != n {
                fail("\(table.name).\(table.schema.properties[p].name): \(column.count) values for \(n) slots")
            }
        }
        for b in table.incoming where b.rows.count != n {
            fail("\(table.name): backlinks from \(b.source.name) have \(b.rows.count) entries for \(n) slots")
        }
        let live = (0..<Int32(n)).filter { table.isLive($0) }.count
        if live != table.liveCount {
            fail("\(table.name): liveCount is \(table.liveCount) but \(live) slots are live")
        }
        if table.liveRows != (0..<Int32(n)).filter({ table.isLive($0) }) {
            fail("\(table.name): liveRows does not list the live slots")
        }
        var free = Set<Int32>()
        for row in table.freeRows {
            if row < 0 || Int(row) >= n {
                fail("\(table.name): free slot \(row) is out of range")
            } else if table.isLive(row) {
                fail("\(table.name): free slot \(row) holds a live object")
            }
            if !free.insert(row).inserted { fail("\(table.name): slot \(row) is free twice") }
        }
        if !store.isInWrite {
            let dead = Set((0..<Int32(n)).filter { !table.isLive($0) })
            if dead != free {
                fail("\(table.name): dead slots \(dead.sorted()) but free slots \(free.sorted())")
            }
        }
    }

    private static func checkLinks(_ table: Table, _ fail: (@autoclosure () -> String) -> Void) {
        for (p, property) in table.schema.properties.enumerated() where property.type == .object {
            let label = "\(table.name).\(property.name)"
            switch table.columns[p] {
            case let column as LinkColumn:
                for row in 0..<Int32(table.rowCount) {
                    let t = column.targets[Int(row)]
                    if !table.isLive(row) {
                        if t >= 0 { fail("\(label) of deleted slot \(row) still links to slot \(t)") }
                    } else if t >= 0 && !isLive(column.target, t) {
                        fail("\(label) of \(name(table, row)) links to deleted \(column.target.name)#\(t)")
                    }
                }
            case let column as LinkListColumn:
                for row in 0..<Int32(table.rowCount) {
                    let targets = column.lists[Int(row)]
                    if !table.isLive(row) {
                        if !targets.isEmpty { fail("\(label) of deleted slot \(row) still lists \(targets)") }
                        continue
                    }
                    // A map's entry with no object holds -1.
                    for t in targets where !isLive(column.target, t) && !(property.isMap && t == -1) {
                        fail("\(label) of \(name(table, row)) lists deleted \(column.target.name)#\(t)")
                    }
                    if property.isSet && Set(targets).count != targets.count {
                        fail("\(label) of \(name(table, row)) is a set that holds an object twice: \(targets)")
                    }
                }
                if property.isMap {
                    let counts = (0..<column.lists.count).map { column.lists[$0].count }
                    checkMapKeys(label, table, column.keys, counts, fail)
                }
            default:
                fail("\(label) is a link property without a link column")
            }
        }
        for (p, property) in table.schema.properties.enumerated()
        where property.isList && property.isStored && property.type != .object {
            guard let column = table.columns[p] as? ValueListColumn else {
                fail("\(table.name).\(property.name) is a list of values without a list column")
                continue
            }
            for row in 0..<table.rowCount where !table.isLive(Int32(row)) && !column.lists[row].isEmpty {
                fail("\(table.name).\(property.name) of deleted slot \(row) still holds values")
            }
            for row in 0..<table.rowCount
            where property.isSet && Set(column.lists[row]).count != column.lists[row].count {
                fail("\(table.name).\(property.name) of slot \(row) is a set that holds a value twice")
            }
            guard property.isMap else { continue }
            let counts = (0..<column.lists.count).map { column.lists[$0].count }
            checkMapKeys("\(table.name).\(property.name)", table, column.keys, counts, fail)
        }
    }

    /// A map's keys: a list per row, as long as the row's values (`counts`), sorted and distinct.
    private static func checkMapKeys(
        _ label: String, _ table: Table, _ keys: ChunkedArray<[String]>, _ counts: [Int],
        _ fail: (@autoclosure () -> String) -> Void
    ) {
        if keys.count != counts.count {
            fail("\(label) has keys for \(keys.count) rows, values for \(counts.count)")
            return
        }
        for row in 0..<table.rowCount {
            if keys[row].count != counts[row] {
                fail("\(label) of slot \(row) has \(keys[row].count) keys for \(counts[row]) values")
            }
            if zip(keys[row], keys[row].dropFirst()).contains(where: { $0 >= $1 }) {
                fail("\(label) of slot \(row) is a map whose keys are not sorted and distinct: \(keys[row])")
            }
        }
    }

    private static func isLive(_ table: Table, _ row: Int32) -> Bool {
        row >= 0 && Int(row) < table.rowCount && table.isLive(row)
    }

    /// The forward links of every link property into a table, inverted: for each backlink column
    /// of the table, the source rows per target row, sorted.
    private static func invertedLinks(into table: Table) -> [ObjectIdentifier: [[Int32]]] {
        var result: [ObjectIdentifier: [[Int32]]] = [:]
        for b in table.incoming {
            var rows = Array(repeating: [Int32](), count: table.rowCount)
            let source = b.source
            func add(_ s: Int32, _ t: Int32) {
                if t >= 0 && Int(t) < rows.count { rows[Int(t)].append(s) }
            }
            switch source.columns[b.property] {
            case let c as LinkColumn:
                for s in source.liveRows { add(s, c.targets[Int(s)]) }
            case let c as LinkListColumn:
                for s in source.liveRows {
                    for t in c.lists[Int(s)] { add(s, t) }
                }
            default:
                break
            }
            result[ObjectIdentifier(b)] = rows.map { $0.sorted() }
        }
        return result
    }

    private static func checkBacklinks(_ store: Store, _ fail: (@autoclosure () -> String) -> Void) {
        for table in store.tables {
            let expected = invertedLinks(into: table)
            // The backlink index is the inverse of the forward links.
            for b in table.incoming {
                let property = b.source.schema.properties[b.property].name
                guard b.source.outgoing[b.property] === b else {
                    fail("\(b.source.name).\(property): the backlink column is not the one the link writes")
                    continue
                }
                let want = expected[ObjectIdentifier(b)]!
                for row in 0..<min(b.rows.count, want.count) where b.rows[row].sorted() != want[row] {
                    fail(
                        "backlinks of \(name(table, Int32(row))) from \(b.source.name).\(property) are "
                            + "\(b.rows[row].sorted()), the links say \(want[row])")
                }
            }
            // Every LinkingObjects reads the backlink column of its origin property (checked
            // above against the links).
            for (p, property) in table.schema.properties.enumerated() where property.type == .linkingObjects {
                let origin = property.objectType.flatMap { store.tablesByName[$0] }
                let originProperty = property.originProperty.flatMap { origin?.propertyIndex[$0] }
                guard let origin, let originProperty,
                    let source = table.linkingObjectsSources[p],
                    source === origin.outgoing[originProperty], table.incoming.contains(where: { $0 === source })
                else {
                    fail(
                        "\(table.name).\(property.name) does not read the backlinks of \(property.objectType ?? "?").\(property.originProperty ?? "?")"
                    )
                    continue
                }
                if let row = table.liveRows.first,
                    table.value(row, p) != .list(source.rows[Int(row)].map { .object(origin.key($0)) })
                {
                    fail("\(table.name).\(property.name) of \(name(table, row)) does not list its backlinks")
                }
            }
            // Every embedded object has exactly one parent, and it is live.
            if table.schema.isEmbedded {
                for row in 0..<table.rowCount {
                    let parents = table.incoming.reduce(0) { $0 + (expected[ObjectIdentifier($1)]?[row].count ?? 0) }
                    if table.isLive(Int32(row)) && parents != 1 {
                        fail("embedded \(table.name)#\(row) has \(parents) parents")
                    } else if !table.isLive(Int32(row)) && parents != 0 {
                        fail("deleted embedded \(table.name)#\(row) is still linked \(parents) times")
                    }
                }
            }
        }
    }

    private static func checkPrimaryKey(_ table: Table, _ fail: (@autoclosure () -> String) -> Void) {
        guard let pk = table.primaryKeyProperty else {
            if table.primaryKeyIndex != nil { fail("\(table.name) has a primary-key index but no primary key") }
            return
        }
        guard let index = table.primaryKeyIndex else {
            fail("\(table.name) has no primary-key index")
            return
        }
        var seen: [PropertyValue: Int32] = [:]
        for row in table.liveRows {
            let key = table.value(row, pk)
            if let other = seen[key] {
                fail("\(table.name): slots \(other) and \(row) both have primary key \(key)")
            }
            seen[key] = row
            if table.row(forPrimaryKey: key) != row {
                fail(
                    "\(table.name): the primary-key index maps \(key) to \(table.row(forPrimaryKey: key).map { "slot \($0)" } ?? "nothing"), not slot \(row)"
                )
            }
        }
        checkIntegerKeyLookups(table, keys: seen, fail)
        let entries = index.entries
        if entries.count != table.liveCount {
            fail("\(table.name): the primary-key index has \(entries.count) entries for \(table.liveCount) objects")
        }
        for (key, row) in entries {
            if !isLive(table, row) {
                fail("\(table.name): the primary-key index maps \(key) to deleted slot \(row)")
            } else if table.value(row, pk) != key {
                fail(
                    "\(table.name): the primary-key index maps \(key) to slot \(row), whose key is \(table.value(row, pk))"
                )
            }
        }
    }

    /// Integer keys are also looked up the way `object(ofType:forPrimaryKey:)` does (by
    /// arithmetic while rows follow keys): every key finds its row and generation, and keys
    /// near them that no object has find nothing.
    private static func checkIntegerKeyLookups(
        _ table: Table, keys: [PropertyValue: Int32], _ fail: (@autoclosure () -> String) -> Void
    ) {
        var ints: [Int64: Int32] = [:]
        for (key, row) in keys { if case .int(let k) = key { ints[k] = row } }
        guard let low = ints.keys.min(), let high = ints.keys.max() else { return }
        for (key, row) in ints {
            if let found = table.entry(forPrimaryKey: key), found != (row, table.generation(row)) {
                fail("\(table.name): looking up \(key) finds slot \(found.row) generation \(found.generation)")
            } else if table.entry(forPrimaryKey: key) == nil {
                fail("\(table.name): looking up \(key) finds nothing, not slot \(row)")
            }
        }
        for key in (low - 3)...(high + 3) where ints[key] == nil {
            if let found = table.entry(forPrimaryKey: key) {
                fail("\(table.name): looking up \(key), which no object has, finds slot \(found.row)")
            }
        }
    }

    private static func checkValueIndexes(_ table: Table, _ fail: (@autoclosure () -> String) -> Void) {
        for (p, property) in table.schema.properties.enumerated() where property.isIndexed && !property.isPrimaryKey {
            guard let index = table.valueIndexes[p] else {
                fail("\(table.name).\(property.name) is indexed but has no index")
                continue
            }
            var want: [PropertyValue: [Int32]] = [:]
            for row in table.liveRows { want[table.value(row, p), default: []].append(row) }
            var have: [PropertyValue: [Int32]] = [:]
            for fault in index.layoutFaults { fail("\(table.name).\(property.name): the index's store has \(fault)") }
            for (value, rows) in index.rows {
                if rows.isEmpty { fail("\(table.name).\(property.name): the index keeps an empty entry for \(value)") }
                if zip(rows, rows.dropFirst()).contains(where: { $0 >= $1 }) {
                    fail("\(table.name).\(property.name): the index's slots for \(value) are not ascending: \(rows)")
                }
                have[value] = rows.sorted()
            }
            have = have.filter { !$0.value.isEmpty }
            if have != want {
                for value in Set(have.keys).union(want.keys) where have[value] != want[value] {
                    fail(
                        "\(table.name).\(property.name): the index maps \(value) to slots \(have[value] ?? []), "
                            + "the data to \(want[value] ?? [])")
                }
            }
        }
        for p in table.valueIndexes.keys where !table.schema.properties[p].isIndexed {
            fail("\(table.name).\(table.schema.properties[p].name) has an index but is not indexed")
        }
        // Full-text indexes are built on first use: each one built so far equals a rebuild.
        for difference in table.fullTextIndexDifferences() { fail(difference) }
    }
}

/// Everything a store holds, down to slot generations, free lists and indexes, to check that a
/// write that rolled back left the store exactly as it was. Orders that carry no meaning (rows of
/// one secondary-index value, backlinks of one target) are sorted.
///
/// One thing may change: the generation of a free slot goes up when the creation of an object
/// in it is rolled back, so that the object's key never resolves again. It never goes down.
package struct StoreSnapshot: Equatable {
    struct TableState: Equatable {
        var name: String
        var liveCount: Int
        var isLive: [Bool]
        var generations: [UInt32]
        var freeRows: [Int32]
        var columns: [[PropertyValue]]
        var primaryKeys: [PropertyValue: Int32]
        var valueIndexes: [Int: [PropertyValue: [Int32]]]
        var backlinks: [[[Int32]]]
    }

    var version: UInt64
    var isInWrite: Bool
    var tables: [TableState]

    package init(_ store: Store) {
        version = store.version
        isInWrite = store.isInWrite
        tables = store.tables.map { table in
            table.finishValueIndexBuild()
            return TableState(
                name: table.name,
                liveCount: table.liveCount,
                isLive: (0..<Int32(table.rowCount)).map { table.isLive($0) },
                generations: (0..<Int32(table.rowCount)).map { table.generation($0) },
                freeRows: table.freeRows,
                columns: table.columns.map { column in
                    column.map { c in (0..<c.count).map { c.value(at: $0) } } ?? []
                },
                primaryKeys: Dictionary(
                    (table.primaryKeyIndex?.entries ?? []).map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a }),
                valueIndexes: table.valueIndexes.mapValues { index in
                    index.rows.mapValues { $0.sorted() }
                },
                backlinks: table.incoming.map { b in b.rows.map { $0.sorted() } })
        }
    }

    /// How `other` differs from this snapshot, one line per difference.
    package func differences(from other: StoreSnapshot) -> [String] {
        var lines: [String] = []
        if version != other.version { lines.append("version \(version) became \(other.version)") }
        if isInWrite != other.isInWrite { lines.append("a write is \(other.isInWrite ? "still" : "no longer") open") }
        for (a, b) in zip(tables, other.tables) where a != b {
            if a.liveCount != b.liveCount { lines.append("\(a.name): \(a.liveCount) objects became \(b.liveCount)") }
            if a.isLive != b.isLive { lines.append("\(a.name): live slots \(a.isLive) became \(b.isLive)") }
            if a.generations.count != b.generations.count
                || zip(a.generations, b.generations).enumerated().contains(where: { i, g in
                    a.isLive[i] ? g.0 != g.1 : g.0 > g.1
                })
            {
                lines.append("\(a.name): generations \(a.generations) became \(b.generations)")
            }
            if a.freeRows != b.freeRows { lines.append("\(a.name): free slots \(a.freeRows) became \(b.freeRows)") }
            for (p, (x, y)) in zip(a.columns, b.columns).enumerated() where x != y {
                lines.append("\(a.name) column \(p): \(x) became \(y)")
            }
            if a.primaryKeys != b.primaryKeys {
                lines.append("\(a.name): primary-key index \(a.primaryKeys) became \(b.primaryKeys)")
            }
            if a.valueIndexes != b.valueIndexes {
                lines.append("\(a.name): secondary indexes \(a.valueIndexes) became \(b.valueIndexes)")
            }
            if a.backlinks != b.backlinks { lines.append("\(a.name): backlinks \(a.backlinks) became \(b.backlinks)") }
        }
        return lines
    }
}
