import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Wakes the long polls of this process when a push commits, through this process or another:
/// a push sends `NOTIFY` on ``channel`` in its transaction, and ``run(_:logger:)`` listens.
public final class ChangeNotifier: Sendable {
    /// The PostgreSQL notification channel; the payload is the space's id.
    static let channel = "liveobjects_sync"

    private struct Waiter {
        var space: Int64
        var continuation: AsyncStream<Void>.Continuation
    }

    private let waiters = Mutex<[UInt64: Waiter]>([:])
    private let counter = Atomic<UInt64>(0)
    private let listening = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)

    /// Whether the server is shutting down: long polls answer at once.
    public var isShuttingDown: Bool { stopping.load(ordering: .acquiring) }

    /// Starts the shutdown: every waiting long poll is woken to answer what it has, and later
    /// ones do not wait.
    ///
    /// - Returns: The number of long polls woken.
    @discardableResult
    public func shutDown() -> Int {
        stopping.store(true, ordering: .releasing)
        return waiters.withLock { waiters in
            for waiter in waiters.values { waiter.continuation.yield() }
            return waiters.count
        }
    }

    /// Whether the process listens for notifications now. While it does, a long poll waits for
    /// one without reading the database again; while it does not (starting, or reconnecting
    /// after a failure), long polls recheck the database every `recheckInterval`.
    public var isListening: Bool { listening.load(ordering: .acquiring) }

    /// Creates a notifier with no waiter.
    public init() {}

    /// Listens for notifications until the task is cancelled, connecting again after a
    /// failure (a long poll still re-reads the database every few seconds meanwhile).
    public func run(_ configuration: DatabaseConfiguration, logger: Logger) async {
        var attempt = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: try configuration.connectionConfiguration, id: 0, logger: logger)
                attempt = 0
                defer { Task { try? await connection.close() } }
                try await connection.listen(on: Self.channel) { notifications in
                    // Listening from here on: the waiters read again once, for what was pushed
                    // before (they may have waited on the shorter recheck), then wait.
                    setListening(true)
                    defer { setListening(false) }
                    for try await notification in notifications {
                        if let space = Int64(notification.payload) { notify(space: space) }
                    }
                }
            } catch {
                setListening(false)
                if Task.isCancelled { return }
                logger.warning("listening for changes failed: \(error)")
            }
            attempt += 1
            try? await Task.sleep(for: .milliseconds(min(5000, 100 * (1 << min(attempt, 6)))))
        }
    }

    /// Records whether notifications arrive, and wakes every waiter when that changes (a waiter
    /// that waits for a notification must read again once they stop).
    private func setListening(_ value: Bool) {
        guard listening.exchange(value, ordering: .acquiringAndReleasing) != value else { return }
        waiters.withLock { waiters in
            for waiter in waiters.values { waiter.continuation.yield() }
        }
    }

    /// Wakes every waiter of a space.
    func notify(space: Int64) {
        waiters.withLock { waiters in
            for waiter in waiters.values where waiter.space == space { waiter.continuation.yield() }
        }
    }

    /// Starts listening for a space before its database is read, so that a push committing in
    /// between is not missed.
    func subscribe(space: Int64) -> Subscription {
        let id = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        waiters.withLock { $0[id] = Waiter(space: space, continuation: continuation) }
        return Subscription(id: id, stream: stream, notifier: self)
    }

    fileprivate func unsubscribe(_ id: UInt64) {
        let waiter = waiters.withLock { $0.removeValue(forKey: id) }
        waiter?.continuation.finish()
    }

    /// The notifications of one space for one long poll.
    struct Subscription: Sendable {
        let id: UInt64
        let stream: AsyncStream<Void>
        let notifier: ChangeNotifier

        /// Returns when the space changed (true) or the time is up (false).
        func next(within duration: Duration) async -> Bool {
            let stream = stream
            return await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for await _ in stream { return true }
                    return false
                }
                group.addTask {
                    try? await Task.sleep(for: duration)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }

        func cancel() { notifier.unsubscribe(id) }
    }
}
