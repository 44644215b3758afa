import Foundation
import LiveObjectsSyncProtocol

/// Any JSON value, kept as it came (integers exactly), to be checked for shape and stored as
/// JSONB. The server never interprets an object's values beyond their shape.
enum JSONValue: Codable, Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as compact JSON text with sorted keys (one spelling per value).
    var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}

/// A change of a push request, its values kept as JSON.
struct PushedChange: Decodable, Sendable {
    struct ObjectName: Decodable, Sendable {
        var type: String
        var id: JSONValue
    }

    var key: String
    var object: ObjectName
    var serverID: String?
    var kind: String
    var values: [String: JSONValue]?
    /// For a list in `values`, the list the device's edit started from: the server merges the
    /// difference (docs/SYNC-PROTOCOL.md, "Lists"). Absent, the list replaces the stored one.
    var bases: [String: JSONValue]?

    /// The kind, or nil for one the protocol does not have (refused by ``validate()``).
    var changeKind: SyncChangeKind? { SyncChangeKind(rawValue: kind) }
}

/// The body of a push request.
struct PushRequest: Decodable, Sendable {
    var changes: [PushedChange]
}

/// The longest idempotency key, type name or property name accepted.
let maximumNameLength = SyncProtocolLimits.maximumNameBytes

extension PushedChange {
    /// Checks the shape of the change (docs/SYNC-PROTOCOL.md, "Values on the wire").
    func validate() throws(SyncServerError) {
        func bad(_ message: String) -> SyncServerError { SyncServerError(.badRequest, "change \(key): \(message)") }
        guard !key.isEmpty, key.utf8.count <= maximumNameLength else {
            throw SyncServerError(.badRequest, "an idempotency key must have 1 to \(maximumNameLength) bytes")
        }
        guard !object.type.isEmpty, object.type.utf8.count <= maximumNameLength else {
            throw bad("a type name must have 1 to \(maximumNameLength) bytes")
        }
        guard Self.isPlainValue(object.id) else { throw bad("an object id is a plain value such as {\"string\": …}") }
        guard changeKind != nil else {
            throw bad("kind is create, update or delete, not \"\(kind)\"")
        }
        for (name, value) in values ?? [:] {
            guard !name.isEmpty, name.utf8.count <= maximumNameLength else {
                throw bad("a property name must have 1 to \(maximumNameLength) bytes")
            }
            guard Self.isSyncValue(value) else { throw bad("the value of \(name) is not a value of the protocol") }
        }
        for (name, base) in bases ?? [:] {
            guard !name.isEmpty, name.utf8.count <= maximumNameLength else {
                throw bad("a property name must have 1 to \(maximumNameLength) bytes")
            }
            guard Self.isSyncValue(base) else { throw bad("the base of \(name) is not a value of the protocol") }
        }
    }

    /// `{"TYPE": payload}` with a known type and a payload of that type. A value every device
    /// could not read back would make every pull of the space fail, so the payload's JSON type is
    /// checked too: `int` an integer, `double` a number or a non-finite one's string
    /// (`SyncNonFinite`: `"NaN"`, `"Infinity"`, `"-Infinity"`, or the earlier `"nan"`, `"inf"`,
    /// `"-inf"`), `data` base64, `uuid` a UUID, and so on.
    static func isPlainValue(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value, members.count == 1, let (type, payload) = members.first else {
            return false
        }
        switch (type, payload) {
        case ("null", .bool(true)), ("bool", .bool), ("int", .int), ("string", .string): return true
        case ("float", .int), ("float", .double), ("double", .int), ("double", .double): return true
        case ("float", .string(let text)), ("double", .string(let text)): return SyncNonFinite.number(text) != nil
        case ("date", .int), ("date", .double): return true
        case ("data", .string(let text)): return Data(base64Encoded: text) != nil
        case ("uuid", .string(let text)): return UUID(uuidString: text) != nil
        case ("list", .array(let items)): return items.allSatisfy(isPlainValue)
        default: return false
        }
    }

    /// A plain value, `{"ref": reference-or-null}` or `{"refs": [reference]}`.
    static func isSyncValue(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value, members.count == 1, let (name, payload) = members.first else {
            return false
        }
        func isReference(_ value: JSONValue) -> Bool {
            guard case .object(let fields) = value, case .string = fields["type"], let id = fields["id"],
                isPlainValue(id)
            else { return false }
            switch fields["serverID"] {
            case nil, .null?, .string?: return Set(fields.keys).isSubset(of: ["type", "id", "serverID"])
            default: return false
            }
        }
        switch (name, payload) {
        case ("ref", .null): return true
        case ("ref", let target): return isReference(target)
        case ("refs", .array(let targets)): return targets.allSatisfy(isReference)
        case ("refs", _): return false
        default: return isPlainValue(value)
        }
    }
}

extension PushedChange {
    /// The types of the objects the change's values link to.
    var linkedTypes: [String] {
        var types: [String] = []
        func add(_ reference: JSONValue) {
            if case .object(let fields) = reference, case .string(let type)? = fields["type"] { types.append(type) }
        }
        for value in (values ?? [:]).values {
            guard case .object(let members) = value else { continue }
            if let target = members["ref"] { add(target) }
            if case .array(let targets)? = members["refs"] { targets.forEach(add) }
        }
        return types
    }
}
