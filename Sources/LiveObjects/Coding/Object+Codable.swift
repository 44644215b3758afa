import Foundation
import LiveObjectsStore

/// Model objects encode and decode themselves with `Codable`, from the schema: no per-model
/// code.
///
/// ```swift
/// let data = try JSONEncoder().encode(rex)           // managed or unmanaged
/// let copy = try JSONDecoder().decode(Dog.self, from: data)  // unmanaged
/// ```
///
/// The encoded form is a keyed container with one key per stored property (`LinkingObjects`
/// are left out):
/// - primitives are encoded as their Swift types, so the encoder's strategies apply (with
///   `JSONEncoder`'s defaults a `Date` is a number of seconds since 2001-01-01, `Data` is
///   Base64, a `UUID` a string); nil is `null`;
/// - a to-one link or an embedded object is a nested object, a `List` an array;
/// - a link to an object that is already being encoded higher up (a cycle) is encoded as that
///   object's primary key instead. A cycle through a type without a primary key cannot be
///   written down and makes encoding throw `EncodingError.invalidValue`.
///
/// A managed object is encoded from its current stored values and its realm's schema (inside
/// its realm's isolation), so the objects of ``Realm/dynamicResults(_:)`` encode too; encoding a
/// deleted object throws `objectInvalidated`.
///
/// Decoding makes an unmanaged object graph; an object with a primary key that appears twice
/// (linked from two places) is decoded once and shared. Keys that are missing keep the property's
/// default; keys that are not properties are ignored. A link given as a primary key refers to an
/// object decoded higher up (which is how cycles come back); a primary key of an object that is
/// not part of the decoded data throws `missingValue` (use ``Realm/create(_:json:update:decoder:)``
/// to link objects already in a realm). Every decoding error is a ``LiveObjectsError`` naming
/// the type and property (`typeMismatch` for a wrong type, or `null` for a non-optional
/// property).
extension Object: Encodable, Decodable {
    /// Encodes the object's stored properties; see the `Codable` conformance of ``Object``.
    ///
    /// - Throws: `objectInvalidated` for a deleted object; `EncodingError.invalidValue` for a
    ///   cycle through a type without a primary key; the encoder's own errors.
    public func encode(to encoder: any Encoder) throws {
        var path: [Object] = []
        try ObjectCoding.encodeObject(self, to: encoder, path: &path)
    }
}

/// The schema-driven encoding and decoding of model objects.
enum ObjectCoding {
    // MARK: Encoding

    static func encodeObject(_ object: Object, to encoder: any Encoder, path: inout [Object]) throws {
        var container = encoder.container(keyedBy: PropertyCodingKey.self)
        path.append(object)
        defer { path.removeLast() }
        if let handle = object._handle {
            // Managed: from the stored values and the realm's schema (model classes and dynamic
            // objects alike).
            guard handle.isValid else { throw handle.invalidated() }
            for (p, property) in handle.table.schema.properties.enumerated() where property.isStored {
                let input = managedInput(handle.table.value(handle.row, p), property, handle)
                let key = PropertyCodingKey(property.name)
                try encode(input, property, to: container.superEncoder(forKey: key), path: &path)
            }
            return
        }
        let info = try ModelInfo.info(for: type(of: object))
        for field in info.fields where field.property.isStored {
            let input = withExtendedLifetime(object) {
                let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
                return field.accessor._input(at: base + field.offset)
            }
            let key = PropertyCodingKey(field.property.name)
            try encode(input, field.property, to: container.superEncoder(forKey: key), path: &path)
        }
    }

    /// A stored value as input, with links as handles of the linked objects.
    private static func managedInput(_ value: PropertyValue, _ property: Property, _ handle: ObjectHandle) -> Input {
        guard property.type == .object, let name = property.objectType,
            let target = handle.store.tablesByName[name]
        else {
            if property.isMap { return .value(value) }
            if case .list(let items) = value { return .array(items.map { .value($0) }) }
            return .value(value)
        }
        func linked(_ value: PropertyValue) -> Input {
            guard let key = value.objectKey, let row = target.row(for: key) else { return .value(.null) }
            let object = (target.objectType ?? Object.self).init()
            object._handle = ObjectHandle(store: handle.store, table: target, row: row, generation: key.generation)
            return .object(object)
        }
        if property.isMap, case .list(let pairs) = value {
            // A map of objects: each key's object, or null.
            var entries: [String: Input] = [:]
            for pair in pairs {
                guard case .list(let entry) = pair, entry.count == 2, case .string(let key) = entry[0] else { continue }
                entries[key] = linked(entry[1])
            }
            return .dictionary(entries)
        }
        if case .list(let items) = value { return .array(items.map(linked)) }
        return linked(value)
    }

    private static func encode(_ input: Input, _ property: Property, to encoder: any Encoder, path: inout [Object])
        throws
    {
        switch input {
        case .value(.list(let pairs)) where property.isMap:
            // A map is a JSON object from keys to values.
            var container = encoder.container(keyedBy: PropertyCodingKey.self)
            var element = property
            element.isList = false
            element.isMap = false
            for pair in pairs {
                guard case .list(let entry) = pair, entry.count == 2, case .string(let key) = entry[0] else { continue }
                try encode(
                    .value(entry[1]), element, to: container.superEncoder(forKey: PropertyCodingKey(key)), path: &path)
            }
        case .value(let value) where property.type == .mixed:
            // An AnyValue in its own Codable form, which names the kinds JSON has not.
            var container = encoder.singleValueContainer()
            try container.encode(AnyValue(value) ?? .null)
        case .value(let value):
            var container = encoder.singleValueContainer()
            try encodeValue(value, property.type, into: &container)
        case .array(let items):
            var container = encoder.unkeyedContainer()
            var element = property
            element.isList = false
            element.isSet = false
            element.isMap = false
            for item in items { try encode(item, element, to: container.superEncoder(), path: &path) }
        case .object(let target):
            guard path.contains(target) else {
                try encodeObject(target, to: encoder, path: &path)
                return
            }
            // A cycle: the object is being encoded higher up; refer to it by primary key.
            let schema = try target.objectSchema ?? ModelInfo.info(for: type(of: target)).schema
            guard let pk = schema.primaryKey else {
                throw EncodingError.invalidValue(
                    target,
                    .init(
                        codingPath: encoder.codingPath,
                        debugDescription:
                            "\(schema.name) links back to an object being encoded, and has no primary key to refer to it by"
                    ))
            }
            var container = encoder.singleValueContainer()
            try encodeValue(try target.value(forKey: pk.name), pk.type, into: &container)
        case .dictionary(let entries) where property.isMap:
            // A map of objects: a JSON object from keys to objects or null.
            var container = encoder.container(keyedBy: PropertyCodingKey.self)
            var element = property
            element.isList = false
            element.isMap = false
            for key in entries.keys.sorted() {
                try encode(
                    entries[key]!, element, to: container.superEncoder(forKey: PropertyCodingKey(key)), path: &path)
            }
        case .dictionary:
            throw EncodingError.invalidValue(
                input, .init(codingPath: encoder.codingPath, debugDescription: "not a stored value"))
        }
    }

    private static func encodeValue(
        _ value: PropertyValue, _ type: PropertyType, into c: inout any SingleValueEncodingContainer
    ) throws {
        switch value {
        case .null: try c.encodeNil()
        case .bool(let v): try c.encode(v)
        case .int(let v):
            switch type {
            case .int: try c.encode(Int(v))
            case .int8: try c.encode(Int8(truncatingIfNeeded: v))
            case .int16: try c.encode(Int16(truncatingIfNeeded: v))
            case .int32: try c.encode(Int32(truncatingIfNeeded: v))
            default: try c.encode(v)
            }
        case .float(let v): try c.encode(v)
        case .double(let v): try c.encode(v)
        case .string(let v): try c.encode(v)
        case .date(let v): try c.encode(v)
        case .data(let v): try c.encode(v)
        case .uuid(let v): try c.encode(v)
        case .decimal(let v): try c.encode(v.exactText)
        case .objectID(let v): try c.encode(v)
        case .object, .list:
            throw EncodingError.invalidValue(
                value, .init(codingPath: c.codingPath, debugDescription: "not a primitive value"))
        }
    }

    // MARK: Decoding

    /// An object decoded earlier in the same graph, by type and primary key.
    private struct Decoded: Hashable {
        let type: String
        let primaryKey: PropertyValue
    }

    /// Fills a new unmanaged object from loosely typed values: a dictionary by property name,
    /// or an array of the stored properties' values in declaration order; linked objects as
    /// nested dictionaries or arrays, objects, or (for objects given in the same value) primary
    /// keys.
    static func fill(_ object: Object, value: Any) throws(LiveObjectsError) {
        let info = try ModelInfo.info(for: type(of: object))
        let infos = try reachableInfos(from: info)
        let values: [String: Input]
        switch try Input(any: value, objectType: info.schema.name) {
        case .dictionary(let dictionary):
            for name in dictionary.keys where info.schema.properties.first(where: { $0.name == name }) == nil {
                throw LiveObjectsError(
                    .unknownProperty, "there is no property '\(name)'", objectType: info.schema.name, property: name)
            }
            values = dictionary
        case .array(let items): values = try byName(items, info)
        default:
            throw LiveObjectsError(
                .typeMismatch, "expected a dictionary of property values or an array of them in property order",
                objectType: info.schema.name)
        }
        var decoded: [Decoded: Object] = [:]
        try fill(object, info: info, from: values, infos: infos, decoded: &decoded)
    }

    /// The values of an object given as an array, in the order of its stored properties.
    private static func byName(_ items: [Input], _ info: ModelInfo) throws(LiveObjectsError) -> [String: Input] {
        let stored = info.schema.properties.filter(\.isStored)
        guard items.count <= stored.count else {
            throw LiveObjectsError(
                .typeMismatch, "\(items.count) values given for \(stored.count) stored properties",
                objectType: info.schema.name)
        }
        var values: [String: Input] = [:]
        for (property, item) in zip(stored, items) { values[property.name] = item }
        return values
    }

    /// Fills a new unmanaged object from a decoder.
    static func decode(into object: Object, from decoder: any Decoder) throws(LiveObjectsError) {
        let info = try ModelInfo.info(for: type(of: object))
        let infos = try reachableInfos(from: info)
        let decoding = InputDecoding(schemas: infos.mapValues(\.schema), rejectsUnknownKeys: false)
        let values = try decoding.decodeObject(info.schema, from: decoder)
        var decoded: [Decoded: Object] = [:]
        try fill(object, info: info, from: values, infos: infos, decoded: &decoded)
    }

    /// The model info of a class and of every class it links to, by schema name.
    static func reachableInfos(from root: ModelInfo) throws(LiveObjectsError) -> [String: ModelInfo] {
        var result = [root.schema.name: root]
        var pending = [root]
        while let info = pending.popLast() {
            for field in info.fields {
                guard let type = field.accessor._linkedType else { continue }
                let linked = try ModelInfo.info(for: type)
                if result[linked.schema.name] == nil {
                    result[linked.schema.name] = linked
                    pending.append(linked)
                }
            }
        }
        return result
    }

    private static func fill(
        _ object: Object, info: ModelInfo, from values: [String: Input], infos: [String: ModelInfo],
        decoded: inout [Decoded: Object]
    ) throws(LiveObjectsError) {
        // The primary key first, so that links back to this object resolve.
        let fields = info.fields.filter { $0.property.isPrimaryKey } + info.fields.filter { !$0.property.isPrimaryKey }
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for field in fields where field.property.isStored {
            guard let input = values[field.property.name] else { continue }
            let value = try swiftValue(
                input, field.property, of: info.schema.name, infos: infos, decoded: &decoded)
            let assigned = withExtendedLifetime(object) { field.accessor._assign(value, at: base + field.offset) }
            guard assigned else {
                throw LiveObjectsError(
                    .typeMismatch,
                    value == nil
                        ? "null is not allowed for a non-optional property" : "the value does not fit the property",
                    objectType: info.schema.name, property: field.property.name)
            }
            if field.property.isPrimaryKey, case .value(let key) = input {
                decoded[Decoded(type: info.schema.name, primaryKey: key)] = object
            }
        }
    }

    /// Input as a Swift value of the property's type: nil, a primitive, an object, or for a
    /// list an array of those.
    private static func swiftValue(
        _ input: Input, _ property: Property, of typeName: String, infos: [String: ModelInfo],
        decoded: inout [Decoded: Object]
    ) throws(LiveObjectsError) -> Any? {
        func mismatch(_ message: String) -> LiveObjectsError {
            LiveObjectsError(.typeMismatch, message, objectType: typeName, property: property.name)
        }
        if property.isMap {
            var element = property
            element.isList = false
            element.isMap = false
            var entries: [String: Input] = [:]
            switch input {
            case .value(.null): break
            case .dictionary(let given): entries = given
            case .value(.list(let pairs)):
                for pair in pairs {
                    guard case .list(let entry) = pair, entry.count == 2, case .string(let key) = entry[0] else {
                        throw mismatch("a map's entry is a key and a value")
                    }
                    entries[key] = .value(entry[1])
                }
            default: throw mismatch("expected a dictionary")
            }
            var result: [String: Any?] = [:]
            for (key, item) in entries {
                if let why = Property.mapKeyProblem(key) { throw mismatch(why) }
                result[key] = try swiftValue(item, element, of: typeName, infos: infos, decoded: &decoded)
            }
            return result
        }
        if property.isList {
            switch input {
            case .value(.null): return [Any?]()
            case .array(let items):
                var element = property
                element.isList = false
                element.isSet = false
                element.isMap = false
                var result: [Any?] = []
                for item in items {
                    let value = try swiftValue(item, element, of: typeName, infos: infos, decoded: &decoded)
                    if value == nil, property.type == .object { throw mismatch("a list of links cannot hold null") }
                    result.append(value)
                }
                return result
            default: throw mismatch("expected an array")
            }
        }
        if property.type == .object {
            guard let targetName = property.objectType, let target = infos[targetName] else {
                throw LiveObjectsError(
                    .unknownType, "the linked type is not known", objectType: typeName, property: property.name)
            }
            switch input {
            case .value(.null):
                return nil
            case .object(let object):
                guard type(of: object) == target.type else {
                    throw mismatch("expected a \(targetName), got a \(type(of: object).className)")
                }
                return object
            case .array(let items):
                // An object given as its stored values in property order.
                let object = target.type.init()
                try fill(object, info: target, from: try byName(items, target), infos: infos, decoded: &decoded)
                return object
            case .dictionary(let values):
                // An object met again (linked from two places) is the same instance.
                if let pk = target.schema.primaryKey, case .value(let key)? = values[pk.name],
                    let object = decoded[Decoded(type: targetName, primaryKey: key)]
                {
                    return object
                }
                let object = target.type.init()
                try fill(object, info: target, from: values, infos: infos, decoded: &decoded)
                return object
            case .value(let key):
                guard let object = decoded[Decoded(type: targetName, primaryKey: key)] else {
                    throw LiveObjectsError(
                        .missingValue,
                        "the linked \(targetName) with primary key \(key) is not part of the decoded data "
                            + "(to link objects already in a realm, create from JSON in a write)",
                        objectType: typeName, property: property.name, primaryKey: key)
                }
                return object
            }
        }
        guard case .value(let value) = input else { throw mismatch("expected a \(property.type.rawValue)") }
        if property.type == .mixed {
            guard let mixed = AnyValue(value) else { throw mismatch("\(value) is not a kind of AnyValue") }
            return mixed
        }
        if value.isNull { return nil }
        guard let result = swiftValue(value, property.type) else {
            throw mismatch("\(value) is not a valid \(property.type.rawValue)")
        }
        return result
    }

    /// A primitive as the Swift type of a property type, or nil if it does not fit.
    private static func swiftValue(_ value: PropertyValue, _ type: PropertyType) -> Any? {
        switch (type, value) {
        case (.bool, .bool(let v)): v
        case (.int, .int(let v)): Int(exactly: v).map { $0 as Any }
        case (.int8, .int(let v)): Int8(exactly: v).map { $0 as Any }
        case (.int16, .int(let v)): Int16(exactly: v).map { $0 as Any }
        case (.int32, .int(let v)): Int32(exactly: v).map { $0 as Any }
        case (.int64, .int(let v)): v
        case (.float, .float(let v)): v
        case (.double, .double(let v)): v
        case (.string, .string(let v)): v
        case (.date, .date(let v)): v
        case (.data, .data(let v)): v
        case (.uuid, .uuid(let v)): v
        case (.decimal, .decimal(let v)): v
        case (.objectID, .objectID(let v)): v
        default: nil
        }
    }
}
