import Foundation
import LiveObjects
import LiveObjectsJSON

/// How a mixed (``AnyValue``) property's value is written in snapshots and journals (see
/// docs/FORMAT.md): null, a bool, an integer and a string as themselves, a double with a
/// fraction or exponent as a number; every other kind as an object of one member naming it
/// (`{"double": 2}`, `{"decimal": "9.99"}`, ...), as ``AnyValue``'s `Codable` form, so that each
/// value reads back as the kind and payload it had. A nested list is an array of values, a
/// nested dictionary `{"dictionary": {"key": value, …}}` with its keys in ascending order (a key
/// out of order or given twice is refused as corrupt, as a map's are); both may also be read
/// as `{"list": […]}`. Nesting deeper than ``AnyValue/maximumNestingDepth`` is refused. A link
/// is `{"link": {"type": "Dog", "id": 3}}`, the type's name and the object's id as a link
/// property writes it; once the file is read, a link to an unknown or embedded type or to an
/// object that does not exist is refused as corrupt (`Store.checkLoadedMixedLinks`). A reader
/// from before links refuses the form as corrupt ("'link' is not a kind of AnyValue"), never
/// taking it for something else.
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
        case .list(let stored) where MixedContainer(stored) == .link:
            let link = MixedContainer.link(of: stored)
            writer.beginObject(singleLine: true)
            writer.key("link")
            writer.beginObject(singleLine: true)
            writer.key("type")
            writer.string(link?.objectType ?? "")
            writer.key("id")
            writer.int(link.map { id($0.key) } ?? -1)
            writer.endObject()
            writer.endObject()
        case .list(let stored) where MixedContainer(stored) == .dictionary:
            writer.beginObject(singleLine: true)
            writer.key("dictionary")
            writer.beginObject(singleLine: true)
            for i in stride(from: 1, to: stored.count - 1, by: 2) {
                guard case .string(let key) = stored[i] else { continue }
                writer.key(key)
                writeMixed(stored[i + 1], &writer)
            }
            writer.endObject()
            writer.endObject()
        case .list(let stored):
            writer.beginArray(singleLine: true)
            for item in MixedContainer.elements(of: stored) { writeMixed(item, &writer) }
            writer.endArray()
        case .object:
            // The store keeps no link in a mixed column.
            writer.null()
        }
    }

    /// Writes the value of a list, set or map of mixed values: an array of the elements, or of
    /// `[key, value]` pairs, each element or value in the form ``writeMixed(_:_:)`` gives it.
    static func writeMixedCollection(_ value: PropertyValue, isMap: Bool, _ writer: inout JSONWriter) {
        writer.beginArray(singleLine: true)
        if case .list(let elements) = value {
            for element in elements {
                if isMap, case .list(let pair) = element, pair.count == 2 {
                    writer.beginArray(singleLine: true)
                    writePlain(pair[0], &writer)
                    writeMixed(pair[1], &writer)
                    writer.endArray()
                } else {
                    writeMixed(element, &writer)
                }
            }
        }
        writer.endArray()
    }

    /// Reads a mixed value; a malformed one is refused as corrupt, naming the property.
    static func readMixed(_ property: Property, _ reader: inout JSONReader, table: String, depth: Int = 0)
        throws(LiveObjectsError) -> PropertyValue
    {
        func bad(_ why: String) -> LiveObjectsError {
            reader.loadError(why, objectType: table, property: property.name)
        }
        switch try reader.peekKind() {
        case .array: return try readMixedList(property, &reader, table: table, depth: depth)
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
        case .object: return try readTaggedMixed(property, &reader, table: table, depth: depth)
        }
    }

    /// Refuses a list or dictionary nested deeper than ``AnyValue/maximumNestingDepth``.
    private static func checkNesting(_ depth: Int, _ property: Property, _ reader: JSONReader, table: String)
        throws(LiveObjectsError)
    {
        guard depth < AnyValue.maximumNestingDepth else {
            throw reader.loadError(
                "an AnyValue nests lists and dictionaries at most \(AnyValue.maximumNestingDepth) deep",
                objectType: table, property: property.name)
        }
    }

    /// Reads a nested list: an array of mixed values.
    private static func readMixedList(_ property: Property, _ reader: inout JSONReader, table: String, depth: Int)
        throws(LiveObjectsError) -> PropertyValue
    {
        try checkNesting(depth, property, reader, table: table)
        var stored = [MixedContainer.list.marker]
        try reader.beginArray()
        while try reader.nextElement() {
            stored.append(try readMixed(property, &reader, table: table, depth: depth + 1))
        }
        return .list(stored)
    }

    /// Reads a nested dictionary's members, keys in ascending order.
    private static func readMixedDictionary(
        _ property: Property, _ reader: inout JSONReader, table: String, depth: Int
    ) throws(LiveObjectsError) -> PropertyValue {
        try checkNesting(depth, property, reader, table: table)
        var stored = [MixedContainer.dictionary.marker]
        var last: String?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            if let last, last >= key {
                throw reader.loadError(
                    last == key
                        ? "an AnyValue dictionary holds the key '\(key.prefix(64))' twice"
                        : "an AnyValue dictionary's keys are out of order at '\(key.prefix(64))'",
                    objectType: table, property: property.name)
            }
            last = key
            stored.append(.string(key))
            stored.append(try readMixed(property, &reader, table: table, depth: depth + 1))
        }
        return .list(stored)
    }

    /// Reads `{"kind": payload}`.
    private static func readTaggedMixed(_ property: Property, _ reader: inout JSONReader, table: String, depth: Int)
        throws(LiveObjectsError) -> PropertyValue
    {
        try reader.beginObject()
        guard let name = try reader.nextKey() else {
            throw reader.loadError(
                "an AnyValue object has one member, naming its kind", objectType: table, property: property.name)
        }
        var plain = property
        let value: PropertyValue
        switch name {
        case "double": plain.type = .double
        case "float": plain.type = .float
        case "date": plain.type = .date
        case "data": plain.type = .data
        case "uuid": plain.type = .uuid
        case "decimal": plain.type = .decimal
        case "objectID": plain.type = .objectID
        case "list", "dictionary", "link": break
        default:
            throw reader.loadError(
                "'\(name.prefix(64))' is not a kind of AnyValue", objectType: table, property: property.name)
        }
        switch name {
        case "list":
            guard try reader.peekKind() == .array else {
                throw reader.loadError("an AnyValue list is an array", objectType: table, property: property.name)
            }
            value = try readMixedList(property, &reader, table: table, depth: depth)
        case "dictionary":
            guard try reader.peekKind() == .object else {
                throw reader.loadError(
                    "an AnyValue dictionary is an object", objectType: table, property: property.name)
            }
            value = try readMixedDictionary(property, &reader, table: table, depth: depth)
        case "link": value = try readMixedLink(property, &reader, table: table)
        default: value = try readPlain(plain, element: false, &reader, table: table)
        }
        guard try reader.nextKey() == nil else {
            throw reader.loadError(
                "an AnyValue object has one member, naming its kind", objectType: table, property: property.name)
        }
        return value
    }

    /// Reads a link's object, `{"type": "Dog", "id": 3}` (members in that order, each once),
    /// after its `link` key. Whether the type and object exist is checked once the file is read.
    private static func readMixedLink(_ property: Property, _ reader: inout JSONReader, table: String)
        throws(LiveObjectsError) -> PropertyValue
    {
        func bad() -> LiveObjectsError {
            reader.loadError(
                "an AnyValue link is {\"type\": \"Type\", \"id\": object id}", objectType: table,
                property: property.name)
        }
        guard try reader.peekKind() == .object else { throw bad() }
        try reader.beginObject()
        guard try reader.nextKey() == "type", try reader.peekKind() == .string else { throw bad() }
        let type = try reader.readString()
        guard try reader.nextKey() == "id", try reader.peekKind() == .number else { throw bad() }
        let id = try reader.readInt64()
        guard let key = key(id), key.row <= UInt32(Int32.max) else {
            throw reader.loadError("object id \(id) is out of range", objectType: table, property: property.name)
        }
        guard try reader.nextKey() == nil else { throw bad() }
        return MixedContainer.storedLink(AnyValue.Link(objectType: type, key: key))
    }
}
