import Foundation
import LiveObjectsJSON
import LiveObjectsSyncProtocol
import Logging
import PostgresNIO

// A push in a few statements (docs/SYNC-PROTOCOL.md, "Pushing"): the space's row is locked once;
// the changes up to the next delete (a segment) are read with one statement, applied in memory
// one after the other in the push's order, and written with one statement; an applied delete
// then takes its object out of the space's lists of links, and the next segment is read.

extension SyncStore {
    /// Applies a push in one transaction: each key at most once, each change checked against the
    /// user's role and the space's schema (or, without one, its types), in this process: the
    /// checks add no query.
    ///
    /// - Throws: ``SyncServerError`` `forbidden` for a reader, `conflict` for a key already
    ///   applied to another object; the transaction is then rolled back whole.
    func push(_ request: PushRequest, access: Access) async throws -> [Receipt] {
        guard access.role != .reader else {
            throw SyncServerError(
                .forbidden, "user \(access.userName) may only read space \(access.spaceName)")
        }
        let logger = logger
        let schema = try await schema(for: access)
        return try await client.withTransaction(logger: logger) { connection in
            let locked = try await connection.query(
                "SELECT version FROM spaces WHERE id = \(access.spaceID) FOR UPDATE", logger: logger)
            var version: Int64 = 0
            for try await (current) in locked.decode(Int64.self) { version = current }
            let start = version
            var receipts: [Receipt] = []
            var rest = request.changes[...]
            while !rest.isEmpty {
                // A segment ends with a delete, which may change the lists of other objects.
                let end = rest.firstIndex { $0.changeKind == .delete }.map { $0 + 1 } ?? rest.endIndex
                var segment = PushSegment(
                    changes: rest[..<end], access: access, schema: schema, version: version)
                receipts += try await segment.run(connection, logger)
                version = segment.version
                rest = rest[end...]
            }
            if version != start {
                // The notification is delivered at commit, to every server process that listens.
                try await connection.query(
                    """
                    WITH counter AS (UPDATE spaces SET version = \(version) WHERE id = \(access.spaceID))
                    SELECT pg_notify(\(ChangeNotifier.channel), \(String(access.spaceID)))
                    """, logger: logger)
            }
            return receipts
        }
    }
}

/// An object of a space named in memory: its type and id (a number spelled as a whole number
/// when it is one, as PostgreSQL's JSONB compares them).
struct SpaceObjectName: Hashable {
    var type: String
    var id: JSONValue

    init(type: String, id: JSONValue) {
        self.type = type
        self.id = Self.canonical(id)
    }

    /// The target of a reference, or nil for a value that is not one.
    init?(reference: JSONValue) {
        guard let fields = reference.fields, case .string(let type)? = fields["type"], let id = fields["id"]
        else { return nil }
        self.init(type: type, id: id)
    }

    private static func canonical(_ id: JSONValue) -> JSONValue {
        switch id {
        case .number(let number):
            if number.int64Value == nil, let double = number.doubleValue, double.rounded() == double, abs(double) < 1e15
            {
                .int(Int64(double))
            } else {
                id
            }
        case .object(let members): .object(members.map { (key: $0.key, value: canonical($0.value)) })
        case .array(let items): .array(items.map(canonical))
        default: id
        }
    }
}

/// What the database holds for one change of a segment, read before the segment is applied.
struct StoredForChange {
    /// The receipt of an earlier push with the change's key: the object it named, the version,
    /// the outcome, and whether that object is the one the change names.
    var earlier: (objectID: Int64, version: Int64, outcome: String, sameObject: Bool)?
    /// The object the change names.
    var object: PushSegment.Object?
}

/// The changes of a push up to and including its next delete, applied in memory in order, then
/// written with one statement.
struct PushSegment {
    typealias Receipt = SyncStore.Receipt

    /// An object a change of the segment names, as the changes applied so far leave it.
    struct Object {
        /// The server id; negative for an object the segment creates (its id is drawn when the
        /// segment is written: -1 the first, -2 the second...).
        var id: Int64
        var deleted: Bool
        var createdBy: Int64
        var version: Int64
        /// The stored values, read when a change of the segment merges a list into them.
        var stored: [String: JSONValue]?
        /// The id as the change that creates the object spelled it (the row's `local_id`).
        var localID: String?
        /// What the segment writes: the values that replace the stored ones (`replaces`: a new
        /// object, or after a delete), or that are merged into them, property by property.
        var written: [String: JSONValue] = [:]
        var replaces = false
        /// Whether a change of the segment changed it.
        var changed = false

        /// The values the object has now.
        var values: [String: JSONValue] {
            replaces ? written : (stored ?? [:]).merging(written) { $1 }
        }
    }

    /// The answer to one change: final, or naming an object whose id is drawn at the end.
    enum Answer {
        case receipt(Receipt)
        case object(key: String, outcome: SyncReceiptOutcomeKind, objectID: Int64, version: Int64)
    }

    /// A change checked for text and id size, or the receipt refusing it.
    enum Entry {
        case checked(PushedChange)
        case refused(Receipt)
    }

    let entries: [Entry]
    let access: SyncStore.Access
    let schema: SpaceSchema?
    /// The space's version: the last one given.
    var version: Int64
    var objects: [SpaceObjectName: Object] = [:]
    /// The objects the segment creates, in order (object `-n` is `created[n - 1]`).
    var created: [SpaceObjectName] = []
    /// The references (by ``JSONValue/referenceKey``) of the segment's lists of links whose
    /// targets the database holds as deleted.
    var deletedTargets: Set<JSONValue> = []
    var answers: [Answer] = []
    /// The keys applied, with their receipts, to record.
    var applied: [(key: String, objectID: Int64, version: Int64, outcome: SyncReceiptOutcomeKind)] = []
    /// The object the segment's applied delete names: its references leave every list.
    var deletion: SpaceObjectName?
    /// The linked objects the write rules read, as the database holds them
    /// (``SyncStore/linkedValues(for:user:spaceID:pending:_:)``).
    var linked: [SpaceObjectName: [String: JSONValue]] = [:]

    init(changes: ArraySlice<PushedChange>, access: SyncStore.Access, schema: SpaceSchema?, version: Int64) {
        self.entries = changes.map(Self.entry)
        self.access = access
        self.schema = schema
        self.version = version
    }

    /// Reads, applies and writes the segment; returns its receipts.
    mutating func run(_ connection: PostgresConnection, _ logger: Logger) async throws -> [Receipt] {
        let stored = try await read(connection, logger)
        try await readLinked(stored, connection, logger)
        for index in entries.indices { try apply(index, stored[index]) }
        let ids = try await write(connection, logger)
        try await touchDependents(ids, connection, logger)
        if let deletion {
            try await SyncStore.dropReferences(
                toType: deletion.type, id: deletion.id, spaceID: access.spaceID, version: &version, connection,
                logger)
        }
        return answers.map { answer in
            switch answer {
            case .receipt(let receipt): return receipt
            case .object(let key, let outcome, let objectID, let version):
                return Receipt(
                    key: key, outcome: outcome, serverID: String(Self.resolved(objectID, ids)),
                    serverVersion: UInt64(version))
            }
        }
    }

    static func resolved(_ id: Int64, _ drawn: [Int64]) -> Int64 { id < 0 ? drawn[Int(-id) - 1] : id }

    /// Text PostgreSQL cannot keep, and ids over the limit, are refused before any query names
    /// them.
    private static func entry(_ pushed: PushedChange) -> Entry {
        func rejected(_ code: SyncServerError.Code, _ message: String) -> Entry {
            .refused(Receipt(key: pushed.key, outcome: .rejected, error: SyncWireError(code, message: message)))
        }
        if let place = pushed.nulProblem {
            return rejected(.invalidText, "\(place) holds U+0000 (NUL), which the server does not keep")
        }
        let change = pushed.normalized
        guard change.object.id.idSize <= SyncProtocolLimits.maximumIDBytes else {
            return rejected(
                .tooLarge,
                "the id of the \(change.object.type) takes \(change.object.id.idSize) bytes, over the server's limit of \(SyncProtocolLimits.maximumIDBytes)"
            )
        }
        return .checked(change)
    }

    /// The refusal of a change that does not fit the space's schema (or, without one, its
    /// types): for this change only.
    private func refusal(of change: PushedChange) -> Receipt? {
        func rejected(_ code: SyncServerError.Code, _ message: String) -> Receipt {
            Receipt(key: change.key, outcome: .rejected, error: SyncWireError(code, message: message))
        }
        if let schema {
            return schema.refusal(of: change).map { rejected($0.code, $0.message) }
        }
        // Without a schema, a list or dictionary must be a well-formed mixed one (a plain list
        // is one too), and so must a map's value of that shape: a device could not read one
        // nested too deep.
        for (name, value) in (change.values ?? [:]).sorted(by: { $0.key < $1.key }) {
            if PushedChange.isMixedShape(value), let problem = PushedChange.mixedProblem(value) {
                return rejected(.invalidValue, "\(change.object.type).\(name): \(problem)")
            }
            for entry in value["map"]?.arrayValue ?? [] {
                guard let pair = entry.arrayValue, pair.count == 2, PushedChange.isMixedShape(pair[1]),
                    let problem = PushedChange.mixedProblem(pair[1])
                else { continue }
                return rejected(.invalidValue, "\(change.object.type).\(name): \(problem)")
            }
        }
        guard let unknown = ([change.object.type] + change.linkedTypes).first(where: { !access.types.contains($0) })
        else { return nil }
        let declared = access.types.isEmpty ? "no types" : "the types " + access.types.sorted().joined(separator: ", ")
        return rejected(
            .unknownType, "space \(access.spaceName) does not accept type \(unknown): it declares \(declared)")
    }
}

// MARK: Applying in memory

extension PushSegment {
    /// Applies one change to the objects in memory, as the protocol orders it: a key applied
    /// before gets its receipt again, then the schema, the user's rights and the kind decide.
    private mutating func apply(_ index: Int, _ stored: StoredForChange?) throws {
        let change: PushedChange
        switch entries[index] {
        case .refused(let receipt):
            answers.append(.receipt(receipt))
            return
        case .checked(let checked): change = checked
        }
        if let earlier = stored?.earlier {
            guard earlier.sameObject else {
                throw SyncServerError(
                    .conflict, "the idempotency key \(change.key) was already applied to another object")
            }
            answers.append(
                .receipt(
                    Receipt(
                        key: change.key, outcome: SyncReceiptOutcomeKind(rawValue: earlier.outcome) ?? .applied,
                        serverID: String(earlier.objectID), serverVersion: UInt64(earlier.version))))
            return
        }
        if let refusal = refusal(of: change) {
            answers.append(.receipt(refusal))
            return
        }
        let name = SpaceObjectName(type: change.object.type, id: change.object.id)
        if objects[name] == nil, let object = stored?.object { objects[name] = object }
        if let rules = access.rules?.rules(for: name.type) {
            // A type with rules: its write rule, not the object's creator, decides.
            if let refusal = writeRefusal(change, name, rules) {
                answers.append(.receipt(refusal))
                return
            }
        } else if let object = objects[name], object.createdBy != access.userID, access.role != .admin {
            // Only an object read from the database can have another creator: its id is real.
            answers.append(
                .receipt(
                    Receipt(
                        key: change.key, outcome: .rejected, serverID: String(object.id),
                        error: SyncWireError(
                            .forbidden, message: "user \(access.userName) may change only the objects it created"))))
            return
        }
        switch change.changeKind {
        case .create, .delete: createOrDelete(change, name)
        case .update, nil: update(change, name)  // nil: refused by validate() before
        }
    }

    private mutating func createOrDelete(_ change: PushedChange, _ name: SpaceObjectName) {
        version += 1
        let isDelete = change.changeKind == .delete
        // Lists sent with a base are merged into the stored ones (SyncStore+Lists.swift).
        let values = isDelete ? [:] : valuesToStore(change, objects[name])
        if var object = objects[name] {
            if isDelete {
                object.written = [:]
                object.replaces = true
            } else {
                object.written.merge(values) { $1 }
            }
            object.deleted = isDelete
            object.version = version
            object.changed = true
            objects[name] = object
        } else {
            created.append(name)
            objects[name] = Object(
                id: -Int64(created.count), deleted: isDelete, createdBy: access.userID, version: version,
                localID: change.object.id.text, written: values, replaces: true, changed: true)
        }
        record(change, objectID: objects[name]!.id, outcome: .applied)
        if isDelete { deletion = name }
    }

    private mutating func update(_ change: PushedChange, _ name: SpaceObjectName) {
        guard var object = objects[name], !object.deleted else {
            // Nothing to update: the engine reports a conflict. Not recorded as applied when
            // the object never existed (there is no row to name).
            guard let object = objects[name] else {
                answers.append(
                    .receipt(
                        Receipt(
                            key: change.key, outcome: .deletedOnServer, serverID: "", serverVersion: UInt64(version))))
                return
            }
            record(change, objectID: object.id, outcome: .deletedOnServer)
            return
        }
        version += 1
        object.written.merge(valuesToStore(change, object)) { $1 }
        object.version = version
        object.changed = true
        objects[name] = object
        record(change, objectID: object.id, outcome: .applied)
    }

    private mutating func record(_ change: PushedChange, objectID: Int64, outcome: SyncReceiptOutcomeKind) {
        applied.append((change.key, objectID, version, outcome))
        answers.append(.object(key: change.key, outcome: outcome, objectID: objectID, version: version))
    }

    /// The values a create or an update stores: each list sent with a base merged into the
    /// object's list (when it has one), and, in every list of links, the references to objects
    /// deleted on the server left out (in a map of objects, their keys set to nil).
    private func valuesToStore(_ change: PushedChange, _ object: Object?) -> [String: JSONValue] {
        var values = change.values ?? [:]
        let bases = (change.bases ?? [:]).filter { values[$0.key] != nil }
        if !bases.isEmpty, let object, !object.deleted {
            let current = object.values
            let properties = schema?[change.object.type]?.properties ?? []
            for (name, base) in bases {
                let isSet = properties.contains { $0.name == name && $0.isSet }
                guard let stored = current[name], let edited = values[name],
                    let merged = SyncStore.mergedList(base: base, edited: edited, current: stored, isSet: isSet)
                else { continue }
                values[name] = merged
            }
        }
        for (name, value) in values where !value.containedReferences.isEmpty {
            values[name] = value.droppingReferences(isDeleted)
        }
        return values
    }

    /// Whether a reference's target is deleted: as the segment left it when a change of the
    /// segment named it, as the database holds it otherwise.
    private func isDeleted(_ reference: JSONValue) -> Bool {
        if let name = SpaceObjectName(reference: reference), let object = objects[name] { return object.deleted }
        return deletedTargets.contains(reference.referenceKey)
    }
}

// MARK: Reading and writing

extension PushSegment {
    /// Reads what the changes of the segment need in one statement: the receipts of their keys,
    /// the objects they name (with the values of those a list is merged into), and, in a second
    /// one when lists of links name objects, which of those are deleted.
    ///
    /// - Returns: By change index, what the database holds for the change.
    private mutating func read(_ connection: PostgresConnection, _ logger: Logger) async throws -> [Int:
        StoredForChange]
    {
        var indices: [Int] = []
        var keys: [String] = []
        var types: [String] = []
        var ids: [String] = []
        var names: [SpaceObjectName] = []
        var merging = Set<SpaceObjectName>()
        var targets = Set<JSONValue>()
        for (index, entry) in entries.enumerated() {
            guard case .checked(let change) = entry else { continue }
            let name = SpaceObjectName(type: change.object.type, id: change.object.id)
            indices.append(index)
            keys.append(change.key)
            types.append(change.object.type)
            ids.append(change.object.id.text)
            names.append(name)
            let values = change.values ?? [:]
            if (change.bases ?? [:]).keys.contains(where: { values[$0] != nil })
                || access.rules?.rules(for: name.type) != nil
            {
                // A merge, and a write rule, read the stored values.
                merging.insert(name)
            }
            for value in values.values { targets.formUnion(value.containedReferences.map(\.referenceKey)) }
        }
        guard !indices.isEmpty else { return [:] }
        let wants = names.map(merging.contains)
        let rows = try await connection.query(
            """
            SELECT k.ord, applied.object_id, applied.version, applied.outcome,
                   earlier.type = k.type AND earlier.local_id = k.id::jsonb,
                   o.id, o.deleted, o.created_by, CASE WHEN k.wants THEN o."values"::text END
            FROM unnest(\(keys)::text[], \(types)::text[], \(ids)::text[], \(wants)::bool[])
                 WITH ORDINALITY AS k(key, type, id, wants, ord)
            LEFT JOIN applied_changes applied ON applied.space_id = \(access.spaceID) AND applied.key = k.key
            LEFT JOIN objects earlier ON earlier.id = applied.object_id
            LEFT JOIN objects o ON o.space_id = \(access.spaceID) AND o.type = k.type AND o.local_id = k.id::jsonb
            """, logger: logger)
        var stored: [Int: StoredForChange] = [:]
        for try await (ord, appliedID, appliedVersion, outcome, same, id, deleted, createdBy, values) in rows.decode(
            (Int64, Int64?, Int64?, String?, Bool?, Int64?, Bool?, Int64?, String?).self)
        {
            var found = StoredForChange()
            if let appliedID, let appliedVersion, let outcome {
                found.earlier = (appliedID, appliedVersion, outcome, same ?? false)
            }
            if let id, let deleted, let createdBy {
                found.object = Object(
                    id: id, deleted: deleted, createdBy: createdBy, version: 0,
                    stored: try values.map(Self.decodedValues))
            }
            stored[indices[Int(ord) - 1]] = found
        }
        if !targets.isEmpty {
            deletedTargets = try await SyncStore.deletedObjects(
                among: Array(targets), spaceID: access.spaceID, connection, logger)
        }
        return stored
    }

    static func decodedValues(_ text: String) throws -> [String: JSONValue] {
        try JSONValue.canonical(parsing: text, "a stored object").fields ?? [:]
    }

    /// Writes the segment: draws the ids of the objects it creates, then, in one statement,
    /// inserts them, updates the others it changed and records the keys applied.
    ///
    /// - Returns: The ids drawn, in the order of ``created``.
    private func write(_ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64] {
        guard !applied.isEmpty else { return [] }
        var drawn: [Int64] = []
        if !created.isEmpty {
            let rows = try await connection.query(
                """
                SELECT nextval(pg_get_serial_sequence('objects', 'id')) FROM generate_series(1, \(created.count))
                """, logger: logger)
            for try await (id) in rows.decode(Int64.self) { drawn.append(id) }
            drawn.sort()
        }
        let new = created.map { objects[$0]! }
        let changed = objects.values.filter { $0.changed && $0.id > 0 }
        let space = access.spaceID
        try await connection.query(
            """
            WITH inserted AS (
                INSERT INTO objects (id, space_id, type, local_id, version, deleted, "values", created_by)
                SELECT new.id, \(space), new.type, new.local_id::jsonb, new.version, new.deleted, new.written::jsonb,
                       \(access.userID)
                FROM unnest(\(drawn)::bigint[], \(created.map(\.type))::text[], \(new.map { $0.localID ?? "" })::text[],
                            \(new.map(\.version))::bigint[], \(new.map(\.deleted))::bool[],
                            \(new.map { JSONValue.sortedObject($0.written).text })::text[])
                     AS new(id, type, local_id, version, deleted, written)
            ), updated AS (
                UPDATE objects SET deleted = u.deleted, version = u.version, changed_at = now(),
                    "values" = CASE WHEN u.replaces THEN u.written::jsonb ELSE objects."values" || u.written::jsonb END
                FROM unnest(\(changed.map(\.id))::bigint[], \(changed.map(\.version))::bigint[],
                            \(changed.map(\.deleted))::bool[], \(changed.map(\.replaces))::bool[],
                            \(changed.map { JSONValue.sortedObject($0.written).text })::text[])
                     AS u(id, version, deleted, replaces, written)
                WHERE objects.id = u.id
            )
            INSERT INTO applied_changes (space_id, key, object_id, version, outcome)
            SELECT \(space), r.key, r.object_id, r.version, r.outcome
            FROM unnest(\(applied.map(\.key))::text[], \(applied.map { Self.resolved($0.objectID, drawn) })::bigint[],
                        \(applied.map(\.version))::bigint[], \(applied.map(\.outcome.rawValue))::text[])
                 AS r(key, object_id, version, outcome)
            """, logger: logger)
        return drawn
    }
}

// MARK: Write rules

extension PushSegment {
    /// Gives a new version to the objects whose read rule, or a key path devices' subscriptions
    /// read, reaches an object the segment changed
    /// (``SyncStore/touchDependents(of:except:dependencies:spaceID:version:_:_:)``).
    private mutating func touchDependents(_ drawn: [Int64], _ connection: PostgresConnection, _ logger: Logger)
        async throws
    {
        guard access.spaceRules != nil || !access.subscriptionPaths.isEmpty, let schema else { return }
        let dependencies = Array(
            Set(access.spaceRules?.readDependencies(schema) ?? []).union(
                RuleDependency.subscriptions(access.subscriptionPaths, schema)))
        let changed = objects.filter(\.value.changed)
        guard !dependencies.isEmpty, !changed.isEmpty else { return }
        let ids = Set(changed.values.map { Self.resolved($0.id, drawn) })
        _ = try await SyncStore.touchDependents(
            of: changed.map { ($0.key, $0.value.replaces ? nil : Set($0.value.written.keys)) }, except: ids,
            dependencies: dependencies, spaceID: access.spaceID,
            version: &version, connection, logger)
    }

    /// Reads the linked objects the write rules of the segment's changes read: from the objects
    /// as stored, and as each change would leave them.
    private mutating func readLinked(
        _ stored: [Int: StoredForChange], _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        guard let rules = access.rules else { return }
        var checks: [(predicate: RulePredicate, values: [String: JSONValue])] = []
        // The objects the segment's changes name, as they would leave them: a later change's
        // rule may read them through a link.
        var pending: [SpaceObjectName: [String: JSONValue]] = [:]
        for (index, entry) in entries.enumerated() {
            guard case .checked(let change) = entry else { continue }
            let before = stored[index]?.object.flatMap { $0.deleted ? nil : $0.stored } ?? [:]
            let after = before.merging(change.values ?? [:]) { $1 }
            pending[SpaceObjectName(type: change.object.type, id: change.object.id)] = after
            guard let predicate = rules.rules(for: change.object.type)?.writePredicate else { continue }
            checks += [(predicate, before), (predicate, after)]
        }
        guard !checks.isEmpty else { return }
        let spaceID = access.spaceID
        linked = try await SyncStore.linkedValues(
            for: checks, user: access.userName, spaceID: spaceID, pending: { pending[$0] },
            { try await connection.query($0, logger: logger) })
    }

    /// The values of an object a rule's key path reaches: as the segment left it when a change
    /// of the segment named it, as the database holds it otherwise; nil for a deleted object or
    /// one not found.
    private func ruleValues(_ name: SpaceObjectName) -> [String: JSONValue]? {
        guard let object = objects[name] else { return linked[name] }
        if object.deleted { return nil }
        if object.replaces || object.stored != nil { return object.values }
        return (linked[name] ?? [:]).merging(object.written) { $1 }
    }

    /// The refusal of a change of a type with rules: its write rule must allow the object as it
    /// is (for an update or a delete of an object that exists) and as the change leaves it (for
    /// a create or an update). No write rule: only an admin changes the type.
    private func writeRefusal(_ change: PushedChange, _ name: SpaceObjectName, _ rules: SpaceRules.TypeRules)
        -> Receipt?
    {
        let object = objects[name]
        let live = object.flatMap { $0.deleted ? nil : $0 }
        func refused(_ message: String) -> Receipt {
            Receipt(
                key: change.key, outcome: .rejected, serverID: object.flatMap { $0.id > 0 ? String($0.id) : nil },
                error: SyncWireError(.forbidden, message: message))
        }
        let what = "\(name.type) \(name.id.text)"
        guard let predicate = rules.writePredicate else {
            return refused("\(name.type) has rules without a write rule: only an admin changes it")
        }
        let user = access.userName
        if let live, !predicate.allows(live.values, user: user, resolve: ruleValues) {
            return refused("the write rule of \(name.type) (\(rules.write ?? "")) refuses \(user) the \(what) as it is")
        }
        guard change.changeKind != .delete else { return nil }
        let after = (live?.values ?? [:]).merging(valuesToStore(change, live)) { $1 }
        if !predicate.allows(after, user: user, resolve: ruleValues) {
            return refused(
                "the write rule of \(name.type) (\(rules.write ?? "")) refuses \(user) the \(what) as the change leaves it"
            )
        }
        return nil
    }
}
