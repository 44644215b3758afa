import Foundation
import LiveObjects
import LiveObjectsJSON

/// The shell's work inside a realm's isolation: every function takes `isolated Realm` and runs
/// inside a `read` or `write` closure. Inputs and outputs are plain values (JSON, keys).
enum Operations {
    // MARK: Looking up

    static func objectSchema(_ type: String, _ realm: isolated Realm) throws(ShellError) -> ObjectSchema {
        guard let schema = realm.schema[type] else {
            let suggestion = Suggestion.clause(for: type, among: realm.schema.objectSchemas.map(\.name))
            throw ShellError(
                "there is no object type named '\(type)'" + (suggestion.isEmpty ? "; 'types' lists them" : suggestion))
        }
        return schema
    }

    /// The results of a query request; predicate errors point into `line`.
    static func results(_ request: QueryRequest, line: String, _ realm: isolated Realm) throws -> Results<Object> {
        _ = try objectSchema(request.type, realm)
        var results = try realm.dynamicResults(request.type)
        if let predicate = request.predicate {
            do {
                results = try results.filter(predicate.text, arguments: [])
            } catch {
                var located = located(error, predicate, line: line)
                // An unknown property: the closest one of its type.
                if let property = error.property, let type = error.objectType,
                    error.message.contains("has no property"), let schema = realm.schema[type],
                    let closest = Suggestion.closest(to: property, among: schema.properties.map(\.name))
                {
                    located.message += "; did you mean '\(closest)'?"
                }
                throw located
            }
        }
        if !request.sorts.isEmpty { results = try results.sorted(by: request.sorts) }
        if let limit = request.limit { results = results.limit(limit) }
        return results
    }

    /// A predicate error, with its caret moved from the predicate into the command line.
    static func located(_ error: LiveObjectsError, _ predicate: PredicateText, line: String) -> ShellError {
        guard let location = error.queryLocation else { return ShellError(message(error)) }
        let lineOffset = predicate.offset + location.utf8Offset
        // Columns in the message count from the predicate; the caret's from the command line.
        var text = error.message
        if !location.text.contains("\n") {
            let shift = QueryErrorLocation(text: line, utf8Offset: predicate.offset).column - 1
            text = shiftingColumns(in: text, by: shift)
        }
        var located = error
        located.message = text
        return ShellError(message(located), caret: .init(line: line, offset: lineOffset))
    }

    /// `column N` in a message, with N moved by `shift`.
    static func shiftingColumns(in text: String, by shift: Int) -> String {
        guard shift != 0 else { return text }
        var result = ""
        var rest = Substring(text)
        while let range = rest.range(of: "column ") {
            result += rest[..<range.upperBound]
            rest = rest[range.upperBound...]
            let digits = rest.prefix(while: \.isNumber)
            if let n = Int(digits) {
                result += String(n + shift)
                rest = rest.dropFirst(digits.count)
            }
        }
        return result + rest
    }

    /// The text after `Error: ` for a library error: where, then what.
    static func message(_ error: LiveObjectsError) -> String {
        var location = ""
        if let type = error.objectType, !type.isEmpty {
            location = type
            // A refused deletion names the linking property (of another type) in its message.
            if let property = error.property, error.code != .deleteDenied { location += ".\(property)" }
            if let key = error.primaryKey { location += "[\(key)]" }
        } else if let property = error.property {
            location = property
        }
        if let file = error.file { location = location.isEmpty ? file : "\(file): \(location)" }
        return location.isEmpty ? error.message : "\(location): \(error.message)"
    }

    static func find(_ type: String, _ reference: ObjectReference, _ realm: isolated Realm) throws -> DynamicObject {
        let schema = try objectSchema(type, realm)
        switch reference {
        case .objectKey(let key):
            guard let object = try realm.dynamicObject(ofType: type, key: key) else {
                throw ShellError("there is no \(type) with key \(key)")
            }
            return object
        case .primaryKey(let json):
            guard let pk = schema.primaryKey else {
                throw ShellError("\(type) has no primary key; name its objects by key (#ROW), as 'query \(type)' shows")
            }
            let key = try value(json, for: pk, in: schema, realm)
            guard let object = try realm.dynamicObject(ofType: type, forPrimaryKey: key) else {
                throw ShellError("there is no \(type) with primary key \(json.spaced)")
            }
            return object
        }
    }

    /// The properties of a `section by` key path from a type: to-one links, then a stored
    /// property that is not a list.
    ///
    /// - Throws: A `ShellError` naming the first name that is not such a property.
    static func sectionPath(_ path: String, of type: String, _ realm: isolated Realm) throws -> [Property] {
        var schema = try objectSchema(type, realm)
        var properties: [Property] = []
        let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (i, name) in names.enumerated() {
            guard let property = schema.properties.first(where: { $0.name == name }), property.isStored else {
                throw ShellError("\(schema.name) has no stored property '\(name)' (in section by \(path))")
            }
            guard !property.isList else {
                throw ShellError("section by needs a to-one key path; \(schema.name).\(name) is a list")
            }
            properties.append(property)
            if i < names.count - 1 {
                guard property.isLink, let target = property.objectType else {
                    throw ShellError("section by: \(schema.name).\(name) is not a link, so '.' cannot follow it")
                }
                schema = try objectSchema(target, realm)
            }
        }
        return properties
    }

    /// The value at a `section by` key path of an object, as the shell shows it (null past a
    /// nil link).
    static func value(at path: [Property], of object: DynamicObject, _ realm: isolated Realm) -> JSONValue {
        var current = object
        for property in path.dropLast() {
            guard let next = try? current.linkedObject(property.name) else { return .null }
            current = next
        }
        let last = path[path.count - 1]
        return json(current[last.name], last, realm)
    }

    // MARK: Rendering

    /// An object as JSON: its stored properties in schema order, links as the target's primary
    /// key (or `#ROW` without one), embedded objects nested. With `inverse`, the
    /// `LinkingObjects` properties too.
    static func json(_ object: DynamicObject, inverse: Bool = false, _ realm: isolated Realm) -> JSONValue {
        var pairs: JSONMembers = []
        for property in object.objectSchema.properties where property.isStored || inverse {
            pairs.append((property.name, json(object[property.name], property, realm)))
        }
        return .object(pairs)
    }

    static func json(_ value: PropertyValue, _ property: Property, _ realm: isolated Realm) -> JSONValue {
        if property.isMap { return mapJSON(value, property) { json($0, $1, realm) } }
        if property.type == .mixed && !property.isList { return json(mixed: value) }
        if case .list(let items) = value {
            var element = property
            element.isList = false
            element.isSet = false
            element.isMap = false
            if property.type == .linkingObjects { element.type = .object }
            return .array(items.map { json($0, element, realm) })
        }
        guard case .object(let key) = value else { return json(scalar: value) }
        guard let type = property.objectType, let target = try? realm.dynamicObject(ofType: type, key: key) else {
            return .string(key.description)
        }
        if target.objectSchema.isEmbedded { return json(target, realm) }
        if let pk = target.objectSchema.primaryKey { return json(target[pk.name], pk, realm) }
        return .string(key.description)
    }

    /// A map as a JSON object, its keys in order.
    static func mapJSON(
        _ value: PropertyValue, _ property: Property, _ element: (PropertyValue, Property) -> JSONValue
    ) -> JSONValue {
        var entry = property
        entry.isList = false
        entry.isMap = false
        guard case .list(let pairs) = value else { return .object([]) }
        var members: JSONMembers = []
        for pair in pairs {
            guard case .list(let kv) = pair, kv.count == 2, case .string(let key) = kv[0] else { continue }
            members.append((key, element(kv[1], entry)))
        }
        return .object(members)
    }

    /// A value that is not a link nor a list, as the shell prints it.
    static func json(scalar value: PropertyValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let v): return .bool(v)
        case .int(let v): return .int(v)
        case .float(let v): return .shellDouble(Double("\(v)") ?? Double(v))
        case .double(let v): return .shellDouble(v)
        case .string(let v): return .string(v)
        case .date(let v): return .string(v.formatted(.iso8601))
        case .data(let v): return .string(v.base64EncodedString())
        case .uuid(let v): return .string(v.uuidString)
        case .decimal(let v):
            return v.isNaN ? .string("NaN") : .number(JSONNumber(text: v.exactText) ?? JSONNumber(Int64(0)))
        case .objectID(let v): return .string(v.hexString)
        case .object(let key): return .string(key.description)
        case .list: return .null
        }
    }

    /// How an object is named in messages: its primary key, or its key.
    static func name(_ object: DynamicObject, _ realm: isolated Realm) -> String {
        if let pk = object.objectSchema.primaryKey { return json(object[pk.name], pk, realm).spaced }
        return object.key.description
    }

    // MARK: Converting input

    /// A JSON value as a property's value (links looked up by primary key). Embedded objects are
    /// not plain values; see ``apply(_:to:_:)``.
    static func value(_ json: JSONValue, for property: Property, in schema: ObjectSchema, _ realm: isolated Realm)
        throws -> PropertyValue
    {
        func mismatch(_ expected: String) -> ShellError {
            ShellError("\(schema.name).\(property.name): expected \(expected), got \(json.spaced)")
        }
        if property.isMap {
            if case .null = json { return .list([]) }
            guard case .object(let members) = json else { throw mismatch("a JSON object") }
            var element = property
            element.isList = false
            element.isMap = false
            return .list(
                try members.map { key, item in .list([.string(key), try value(item, for: element, in: schema, realm)]) }
            )
        }
        if property.isList {
            if case .null = json { return .list([]) }
            guard case .array(let items) = json else { throw mismatch("a JSON array") }
            var element = property
            element.isList = false
            element.isSet = false
            element.isMap = false
            return .list(try items.map { try value($0, for: element, in: schema, realm) })
        }
        if property.type == .mixed { return try mixedValue(json, for: property, in: schema) }
        if case .null = json { return .null }
        if property.type != .object && property.type != .linkingObjects {
            return try plainValue(json, for: property, in: schema)
        }
        return try linkValue(json, for: property, in: schema, realm)
    }

    /// A JSON value as the value of a property of a plain type (not a link, a list nor a mixed
    /// value).
    static func plainValue(_ json: JSONValue, for property: Property, in schema: ObjectSchema) throws -> PropertyValue {
        func mismatch(_ expected: String) -> ShellError {
            ShellError("\(schema.name).\(property.name): expected \(expected), got \(json.spaced)")
        }
        if case .null = json { return .null }
        switch property.type {
        case .bool:
            guard case .bool(let v) = json else { throw mismatch("true or false") }
            return .bool(v)
        case .int, .int8, .int16, .int32, .int64:
            if let v = json.int64Value { return .int(v) }
            if let v = json.numberAsDouble, let i = Int64(exactly: v) { return .int(i) }
            throw mismatch("an integer")
        case .float, .double:
            // A number, or "NaN", "Infinity" and "-Infinity" as the shell writes them.
            guard let number = json.floatingPointValue else { throw mismatch("a number") }
            return property.type == .float ? .float(Float(number)) : .double(number)
        case .string:
            guard case .string(let v) = json else { throw mismatch("a string") }
            return .string(v)
        case .date:
            switch json {
            case .string(let s):
                if let d = try? Date(s, strategy: .iso8601) { return .date(d) }
                if let d = try? Date(s, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
                    return .date(d)
                }
                throw mismatch("an ISO 8601 date")
            case .number:
                return .date(Date(timeIntervalSince1970: json.numberAsDouble ?? 0))
            default: throw mismatch("an ISO 8601 date")
            }
        case .data:
            guard case .string(let s) = json, let d = Data(base64Encoded: s) else { throw mismatch("base64 text") }
            return .data(d)
        case .uuid:
            guard case .string(let s) = json, let u = UUID(uuidString: s) else { throw mismatch("a UUID") }
            return .uuid(u)
        case .decimal:
            // A number by its text (exact), or a string holding one.
            let text: String
            switch json {
            case .number(let n): text = n.text
            case .string(let s): text = s
            default: throw mismatch("a decimal number")
            }
            guard let d = Decimal(exactText: text) else { throw mismatch("a decimal number") }
            return .decimal(d)
        case .objectID:
            guard case .string(let s) = json, let id = ObjectID(hex: s) else {
                throw mismatch("an ObjectID (24 hex digits)")
            }
            return .objectID(id)
        case .object, .linkingObjects, .mixed:
            throw mismatch("a plain value")
        }
    }

    /// A JSON value as a link: the target's primary key, or `#ROW` for a type without one.
    static func linkValue(_ json: JSONValue, for property: Property, in schema: ObjectSchema, _ realm: isolated Realm)
        throws -> PropertyValue
    {
        func mismatch(_ expected: String) -> ShellError {
            ShellError("\(schema.name).\(property.name): expected \(expected), got \(json.spaced)")
        }
        switch property.type {
        case .object:
            let targetName = property.objectType ?? ""
            let target = try objectSchema(targetName, realm)
            if target.isEmbedded { throw mismatch("a JSON object for the embedded \(targetName)") }
            if case .string(let s) = json, s.hasPrefix("#"), target.primaryKey == nil {
                var parser = CommandParser(line: s)
                if case .objectKey(let key) = try parser.reference("get"),
                    let object = try realm.dynamicObject(ofType: targetName, key: key)
                {
                    return .object(object.key)
                }
            }
            guard let pk = target.primaryKey else {
                throw ShellError(
                    "\(schema.name).\(property.name): \(targetName) has no primary key, so links to it are given as #ROW"
                )
            }
            let key = try value(json, for: pk, in: target, realm)
            guard let object = try realm.dynamicObject(ofType: targetName, forPrimaryKey: key) else {
                throw ShellError(
                    "\(schema.name).\(property.name): there is no \(targetName) with primary key \(json.spaced)")
            }
            return .object(object.key)
        default:
            throw ShellError("\(schema.name).\(property.name) lists the objects linking here; it cannot be set")
        }
    }

    /// The JSON object's pairs, or an error.
    static func pairs(_ json: JSONValue, _ type: String) throws(ShellError) -> JSONMembers {
        guard case .object(let pairs) = json else { throw ShellError("expected a JSON object for \(type)") }
        return pairs
    }

    /// The error for a JSON key that names no property, with the closest name when one is
    /// likely meant: `Dog has no property 'nmae'; did you mean 'name'?`.
    static func noProperty(_ name: String, in schema: ObjectSchema) -> ShellError {
        ShellError(
            "\(schema.name) has no property '\(name)'"
                + Suggestion.clause(for: name, among: schema.properties.map(\.name)))
    }

    /// Sets properties of an object from JSON pairs. Embedded objects are created from nested
    /// JSON objects (a list of them is replaced).
    static func apply(_ pairs: JSONMembers, to object: DynamicObject, _ realm: isolated Realm) throws {
        let schema = object.objectSchema
        for (name, json) in pairs {
            guard let property = schema[name] else {
                throw noProperty(name, in: schema)
            }
            if property.isPrimaryKey {
                // Setting the same value is allowed; a change is refused by the library.
                try object.set(name, to: try value(json, for: property, in: schema, realm))
                continue
            }
            if property.type == .object, let target = realm.schema[property.objectType ?? ""], target.isEmbedded {
                try applyEmbedded(json, property, target, to: object, realm)
                continue
            }
            try object.set(name, to: try value(json, for: property, in: schema, realm))
        }
    }

    static func applyEmbedded(
        _ json: JSONValue, _ property: Property, _ target: ObjectSchema, to object: DynamicObject,
        _ realm: isolated Realm
    ) throws {
        if property.isMap {
            try applyEmbeddedMap(json, property, target, to: object, realm)
            return
        }
        let items: [JSONValue]
        if property.isList {
            if case .null = json {
                items = []
            } else {
                guard case .array(let array) = json else {
                    throw ShellError("\(object.typeName).\(property.name): expected a JSON array of objects")
                }
                items = array
            }
            try object.set(property.name, to: .list([]))
        } else {
            if case .null = json {
                try object.set(property.name, to: .null)
                return
            }
            items = [json]
        }
        for item in items {
            _ = try embedded(item, target, realm) { plain in try object.setEmbedded(property.name, values: plain) }
        }
    }

    /// Makes an embedded object from a JSON object: its plain values through `make`, then its
    /// nested embedded objects and links through ``apply(_:to:_:)``.
    static func embedded(
        _ item: JSONValue, _ target: ObjectSchema, _ realm: isolated Realm,
        make: ([String: PropertyValue]) throws -> DynamicObject
    ) throws -> DynamicObject {
        let itemPairs = try pairs(item, target.name)
        var plain: [String: PropertyValue] = [:]
        for (name, value) in itemPairs {
            guard let p = target[name] else { throw noProperty(name, in: target) }
            if p.type == .object || p.type == .linkingObjects { continue }
            plain[name] = try self.value(value, for: p, in: target, realm)
        }
        let child = try make(plain)
        try apply(itemPairs.filter { target[$0.0]?.type == .object }, to: child, realm)
        return child
    }

    /// Replaces a map of embedded objects from a JSON object of nested objects (or nulls).
    static func applyEmbeddedMap(
        _ json: JSONValue, _ property: Property, _ target: ObjectSchema, to object: DynamicObject,
        _ realm: isolated Realm
    ) throws {
        var members: JSONMembers = []
        if case .object(let given) = json {
            members = given
        } else if json != .null {
            throw ShellError("\(object.typeName).\(property.name): expected a JSON object of objects")
        }
        try object.set(property.name, to: .list([]))
        var entries: [String: PropertyValue] = [:]
        for (key, item) in members {
            guard item != .null else {
                entries[key] = .null
                continue
            }
            let child = try embedded(item, target, realm) { plain in
                try object.setEmbedded(property.name, key: key, values: plain)
            }
            entries[key] = .object(child.key)
        }
        // The keys with no object join the objects made above (kept: each under its own key).
        try object.set(
            property.name, to: .list(entries.keys.sorted().map { .list([.string($0), entries[$0]!]) }))
    }

    /// Creates an object from a JSON object.
    static func create(_ type: String, _ json: JSONValue, _ realm: isolated Realm) throws -> DynamicObject {
        let schema = try objectSchema(type, realm)
        if schema.isEmbedded {
            throw ShellError("\(type) is embedded: create it inside its parent, as a nested JSON object")
        }
        let all = try pairs(json, type)
        var initial: [String: PropertyValue] = [:]
        for (name, value) in all {
            guard let p = schema[name] else { throw noProperty(name, in: schema) }
            if p.type == .object || p.type == .linkingObjects { continue }
            initial[name] = try self.value(value, for: p, in: schema, realm)
        }
        let object = try realm.dynamicCreate(type, value: initial)
        try apply(
            all.filter { schema[$0.0]?.type == .object || schema[$0.0]?.type == .linkingObjects }, to: object, realm)
        return object
    }
}
