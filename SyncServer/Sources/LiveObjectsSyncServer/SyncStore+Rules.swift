import Foundation
import LiveObjectsJSON
import Logging
import PostgresNIO
import Synchronization

// A space's read and write rules (docs/SYNC-PROTOCOL.md, "Rules"): stored as JSON in
// `spaces.rules`, read with every request's access (one column more in its one query), parsed
// once per text by `RulesCache`, checked per change by the push (`PushSegment`) and per object by
// the pull (`SyncStore.readableObjects`).

/// The rules a process has parsed, by space: parsed again only when their text changes.
final class RulesCache: Sendable {
    private let entries = Mutex<[Int64: (text: String, rules: SpaceRules)]>([:])

    func rules(space: Int64, text: String) throws(SyncServerError) -> SpaceRules {
        if let found = entries.withLock({ $0[space] }), found.text == text { return found.rules }
        let rules = try SpaceRules.parse(Data(text.utf8))
        entries.withLock { $0[space] = (text, rules) }
        return rules
    }
}

extension SyncStore {
    /// Sets a space's rules, replacing the ones it had; empty rules remove them (the roles alone
    /// decide again).
    ///
    /// - Throws: ``SyncServerError`` `notFound` for an unknown space, `badRequest` for rules of
    ///   a space without a schema (rules name its properties) or that do not fit it
    ///   (``SpaceRules/checked(against:)``).
    public func setRules(of space: String, to rules: SpaceRules) async throws {
        if !rules.isEmpty {
            guard let (_, schema) = try await schema(of: space) else {
                throw SyncServerError(
                    .badRequest,
                    "space \(space) has no schema, and rules name its properties: upload one first (space schema \(space) --file FILE)"
                )
            }
            try rules.checked(against: schema)
        }
        let text: String? = rules.isEmpty ? nil : rules.json()
        let rows = try await client.query(
            "UPDATE spaces SET rules = \(text)::jsonb WHERE name = \(space) RETURNING 1", logger: logger)
        for try await _ in rows { return }
        throw SyncServerError(.notFound, "no space \"\(space)\"")
    }

    /// A space's rules; empty when it has none.
    ///
    /// - Throws: ``SyncServerError`` `notFound` for an unknown space.
    public func rules(of space: String) async throws -> SpaceRules {
        let rows = try await client.query("SELECT rules::text FROM spaces WHERE name = \(space)", logger: logger)
        for try await (text) in rows.decode(String?.self) {
            guard let text else { return SpaceRules(types: [:]) }
            return try SpaceRules.parse(Data(text.utf8))
        }
        throw SyncServerError(.notFound, "no space \"\(space)\"")
    }

    /// The live objects of a space, by name, with their values; the objects not found (never
    /// made, or deleted) are left out.
    static func liveValues(
        of names: Set<SpaceObjectName>, spaceID: Int64,
        _ query: (PostgresQuery) async throws -> PostgresRowSequence
    ) async throws -> [SpaceObjectName: [String: JSONValue]] {
        guard !names.isEmpty else { return [:] }
        let list = Array(names)
        let rows = try await query(
            """
            SELECT o.type, o.local_id::text, o."values"::text
            FROM unnest(\(list.map(\.type))::text[], \(list.map(\.id.text))::text[]) AS k(type, id)
            JOIN objects o ON o.space_id = \(spaceID) AND o.type = k.type AND o.local_id = k.id::jsonb
            WHERE NOT o.deleted
            """)
        var found: [SpaceObjectName: [String: JSONValue]] = [:]
        for try await (type, id, values) in rows.decode((String, String, String).self) {
            let name = SpaceObjectName(type: type, id: try JSONValue.canonical(parsing: id, "a stored id"))
            found[name] = try PushSegment.decodedValues(values)
        }
        return found
    }

    /// Reads the linked objects that rules need to decide about some objects: evaluates each rule
    /// with what is known, reads the linked objects it asked for and did not have, and again,
    /// until a round asks for nothing new (a key path is at most
    /// ``RulePredicate/maximumPathLength`` long, so this ends in as many rounds at most).
    ///
    /// - Parameters:
    ///   - checks: The rules and the values each is evaluated on.
    ///   - pending: The values of an object the database does not hold that the walk may go on
    ///     through (one a push creates).
    static func linkedValues(
        for checks: [(predicate: RulePredicate, values: [String: JSONValue])], user: String, spaceID: Int64,
        pending: (SpaceObjectName) -> [String: JSONValue]?,
        _ query: (PostgresQuery) async throws -> PostgresRowSequence
    ) async throws -> [SpaceObjectName: [String: JSONValue]] {
        var loaded: [SpaceObjectName: [String: JSONValue]] = [:]
        var asked = Set<SpaceObjectName>()
        for _ in 0...RulePredicate.maximumPathLength {
            var wanted = Set<SpaceObjectName>()
            for check in checks {
                _ = check.predicate.allows(check.values, user: user) { name in
                    if let value = loaded[name] { return value }
                    if asked.contains(name) { return pending(name) }
                    wanted.insert(name)
                    return nil
                }
            }
            guard !wanted.isEmpty else { break }
            asked.formUnion(wanted)
            loaded.merge(try await liveValues(of: wanted, spaceID: spaceID, query)) { $1 }
        }
        return loaded
    }

    /// The objects of a pull page the user may read and that match the device's subscriptions,
    /// the others turned into removals: an object of a type with rules whose read rule refuses
    /// it, or one that matches none of the subscriptions, is sent as a hidden removal (deleted,
    /// `hidden`, no values), so that a device that has it removes it, but not when the device
    /// cannot have it: its version is at or under the start of the device's walk from the
    /// beginning (it has not changed since the walk began, so the walk meets it once, as it is
    /// now). A deleted object is sent as a removal (not hidden, no values), but left out at or under
    /// the walk's start.
    ///
    /// - Parameters:
    ///   - rows: The page's rows: the object as JSON text, its type and values, whether it is
    ///     deleted, its version.
    ///   - walkStart: The space's version when the device's walk from the beginning started; 0
    ///     for a device that pulled before.
    ///   - subscriptions: The device's queries; nil syncs the whole space.
    func readableObjects(
        _ rows: [(json: String, type: String, values: String, deleted: Bool, version: Int64)], access: Access,
        walkStart: Int64, subscriptions: PullSubscriptions? = nil
    ) async throws -> [String] {
        let rules = access.rules
        guard rules != nil || subscriptions != nil else { return rows.map(\.json) }
        var parsed: [Int: [String: JSONValue]] = [:]
        var checks: [(predicate: RulePredicate, values: [String: JSONValue])] = []
        for (index, row) in rows.enumerated() where !row.deleted {
            let typeRules = rules?.rules(for: row.type)
            let queries = subscriptions?.queries(of: row.type)
            guard typeRules != nil || queries != nil else { continue }
            let values = try PushSegment.decodedValues(row.values)
            parsed[index] = values
            if let predicate = typeRules?.readPredicate { checks.append((predicate, values)) }
            for case let predicate? in queries ?? [] { checks.append((predicate, values)) }
        }
        let logger = logger
        let client = client
        let linked = try await Self.linkedValues(
            for: checks, user: access.userName, spaceID: access.spaceID, pending: { _ in nil },
            { try await client.query($0, logger: logger) })
        var objects: [String] = []
        for (index, row) in rows.enumerated() {
            let filtered = rules?.rules(for: row.type) != nil || subscriptions != nil
            guard filtered else {
                objects.append(row.json)
                continue
            }
            if row.deleted {
                if row.version > walkStart { objects.append(try Self.removal(of: row.json, hidden: false)) }
                continue
            }
            let user = access.userName
            let values = parsed[index] ?? [:]
            let readable = rules?.mayRead(row.type, values, user: user, resolve: { linked[$0] }) ?? true
            let matching =
                readable && (subscriptions?.matches(row.type, values, user: user, resolve: { linked[$0] }) ?? true)
            if matching {
                objects.append(row.json)
            } else if row.version > walkStart {
                objects.append(try Self.removal(of: row.json))
            }
        }
        return objects
    }

    /// An object of a pull as a removal: deleted, without values; `hidden` when the server still
    /// has it (the user may not read it, or it matches no subscription).
    static func removal(of json: String, hidden: Bool = true) throws -> String {
        var fields = try JSONValue.canonical(parsing: json, "a pulled object").fields ?? [:]
        fields["deleted"] = .bool(true)
        if hidden { fields["hidden"] = .bool(true) }
        fields["values"] = .object([])
        return JSONValue.sortedObject(fields).text
    }
}

// MARK: Objects whose readability follows another's

/// A way a read rule reads another object: from an object of `hops[0].type`, through the links
/// `hops[0].property`, `hops[1].property`... to an object of `target`, whose property `reads` it
/// reads. A change of that property (or the target's creation or deletion) may change who may
/// read the objects it is reached from.
struct RuleDependency: Hashable, Sendable {
    var hops: [(type: String, property: String)]
    var target: String
    var reads: String

    static func == (lhs: RuleDependency, rhs: RuleDependency) -> Bool {
        lhs.target == rhs.target && lhs.reads == rhs.reads && lhs.hops.map(\.type) == rhs.hops.map(\.type)
            && lhs.hops.map(\.property) == rhs.hops.map(\.property)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(target)
        hasher.combine(reads)
        for hop in hops {
            hasher.combine(hop.type)
            hasher.combine(hop.property)
        }
    }
}

extension SpaceRules {
    /// Every way the read rules read other objects, by the schema's links.
    func readDependencies(_ schema: SpaceSchema) -> [RuleDependency] {
        var paths: [(type: String, path: [String])] = []
        for (type, rules) in types {
            for comparison in rules.readPredicate?.comparisons ?? [] { paths.append((type, comparison.path)) }
        }
        return RuleDependency.all(paths, schema)
    }
}

extension RuleDependency {
    /// Every way key paths from objects of a type read other objects, by the schema's links.
    static func all(_ paths: [(type: String, path: [String])], _ schema: SpaceSchema) -> [RuleDependency] {
        let byName = Dictionary(schema.types.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var found = Set<RuleDependency>()
        for (type, path) in paths {
            var hops: [(type: String, property: String)] = []
            var current = type
            for (index, name) in path.dropLast().enumerated() {
                guard let property = byName[current]?.properties.first(where: { $0.name == name }),
                    let target = property.target
                else { break }
                hops.append((current, name))
                current = target
                found.insert(RuleDependency(hops: hops, target: current, reads: path[index + 1]))
            }
        }
        return Array(found)
    }

    /// The ways the key paths that subscriptions read (`Type:link.property`) read other objects.
    static func subscriptions(_ paths: Set<String>, _ schema: SpaceSchema) -> [RuleDependency] {
        all(
            paths.compactMap { text in
                guard let colon = text.firstIndex(of: ":") else { return nil }
                let path = text[text.index(after: colon)...].split(separator: ".").map(String.init)
                return (String(text[..<colon]), path)
            }, schema)
    }
}

extension SyncStore {
    /// The live objects of a type whose link (to-one or list) names one of the targets.
    static func objectsLinking(
        type: String, property: String, to targets: [SpaceObjectName], spaceID: Int64,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [(id: Int64, name: SpaceObjectName)] {
        guard !targets.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            SELECT DISTINCT o.id, o.local_id::text FROM objects o,
                 unnest(\(targets.map(\.type))::text[], \(targets.map(\.id.text))::text[]) AS k(type, id)
            WHERE o.space_id = \(spaceID) AND o.type = \(type) AND NOT o.deleted AND (
                (o."values"->\(property)->'ref'->>'type' = k.type AND o."values"->\(property)->'ref'->'id' = k.id::jsonb)
                OR (jsonb_typeof(o."values"->\(property)->'refs') = 'array' AND EXISTS (
                    SELECT 1 FROM jsonb_array_elements(o."values"->\(property)->'refs') r
                    WHERE r->>'type' = k.type AND r->'id' = k.id::jsonb)))
            """, logger: logger)
        var found: [(id: Int64, name: SpaceObjectName)] = []
        for try await (id, localID) in rows.decode((Int64, String).self) {
            found.append(
                (id, SpaceObjectName(type: type, id: try JSONValue.canonical(parsing: localID, "a stored id"))))
        }
        return found
    }

    /// Gives a new version to every object whose read rule reads a changed property of one of the
    /// changed objects through links (a task of a board whose members changed), but those the
    /// push changed itself: every device pulls them again, and gets each as its rules now say
    /// (the object, or its removal).
    ///
    /// - Parameter changed: The objects changed, each with the properties changed; nil for an
    ///   object created or deleted.
    /// - Returns: How many objects were given a version.
    static func touchDependents(
        of changed: [(name: SpaceObjectName, properties: Set<String>?)], except: Set<Int64>,
        dependencies: [RuleDependency], spaceID: Int64, version: inout Int64, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> Int {
        var touched = Set<Int64>()
        for dependency in dependencies {
            var names = changed.filter {
                $0.name.type == dependency.target && $0.properties?.contains(dependency.reads) != false
            }.map(\.name)
            var ids: [Int64] = []
            for hop in dependency.hops.reversed() where !names.isEmpty {
                let found = try await objectsLinking(
                    type: hop.type, property: hop.property, to: names, spaceID: spaceID, connection, logger)
                names = found.map(\.name)
                ids = found.map(\.id)
            }
            touched.formUnion(ids.filter { !except.contains($0) })
        }
        guard !touched.isEmpty else { return 0 }
        let ordered = touched.sorted()
        let versions = ordered.indices.map { version + 1 + Int64($0) }
        try await connection.query(
            """
            UPDATE objects SET version = t.version, changed_at = now()
            FROM unnest(\(ordered)::bigint[], \(versions)::bigint[]) AS t(id, version) WHERE objects.id = t.id
            """, logger: logger)
        version += Int64(ordered.count)
        return ordered.count
    }
}
