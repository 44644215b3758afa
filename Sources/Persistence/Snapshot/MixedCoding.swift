import Foundation
import LiveObjects
import LiveObjectsJSON

/// How a mixed (``AnyValue``) property's value is written in snapshots and journals (see
/// docs/FORMAT.md): null, a bool, an integer and a string as themselves, a double with a
/// fraction or exponent as a number; every other kind as an object of one member naming it
/// (`{"double": 2}`, `{"decimal": "9.99"}`, ...), as ``AnyValue``'s `Codable` form, so that each
/// value reads back as the kind and payload it had.
extension ValueCoding {
    /// Writes a mixed value.
    static func writeMixed(_ value: PropertyValue, _ writer: inout JSONWriter) {
        func tagged(_ name: JSONKey, _ body: (inout JSONWriter) -> Void) {
            writer.beginObject(singleLine: true)
            writer.key(name)
            body(&writer)
            writer.endObject()
        }
        switch value {
        case .null, .bool, .int, .string: writePlain(value, &writer)
        case .double(let v) where AnyValue.writesBare(v): writer.double(v)
        case .double(let v): tagged("double") { writeDouble(v, &$0) }
        case .float(let v): tagged("float") { writeFloat(v, &$0) }
        case .date(let v): tagged("date") { writeDouble(v.timeIntervalSinceReferenceDate, &$0) }
        case .data(let v): tagged("data") { $0.string(v.base64EncodedString()) }
        case .uuid(let v): tagged("uuid") { $0.string(v.uuidString) }
        case .decimal(let v): tagged("decimal") { $0.string(v.exactText) }
        case .objectID(let v): tagged("objectID") { $0.string(v.hexString) }
        case .object, .list:
            // The store keeps neither in a mixed column.
            writer.null()
        }
    }

    /// Reads a mixed value; a malformed one is refused as corrupt, naming the property.
    static func readMixed(_ property: Property, _ reader: inout JSONReader, table: String)
        throws(LiveObjectsError) -> PropertyValue
    {
        func bad(_ why: String) -> LiveObjectsError {
            reader.loadError(why, objectType: table, property: property.name)
        }
        switch try reader.peekKind() {
        case .null:
            _ = try reader.readNull()
            return .null
        case .bool: return .bool(try reader.readBool())
        case .string:
            var plain = property
            plain.type = .string
            return try readPlain(plain, element: false, &reader, table: table)
        case .number:
            let number = try reader.readNumber()
            if number.isInteger {
                guard let v = number.int64Value else { throw bad("\(number) is out of range for an int") }
                return .int(v)
            }
            guard let v = number.doubleValue, v.isFinite else { throw bad("\(number) is out of range for a double") }
            return .double(v)
        case .object: return try readTaggedMixed(property, &reader, table: table)
        default: throw bad("an AnyValue is null, a bool, a number, a string or an object naming its kind")
        }
    }

    /// Reads `{"kind": payload}`.
    private static func readTaggedMixed(_ property: Property, _ reader: inout JSONReader, table: String)
        throws(LiveObjectsError) -> PropertyValue
    {
        try reader.beginObject()
        guard let name = try reader.nextKey() else {
            throw reader.loadError(
                "an AnyValue object has one member, naming its kind", objectType: table, property: property.name)
        }
        var plain = property
        switch name {
        case "double": plain.type = .double
        case "float": plain.type = .float
        case "date": plain.type = .date
        case "data": plain.type = .data
        case "uuid": plain.type = .uuid
        case "decimal": plain.type = .decimal
        case "objectID": plain.type = .objectID
        default:
            throw reader.loadError(
                "'\(name.prefix(64))' is not a kind of AnyValue", objectType: table, property: property.name)
        }
        let value = try readPlain(plain, element: false, &reader, table: table)
        guard try reader.nextKey() == nil else {
            throw reader.loadError(
                "an AnyValue object has one member, naming its kind", objectType: table, property: property.name)
        }
        return value
    }
}
