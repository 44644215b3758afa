// The text rules of docs/SYNC-PROTOCOL.md ("Text") applied to a pushed change: the rules
// themselves are `SyncText` (LiveObjectsSyncProtocol), shared with the device.
import LiveObjectsJSON
import LiveObjectsSyncProtocol

extension String {
    /// Whether the string holds U+0000 (``SyncText/containsNUL(_:)``).
    var containsNUL: Bool { SyncText.containsNUL(self) }
}

extension JSONValue {
    /// Whether a string or a member name anywhere in the value holds U+0000.
    var containsNUL: Bool {
        switch self {
        case .string(let text): text.containsNUL
        case .array(let items): items.contains(where: \.containsNUL)
        case .object(let members): members.contains { $0.key.containsNUL || $0.value.containsNUL }
        case .null, .bool, .number: false
        }
    }

    /// An object id with its string in NFC: `{"string": …}` normalized, any other id as is.
    var normalizedID: JSONValue {
        guard case .object(let members) = self, members.count == 1, case .string(let text)? = self["string"] else {
            return self
        }
        return .object([(key: "string", value: .string(SyncText.nfc(text)))])
    }

    /// A value whose references' ids are in NFC.
    var withNormalizedReferences: JSONValue {
        func reference(_ value: JSONValue) -> JSONValue {
            guard var fields = value.fields, let id = fields["id"] else { return value }
            fields["id"] = id.normalizedID
            return .sortedObject(fields)
        }
        guard case .object(let members) = self, members.count == 1, let (tag, payload) = members.first else {
            return self
        }
        switch (tag, payload) {
        case ("ref", .object): return .object([(key: "ref", value: reference(payload))])
        case ("refs", .array(let targets)): return .object([(key: "refs", value: .array(targets.map(reference)))])
        case ("map", .array(let pairs)):
            // A map of objects: each `[key, {"ref": …}]` entry's reference.
            let normalized = pairs.map { pair -> JSONValue in
                guard case .array(let entry) = pair, entry.count == 2 else { return pair }
                return .array([entry[0], entry[1].withNormalizedReferences])
            }
            return .object([(key: "map", value: .array(normalized))])
        default: return self
        }
    }
}

extension JSONValue {
    /// About the bytes the value takes in the database: strings' UTF-8, 8 per other scalar.
    var storedSize: Int {
        switch self {
        case .string(let text): text.utf8.count
        case .array(let items): items.reduce(0) { $0 + $1.storedSize }
        case .object(let members): members.reduce(0) { $0 + $1.key.utf8.count + $1.value.storedSize }
        case .null, .bool, .number: 8
        }
    }

    /// The size of an object id (`SyncProtocolLimits.maximumIDBytes`): its payload's, so that a String id of
    /// 1,024 bytes of UTF-8 fits.
    var idSize: Int {
        if case .object(let members) = self, members.count == 1, let payload = members.first?.value {
            return payload.storedSize
        }
        return storedSize
    }
}

extension PushedChange {
    /// Where the change holds U+0000 (its key, type, id, a property name or a value), or nil.
    var nulProblem: String? {
        if key.containsNUL { return "its idempotency key" }
        if object.type.containsNUL { return "its type name" }
        if object.id.containsNUL { return "its id" }
        if serverID?.containsNUL == true { return "its server id" }
        for (name, value) in values ?? [:] {
            if name.containsNUL { return "a property name" }
            if value.containsNUL { return "the value of \(name)" }
        }
        for (name, base) in bases ?? [:] where name.containsNUL || base.containsNUL {
            return "the base of \(name)"
        }
        return nil
    }

    /// The change with its string ids, and those of its references, in NFC: "café" in NFC and in
    /// NFD name one object, as on every device.
    var normalized: PushedChange {
        var change = self
        change.object.id = object.id.normalizedID
        change.values = values?.mapValues(\.withNormalizedReferences)
        change.bases = bases?.mapValues(\.withNormalizedReferences)
        return change
    }
}
