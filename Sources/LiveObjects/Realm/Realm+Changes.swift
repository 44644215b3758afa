// The change-set subscriptions of a realm and of its results (Notifications/ does the work).

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

extension Realm {
    /// Subscribes to every commit of the realm: one changeset per committed write.
    ///
    /// - Throws: `limitExceeded` when the realm already has
    ///   ``Configuration/maximumSubscriptions`` live subscriptions.
    public func changes() throws(LiveObjectsError) -> RealmChanges {
        let changeStream = ChangeStream<ChangeSet>()
        let continuation = changeStream.continuation
        let subscription = RealmSubscription(token: store.nextSubscriptionToken(), continuation: continuation)
        let cancellation = subscription.cancellation
        continuation.onTermination { cancellation.cancel() }
        // Made during a write, it starts after that write's commit, like every subscription.
        if let error = store.addSubscription(subscription) { throw error }
        return RealmChanges(stream: changeStream, token: subscription.token)
    }

    /// Runs a write whose commit the named subscriptions do not hear about (their state still
    /// moves on, so their next change applies to the state after this write).
    ///
    /// - Throws: as ``write(_:)``.
    public func write<T>(
        withoutNotifying tokens: [SubscriptionToken], _ body: @Sendable (isolated Realm) throws -> sending T
    ) throws -> sending T {
        try write(silencing: Set(tokens), body)
    }
}
