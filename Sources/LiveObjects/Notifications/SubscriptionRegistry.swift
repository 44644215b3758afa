/// The live subscriptions of a realm, and the step of its commit pipeline that updates them and
/// sends their change sets; it also delivers the first elements of subscriptions made while a
/// write was open.
final class SubscriptionRegistry: CommitListener {
    let stage = CommitStage.subscriptions
    unowned let store: Store
    /// The commit context the Observation step made for this commit, if it made one.
    let shared: NotificationListeners.SharedContext?
    /// Live subscriptions, told about every commit.
    private(set) var subscriptions: [any Subscription] = []
    /// Subscriptions made while a write was open: they get their first element when it ends.
    private var pendingInitial: [any Subscription] = []
    /// Subscriptions the open write must not notify (``Realm/write(withoutNotifying:_:)``).
    var silencedTokens = Set<SubscriptionToken>()
    private var counter: UInt64 = 0
    /// The most live subscriptions kept at once (``Realm/Configuration/maximumSubscriptions``).
    var maximum = Int.max

    init(store: Store, shared: NotificationListeners.SharedContext?) {
        self.store = store
        self.shared = shared
    }

    /// Registers a subscription; it starts receiving commits. Past the maximum number of live
    /// subscriptions the subscription is ended at once instead, and the `limitExceeded` error
    /// is returned.
    func add(_ subscription: any Subscription) -> LiveObjectsError? {
        if subscriptions.count >= maximum {
            subscriptions.removeAll { $0.cancellation.isCancelled }
        }
        guard subscriptions.count < maximum else {
            subscription.finish()
            return LiveObjectsError(
                .limitExceeded,
                "the realm already has \(subscriptions.count) live subscriptions, its maximum "
                    + "(Configuration.maximumSubscriptions); end some first")
        }
        subscriptions.append(subscription)
        if store.isInWrite { pendingInitial.append(subscription) } else { subscription.deliverInitial() }
        return nil
    }

    /// Makes the next token.
    func nextToken() -> SubscriptionToken {
        counter += 1
        return SubscriptionToken(id: counter)
    }

    /// Ends every subscription's iteration (the realm is closing or going away).
    func finishAll() {
        for subscription in subscriptions { subscription.finish() }
    }

    /// Subscriptions hear of a commit once it is final.
    func prepare(_ commit: Commit) throws(LiveObjectsError) {}

    func abandon(_ commit: Commit) {}

    func committed(_ commit: Commit) {
        let context = shared?.context
        shared?.context = nil
        notify(commit.changes, undoLog: commit.undoLog, context: context)
        silencedTokens = []
    }

    func cancelled() {
        notify(ChangeSet(version: store.version, tables: [:]), undoLog: [])
        silencedTokens = []
    }

    /// Tells every live subscription about a commit; drops the cancelled ones.
    private func notify(_ changes: ChangeSet, undoLog: [UndoEntry], context made: CommitContext? = nil) {
        subscriptions.removeAll { $0.cancellation.isCancelled }
        let pending = pendingInitial
        pendingInitial = []
        if !changes.tables.isEmpty && !subscriptions.isEmpty {
            let context = made ?? CommitContext(store: store, changes: changes, undoLog: undoLog)
            let silenced = silencedTokens
            let touched = context.touchedMask
            for subscription in subscriptions where subscription.observedMask & touched != 0 {
                if !pending.isEmpty && pending.contains(where: { $0 === subscription }) { continue }
                subscription.commit(context, silent: !silenced.isEmpty && silenced.contains(subscription.token))
            }
        }
        for subscription in pending where !subscription.cancellation.isCancelled {
            subscription.deliverInitial()
        }
    }
}
