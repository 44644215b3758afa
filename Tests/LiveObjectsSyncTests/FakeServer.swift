import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport

// The models (Holder, Card with its large photo) are LiveObjectsSyncTestSupport's, shared with
// the sync server's tests.

let syncTypes: [Object.Type] = [Holder.self, Card.self]

struct ServerUnavailable: Error {}

/// The faults a fake server injects, each with a probability from 0 to 1.
struct Faults: Sendable {
    /// A request fails before it is applied.
    var failBefore = 0.0
    /// A request is applied but its answer is lost.
    var failAfter = 0.0
    /// A push is applied twice (a duplicated request).
    var duplicate = 0.0
    /// An old push request is delivered again before this one (a delayed duplicate).
    var replayOld = 0.0
    /// The changes of a push are applied in a random order, and pulls answer in random order
    /// with repeats.
    var reorder = false
    /// Yields a few times before answering (other tasks run meanwhile).
    var delay = false

    static let none = Faults()
}

/// An in-process server: records by object id, server ids, versions, idempotency keys; faults on
/// demand. Another device's edits are made with ``edit(_:_:)`` and ``delete(_:)``.
actor FakeServer: SyncTransport {
    struct Record: Sendable {
        var serverID: String
        var version: UInt64
        var values: [String: SyncValue]
        var isDeleted = false
    }

    /// Lists some tests read as strings: a list of links as its targets' keys.
    func listValue(_ id: SyncObjectID, _ property: String) -> [String]? {
        guard let value = records[id]?.values[property] else { return nil }
        switch value {
        case .references(let targets): return targets.map { $0.object.primaryKey.description }
        case .value(.list(let items)): return items.map(\.description)
        default: return nil
        }
    }

    private(set) var records: [SyncObjectID: Record] = [:]
    private var receipts: [String: SyncReceipt] = [:]
    /// How many times each idempotency key was applied.
    private(set) var applications: [String: Int] = [:]
    /// How many requests carried each key.
    private(set) var requestsPerKey: [String: Int] = [:]
    /// Changes applied, in order.
    private(set) var applied: [SyncChange] = []
    /// References to objects the server did not have when a change arrived.
    private(set) var orderViolations: [String] = []
    private(set) var pushCount = 0
    private(set) var pullCount = 0
    private var version: UInt64 = 0
    private var nextID = 1
    private var old: [[SyncChange]] = []
    var faults: Faults
    /// Requests that fail outright, before the faults are drawn.
    var failNext = 0
    /// Pushes holding a change of this type fail.
    var refusedType: String?
    /// The properties (by name, of any type) the server's schema declares as sets: merged per
    /// member (docs/SYNC-PROTOCOL.md, "Sets").
    var setProperties: Set<String> = []
    /// A broken server for the tests that must catch one: a map sent with a base replaces the
    /// stored map whole instead of being merged per key.
    var replacesMapsWhole = false
    private var rng: SeededRandomNumberGenerator

    init(seed: UInt64 = 1, faults: Faults = .none) {
        rng = SeededRandomNumberGenerator(seed: seed)
        self.faults = faults
    }

    func setFaults(_ faults: Faults) { self.faults = faults }

    func declareSets(_ names: Set<String>) { setProperties = names }
    func replaceMapsWhole(_ flag: Bool) { replacesMapsWhole = flag }
    func failNextRequests(_ count: Int) { failNext = count }
    func refuse(_ typeName: String?) { refusedType = typeName }

    private func chance(_ p: Double) -> Bool { p > 0 && Double(rng.next() % 1_000_000) / 1_000_000 < p }

    private func maybeDelay() async {
        guard faults.delay else { return }
        for _ in 0..<Int(rng.next() % 4) { await Task.yield() }
    }

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
        pushCount += 1
        for change in changes { requestsPerKey[change.idempotencyKey, default: 0] += 1 }
        await maybeDelay()
        if failNext > 0 {
            failNext -= 1
            throw ServerUnavailable()
        }
        if chance(faults.failBefore) { throw ServerUnavailable() }
        if let refusedType, changes.contains(where: { $0.object.typeName == refusedType }) { throw ServerUnavailable() }
        if !old.isEmpty, chance(faults.replayOld) {
            let stale = old[Int(rng.next() % UInt64(old.count))]
            for change in stale { _ = apply(change) }
        }
        var order = changes
        if faults.reorder { order.shuffle(using: &rng) }
        var answers = order.map { apply($0) }
        if chance(faults.duplicate) { answers = order.map { apply($0) } }
        old.append(changes)
        if chance(faults.failAfter) { throw ServerUnavailable() }
        if faults.reorder { answers.shuffle(using: &rng) }
        return answers
    }

    func pull(after cursor: String?) async throws -> SyncPull {
        pullCount += 1
        await maybeDelay()
        if failNext > 0 {
            failNext -= 1
            throw ServerUnavailable()
        }
        if chance(faults.failBefore) { throw ServerUnavailable() }
        let since = cursor.flatMap { UInt64($0) } ?? 0
        if cursor != nil, since < compactedVersion {
            throw SyncHTTPError(.resetRequired, "the cursor is older than the deletions kept", status: 410)
        }
        var changes = records.filter { $0.value.version > since }.map { id, record in
            ServerChange(
                object: id, serverID: record.serverID, serverVersion: record.version, isDeleted: record.isDeleted,
                values: record.values)
        }
        changes.sort { $0.serverVersion < $1.serverVersion }
        if faults.reorder {
            changes += changes.filter { _ in chance(0.3) }
            changes.shuffle(using: &rng)
        }
        if chance(faults.failAfter) { throw ServerUnavailable() }
        return SyncPull(changes: changes, cursor: String(version))
    }

    private func apply(_ change: SyncChange) -> SyncReceipt {
        if let receipt = receipts[change.idempotencyKey] { return receipt }
        applications[change.idempotencyKey, default: 0] += 1
        applied.append(change)
        for value in change.values.values {
            for target in value.linkTargets where records[target.object] == nil {
                orderViolations.append("\(change.object) links to \(target.object) before it exists")
            }
        }
        version += 1
        let id = change.object
        let receipt: SyncReceipt
        switch change.kind {
        case .create:
            var record = records[id] ?? Record(serverID: newServerID(), version: version, values: [:])
            let values = Self.valuesToStore(
                change, record: records[id], records: records, sets: setProperties,
                mapsWhole: replacesMapsWhole)
            record.isDeleted = false
            record.version = version
            record.values.merge(values) { _, new in new }
            records[id] = record
            receipt = SyncReceipt(
                idempotencyKey: change.idempotencyKey, serverID: record.serverID, serverVersion: version)
        case .update:
            guard var record = records[id], !record.isDeleted else {
                receipt = SyncReceipt(
                    idempotencyKey: change.idempotencyKey, serverID: records[id]?.serverID ?? "",
                    serverVersion: version,
                    outcome: .deletedOnServer)
                break
            }
            record.version = version
            record.values.merge(
                Self.valuesToStore(
                    change, record: record, records: records, sets: setProperties,
                    mapsWhole: replacesMapsWhole)
            ) {
                _, new in new
            }
            records[id] = record
            receipt = SyncReceipt(
                idempotencyKey: change.idempotencyKey, serverID: record.serverID, serverVersion: version)
        case .delete:
            var record = records[id] ?? Record(serverID: newServerID(), version: version, values: [:])
            record.isDeleted = true
            record.values = [:]
            record.version = version
            records[id] = record
            receipt = SyncReceipt(
                idempotencyKey: change.idempotencyKey, serverID: record.serverID, serverVersion: version)
            dropReferences(to: id)
        }
        receipts[change.idempotencyKey] = receipt
        return receipt
    }

    /// Takes a deleted object out of every list of links, and sets every key of a map of objects
    /// naming it to nil, each record changed at a new version.
    private func dropReferences(to deleted: SyncObjectID) {
        for (id, record) in records.sorted(by: { $0.value.version < $1.value.version }) where !record.isDeleted {
            var changed = record
            for (name, value) in record.values {
                switch value {
                case .references(let list) where list.contains(where: { $0.object == deleted }):
                    changed.values[name] = .references(list.filter { $0.object != deleted })
                case .referenceMap(let entries) where entries.values.contains(where: { $0?.object == deleted }):
                    changed.values[name] = .referenceMap(entries.mapValues { $0?.object == deleted ? nil : $0 })
                default:
                    continue
                }
            }
            guard changed.values != record.values else { continue }
            version += 1
            changed.version = version
            records[id] = changed
        }
    }

    private func newServerID() -> String {
        defer { nextID += 1 }
        return "S\(nextID)"
    }

    // MARK: Another device

    /// Creates or changes an object as another device would.
    func edit(_ id: SyncObjectID, _ values: [String: SyncValue]) {
        version += 1
        var record = records[id] ?? Record(serverID: newServerID(), version: version, values: [:])
        record.isDeleted = false
        record.version = version
        record.values.merge(values) { _, new in new }
        records[id] = record
    }

    /// Deletes an object as another device would.
    func delete(_ id: SyncObjectID) {
        guard var record = records[id] else { return }
        version += 1
        record.isDeleted = true
        record.values = [:]
        record.version = version
        records[id] = record
    }

    /// Forgets deleted objects as compaction does: their records go, and a pull after a cursor
    /// older than now is answered `resetRequired` (410).
    func compactDeletions() {
        records = records.filter { !$0.value.isDeleted }
        compactedVersion = version
    }

    /// The version up to which deletions were compacted.
    private var compactedVersion: UInt64 = 0

    /// The live records.
    var liveRecords: [SyncObjectID: Record] { records.filter { !$0.value.isDeleted } }
}

/// Records the waits of the engine instead of waiting.
actor SleepRecorder {
    private(set) var waits: [Duration] = []
    func record(_ duration: Duration) { waits.append(duration) }
    nonisolated var sleep: @Sendable (Duration) async throws -> Void { { await self.record($0) } }
}

/// Plain description of an object of a synced type, as both sides should hold it.
struct ObjectState: Hashable, Sendable, CustomStringConvertible {
    var values: [String: String]
    var description: String { values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
}

func describe(_ value: SyncValue) -> String {
    switch value {
    case .value(let plain): return plain.description
    case .reference(let target): return target.map { "\($0.object.primaryKey)" } ?? "nil"
    case .references(let targets): return targets.map { "\($0.object.primaryKey)" }.joined(separator: ",")
    case .map(let entries):
        return entries.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    case .referenceMap(let entries):
        return entries.sorted { $0.key < $1.key }.map {
            "\($0.key):\($0.value.map { "\($0.object.primaryKey)" } ?? "nil")"
        }
        .joined(separator: ",")
    case .mixed(let value): return value.description
    case .mixedList(let elements): return elements.map(\.description).joined(separator: ",")
    case .mixedMap(let entries):
        return entries.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }
}

/// The local objects of the synced types, with the server id.
func localState(_ realm: Realm) async throws -> [SyncObjectID: ObjectState] {
    try await realm.read { realm in
        var result: [SyncObjectID: ObjectState] = [:]
        for holder in realm.objects(Holder.self) {
            result[SyncObjectID(Holder.self, .string(holder.id))] = ObjectState(values: [
                "name": PropertyValue.string(holder.name).description, "$serverID": holder.serverID ?? "nil",
            ])
        }
        for card in realm.objects(Card.self) {
            result[SyncObjectID(Card.self, .string(card.id))] = ObjectState(values: [
                "name": PropertyValue.string(card.name).description,
                "discount": PropertyValue.int(Int64(card.discount)).description,
                "owner": card.owner.map { PropertyValue.string($0.id).description } ?? "nil",
                "photo": PropertyValue.data(card.photo).description,
                "$serverID": card.serverID ?? "nil",
            ])
        }
        return result
    }
}

/// The server's live records in the same form.
func serverState(_ server: FakeServer) async -> [SyncObjectID: ObjectState] {
    var result: [SyncObjectID: ObjectState] = [:]
    for (id, record) in await server.liveRecords {
        var values = record.values.mapValues(describe)
        values["$serverID"] = record.serverID
        result[id] = ObjectState(values: values)
    }
    return result
}

/// Where local and server states differ, one line each (empty when they agree).
func differences(_ local: [SyncObjectID: ObjectState], _ server: [SyncObjectID: ObjectState]) -> [String] {
    var lines: [String] = []
    for id in Set(local.keys).union(server.keys).sorted(by: { $0.description < $1.description }) {
        if local[id] != server[id] {
            lines.append(
                "\(id): local \(local[id]?.description ?? "missing") / server \(server[id]?.description ?? "missing")")
        }
    }
    return lines
}

func openSyncRealm(_ name: String) async throws -> Realm {
    var configuration = Realm.Configuration(identifier: "\(name)-\(UUID())", objectTypes: syncTypes)
    configuration.keepsHistory = true
    return try await Realm.open(configuration)
}

func card(_ id: String) -> SyncObjectID { SyncObjectID(Card.self, .string(id)) }
func holder(_ id: String) -> SyncObjectID { SyncObjectID(Holder.self, .string(id)) }
