import Foundation
import LiveObjectsJSON
import LiveObjectsSyncProtocol

// The JSON the server checks, stores and compares: LiveObjectsJSON's tree, read in a canonical
// form (``JSONValue/canonical``) so that two spellings of one value are one value, as they were
// when Foundation's decoder read them into a dictionary and an integer or a double.

extension JSONValue {
    /// Parses JSON text in the canonical form.
    ///
    /// - Throws: ``SyncServerError`` `badRequest` for a text that is not JSON, or with a number
    ///   no `Double` holds.
    static func canonical(parsing bytes: [UInt8], _ what: String) throws(SyncServerError) -> JSONValue {
        let parsed: JSONValue
        do {
            parsed = try JSONValue(parsing: bytes)
        } catch {
            throw SyncServerError(.badRequest, "\(what) is not JSON: \(error.message)")
        }
        guard let value = parsed.canonical else {
            throw SyncServerError(.badRequest, "\(what) holds a number too large for a double")
        }
        return value
    }

    /// Parses JSON text in the canonical form.
    static func canonical(parsing text: String, _ what: String) throws(SyncServerError) -> JSONValue {
        try canonical(parsing: Array(text.utf8), what)
    }

    /// The value with the members of its objects in the order of their names (of a repeated
    /// name, the first kept), a number of an integer value within `Int64` written as that
    /// integer (`1.0`, `1e2` and `-0` are `1`, `100` and `0`) and any other as the shortest
    /// `Double`; nil when a number is too large for a `Double`.
    var canonical: JSONValue? {
        switch self {
        case .null, .bool, .string: return self
        case .number(let number):
            if let integer = number.int64Value { return .int(integer) }
            guard let double = number.doubleValue else { return nil }
            if let integer = Int64(exactly: double) { return .int(integer) }
            return .number(JSONNumber(double))
        case .array(let items):
            var result: [JSONValue] = []
            result.reserveCapacity(items.count)
            for item in items {
                guard let value = item.canonical else { return nil }
                result.append(value)
            }
            return .array(result)
        case .object(let members):
            var seen = Set<String>()
            var result: [(key: String, value: JSONValue)] = []
            result.reserveCapacity(members.count)
            for member in members where seen.insert(member.key).inserted {
                guard let value = member.value.canonical else { return nil }
                result.append((key: member.key, value: value))
            }
            result.sort { $0.key < $1.key }
            return .object(result)
        }
    }

    /// An object of members, in the order of their names (the canonical form).
    static func sortedObject(_ members: [String: JSONValue]) -> JSONValue {
        .object(members.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
    }

    /// The members of an object by name, nil for any other value.
    var fields: [String: JSONValue]? {
        guard case .object(let members) = self else { return nil }
        return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether the value is a number of an integer value (canonical form: written as one).
    var isInteger: Bool { numberValue?.int64Value != nil }

    /// The value as compact JSON text (sorted keys in the canonical form: one spelling per value).
    var text: String { description }
}

/// A change of a push request, its values kept as JSON.
struct PushedChange: Sendable {
    struct ObjectName: Sendable {
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

    /// Reads a change of canonical JSON, as Foundation's decoder read it: `null` is an absent
    /// optional member, unknown members are ignored.
    init(json: JSONValue) throws(SyncServerError) {
        func bad(_ message: String) -> SyncServerError { SyncServerError(.badRequest, "a change \(message)") }
        guard let fields = json.fields else { throw bad("is not an object") }
        func present(_ name: String) -> JSONValue? {
            guard let value = fields[name], !value.isNull else { return nil }
            return value
        }
        func string(_ name: String) throws(SyncServerError) -> String {
            guard let text = present(name)?.stringValue else { throw bad("has no string \(name)") }
            return text
        }
        func values(_ name: String) throws(SyncServerError) -> [String: JSONValue]? {
            guard let value = present(name) else { return nil }
            guard let members = value.fields else { throw bad("has a \(name) that is not an object") }
            return members
        }
        key = try string("key")
        kind = try string("kind")
        guard let object = present("object")?.fields, let type = object["type"]?.stringValue,
            let id = object["id"], !id.isNull
        else { throw bad("has no object {\"type\": …, \"id\": …}") }
        self.object = ObjectName(type: type, id: id)
        switch present("serverID") {
        case nil: serverID = nil
        case .string(let text)?: serverID = text
        default: throw bad("has a serverID that is not a string")
        }
        self.values = try values("values")
        bases = try values("bases")
    }

    init(key: String, object: ObjectName, serverID: String?, kind: String, values: [String: JSONValue]?) {
        self.key = key
        self.object = object
        self.serverID = serverID
        self.kind = kind
        self.values = values
    }
}

/// The body of a push request.
struct PushRequest: Sendable {
    var changes: [PushedChange]

    /// Reads the body of a push request.
    ///
    /// - Throws: ``SyncServerError`` `badRequest`, saying what is wrong.
    init(bytes: [UInt8]) throws(SyncServerError) {
        let json = try JSONValue.canonical(parsing: bytes, "the body")
        guard case .array(let changes)? = json.fields?["changes"] else {
            throw SyncServerError(.badRequest, "the body is not a push request: no array of changes")
        }
        var read: [PushedChange] = []
        read.reserveCapacity(changes.count)
        for change in changes { read.append(try PushedChange(json: change)) }
        self.changes = read
    }
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
        case ("null", .bool(true)), ("bool", .bool), ("string", .string): return true
        case ("int", .number): return payload.isInteger
        case ("float", .number), ("double", .number), ("date", .number): return true
        case ("float", .string(let text)), ("double", .string(let text)): return SyncNonFinite.number(text) != nil
        case ("data", .string(let text)): return Data(base64Encoded: text) != nil
        case ("uuid", .string(let text)): return UUID(uuidString: text) != nil
        case ("decimal", .string(let text)): return isDecimalText(text)
        case ("objectID", .string(let text)): return text.utf8.count == 24 && text.utf8.allSatisfy(\.isHexDigit)
        case ("list", .array(let items)): return items.allSatisfy(isPlainValue)
        default: return false
        }
    }

    /// Whether a text is a decimal a device reads exactly (`Decimal`): `NaN`, or an optional
    /// minus, digits with an optional fraction, an optional exponent of at most three digits,
    /// at most 38 significant digits, and a magnitude a `Decimal` holds (Foundation's reader,
    /// the device's, refuses `1e200`).
    static func isDecimalText(_ text: String) -> Bool {
        text == "NaN"
            || (isDecimalSyntax(text) && Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) != nil)
    }

    /// The syntax part of ``isDecimalText(_:)``.
    private static func isDecimalSyntax(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let mantissa = bytes.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        var exponent = bytes.dropFirst(mantissa.count)
        let parts = mantissa.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty,
            parts.allSatisfy({ $0.allSatisfy(\.isDecimalDigit) }), parts.count == 1 || !parts[1].isEmpty
        else { return false }
        if !exponent.isEmpty {
            exponent = exponent.dropFirst()
            if exponent.first == UInt8(ascii: "+") || exponent.first == UInt8(ascii: "-") {
                exponent = exponent.dropFirst()
            }
            guard (1...3).contains(exponent.count), exponent.allSatisfy(\.isDecimalDigit) else { return false }
        }
        // Significant digits: from the first nonzero digit to the last one.
        let significant = mantissa.filter(\.isDecimalDigit).drop { $0 == UInt8(ascii: "0") }
            .reversed().drop { $0 == UInt8(ascii: "0") }
        return significant.count <= 38
    }

    /// A link's target: an object with a `type` string, a plain `id` and an optional `serverID`
    /// string (or null), nothing else.
    static func isReference(_ value: JSONValue) -> Bool {
        guard let fields = value.fields, case .string = fields["type"], let id = fields["id"], isPlainValue(id)
        else { return false }
        switch fields["serverID"] {
        case nil, .null?, .string?: return Set(fields.keys).isSubset(of: ["type", "id", "serverID"])
        default: return false
        }
    }

    /// A plain value, `{"ref": reference-or-null}`, `{"refs": [reference]}`,
    /// `{"map": [[key, plain value, {"ref": reference} or the outer shape of a mixed list or
    /// dictionary], …]}` (a key given twice is refused by a space's schema; a device reads the
    /// first), or the outer shape of a mixed list or dictionary (``isMixedShape(_:)``: what it
    /// holds is checked per change).
    static func isSyncValue(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value, members.count == 1, let (name, payload) = members.first else {
            return false
        }
        switch (name, payload) {
        case ("ref", .null): return true
        case ("ref", let target): return isReference(target)
        case ("refs", .array(let targets)): return targets.allSatisfy(isReference)
        case ("refs", _): return false
        case ("map", .array(let pairs)):
            // A map of objects' values are `{"ref": …}` (nil as `{"null": true}`).
            return pairs.allSatisfy {
                guard case .array(let entry) = $0, entry.count == 2, case .string = entry[0] else { return false }
                if case .object(let members) = entry[1], members.count == 1, members[0].key == "ref" {
                    return members[0].value == .null || isReference(members[0].value)
                }
                return isPlainValue(entry[1]) || isMixedShape(entry[1])
            }
        case ("map", _): return false
        default: return isPlainValue(value) || isMixedShape(value)
        }
    }
}

extension PushedChange {
    /// The types of the objects the change's values link to.
    var linkedTypes: [String] {
        var types: [String] = []
        func add(_ reference: JSONValue) {
            if case .string(let type)? = reference["type"] { types.append(type) }
        }
        for value in (values ?? [:]).values {
            if let target = value["ref"] { add(target) }
            value.containedReferences.forEach(add)
        }
        return types
    }
}

extension UInt8 {
    /// `0` to `9`.
    fileprivate var isDecimalDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
    /// `0` to `9`, `a` to `f`, `A` to `F`.
    fileprivate var isHexDigit: Bool {
        isDecimalDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self | 0x20)
    }
}
