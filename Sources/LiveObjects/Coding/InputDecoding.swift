import Foundation
import LiveObjectsStore

/// A coding key made from any property name.
struct PropertyCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Reads an object's properties from any `Decoder`, guided by the schema, into ``Input``: the
/// shared first step of `Object.init(from:)` and `Realm.create(_:json:update:)`.
///
/// Primitives are decoded as their Swift types (so the decoder's date and data strategies
/// apply); a link is a nested object, a primary key, or null; a list is an array. Errors are
/// ``LiveObjectsError``s naming the type and property.
struct InputDecoding: Sendable {
    /// The schema of every type a decoded object may link to, by name.
    let schemas: [String: ObjectSchema]
    /// Whether a key that is not a property is an error (`unknownProperty`) or ignored.
    let rejectsUnknownKeys: Bool

    /// The keys of the object at `decoder`, as property input by name (only the keys present).
    func decodeObject(_ schema: ObjectSchema, from decoder: any Decoder) throws(LiveObjectsError)
        -> [String: Input]
    {
        let container: KeyedDecodingContainer<PropertyCodingKey>
        do {
            container = try decoder.container(keyedBy: PropertyCodingKey.self)
        } catch {
            throw Self.error(error, objectType: schema.name, property: nil, expected: "a JSON object")
        }
        var result: [String: Input] = [:]
        for key in container.allKeys {
            guard let property = schema[key.stringValue] else {
                if rejectsUnknownKeys {
                    throw LiveObjectsError(
                        .unknownProperty, "there is no property '\(key.stringValue)'",
                        objectType: schema.name, property: key.stringValue)
                }
                continue
            }
            guard property.isStored else { continue }
            do {
                let nested = try container.superDecoder(forKey: key)
                result[property.name] = try decodeProperty(property, of: schema, from: nested)
            } catch let error as LiveObjectsError {
                throw error
            } catch {
                throw Self.error(error, objectType: schema.name, property: property.name, expected: nil)
            }
        }
        return result
    }

    /// One property's value.
    private func decodeProperty(_ property: Property, of schema: ObjectSchema, from decoder: any Decoder)
        throws -> Input
    {
        if property.isMap {
            // A map is a JSON object from keys to values.
            if try decoder.singleValueContainer().decodeNil() { return .value(.null) }
            let container = try decoder.container(keyedBy: PropertyCodingKey.self)
            var element = property
            element.isList = false
            element.isMap = false
            var entries: [String: Input] = [:]
            for key in container.allKeys {
                entries[key.stringValue] = try decodeProperty(
                    element, of: schema, from: try container.superDecoder(forKey: key))
            }
            return .dictionary(entries)
        }
        if property.isList {
            if try decoder.singleValueContainer().decodeNil() { return .value(.null) }
            var container = try decoder.unkeyedContainer()
            var element = property
            element.isList = false
            element.isSet = false
            element.isMap = false
            var items: [Input] = []
            while !container.isAtEnd {
                items.append(try decodeProperty(element, of: schema, from: try container.superDecoder()))
            }
            return .array(items)
        }
        if property.type == .object {
            guard let target = property.objectType.flatMap({ schemas[$0] }) else {
                throw LiveObjectsError(
                    .unknownType, "the linked type \(property.objectType ?? "?") is not known",
                    objectType: schema.name, property: property.name)
            }
            if (try? decoder.container(keyedBy: PropertyCodingKey.self)) != nil {
                return .dictionary(try decodeObject(target, from: decoder))
            }
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { return .value(.null) }
            guard let pk = target.primaryKey else {
                throw LiveObjectsError(
                    .typeMismatch,
                    "\(target.name) has no primary key: give the linked object as a JSON object",
                    objectType: schema.name, property: property.name)
            }
            return .value(try Self.decodeValue(pk.type, from: single))
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { return .value(.null) }
        return .value(try Self.decodeValue(property.type, from: single))
    }

    /// A primitive of a property type, decoded as its Swift type.
    static func decodeValue(_ type: PropertyType, from c: any SingleValueDecodingContainer) throws
        -> PropertyValue
    {
        switch type {
        case .bool: return .bool(try c.decode(Bool.self))
        case .int: return .int(Int64(try c.decode(Int.self)))
        case .int8: return .int(Int64(try c.decode(Int8.self)))
        case .int16: return .int(Int64(try c.decode(Int16.self)))
        case .int32: return .int(Int64(try c.decode(Int32.self)))
        case .int64: return .int(try c.decode(Int64.self))
        case .float: return .float(try c.decode(Float.self))
        case .double: return .double(try c.decode(Double.self))
        case .string: return .string(try c.decode(String.self))
        case .date: return .date(try c.decode(Date.self))
        case .data: return .data(try c.decode(Data.self))
        case .uuid: return .uuid(try c.decode(UUID.self))
        case .decimal:
            // The exact text of a string, or a number as the decoder reads it (JSONDecoder
            // keeps a JSON number's digits).
            if let text = try? c.decode(String.self) {
                guard let d = Decimal(exactText: text) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: c.codingPath, debugDescription: "\"\(text)\" is not a decimal number"))
                }
                return .decimal(d)
            }
            return .decimal(try c.decode(Decimal.self))
        case .objectID: return .objectID(try c.decode(ObjectID.self))
        case .mixed: return try c.decode(AnyValue.self).propertyValue
        case .object, .linkingObjects:
            throw DecodingError.typeMismatch(
                PropertyValue.self, .init(codingPath: c.codingPath, debugDescription: "not a primitive"))
        }
    }

    /// A decoding failure as an error naming the type and property.
    static func error(_ error: any Error, objectType: String?, property: String?, expected: String?)
        -> LiveObjectsError
    {
        if let error = error as? LiveObjectsError { return error }
        let message: String
        switch error as? DecodingError {
        case .typeMismatch(let type, let context)?:
            message = "expected \(expected ?? Self.describe(type)): \(context.debugDescription)"
        case .valueNotFound(let type, let context)?:
            message = "expected \(expected ?? Self.describe(type)), found null: \(context.debugDescription)"
        case .keyNotFound(let key, _)?:
            message = "missing key '\(key.stringValue)'"
        case .dataCorrupted(let context)?:
            message = context.debugDescription
        default:
            message = "\(error)"
        }
        return LiveObjectsError(.typeMismatch, message, objectType: objectType, property: property)
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is [String: Any].Type: "a JSON object"
        case is [Any].Type: "a JSON array"
        default: "a value of type \(type)"
        }
    }
}
