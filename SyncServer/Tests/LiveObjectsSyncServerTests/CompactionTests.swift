import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import Testing

/// The deleted objects and receipts older than a horizon leave the database; a cursor older
/// than the last deletion removed is told to start again.
@Suite struct CompactionTests {
    func card(_ key: String, _ id: String, _ kind: SyncChange.Kind) -> SyncChange {
        SyncChange(
            idempotencyKey: key, object: SyncObjectID(typeName: "Card", primaryKey: .string(id)), serverID: nil,
            kind: kind, values: kind == .delete ? [:] : ["name": .value(.string("card \(id)"))])
    }

    @Test func oldDeletionsAndReceiptsGoAndOlderCursorsStartAgain() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let token = try await server.user("ann", .writer)
        let transport = server.transport(token)
        _ = try await transport.push([card("k1", "c1", .create), card("k2", "c2", .create)])
        let early = try await transport.pull(after: nil)
        _ = try await transport.push([card("k3", "c2", .delete)])
        // Everything of this space happened two days ago; other tests' data is newer.
        let space = server.space
        try await server.client.query(
            """
            WITH o AS (UPDATE objects SET changed_at = now() - interval '2 days'
                       WHERE space_id = (SELECT id FROM spaces WHERE name = \(space)))
            UPDATE applied_changes SET applied_at = now() - interval '2 days'
            WHERE space_id = (SELECT id FROM spaces WHERE name = \(space))
            """)

        let removed = try await server.withStore { try await $0.compact(olderThan: .seconds(86_400)) }
        #expect(removed == Compaction(deletedObjects: 1, receipts: 3, spaces: 1), "\(removed)")
        let state = try await server.databaseState()
        #expect(state.hasPrefix(#"Card {"string": "c1"} false"#) && state.hasSuffix("version 3\nkeys 0"), "\(state)")

        // A cursor from before the deletion removed: 410, start again.
        let (status, body) = try await server.raw("GET", "/v1/spaces/\(space)/pull?after=v1.2", token: token)
        #expect(status == 410 && body.contains(#""code":"resetRequired""#), "\(status) \(body)")
        await #expect {
            _ = try await transport.pull(after: early.cursor)
        } throws: { error in
            (error as? SyncHTTPError)?.code.rawValue == "resetRequired"
        }
        let fresh = try await transport.pull(after: nil)
        #expect(fresh.changes.map(\.object) == [SyncObjectID(typeName: "Card", primaryKey: .string("c1"))])
        #expect(try await transport.pull(after: fresh.cursor).changes.isEmpty, "a cursor at the horizon is fine")

        // A key whose receipt was removed is applied again, as a new change.
        let again = try await transport.push([card("k1", "c1", .create)])
        #expect(again.first?.outcome == .applied && again.first?.serverVersion == 4, "\(again)")

        // The command line: nothing older than a day is left.
        let command = try await ServerProcess.command(["compact", "--older-than", "1d"])
        #expect(command.status == 0, "\(command)")
        #expect(command.output.hasPrefix("removed 0 deleted object(s) and 0 receipt(s)"), "\(command)")
    }
}
