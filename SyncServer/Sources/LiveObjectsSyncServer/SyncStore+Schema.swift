import Foundation
import LiveObjectsJSON
import LiveObjectsSyncProtocol
import Logging
import PostgresNIO
import Synchronization

/// The schemas a process has read, by space: a schema version never changes once stored, so a
/// push reads its space's schema from the database once per version.
final class SchemaCache: Sendable {
    private let entries = Mutex<[Int64: (version: Int64, schema: SpaceSchema)]>([:])

    func schema(space: Int64, version: Int64) -> SpaceSchema? {
        entries.withLock { entries in entries[space].flatMap { $0.version == version ? $0.schema : nil } }
    }

    func keep(_ schema: SpaceSchema, space: Int64, version: Int64) {
        entries.withLock { $0[space] = (version, schema) }
    }
}

/// What uploading a schema did.
public struct SchemaUpload: Sendable, Hashable {
    /// The version in force after the upload.
    public var version: Int
    /// Whether the upload added this version (false: the schema was the one in force).
    public var isNew: Bool
}

extension SyncStore {
    /// Sets a space's schema: the first, or a new version that only adds to the one in force.
    /// The space's types become the schema's.
    ///
    /// - Throws: ``SyncServerError`` `badRequest` for a schema that is not valid
    ///   (``SpaceSchema/checked()``) or that breaks the one in force
    ///   (``SpaceSchema/breakingChanges(to:)``, every problem named), `notFound` for an unknown
    ///   space.
    public func setSchema(of space: String, to schema: SpaceSchema) async throws -> SchemaUpload {
        let schema = try schema.checked()
        do {
            return try await upload(schema, to: space)
        } catch let error as PostgresTransactionError where error.closureError is SyncServerError {
            throw error.closureError as! SyncServerError
        }
    }

    private func upload(_ schema: SpaceSchema, to space: String) async throws -> SchemaUpload {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                SELECT spaces.id, spaces.schema_version::bigint, space_schemas.schema::text FROM spaces
                LEFT JOIN space_schemas ON space_schemas.space_id = spaces.id
                                       AND space_schemas.version = spaces.schema_version
                WHERE spaces.name = \(space) FOR UPDATE OF spaces
                """, logger: logger)
            var found: (Int64, Int64?, String?)?
            for try await row in rows.decode((Int64, Int64?, String?).self) { found = row }
            guard let (spaceID, current, text) = found else {
                throw SyncServerError(.notFound, "no space \"\(space)\"")
            }
            if let current, let text {
                let old = try SpaceSchema.parse(Data(text.utf8))
                if old == schema { return SchemaUpload(version: Int(current), isNew: false) }
                let problems = old.breakingChanges(to: schema)
                guard problems.isEmpty else {
                    throw SyncServerError(
                        .badRequest,
                        "the schema would break version \(current) of space \(space), which devices and stored "
                            + "objects follow: " + problems.joined(separator: "; ")
                            + ". A schema may add types, and optional properties or lists.")
                }
            }
            let version = (current ?? 0) + 1
            let types = schema.types.map(\.name)
            try await connection.query(
                """
                INSERT INTO space_schemas (space_id, version, schema)
                VALUES (\(spaceID), \(Int32(version)), \(schema.json)::jsonb)
                """, logger: logger)
            try await connection.query(
                "UPDATE spaces SET schema_version = \(Int32(version)), types = \(types) WHERE id = \(spaceID)",
                logger: logger)
            return SchemaUpload(version: Int(version), isNew: true)
        }
    }

    /// A space's schema in force and its version; nil when the space has none.
    ///
    /// - Throws: ``SyncServerError`` `notFound` for an unknown space.
    public func schema(of space: String) async throws -> (version: Int, schema: SpaceSchema)? {
        let rows = try await client.query(
            """
            SELECT spaces.schema_version::bigint, space_schemas.schema::text FROM spaces
            LEFT JOIN space_schemas ON space_schemas.space_id = spaces.id AND space_schemas.version = spaces.schema_version
            WHERE spaces.name = \(space)
            """, logger: logger)
        for try await (version, text) in rows.decode((Int64?, String?).self) {
            guard let version, let text else { return nil }
            return (Int(version), try SpaceSchema.parse(Data(text.utf8)))
        }
        throw SyncServerError(.notFound, "no space \"\(space)\"")
    }

    /// The schema a push to the space is checked against, read once per version.
    func schema(for access: Access) async throws -> SpaceSchema? {
        guard let version = access.schemaVersion else { return nil }
        if let schema = schemas.schema(space: access.spaceID, version: version) { return schema }
        let rows = try await client.query(
            """
            SELECT schema::text FROM space_schemas WHERE space_id = \(access.spaceID) AND version = \(Int32(version))
            """, logger: logger)
        for try await (text) in rows.decode(String.self) {
            let schema = try SpaceSchema.parse(Data(text.utf8))
            schemas.keep(schema, space: access.spaceID, version: version)
            return schema
        }
        throw SyncServerError(.internal, "space \(access.spaceName) has no schema version \(version)")
    }

    /// The stored objects of a space that do not fit its schema (stored before the space had
    /// one): one line each, `Card {"string": "c1"}: unknownProperty: …`, sorted. A deleted
    /// object is checked for its type and id, which every pull still sends. A device pulling
    /// such an object may fail to apply it: an admin repairs one with fitting values by pushing
    /// it again, or removes them all (`removing`).
    ///
    /// - Parameter removing: Whether to remove the objects that do not fit from the database
    ///   (their rows, not a deletion that devices pull): the only repair of an object whose id
    ///   does not fit, since no push can name it. An id only not in NFC is reported, not removed.
    /// - Throws: ``SyncServerError`` `notFound` for an unknown space, `badRequest` for a space
    ///   without a schema.
    public func check(space: String, removing: Bool = false) async throws -> [String] {
        guard let (_, schema) = try await schema(of: space) else {
            throw SyncServerError(
                .badRequest, "space \(space) has no schema to check against: space schema \(space) --file FILE")
        }
        let rows = try await client.query(
            """
            SELECT objects.id, objects.type, objects.local_id::text, objects.deleted, objects."values"::text
            FROM objects JOIN spaces ON spaces.id = objects.space_id
            WHERE spaces.name = \(space) ORDER BY objects.id
            """, logger: logger)
        var problems: [String] = []
        var misfits: [Int64] = []
        for try await (rowID, type, id, deleted, values) in rows.decode((Int64, String, String, Bool, String).self) {
            let name = "\(type) \(id)\(deleted ? " (deleted)" : "")"
            guard let idValue = try? JSONValue.canonical(parsing: id, "a stored id"),
                let object = (try? JSONValue.canonical(parsing: values, "a stored object"))?.fields
            else {
                problems.append("\(name): \(SyncServerError.Code.invalidValue): not readable as JSON values")
                misfits.append(rowID)
                continue
            }
            let change = PushedChange(
                key: "check", object: .init(type: type, id: idValue), serverID: nil,
                kind: (deleted ? SyncChangeKind.delete : .create).rawValue, values: object)
            if let refusal = schema.refusal(of: change) {
                problems.append("\(name): \(refusal.code): \(refusal.message)")
                misfits.append(rowID)
            } else if change.normalized.object.id != idValue {
                problems.append("\(name): \(SyncServerError.Code.invalidValue): the id is not in NFC")
            }
        }
        if removing, !misfits.isEmpty {
            try await client.query("DELETE FROM objects WHERE id = ANY(\(misfits))", logger: logger)
        }
        return problems.sorted()
    }
}
