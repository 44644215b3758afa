import Foundation
import LiveObjectsSyncProtocol
import Logging
import PostgresNIO

// Compaction (docs/SYNC-PROTOCOL.md, "Compaction"): the deleted objects and the receipts older
// than a horizon leave the database; a device whose cursor is older than the last deletion
// removed is told to pull again from the beginning.

/// What a compaction removed.
public struct Compaction: Sendable, Hashable {
    /// Deleted objects (their rows) removed.
    public var deletedObjects: Int
    /// Receipts of changes applied before the horizon removed (the receipts of a deleted
    /// object removed go with it, counted here only when they are that old).
    public var receipts: Int
    /// The spaces whose horizon moved: a cursor older than it gets `resetRequired`.
    public var spaces: Int

    /// Creates a report.
    public init(deletedObjects: Int, receipts: Int, spaces: Int) {
        self.deletedObjects = deletedObjects
        self.receipts = receipts
        self.spaces = spaces
    }
}

extension SyncStore {
    /// Removes what is older than `age`: the deleted objects deleted before it (so a device
    /// whose cursor is older than such a deletion must pull again from the beginning, told by
    /// `resetRequired`), and the receipts of changes applied before it (a change sent again
    /// after that is applied again, as a new one). Space by space, each in a transaction of its
    /// own under the space's lock, so pushes to other spaces go on.
    ///
    /// - Parameter age: At least one second.
    public func compact(olderThan age: Duration) async throws -> Compaction {
        let seconds = max(1, age.components.seconds)
        let candidates = try await client.query(
            """
            SELECT id FROM spaces WHERE
                EXISTS (SELECT 1 FROM objects WHERE space_id = spaces.id AND deleted
                                                AND changed_at < now() - \(seconds)::bigint * interval '1 second')
                OR EXISTS (SELECT 1 FROM applied_changes WHERE space_id = spaces.id
                                                AND applied_at < now() - \(seconds)::bigint * interval '1 second')
            ORDER BY id
            """, logger: logger)
        var spaces: [Int64] = []
        for try await (id) in candidates.decode(Int64.self) { spaces.append(id) }
        var total = Compaction(deletedObjects: 0, receipts: 0, spaces: 0)
        for space in spaces {
            let (objects, receipts) = try await compact(space: space, seconds: seconds)
            total.deletedObjects += objects
            total.receipts += receipts
            if objects > 0 { total.spaces += 1 }
        }
        return total
    }

    private func compact(space: Int64, seconds: Int64) async throws -> (objects: Int, receipts: Int) {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            // The space's lock first, as a push takes it: no push waits on a row this holds.
            try await connection.query("SELECT 1 FROM spaces WHERE id = \(space) FOR UPDATE", logger: logger)
            let rows = try await connection.query(
                """
                WITH receipts AS (
                    DELETE FROM applied_changes
                    WHERE space_id = \(space) AND applied_at < now() - \(seconds)::bigint * interval '1 second'
                    RETURNING 1
                ), removed AS (
                    DELETE FROM objects
                    WHERE space_id = \(space) AND deleted AND changed_at < now() - \(seconds)::bigint * interval '1 second'
                    RETURNING version
                ), horizon AS (
                    UPDATE spaces SET compacted_version = greatest(compacted_version, (SELECT max(version) FROM removed))
                    WHERE id = \(space) AND EXISTS (SELECT 1 FROM removed)
                )
                SELECT (SELECT count(*) FROM removed), (SELECT count(*) FROM receipts)
                """, logger: logger)
            var counts = (objects: 0, receipts: 0)
            for try await (objects, receipts) in rows.decode((Int64, Int64).self) {
                counts = (Int(objects), Int(receipts))
            }
            return counts
        }
    }
}
