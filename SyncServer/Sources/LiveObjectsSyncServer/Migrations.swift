import Logging
import PostgresNIO

/// The schema, as numbered migrations applied in order at start, each in its own transaction
/// under an advisory lock (several servers starting at once apply each migration once).
enum Migrations {
    /// The migrations; append, never edit one that shipped.
    static let all: [(version: Int, statements: [String])] = [
        (
            1,
            [
                """
                CREATE TABLE users (
                    id bigserial PRIMARY KEY,
                    name text NOT NULL UNIQUE,
                    created_at timestamptz NOT NULL DEFAULT now())
                """,
                // Only the SHA-256 of a token is kept; a revoked token stays, marked.
                """
                CREATE TABLE tokens (
                    hash text PRIMARY KEY,
                    user_id bigint NOT NULL REFERENCES users ON DELETE CASCADE,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    revoked_at timestamptz)
                """,
                // `version` is the space's version counter: a push locks the row, so versions
                // follow commit order (docs/SYNC-PROTOCOL.md, "Versions and the cursor").
                """
                CREATE TABLE spaces (
                    id bigserial PRIMARY KEY,
                    name text NOT NULL UNIQUE,
                    version bigint NOT NULL DEFAULT 0,
                    created_at timestamptz NOT NULL DEFAULT now())
                """,
                """
                CREATE TABLE grants (
                    user_id bigint NOT NULL REFERENCES users ON DELETE CASCADE,
                    space_id bigint NOT NULL REFERENCES spaces ON DELETE CASCADE,
                    role text NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
                    PRIMARY KEY (user_id, space_id))
                """,
                // One row per object: its current state. `id` is the server id.
                """
                CREATE TABLE objects (
                    id bigserial PRIMARY KEY,
                    space_id bigint NOT NULL REFERENCES spaces ON DELETE CASCADE,
                    type text NOT NULL,
                    local_id jsonb NOT NULL,
                    version bigint NOT NULL,
                    deleted boolean NOT NULL DEFAULT false,
                    "values" jsonb NOT NULL DEFAULT '{}',
                    created_by bigint NOT NULL REFERENCES users,
                    UNIQUE (space_id, type, local_id))
                """,
                "CREATE INDEX objects_by_version ON objects (space_id, version)",
                // The keys applied, with the receipt given.
                """
                CREATE TABLE applied_changes (
                    space_id bigint NOT NULL REFERENCES spaces ON DELETE CASCADE,
                    key text NOT NULL,
                    object_id bigint NOT NULL REFERENCES objects ON DELETE CASCADE,
                    version bigint NOT NULL,
                    outcome text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (space_id, key))
                """,
            ]
        ),
        (
            2,
            [
                // A token may expire; NULL never does.
                "ALTER TABLE tokens ADD COLUMN expires_at timestamptz",
                // The types a space accepts in a push: none until declared
                // (`liveobjects-sync-server space types`). A space made before this version
                // accepts the types it already holds, so that its devices keep syncing.
                "ALTER TABLE spaces ADD COLUMN types text[] NOT NULL DEFAULT '{}'",
                """
                UPDATE spaces SET types = coalesce(
                    (SELECT array_agg(DISTINCT type ORDER BY type) FROM objects WHERE objects.space_id = spaces.id), '{}')
                """,
            ]
        ),
        (
            3,
            [
                // A space's schema, versioned (docs/SYNC-PROTOCOL.md, "Schemas"): each upload
                // that changes it adds a version. `spaces.schema_version` is the one in force;
                // NULL, none (the space checks type names only, as before this version).
                """
                CREATE TABLE space_schemas (
                    space_id bigint NOT NULL REFERENCES spaces ON DELETE CASCADE,
                    version int NOT NULL,
                    schema jsonb NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (space_id, version))
                """,
                "ALTER TABLE spaces ADD COLUMN schema_version int",
            ]
        ),
        (
            4,
            [
                // Compaction (docs/SYNC-PROTOCOL.md, "Compaction"): when an object last changed,
                // so that a deletion older than the horizon can go, and per space the highest
                // version of a deletion removed, under which a cursor must start again.
                "ALTER TABLE objects ADD COLUMN changed_at timestamptz NOT NULL DEFAULT now()",
                "ALTER TABLE spaces ADD COLUMN compacted_version bigint NOT NULL DEFAULT 0",
                "CREATE INDEX objects_deleted_by_time ON objects (space_id, changed_at) WHERE deleted",
                "CREATE INDEX applied_changes_by_time ON applied_changes (space_id, applied_at)",
            ]
        ),
        (
            5,
            [
                // A space's read and write rules, by type (docs/SYNC-PROTOCOL.md, "Rules"); NULL,
                // none: the roles alone decide.
                "ALTER TABLE spaces ADD COLUMN rules jsonb"
            ]
        ),
        (
            6,
            [
                // The key paths through links that devices' subscriptions have read, as
                // "Type:link.property" (docs/SYNC-PROTOCOL.md, "Subscriptions"): a push gives a
                // new version to the objects that reach a changed property that way.
                "ALTER TABLE spaces ADD COLUMN subscription_paths text[] NOT NULL DEFAULT '{}'"
            ]
        ),
    ]

    /// The advisory lock key of the migrations (any constant).
    static let lockKey: Int64 = 0x4C_4F_53_59_4E_43

    /// Applies the migrations the database lacks.
    ///
    /// - Returns: The versions applied now.
    @discardableResult
    static func apply(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
        }
        var applied: [Int] = []
        for migration in all {
            let done = try await client.withTransaction(logger: logger) { connection -> Bool in
                try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
                let rows = try await connection.query(
                    "SELECT 1 FROM schema_migrations WHERE version = \(migration.version)", logger: logger)
                for try await _ in rows { return false }
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (version) VALUES (\(migration.version))", logger: logger)
                return true
            }
            if done { applied.append(migration.version) }
        }
        return applied
    }
}
