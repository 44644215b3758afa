import LiveObjectsStore

/// The notification steps of a realm's commit pipeline: Observation
/// (``ObservationRegistry``), then subscriptions (``SubscriptionRegistry``).
///
/// Both read a commit through one ``CommitContext`` (changed rows, old values), built at most
/// once per commit by whichever step needs it first.
enum NotificationListeners {
    /// Adds the Observation and subscription steps to a realm's store; returns the
    /// subscription registry.
    static func install(on store: Store, maximumSubscriptions: Int) -> SubscriptionRegistry {
        let shared = SharedContext()
        store.addCommitListener(ObservationRegistry(store: store, shared: shared))
        let registry = SubscriptionRegistry(store: store, shared: shared)
        registry.maximum = maximumSubscriptions
        store.addCommitListener(registry)
        return registry
    }

    /// The commit context of the commit being delivered, handed from one step to the next.
    final class SharedContext {
        var context: CommitContext?
    }
}
