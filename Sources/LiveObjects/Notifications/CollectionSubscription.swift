import LiveObjectsStore

/// A subscription to a collection: query results (filtered, sorted) kept incrementally, or a
/// list / `LinkingObjects` diffed element by element.
final class CollectionSubscription<Element: Object>: Subscription {
    let token: SubscriptionToken
    let cancellation = CancellationFlag()
    let observedMask: UInt64
    enum Source {
        /// Filtered and sorted results: maintained incrementally from the changed rows.
        case query(BoundQuery?, RowSorter?)
        /// Results with distinct, limit or offset: re-evaluated on relevant commits.
        case reevaluated(QuerySpec)
        /// A list or `LinkingObjects` of an object.
        case list(owner: Table, row: Int32, generation: UInt32, property: Int)
    }

    // Unowned: the store's subscription registry keeps its subscriptions; a strong reference back would leak both.
    unowned(unsafe) let store: Store
    let table: Table
    let source: Source
    let continuation: ChangeStream<CollectionChange<Element>>.Continuation
    /// Property paths whose changes report an element as modified: the key-path filter's, or
    /// (unfiltered) one path per property, one link deep.
    let observedPaths: [BoundPath]
    /// Property paths that decide membership and order (predicate, sort, distinct): their
    /// changes make a row a candidate for re-testing, but do not make it modified.
    let membershipPaths: [BoundPath]
    /// Whether `observedPaths` come from a key-path filter.
    let filtered: Bool
    /// The tables whose changes may matter.
    let observedTables: Set<Int>

    private var rows = RowList()
    /// The store's mutation count when the rows were last evaluated in full (nil after a failure).
    private var computedAt: UInt64?
    /// The sort keys each member row had when it was placed (to find it again by binary search
    /// after its values changed): `keyWidth` keys per member, those of row `r` from
    /// `keySlots[r] * keyWidth`, so that a probe of the search reads two arrays rather than a
    /// dictionary's bucket and an array of the row's own. A member that leaves frees its place
    /// for the next one (`freeKeySlots`): the keys take room for the members, and 4 bytes per
    /// row of the table for `keySlots`.
    private var placedKeys: [RowSorter.Key] = []
    /// For each row of the table, the place of its keys in `placedKeys` (in units of
    /// `keyWidth`), or -1 when it is not a member.
    private var keySlots: [Int32] = []
    /// Places in `placedKeys` that members left.
    private var freeKeySlots: [Int32] = []
    /// The number of sort fields (0 for unsorted results).
    private let keyWidth: Int
    private var members: [Bool] = []

    init(
        store: Store, table: Table, source: Source, observedPaths: [BoundPath], membershipPaths: [BoundPath],
        filtered: Bool, continuation: ChangeStream<CollectionChange<Element>>.Continuation
    ) {
        self.store = store
        self.table = table
        self.source = source
        self.continuation = continuation
        self.observedPaths = observedPaths
        self.membershipPaths = membershipPaths
        self.filtered = filtered
        if case .query(_, let sorter?) = source { keyWidth = sorter.fields.count } else { keyWidth = 0 }
        var tables: Set<Int> = [table.index]
        for path in observedPaths + membershipPaths {
            for step in path.steps {
                tables.insert(step.table.index)
                if let target = step.target { tables.insert(target.index) }
            }
        }
        if case .list(let owner, _, _, _) = source { tables.insert(owner.index) }
        self.observedTables = tables
        token = store.nextSubscriptionToken()
        observedMask = tableMask(tables)
        computeAll()
    }

    // MARK: Full evaluation

    /// The rows as they are now.
    ///
    /// - Throws: `limitExceeded` (or `cancelled`) when the query's evaluation was stopped
    ///   (``Realm/Configuration/maximumQueryWork``).
    private func currentRows() throws(LiveObjectsError) -> [Int32] {
        switch source {
        case .query(let query, let sorter):
            var rows = table.liveRows
            if let query {
                do {
                    rows = try query.filter(nil, table: table, budget: store.queries.maximumWork)
                } catch {
                    throw error.error(query: nil, table: table)
                }
            }
            if let sorter { rows = sorter.sort(rows) }
            return rows
        case .reevaluated(let spec):
            return try spec.evaluate(table: table, store: store)
        case .list(let owner, let row, let generation, let property):
            guard owner.isValid(row, generation: generation) else { return [] }
            return BoundPath.targets(
                BoundPath.Step(table: owner, property: property, target: table, isToMany: true), row)
        }
    }

    /// Ends the subscription whose query's evaluation was stopped: its sequence ends, and
    /// `error`, when given, is thrown by the enclosing realm call.
    private func stop(recording error: LiveObjectsError?) {
        if let error { store.recordError(error) }
        cancellation.cancel()
        continuation.finish()
    }

    private func computeAll() {
        let current: [Int32]
        do {
            current = try currentRows()
            computedAt = store.mutationCount
        } catch {
            // When subscribing: the enclosing realm call throws, as past the most subscriptions.
            stop(recording: error)
            current = []
            computedAt = nil
        }
        rows = RowList(current)
        placedKeys = []
        keySlots = []
        freeKeySlots = []
        if case .query(_, let sorter?) = source, keyWidth > 0 {
            keySlots = Array(repeating: -1, count: table.rowCount)
            // Room for an eighth more members: the first rows added after subscribing would
            // otherwise copy every key into a larger array, in one update's time.
            placedKeys.reserveCapacity((rows.count + rows.count / 8 + 64) * keyWidth)
            for row in rows { place(row, sorter.keys(for: row)) }
        }
        members = Array(repeating: false, count: table.rowCount)
        for row in rows { members[Int(row)] = true }
    }

    private func snapshot() -> FrozenResults<Element> {
        FrozenResults(frozen: store.frozenState(), tableIndex: table.index, rows: rows)
    }

    func deliverInitial() {
        // Evaluated when subscribing: again only if the store changed since (a sort of many rows
        // is not repeated for nothing).
        if computedAt != store.mutationCount { computeAll() }
        continuation.yield(
            CollectionChange(
                version: store.version, isInitial: true, deletions: [], insertions: [], modifications: [],
                modificationsInNewIndices: [], moves: [], snapshot: snapshot()),
            version: store.version)
    }

    func finish() { continuation.finish() }

    // MARK: Commits

    func commit(_ context: CommitContext, silent: Bool) {
        guard !cancellation.isCancelled, !observedTables.isDisjoint(with: context.touchedTables) else { return }
        let observed = observedRows(context)
        let membership = Self.rowsReaching(membershipPaths, context)
        let listChanged: Bool
        if case .list(let owner, let row, _, let property) = source {
            listChanged =
                context.modified[owner.index]?[row]?.contains(property) == true
                || context.deleted[owner.index]?[row] != nil
        } else {
            listChanged = false
        }
        guard
            !observed.isEmpty || !membership.isEmpty || listChanged
                || !(context.inserted[table.index] ?? []).isEmpty || !(context.deleted[table.index] ?? [:]).isEmpty
        else { return }
        let change: CollectionChange<Element>?
        switch source {
        case .query(let query, let sorter):
            change = incremental(context, observed: observed, candidates: observed.union(membership), query, sorter)
        case .reevaluated, .list:
            change = diffed(context, observed)
        }
        if let change, !silent { continuation.yield(change, version: change.version) }
    }

    /// Rows of this table whose observed properties changed: reported as modified.
    private func observedRows(_ context: CommitContext) -> Set<Int32> {
        guard !filtered else { return Self.rowsReaching(observedPaths, context) }
        // Every property of the row, and every property of the objects it links to directly.
        var result = Set(context.modified[table.index]?.keys ?? [:].keys)
        for path in observedPaths {
            guard let step = path.steps.first, let target = step.target,
                let modified = context.modified[target.index], !modified.isEmpty
            else { continue }
            result.formUnion(Self.reverse(step, Array(modified.keys)))
        }
        return result
    }

    /// Rows of this table from which one of `paths` reaches an object whose property at that
    /// step of the path changed (`owner.name`: rows whose `owner` changed, and rows whose
    /// owner's `name` changed).
    private static func rowsReaching(_ paths: [BoundPath], _ context: CommitContext) -> Set<Int32> {
        var result = Set<Int32>()
        for path in paths {
            var level = Set<Int32>()
            for k in stride(from: path.steps.count - 1, through: 0, by: -1) {
                let step = path.steps[k]
                if !level.isEmpty { level = Set(reverse(step, Array(level))) }
                if let modified = context.modified[step.table.index] {
                    for (row, properties) in modified where properties.contains(step.property) { level.insert(row) }
                }
            }
            result.formUnion(level)
        }
        return result
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
                rows += Store.linkRows(target.column(backlinks.property).value(at: Int(origin)))
            }
            return rows
        }
        guard let backlinks = step.table.outgoing[step.property] else { return [] }
        var rows: [Int32] = []
        for t in targets where Int(t) < backlinks.rows.count { rows += backlinks.rows[Int(t)] }
        return rows
    }

    /// Takes rows out of the results (their old indices), in place or, in `bulk`, in one pass
    /// that makes room for `adding` rows to come.
    private func removeRows(_ removals: [(index: Int, row: Int32)], bulk: Bool, adding: Int) {
        let ordered = removals.sorted { $0.index < $1.index }
        if bulk {
            let current = Array(rows)
            var kept: [Int32] = []
            kept.reserveCapacity(current.count - removals.count + adding)
            var start = 0
            for removal in ordered {
                kept.append(contentsOf: current[start..<removal.index])
                start = removal.index + 1
            }
            kept.append(contentsOf: current[start...])
            rows = RowList(kept)
        } else {
            for removal in ordered.reversed() { rows.remove(at: removal.index) }
        }
        for removal in removals {
            members[Int(removal.row)] = false
            if keyWidth > 0, Int(removal.row) < keySlots.count, keySlots[Int(removal.row)] >= 0 {
                freeKeySlots.append(keySlots[Int(removal.row)])
                keySlots[Int(removal.row)] = -1
            }
        }
    }

    /// Keeps a member row's sort keys: in its place of `placedKeys` if it has one, else in a
    /// place a member left, else in a new one.
    private func place(_ row: Int32, _ keys: [RowSorter.Key]) {
        if Int(row) >= keySlots.count {
            keySlots.append(contentsOf: repeatElement(-1, count: Int(row) + 1 - keySlots.count))
        }
        var slot = keySlots[Int(row)]
        if slot < 0 {
            if let free = freeKeySlots.popLast() {
                slot = free
            } else {
                slot = Int32(placedKeys.count / keyWidth)
                placedKeys.append(contentsOf: repeatElement(.null, count: keyWidth))
            }
            keySlots[Int(row)] = slot
        }
        let base = Int(slot) * keyWidth
        for (f, key) in keys.enumerated() { placedKeys[base + f] = key }
    }

    /// Where a member row's keys start in `placedKeys`.
    @inline(__always)
    private func keyBase(_ row: Int32, _ slots: UnsafeBufferPointer<Int32>) -> Int {
        Int(slots[Int(row)]) * keyWidth
    }

    /// Puts rows into the results at their sorted places, in place or, in `bulk`, by merging
    /// the ordered additions with the runs of rows between them. Returns the new index of each
    /// addition (in `additions`' order): taken in sorted order, each goes in after the earlier
    /// ones, so the index it is put in at is its index afterwards.
    private func insertRows(_ additions: [(row: Int32, keys: [RowSorter.Key])], _ sorter: RowSorter?, bulk: Bool)
        -> [Int]
    {
        let order = additions.indices.sorted { i, j in
            let (a, b) = (additions[i], additions[j])
            return sorter.map { $0.compare(a.keys, a.row, b.keys, b.row) < 0 } ?? (a.row < b.row)
        }
        var indices = [Int](repeating: 0, count: additions.count)
        if bulk {
            let current = Array(rows)
            var merged: [Int32] = []
            merged.reserveCapacity(current.count + additions.count)
            var start = 0
            for i in order {
                let index = insertionIndex(additions[i].row, additions[i].keys, sorter)
                merged.append(contentsOf: current[start..<index])
                indices[i] = merged.count
                merged.append(additions[i].row)
                start = index
            }
            merged.append(contentsOf: current[start...])
            rows = RowList(merged)
        } else {
            for i in order {
                let index = insertionIndex(additions[i].row, additions[i].keys, sorter)
                rows.insert(additions[i].row, at: index)
                indices[i] = index
                // The next addition's search compares with this row.
                if sorter != nil { place(additions[i].row, additions[i].keys) }
            }
        }
        for addition in additions {
            if bulk && sorter != nil { place(addition.row, addition.keys) }
            members[Int(addition.row)] = true
        }
        return indices
    }

    /// Filtered and sorted results: re-test and re-position only the candidate rows (rows whose
    /// observed or membership paths changed, inserted and deleted rows).
    private func incremental(
        _ context: CommitContext, observed: Set<Int32>, candidates changed: Set<Int32>, _ query: BoundQuery?,
        _ sorter: RowSorter?
    ) -> CollectionChange<Element>? {
        var candidates = changed
        candidates.formUnion((context.inserted[table.index] ?? []).lazy.map { Int32(bitPattern: $0.row) })
        candidates.formUnion((context.deleted[table.index] ?? [:]).keys)
        if members.count < table.rowCount {
            members.append(contentsOf: repeatElement(false, count: table.rowCount - members.count))
        }
        var removals: [(index: Int, row: Int32)] = []
        var additions: [(row: Int32, keys: [RowSorter.Key])] = []
        var stayed: [Int32] = []
        // Old indices of the rows that stay (`stayed`'s order), for modifications (found once,
        // before the row list changes).
        var stayedOld: [Int] = []
        var resorted = Set<Int32>()
        // Unsorted results keep their rows in ascending order: the candidates are taken in that
        // order too, and the old indices of all of them found in one pass over the row list.
        let ordered = sorter == nil ? Self.ascending(candidates, below: table.rowCount) : Array(candidates)
        let oldIndices = sorter == nil ? rows.positions(ofAscending: ordered) : nil
        // One evaluation for all the candidates: its memos serve them all, within one budget.
        var evaluation = query?.makeContext(budget: store.queries.maximumWork)
        for (i, row) in ordered.enumerated() {
            let wasMember = Int(row) < members.count && members[Int(row)]
            let isLive = table.isLive(row) && context.deleted[table.index]?[row] == nil
            var isMember = isLive
            if isLive, let query, evaluation != nil { isMember = query.matches(row, &evaluation!) }
            if evaluation?.stop != nil {
                // After a commit, nothing can throw: the sequence ends.
                stop(recording: nil)
                return nil
            }
            if wasMember {
                let index = oldIndices.map { $0[i] } ?? locate(row, sorter)
                if !isMember {
                    removals.append((index, row))
                } else if let sorter {
                    let keys = sorter.keys(for: row)
                    if compare(placedAt: row, keys, row, sorter) != 0 {
                        removals.append((index, row))
                        additions.append((row, keys))
                        resorted.insert(row)
                    } else {
                        stayed.append(row)
                        stayedOld.append(index)
                    }
                } else {
                    stayed.append(row)
                    stayedOld.append(index)
                }
            } else if isMember {
                additions.append((row, sorter?.keys(for: row) ?? []))
            }
        }
        guard !removals.isEmpty || !additions.isEmpty || !stayed.isEmpty else { return nil }
        let oldIndexOfResorted = Dictionary(
            uniqueKeysWithValues: removals.filter { resorted.contains($0.row) }.map { ($0.row, $0.index) })
        // A few changes go into the row list in place (O(chunk) each, and a snapshot shares the
        // untouched chunks); many rebuild it in one pass, so that bulk changes stay linear.
        let bulk = removals.count + additions.count > Self.bulkChangeCount
        if !removals.isEmpty { removeRows(removals, bulk: bulk, adding: additions.count) }
        let addedAt = additions.isEmpty ? [] : insertRows(additions, sorter, bulk: bulk)
        var deletions: [Int] = []
        var insertions: [Int] = []
        var modifications: [(Int, Int)] = []
        for removal in removals where !resorted.contains(removal.row) { deletions.append(removal.index) }
        var resortedPositions: [(row: Int32, from: Int, to: Int)] = []
        var addedIndices: [Int] = []
        for (addition, index) in zip(additions, addedAt) {
            addedIndices.append(index)
            if let from = oldIndexOfResorted[addition.row] {
                resortedPositions.append((addition.row, from, index))
            } else {
                insertions.append(index)
            }
        }
        // A re-sorted row is a move only if its order changed relative to another row that
        // stays; otherwise it kept its place (and may be modified).
        let moved = Self.reordered(
            resortedPositions, removedIndices: removals.map(\.index).sorted(), addedIndices: addedIndices.sorted())
        var moves: [CollectionChange<Element>.Move] = []
        for position in resortedPositions {
            if moved.contains(position.row) {
                moves.append(.init(from: position.from, to: position.to))
            }
            if observed.contains(position.row) { modifications.append((position.from, position.to)) }
        }
        // Without rows added or removed, a row that stays keeps its index.
        let unmoved = removals.isEmpty && additions.isEmpty
        for (row, old) in zip(stayed, stayedOld) where observed.contains(row) {
            modifications.append((old, unmoved ? old : locate(row, sorter)))
        }
        modifications.sort { $0.0 < $1.0 }
        return change(context, deletions, insertions, moves, modifications)
    }

    /// The rows of a set in ascending order: marked in a table of `rowCount` flags when they
    /// are many (O(rowCount)), sorted when they are few (O(m log m)).
    static func ascending(_ rows: Set<Int32>, below rowCount: Int) -> [Int32] {
        guard rows.count >= rowCount / 8, rows.allSatisfy({ Int($0) < rowCount }) else { return rows.sorted() }
        var marked = [Bool](repeating: false, count: rowCount)
        for row in rows { marked[Int(row)] = true }
        var ordered: [Int32] = []
        ordered.reserveCapacity(rows.count)
        for row in 0..<rowCount where marked[row] { ordered.append(Int32(row)) }
        return ordered
    }

    /// Above this many rows added and removed by one commit, the row list is rebuilt rather than
    /// changed row by row.
    static var bulkChangeCount: Int { 64 }

    /// Of the rows re-sorted by a commit (each taken out at an old index and put back at a new
    /// one), those whose order changed relative to another row present before and after.
    ///
    /// Rows that were not re-sorted keep their order among themselves, so a re-sorted row keeps
    /// its order relative to all of them when as many of them precede it before and after; and
    /// it keeps its order relative to the other re-sorted rows when, taken by old index, its new
    /// index is above every earlier one's and below every later one's.
    ///
    /// - Complexity: O(m log n) for m re-sorted rows.
    static func reordered(
        _ resorted: [(row: Int32, from: Int, to: Int)], removedIndices: [Int], addedIndices: [Int]
    ) -> Set<Int32> {
        func countBelow(_ sorted: [Int], _ value: Int) -> Int {
            sorted.partitioningIndex { $0 >= value }
        }
        var result = Set<Int32>()
        for r in resorted
        where r.from - countBelow(removedIndices, r.from) != r.to - countBelow(addedIndices, r.to) {
            result.insert(r.row)
        }
        let byOld = resorted.sorted { $0.from < $1.from }
        var prefixMax = Int.min
        for r in byOld {
            if prefixMax > r.to { result.insert(r.row) }
            prefixMax = max(prefixMax, r.to)
        }
        var suffixMin = Int.max
        for r in byOld.reversed() {
            if suffixMin < r.to { result.insert(r.row) }
            suffixMin = min(suffixMin, r.to)
        }
        return result
    }

    /// The index of a member row: binary search by its stored sort keys (or by slot).
    private func locate(_ row: Int32, _ sorter: RowSorter?) -> Int {
        guard let sorter else { return rows.partitionPoint { $0 < row } }
        let base = keySlots.withUnsafeBufferPointer { keyBase(row, $0) }
        return insertionIndex(row, Array(placedKeys[base..<base + keyWidth]), sorter)
    }

    /// Where a row with these keys belongs (its index, if it is a member).
    private func insertionIndex(_ row: Int32, _ keys: [RowSorter.Key], _ sorter: RowSorter?) -> Int {
        guard let sorter else { return rows.partitionPoint { $0 < row } }
        return placedKeys.withUnsafeBufferPointer { placed in
            keySlots.withUnsafeBufferPointer { slots in
                rows.partitionPoint { other in
                    sorter.compare(placed, from: keyBase(other, slots), other, keys, row) < 0
                }
            }
        }
    }

    /// Orders a member row, by the keys it was placed with, against a row with these keys.
    private func compare(placedAt member: Int32, _ keys: [RowSorter.Key], _ row: Int32, _ sorter: RowSorter) -> Int {
        placedKeys.withUnsafeBufferPointer { placed in
            keySlots.withUnsafeBufferPointer { slots in
                -sorter.compare(placed, from: keyBase(member, slots), member, keys, row)
            }
        }
    }

    /// Lists, `LinkingObjects` and sliced results: compare the old and new keys. `changed`: the
    /// rows whose observed properties changed.
    private func diffed(_ context: CommitContext, _ changed: Set<Int32>) -> CollectionChange<Element>? {
        let old = Array(rows)
        let new: [Int32]
        do {
            new = try currentRows()
        } catch {
            stop(recording: nil)
            return nil
        }
        let (removed, inserted) = Self.difference(old, new)
        var deletions: [Int] = []
        var insertions: [Int] = []
        var moves: [CollectionChange<Element>.Move] = []
        for removal in removed where removal.movedTo == nil { deletions.append(removal.offset) }
        for insertion in inserted {
            if let from = insertion.movedFrom {
                moves.append(.init(from: from, to: insertion.offset))
            } else {
                insertions.append(insertion.offset)
            }
        }
        // Elements that stayed in place (not removed or inserted) and changed.
        let removedOld = Set(removed.map(\.offset))
        let insertedNew = Set(inserted.map(\.offset))
        let keptOld = old.indices.filter { !removedOld.contains($0) }
        let keptNew = new.indices.filter { !insertedNew.contains($0) }
        var modifications: [(Int, Int)] = []
        for (o, n) in zip(keptOld, keptNew) where changed.contains(old[o]) { modifications.append((o, n)) }
        for move in moves where changed.contains(new[move.to]) { modifications.append((move.from, move.to)) }
        modifications.sort { $0.0 < $1.0 }
        rows = RowList(new)
        members = Array(repeating: false, count: table.rowCount)
        for row in rows { members[Int(row)] = true }
        return change(context, deletions, insertions, moves, modifications)
    }

    /// The difference between two row lists, as removals (old offset, and the new offset of an
    /// element that moved) and insertions (new offset, and the old offset of an element that
    /// moved). The common prefix and suffix are left out first, so that appends, removals at
    /// either end and changes in one place cost O(n) rather than the O(n·d) of a full diff.
    static func difference(_ old: [Int32], _ new: [Int32])
        -> (removals: [(offset: Int, movedTo: Int?)], insertions: [(offset: Int, movedFrom: Int?)])
    {
        var prefix = 0
        while prefix < old.count && prefix < new.count && old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix && suffix < new.count - prefix
            && old[old.count - 1 - suffix] == new[new.count - 1 - suffix]
        {
            suffix += 1
        }
        let oldMiddle = old[prefix..<old.count - suffix]
        let newMiddle = new[prefix..<new.count - suffix]
        if oldMiddle.isEmpty || newMiddle.isEmpty {
            return (oldMiddle.indices.map { ($0, nil) }, newMiddle.indices.map { ($0, nil) })
        }
        var removals: [(offset: Int, movedTo: Int?)] = []
        var insertions: [(offset: Int, movedFrom: Int?)] = []
        for change in Array(newMiddle).difference(from: Array(oldMiddle)).inferringMoves() {
            switch change {
            case .remove(let offset, _, let associated):
                removals.append((offset + prefix, associated.map { $0 + prefix }))
            case .insert(let offset, _, let associated):
                insertions.append((offset + prefix, associated.map { $0 + prefix }))
            }
        }
        return (removals, insertions)
    }

    /// The element for a commit, or nil when nothing the subscriber sees changed.
    private func change(
        _ context: CommitContext, _ deletions: [Int], _ insertions: [Int],
        _ moves: [CollectionChange<Element>.Move], _ modifications: [(Int, Int)]
    ) -> CollectionChange<Element>? {
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
