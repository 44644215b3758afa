extension Store {
    /// Deletes objects, applying delete rules: embedded children and `cascade` targets are deleted
    /// too, `deny` links refuse the deletion, and every other link to a deleted object is removed.
    ///
    /// Either everything is deleted or, when a rule refuses, nothing is.
    package func delete(_ roots: [(Table, Int32)]) throws(LiveObjectsError) {
        try requireWrite(roots.first?.0)
        // 1. Everything that goes: the roots, their embedded children and cascade targets.
        var doomed = Set<RowID>()
        var order: [(Table, Int32)] = []
        var stack = roots
        while let (table, row) = stack.popLast() {
            guard table.isLive(row), doomed.insert(RowID(table, row)).inserted else { continue }
            order.append((table, row))
            for (p, property) in table.schema.properties.enumerated() where property.type == .object {
                let target = tablesByName[property.objectType!]!
                guard target.schema.isEmbedded || property.deleteRule == .cascade else { continue }
                for t in Self.linkRows(table.column(p).value(at: Int(row))) {
                    stack.append((target, t))
                }
            }
        }
        // 2. A deny rule from outside the doomed set refuses the whole deletion.
        for (table, row) in order {
            for backlinks in table.incoming
            where backlinks.source.schema.properties[backlinks.property].deleteRule == .deny {
                for source in backlinks.rows[Int(row)]
                where !doomed.contains(RowID(backlinks.source, source)) {
                    let property = backlinks.source.schema.properties[backlinks.property]
                    throw LiveObjectsError(
                        .deleteDenied,
                        "\(backlinks.source.name).\(property.name) still links to it and denies its deletion",
                        objectType: table.name, property: property.name,
                        primaryKey: table.primaryKey(of: row))
                }
            }
        }
        // 3. Remove every link into and out of the doomed rows, then the rows.
        for (table, row) in order {
            for backlinks in table.incoming {
                let source = backlinks.source
                let p = backlinks.property
                for s in Set(backlinks.rows[Int(row)]) {
                    if let list = source.columns[p] as? LinkListColumn, list.isMap {
                        // A map keeps the key of a deleted object, with nil as its value.
                        for i in list.lists[Int(s)].indices where list.lists[Int(s)][i] == row {
                            listReplace(.list([.string(list.keys[Int(s)][i]), .null]), source, s, p, at: i)
                        }
                    } else if let list = source.columns[p] as? LinkListColumn {
                        for i in list.lists[Int(s)].indices.reversed() where list.lists[Int(s)][i] == row {
                            listRemove(source, s, p, at: i)
                        }
                    } else {
                        setValue(.null, source, s, p)
                    }
                }
            }
            for (p, property) in table.schema.properties.enumerated() where property.type == .object {
                if let list = table.columns[p] as? LinkListColumn {
                    for i in list.lists[Int(row)].indices.reversed() { listRemove(table, row, p, at: i) }
                } else {
                    setValue(.null, table, row, p)
                }
            }
        }
        clearMixedLinks(to: doomed)
        for (table, row) in order { removeRow(table, row) }
    }

    /// Deletes every object of a table.
    package func deleteAll(_ table: Table) throws(LiveObjectsError) {
        try delete(table.liveRows.map { (table, $0) })
    }

    /// Deletes every object of every table.
    package func deleteAll() throws(LiveObjectsError) {
        try requireWrite()
        try delete(tables.flatMap { table in table.liveRows.map { (table, $0) } })
    }
}

/// A row of a table, hashable.
package struct RowID: Hashable {
    package let table: Int
    package let row: Int32
    package init(_ table: Table, _ row: Int32) {
        self.table = table.index
        self.row = row
    }
    package init(table: Int, row: Int32) {
        self.table = table
        self.row = row
    }
}
