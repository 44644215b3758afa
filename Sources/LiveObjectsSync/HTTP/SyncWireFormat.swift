import Foundation
import LiveObjects

// The JSON of docs/SYNC-PROTOCOL.md, as Codable values. Internal to the package: apps see
// SyncChange, SyncReceipt and SyncPull; the tests check the round trips.

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
        switch try container.decode(String.self, forKey: key) {
        case "nan": return .nan
        case "inf": return .infinity
        case "-inf": return -.infinity
        default:
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "a number, or \"nan\", \"inf\", \"-inf\"")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        func floating(_ number: Double, _ key: Key) throws {
            if number.isFinite {
                try container.encode(number, forKey: key)
            } else {
                try container.encode(number.isNaN ? "nan" : number < 0 ? "-inf" : "inf", forKey: key)
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
        switch change.kind {
        case .create: kind = "create"
        case .update: kind = "update"
        case .delete: kind = "delete"
        }
        values = change.kind == .delete ? nil : change.values.mapValues(WireSyncValue.init)
        bases = change.kind == .delete || change.bases.isEmpty ? nil : change.bases.mapValues(WireSyncValue.init)
    }

    package func change() throws(SyncHTTPError) -> SyncChange {
        let kind: SyncChange.Kind
        switch self.kind {
        case "create": kind = .create
        case "update": kind = .update
        case "delete": kind = .delete
        default: throw SyncHTTPError(.badRequest, "unknown change kind \"\(self.kind)\"")
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

/// A refusal: an error code and a message.
package struct WireError: Codable, Hashable, Sendable {
    package var code: String
    package var message: String

    package init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

/// The body of an error response.
package struct WireErrorResponse: Codable, Hashable, Sendable {
    package var error: WireError

    package init(error: WireError) { self.error = error }
}

/// One receipt of a push response.
package struct WireReceipt: Codable, Hashable, Sendable {
    package var key: String
    package var outcome: String
    package var serverID: String?
    package var serverVersion: UInt64?
    package var error: WireError?

    package init(_ receipt: SyncReceipt) {
        key = receipt.idempotencyKey
        serverID = receipt.serverID
        serverVersion = receipt.serverVersion
        switch receipt.outcome {
        case .applied: outcome = "applied"
        case .deletedOnServer: outcome = "deletedOnServer"
        case .rejected(let rejection):
            outcome = "rejected"
            error = WireError(code: rejection.code.rawValue, message: rejection.message)
        }
    }

    package func receipt() throws(SyncHTTPError) -> SyncReceipt {
        switch outcome {
        case "applied", "deletedOnServer":
            guard let serverID, let serverVersion else {
                throw SyncHTTPError(.invalidResponse, "the receipt of \(key) has no server id or version")
            }
            return SyncReceipt(
                idempotencyKey: key, serverID: serverID, serverVersion: serverVersion,
                outcome: outcome == "applied" ? .applied : .deletedOnServer)
        case "rejected":
            let rejection = SyncRejection(
                code: SyncHTTPError.Code(rawValue: error?.code ?? "forbidden"),
                message: error?.message ?? "refused by the server")
            return SyncReceipt(
                idempotencyKey: key, serverID: serverID ?? "", serverVersion: serverVersion ?? 0,
                outcome: .rejected(rejection))
        default:
            throw SyncHTTPError(.invalidResponse, "unknown receipt outcome \"\(outcome)\"")
        }
    }
}

/// The body of a push response.
package struct WirePushResponse: Codable, Hashable, Sendable {
    package var receipts: [WireReceipt]

    package init(receipts: [WireReceipt]) { self.receipts = receipts }
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

/// The body of `GET /v1/limits`.
package struct WireLimits: Codable, Hashable, Sendable {
    package var maximumBodyBytes: Int?
    package var maximumChanges: Int?
    package var maximumNameBytes: Int?
    package var maximumIDBytes: Int?

    package init(_ limits: SyncLimits) {
        maximumBodyBytes = limits.maximumPushBytes
        maximumChanges = limits.maximumChangesPerPush
        maximumNameBytes = limits.maximumNameBytes
        maximumIDBytes = limits.maximumIDBytes
    }

    package var limits: SyncLimits {
        SyncLimits(
            maximumPushBytes: maximumBodyBytes, maximumChangesPerPush: maximumChanges,
            maximumNameBytes: maximumNameBytes, maximumIDBytes: maximumIDBytes)
    }
}
