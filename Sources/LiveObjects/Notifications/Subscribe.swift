import LiveObjectsStore

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

extension MutableSet where Element: Object {
    /// Subscribes to the set's changes: first its current members, then one
    /// ``CollectionChange`` per committed write that changes it (members inserted or removed,
    /// or, one link deep, modified), with positions in the set's iteration order. An unmanaged
    /// set yields nothing.
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
