import LiveObjects
import LiveObjectsJSON

/// Writing and reading a ``Schema`` as JSON: the `schema` member of a snapshot header.
enum SchemaCoding {
    static func write(_ schema: Schema, to writer: inout JSONWriter) {
        writer.beginArray()
        for type in schema.objectSchemas {
            writer.beginObject()
            writer.key("name")
            writer.string(type.name)
            if type.isEmbedded {
                writer.key("embedded")
                writer.bool(true)
            }
            writer.key("properties")
            writer.beginArray()
            for p in type.properties {
                writer.beginObject()
                writer.key("name")
                writer.string(p.name)
                writer.key("type")
                writer.string(p.type.rawValue)
                if p.isOptional {
                    writer.key("optional")
                    writer.bool(true)
                }
                if p.isMap {
                    writer.key("map")
                    writer.bool(true)
                } else if p.isSet {
                    writer.key("set")
                    writer.bool(true)
                } else if p.isList {
                    writer.key("list")
                    writer.bool(true)
                }
                if let objectType = p.objectType {
                    writer.key("objectType")
                    writer.string(objectType)
                }
                if let origin = p.originProperty {
                    writer.key("originProperty")
                    writer.string(origin)
                }
                if p.isPrimaryKey {
                    writer.key("primaryKey")
                    writer.bool(true)
                }
                if p.isIndexed {
                    writer.key("indexed")
                    writer.bool(true)
                }
                if p.isFullTextIndexed {
                    writer.key("fullText")
                    writer.bool(true)
                }
                if p.deleteRule != .nullify {
                    writer.key("deleteRule")
                    writer.string(p.deleteRule.rawValue)
                }
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        }
        writer.endArray()
    }

    static func read(from reader: inout JSONReader) throws(LiveObjectsError) -> Schema {
        var types: [ObjectSchema] = []
        _ = try reader.peekByte()
        let schemaStart = reader.offset
        // Where each type's object starts, and each of its properties', for errors of the
        // schema as a whole.
        var typeStarts: [Int] = []
        var propertyStarts: [[Int]] = []
        try reader.beginArray()
        while try reader.nextElement() {
            var name: String?
            var embedded: Bool?
            var properties: [Property]?
            _ = try reader.peekByte()
            typeStarts.append(reader.offset)
            propertyStarts.append([])
            try reader.beginObject()
            while let key = try reader.nextKey() {
                switch key {
                case "name":
                    guard name == nil else { throw duplicate(reader, key) }
                    name = try reader.readString()
                case "embedded":
                    guard embedded == nil else { throw duplicate(reader, key) }
                    embedded = try reader.readBool()
                case "properties":
                    guard properties == nil else { throw duplicate(reader, key) }
                    var list: [Property] = []
                    try reader.beginArray()
                    while try reader.nextElement() {
                        _ = try reader.peekByte()
                        propertyStarts[propertyStarts.count - 1].append(reader.offset)
                        list.append(try readProperty(&reader))
                    }
                    properties = list
                default:
                    throw corrupt(reader, "unknown member '\(key)' in an object type of the schema")
                }
            }
            guard let name, let properties else {
                throw corrupt(reader, "an object type of the schema needs a name and properties")
            }
            types.append(ObjectSchema(name: name, properties: properties, isEmbedded: embedded ?? false))
        }
        let schema = Schema(types)
        do {
            try schema.validate()
        } catch {
            // Point at the type (the last one of its name: a type declared twice, at the
            // second) and its property, when the error names them.
            var start = schemaStart
            if let t = types.lastIndex(where: { $0.name == error.objectType }) {
                start = typeStarts[t]
                if let p = types[t].properties.lastIndex(where: { $0.name == error.property }) {
                    start = propertyStarts[t][p]
                }
            }
            let (byte, line, column) = reader.coordinates(start)
            let reason = "the file's schema is not valid: \(error.message)"
            var located = LiveObjectsError(
                .corruptFile, "\(reason) (at byte \(byte), line \(line), column \(column))",
                objectType: error.objectType, property: error.property, file: reader.options.fileName)
            located.inputLocation = InputErrorLocation(offset: byte, reason: reason)
            throw located
        }
        return schema
    }

    private static func duplicate(_ reader: JSONReader, _ key: String) -> LiveObjectsError {
        corrupt(reader, "the member '\(key)' is given twice in the schema")
    }

    private static func readProperty(_ reader: inout JSONReader) throws(LiveObjectsError) -> Property {
        var name: String?
        var type: PropertyType?
        var property = Property(name: "", type: .int)
        var seen: Set<String> = []
        try reader.beginObject()
        while let key = try reader.nextKey() {
            guard seen.insert(key).inserted else { throw duplicate(reader, key) }
            switch key {
            case "name": name = try reader.readString()
            case "type":
                let text = try reader.readString()
                guard let t = PropertyType(rawValue: text) else {
                    throw corrupt(reader, "unknown property type '\(text)'")
                }
                type = t
            case "optional": property.isOptional = try reader.readBool()
            case "list": property.isList = try reader.readBool()
            case "set": property.isSet = try reader.readBool()
            case "map": property.isMap = try reader.readBool()
            case "objectType": property.objectType = try reader.readString()
            case "originProperty": property.originProperty = try reader.readString()
            case "primaryKey": property.isPrimaryKey = try reader.readBool()
            case "indexed": property.isIndexed = try reader.readBool()
            case "fullText": property.isFullTextIndexed = try reader.readBool()
            case "deleteRule":
                let text = try reader.readString()
                guard let rule = DeleteRule(rawValue: text) else {
                    throw corrupt(reader, "unknown delete rule '\(text)'")
                }
                property.deleteRule = rule
            default:
                throw corrupt(reader, "unknown member '\(key)' in a property of the schema")
            }
        }
        guard let name, let type else {
            throw corrupt(reader, "a property of the schema needs a name and a type")
        }
        property.name = name
        property.type = type
        if property.isSet || property.isMap { property.isList = true }
        return property
    }

    static func corrupt(_ reader: JSONReader, _ message: String) -> LiveObjectsError {
        reader.loadError(message)
    }
}

/// The differences between two schemas, by type and property name (order does not matter).
struct SchemaDiff: Sendable, Hashable, CustomStringConvertible {
    /// Types only in the new schema.
    var addedTypes: [String] = []
    /// Types only in the old schema.
    var removedTypes: [String] = []
    /// Types whose embedded flag changed.
    var changedTypes: [String] = []
    /// Properties only in the new schema, as `Type.property`.
    var addedProperties: [String] = []
    /// Properties only in the old schema, as `Type.property`.
    var removedProperties: [String] = []
    /// Properties in both with another description, as `Type.property: old -> new`.
    var changedProperties: [String] = []

    package init(from old: Schema, to new: Schema) {
        for type in new.objectSchemas {
            guard let oldType = old[type.name] else {
                addedTypes.append(type.name)
                continue
            }
            if oldType.isEmbedded != type.isEmbedded { changedTypes.append(type.name) }
            for p in type.properties {
                if let oldProperty = oldType[p.name] {
                    if oldProperty != p {
                        changedProperties.append(
                            "\(type.name).\(p.name): \(oldProperty.description) -> \(p.description)")
                    }
                } else {
                    addedProperties.append("\(type.name).\(p.name)")
                }
            }
            for p in oldType.properties where type[p.name] == nil {
                removedProperties.append("\(type.name).\(p.name)")
            }
        }
        for type in old.objectSchemas where new[type.name] == nil { removedTypes.append(type.name) }
    }

    /// Whether the schemas describe the same types and properties.
    package var isEmpty: Bool {
        addedTypes.isEmpty && removedTypes.isEmpty && changedTypes.isEmpty && addedProperties.isEmpty
            && removedProperties.isEmpty && changedProperties.isEmpty
    }

    package var description: String {
        var parts: [String] = []
        if !addedTypes.isEmpty { parts.append("added types: " + addedTypes.joined(separator: ", ")) }
        if !removedTypes.isEmpty { parts.append("removed types: " + removedTypes.joined(separator: ", ")) }
        if !changedTypes.isEmpty {
            parts.append("types changed between embedded and top-level: " + changedTypes.joined(separator: ", "))
        }
        if !addedProperties.isEmpty { parts.append("added properties: " + addedProperties.joined(separator: ", ")) }
        if !removedProperties.isEmpty {
            parts.append("removed properties: " + removedProperties.joined(separator: ", "))
        }
        if !changedProperties.isEmpty {
            parts.append("changed properties: " + changedProperties.joined(separator: "; "))
        }
        return parts.isEmpty ? "no differences" : parts.joined(separator: "; ")
    }
}
