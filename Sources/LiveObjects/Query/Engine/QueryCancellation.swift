import LiveObjectsStore

/// A request to stop the queries run by a task, besides the task's own cancellation: what the
/// shell's Ctrl-C raises while a command runs (its commands are not tasks of their own).
///
/// Read every ``EvaluationContext/checkInterval`` units of work, with the task's cancellation;
/// a query that finds it raised stops with `cancelled`.
package final class QueryCancellation: Sendable {
    /// The request of the current task; nil when nothing but the task's cancellation stops its
    /// queries.
    ///
    /// A class, not a closure: an optional function type as a task-local value crashed
    /// optimized builds when bound from another module (`swift_task_localValuePush` was given
    /// no type metadata).
    @TaskLocal package static var current: QueryCancellation?

    /// Whether the queries should stop.
    let isRequested: @Sendable () -> Bool

    /// A request that `isRequested` raises.
    package init(_ isRequested: @escaping @Sendable () -> Bool) {
        self.isRequested = isRequested
    }

    /// Whether the current task's queries should stop.
    static var isRaised: Bool { current?.isRequested() == true }
}
