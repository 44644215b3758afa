import Foundation
import LiveObjects

/// How a ``SyncEngine`` talks to a server: implemented by the app (HTTP, WebSocket, a file…).
///
/// Both calls may fail by throwing; the engine retries with backoff. A server must apply each
/// change at most once, recognizing repeats by ``SyncChange/idempotencyKey`` (a retry after a
/// lost response sends the same key), and must treat creates and updates as upserts of the object
/// named by ``SyncChange/object`` (its type and local id).
public protocol SyncTransport: Sendable {
    /// Sends changes. The engine sends a batch only after the batches it depends on were
    /// acknowledged, so changes in one batch may be applied in any order.
    ///
    /// - Returns: One receipt per change applied (or already applied, for a repeated key). A
    ///   change without a receipt is sent again.
    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt]

    /// Fetches the state of the objects changed on the server after a cursor (nil: from the
    /// beginning).
    func pull(after cursor: String?) async throws -> SyncPull

    /// Fetches the state of the objects changed after a cursor that match the device's
    /// subscriptions (docs/SYNC-PROTOCOL.md, "Subscriptions"); a changed object that matches
    /// none comes as a hidden removal (``ServerChange/isHidden``). Nil subscriptions: the whole
    /// space, as ``pull(after:)``. Default: ``pull(after:)`` for nil, `invalidOperation`
    /// otherwise (a transport without subscriptions).
    func pull(after cursor: String?, subscriptions: [SyncSubscription]?) async throws -> SyncPull

    /// Fetches the current states of some objects, whatever the subscriptions: the targets of
    /// links whose objects the subscriptions brought. An object the server does not have, or
    /// that the user may not read, is left out. Default: `invalidOperation`.
    func objects(_ ids: [SyncObjectID]) async throws -> [ServerChange]

    /// The server's limits: the engine refuses a change that exceeds them before sending it,
    /// and sizes its pushes to fit. Default: none.
    func limits() async throws -> SyncLimits
}

extension SyncTransport {
    /// No limits: every change is sent.
    public func limits() async throws -> SyncLimits { SyncLimits() }

    /// The whole space only: a transport without subscriptions.
    public func pull(after cursor: String?, subscriptions: [SyncSubscription]?) async throws -> SyncPull {
        guard subscriptions == nil else {
            throw LiveObjectsError(.invalidOperation, "this transport does not sync by subscriptions")
        }
        return try await pull(after: cursor)
    }

    /// None: a transport without subscriptions.
    public func objects(_ ids: [SyncObjectID]) async throws -> [ServerChange] {
        throw LiveObjectsError(.invalidOperation, "this transport does not fetch objects by id")
    }
}

/// A value in a change: a plain value, or a link named by the target's id.
public enum SyncValue: Sendable, Hashable {
    /// A plain value or a list of plain values.
    case value(PropertyValue)
    /// A to-one link, or nil.
    case reference(SyncReference?)
    /// A list of links.
    case references([SyncReference])
    /// A `Map` of plain values, by key (nil values as `.null`); merged per key on the server
    /// (docs/SYNC-PROTOCOL.md, "Maps").
    case map([String: PropertyValue])
    /// A `Map` of objects (`Map<String, Dog?>`), by key: each key's target, or nil for a key
    /// with no object; merged per key on the server, as ``map(_:)`` (docs/SYNC-PROTOCOL.md,
    /// "Maps"). A key whose target is not on the device yet is nil there until it arrives.
    case referenceMap([String: SyncReference?])
    /// The value of an `AnyValue` property: any kind, nested lists and dictionaries included,
    /// a link as a ``SyncMixedValue/reference(_:)`` to its target; replaced whole (the later
    /// push wins, as for a plain property). Pulled from a server over HTTP, a scalar or a flat
    /// list may come as ``value(_:)`` instead, and a link as ``reference(_:)``: the engine reads
    /// it by the property's type (docs/SYNC-PROTOCOL.md, "Mixed values").
    case mixed(SyncMixedValue)
    /// The elements of a `List<AnyValue>` or a `MutableSet<AnyValue>`, each of any kind (nested
    /// lists and dictionaries included); merged on the server as a list of values, per
    /// operation, and a set per member (docs/SYNC-PROTOCOL.md, "Collections of mixed values").
    /// Pulled from a server over HTTP, it may come as ``value(_:)`` or ``mixed(_:)`` (a list):
    /// the engine reads it by the property's type.
    case mixedList([SyncMixedValue])
    /// The entries of a `Map<String, AnyValue>`, by key; merged on the server per key, as
    /// ``map(_:)`` (docs/SYNC-PROTOCOL.md, "Collections of mixed values"). Pulled from a server
    /// over HTTP, a map of scalars and flat lists may come as ``map(_:)``, and one of links and
    /// nulls as ``referenceMap(_:)``: the engine reads it by the property's type.
    case mixedMap([String: SyncMixedValue])
}

extension SyncValue {
    /// The value of a map as the store holds it: the `[.string(key), value]` pairs in
    /// increasing order of their keys' Unicode scalars.
    static func mapValue(_ entries: [String: PropertyValue]) -> PropertyValue {
        .list(entries.sorted { ListMerge.mapKeyPrecedes($0.key, $1.key) }.map { .list([.string($0.key), $0.value]) })
    }

    /// A map from the store's value of one: its `[.string(key), value]` pairs.
    static func map(pairs value: PropertyValue) -> SyncValue {
        guard case .list(let pairs) = value else { return .map([:]) }
        var entries: [String: PropertyValue] = [:]
        for pair in pairs {
            guard case .list(let entry) = pair, entry.count == 2, case .string(let key) = entry[0] else { continue }
            entries[key] = entry[1]
        }
        return .map(entries)
    }

    /// The plain value to set a property to: the value, or a map's pairs; nil for a link.
    var plainValue: PropertyValue? {
        switch self {
        case .value(let plain): plain
        case .map(let entries): Self.mapValue(entries)
        case .mixed(let value): value.anyValue?.propertyValue
        case .mixedList(let elements): Self.anyValues(elements).map { .list($0.map(\.propertyValue)) }
        case .mixedMap(let entries):
            Self.anyValues(Array(entries.values)).map { _ in
                Self.mapValue(entries.mapValues { $0.anyValue!.propertyValue })
            }
        case .reference, .references, .referenceMap: nil
        }
    }

    /// The `AnyValue`s of mixed values, or nil when one holds a reference.
    private static func anyValues(_ values: [SyncMixedValue]) -> [AnyValue]? {
        var result: [AnyValue] = []
        result.reserveCapacity(values.count)
        for value in values {
            guard let plain = value.anyValue else { return nil }
            result.append(plain)
        }
        return result
    }

    /// A map whose values are all nil (the wire cannot tell it from a map of plain values) as a
    /// map of objects; any other value as it is.
    package var readAsMapOfObjects: SyncValue {
        guard case .map(let entries) = self, entries.values.allSatisfy({ $0 == .null }) else { return self }
        return .referenceMap(entries.mapValues { _ in nil })
    }

    /// The targets a link, a list of links or a map of objects names (a map's in the order of
    /// its keys); none for a plain value.
    package var linkTargets: [SyncReference] {
        switch self {
        case .value, .map: []
        case .mixed(let value): value.references
        case .mixedList(let elements): elements.flatMap(\.references)
        case .mixedMap(let entries):
            entries.sorted { ListMerge.mapKeyPrecedes($0.key, $1.key) }.flatMap(\.value.references)
        case .reference(let target): target.map { [$0] } ?? []
        case .references(let list): list
        case .referenceMap(let entries):
            entries.sorted { ListMerge.mapKeyPrecedes($0.key, $1.key) }.compactMap(\.value)
        }
    }

    /// The value of an `AnyValue` property that this value sets: a mixed value as it is, a
    /// plain one read as the mixed value of its kind (a list as a nested list), a link as a
    /// reference; nil for a map, a nil link (an `AnyValue`'s nil is a plain null), a list of
    /// links, or a plain value no `AnyValue` holds.
    package var mixedValue: SyncMixedValue? {
        switch self {
        case .mixed(let value): value
        case .value(let plain): AnyValue(wirePlain: plain).flatMap(SyncMixedValue.init)
        case .reference(let target?): .reference(target)
        case .map, .reference(nil), .references, .referenceMap, .mixedList, .mixedMap: nil
        }
    }

    /// The elements of a `List<AnyValue>` or `MutableSet<AnyValue>` that this value sets, as
    /// the wire may carry them (``mixedList(_:)``, a nested list, or a list of plain values
    /// read as mixed values); nil for any other value.
    package var mixedListElements: [SyncMixedValue]? {
        switch self {
        case .mixedList(let elements): return elements
        case .mixed(.list(let elements)): return elements
        case .value(.list(let items)):
            var elements: [SyncMixedValue] = []
            elements.reserveCapacity(items.count)
            for item in items {
                guard let element = AnyValue(wirePlain: item).flatMap(SyncMixedValue.init) else { return nil }
                elements.append(element)
            }
            return elements
        default: return nil
        }
    }

    /// The entries of a `Map<String, AnyValue>` that this value sets, as the wire may carry
    /// them (``mixedMap(_:)``, a map of plain values read as mixed values, or a map of
    /// objects: one whose values are all links or nil, each read as a reference or null); nil
    /// for any other value.
    package var mixedMapEntries: [String: SyncMixedValue]? {
        switch self {
        case .mixedMap(let entries): return entries
        case .map(let entries):
            var mixed: [String: SyncMixedValue] = [:]
            for (key, value) in entries {
                guard let element = AnyValue(wirePlain: value).flatMap(SyncMixedValue.init) else { return nil }
                mixed[key] = element
            }
            return mixed
        case .referenceMap(let entries):
            return entries.mapValues { $0.map(SyncMixedValue.reference) ?? .null }
        default: return nil
        }
    }
}

extension AnyValue {
    /// The mixed value of a plain value as the wire reads one: a scalar as its kind, a list
    /// (without the stored form's marker) as a nested list; nil for a link or a marked list.
    init?(wirePlain value: PropertyValue) {
        guard case .list(let items) = value else {
            guard let scalar = AnyValue(value) else { return nil }
            self = scalar
            return
        }
        guard MixedContainer(items) == nil else { return nil }
        var elements: [AnyValue] = []
        elements.reserveCapacity(items.count)
        for item in items {
            guard let element = AnyValue(wirePlain: item) else { return nil }
            elements.append(element)
        }
        self = .list(elements)
    }
}

/// A link target in a change: its id and, once known, its server id.
public struct SyncReference: Sendable, Hashable {
    /// The target's id.
    public var object: SyncObjectID
    /// The target's server id, when the engine knows it.
    public var serverID: String?

    /// Creates a reference.
    public init(object: SyncObjectID, serverID: String? = nil) {
        self.object = object
        self.serverID = serverID
    }
}

/// One local change sent to the server: the coalesced changes of one object since the last
/// sync.
public struct SyncChange: Sendable, Hashable {
    /// What happened to the object: created (``SyncChange/values`` holds every sent property), updated
    /// (``SyncChange/values`` holds the changed properties) or deleted. The protocol's enum
    /// (`SyncChangeKind`, from `LiveObjectsSyncProtocol`), spelled on the wire as its raw value.
    public typealias Kind = SyncChangeKind

    /// Names this change: the same change sent again (a retry) has the same key; a later change
    /// of the object has another.
    public var idempotencyKey: String
    /// The object changed.
    public var object: SyncObjectID
    /// The object's server id, when the engine knows it.
    public var serverID: String?
    /// What happened.
    public var kind: Kind
    /// The new values, by property name.
    public var values: [String: SyncValue]
    /// For a list in ``values``, the list this device's edit started from: the value it last
    /// had from the server (pulled, or acknowledged when it pushed it). A server merges the
    /// difference between the two into its current list, so that the edits of several devices
    /// all count (docs/SYNC-PROTOCOL.md, "Lists"). A list without a base replaces the server's.
    public var bases: [String: SyncValue]

    /// Creates a change.
    public init(
        idempotencyKey: String, object: SyncObjectID, serverID: String?, kind: Kind, values: [String: SyncValue],
        bases: [String: SyncValue] = [:]
    ) {
        self.idempotencyKey = idempotencyKey
        self.object = object
        self.serverID = serverID
        self.kind = kind
        self.values = values
        self.bases = bases
    }
}

/// The server's answer to one pushed change.
public struct SyncReceipt: Sendable, Hashable {
    /// What the server did.
    public enum Outcome: Sendable, Hashable {
        /// The change is applied (now or by an earlier request with the same key).
        case applied
        /// The object was deleted on the server, so the update was not applied: the engine
        /// reports a ``SyncConflict``.
        case deletedOnServer
        /// The server refused this change (and only this one): nothing of it was applied. The
        /// engine keeps the change, marks the object ``SyncStatus/failed`` and keeps it in
        /// ``SyncEngine/rejectedChanges()`` until the app retries or discards it.
        case rejected(SyncRejection)
    }

    /// The key of the change answered.
    public var idempotencyKey: String
    /// The object's id on the server.
    public var serverID: String
    /// The server's version of the object after the change: versions only go up, server-wide.
    public var serverVersion: UInt64
    /// What the server did.
    public var outcome: Outcome

    /// Creates a receipt.
    public init(idempotencyKey: String, serverID: String, serverVersion: UInt64, outcome: Outcome = .applied) {
        self.idempotencyKey = idempotencyKey
        self.serverID = serverID
        self.serverVersion = serverVersion
        self.outcome = outcome
    }
}

/// The state of one object on the server, as pulled.
public struct ServerChange: Sendable, Hashable {
    /// The object.
    public var object: SyncObjectID
    /// Its server id.
    public var serverID: String
    /// Its server version: the engine ignores a state not newer than one it has seen.
    public var serverVersion: UInt64
    /// Whether the server deleted it, or, ``isHidden``, no longer sends it to this device.
    public var isDeleted: Bool
    /// A removal of an object the server still has: the user may no longer read it, or it no
    /// longer matches the device's subscriptions. The device removes it (unless a local change
    /// of it waits), and keeps it when an object it keeps links to it. Only with ``isDeleted``.
    public var isHidden: Bool
    /// Its values (every sent property), empty when deleted.
    public var values: [String: SyncValue]

    /// Creates a server change.
    public init(
        object: SyncObjectID, serverID: String, serverVersion: UInt64, isDeleted: Bool, isHidden: Bool = false,
        values: [String: SyncValue]
    ) {
        self.object = object
        self.serverID = serverID
        self.serverVersion = serverVersion
        self.isDeleted = isDeleted
        self.isHidden = isDeleted && isHidden
        self.values = values
    }
}

/// The answer to a pull.
public struct SyncPull: Sendable, Hashable {
    /// The objects changed after the cursor asked for.
    public var changes: [ServerChange]
    /// The cursor to pull after next time.
    public var cursor: String?
    /// Whether the server has more changes after ``cursor``: the engine pulls again at once.
    public var hasMore: Bool
    /// The server's version the page reaches (the cursor's), when the server says: with
    /// ``latestVersion``, how far a walk from the beginning has come (``SyncProgress``).
    public var version: UInt64?
    /// The server's newest version when the page was read, when the server says.
    public var latestVersion: UInt64?

    /// Creates a pull answer.
    public init(
        changes: [ServerChange], cursor: String?, hasMore: Bool = false, version: UInt64? = nil,
        latestVersion: UInt64? = nil
    ) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.version = version
        self.latestVersion = latestVersion
    }
}

/// Why a server refused one change of a push.
public struct SyncRejection: Sendable, Hashable, CustomStringConvertible {
    /// The reason, from the protocol's codes (`SyncErrorCode.forbidden` for a change to an
    /// object the user may not change).
    public var code: SyncHTTPError.Code
    /// What the server said.
    public var message: String

    /// Creates a rejection.
    public init(code: SyncHTTPError.Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

/// A transport that can wait for the server to have changes: ``SyncEngine/syncContinuously(onReport:)``
/// keeps one such wait open and syncs when it returns.
public protocol LiveSyncTransport: SyncTransport {
    /// Waits until the server has changes after a cursor, or a timeout of the transport's
    /// choosing passes.
    ///
    /// - Returns: Whether the server has changes after the cursor.
    func waitForChanges(after cursor: String?) async throws -> Bool
}

extension SyncValue {
    /// Whether the value is a list (of plain values or of links) or a map: sent with a base.
    var isList: Bool {
        switch self {
        case .value(.list), .references, .map, .referenceMap, .mixedList, .mixedMap: true
        case .value, .reference, .mixed: false
        }
    }
}
