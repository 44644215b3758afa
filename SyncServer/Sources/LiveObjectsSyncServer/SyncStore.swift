import Crypto
import Foundation
import LiveObjectsSyncProtocol
import Logging
import PostgresNIO

/// A user's role in a space. In a space with rules (``SpaceRules``), a type's rules decide
/// which of its objects a reader or a writer pulls, and which a writer changes; an admin's access
/// is the role's.
public enum Role: String, Sendable, CaseIterable {
    /// Pulls (of a type with rules, the objects its read rule allows).
    case reader
    /// Pulls, creates, and changes or deletes the objects it created (of a type with rules, the
    /// objects its write rule allows, before and after the change).
    case writer
    /// Pulls and changes anything, whatever the rules say.
    case admin
}

/// The server's rules over its database: accounts, access, push and pull. Every request that
/// changes data is one transaction.
public struct SyncStore: Sendable {
    /// The most changes in one push.
    public static let maximumBatch = SyncProtocolLimits.maximumChanges
    /// The most objects in one pull page.
    public static let maximumPage = SyncProtocolLimits.maximumPageObjects

    let client: PostgresClient
    let logger: Logger
    /// The schemas read, by space, with their versions.
    let schemas = SchemaCache()
    /// The rules parsed, by space.
    let parsedRules = RulesCache()

    /// Creates a store over a running client.
    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Creates the schema or brings it up to date.
    public func migrate() async throws {
        let applied = try await Migrations.apply(client, logger: logger)
        if !applied.isEmpty { logger.info("applied schema migrations \(applied)") }
    }

    /// Checks that the database answers (`SELECT 1`).
    func ping() async throws {
        for try await _ in try await client.query("SELECT 1", logger: logger) {}
    }

    // MARK: Accounts

    /// The SHA-256 of a token, in hexadecimal: all the database keeps of it.
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// A new token: 32 random bytes, URL-safe base64.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let text = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "lo_" + text
    }

    /// Adds a user (or finds it) and gives it a new token; the user's other tokens stay valid.
    ///
    /// - Parameter expiry: When the token stops being accepted; nil, never.
    /// - Returns: The token, which is not stored: show it once.
    public func addUser(_ name: String, expiry: TokenExpiry? = nil) async throws -> String {
        guard !name.isEmpty, name.utf8.count <= 200 else {
            throw SyncServerError(.badRequest, "a user name must have 1 to 200 bytes")
        }
        let token = Self.newToken()
        let hash = Self.hash(token)
        var date: Date?
        var seconds: Int64?
        switch expiry {
        case .at(let moment): date = moment
        case .after(let count): seconds = count
        case nil: break
        }
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "INSERT INTO users (name) VALUES (\(name)) ON CONFLICT (name) DO NOTHING", logger: logger)
            // The database's clock decides when a token expires, for every server process alike.
            try await connection.query(
                """
                INSERT INTO tokens (hash, user_id, expires_at)
                SELECT \(hash), id, coalesce(\(date)::timestamptz, now() + \(seconds)::bigint * interval '1 second')
                FROM users WHERE name = \(name)
                """,
                logger: logger)
        }
        return token
    }

    /// Revokes every token of a user.
    ///
    /// - Returns: How many tokens were revoked.
    @discardableResult
    public func revokeTokens(of name: String) async throws -> Int {
        let rows = try await client.query(
            """
            UPDATE tokens SET revoked_at = now()
            WHERE revoked_at IS NULL AND user_id = (SELECT id FROM users WHERE name = \(name)) RETURNING 1
            """, logger: logger)
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// Adds a space that accepts the given types; for a space that exists, sets its types.
    ///
    /// - Parameter types: The type names a push may create, change or link to (the model classes'
    ///   names, such as `Card`).
    /// - Throws: ``SyncServerError`` `conflict` for a space with a schema, whose types are its
    ///   schema's.
    public func addSpace(_ name: String, types: [String]) async throws {
        guard !name.isEmpty, name.utf8.count <= 200, !name.containsNUL else {
            throw SyncServerError(.badRequest, "a space name must have 1 to 200 bytes, without NUL")
        }
        let types = try Self.checkedTypes(types)
        let rows = try await client.query(
            """
            INSERT INTO spaces (name, types) VALUES (\(name), \(types))
            ON CONFLICT (name) DO UPDATE SET types = excluded.types WHERE spaces.schema_version IS NULL
            RETURNING 1
            """, logger: logger)
        for try await _ in rows { return }
        throw Self.typesOfSchema(name)
    }

    static func typesOfSchema(_ space: String) -> SyncServerError {
        SyncServerError(
            .conflict,
            "space \(space) has a schema, which names its types: upload a new version (space schema \(space) --file FILE)"
        )
    }

    /// Replaces the types a space accepts. Objects of a type no longer declared stay, and are
    /// still pulled; a push can no longer change them.
    ///
    /// - Throws: ``SyncServerError`` `notFound` when the space does not exist, `conflict` when it
    ///   has a schema, whose types are its schema's.
    public func setTypes(of space: String, to types: [String]) async throws {
        let types = try Self.checkedTypes(types)
        let rows = try await client.query(
            """
            UPDATE spaces SET types = CASE WHEN schema_version IS NULL THEN \(types) ELSE types END
            WHERE name = \(space) RETURNING schema_version IS NULL
            """, logger: logger)
        for try await (updated) in rows.decode(Bool.self) {
            if updated { return }
            throw Self.typesOfSchema(space)
        }
        throw SyncServerError(.notFound, "no space \"\(space)\"")
    }

    /// The types a space accepts, sorted.
    ///
    /// - Throws: ``SyncServerError`` `notFound` when the space does not exist.
    public func types(of space: String) async throws -> [String] {
        let rows = try await client.query("SELECT types FROM spaces WHERE name = \(space)", logger: logger)
        for try await (types) in rows.decode([String].self) { return types.sorted() }
        throw SyncServerError(.notFound, "no space \"\(space)\"")
    }

    /// Type names: 1 to 512 bytes, no space, comma or control character; sorted, each once.
    static func checkedTypes(_ types: [String]) throws(SyncServerError) -> [String] {
        for type in types {
            guard !type.isEmpty, type.utf8.count <= maximumNameLength,
                !type.unicodeScalars.contains(where: {
                    $0 == "," || CharacterSet.whitespacesAndNewlines.contains($0)
                        || CharacterSet.controlCharacters.contains($0)
                })
            else {
                throw SyncServerError(
                    .badRequest,
                    "a type name has 1 to \(maximumNameLength) bytes, without spaces or commas: \"\(type)\"")
            }
        }
        return Set(types).sorted()
    }

    /// Gives a user a role in a space, replacing the role it had.
    ///
    /// - Throws: ``SyncServerError`` `notFound` when the user or the space does not exist.
    public func grant(user: String, space: String, role: Role) async throws {
        let rows = try await client.query(
            """
            INSERT INTO grants (user_id, space_id, role)
            SELECT users.id, spaces.id, \(role.rawValue) FROM users, spaces
            WHERE users.name = \(user) AND spaces.name = \(space)
            ON CONFLICT (user_id, space_id) DO UPDATE SET role = excluded.role
            RETURNING 1
            """, logger: logger)
        for try await _ in rows { return }
        throw SyncServerError(.notFound, "no user \"\(user)\" or no space \"\(space)\"")
    }

    // MARK: Access

    /// Who a request is from, and what it may do in its space.
    struct Access: Sendable {
        var userID: Int64
        var userName: String
        var spaceID: Int64
        var spaceName: String
        var role: Role
        /// The types the space accepts.
        var types: Set<String>
        /// The version of the space's schema; nil, none.
        var schemaVersion: Int64?
        /// The highest version of a deletion compaction removed: an older cursor starts again.
        var compactedVersion: Int64 = 0
        /// The space's rules; nil, none.
        var spaceRules: SpaceRules?
        /// The key paths through links that subscriptions read (``PullSubscriptions/linkPaths``).
        var subscriptionPaths: Set<String> = []

        /// The rules that apply to this user: nil for an admin or in a space without rules.
        var rules: SpaceRules? { role == .admin ? nil : spaceRules }
    }

    /// Checks a bearer token and the user's grant in a space.
    ///
    /// - Throws: ``SyncServerError`` `unauthorized` for an unknown, expired or revoked token,
    ///   `notFound` for an unknown space, `forbidden` without a grant.
    func access(token: String?, space: String) async throws -> Access {
        guard let token, !token.isEmpty else { throw SyncServerError(.unauthorized, "no bearer token") }
        let hash = Self.hash(token)
        // One round trip: the token's user, and the space with the user's grant in it.
        let rows = try await client.query(
            """
            SELECT users.id, users.name, tokens.revoked_at IS NOT NULL, coalesce(tokens.expires_at <= now(), false),
                   spaces.id, grants.role, spaces.types, spaces.schema_version::bigint, spaces.compacted_version,
                   spaces.rules::text, spaces.subscription_paths
            FROM tokens JOIN users ON users.id = tokens.user_id
            LEFT JOIN spaces ON spaces.name = \(space)
            LEFT JOIN grants ON grants.space_id = spaces.id AND grants.user_id = users.id
            WHERE tokens.hash = \(hash)
            """, logger: logger)
        var found: (Int64, String, Bool, Bool, Int64?, String?, [String]?, Int64?, Int64?, String?, [String]?)?
        for try await row in rows.decode(
            (Int64, String, Bool, Bool, Int64?, String?, [String]?, Int64?, Int64?, String?, [String]?).self)
        {
            found = row
        }
        guard
            let (
                userID, userName, revoked, expired, spaceID, roleName, types, schemaVersion, compacted, rulesText, paths
            ) = found
        else {
            throw SyncServerError(.unauthorized, "the token is unknown")
        }
        guard !revoked else { throw SyncServerError(.unauthorized, "the token was revoked") }
        guard !expired else { throw SyncServerError(.unauthorized, "the token has expired") }
        guard let spaceID, let types else { throw SyncServerError(.notFound, "no space \"\(space)\"") }
        guard let roleName, let role = Role(rawValue: roleName) else {
            throw SyncServerError(.forbidden, "user \(userName) has no access to space \(space)")
        }
        let rules = try rulesText.map { text throws(SyncServerError) in
            try parsedRules.rules(space: spaceID, text: text)
        }
        return Access(
            userID: userID, userName: userName, spaceID: spaceID, spaceName: space, role: role, types: Set(types),
            schemaVersion: schemaVersion, compactedVersion: compacted ?? 0, spaceRules: rules,
            subscriptionPaths: Set(paths ?? []))
    }

    /// Adds the key paths through links that a device's subscriptions read to those of its
    /// space, so that pushes from now on give a new version to the objects that reach a changed
    /// property that way. At most ``PullSubscriptions/maximumPaths`` per space: past it, a
    /// path is not added (and its subscriptions follow linked changes late, as documented).
    func register(_ paths: Set<String>, access: Access) async throws {
        let new = paths.subtracting(access.subscriptionPaths)
        guard !new.isEmpty else { return }
        try await client.query(
            """
            UPDATE spaces SET subscription_paths = (
                SELECT array_agg(DISTINCT p ORDER BY p) FROM unnest(subscription_paths || \(Array(new))::text[]) AS p)
            WHERE id = \(access.spaceID)
              AND cardinality(subscription_paths) + \(new.count) <= \(PullSubscriptions.maximumPaths)
            """, logger: logger)
    }

    /// The answer to one change, as the protocol's module spells it.
    typealias Receipt = SyncWireReceipt

    // MARK: Pull

    /// One page of a pull: the objects as JSON text, the next cursor.
    struct Page: Sendable {
        var objects: [String]
        var cursor: Int64
        var hasMore: Bool
        /// The space's version when the device's walk from the beginning started (0 for a
        /// device that had a cursor before): what the rules refuse at or under it was never sent
        /// to the device, and needs no removal.
        var walkStart: Int64 = 0
        /// The space's version when the page was read (the cursor's, for a page of nothing):
        /// how far a device's walk has to go.
        var latestVersion: Int64 = 0
    }

    /// The objects of a space changed after a version, in version order. With rules, the page
    /// leaves out (or sends as removals) the objects the user may not read
    /// (``readableObjects(_:access:walkStart:)``): it may hold fewer objects than the limit, and none
    /// with a cursor that moved on.
    ///
    /// - Parameters:
    ///   - walkStart: The space's version when the device's walk from the beginning started,
    ///     from its cursor; nil for a pull from the beginning (this pull's is read).
    ///   - subscriptions: The device's queries; nil syncs the whole space.
    func pull(
        access: Access, after: Int64, limit: Int, walkStart: Int64? = nil, subscriptions: PullSubscriptions? = nil
    ) async throws -> Page {
        let withRules = access.rules != nil || subscriptions != nil
        let rows = try await client.query(
            """
            SELECT version, json_build_object(
                'object', json_build_object('type', type, 'id', local_id),
                'serverID', id::text, 'serverVersion', version, 'deleted', deleted, 'values', "values")::text,
                type, CASE WHEN \(withRules) THEN "values"::text ELSE '' END, deleted,
                (SELECT version FROM spaces WHERE id = \(access.spaceID)) AS space_version
            FROM objects WHERE space_id = \(access.spaceID) AND version > \(after)
            ORDER BY version LIMIT \(limit + 1)
            """, logger: logger)
        var objects: [(json: String, type: String, values: String, deleted: Bool, version: Int64)] = []
        var cursor = after
        var hasMore = false
        var start = walkStart ?? 0
        var latest = after
        for try await (version, json, type, values, deleted, spaceVersion) in rows.decode(
            (Int64, String, String, String, Bool, Int64).self)
        {
            if walkStart == nil { start = spaceVersion }
            latest = max(latest, spaceVersion)
            if objects.count == limit {
                // The one row over the limit: read to the end, so that the connection is free
                // before the rules read linked objects.
                hasMore = true
                continue
            }
            objects.append((json, type, values, deleted, version))
            cursor = version
        }
        let readable = try await readableObjects(
            objects, access: access, walkStart: start, subscriptions: subscriptions)
        return Page(objects: readable, cursor: cursor, hasMore: hasMore, walkStart: start, latestVersion: latest)
    }

    /// The current states of some objects, in the pull's form, for a device that needs the
    /// targets of its objects' links (docs/SYNC-PROTOCOL.md, "Subscriptions"): the live ones
    /// the user may read, whatever the device's subscriptions; the others are left out.
    func objects(named names: [SpaceObjectName], access: Access) async throws -> [String] {
        guard !names.isEmpty else { return [] }
        let rows = try await client.query(
            """
            SELECT json_build_object(
                'object', json_build_object('type', o.type, 'id', o.local_id),
                'serverID', o.id::text, 'serverVersion', o.version, 'deleted', o.deleted, 'values', o."values")::text,
                o.type, o."values"::text, o.version
            FROM unnest(\(names.map(\.type))::text[], \(names.map(\.id.text))::text[]) AS k(type, id)
            JOIN objects o ON o.space_id = \(access.spaceID) AND o.type = k.type AND o.local_id = k.id::jsonb
            WHERE NOT o.deleted ORDER BY o.version
            """, logger: logger)
        var found: [(json: String, type: String, values: String, deleted: Bool, version: Int64)] = []
        for try await (json, type, values, version) in rows.decode((String, String, String, Int64).self) {
            found.append((json, type, values, false, version))
        }
        // No removals: an object the rules refuse is left out (its version is under `Int64.max`).
        return try await readableObjects(found, access: access, walkStart: .max)
    }
}
