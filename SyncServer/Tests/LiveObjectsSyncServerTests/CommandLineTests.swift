import Foundation
import LiveObjectsSyncServer
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
            let refused = try ServerProcess.command(arguments)
            #expect(refused.status == 64, "\(arguments): \(refused)")
            #expect(refused.error.contains("--types"), "\(arguments): \(refused)")
        }
        let missing = try ServerProcess.command(["space", "types", space])
        #expect(missing.status == 1)
        #expect(missing.error.contains("no space"), "\(missing)")

        let added = try ServerProcess.command(["space", "add", space, "--types", "Holder,Card"])
        #expect(added.status == 0, "\(added)")
        #expect(added.output == "space \(space) accepts Card, Holder\n")
        let replaced = try ServerProcess.command(["space", "types", space, "Card", "Coupon,Holder"])
        #expect(replaced.output == "space \(space) accepts Card, Coupon, Holder\n", "\(replaced)")
        let declared = try await server.withStore { try await $0.types(of: space) }
        #expect(declared == ["Card", "Coupon", "Holder"])

        // Tokens: a bad expiry is a usage error; a good one is stored by the database's clock.
        for expiry in [
            ["--expires-in", "0"], ["--expires-in", "soon"], ["--expires", "2001-01-01"], ["--expires-in"],
        ] {
            let refused = try ServerProcess.command(["user", "add", user] + expiry)
            #expect(refused.status == 64, "\(expiry): \(refused)")
            #expect(refused.output.isEmpty, "\(expiry): \(refused)")
        }
        let hour = try ServerProcess.command(["user", "add", user, "--expires-in", "1h"])
        #expect(hour.status == 0, "\(hour)")
        #expect(hour.output.hasPrefix("lo_"), "\(hour)")
        let forever = try ServerProcess.command(["user", "add", user])
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
        let granted = try ServerProcess.command(["grant", user, space, "reader"])
        #expect(granted.output == "\(user) is reader of \(space)\n", "\(granted)")
    }
}
