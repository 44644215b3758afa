import Foundation
import LiveObjectsJSON
import LiveObjectsSyncProtocol

/// A space's schema: its object types with their primary keys and properties, in the JSON form
/// of docs/SYNC-PROTOCOL.md ("Schemas"). An app writes it with `SyncSchema` (LiveObjectsSync);
/// `liveobjects-sync-server space schema NAME --file FILE` uploads it. A push to a space with a
/// schema is checked change by change against it, so that every device can read back what the
/// server stores.
public struct SpaceSchema: Codable, Hashable, Sendable {
    /// The primary key of a type: the object id on the wire.
    public struct PrimaryKey: Codable, Hashable, Sendable {
        /// The property's name (kept for people; ids travel without it).
        public var name: String
        /// `string`, `uuid`, `int`, `int8`, `int16`, `int32` or `int64`.
        public var type: String

        /// Creates a primary key.
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    /// A property a push may send.
    public struct Property: Codable, Hashable, Sendable {
        /// The property's name.
        public var name: String
        /// `bool`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `double`, `string`,
        /// `date`, `data`, `uuid`, `decimal`, `objectID`, `mixed` (an `AnyValue`: any kind, nil
        /// included, nested lists and dictionaries; with ``isList``, ``isSet`` or ``isMap`` a
        /// list, set or map of them) or `link`.
        public var type: String
        /// Whether nil is accepted (of the value, or of the list's elements). A to-one link is
        /// always optional.
        public var isOptional: Bool
        /// Whether the value is a list (of links, for `link`).
        public var isList: Bool
        /// For `link`: the type linked to, a type of the schema.
        public var target: String?
        /// Whether the list is a set: it never holds a member twice, and a push with a base
        /// merges it per member (docs/SYNC-PROTOCOL.md, "Sets").
        public var isSet: Bool
        /// Whether the value is a map from `String` keys to values of ``type`` (nil values when
        /// ``isOptional``): `{"map": [[key, value], …]}`, a push with a base merged per key
        /// (docs/SYNC-PROTOCOL.md, "Maps"). Not a list. A map of links (`link`, always optional)
        /// holds `{"ref": …}` or `{"null": true}` values.
        public var isMap: Bool

        /// Creates a property.
        public init(
            name: String, type: String, isOptional: Bool = false, isList: Bool = false, target: String? = nil,
            isSet: Bool = false, isMap: Bool = false
        ) {
            self.name = name
            self.type = type
            self.isOptional = isOptional
            self.isList = isList || isSet
            self.target = target
            self.isSet = isSet
            self.isMap = isMap
        }

        private enum CodingKeys: String, CodingKey {
            case name, type, optional, list, target, set, map
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            type = try container.decode(String.self, forKey: .type)
            isOptional = try container.decodeIfPresent(Bool.self, forKey: .optional) ?? false
            isList = try container.decodeIfPresent(Bool.self, forKey: .list) ?? false
            target = try container.decodeIfPresent(String.self, forKey: .target)
            isSet = try container.decodeIfPresent(Bool.self, forKey: .set) ?? false
            isList = isList || isSet
            isMap = try container.decodeIfPresent(Bool.self, forKey: .map) ?? false
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(type, forKey: .type)
            if isOptional { try container.encode(true, forKey: .optional) }
            if isList { try container.encode(true, forKey: .list) }
            if isSet { try container.encode(true, forKey: .set) }
            if isMap { try container.encode(true, forKey: .map) }
            try container.encodeIfPresent(target, forKey: .target)
        }

        /// As people read it: `name: String?`, `tags: [String]`, `labels: {String}`,
        /// `settings: [String: string?]`, `owner: -> Holder?`.
        var summary: String {
            var text = type == "link" ? "-> \(target ?? "?")" : type
            if isMap {
                text = "[String: \(text)\(isOptional ? "?" : "")]"
            } else if isSet {
                text = "{\(text)\(isOptional ? "?" : "")}"
            } else if isList {
                text = "[\(text)\(isOptional ? "?" : "")]"
            } else if isOptional {
                text += "?"
            }
            return "\(name): \(text)"
        }
    }

    /// An object type.
    public struct ObjectType: Codable, Hashable, Sendable {
        /// The model class's name.
        public var name: String
        /// Its primary key.
        public var primaryKey: PrimaryKey
        /// The properties a push may send (not the primary key).
        public var properties: [Property]

        /// Creates an object type.
        public init(name: String, primaryKey: PrimaryKey, properties: [Property]) {
            self.name = name
            self.primaryKey = primaryKey
            self.properties = properties
        }
    }

    /// The object types.
    public var types: [ObjectType]

    /// Creates a schema.
    public init(types: [ObjectType]) {
        self.types = types
    }

    static let scalarTypes: Set<String> = [
        "bool", "int", "int8", "int16", "int32", "int64", "float", "double", "string", "date", "data", "uuid",
        "decimal", "objectID",
    ]
    static let primaryKeyTypes: Set<String> = ["string", "uuid", "objectID", "int", "int8", "int16", "int32", "int64"]

    /// The schema's JSON, as stored and printed: sorted keys, types and properties by name.
    public var json: String {
        func property(_ p: Property) -> JSONValue {
            let members: [(String, JSONValue?)] = [
                ("list", p.isList ? .bool(true) : nil), ("map", p.isMap ? .bool(true) : nil),
                ("name", .string(p.name)), ("optional", p.isOptional ? .bool(true) : nil),
                ("set", p.isSet ? .bool(true) : nil),
                ("target", p.target.map(JSONValue.string)), ("type", .string(p.type)),
            ]
            return .object(members.compactMap { key, value in value.map { (key: key, value: $0) } })
        }
        let types = types.map { type -> JSONValue in
            [
                "name": .string(type.name),
                "primaryKey": ["name": .string(type.primaryKey.name), "type": .string(type.primaryKey.type)],
                "properties": .array(type.properties.map(property)),
            ]
        }
        let json: JSONValue = ["types": .array(types)]
        return String(decoding: json.jsonBytes(options: .pretty), as: UTF8.self)
    }

    /// Reads a schema from its JSON and checks it (``checked()``).
    ///
    /// - Throws: ``SyncServerError`` `badRequest`, saying what is wrong.
    public static func parse(_ data: Data) throws(SyncServerError) -> SpaceSchema {
        func bad(_ reason: String) -> SyncServerError {
            SyncServerError(.badRequest, "the schema is not the JSON of a space's schema: \(reason)")
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(data))
        } catch {
            throw bad(error.message)
        }
        /// A member: nil when absent or null.
        func member(_ value: JSONValue, _ key: String) -> JSONValue? {
            guard let found = value[key], !found.isNull else { return nil }
            return found
        }
        func string(_ value: JSONValue, _ key: String, in what: String) throws(SyncServerError) -> String {
            guard let text = member(value, key)?.stringValue else { throw bad("\(what) has no string \"\(key)\"") }
            return text
        }
        func flag(_ value: JSONValue, _ key: String, in what: String) throws(SyncServerError) -> Bool {
            guard let found = member(value, key) else { return false }
            guard let flag = found.boolValue else { throw bad("\"\(key)\" of \(what) is not a boolean") }
            return flag
        }
        guard json.objectValue != nil, case .array(let typeValues)? = member(json, "types") else {
            throw bad("no array \"types\"")
        }
        var types: [ObjectType] = []
        for typeValue in typeValues {
            guard typeValue.objectValue != nil else { throw bad("a type is not an object") }
            let name = try string(typeValue, "name", in: "a type")
            guard let key = member(typeValue, "primaryKey"), key.objectValue != nil else {
                throw bad("type \(name) has no object \"primaryKey\"")
            }
            guard case .array(let propertyValues)? = member(typeValue, "properties") else {
                throw bad("type \(name) has no array \"properties\"")
            }
            var properties: [Property] = []
            for value in propertyValues {
                guard value.objectValue != nil else { throw bad("a property of \(name) is not an object") }
                let what = "a property of \(name)"
                var target: String?
                if let found = member(value, "target") {
                    guard let text = found.stringValue else { throw bad("\"target\" of \(what) is not a string") }
                    target = text
                }
                properties.append(
                    Property(
                        name: try string(value, "name", in: what), type: try string(value, "type", in: what),
                        isOptional: try flag(value, "optional", in: what), isList: try flag(value, "list", in: what),
                        target: target, isSet: try flag(value, "set", in: what),
                        isMap: try flag(value, "map", in: what)))
            }
            types.append(
                ObjectType(
                    name: name,
                    primaryKey: PrimaryKey(
                        name: try string(key, "name", in: "the primary key of \(name)"),
                        type: try string(key, "type", in: "the primary key of \(name)")),
                    properties: properties))
        }
        return try SpaceSchema(types: types).checked()
    }

    /// The schema with its types and properties sorted by name, once checked: names of 1 to 512
    /// bytes without control characters, each once; known property and key types; links to
    /// types of the schema, a to-one link optional, a list of links not; a map not a list, a map
    /// of links optional; a `mixed` property without a target.
    ///
    /// - Throws: ``SyncServerError`` `badRequest`, naming the type and property.
    public func checked() throws(SyncServerError) -> SpaceSchema {
        func bad(_ message: String) -> SyncServerError { SyncServerError(.badRequest, "the schema: \(message)") }
        func isName(_ name: String) -> Bool {
            !name.isEmpty && name.utf8.count <= maximumNameLength
                && !name.unicodeScalars.contains { CharacterSet.controlCharacters.contains($0) }
        }
        guard !types.isEmpty else { throw bad("it declares no type") }
        let names = Set(types.map(\.name))
        guard names.count == types.count else { throw bad("a type is declared twice") }
        var sorted = self
        sorted.types.sort { $0.name < $1.name }
        for index in sorted.types.indices {
            let type = sorted.types[index]
            _ = try SyncStore.checkedTypes([type.name])
            guard isName(type.primaryKey.name) else { throw bad("type \(type.name): the primary key needs a name") }
            guard Self.primaryKeyTypes.contains(type.primaryKey.type) else {
                throw bad(
                    "type \(type.name): a primary key is string, uuid, objectID or an int type, not \(type.primaryKey.type)"
                )
            }
            var seen: Set<String> = [type.primaryKey.name]
            for property in type.properties {
                let at = "type \(type.name), property \(property.name)"
                guard isName(property.name) else { throw bad("type \(type.name): a property name has 1 to 512 bytes") }
                guard seen.insert(property.name).inserted else {
                    throw bad("\(at): declared twice (or named as the primary key)")
                }
                if property.isMap {
                    guard !property.isList else { throw bad("\(at): a property is a map or a list, not both") }
                    guard property.type != "link" || property.isOptional else {
                        throw bad("\(at): a map of links is optional (a key may have no object)")
                    }
                }
                if property.type == "mixed" {
                    guard property.target == nil else { throw bad("\(at): only a link has a target") }
                } else if property.type == "link" {
                    guard let target = property.target, names.contains(target) else {
                        throw bad("\(at): links to \(property.target ?? "nothing"), not a type of the schema")
                    }
                    guard property.isMap || property.isList != property.isOptional else {
                        throw bad("\(at): a to-one link is optional, a list of links is not")
                    }
                } else {
                    guard Self.scalarTypes.contains(property.type) else {
                        throw bad("\(at): unknown type \(property.type)")
                    }
                    guard property.target == nil else { throw bad("\(at): only a link has a target") }
                }
            }
            sorted.types[index].properties.sort { $0.name < $1.name }
        }
        return sorted
    }

    /// What a change from this schema to `new` would break for devices and stored objects: a
    /// type or property removed, a property's type, list-ness, optionality or link target
    /// changed, a primary key's type changed, a required property added. Empty when `new` only
    /// adds types and optional properties or lists.
    public func breakingChanges(to new: SpaceSchema) -> [String] {
        var problems: [String] = []
        let newTypes = Dictionary(new.types.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for type in types {
            guard let changed = newTypes[type.name] else {
                problems.append("type \(type.name) is removed")
                continue
            }
            if changed.primaryKey.type != type.primaryKey.type {
                problems.append(
                    "the primary key of \(type.name) changes from \(type.primaryKey.type) to \(changed.primaryKey.type)"
                )
            }
            let properties = Dictionary(changed.properties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            for property in type.properties {
                guard let now = properties[property.name] else {
                    problems.append("property \(type.name).\(property.name) is removed")
                    continue
                }
                if now != property {
                    problems.append(
                        "property \(type.name).\(property.name) changes from \(property.summary) to \(now.summary)")
                }
            }
            let old = Set(type.properties.map(\.name))
            for property in changed.properties
            where !old.contains(property.name) && !property.isOptional
                && !property.isList && !property.isMap
            {
                problems.append(
                    "property \(type.name).\(property.name) is added as required (\(property.summary)): add it optional"
                )
            }
        }
        return problems
    }

    subscript(type: String) -> ObjectType? { types.first { $0.name == type } }
}

/// Checking pushed changes and stored objects against a schema.
extension SpaceSchema {
    /// A change refused by the schema: the protocol's code and what is wrong.
    struct Refusal: Error, Hashable, Sendable {
        var code: SyncServerError.Code
        var message: String
    }

    /// Why a change (already checked for shape, text and kind) does not fit the schema, or nil
    /// when it fits.
    func refusal(of change: PushedChange) -> Refusal? {
        guard let type = self[change.object.type] else {
            return Refusal(
                code: .unknownType,
                message: "the schema of the space has no type \(change.object.type): it has \(typeList)")
        }
        if let problem = Self.idProblem(change.object.id, type.primaryKey.type) {
            return Refusal(code: .invalidValue, message: "the id of \(type.name): \(problem)")
        }
        guard change.changeKind != .delete else { return nil }
        if let mixed = type.properties.first(where: {
            $0.type == "mixed" && !$0.isList && !$0.isMap && change.bases?[$0.name] != nil
        }) {
            return Refusal(
                code: .invalidValue,
                message: "\(type.name).\(mixed.summary): an AnyValue is replaced whole, it has no base")
        }
        return refusal(of: change.values ?? [:], type: type)
    }

    /// Why an object's values do not fit its type, or nil.
    func refusal(of values: [String: JSONValue], type: ObjectType) -> Refusal? {
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let property = type.properties.first(where: { $0.name == name }) else {
                return Refusal(
                    code: .unknownProperty,
                    message: "\(type.name) has no property \(name) in the schema of the space")
            }
            if let problem = problem(of: value, property) {
                return Refusal(code: .invalidValue, message: "\(type.name).\(property.summary): \(problem)")
            }
        }
        return nil
    }

    private var typeList: String { types.map(\.name).joined(separator: ", ") }

    /// What is wrong with a value for a property, or nil.
    private func problem(of value: JSONValue, _ property: Property) -> String? {
        guard case .object(let members) = value, let (tag, payload) = members.first else { return "not a value" }
        if property.type == "mixed" { return mixedProblem(of: value, property) }
        if property.type == "link" {
            guard let target = property.target, let targetType = self[target] else { return "no target type" }
            func referenceProblem(_ reference: JSONValue) -> String? {
                guard let fields = reference.fields, case .string(let type)? = fields["type"],
                    let id = fields["id"]
                else { return "not a reference" }
                guard type == target else { return "links to \(type), not \(target)" }
                return Self.idProblem(id, targetType.primaryKey.type).map { "the id linked to: \($0)" }
            }
            if property.isMap {
                guard tag == "map", case .array(let pairs) = payload else { return "not {\"map\": [[key, value], …]}" }
                return mapProblem(pairs, property) { value in
                    if value == .object([(key: "null", value: .bool(true))]) { return nil }
                    guard case .object(let members) = value, members.count == 1, members[0].key == "ref",
                        members[0].value != .null
                    else { return "not {\"ref\": …} or {\"null\": true}" }
                    return referenceProblem(members[0].value)
                }
            }
            if property.isList {
                guard tag == "refs", case .array(let references) = payload else { return "not {\"refs\": […]}" }
                if let problem = references.lazy.compactMap(referenceProblem).first { return problem }
                return property.isSet ? Self.repeatedMember(references.map(\.referenceKey)) : nil
            }
            guard tag == "ref" else { return "not {\"ref\": …}" }
            if case .null = payload { return nil }
            return referenceProblem(payload)
        }
        if property.isMap {
            guard tag == "map", case .array(let pairs) = payload else { return "not {\"map\": [[key, value], …]}" }
            return mapProblem(pairs, property) { scalarProblem($0, property.type, optional: property.isOptional) }
        }
        if property.isList {
            guard tag == "list", case .array(let items) = payload else { return "not {\"list\": […]}" }
            // The shape check lets a list of any objects through, for a mixed property.
            guard PushedChange.isPlainValue(value) else { return "an element is not a plain value" }
            for item in items {
                if let problem = scalarProblem(item, property.type, optional: property.isOptional) {
                    return "an element: \(problem)"
                }
            }
            return property.isSet ? Self.repeatedMember(items) : nil
        }
        return scalarProblem(value, property.type, optional: property.isOptional)
    }

    /// What is wrong with the value of a `mixed` property, or nil: a single AnyValue's as
    /// ``PushedChange/mixedProblem(_:depth:)`` says; each element of a list, set or map of
    /// them checked as one (from depth 0: an element nests as deep as an AnyValue property may),
    /// a set's members once each (compared as ``ListMerge`` compares them: by their JSON, a
    /// link by its target), a map's keys as a map's. A link inside names a type of the schema
    /// by an id of its primary key's kind.
    private func mixedProblem(of value: JSONValue, _ property: Property) -> String? {
        func referenceProblem(_ reference: JSONValue) -> String? {
            guard case .string(let type)? = reference["type"], let id = reference["id"] else { return "is malformed" }
            guard let targetType = self[type] else {
                return "links to \(type), which is not a type of the schema: it has \(typeList)"
            }
            return Self.idProblem(id, targetType.primaryKey.type).map { "links to \(type) by an id: \($0)" }
        }
        func problem(_ value: JSONValue) -> String? {
            PushedChange.mixedProblem(value, referenceProblem: referenceProblem)
        }
        guard property.isList || property.isMap else { return problem(value) }
        guard case .object(let members) = value, members.count == 1, let (tag, payload) = members.first else {
            return "not a value"
        }
        if property.isMap {
            guard tag == "map", case .array(let pairs) = payload else { return "not {\"map\": [[key, value], …]}" }
            return mapProblem(pairs, property, valueProblem: problem)
        }
        guard tag == "list", case .array(let items) = payload else { return "not {\"list\": […]}" }
        for item in items {
            if let problem = problem(item) { return "an element: \(problem)" }
        }
        return property.isSet ? Self.repeatedMember(items.map(\.withReferenceKeys)) : nil
    }

    /// What is wrong with a map's entries, or nil: each a `[key, value]` pair, the key not empty,
    /// without `.` and not starting with `$` (as a device's `Map` keys), no key twice, the
    /// values of the property's type (`valueProblem`).
    private func mapProblem(
        _ pairs: [JSONValue], _ property: Property, valueProblem: (JSONValue) -> String?
    ) -> String? {
        var seen = Set<String>()
        for pair in pairs {
            guard case .array(let entry) = pair, entry.count == 2, case .string(let key) = entry[0] else {
                return "an entry is not a [key, value] pair"
            }
            if let problem = ListMerge.mapKeyProblem(key) { return problem }
            guard seen.insert(key).inserted else { return "a map holds the key \(JSONValue.string(key).text) twice" }
            if let problem = valueProblem(entry[1]) { return "the value of \(JSONValue.string(key).text): \(problem)" }
        }
        return nil
    }

    /// The problem of a set's members (compared as ``ListMerge`` compares them) when one is
    /// there twice, or nil.
    private static func repeatedMember(_ members: [JSONValue]) -> String? {
        var seen = Set<JSONValue>()
        guard let twice = members.first(where: { !seen.insert($0).inserted }) else { return nil }
        return "a set holds \(twice.text) twice"
    }

    /// What is wrong with a plain value for a scalar type, or nil.
    private func scalarProblem(_ value: JSONValue, _ type: String, optional: Bool) -> String? {
        guard case .object(let members) = value, let (tag, payload) = members.first else { return "not a value" }
        if tag == "null" { return optional ? nil : "nil where the schema requires a value" }
        switch (type, tag, payload.int64Value) {
        case ("int", "int", _?), ("int64", "int", _?): return nil
        case ("int8", "int", let n?): return Int8(exactly: n) == nil ? "\(n) is out of the range of int8" : nil
        case ("int16", "int", let n?): return Int16(exactly: n) == nil ? "\(n) is out of the range of int16" : nil
        case ("int32", "int", let n?): return Int32(exactly: n) == nil ? "\(n) is out of the range of int32" : nil
        case ("bool", "bool", _), ("float", "float", _), ("double", "double", _), ("string", "string", _),
            ("date", "date", _), ("data", "data", _), ("uuid", "uuid", _), ("decimal", "decimal", _),
            ("objectID", "objectID", _):
            return nil
        default: return "{\"\(tag)\": …} where the schema has \(type)"
        }
    }

    /// What is wrong with an object id for a primary key type, or nil.
    static func idProblem(_ id: JSONValue, _ type: String) -> String? {
        guard case .object(let members) = id, let (tag, payload) = members.first else { return "not a value" }
        switch (type, tag, payload.int64Value) {
        case ("string", "string", _), ("uuid", "uuid", _), ("objectID", "objectID", _), ("int", "int", _),
            ("int64", "int", _):
            return nil
        case ("int8", "int", let n?): return Int8(exactly: n) == nil ? "\(n) is out of the range of int8" : nil
        case ("int16", "int", let n?): return Int16(exactly: n) == nil ? "\(n) is out of the range of int16" : nil
        case ("int32", "int", let n?): return Int32(exactly: n) == nil ? "\(n) is out of the range of int32" : nil
        default: return "{\"\(tag)\": …} where the primary key is \(type)"
        }
    }
}
