import Foundation
import LiveObjects
import LiveObjectsJSON

/// How property values are written in snapshots and journals (see docs/FORMAT.md).
enum ValueCoding {
    static let idKey: JSONKey = "$id"

    /// An object id: the key's generation in the high 32 bits, its row in the low 32.
    @inline(__always)
    static func id(_ key: ObjectKey) -> Int64 {
        id(generation: key.generation, row: Int(key.row))
    }

    /// The id of the object in slot `row` whose slot state (from `Table.withSlotStates`) is
    /// `state`.
    @inline(__always)
    static func id(slotState state: UInt32, row: Int) -> Int64 {
        id(generation: Table.generation(ofSlotState: state), row: row)
    }

    @inline(__always)
    static func id(generation: UInt32, row: Int) -> Int64 {
        Int64(generation) << 32 | Int64(row)
    }

    /// The key of an id, if the id is in range.
    @inline(__always)
    static func key(_ id: Int64) -> ObjectKey? {
        guard id >= 0 else { return nil }
        return ObjectKey(row: UInt32(truncatingIfNeeded: id), generation: UInt32(truncatingIfNeeded: id >> 32))
    }

    // MARK: Non-finite numbers

    static let canonicalDoubleNaN = Double.nan.bitPattern
    static let canonicalFloatNaN = Float.nan.bitPattern

    /// The string for a non-finite `Double`: `Infinity`, `-Infinity`, `NaN` (the canonical quiet
    /// NaN), or `NaN:0x` and 16 hex digits of the bit pattern for any other NaN.
    static func nonFiniteName(_ value: Double) -> String {
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        if value.bitPattern == canonicalDoubleNaN { return "NaN" }
        return "NaN:0x" + hex(value.bitPattern, digits: 16)
    }

    /// As for `Double`, with 8 hex digits.
    static func nonFiniteName(_ value: Float) -> String {
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        if value.bitPattern == canonicalFloatNaN { return "NaN" }
        return "NaN:0x" + hex(UInt64(value.bitPattern), digits: 8)
    }

    static func nonFiniteDouble(_ text: String) -> Double? {
        switch text {
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        case "NaN": return .nan
        default:
            guard text.hasPrefix("NaN:0x"), text.utf8.count == 22,
                let bits = UInt64(text.dropFirst(6), radix: 16)
            else { return nil }
            let value = Double(bitPattern: bits)
            return value.isNaN ? value : nil
        }
    }

    static func nonFiniteFloat(_ text: String) -> Float? {
        switch text {
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        case "NaN": return .nan
        default:
            guard text.hasPrefix("NaN:0x"), text.utf8.count == 14,
                let bits = UInt32(text.dropFirst(6), radix: 16)
            else { return nil }
            let value = Float(bitPattern: bits)
            return value.isNaN ? value : nil
        }
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: digits - text.count) + text
    }

    // MARK: Writing

    @inline(__always)
    static func writeDouble(_ value: Double, _ writer: inout JSONWriter) {
        if value.isFinite { writer.double(value) } else { writer.string(nonFiniteName(value)) }
    }

    @inline(__always)
    static func writeFloat(_ value: Float, _ writer: inout JSONWriter) {
        if value.isFinite { writer.float(value) } else { writer.string(nonFiniteName(value)) }
    }

    /// Writes a plain (non-link) value.
    static func writePlain(_ value: PropertyValue, _ writer: inout JSONWriter) {
        switch value {
        case .null: writer.null()
        case .bool(let v): writer.bool(v)
        case .int(let v): writer.int(v)
        case .float(let v): writeFloat(v, &writer)
        case .double(let v): writeDouble(v, &writer)
        case .string(let v): writer.string(v)
        case .date(let v): writeDouble(v.timeIntervalSinceReferenceDate, &writer)
        case .data(let v): writer.string(v.base64EncodedString())
        case .uuid(let v): writer.string(v.uuidString)
        case .decimal(let v): writer.string(v.exactText)
        case .objectID(let v): writer.string(v.hexString)
        case .object(let key): writer.int(id(key))
        case .list(let items):
            writer.beginArray(singleLine: true)
            for item in items { writePlain(item, &writer) }
            writer.endArray()
        }
    }

    // MARK: Reading

    /// Reads a map's value: an array of `[key, value]` pairs, the keys valid and in increasing
    /// order (a key given twice or out of order is refused as corrupt).
    ///
    /// For a map of objects each value is an object's id or null (no object), read as
    /// `.object(id)`: the id as the file has it, for the caller to resolve once every object is
    /// placed (`maxRow` bounds its slot).
    static func readMap(_ property: Property, _ reader: inout JSONReader, table: String, maxRow: Int = Int(Int32.max))
        throws(LiveObjectsError) -> PropertyValue
    {
        var element = property
        element.isList = false
        element.isMap = false
        var pairs: [PropertyValue] = []
        var last: String?
        try reader.beginArray()
        while try reader.nextElement() {
            let key = try readMapKey(property, &reader, after: last, table: table)
            last = key
            let value: PropertyValue
            if property.type == .object {
                value = try reader.readNull() ? .null : .object(try readID(&reader, maxRow: maxRow, table: table))
            } else {
                value = try readPlain(element, element: true, &reader, table: table)
            }
            try endMapEntry(property, &reader, table: table)
            pairs.append(.list([.string(key), value]))
        }
        return .list(pairs)
    }

    /// Reads the start of a map's `[key, value]` entry up to its value: the `[`, and the key,
    /// which must be a valid key greater than the entry's before (`last`).
    static func readMapKey(_ property: Property, _ reader: inout JSONReader, after last: String?, table: String)
        throws(LiveObjectsError) -> String
    {
        try reader.beginArray()
        guard try reader.nextElement() else {
            throw reader.loadError("a map's entry is a key and a value", objectType: table, property: property.name)
        }
        let key = try reader.readString()
        if let why = Property.mapKeyProblem(key) {
            throw reader.loadError(why, objectType: table, property: property.name)
        }
        if let last, last >= key {
            throw reader.loadError(
                last == key ? "a map holds the key '\(key)' twice" : "a map's keys are out of order at '\(key)'",
                objectType: table, property: property.name)
        }
        guard try reader.nextElement() else {
            throw reader.loadError("a map's entry is a key and a value", objectType: table, property: property.name)
        }
        return key
    }

    /// Reads the end of a map's `[key, value]` entry, after its value.
    static func endMapEntry(_ property: Property, _ reader: inout JSONReader, table: String)
        throws(LiveObjectsError)
    {
        guard try !reader.nextElement() else {
            throw reader.loadError("a map's entry is a key and a value", objectType: table, property: property.name)
        }
    }

    /// Reads a plain value of `property`'s type (one element of it, for a list), checking range
    /// and nullability.
    static func readPlain(
        _ property: Property, element: Bool, _ reader: inout JSONReader, table: String
    ) throws(LiveObjectsError) -> PropertyValue {
        func bad(_ why: String, _ reader: JSONReader) -> LiveObjectsError {
            reader.loadError(why, objectType: table, property: property.name)
        }
        if property.type == .mixed { return try readMixed(property, &reader, table: table) }
        if try reader.readNull() {
            guard property.isOptional else { throw bad("null for a property that is not optional", reader) }
            return .null
        }
        switch property.type {
        case .bool:
            return .bool(try reader.readBool())
        case .int, .int64:
            return .int(try reader.readInt64())
        case .int8, .int16, .int32:
            let v = try reader.readInt64()
            let range: ClosedRange<Int64> =
                property.type == .int8
                ? Int64(Int8.min)...Int64(Int8.max)
                : property.type == .int16 ? Int64(Int16.min)...Int64(Int16.max) : Int64(Int32.min)...Int64(Int32.max)
            guard range.contains(v) else {
                throw bad("\(v) is out of range for \(property.type.rawValue)", reader)
            }
            return .int(v)
        case .double:
            return .double(try readDouble(&reader, bad))
        case .float:
            if try reader.peekKind() == .string {
                let text = try reader.readString()
                guard let v = nonFiniteFloat(text) else { throw bad("'\(text)' is not a number", reader) }
                return .float(v)
            }
            return .float(try reader.readFloat())
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: try readDouble(&reader, bad)))
        case .string:
            let text = try reader.readString()
            if text.utf8.count > Realm.Limits.maximumStringLength {
                throw stringTooLong(text, reader, table: table, property: property.name)
            }
            return .string(text)
        case .data:
            let text = try reader.readString()
            // Base64 takes 4 bytes for every 3; the length is checked before decoding.
            if text.utf8.count > (Realm.Limits.maximumDataLength + 2) / 3 * 4 {
                throw dataTooLarge(decodedLength(ofBase64: text), reader, table: table, property: property.name)
            }
            guard let data = Data(base64Encoded: text) else { throw bad("invalid base64 data", reader) }
            if data.count > Realm.Limits.maximumDataLength {
                throw dataTooLarge(data.count, reader, table: table, property: property.name)
            }
            return .data(data)
        case .uuid:
            let text = try reader.readString()
            guard let uuid = UUID(uuidString: text) else { throw bad("'\(text)' is not a UUID", reader) }
            return .uuid(uuid)
        case .decimal:
            let text = try reader.readString()
            if text == "NaN" { return .decimal(.nan) }
            guard text.utf8.count <= 64, let d = Decimal(exactText: text) else {
                throw bad("'\(text.prefix(64))' is not a decimal number", reader)
            }
            return .decimal(d)
        case .objectID:
            let text = try reader.readString()
            guard let id = ObjectID(hex: text) else {
                throw bad("'\(text.prefix(64))' is not an ObjectID (24 hex digits)", reader)
            }
            return .objectID(id)
        case .object, .linkingObjects, .mixed:
            throw bad("not a plain value", reader)
        }
    }

    @inline(__always)
    private static func readDouble(
        _ reader: inout JSONReader, _ bad: (String, JSONReader) -> LiveObjectsError
    ) throws(LiveObjectsError) -> Double {
        if try reader.peekKind() == .string {
            let text = try reader.readString()
            guard let v = nonFiniteDouble(text) else { throw bad("'\(text)' is not a number", reader) }
            return v
        }
        return try reader.readDouble()
    }

    /// Reads an object id (a link or `$id`), bounding its row by `maxRow`.
    @inline(__always)
    static func readID(_ reader: inout JSONReader, maxRow: Int, table: String) throws(LiveObjectsError) -> ObjectKey {
        let id = try reader.readInt64()
        guard let key = key(id), Int(key.row) < maxRow, key.row <= UInt32(Int32.max) else {
            throw reader.loadError("object id \(id) is out of range", objectType: table)
        }
        return key
    }

    // MARK: Limits

    /// The number of bytes base64 text decodes to: 3 for every 4 characters, less one for each
    /// `=` of padding at its end.
    static func decodedLength(ofBase64 text: String) -> Int {
        let utf8 = text.utf8
        var padding = 0
        for byte in utf8.reversed().prefix(2) {
            guard byte == 0x3D else { break }
            padding += 1
        }
        return utf8.count / 4 * 3 - padding
    }

    /// The error for a string longer than ``Realm/Limits/maximumStringLength``, just read.
    static func stringTooLong(_ text: String, _ reader: JSONReader, table: String, property: String)
        -> LiveObjectsError
    {
        var error = reader.loadError(
            "a string of \(text.utf8.count) bytes is longer than the \(Realm.Limits.maximumStringLength) allowed "
                + "(Realm.Limits.maximumStringLength)", code: .limitExceeded, objectType: table, property: property)
        error.message += "; the file was left as it is"
        return error
    }

    /// The error for data larger than ``Realm/Limits/maximumDataLength``, just read.
    static func dataTooLarge(_ count: Int, _ reader: JSONReader, table: String, property: String) -> LiveObjectsError {
        var error = reader.loadError(
            "data of \(count) bytes is larger than the \(Realm.Limits.maximumDataLength) allowed "
                + "(Realm.Limits.maximumDataLength)", code: .limitExceeded, objectType: table, property: property)
        error.message += "; the file was left as it is"
        return error
    }
}
