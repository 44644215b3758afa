/// The notification steps of a realm's commit pipeline: Observation, then subscriptions.
///
/// Both read a commit through one ``CommitContext`` (changed rows, old values), built at most
/// once per commit by whichever step needs it first.
enum NotificationListeners {
    /// Adds the Observation and subscription steps to a realm's store.
    static func install(on store: Store) {
        let shared = SharedContext()
        store.addCommitListener(ObservationStep(store: store, shared: shared))
        store.addCommitListener(SubscriptionStep(store: store, shared: shared))
    }

    /// The commit context of the commit being delivered, handed from one step to the next.
    final class SharedContext {
        var context: CommitContext?
    }

    /// Tells the Observation registrars of changed objects which properties really changed.
    final class ObservationStep: CommitListener {
        let stage = CommitStage.observation
        unowned let store: Store
        let shared: SharedContext

        init(store: Store, shared: SharedContext) {
            self.store = store
            self.shared = shared
        }

        func committed(_ commit: Commit) {
            guard !commit.isEmpty, store.commitConcernsObservers(commit.changes) else { return }
            let context = CommitContext(store: store, changes: commit.changes, undoLog: commit.undoLog)
            shared.context = context
            store.notifyObservers(context)
        }
    }

    /// Updates the subscriptions and sends their change sets; delivers the first elements of
    /// subscriptions made during the write.
    final class SubscriptionStep: CommitListener {
        let stage = CommitStage.subscriptions
        unowned let store: Store
        let shared: SharedContext

        init(store: Store, shared: SharedContext) {
            self.store = store
            self.shared = shared
        }

        func committed(_ commit: Commit) {
            let context = shared.context
            shared.context = nil
            store.notifySubscriptions(commit.changes, undoLog: commit.undoLog, context: context)
            store.silencedTokens = []
        }

        func cancelled() {
            store.notifySubscriptions(ChangeSet(version: store.version, tables: [:]), undoLog: [])
            store.silencedTokens = []
        }
    }
}
