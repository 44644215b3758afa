import Foundation
import Logging
import PostgresNIO

/// A user as the `users` command lists it.
public struct UserSummary: Sendable, Hashable {
    /// The user's name.
    public var name: String
    /// Tokens neither revoked nor expired.
    public var activeTokens: Int
    /// The user's role in each space it has one in.
    public var roles: [String: Role]
}

extension SyncStore {
    /// Every user, by name, with its active tokens and roles.
    public func users() async throws -> [UserSummary] {
        let rows = try await client.query(
            """
            SELECT users.name,
                   (SELECT count(*) FROM tokens WHERE tokens.user_id = users.id AND revoked_at IS NULL
                                                  AND (expires_at IS NULL OR expires_at > now())),
                   coalesce(array_agg(spaces.name ORDER BY spaces.name) FILTER (WHERE spaces.name IS NOT NULL), '{}'),
                   coalesce(array_agg(grants.role ORDER BY spaces.name) FILTER (WHERE spaces.name IS NOT NULL), '{}')
            FROM users
            LEFT JOIN grants ON grants.user_id = users.id
            LEFT JOIN spaces ON spaces.id = grants.space_id
            GROUP BY users.id, users.name ORDER BY users.name
            """, logger: logger)
        var users: [UserSummary] = []
        for try await (name, tokens, spaces, roles) in rows.decode((String, Int64, [String], [String]).self) {
            var byRole: [String: Role] = [:]
            for (space, role) in zip(spaces, roles) { byRole[space] = Role(rawValue: role) }
            users.append(UserSummary(name: name, activeTokens: Int(tokens), roles: byRole))
        }
        return users
    }

    /// The users with a role in a space, by name.
    ///
    /// - Throws: ``SyncServerError`` `notFound` when the space does not exist.
    public func grants(of space: String) async throws -> [(user: String, role: Role)] {
        let rows = try await client.query(
            """
            SELECT users.name, grants.role FROM spaces
            LEFT JOIN grants ON grants.space_id = spaces.id
            LEFT JOIN users ON users.id = grants.user_id
            WHERE spaces.name = \(space) ORDER BY users.name
            """, logger: logger)
        var found = false
        var grants: [(user: String, role: Role)] = []
        for try await (user, role) in rows.decode((String?, String?).self) {
            found = true
            if let user, let role = role.flatMap(Role.init(rawValue:)) { grants.append((user, role)) }
        }
        guard found else { throw SyncServerError(.notFound, "no space \"\(space)\"") }
        return grants
    }

    /// Takes a user's role in a space away: its next request there is refused (`forbidden`).
    ///
    /// - Throws: ``SyncServerError`` `notFound` when the user has no role in the space.
    public func removeGrant(user: String, space: String) async throws {
        let rows = try await client.query(
            """
            DELETE FROM grants USING users, spaces
            WHERE grants.user_id = users.id AND grants.space_id = spaces.id
              AND users.name = \(user) AND spaces.name = \(space)
            RETURNING 1
            """, logger: logger)
        for try await _ in rows { return }
        throw SyncServerError(.notFound, "\(user) has no role in \(space) (no such user, space or grant)")
    }

    /// Removes a user's access: revokes every token and takes every role away, in one
    /// transaction. The user's row stays, since the objects it created name it; `addUser` with
    /// the name gives it a token again (and no role).
    ///
    /// - Returns: How many tokens were revoked and roles taken away.
    /// - Throws: ``SyncServerError`` `notFound` for an unknown user.
    public func removeUser(_ name: String) async throws -> (revokedTokens: Int, removedGrants: Int) {
        let logger = logger
        let counts = try await client.withTransaction(logger: logger) { connection -> (Int, Int)? in
            let user = try await connection.query(
                "SELECT id FROM users WHERE name = \(name) FOR UPDATE", logger: logger)
            var id: Int64?
            for try await (found) in user.decode(Int64.self) { id = found }
            guard let id else { return nil }
            let tokens = try await connection.query(
                "UPDATE tokens SET revoked_at = now() WHERE user_id = \(id) AND revoked_at IS NULL RETURNING 1",
                logger: logger)
            var revoked = 0
            for try await _ in tokens { revoked += 1 }
            let grants = try await connection.query(
                "DELETE FROM grants WHERE user_id = \(id) RETURNING 1", logger: logger)
            var removed = 0
            for try await _ in grants { removed += 1 }
            return (revoked, removed)
        }
        guard let counts else { throw SyncServerError(.notFound, "no user \"\(name)\"") }
        return (counts.0, counts.1)
    }
}
