import Foundation
import LiveObjects

extension SyncEngine {
    /// Keeps the realm in sync while the calling task runs: syncs at once, then whenever a local
    /// write commits or the server says it has changes, until the task is cancelled.
    ///
    /// With a ``LiveSyncTransport`` (such as ``HTTPSyncTransport``) one wait for the server's
    /// changes is kept open (a long poll); with another transport, only local writes wake it.
    /// A failed sync or wait (an error, or a report with a ``SyncReport/pullFailure``) is retried
    /// after the configuration's backoff; errors never end the loop, and each round's report goes
    /// to `onReport`.
    ///
    /// ```swift
    /// let live = Task { await engine.syncContinuously() }
    /// // … the app runs; both local edits and other devices' pushes are synced …
    /// live.cancel()
    /// ```
    ///
    /// - Parameter onReport: Called after each sync with its report, or the error that ended it.
    public func syncContinuously(
        onReport: @escaping @Sendable (Result<SyncReport, any Error>) -> Void = { _ in }
    ) async {
        var delay = configuration.initialBackoff
        while !Task.isCancelled {
            let (wake, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            localWake = continuation
            let succeeded: Bool
            do {
                let report = try await sync()
                onReport(.success(report))
                // A failed pull is tried again after the backoff, as a thrown error is.
                succeeded = report.pullFailure == nil
            } catch {
                if Task.isCancelled { break }
                onReport(.failure(error))
                succeeded = false
            }
            if !succeeded {
                try? await configuration.sleep(delay)
                delay = min(delay * 2, configuration.maxBackoff)
                continue
            }
            delay = configuration.initialBackoff
            await waitForWork(localWrites: wake)
        }
        localWake = nil
    }

    /// Returns when a local write commits, when the server has changes after the cursor, or
    /// when the task is cancelled.
    private func waitForWork(localWrites: AsyncStream<Void>) async {
        let live = transport as? any LiveSyncTransport
        let cursor = cursor
        let configuration = configuration
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in localWrites { return }
            }
            if let live {
                group.addTask {
                    var delay = configuration.initialBackoff
                    while !Task.isCancelled {
                        do {
                            if try await live.waitForChanges(after: cursor) { return }
                            delay = configuration.initialBackoff
                        } catch {
                            if Task.isCancelled { return }
                            try? await configuration.sleep(delay)
                            delay = min(delay * 2, configuration.maxBackoff)
                        }
                    }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Tells ``syncContinuously(onReport:)`` that a local write committed.
    func wakeForLocalChange() {
        localWake?.yield()
    }
}
