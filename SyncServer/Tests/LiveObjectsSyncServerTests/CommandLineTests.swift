import Foundation
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import PostgresNIO
import Testing

extension SyncServerTests {
    /// The account and space commands of the built executable, against the test database.
    @Test func theCommandLineAddsExpiringTokensAndDeclaresTypes() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let space = "cli-\(server.space)"
        let user = "cli-\(server.space)"

        // A space without types, or with an empty list: a usage error (64) that adds nothing.
        for arguments in [["space", "add", space], ["space", "add", space, "--types", ","]] {
            let refused = try await ServerProcess.command(arguments)
            #expect(refused.status == 64, "\(arguments): \(refused)")
            #expect(refused.error.contains("--types"), "\(arguments): \(refused)")
        }
        let missing = try await ServerProcess.command(["space", "types", space])
        #expect(missing.status == 1)
        #expect(missing.error.contains("no space"), "\(missing)")

        let added = try await ServerProcess.command(["space", "add", space, "--types", "Holder,Card"])
        #expect(added.status == 0, "\(added)")
        #expect(added.output == "space \(space) accepts Card, Holder\n")
        #expect(added.error.contains("without a schema"), "\(added)")
        let replaced = try await ServerProcess.command(["space", "types", space, "Card", "Coupon,Holder"])
        #expect(replaced.output == "space \(space) accepts Card, Coupon, Holder\n", "\(replaced)")
        let declared = try await server.withStore { try await $0.types(of: space) }
        #expect(declared == ["Card", "Coupon", "Holder"])

        // Tokens: a bad expiry is a usage error; a good one is stored by the database's clock.
        for expiry in [
            ["--expires-in", "0"], ["--expires-in", "soon"], ["--expires", "2001-01-01"], ["--expires-in"],
        ] {
            let refused = try await ServerProcess.command(["user", "add", user] + expiry)
            #expect(refused.status == 64, "\(expiry): \(refused)")
            #expect(refused.output.isEmpty, "\(expiry): \(refused)")
        }
        let hour = try await ServerProcess.command(["user", "add", user, "--expires-in", "1h"])
        #expect(hour.status == 0, "\(hour)")
        #expect(hour.output.hasPrefix("lo_"), "\(hour)")
        let forever = try await ServerProcess.command(["user", "add", user])
        #expect(forever.output.hasPrefix("lo_"), "\(forever)")
        #expect(forever.output != hour.output)
        let rows = try await server.client.query(
            """
            SELECT count(*) FILTER (WHERE expires_at IS NULL),
                   count(*) FILTER (WHERE expires_at > now() + interval '59 minutes'
                                      AND expires_at <= now() + interval '1 hour')
            FROM tokens JOIN users ON users.id = tokens.user_id WHERE users.name = \(user)
            """)
        for try await (never, inAnHour) in rows.decode((Int64, Int64).self) {
            #expect(never == 1)
            #expect(inAnHour == 1)
        }
        let granted = try await ServerProcess.command(["grant", user, space, "reader"])
        #expect(granted.output == "\(user) is reader of \(space)\n", "\(granted)")
    }
}

extension SyncServerTests {
    /// `space schema` and `space check` of the built executable.
    @Test func theCommandLineSetsPrintsAndChecksSchemas() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let space = server.space
        let token = try await server.user("ann", .writer)
        // Stored before the schema: a card with a property the model does not have.
        let stored = try await server.transport(token).push([
            SyncChange(
                idempotencyKey: "a", object: SyncObjectID(typeName: "Card", primaryKey: .string("c1")), serverID: nil,
                kind: .create, values: ["nosuch": .value(.string("v"))])
        ])
        #expect(stored.map(\.outcome) == [.applied])
        let none = try await ServerProcess.command(["space", "schema", space])
        #expect(none.output == "space \(space) has no schema\n", "\(none)")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("schema-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("schema.json")
        try Data(try await ServerHarness.appSchema().json.utf8).write(to: file)
        let set = try await ServerProcess.command(["space", "schema", space, "--file", file.path])
        #expect(set.status == 0, "\(set)")
        #expect(set.output == "space \(space): schema version 1, types Card, Holder\n", "\(set)")
        let again = try await ServerProcess.command(["space", "schema", space, "--file", file.path])
        #expect(again.output == "space \(space): schema unchanged, version 1\n", "\(again)")
        let printed = try await ServerProcess.command(["space", "schema", space])
        #expect(printed.output.hasPrefix("space \(space), schema version 1:\n{"), "\(printed)")
        #expect(printed.output.contains(#""target": "Holder""#), "\(printed)")
        #expect(!printed.output.contains("null"), "\(printed)")

        // A breaking version, and a file that is not a schema: refused, saying why.
        try Data(#"{"types":[{"name":"Card","primaryKey":{"name":"id","type":"int"},"properties":[]}]}"#.utf8)
            .write(to: file)
        let breaking = try await ServerProcess.command(["space", "schema", space, "--file", file.path])
        #expect(breaking.status == 1, "\(breaking)")
        #expect(breaking.error.contains("type Holder is removed"), "\(breaking)")
        #expect(breaking.error.contains("primary key of Card changes from string to int"), "\(breaking)")
        try Data("{}".utf8).write(to: file)
        let malformed = try await ServerProcess.command(["space", "schema", space, "--file", file.path])
        #expect(malformed.status == 1 && malformed.error.contains("schema"), "\(malformed)")
        let unreadable = try await ServerProcess.command(["space", "schema", space, "--file", folder.path + "/none"])
        #expect(unreadable.status == 64, "\(unreadable)")

        // The card stored before the schema is reported; exit status 1.
        let check = try await ServerProcess.command(["space", "check", space])
        #expect(check.status == 1, "\(check)")
        #expect(
            check.output == """
                Card {"string": "c1"}: unknownProperty: Card has no property nosuch in the schema of the space
                space \(space): 1 object(s) do not fit the schema

                """, "\(check)")
    }
}

extension SyncServerTests {
    /// `space add NAME --schema FILE`, twice (as run-local-server.sh does with a kept database).
    @Test func theCommandLineAddsASpaceWithASchema() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let space = "schema-\(server.space)"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("schema-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(try await ServerHarness.appSchema().json.utf8).write(to: file)
        for _ in 0..<2 {
            let added = try await ServerProcess.command(["space", "add", space, "--schema", file.path])
            #expect(added.status == 0, "\(added)")
            #expect(added.output == "space \(space): schema version 1, types Card, Holder\n", "\(added)")
        }
        #expect(try await server.withStore { try await $0.schema(of: space) }?.version == 1)
        #expect(try await server.withStore { try await $0.types(of: space) } == ["Card", "Holder"])
    }
}
