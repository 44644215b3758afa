import Foundation
import LiveObjects
import LiveObjectsSyncProtocol

// The JSON of docs/SYNC-PROTOCOL.md, as Codable values. The messages without object values
// (receipts, errors, limits) are LiveObjectsSyncProtocol's, shared with the server; those that
// carry values are here, over the realm's values. Internal to the package: apps see SyncChange,
// SyncReceipt and SyncPull; the tests check the round trips.

/// A plain value: an object with one member named after the value's type.
package struct WireValue: Codable, Hashable, Sendable {
    package var value: PropertyValue

    package init(_ value: PropertyValue) { self.value = value }

    private enum Key: String, CodingKey, CaseIterable {
        case null, bool, int, float, double, string, date, data, uuid, list
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath,
                    debugDescription: "a value is an object with exactly one member naming its type"))
        }
        switch key {
        case .null:
            value = .null
        case .bool:
            value = .bool(try container.decode(Bool.self, forKey: key))
        case .int:
            value = .int(try container.decode(Int64.self, forKey: key))
        case .float:
            value = .float(try Float(Self.decodeFloating(container, key)))
        case .double:
            value = .double(try Self.decodeFloating(container, key))
        case .string:
            value = .string(try container.decode(String.self, forKey: key))
        case .date:
            value = .date(Date(timeIntervalSinceReferenceDate: try container.decode(Double.self, forKey: key)))
        case .data:
            let text = try container.decode(String.self, forKey: key)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not base64")
            }
            value = .data(data)
        case .uuid:
            let text = try container.decode(String.self, forKey: key)
            guard let uuid = UUID(uuidString: text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a UUID")
            }
            value = .uuid(uuid)
        case .list:
            value = .list(try container.decode([WireValue].self, forKey: key).map(\.value))
        }
    }

    private static func decodeFloating(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> Double {
        if let number = try? container.decode(Double.self, forKey: key) { return number }
        guard let number = SyncNonFinite.number(try container.decode(String.self, forKey: key)) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "a number, or \"NaN\", \"Infinity\", \"-Infinity\"")
        }
        return number
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        func floating(_ number: Double, _ key: Key) throws {
            if let text = SyncNonFinite.text(for: number) {
                try container.encode(text, forKey: key)
            } else {
                try container.encode(number, forKey: key)
            }
        }
        switch value {
        case .null: try container.encode(true, forKey: .null)
        case .bool(let v): try container.encode(v, forKey: .bool)
        case .int(let v): try container.encode(v, forKey: .int)
        case .float(let v):
            if v.isFinite { try container.encode(v, forKey: .float) } else { try floating(Double(v), .float) }
        case .double(let v): try floating(v, .double)
        case .string(let v): try container.encode(v, forKey: .string)
        case .date(let v): try container.encode(v.timeIntervalSinceReferenceDate, forKey: .date)
        case .data(let v): try container.encode(v.base64EncodedString(), forKey: .data)
        case .uuid(let v): try container.encode(v.uuidString, forKey: .uuid)
        case .list(let v): try container.encode(v.map(WireValue.init), forKey: .list)
        case .decimal, .objectID:
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: encoder.codingPath,
                    debugDescription: "Decimal and ObjectID values are not supported by sync yet"))
        case .object:
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: encoder.codingPath,
                    debugDescription: "an object key has no meaning on a server: links are sent as references"))
        }
    }
}

/// An object's type and local id.
package struct WireObjectID: Codable, Hashable, Sendable {
    package var type: String
    package var id: WireValue

    package init(_ object: SyncObjectID) {
        type = object.typeName
        id = WireValue(object.primaryKey)
    }

    package var object: SyncObjectID { SyncObjectID(typeName: type, primaryKey: id.value) }
}

/// A link target.
package struct WireReference: Codable, Hashable, Sendable {
    package var type: String
    package var id: WireValue
    package var serverID: String?

    package init(_ reference: SyncReference) {
        type = reference.object.typeName
        id = WireValue(reference.object.primaryKey)
        serverID = reference.serverID
    }

    package var reference: SyncReference {
        SyncReference(object: SyncObjectID(typeName: type, primaryKey: id.value), serverID: serverID)
    }
}

/// A value of a change: a plain value, `{"ref": …}` or `{"refs": […]}`.
package struct WireSyncValue: Codable, Hashable, Sendable {
    package var value: SyncValue

    package init(_ value: SyncValue) { self.value = value }

    private enum Key: String, CodingKey {
        case ref, refs
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        if container.contains(.ref) {
            value = .reference(try container.decodeIfPresent(WireReference.self, forKey: .ref)?.reference)
        } else if container.contains(.refs) {
            value = .references(try container.decode([WireReference].self, forKey: .refs).map(\.reference))
        } else {
            value = .value(try WireValue(from: decoder).value)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        switch value {
        case .value(let plain):
            try WireValue(plain).encode(to: encoder)
        case .reference(let target):
            var container = encoder.container(keyedBy: Key.self)
            if let target {
                try container.encode(WireReference(target), forKey: .ref)
            } else {
                try container.encodeNil(forKey: .ref)
            }
        case .references(let targets):
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(targets.map(WireReference.init), forKey: .refs)
        }
    }
}

/// One change of a push request.
package struct WireChange: Codable, Hashable, Sendable {
    package var key: String
    package var object: WireObjectID
    package var serverID: String?
    package var kind: String
    package var values: [String: WireSyncValue]?
    /// Absent when the change has no list with a base.
    package var bases: [String: WireSyncValue]?

    package init(_ change: SyncChange) {
        key = change.idempotencyKey
        object = WireObjectID(change.object)
        serverID = change.serverID
        kind = change.kind.rawValue
        values = change.kind == .delete ? nil : change.values.mapValues(WireSyncValue.init)
        bases = change.kind == .delete || change.bases.isEmpty ? nil : change.bases.mapValues(WireSyncValue.init)
    }

    package func change() throws(SyncHTTPError) -> SyncChange {
        guard let kind = SyncChangeKind(rawValue: self.kind) else {
            throw SyncHTTPError(.badRequest, "unknown change kind \"\(self.kind)\"")
        }
        return SyncChange(
            idempotencyKey: key, object: object.object, serverID: serverID, kind: kind,
            values: (values ?? [:]).mapValues(\.value), bases: (bases ?? [:]).mapValues(\.value))
    }
}

/// The body of `POST /v1/spaces/{space}/push`.
package struct WirePushRequest: Codable, Hashable, Sendable {
    package var changes: [WireChange]

    package init(changes: [WireChange]) { self.changes = changes }
}

extension SyncWireReceipt {
    /// The receipt of the wire for a receipt of the engine.
    package init(_ receipt: SyncReceipt) {
        switch receipt.outcome {
        case .applied:
            self.init(
                key: receipt.idempotencyKey, outcome: .applied, serverID: receipt.serverID,
                serverVersion: receipt.serverVersion)
        case .deletedOnServer:
            self.init(
                key: receipt.idempotencyKey, outcome: .deletedOnServer, serverID: receipt.serverID,
                serverVersion: receipt.serverVersion)
        case .rejected(let rejection):
            self.init(
                key: receipt.idempotencyKey, outcome: .rejected, serverID: receipt.serverID,
                serverVersion: receipt.serverVersion, error: SyncWireError(rejection.code, message: rejection.message))
        }
    }

    /// The engine's receipt.
    ///
    /// - Throws: `invalidResponse` for an outcome the protocol does not have, or an applied
    ///   receipt without its server id and version.
    package func receipt() throws(SyncHTTPError) -> SyncReceipt {
        switch outcomeKind {
        case .applied?, .deletedOnServer?:
            guard let serverID, let serverVersion else {
                throw SyncHTTPError(.invalidResponse, "the receipt of \(key) has no server id or version")
            }
            return SyncReceipt(
                idempotencyKey: key, serverID: serverID, serverVersion: serverVersion,
                outcome: outcomeKind == .applied ? .applied : .deletedOnServer)
        case .rejected?:
            let rejection = SyncRejection(
                code: SyncErrorCode(rawValue: error?.code ?? SyncErrorCode.forbidden.rawValue),
                message: error?.message ?? "refused by the server")
            return SyncReceipt(
                idempotencyKey: key, serverID: serverID ?? "", serverVersion: serverVersion ?? 0,
                outcome: .rejected(rejection))
        case nil:
            throw SyncHTTPError(.invalidResponse, "unknown receipt outcome \"\(outcome)\"")
        }
    }
}

/// One object of a pull response.
package struct WireServerChange: Codable, Hashable, Sendable {
    package var object: WireObjectID
    package var serverID: String
    package var serverVersion: UInt64
    package var deleted: Bool
    package var values: [String: WireSyncValue]

    package init(_ change: ServerChange) {
        object = WireObjectID(change.object)
        serverID = change.serverID
        serverVersion = change.serverVersion
        deleted = change.isDeleted
        values = change.values.mapValues(WireSyncValue.init)
    }

    package var change: ServerChange {
        ServerChange(
            object: object.object, serverID: serverID, serverVersion: serverVersion, isDeleted: deleted,
            values: values.mapValues(\.value))
    }
}

/// The body of a pull response.
package struct WirePullResponse: Codable, Hashable, Sendable {
    package var changes: [WireServerChange]
    package var cursor: String?
    package var hasMore: Bool

    package init(_ pull: SyncPull) {
        changes = pull.changes.map(WireServerChange.init)
        cursor = pull.cursor
        hasMore = pull.hasMore
    }

    package var pull: SyncPull {
        SyncPull(changes: changes.map(\.change), cursor: cursor, hasMore: hasMore)
    }
}

extension SyncWireLimits {
    /// The limits of the wire for the engine's.
    package init(_ limits: SyncLimits) {
        self.init(
            maximumBodyBytes: limits.maximumPushBytes, maximumChanges: limits.maximumChangesPerPush,
            maximumNameBytes: limits.maximumNameBytes, maximumIDBytes: limits.maximumIDBytes)
    }

    /// The limits the engine keeps to.
    package var limits: SyncLimits {
        SyncLimits(
            maximumPushBytes: maximumBodyBytes, maximumChangesPerPush: maximumChanges,
            maximumNameBytes: maximumNameBytes, maximumIDBytes: maximumIDBytes)
    }
}
