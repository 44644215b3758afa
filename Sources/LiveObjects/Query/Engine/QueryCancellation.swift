import LiveObjectsStore

/// A request to stop the queries run by a task, besides the task's own cancellation: what the
/// shell's Ctrl-C raises while a command runs (its commands are not tasks of their own).
///
/// Read every ``EvaluationContext/checkInterval`` units of work, with the task's cancellation;
/// a query that finds it raised stops with `cancelled`.
package enum QueryCancellation {
    /// Whether the queries of the current task should stop; nil when nothing but the task's
    /// cancellation stops them.
    @TaskLocal package static var isRequested: (@Sendable () -> Bool)?
}
