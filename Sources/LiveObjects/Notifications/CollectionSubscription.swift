/// A subscription to a collection: query results (filtered, sorted) kept incrementally, or a
/// list / `LinkingObjects` diffed element by element.
final class CollectionSubscription<Element: Object>: Subscription {
    enum Source {
        /// Filtered and sorted results: maintained incrementally from the changed rows.
        case query(BoundQuery?, RowSorter?)
        /// Results with distinct, limit or offset: re-evaluated on relevant commits.
        case reevaluated(QuerySpec)
        /// A list or `LinkingObjects` of an object.
        case list(owner: Table, row: Int32, generation: UInt32, property: Int)
    }

    // Unowned: the store keeps its subscriptions; a strong reference back would leak both.
    unowned(unsafe) let store: Store
    let table: Table
    let source: Source
    let continuation: AsyncStream<CollectionChange<Element>>.Continuation
    /// Property paths whose changes count, from the key-path filter; nil observes every
    /// property of the objects and of the objects they link to directly.
    let observedPaths: [BoundPath]
    let filtered: Bool
    /// The tables whose changes may matter.
    let observedTables: Set<Int>

    private var rows = RowList()
    /// The sort keys each member row had when it was placed (to find it again by binary search
    /// after its values changed).
    private var keysByRow: [Int32: [RowSorter.Key]] = [:]
    private var members: [Bool] = []

    init(
        store: Store, table: Table, source: Source, observedPaths: [BoundPath], filtered: Bool,
        continuation: AsyncStream<CollectionChange<Element>>.Continuation
    ) {
        self.store = store
        self.table = table
        self.source = source
        self.continuation = continuation
        self.observedPaths = observedPaths
        self.filtered = filtered
        var tables: Set<Int> = [table.index]
        for path in observedPaths {
            for step in path.steps {
                tables.insert(step.table.index)
                if let target = step.target { tables.insert(target.index) }
            }
        }
        if case .list(let owner, _, _, _) = source { tables.insert(owner.index) }
        self.observedTables = tables
        super.init(token: store.nextSubscriptionToken())
        observedMask = Subscription.mask(tables)
        computeAll()
    }

    // MARK: Full evaluation

    private func currentRows() -> [Int32] {
        switch source {
        case .query(let query, let sorter):
            var rows = query?.filter(nil, table: table) ?? table.liveRows
            if let sorter { rows = sorter.sort(rows) }
            return rows
        case .reevaluated(let spec):
            return spec.evaluate(table: table, store: store)
        case .list(let owner, let row, let generation, let property):
            guard owner.isValid(row, generation: generation) else { return [] }
            return BoundPath.targets(
                BoundPath.Step(table: owner, property: property, target: table, isToMany: true), row)
        }
    }

    private func computeAll() {
        rows = RowList(currentRows())
        keysByRow = [:]
        if case .query(_, let sorter?) = source {
            for row in rows { keysByRow[row] = sorter.keys(for: row) }
        }
        members = Array(repeating: false, count: table.rowCount)
        for row in rows { members[Int(row)] = true }
    }

    private func snapshot() -> FrozenResults<Element> {
        FrozenResults(frozen: store.frozenState(), tableIndex: table.index, rows: rows)
    }

    override func deliverInitial() {
        computeAll()
        continuation.yield(
            CollectionChange(
                version: store.version, isInitial: true, deletions: [], insertions: [], modifications: [],
                modificationsInNewIndices: [], moves: [], snapshot: snapshot()))
    }

    override func finish() { continuation.finish() }

    // MARK: Commits

    override func commit(_ context: CommitContext, silent: Bool) {
        guard !observedTables.isDisjoint(with: context.touchedTables) else { return }
        let changed = changedRows(context)
        let listChanged: Bool
        if case .list(let owner, let row, _, let property) = source {
            listChanged = context.modified[owner.index]?[row]?.contains(property) == true
                || context.deleted[owner.index]?[row] != nil
        } else {
            listChanged = false
        }
        guard !changed.isEmpty || listChanged || !(context.inserted[table.index] ?? []).isEmpty
            || !(context.deleted[table.index] ?? [:]).isEmpty
        else { return }
        let change: CollectionChange<Element>?
        switch source {
        case .query(let query, let sorter):
            change = incremental(context, changed, query, sorter)
        case .reevaluated, .list:
            change = diffed(context, changed)
        }
        if let change, !silent { continuation.yield(change) }
    }

    /// Rows of this table whose observed properties changed, directly or through links.
    private func changedRows(_ context: CommitContext) -> Set<Int32> {
        var result = Set<Int32>()
        if let modified = context.modified[table.index] {
            for (row, properties) in modified where isObserved(properties, in: table, depth: 0) {
                result.insert(row)
            }
        }
        // Changes further along the observed paths map back to the rows that reach them.
        for path in observedPaths where path.steps.count > 1 || path.steps.first?.target != nil {
            var level: [Int32] = []
            for k in stride(from: path.steps.count - 1, through: 0, by: -1) {
                let step = path.steps[k]
                if let target = step.target, let modified = context.modified[target.index] {
                    let deeper = k + 1 < path.steps.count ? path.steps[k + 1].property : nil
                    for (row, properties) in modified where deeper == nil || properties.contains(deeper!) || !filtered {
                        level.append(row)
                    }
                }
                if let target = step.target, let deleted = context.deleted[target.index] {
                    level.append(contentsOf: deleted.keys)
                }
                level = Self.reverse(step, level)
            }
            result.formUnion(level)
        }
        return result
    }

    private func isObserved(_ properties: Set<Int>, in table: Table, depth: Int) -> Bool {
        guard filtered else { return true }
        return observedPaths.contains { path in
            path.steps.first.map { properties.contains($0.property) } ?? false
        }
    }

    /// The rows of `step.table` that lead through `step` to any of `targets`.
    private static func reverse(_ step: BoundPath.Step, _ targets: [Int32]) -> [Int32] {
        guard !targets.isEmpty, let target = step.target else { return [] }
        let property = step.table.schema.properties[step.property]
        if property.type == .linkingObjects {
            // The targets are origin objects; their links lead back to this table.
            guard let backlinks = step.table.linkingObjectsSources[step.property] else { return [] }
            var rows: [Int32] = []
            for origin in targets where Int(origin) < target.rowCount && target.isLive(origin) {
                rows += Store.linkRows(target.columns[backlinks.property]!.value(at: Int(origin)))
            }
            return rows
        }
        guard let backlinks = step.table.outgoing[step.property] else { return [] }
        var rows: [Int32] = []
        for t in targets where Int(t) < backlinks.rows.count { rows += backlinks.rows[Int(t)] }
        return rows
    }

    /// Filtered and sorted results: re-test and re-position only the changed rows.
    private func incremental(
        _ context: CommitContext, _ changed: Set<Int32>, _ query: BoundQuery?, _ sorter: RowSorter?
    ) -> CollectionChange<Element>? {
        var candidates = changed
        candidates.formUnion(context.inserted[table.index] ?? [])
        candidates.formUnion((context.deleted[table.index] ?? [:]).keys)
        if members.count < table.rowCount {
            members.append(contentsOf: repeatElement(false, count: table.rowCount - members.count))
        }
        var removals: [(index: Int, row: Int32)] = []
        var additions: [(row: Int32, keys: [RowSorter.Key])] = []
        var stayed: [Int32] = []
        var movedRows = Set<Int32>()
        for row in candidates {
            let wasMember = Int(row) < members.count && members[Int(row)]
            let isLive = table.isLive(row) && context.deleted[table.index]?[row] == nil
            let isMember = isLive && (query?.matches(row) ?? true)
            if wasMember {
                let index = locate(row, sorter)
                if !isMember {
                    removals.append((index, row))
                } else if let sorter {
                    let keys = sorter.keys(for: row)
                    if sorter.compare(keys, row, keysByRow[row]!, row) != 0 {
                        removals.append((index, row))
                        additions.append((row, keys))
                        movedRows.insert(row)
                    } else {
                        stayed.append(row)
                    }
                } else {
                    stayed.append(row)
                }
            } else if isMember {
                additions.append((row, sorter?.keys(for: row) ?? []))
            }
        }
        guard !removals.isEmpty || !additions.isEmpty || !stayed.isEmpty else { return nil }
        // Old indices of the rows that stay, for modifications.
        let stayedOld = Dictionary(uniqueKeysWithValues: stayed.map { ($0, locate($0, sorter)) })
        let oldIndexOfMoved = Dictionary(uniqueKeysWithValues: removals.filter { movedRows.contains($0.row) }.map { ($0.row, $0.index) })
        // Remove, highest index first.
        for removal in removals.sorted(by: { $0.index > $1.index }) {
            rows.remove(at: removal.index)
            keysByRow[removal.row] = nil
            members[Int(removal.row)] = false
        }
        // Insert at sorted positions.
        for addition in additions {
            let index = insertionIndex(addition.row, addition.keys, sorter)
            rows.insert(addition.row, at: index)
            if sorter != nil { keysByRow[addition.row] = addition.keys }
            members[Int(addition.row)] = true
        }
        var deletions: [Int] = []
        var insertions: [Int] = []
        var moves: [CollectionChange<Element>.Move] = []
        for removal in removals where !movedRows.contains(removal.row) { deletions.append(removal.index) }
        for addition in additions {
            let index = locate(addition.row, sorter)
            if let from = oldIndexOfMoved[addition.row] {
                moves.append(.init(from: from, to: index))
            } else {
                insertions.append(index)
            }
        }
        var modifications: [(Int, Int)] = []
        for row in stayed where changed.contains(row) {
            modifications.append((stayedOld[row]!, locate(row, sorter)))
        }
        for move in moves where changed.contains(rows[move.to]) { modifications.append((move.from, move.to)) }
        modifications.sort { $0.0 < $1.0 }
        guard !deletions.isEmpty || !insertions.isEmpty || !moves.isEmpty || !modifications.isEmpty else {
            return nil
        }
        return CollectionChange(
            version: context.changes.version, isInitial: false, deletions: deletions.sorted(),
            insertions: insertions.sorted(), modifications: modifications.map(\.0),
            modificationsInNewIndices: modifications.map(\.1), moves: moves.sorted { $0.to < $1.to },
            snapshot: FrozenResults(frozen: context.frozenState(), tableIndex: table.index, rows: rows))
    }

    /// The index of a member row: binary search by its stored sort keys (or by slot).
    private func locate(_ row: Int32, _ sorter: RowSorter?) -> Int {
        insertionIndex(row, keysByRow[row] ?? [], sorter)
    }

    /// Where a row with these keys belongs (its index, if it is a member).
    private func insertionIndex(_ row: Int32, _ keys: [RowSorter.Key], _ sorter: RowSorter?) -> Int {
        if let sorter {
            return rows.partitionPoint { other in sorter.compare(keysByRow[other]!, other, keys, row) < 0 }
        }
        return rows.partitionPoint { $0 < row }
    }

    /// Lists, `LinkingObjects` and sliced results: compare the old and new keys.
    private func diffed(_ context: CommitContext, _ changed: Set<Int32>) -> CollectionChange<Element>? {
        let old = Array(rows)
        let new = currentRows()
        let difference = new.difference(from: old).inferringMoves()
        var deletions: [Int] = []
        var insertions: [Int] = []
        var moves: [CollectionChange<Element>.Move] = []
        for change in difference {
            switch change {
            case .remove(let offset, _, let associated):
                if associated == nil { deletions.append(offset) }
            case .insert(let offset, _, let associated):
                if let from = associated { moves.append(.init(from: from, to: offset)) } else { insertions.append(offset) }
            }
        }
        // Elements that stayed in place (not removed or inserted) and changed.
        var removedOld = Set<Int>()
        var insertedNew = Set<Int>()
        for change in difference {
            switch change {
            case .remove(let offset, _, _): removedOld.insert(offset)
            case .insert(let offset, _, _): insertedNew.insert(offset)
            }
        }
        let keptOld = old.indices.filter { !removedOld.contains($0) }
        let keptNew = new.indices.filter { !insertedNew.contains($0) }
        var modifications: [(Int, Int)] = []
        for (o, n) in zip(keptOld, keptNew) where changed.contains(old[o]) { modifications.append((o, n)) }
        for move in moves where changed.contains(new[move.to]) { modifications.append((move.from, move.to)) }
        modifications.sort { $0.0 < $1.0 }
        rows = RowList(new)
        members = Array(repeating: false, count: table.rowCount)
        for row in rows { members[Int(row)] = true }
        guard !deletions.isEmpty || !insertions.isEmpty || !moves.isEmpty || !modifications.isEmpty else {
            return nil
        }
        return CollectionChange(
            version: context.changes.version, isInitial: false, deletions: deletions.sorted(),
            insertions: insertions.sorted(), modifications: modifications.map(\.0),
            modificationsInNewIndices: modifications.map(\.1), moves: moves.sorted { $0.to < $1.to },
            snapshot: FrozenResults(frozen: context.frozenState(), tableIndex: table.index, rows: rows))
    }
}
