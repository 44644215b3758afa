import LiveObjectsStore
import Synchronization

/// A token naming a subscription, so that a write can skip it
/// (``Realm/write(withoutNotifying:_:)``).
public struct SubscriptionToken: Hashable, Sendable {
    let id: UInt64
}

/// Set when a subscription's consumer stops iterating; read by the realm at its next commit.
final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func cancel() { flag.store(true, ordering: .relaxed) }
    var isCancelled: Bool { flag.load(ordering: .relaxed) }
}

/// A subscription kept by a store: told about every commit that touches its tables by the
/// subscription step of the commit pipeline.
protocol Subscription: AnyObject {
    /// Names the subscription, so that a write can skip it.
    var token: SubscriptionToken { get }
    /// Set from any thread when the consumer stops iterating.
    var cancellation: CancellationFlag { get }
    /// Bit `t` set when table `t` may matter (all bits for tables past 63): commits that touch
    /// none of them are skipped with one AND.
    var observedMask: UInt64 { get }

    /// Updates the subscription's state for a commit and, unless `silent`, tells the consumer.
    func commit(_ context: CommitContext, silent: Bool)
    /// Sends the first element, for subscriptions made while a write was open.
    func deliverInitial()
    /// Ends the consumer's iteration (the realm is going away).
    func finish()
}

extension Subscription {
    func deliverInitial() {}
}

/// The table mask of a set of table indices (``Subscription/observedMask``).
func tableMask(_ tables: Set<Int>) -> UInt64 {
    var mask: UInt64 = 0
    for t in tables {
        if t >= 64 { return .max }
        mask |= 1 << UInt64(t)
    }
    return mask
}

extension Store {
    /// The subscriptions of this store: the subscription step of its commit pipeline (installed
    /// by its realm; made on first use for a store without one, such as a frozen copy).
    var subscriptionRegistry: SubscriptionRegistry {
        if let registry = listener(SubscriptionRegistry.self) { return registry }
        let registry = SubscriptionRegistry(store: self, shared: nil)
        addCommitListener(registry)
        return registry
    }

    /// Registers a subscription (see ``SubscriptionRegistry/add(_:)``).
    @discardableResult
    func addSubscription(_ subscription: any Subscription) -> LiveObjectsError? {
        subscriptionRegistry.add(subscription)
    }

    /// Registers a subscription made by an accessor that cannot throw: past the maximum, the
    /// error is thrown by the enclosing realm call.
    func addSubscriptionOrRecord(_ subscription: any Subscription) {
        if let error = addSubscription(subscription) { recordError(error) }
    }

    /// Makes the next subscription token.
    func nextSubscriptionToken() -> SubscriptionToken { subscriptionRegistry.nextToken() }
}
