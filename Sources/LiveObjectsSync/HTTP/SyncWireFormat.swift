import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSyncProtocol

// The JSON of docs/SYNC-PROTOCOL.md, read and written as LiveObjectsJSON values (members in the
// order of their names). The messages without object values (receipts, errors, limits) are
// LiveObjectsSyncProtocol's, shared with the server; those that carry values are here, over the
// realm's values. Internal to the package: apps see SyncChange, SyncReceipt and SyncPull; the
// tests check the round trips.

/// A plain value: an object with one member named after the value's type.
package struct WireValue: Hashable, Sendable, WireJSONConvertible {
    package var value: PropertyValue

    package init(_ value: PropertyValue) { self.value = value }

    private static let typeNames: Set<String> = [
        "null", "bool", "int", "float", "double", "string", "date", "data", "uuid", "decimal", "objectID", "list",
    ]

    package init(json: JSONValue) throws(SyncWireFormatError) {
        guard let members = json.objectValue else {
            throw SyncWireFormatError("a value is an object with exactly one member naming its type")
        }
        var found: (key: String, value: JSONValue)?
        for member in members where Self.typeNames.contains(member.key) {
            guard found == nil else {
                throw SyncWireFormatError("a value is an object with exactly one member naming its type")
            }
            found = member
        }
        guard let (type, payload) = found else {
            throw SyncWireFormatError("a value is an object with exactly one member naming its type")
        }
        func bad(_ expected: String) -> SyncWireFormatError {
            SyncWireFormatError("the \"\(type)\" of a value is not \(expected): \(payload)")
        }
        switch type {
        case "null":
            value = .null
        case "bool":
            guard let flag = payload.boolValue else { throw bad("a boolean") }
            value = .bool(flag)
        case "int":
            guard let number = payload.int64Value else { throw bad("an integer") }
            value = .int(number)
        case "float", "double":
            guard let number = payload.numberValue?.doubleValue ?? payload.stringValue.flatMap(SyncNonFinite.number)
            else { throw bad("a number, or \"NaN\", \"Infinity\", \"-Infinity\"") }
            value = type == "float" ? .float(Float(number)) : .double(number)
        case "string":
            guard let text = payload.stringValue else { throw bad("a string") }
            value = .string(text)
        case "date":
            guard let seconds = payload.numberValue?.doubleValue else { throw bad("a number") }
            value = .date(Date(timeIntervalSinceReferenceDate: seconds))
        case "data":
            guard let data = payload.stringValue.flatMap({ Data(base64Encoded: $0) }) else { throw bad("base64") }
            value = .data(data)
        case "uuid":
            guard let uuid = payload.stringValue.flatMap(UUID.init(uuidString:)) else { throw bad("a UUID") }
            value = .uuid(uuid)
        case "decimal":
            guard let text = payload.stringValue,
                let decimal = text == "NaN" ? Decimal.nan : Decimal(exactText: text)
            else { throw bad("a decimal number as text") }
            value = .decimal(decimal)
        case "objectID":
            guard let id = payload.stringValue.flatMap(ObjectID.init(hex:)) else { throw bad("24 hex digits") }
            value = .objectID(id)
        default:
            guard let elements = payload.arrayValue else { throw bad("an array") }
            var items: [PropertyValue] = []
            items.reserveCapacity(elements.count)
            for element in elements { items.append(try WireValue(json: element).value) }
            value = .list(items)
        }
    }

    /// A finite number as a number, a non-finite one as its string (``SyncNonFinite``).
    private static func floating(_ number: Double) -> JSONValue {
        SyncNonFinite.text(for: number).map(JSONValue.string) ?? .number(JSONNumber(number))
    }

    package func json() throws(SyncWireFormatError) -> JSONValue {
        let type: String
        let payload: JSONValue
        switch value {
        case .null: (type, payload) = ("null", .bool(true))
        case .bool(let v): (type, payload) = ("bool", .bool(v))
        case .int(let v): (type, payload) = ("int", .int(v))
        case .float(let v): (type, payload) = ("float", v.isFinite ? .number(JSONNumber(v)) : Self.floating(Double(v)))
        case .double(let v): (type, payload) = ("double", Self.floating(v))
        case .string(let v): (type, payload) = ("string", .string(v))
        case .date(let v):
            let seconds = v.timeIntervalSinceReferenceDate
            guard seconds.isFinite else { throw SyncWireFormatError("a date of \(seconds) seconds has no JSON") }
            (type, payload) = ("date", .number(JSONNumber(seconds)))
        case .data(let v): (type, payload) = ("data", .string(v.base64EncodedString()))
        case .uuid(let v): (type, payload) = ("uuid", .string(v.uuidString))
        case .list(let v):
            var elements: [JSONValue] = []
            elements.reserveCapacity(v.count)
            for item in v { elements.append(try WireValue(item).json()) }
            (type, payload) = ("list", .array(elements))
        case .decimal(let v): (type, payload) = ("decimal", .string(v.exactText))
        case .objectID(let v): (type, payload) = ("objectID", .string(v.hexString))
        case .object:
            throw SyncWireFormatError("an object key has no meaning on a server: links are sent as references")
        }
        return .object([(key: type, value: payload)])
    }
}

/// The value of an `AnyValue` property: a scalar as the plain value of its kind, a nested
/// list as `{"list": […]}` of such values, a nested dictionary as
/// `{"dictionary": [[key, value], …]}` (the keys in increasing order of their Unicode scalars),
/// a link as `{"ref": reference}`, written as a plain link's.
package struct WireMixedValue: Hashable, Sendable, WireJSONConvertible {
    package var value: SyncMixedValue

    package init(_ value: SyncMixedValue) { self.value = value }

    package init(json: JSONValue) throws(SyncWireFormatError) {
        try self.init(json: json, depth: 0)
    }

    private init(json: JSONValue, depth: Int) throws(SyncWireFormatError) {
        let object = try WireObject(json, "an AnyValue")
        if object.contains("ref") {
            guard let target = object["ref"], target != .null else {
                throw SyncWireFormatError("the null of an AnyValue is {\"null\": true}, not {\"ref\": null}")
            }
            value = .reference(try WireReference(json: target).reference)
            return
        }
        let isList = object.contains("list")
        guard isList || object.contains("dictionary") else {
            let plain = try WireValue(json: json).value
            guard let scalar = AnyValue(plain).flatMap(SyncMixedValue.init) else {
                throw SyncWireFormatError("\(json) is not an AnyValue")
            }
            value = scalar
            return
        }
        guard depth < SyncProtocolLimits.maximumMixedNestingDepth else {
            throw SyncWireFormatError(
                "an AnyValue nests lists and dictionaries at most \(SyncProtocolLimits.maximumMixedNestingDepth) deep")
        }
        if isList {
            var elements: [SyncMixedValue] = []
            for element in try object.array("list") {
                elements.append(try WireMixedValue(json: element, depth: depth + 1).value)
            }
            value = .list(elements)
            return
        }
        var entries: [String: SyncMixedValue] = [:]
        for pair in try object.array("dictionary") {
            guard let items = pair.arrayValue, items.count == 2, let key = items[0].stringValue else {
                throw SyncWireFormatError("an entry of an AnyValue dictionary is not a [key, value] pair: \(pair)")
            }
            guard entries[key] == nil else {
                throw SyncWireFormatError("an AnyValue dictionary holds the key \(JSONValue.string(key)) twice")
            }
            entries[key] = try WireMixedValue(json: items[1], depth: depth + 1).value
        }
        value = .dictionary(entries)
    }

    package func json() throws(SyncWireFormatError) -> JSONValue {
        switch value {
        case .list(let elements):
            var items: [JSONValue] = []
            items.reserveCapacity(elements.count)
            for element in elements { items.append(try WireMixedValue(element).json()) }
            return .object([(key: "list", value: .array(items))])
        case .dictionary(let entries):
            var pairs: [JSONValue] = []
            pairs.reserveCapacity(entries.count)
            for (key, element) in entries.sorted(by: { ListMerge.mapKeyPrecedes($0.key, $1.key) }) {
                pairs.append(.array([.string(key), try WireMixedValue(element).json()]))
            }
            return .object([(key: "dictionary", value: .array(pairs))])
        case .reference(let target):
            return .object([(key: "ref", value: try WireReference(target).json())])
        default:
            return try WireValue(value.anyValue?.propertyValue ?? .null).json()
        }
    }

    /// Whether a value of the wire can only be an `AnyValue`'s: a dictionary, or a list
    /// holding a list, a dictionary or a link.
    static func isMixedOnly(_ json: JSONValue) -> Bool {
        guard case .object(let members) = json else { return false }
        for member in members {
            if member.key == "dictionary" { return true }
            if member.key == "list", let items = member.value.arrayValue {
                return items.contains { item in
                    item.objectValue?.contains { $0.key == "list" || $0.key == "dictionary" || $0.key == "ref" }
                        == true
                }
            }
        }
        return false
    }
}

/// An object's type and local id.
package struct WireObjectID: Hashable, Sendable, WireJSONConvertible {
    package var type: String
    package var id: WireValue

    package init(_ object: SyncObjectID) {
        type = object.typeName
        id = WireValue(object.primaryKey)
    }

    package var object: SyncObjectID { SyncObjectID(typeName: type, primaryKey: id.value) }

    package init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "an object id")
        type = try object.string("type")
        id = try WireValue(json: try object.required("id"))
    }

    package func json() throws(SyncWireFormatError) -> JSONValue {
        .object([(key: "id", value: try id.json()), (key: "type", value: .string(type))])
    }
}

/// A link target.
struct WireReference: Hashable, Sendable, WireJSONConvertible {
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

    package init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a reference")
        type = try object.string("type")
        id = try WireValue(json: try object.required("id"))
        serverID = try object.optionalString("serverID")
    }

    package func json() throws(SyncWireFormatError) -> JSONValue {
        .members([("id", try id.json()), ("serverID", serverID.map(JSONValue.string)), ("type", .string(type))])
    }
}

/// A value of a change: a plain value, `{"ref": …}`, `{"refs": […]}`, `{"map": [[key, value], …]}`
/// (the keys in increasing order of their Unicode scalars, as files write a map; a map of
/// objects' values `{"ref": …}` or `{"null": true}`; a `Map<String, AnyValue>`'s, AnyValues) or an
/// `AnyValue` (``WireMixedValue``; read as a plain value unless only an AnyValue has its shape; a
/// `List<AnyValue>` is `{"list": […]}` of AnyValues, read the same way).
package struct WireSyncValue: Hashable, Sendable, WireJSONConvertible {
    package var value: SyncValue

    package init(_ value: SyncValue) { self.value = value }

    package init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a value")
        if object.contains("ref") {
            value = .reference(
                try object["ref"].map { (target) throws(SyncWireFormatError) in
                    try WireReference(json: target).reference
                })
        } else if object.contains("refs") {
            var targets: [SyncReference] = []
            for target in try object.array("refs") { targets.append(try WireReference(json: target).reference) }
            value = .references(targets)
        } else if object.contains("map") {
            value = try Self.map(try object.array("map"))
        } else if WireMixedValue.isMixedOnly(json), object.contains("list") {
            // The list of an AnyValue property, or of a List<AnyValue>: each element nests as
            // deep as an AnyValue of its own may (the property's model says which it is).
            var elements: [SyncMixedValue] = []
            for element in try object.array("list") { elements.append(try WireMixedValue(json: element).value) }
            value = .mixed(.list(elements))
        } else if WireMixedValue.isMixedOnly(json) {
            value = .mixed(try WireMixedValue(json: json).value)
        } else {
            value = .value(try WireValue(json: json).value)
        }
    }

    /// A map from its pairs: of plain values, or of objects when a value is `{"ref": …}` (each
    /// value then `{"ref": …}` or `{"null": true}`).
    private static func map(_ pairs: [JSONValue]) throws(SyncWireFormatError) -> SyncValue {
        var entries: [(key: String, value: JSONValue)] = []
        var seen = Set<String>()
        for pair in pairs {
            guard let elements = pair.arrayValue, elements.count == 2, let key = elements[0].stringValue else {
                throw SyncWireFormatError("an entry of a map is not a [key, value] pair: \(pair)")
            }
            // A key given twice (a server without a schema may hold one): the first, as for
            // the members of an object.
            if seen.insert(key).inserted { entries.append((key, elements[1])) }
        }
        func isLink(_ value: JSONValue) -> Bool { value.objectValue?.contains { $0.key == "ref" } == true }
        func isNull(_ value: JSONValue) -> Bool { value.objectValue?.contains { $0.key == "null" } == true }
        let hasLinks = entries.contains { isLink($0.value) }
        let isOfObjects = hasLinks && entries.allSatisfy { isLink($0.value) || isNull($0.value) }
        if !isOfObjects, hasLinks || entries.contains(where: { WireMixedValue.isMixedOnly($0.value) }) {
            // A Map<String, AnyValue> holding a dictionary, a nested list in a list, or a link
            // beside a value that is neither a link nor null.
            var values: [String: SyncMixedValue] = [:]
            for (key, value) in entries { values[key] = try WireMixedValue(json: value).value }
            return .mixedMap(values)
        }
        guard isOfObjects else {
            var values: [String: PropertyValue] = [:]
            for (key, value) in entries { values[key] = try WireValue(json: value).value }
            return .map(values)
        }
        var targets: [String: SyncReference?] = [:]
        for (key, value) in entries {
            let member = try WireObject(value, "a value of a map of objects")
            if member.contains("ref") {
                let target = member["ref"] ?? .null
                targets[key] = .some(target == .null ? nil : try WireReference(json: target).reference)
            } else if member.contains("null") {
                targets[key] = .some(nil)
            } else {
                throw SyncWireFormatError(
                    "a value of a map of objects is not {\"ref\": …} or {\"null\": true}: \(value)")
            }
        }
        return .referenceMap(targets)
    }

    package func json() throws(SyncWireFormatError) -> JSONValue {
        switch value {
        case .value(let plain):
            return try WireValue(plain).json()
        case .reference(let target):
            return .object([(key: "ref", value: try target.map(WireReference.init)?.json() ?? .null)])
        case .references(let targets):
            var elements: [JSONValue] = []
            elements.reserveCapacity(targets.count)
            for target in targets { elements.append(try WireReference(target).json()) }
            return .object([(key: "refs", value: .array(elements))])
        case .map(let entries):
            var pairs: [JSONValue] = []
            pairs.reserveCapacity(entries.count)
            for (key, value) in entries.sorted(by: { ListMerge.mapKeyPrecedes($0.key, $1.key) }) {
                pairs.append(.array([.string(key), try WireValue(value).json()]))
            }
            return .object([(key: "map", value: .array(pairs))])
        case .referenceMap(let entries):
            var pairs: [JSONValue] = []
            pairs.reserveCapacity(entries.count)
            for (key, target) in entries.sorted(by: { ListMerge.mapKeyPrecedes($0.key, $1.key) }) {
                let value: JSONValue =
                    if let target { .object([(key: "ref", value: try WireReference(target).json())]) } else {
                        .object([(key: "null", value: .bool(true))])
                    }
                pairs.append(.array([.string(key), value]))
            }
            return .object([(key: "map", value: .array(pairs))])
        case .mixed(let mixed):
            return try WireMixedValue(mixed).json()
        case .mixedList(let elements):
            var items: [JSONValue] = []
            items.reserveCapacity(elements.count)
            for element in elements { items.append(try WireMixedValue(element).json()) }
            return .object([(key: "list", value: .array(items))])
        case .mixedMap(let entries):
            var pairs: [JSONValue] = []
            pairs.reserveCapacity(entries.count)
            for (key, value) in entries.sorted(by: { ListMerge.mapKeyPrecedes($0.key, $1.key) }) {
                pairs.append(.array([.string(key), try WireMixedValue(value).json()]))
            }
            return .object([(key: "map", value: .array(pairs))])
        }
    }

    /// The JSON of values by property, the names in order.
    static func json(_ values: [String: WireSyncValue]) throws(SyncWireFormatError) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        members.reserveCapacity(values.count)
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            members.append((key: name, value: try value.json()))
        }
        return .object(members)
    }

    /// Values by property, from an object member (nil when absent).
    static func values(_ object: WireObject, _ key: String) throws(SyncWireFormatError) -> [String: WireSyncValue]? {
        guard let members = try object.optionalObject(key) else { return nil }
        var values: [String: WireSyncValue] = [:]
        values.reserveCapacity(members.count)
        for (name, value) in members { values[name] = try WireSyncValue(json: value) }
        return values
    }
}

/// One change of a push request.
package struct WireChange: Hashable, Sendable, WireJSONConvertible {
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

    package init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a change")
        key = try object.string("key")
        self.object = try WireObjectID(json: try object.required("object"))
        serverID = try object.optionalString("serverID")
        kind = try object.string("kind")
        values = try WireSyncValue.values(object, "values")
        bases = try WireSyncValue.values(object, "bases")
    }

    /// The members in the order of their names.
    package func json() throws(SyncWireFormatError) -> JSONValue {
        .members([
            ("bases", try bases.map { (bases) throws(SyncWireFormatError) in try WireSyncValue.json(bases) }),
            ("key", .string(key)), ("kind", .string(kind)), ("object", try object.json()),
            ("serverID", serverID.map(JSONValue.string)),
            ("values", try values.map { (values) throws(SyncWireFormatError) in try WireSyncValue.json(values) }),
        ])
    }
}

/// The body of `POST /v1/spaces/{space}/push`.
package struct WirePushRequest: Hashable, Sendable, WireJSONConvertible {
    package var changes: [WireChange]

    package init(changes: [WireChange]) { self.changes = changes }

    package init(json: JSONValue) throws(SyncWireFormatError) {
        var changes: [WireChange] = []
        for change in try WireObject(json, "a push request").array("changes") {
            changes.append(try WireChange(json: change))
        }
        self.changes = changes
    }

    package func json() throws(SyncWireFormatError) -> JSONValue {
        var elements: [JSONValue] = []
        elements.reserveCapacity(changes.count)
        for change in changes { elements.append(try change.json()) }
        return .object([(key: "changes", value: .array(elements))])
    }
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
package struct WireServerChange: Hashable, Sendable, WireJSONConvertible {
    package var object: WireObjectID
    package var serverID: String
    package var serverVersion: UInt64
    package var deleted: Bool
    /// A removal of an object the server still has (``ServerChange/isHidden``).
    package var hidden: Bool
    package var values: [String: WireSyncValue]

    package init(_ change: ServerChange) {
        object = WireObjectID(change.object)
        serverID = change.serverID
        serverVersion = change.serverVersion
        deleted = change.isDeleted
        hidden = change.isHidden
        values = change.values.mapValues(WireSyncValue.init)
    }

    package var change: ServerChange {
        ServerChange(
            object: object.object, serverID: serverID, serverVersion: serverVersion, isDeleted: deleted,
            isHidden: deleted && hidden, values: values.mapValues(\.value))
    }

    package init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a pulled object")
        self.object = try WireObjectID(json: try object.required("object"))
        serverID = try object.string("serverID")
        serverVersion = try object.uint64("serverVersion")
        deleted = try object.bool("deleted")
        hidden = try object.optionalBool("hidden") ?? false
        guard let values = try WireSyncValue.values(object, "values") else {
            throw SyncWireFormatError("a pulled object has no member \"values\"")
        }
        self.values = values
    }

    package func json() throws(SyncWireFormatError) -> JSONValue {
        .members([
            ("deleted", .bool(deleted)), ("hidden", hidden ? .bool(true) : nil), ("object", try object.json()),
            ("serverID", .string(serverID)), ("serverVersion", .number(JSONNumber(serverVersion))),
            ("values", try WireSyncValue.json(values)),
        ])
    }
}

/// The body of a pull response.
package struct WirePullResponse: Hashable, Sendable, WireJSONConvertible {
    package var changes: [WireServerChange]
    package var cursor: String?
    package var hasMore: Bool
    package var version: UInt64?
    package var latestVersion: UInt64?

    package init(_ pull: SyncPull) {
        changes = pull.changes.map(WireServerChange.init)
        cursor = pull.cursor
        hasMore = pull.hasMore
        version = pull.version
        latestVersion = pull.latestVersion
    }

    package var pull: SyncPull {
        SyncPull(
            changes: changes.map(\.change), cursor: cursor, hasMore: hasMore, version: version,
            latestVersion: latestVersion)
    }

    package init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a pull response")
        var changes: [WireServerChange] = []
        for change in try object.array("changes") { changes.append(try WireServerChange(json: change)) }
        self.changes = changes
        cursor = try object.optionalString("cursor")
        hasMore = try object.bool("hasMore")
        version = try object.optionalUInt64("version")
        latestVersion = try object.optionalUInt64("latestVersion")
    }

    package func json() throws(SyncWireFormatError) -> JSONValue {
        var elements: [JSONValue] = []
        elements.reserveCapacity(changes.count)
        for change in changes { elements.append(try change.json()) }
        return .members([
            ("changes", .array(elements)), ("cursor", cursor.map(JSONValue.string)), ("hasMore", .bool(hasMore)),
            ("latestVersion", latestVersion.map { .number(JSONNumber($0)) }),
            ("version", version.map { .number(JSONNumber($0)) }),
        ])
    }
}

/// The body of an objects response (`POST /v1/spaces/{space}/objects`): the states found.
package struct WireObjectsResponse: Hashable, Sendable, WireJSONConvertible {
    package var changes: [WireServerChange]

    package init(changes: [ServerChange]) { self.changes = changes.map(WireServerChange.init) }

    package init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "an objects response")
        var changes: [WireServerChange] = []
        for change in try object.array("changes") { changes.append(try WireServerChange(json: change)) }
        self.changes = changes
    }

    package func json() throws(SyncWireFormatError) -> JSONValue {
        var elements: [JSONValue] = []
        for change in changes { elements.append(try change.json()) }
        return .object([(key: "changes", value: .array(elements))])
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
