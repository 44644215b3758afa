/// One change of an object: what an ``ObjectChanges`` subscription yields.
public enum ObjectChange<Element: Object>: Sendable {
    /// The object when the subscription started.
    case initial(FrozenObject<Element>)
    /// Properties changed: each with its old and new value, and the object after the change.
    case changed(FrozenObject<Element>, [PropertyChange])
    /// The object was deleted. No element follows.
    case deleted
}

/// A property that changed, with its value before and after the write. For a list or
/// `LinkingObjects` property, the values are lists of elements (object keys for objects).
public struct PropertyChange: Sendable, Hashable {
    /// The property's name.
    public let name: String
    /// The value before the write.
    public let oldValue: PropertyValue
    /// The value after the write.
    public let newValue: PropertyValue
}

/// The changes of one object, as an asynchronous sequence: first its current state, then one
/// element per committed write that changes one of its observed properties, or deletes it.
/// Buffering is unbounded; ending the iteration ends the subscription.
public struct ObjectChanges<Element: Object>: AsyncSequence, Sendable {
    public typealias AsyncIterator = ChangeIterator<ObjectChange<Element>>
    let stream: ChangeStream<ObjectChange<Element>>
    /// Names the subscription, for ``Realm/write(withoutNotifying:_:)``.
    public let token: SubscriptionToken

    public func makeAsyncIterator() -> AsyncIterator { ChangeIterator(stream) }
}

/// Every commit of a realm, as an asynchronous sequence of changesets (no initial element).
/// Buffering is unbounded; ending the iteration ends the subscription.
public struct RealmChanges: AsyncSequence, Sendable {
    public typealias AsyncIterator = ChangeIterator<ChangeSet>
    let stream: ChangeStream<ChangeSet>
    /// Names the subscription, for ``Realm/write(withoutNotifying:_:)``.
    public let token: SubscriptionToken

    public func makeAsyncIterator() -> AsyncIterator { ChangeIterator(stream) }
}

final class ObjectSubscription<Element: Object>: Subscription {
    let token: SubscriptionToken
    let cancellation = CancellationFlag()
    let observedMask: UInt64
    // Unowned: the store's subscription registry keeps its subscriptions; a strong reference back would leak both.
    unowned(unsafe) let store: Store
    let table: Table
    let row: Int32
    let generation: UInt32
    let properties: Set<Int>?
    let continuation: ChangeStream<ObjectChange<Element>>.Continuation

    init(
        store: Store, table: Table, row: Int32, generation: UInt32, properties: Set<Int>?,
        continuation: ChangeStream<ObjectChange<Element>>.Continuation
    ) {
        self.store = store
        self.table = table
        self.row = row
        self.generation = generation
        self.properties = properties
        self.continuation = continuation
        token = store.nextSubscriptionToken()
        observedMask = tableMask([table.index])
    }

    private var frozen: FrozenObject<Element> {
        FrozenObject(
            frozen: store.frozenState(), tableIndex: table.index,
            key: ObjectKey(row: UInt32(bitPattern: row), generation: generation))
    }

    func deliverInitial() {
        if table.isValid(row, generation: generation) {
            continuation.yield(.initial(frozen))
        } else {
            continuation.yield(.deleted)
            continuation.finish()
        }
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
        guard var changed = context.modified[table.index]?[row] else { return }
        if let properties { changed.formIntersection(properties) }
        guard !changed.isEmpty, !silent else { return }
        let id = RowID(table, row)
        let changes = changed.sorted().map { p in
            PropertyChange(
                name: table.schema.properties[p].name,
                oldValue: context.oldValue(id, p) ?? .null,
                newValue: table.value(row, p))
        }
        continuation.yield(.changed(context.frozenState().object(table.index, row, generation), changes))
    }
}

extension FrozenStore {
    func object<Element: Object>(_ table: Int, _ row: Int32, _ generation: UInt32) -> FrozenObject<Element> {
        FrozenObject(
            frozen: self, tableIndex: table, key: ObjectKey(row: UInt32(bitPattern: row), generation: generation))
    }
}

final class RealmSubscription: Subscription {
    let token: SubscriptionToken
    let cancellation = CancellationFlag()
    let observedMask: UInt64
    let continuation: ChangeStream<ChangeSet>.Continuation

    init(token: SubscriptionToken, continuation: ChangeStream<ChangeSet>.Continuation) {
        self.continuation = continuation
        self.token = token
        observedMask = .max
    }

    func commit(_ context: CommitContext, silent: Bool) {
        if !silent { continuation.yield(context.changes) }
    }

    func finish() { continuation.finish() }
}

/// Model objects that can be observed; every `Object` is.
public protocol _Observable {}
extension Object: _Observable {}

extension _Observable where Self: Object {
    /// Subscribes to the object's changes: first its current state, then one element per
    /// committed write that changes one of its properties (with old and new values), or
    /// `.deleted`. An unmanaged object yields nothing.
    ///
    /// - Parameter keyPaths: Only these properties count; nil for every property.
    /// - Returns: An asynchronous sequence. Past ``Realm/Configuration/maximumSubscriptions``
    ///   live subscriptions it ends at once and the enclosing read or write throws
    ///   `limitExceeded`.
    public func changes(keyPaths: [PartialKeyPath<Self>]? = nil) -> ObjectChanges<Self> {
        let changeStream = ChangeStream<ObjectChange<Self>>()
        let continuation = changeStream.continuation
        guard let handle = _handle, handle.isValid else {
            continuation.finish()
            return ObjectChanges(stream: changeStream, token: SubscriptionToken(id: 0))
        }
        var properties: Set<Int>?
        if let keyPaths {
            var set = Set<Int>()
            for keyPath in keyPaths {
                if let name = try? handle.store.propertyNames(of: keyPath, from: handle.table).first,
                    let p = handle.table.propertyIndex[name]
                {
                    set.insert(p)
                }
            }
            properties = set
        }
        let subscription = ObjectSubscription<Self>(
            store: handle.store, table: handle.table, row: handle.row, generation: handle.generation,
            properties: properties, continuation: continuation)
        let cancellation = subscription.cancellation
        continuation.onTermination { cancellation.cancel() }
        handle.store.addSubscriptionOrRecord(subscription)
        return ObjectChanges(stream: changeStream, token: subscription.token)
    }
}

extension PropertyChange: CustomStringConvertible {
    /// `name: "Rex" → "Max"`.
    public var description: String { "\(name): \(oldValue) → \(newValue)" }
}
