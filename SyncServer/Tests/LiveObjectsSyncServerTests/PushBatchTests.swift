import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import Testing

/// A push applies its changes in memory, a segment at a time (SyncStore+Push.swift); the
/// result must be the changes' one after the other. A seeded random sequence over four objects
/// (creates, updates and deletes, lists with and without bases, lists of links to objects the
/// sequence deletes and creates again) is pushed whole into one space and one change per push
/// into another: the receipts and what each space holds must be the same.
@Suite struct PushBatchTests {
    static let ids = ["a", "b", "c", "d"]

    func randomChange(_ index: Int, _ random: inout SyncSeededGenerator) -> SyncChange {
        func card(_ id: String) -> SyncObjectID { SyncObjectID(typeName: "Card", primaryKey: .string(id)) }
        func tags() -> SyncValue {
            .value(
                .list(
                    (0..<Int.random(in: 0...3, using: &random)).map { _ in
                        .string("t\(Int.random(in: 0..<4, using: &random))")
                    }))
        }
        func links() -> SyncValue {
            .references(
                (0..<Int.random(in: 0...3, using: &random)).map { _ in
                    SyncReference(object: card(Self.ids.randomElement(using: &random)!))
                })
        }
        let kinds: [SyncChange.Kind] = [.create, .create, .update, .update, .update, .delete]
        let kind = kinds.randomElement(using: &random)!
        var values: [String: SyncValue] = [:]
        var bases: [String: SyncValue] = [:]
        if kind != .delete {
            values["name"] = .value(.string("n\(index)"))
            if Bool.random(using: &random) {
                values["tags"] = tags()
                if Bool.random(using: &random) { bases["tags"] = tags() }
            }
            if Bool.random(using: &random) {
                values["links"] = links()
                if Bool.random(using: &random) { bases["links"] = links() }
            }
        }
        return SyncChange(
            idempotencyKey: "k\(index)", object: card(Self.ids.randomElement(using: &random)!), serverID: nil,
            kind: kind,
            values: values, bases: bases)
    }

    /// Each object's type, id, deleted flag, values and version, the space's version and its keys.
    func state(_ server: ServerHarness, _ space: String) async throws -> String {
        let rows = try await server.client.query(
            """
            SELECT coalesce(string_agg(type || ' ' || local_id::text || ' ' || deleted::text || ' ' || "values"::text
                                       || ' v' || objects.version::text, E'\\n' ORDER BY type, local_id::text), '')
                   || E'\\nversion ' || (SELECT version FROM spaces WHERE name = \(space))::text
                   || E'\\nkeys ' || (SELECT count(*) FROM applied_changes
                                      WHERE space_id = (SELECT id FROM spaces WHERE name = \(space)))::text
            FROM objects WHERE space_id = (SELECT id FROM spaces WHERE name = \(space))
            """)
        for try await (text) in rows.decode(String.self) { return text }
        return "no space"
    }

    func describe(_ receipts: [SyncReceipt]) -> [String] {
        receipts.map { "\($0.idempotencyKey) \($0.outcome) v\($0.serverVersion) \($0.serverID.isEmpty ? "-" : "id")" }
    }

    /// Three runs, each with its own seed (`SYNC_BATCH_SEED` replays one: the seed of the first run).
    @Test(arguments: 0..<3)
    func aPushIsItsChangesOneAfterTheOther(run: Int) async throws {
        let base =
            ProcessInfo.processInfo.environment["SYNC_BATCH_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...999_999)
        let seed = base + UInt64(run)
        var random = SyncSeededGenerator(seed: seed)
        let changes = (0..<60).map { randomChange($0, &random) }
        let context = Comment(
            rawValue: "seed \(seed) (replay: SYNC_BATCH_SEED=\(seed)); changes:\n"
                + changes.map { "\($0.idempotencyKey) \($0.kind) \($0.object) \($0.values) bases \($0.bases)" }
                .joined(separator: "\n"))

        let server = try await ServerHarness.start("aPushIsItsChangesOneAfterTheOther\(run)", types: ["Card"])
        defer { Task { await server.stop() } }
        let alone = "\(server.space)-alone"
        let token = try await server.withStore { [space = server.space] store in
            try await store.addSpace(alone, types: ["Card"])
            let user = "ann-\(space)"
            let token = try await store.addUser(user)
            try await store.grant(user: user, space: space, role: .writer)
            try await store.grant(user: user, space: alone, role: .writer)
            return token
        }
        let whole = server.transport(token)
        let single = HTTPSyncTransport(
            configuration: .init(baseURL: server.baseURL, space: alone) { _ in token }, session: ServerHarness.session()
        )

        let batched = try await whole.push(changes)
        var oneByOne: [SyncReceipt] = []
        for change in changes { oneByOne += try await single.push([change]) }
        #expect(describe(batched) == describe(oneByOne), context)
        let batchedState = try await state(server, server.space)
        #expect(batchedState == (try await state(server, alone)), context)
        #expect(batchedState.contains("keys "), "\(batchedState)")

        // The recorded changes sent again, whole: their first receipts, nothing applied twice.
        // (An update of an object that never existed is not recorded: sent again, it may apply.)
        let recorded = zip(changes, batched).filter { !$0.1.serverID.isEmpty }
        #expect(!recorded.isEmpty)
        let again = try await whole.push(recorded.map(\.0))
        #expect(describe(again) == describe(recorded.map(\.1)), context)
        #expect(try await state(server, server.space) == batchedState, context)
    }
}
