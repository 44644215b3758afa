import Foundation
import LiveObjects
import LiveObjectsJSON

/// How the shell prints and reads the value of an `AnyValue` property: null, a bool, an integer,
/// a number with a fraction (a double) and a string as themselves; every other kind as an object
/// of one member naming it, so that the kind shows: `{"decimal": "9.99"}`, `{"float": 1.5}`,
/// `{"date": "2024-05-01T10:00:00Z"}` (ISO 8601, or seconds since 2001 as a number on input),
/// `{"data": "base64"}`, `{"uuid": "…"}`, `{"objectID": "24 hex digits"}`. A nested list is an
/// array; a nested dictionary prints as `{"dictionary": {…}}`, and on input may also be a bare
/// object that is not one member named as a kind (`{"name": "Rex", "age": 3}`). A link prints
/// and is read as `{"link": {"type": "Dog", "key": "#3"}}` (the key as the shell prints keys:
/// `#row` or `#row.generation`).
extension Operations {
    /// A mixed value as the shell prints it.
    static func json(mixed value: PropertyValue) -> JSONValue {
        func tagged(_ name: String, _ payload: JSONValue) -> JSONValue { .object([(name, payload)]) }
        switch value {
        case .null, .bool, .int, .string, .double: return json(scalar: value)
        case .float: return tagged("float", json(scalar: value))
        case .date(let v): return tagged("date", .string(v.formatted(.iso8601)))
        case .data(let v): return tagged("data", .string(v.base64EncodedString()))
        case .uuid(let v): return tagged("uuid", .string(v.uuidString))
        case .decimal(let v): return tagged("decimal", .string(v.exactText))
        case .objectID(let v): return tagged("objectID", .string(v.hexString))
        case .list(let stored) where MixedContainer(stored) == .link:
            guard let link = MixedContainer.link(of: stored) else { return .null }
            return tagged(
                "link", .object([("type", .string(link.objectType)), ("key", .string(link.key.description))]))
        case .list(let stored) where MixedContainer(stored) == .dictionary:
            var members: [(key: String, value: JSONValue)] = []
            for i in stride(from: 1, to: stored.count - 1, by: 2) {
                guard case .string(let key) = stored[i] else { continue }
                members.append((key, json(mixed: stored[i + 1])))
            }
            return tagged("dictionary", .object(members))
        case .list(let stored): return .array(MixedContainer.elements(of: stored).map { json(mixed: $0) })
        case .object: return .null
        }
    }

    /// The names of the kinds an object of one member may name.
    private static let kindMembers: Set<String> = [
        "float", "double", "date", "data", "uuid", "decimal", "objectID", "list", "dictionary", "link",
    ]

    /// `{"type": "Dog", "key": "#3"}`, the object of a link, as a link; nil when it is not one.
    private static func mixedLink(_ members: [(key: String, value: JSONValue)]) -> PropertyValue? {
        guard members.count == 2, members[0].key == "type", case .string(let type) = members[0].value,
            members[1].key == "key", case .string(let text) = members[1].value, text.hasPrefix("#")
        else { return nil }
        let parts = text.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let row = UInt32(parts[0]), row != .max,
            let generation = parts.count == 2 ? UInt32(parts[1]) : 0
        else { return nil }
        return AnyValue.link(.init(objectType: type, key: ObjectKey(row: row, generation: generation))).propertyValue
    }

    /// A JSON value as a mixed value.
    static func mixedValue(_ json: JSONValue, for property: Property, in schema: ObjectSchema) throws -> PropertyValue {
        func mismatch() -> ShellError {
            ShellError(
                "\(schema.name).\(property.name): expected null, a bool, a number, a string, an array, a dictionary"
                    + " or an object naming its kind ({\"decimal\": \"9.99\"}, {\"date\": …}, {\"uuid\": …},"
                    + " {\"objectID\": …}, {\"data\": …}, {\"float\": …}, {\"dictionary\": {…}},"
                    + " {\"link\": {\"type\": …, \"key\": \"#3\"}}), got \(json.spaced)")
        }
        func nested(_ json: JSONValue) throws -> AnyValue {
            guard let value = AnyValue(try mixedValue(json, for: property, in: schema)) else { throw mismatch() }
            return value
        }
        func dictionary(_ members: [(key: String, value: JSONValue)]) throws -> PropertyValue {
            var values: [String: AnyValue] = [:]
            for (key, value) in members { values[key] = try nested(value) }
            return AnyValue.dictionary(values).propertyValue
        }
        switch json {
        case .null: return .null
        case .bool(let v): return .bool(v)
        case .string(let v): return .string(v)
        case .number:
            if let v = json.int64Value { return .int(v) }
            return .double(json.numberAsDouble ?? .nan)
        case .array(let items): return AnyValue.list(try items.map(nested)).propertyValue
        case .object(let members) where members.count != 1 || !kindMembers.contains(members[0].key):
            return try dictionary(members)
        case .object(let members):
            var plain = property
            switch (members[0].key, members[0].value) {
            case ("list", .array): return try mixedValue(members[0].value, for: property, in: schema)
            case ("dictionary", .object(let inner)): return try dictionary(inner)
            case ("link", .object(let inner)):
                guard let link = mixedLink(inner) else { throw mismatch() }
                return link
            case ("list", _), ("dictionary", _), ("link", _): throw mismatch()
            default: break
            }
            switch members[0].key {
            case "float": plain.type = .float
            case "double": plain.type = .double
            case "date": plain.type = .date
            case "data": plain.type = .data
            case "uuid": plain.type = .uuid
            case "decimal": plain.type = .decimal
            case "objectID": plain.type = .objectID
            default: throw mismatch()
            }
            if plain.type == .date, let seconds = members[0].value.numberAsDouble {
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            return try plainValue(members[0].value, for: plain, in: schema)
        }
    }
}
