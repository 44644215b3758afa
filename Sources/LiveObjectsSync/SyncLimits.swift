import Foundation
import LiveObjects
import LiveObjectsSyncProtocol

/// What a server accepts in one push, as it advertises it (`GET /v1/limits`, docs/SYNC-PROTOCOL.md,
/// "Limits"). A ``SyncEngine`` refuses a change that could never fit before sending it, with
/// `SyncErrorCode.tooLarge` in ``SyncReport/rejections`` naming the object, and cuts its
/// pushes so that each fits: one value too large never holds back the others.
public struct SyncLimits: Sendable, Hashable {
    /// The largest body of a push, in bytes (the JSON of docs/SYNC-PROTOCOL.md); nil, no limit.
    public var maximumPushBytes: Int?
    /// The most changes in one push; nil, no limit.
    public var maximumChangesPerPush: Int?
    /// The longest type or property name, in UTF-8 bytes; nil, no limit.
    public var maximumNameBytes: Int?
    /// The longest String primary key of a pushed object, in UTF-8 bytes; nil, no limit.
    public var maximumIDBytes: Int?

    /// Creates limits; nil is no limit.
    public init(
        maximumPushBytes: Int? = nil, maximumChangesPerPush: Int? = nil, maximumNameBytes: Int? = nil,
        maximumIDBytes: Int? = nil
    ) {
        self.maximumPushBytes = maximumPushBytes
        self.maximumChangesPerPush = maximumChangesPerPush
        self.maximumNameBytes = maximumNameBytes
        self.maximumIDBytes = maximumIDBytes
    }
}

extension SyncEngine {
    /// The chunks of a round's changes, in the order they are sent: each dependency level, then
    /// the deletions, then the large payloads, each cut to ``Configuration/batchSize`` changes
    /// and to the server's limits. A change that the server would refuse whatever happens (over
    /// its limits, or holding NUL, which the protocol does not carry) is left out and reported
    /// as refused, and held like a change the server rejected, the object `failed`: it is sent
    /// again when the app calls `retry`, or when the object is edited (the edit is a retry).
    func chunks(of collected: CollectedChanges, _ report: inout SyncReport) async -> [[SyncChange]] {
        let limits = (try? await transport.limits()) ?? SyncLimits()
        let most = min(configuration.batchSize, limits.maximumChangesPerPush ?? .max)
        // `{"changes":[` and `]}`, then a comma between changes.
        let budget = limits.maximumPushBytes.map { $0 - 14 }
        var result: [[SyncChange]] = []
        var refused = Set<SyncObjectID>()
        for batch in collected.levels + [collected.deletions, collected.largePayloads] {
            var chunk: [SyncChange] = []
            var bytes = 0
            for change in batch {
                // A later change of an object refused here (its large payloads) waits with it.
                if refused.contains(change.object), let rejection = rejected[change.object]?.rejection {
                    noteRejected(change, rejection, onDevice: true)
                    continue
                }
                let size = budget == nil ? 0 : Self.encodedSize(change)
                if let rejection = Self.refusal(of: change, size: size, budget: budget, limits) {
                    rejectedThisRound.insert(change.idempotencyKey)
                    report.failed.insert(change.object)
                    report.rejections[change.object] = rejection
                    // Held for the app, as a refusal of the server is (retry or discard), or
                    // until the object is edited.
                    noteRejected(change, rejection, onDevice: true)
                    refused.insert(change.object)
                    setStatus(.failed, of: change.object)
                    continue
                }
                if !chunk.isEmpty, chunk.count == most || budget.map({ bytes + 1 + size > $0 }) == true {
                    result.append(chunk)
                    chunk = []
                    bytes = 0
                }
                bytes += (chunk.isEmpty ? 0 : 1) + size
                chunk.append(change)
            }
            if !chunk.isEmpty { result.append(chunk) }
        }
        return result
    }

    /// Why a change can never be pushed, or nil.
    static func refusal(of change: SyncChange, size: Int, budget: Int?, _ limits: SyncLimits) -> SyncRejection? {
        if let place = nulPlace(change) {
            return SyncRejection(
                code: .invalidText,
                message: "\(change.object): \(place) holds U+0000 (NUL), which sync does not carry; "
                    + "change it to sync the object")
        }
        if let budget, size > budget {
            return SyncRejection(
                code: .tooLarge,
                message: "\(change.object): the change takes \(size) bytes, over the server's limit of "
                    + "\(budget + 14) bytes per push; make its values smaller to sync it")
        }
        if let most = limits.maximumIDBytes, case .string(let id) = change.object.primaryKey, id.utf8.count > most {
            return SyncRejection(
                code: .tooLarge,
                message: "\(change.object.typeName)[\(id.prefix(40))…]: the id takes \(id.utf8.count) bytes, over the "
                    + "server's limit of \(most)")
        }
        if let most = limits.maximumNameBytes,
            let long = ([change.object.typeName] + change.values.keys).first(where: { $0.utf8.count > most })
        {
            return SyncRejection(
                code: .tooLarge,
                message: "\(change.object): the name \(long.prefix(40))… is over the server's limit of \(most) bytes")
        }
        return nil
    }

    /// The bytes of a change in a push body: an upper bound for a small change (no encoding),
    /// exact for one that may be large.
    static func encodedSize(_ change: SyncChange) -> Int {
        func bound(_ value: PropertyValue) -> Int {
            switch value {
            case .string(let text): 16 + 6 * text.utf8.count
            case .data(let data): 16 + 4 * (data.count + 2) / 3
            case .list(let items): items.reduce(16) { $0 + 1 + bound($1) }
            default: 64
            }
        }
        func bound(_ reference: SyncReference) -> Int {
            64 + 6 * reference.object.typeName.utf8.count + bound(reference.object.primaryKey)
                + 6 * (reference.serverID?.utf8.count ?? 0)
        }
        func bound(_ mixed: SyncMixedValue) -> Int {
            switch mixed {
            case .reference(let target): bound(target)
            case .list(let items): items.reduce(16) { $0 + 1 + bound($1) }
            case .dictionary(let entries): entries.reduce(24) { $0 + 8 + 6 * $1.key.utf8.count + bound($1.value) }
            default: bound(mixed.anyValue?.propertyValue ?? .null)
            }
        }
        var estimate = 128 + 6 * (change.idempotencyKey.utf8.count + change.object.typeName.utf8.count)
        estimate += bound(change.object.primaryKey) + 6 * (change.serverID?.utf8.count ?? 0)
        for (name, value) in change.values {
            estimate += 8 + 6 * name.utf8.count
            switch value {
            case .value(let plain): estimate += bound(plain)
            case .reference(let target): estimate += target.map(bound) ?? 16
            case .references(let targets): estimate += targets.reduce(16) { $0 + 1 + bound($1) }
            case .referenceMap(let entries):
                estimate += entries.reduce(16) { $0 + 8 + 6 * $1.key.utf8.count + ($1.value.map(bound) ?? 16) }
            case .map(let entries):
                estimate += entries.reduce(16) { $0 + 8 + 6 * $1.key.utf8.count + bound($1.value) }
            case .mixed(let mixed): estimate += bound(mixed)
            case .mixedList(let elements): estimate += elements.reduce(16) { $0 + 1 + bound($1) }
            case .mixedMap(let entries):
                estimate += entries.reduce(16) { $0 + 8 + 6 * $1.key.utf8.count + bound($1.value) }
            }
        }
        guard estimate > 64 << 10 else { return estimate }
        return (try? WireChange(change).jsonBytes().count) ?? estimate
    }

    /// Where a change holds NUL, or nil.
    static func nulPlace(_ change: SyncChange) -> String? {
        func has(_ text: String) -> Bool { SyncText.containsNUL(text) }
        func has(_ value: PropertyValue) -> Bool {
            switch value {
            case .string(let text): has(text)
            case .list(let items): items.contains(where: has)
            default: false
            }
        }
        func has(_ reference: SyncReference) -> Bool {
            has(reference.object.typeName) || has(reference.object.primaryKey) || has(reference.serverID ?? "")
        }
        func has(_ mixed: SyncMixedValue) -> Bool {
            switch mixed {
            case .reference(let target): has(target)
            case .list(let items): items.contains(where: has)
            case .dictionary(let entries): entries.contains { has($0.key) || has($0.value) }
            case .string(let text): has(text)
            default: false
            }
        }
        if has(change.object.typeName) || has(change.object.primaryKey) { return "its id" }
        for (name, value) in change.values.sorted(by: { $0.key < $1.key }) {
            if has(name) { return "a property name" }
            switch value {
            case .value(let plain): if has(plain) { return "the value of \(name)" }
            case .reference(let target): if target.map(has) == true { return "the link \(name)" }
            case .references(let targets): if targets.contains(where: has) { return "the links \(name)" }
            case .referenceMap(let entries):
                if entries.contains(where: { has($0.key) || $0.value.map(has) == true }) { return "the links \(name)" }
            case .map(let entries):
                if entries.contains(where: { has($0.key) || has($0.value) }) { return "the value of \(name)" }
            case .mixed(let mixed): if has(mixed) { return "the value of \(name)" }
            case .mixedList(let elements):
                if elements.contains(where: has) { return "the value of \(name)" }
            case .mixedMap(let entries):
                if entries.contains(where: { has($0.key) || has($0.value) }) {
                    return "the value of \(name)"
                }
            }
        }
        return nil
    }
}
