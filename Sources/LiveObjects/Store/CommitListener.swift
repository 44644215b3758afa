/// One commit of a store, as the commit pipeline's listeners see it.
package struct Commit {
    /// What the commit changed; empty for a write that changed nothing.
    package let changes: ChangeSet
    /// The store, holding the commit's new state.
    package let store: Store
    /// The write's undo log: the old values that notifications compare against.
    let undoLog: [UndoEntry]

    /// Whether the commit changed nothing.
    package var isEmpty: Bool { changes.tables.isEmpty }
}

/// One step of a store's commit pipeline.
///
/// Every commit goes through the listeners of its store, in the order of their ``Stage``:
///
/// 1. ``prepare(_:)``, for commits that changed something, while the write is still open: the
///    store holds the new state and nothing outside the pipeline has seen it. A listener that
///    throws cancels the commit: the listeners prepared before it are told to
///    ``abandon(_:)`` it (in reverse order), the write is rolled back, and the commit throws.
/// 2. ``committed(_:)``, once the commit is final, for every commit (also empty ones, which
///    subscriptions use to deliver first elements held back by the write).
///
/// A write that is cancelled instead calls ``cancelled()``. Listeners are called inside the
/// isolation of the realm that owns the store. Every listener implements every method (there
/// are no defaults, so that a method whose signature is mistyped does not compile as a
/// method of its own that the pipeline never calls); one with nothing to do says so.
package protocol CommitListener: AnyObject {
    /// Where the listener runs in the pipeline.
    var stage: CommitStage { get }
    /// Makes the commit part of the listener's state before it is final (record it, make it
    /// durable). Throwing cancels the commit.
    func prepare(_ commit: Commit) throws(LiveObjectsError)
    /// Undoes ``prepare(_:)`` for a commit that a later listener cancelled.
    func abandon(_ commit: Commit)
    /// Reacts to a final commit.
    func committed(_ commit: Commit)
    /// Reacts to a cancelled write.
    func cancelled()
}

/// The stages of the commit pipeline, in the order their listeners run.
package enum CommitStage: Int, Comparable, Sendable {
    /// The change history (recorded first, so that a snapshot saved for the commit holds it).
    case history
    /// Durability: a file realm's journal line or save.
    case durability
    /// The Observation framework's registrars of changed objects.
    case observation
    /// Change-set subscriptions (`changes()` sequences).
    case subscriptions
    /// Everything else (a sync engine's status refresh).
    case external

    package static func < (a: CommitStage, b: CommitStage) -> Bool { a.rawValue < b.rawValue }
}

/// A listener that calls a closure after every commit that changed something.
package final class CommitObserver: CommitListener {
    package let stage = CommitStage.external
    private let body: (Commit) -> Void

    package init(_ body: @escaping (Commit) -> Void) {
        self.body = body
    }

    package func prepare(_ commit: Commit) throws(LiveObjectsError) {}

    package func abandon(_ commit: Commit) {}

    package func committed(_ commit: Commit) {
        if !commit.isEmpty { body(commit) }
    }

    package func cancelled() {}
}

extension Store {
    /// Adds a listener to the commit pipeline, after the listeners of its stage and earlier ones.
    package func addCommitListener(_ listener: any CommitListener) {
        let index = listeners.firstIndex { $0.stage > listener.stage } ?? listeners.count
        listeners.insert(listener, at: index)
    }

    /// The first listener of a type, if one is installed: how the layers that have only the
    /// store find the services around it (the history log, the file storage).
    package func listener<Listener: CommitListener>(_ type: Listener.Type) -> Listener? {
        for listener in listeners {
            if let found = listener as? Listener { return found }
        }
        return nil
    }
}
