import LiveObjectsStore

/// What a ``Map/changes()`` subscription yields.
public enum MapUpdate: Sendable, Hashable {
    /// The map's keys when the subscription started, in order.
    case initial(keys: [String])
    /// A committed write changed the map: the keys it inserted, modified and deleted.
    case changed(MapChange)
    /// The map's object was deleted. No element follows.
    case deleted
}

/// The changes of one map, as an asynchronous sequence: first its keys, then one element per
/// committed write that changes it (Realm's `Map.observe`). Buffering is unbounded; ending the
/// iteration ends the subscription.
public struct MapChanges: AsyncSequence, Sendable {
    public typealias AsyncIterator = ChangeIterator<MapUpdate>
    let stream: ChangeStream<MapUpdate>
    /// Names the subscription, for ``Realm/write(withoutNotifying:_:)``.
    public let token: SubscriptionToken

    public func makeAsyncIterator() -> AsyncIterator { ChangeIterator(stream) }
}

extension Map {
    /// Subscribes to the map's changes: first its keys, then one ``MapUpdate/changed(_:)`` per
    /// committed write that inserts, changes or removes a key (a write that sets a key to the
    /// value it had yields nothing), or ``MapUpdate/deleted``. An unmanaged map yields nothing.
    ///
    /// - Returns: An asynchronous sequence. Past ``Realm/Configuration/maximumSubscriptions``
    ///   live subscriptions it ends at once and the enclosing read or write throws
    ///   `limitExceeded`.
    public func changes() -> MapChanges {
        let changeStream = ChangeStream<MapUpdate>()
        let continuation = changeStream.continuation
        guard let context = accessContext, context.isUsable, context.handle.isValid else {
            continuation.finish()
            return MapChanges(stream: changeStream, token: SubscriptionToken(id: 0))
        }
        let handle = context.handle
        let subscription = MapSubscription(
            store: handle.store, table: handle.table, row: handle.row, generation: handle.generation,
            property: context.property, continuation: continuation)
        let cancellation = subscription.cancellation
        continuation.onTermination { cancellation.cancel() }
        handle.store.addSubscriptionOrRecord(subscription)
        return MapChanges(stream: changeStream, token: subscription.token)
    }
}

/// A subscription to one map property of one object.
final class MapSubscription: Subscription {
    let token: SubscriptionToken
    let cancellation = CancellationFlag()
    let observedMask: UInt64
    // Unowned: the store's subscription registry keeps its subscriptions.
    unowned(unsafe) let store: Store
    let table: Table
    let row: Int32
    let generation: UInt32
    let property: Int
    let continuation: ChangeStream<MapUpdate>.Continuation

    init(
        store: Store, table: Table, row: Int32, generation: UInt32, property: Int,
        continuation: ChangeStream<MapUpdate>.Continuation
    ) {
        self.store = store
        self.table = table
        self.row = row
        self.generation = generation
        self.property = property
        self.continuation = continuation
        token = store.nextSubscriptionToken()
        observedMask = tableMask([table.index])
    }

    func deliverInitial() {
        guard table.isValid(row, generation: generation) else {
            continuation.yield(.deleted)
            continuation.finish()
            return
        }
        let change = MapChange(PropertyChange(name: "", oldValue: .null, newValue: table.value(row, property)))
        continuation.yield(.initial(keys: change?.insertions ?? []))
    }

    func finish() { continuation.finish() }

    func commit(_ context: CommitContext, silent: Bool) {
        guard context.touchedTables.contains(table.index) else { return }
        if context.deleted[table.index]?[row] == generation {
            if !silent { continuation.yield(.deleted) }
            continuation.finish()
            cancellation.cancel()
            return
        }
        guard !silent, context.modified[table.index]?[row]?.contains(property) == true else { return }
        let old = context.oldValue(RowID(table, row), property) ?? .null
        let change = PropertyChange(
            name: table.schema.properties[property].name, oldValue: old, newValue: table.value(row, property))
        guard let keys = MapChange(change),
            !(keys.insertions.isEmpty && keys.modifications.isEmpty && keys.deletions.isEmpty)
        else { return }
        continuation.yield(.changed(keys))
    }
}
