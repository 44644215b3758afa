import Foundation
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import Testing

extension SyncServerTests {
    /// `users`, `grants`, `ungrant` and `user remove`, through the built executable, and what a
    /// device of the user meets afterwards.
    @Test func theCommandLineListsAndRemovesGrantsAndUsers() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let space = server.space
        let user = "acct-\(space)"
        let added = try await ServerProcess.command(["user", "add", user])
        #expect(added.status == 0, "\(added)")
        let token = added.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await ServerProcess.command(["grant", user, space, "writer"]).status == 0)
        let transport = server.transport(token)
        func create(_ id: String) async throws -> SyncReceipt.Outcome? {
            try await transport.push([
                SyncChange(
                    idempotencyKey: id, object: SyncObjectID(Holder.self, .string(id)), serverID: nil, kind: .create,
                    values: ["name": .value(.string(id))])
            ]).first?.outcome
        }
        #expect(try await create("h1") == .applied)

        let users = try await ServerProcess.command(["users"])
        #expect(users.status == 0, "\(users)")
        #expect(users.output.contains("\(user)\t1 active token(s)\t\(space):writer\n"), "\(users)")
        let grants = try await ServerProcess.command(["grants", space])
        #expect(grants.output == "\(user)\twriter\n", "\(grants)")

        // Without a role the user is refused in the space, and gets it back with a grant.
        let ungranted = try await ServerProcess.command(["ungrant", user, space])
        #expect(ungranted.output == "\(user) has no role in \(space) any more\n", "\(ungranted)")
        let refused = await #expect(throws: SyncHTTPError.self) { _ = try await create("h2") }
        #expect(refused?.code == .forbidden, "\(String(describing: refused))")
        #expect(try await ServerProcess.command(["grants", space]).output == "")
        let again = try await ServerProcess.command(["ungrant", user, space])
        #expect(again.status == 1 && again.error.contains("has no role"), "\(again)")
        #expect(try await ServerProcess.command(["grant", user, space, "writer"]).status == 0)
        #expect(try await create("h2") == .applied)

        // A removed user's tokens no longer work; its objects stay.
        let removed = try await ServerProcess.command(["user", "remove", user])
        #expect(removed.output == "removed \(user): 1 token(s) revoked, 1 role(s) taken away\n", "\(removed)")
        let unauthorized = await #expect(throws: SyncHTTPError.self) { _ = try await create("h3") }
        #expect(unauthorized?.code == .unauthorized, "\(String(describing: unauthorized))")
        let after = try await ServerProcess.command(["users"])
        #expect(after.output.contains("\(user)\t0 active token(s)\tno role\n"), "\(after)")
        #expect(try await server.databaseState().contains(#""name": {"string": "h2"}"#))
        let unknown = try await ServerProcess.command(["user", "remove", "nobody-\(space)"])
        #expect(unknown.status == 1 && unknown.error.contains("no user"), "\(unknown)")
        let noSpace = try await ServerProcess.command(["grants", "nowhere-\(space)"])
        #expect(noSpace.status == 1 && noSpace.error.contains("no space"), "\(noSpace)")
    }
}
