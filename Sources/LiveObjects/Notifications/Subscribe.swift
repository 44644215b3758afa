extension BoundPredicate {
    /// The key paths the predicate reads, each from the tested object (paths inside a
    /// SUBQUERY or a collection operator are prefixed with their collection's path).
    /// Groups are walked with an explicit stack (in the same order), not by recursion.
    func paths(_ prefixes: [Int: BoundPath] = [:]) -> [BoundPath] {
        var result: [BoundPath] = []
        var pending: [BoundPredicate] = [self]
        while let p = pending.popLast() {
            switch p {
            case .constant: break
            case .and(let operands), .or(let operands): pending.append(contentsOf: operands.reversed())
            case .not(let operand): pending.append(operand)
            case .comparison(let c): result += c.lhs.paths(prefixes) + c.rhs.paths(prefixes)
            case .scan(_, let c): result += c.lhs.paths(prefixes)
            case .range(let lookup):
                result.append(
                    BoundPath(
                        steps: [.init(table: lookup.table, property: lookup.property, target: nil, isToMany: false)],
                        root: lookup.table))
            case .index(let lookup):
                result.append(
                    BoundPath(
                        steps: [.init(table: lookup.table, property: lookup.property, target: nil, isToMany: false)],
                        root: lookup.table))
            }
        }
        return result
    }
}

extension BoundExpression {
    func paths(_ prefixes: [Int: BoundPath]) -> [BoundPath] {
        func rooted(_ path: BoundPath, _ variable: Int?) -> BoundPath {
            guard let variable, let prefix = prefixes[variable] else { return path }
            return BoundPath(steps: prefix.steps + path.steps, root: prefix.root)
        }
        switch self {
        case .constant: return []
        case .path(let path, let variable): return [rooted(path, variable)]
        case .aggregate(_, let collection, let variable, let element):
            let base = rooted(collection, variable)
            return [base] + (element.map { [BoundPath(steps: base.steps + $0.steps, root: base.root)] } ?? [])
        case .subqueryCount(let collection, let variable, let slot, let predicate, _):
            let base = rooted(collection, variable)
            var inner = prefixes
            inner[slot] = base
            return [base] + predicate.paths(inner)
        }
    }
}

extension Results {
    /// Subscribes to the results' changes: first the current state, then one
    /// ``CollectionChange`` per committed write that changes them.
    ///
    /// Filtered and sorted results are kept incrementally: a commit re-tests and re-positions
    /// only the rows it changed. Results with `distinct`, `limit` or `offset` are re-evaluated
    /// on every commit that inserts or deletes objects of their type or changes a property they
    /// observe or read.
    ///
    /// By default the subscription is deep, one level: a change to any property of the objects,
    /// or of the objects they link to directly (to-one links, lists, `LinkingObjects`), reports
    /// the object as modified. Changes that move an object into or out of the results, or
    /// within their sort order, are always seen, however deep the key paths of the predicate,
    /// the sort or `distinct` go; those key paths alone do not make an object modified.
    ///
    /// A move is an object whose order changed relative to another object present before and
    /// after the write; an object whose sort keys changed but that kept its place is not moved.
    ///
    /// - Parameter keyPaths: Only changes of these key paths report objects as modified. A key
    ///   path counts the properties it names along its way: `"owner.name"` counts a change of
    ///   the object's `owner` link and of its owner's name; `"owner"` alone counts only the
    ///   link, not the owner's properties.
    /// - Returns: An asynchronous sequence; iterate it from any actor. When a key path names
    ///   no property, the sequence ends at once and the enclosing ``Realm/read(_:)`` or
    ///   ``Realm/write(_:)`` throws the error naming it (as `filter` and `sorted(byKeyPath:)`
    ///   do). When the realm already has ``Realm/Configuration/maximumSubscriptions`` live
    ///   subscriptions, the sequence ends at once and the enclosing call throws
    ///   `limitExceeded`.
    public func changes(keyPaths: [String]? = nil) -> CollectionChanges<Element> {
        let changeStream = ChangeStream<CollectionChange<Element>>()
        let continuation = changeStream.continuation
        guard let table else {
            continuation.finish()
            return CollectionChanges(stream: changeStream, token: store.nextSubscriptionToken())
        }
        let source: CollectionSubscription<Element>.Source
        var membership: [BoundPath] = []
        if query.distinct.isEmpty && query.limit == nil && query.offset == 0 {
            var bound: BoundQuery?
            var sorter: RowSorter?
            if let combined = query.combinedFilter {
                bound = try? QueryCompiler.bind(combined.syntax, to: table, store: store, text: nil)
            }
            if !query.sorts.isEmpty { sorter = try? RowSorter.bind(query.sorts, table: table, store: store) }
            membership = (bound?.predicate.paths() ?? []) + (sorter?.fields.map(\.path) ?? [])
            source = .query(bound, sorter)
        } else {
            source = .reevaluated(query)
            if let bound = try? QueryCompiler.bind(
                .and(query.predicates.map(\.syntax) + [.constant(true)]), to: table, store: store, text: nil)
            {
                membership = bound.predicate.paths()
            }
            // The sort and distinct key paths decide which objects the slice holds, too.
            if let sorter = try? RowSorter.bind(query.sorts, table: table, store: store) {
                membership += sorter.fields.map(\.path)
            }
            membership += query.distinct.compactMap {
                try? BoundPath.resolve($0.split(separator: ".").map(String.init), from: table, store: store)
            }
        }
        let observed: [BoundPath]
        let filtered: Bool
        do {
            (observed, filtered) = try observedPaths(keyPaths, table: table)
        } catch {
            store.recordError(error)
            continuation.finish()
            return CollectionChanges(stream: changeStream, token: store.nextSubscriptionToken())
        }
        let subscription = CollectionSubscription<Element>(
            store: store, table: table, source: source, observedPaths: observed, membershipPaths: membership,
            filtered: filtered, continuation: continuation)
        let cancellation = subscription.cancellation
        continuation.onTermination { cancellation.cancel() }
        store.addSubscriptionOrRecord(subscription)
        return CollectionChanges(stream: changeStream, token: subscription.token)
    }
}

extension ObjectCollection {
    /// Resolves a key-path filter, or the default deep paths (every property, one link deep).
    ///
    /// - Throws: the error of a key path that names no property (the error names it).
    func observedPaths(_ keyPaths: [String]?, table: Table) throws(LiveObjectsError) -> ([BoundPath], Bool) {
        let store = table.store!
        if let keyPaths {
            var paths: [BoundPath] = []
            for keyPath in keyPaths {
                do {
                    paths.append(
                        try BoundPath.resolve(keyPath.split(separator: ".").map(String.init), from: table, store: store)
                    )
                } catch {
                    throw LiveObjectsError(
                        error.code, "cannot observe '\(keyPath)': \(error.message)", objectType: table.name,
                        property: keyPath)
                }
            }
            return (paths, true)
        }
        let paths = table.schema.properties.indices.map { p in
            let property = table.schema.properties[p]
            let target = property.objectType.flatMap { store.tablesByName[$0] }
            return BoundPath(
                steps: [.init(table: table, property: p, target: target, isToMany: property.isList)], root: table)
        }
        return (paths, false)
    }
}

extension List where Element: Object {
    /// Subscribes to the list's changes: first its current state, then one
    /// ``CollectionChange`` per committed write that changes it (elements added, removed,
    /// moved, or, one link deep, modified). An unmanaged list yields nothing.
    public func changes(keyPaths: [String]? = nil) -> CollectionChanges<Element> {
        collectionChanges(context: accessContext, keyPaths: keyPaths)
    }
}

extension LinkingObjects {
    /// Subscribes to the changes of the objects linking here; see ``List/changes(keyPaths:)``.
    public func changes(keyPaths: [String]? = nil) -> CollectionChanges<Element> {
        collectionChanges(context: accessContext, keyPaths: keyPaths)
    }
}

extension ObjectCollection {
    func collectionChanges(context: _AccessContext?, keyPaths: [String]?) -> CollectionChanges<Element> {
        let changeStream = ChangeStream<CollectionChange<Element>>()
        let continuation = changeStream.continuation
        guard let context, let target = context.targetTable else {
            continuation.finish()
            return CollectionChanges(stream: changeStream, token: SubscriptionToken(id: 0))
        }
        let store = context.handle.store
        let observed: [BoundPath]
        let filtered: Bool
        do {
            (observed, filtered) = try observedPaths(keyPaths, table: target)
        } catch {
            store.recordError(error)
            continuation.finish()
            return CollectionChanges(stream: changeStream, token: store.nextSubscriptionToken())
        }
        let subscription = CollectionSubscription<Element>(
            store: store, table: target,
            source: .list(
                owner: context.handle.table, row: context.handle.row, generation: context.handle.generation,
                property: context.property),
            observedPaths: observed, membershipPaths: [], filtered: filtered, continuation: continuation)
        let cancellation = subscription.cancellation
        continuation.onTermination { cancellation.cancel() }
        store.addSubscriptionOrRecord(subscription)
        return CollectionChanges(stream: changeStream, token: subscription.token)
    }
}
