/// The stored type of a property.
public enum PropertyType: String, Hashable, Sendable, CaseIterable {
    case bool, int, int8, int16, int32, int64, float, double, string, date, data, uuid
    /// A Foundation `Decimal`, exact in storage, sorting and comparison.
    case decimal
    /// An ``ObjectID``.
    case objectID
    /// A mixed value (``AnyValue``): each object's value has a kind of its own (null, a bool,
    /// a number, a string, a date, data, a UUID, a decimal or an object id).
    case mixed
    /// A link to another object (to-one when not a list, to-many when a list).
    case object
    /// The computed inverse of a link property of another type (`LinkingObjects`).
    case linkingObjects

    /// Whether values of this type are stored as ``PropertyValue/int(_:)``.
    public var isInteger: Bool {
        switch self {
        case .int, .int8, .int16, .int32, .int64: true
        default: false
        }
    }

    /// The range of values an integer property of this type accepts.
    var integerRange: ClosedRange<Int64> {
        switch self {
        case .int8: Int64(Int8.min)...Int64(Int8.max)
        case .int16: Int64(Int16.min)...Int64(Int16.max)
        case .int32: Int64(Int32.min)...Int64(Int32.max)
        default: Int64.min...Int64.max
        }
    }
}

/// What happens around a link when objects at either end are deleted.
///
/// The rule is declared on the link property (`@Persisted(deleteRule: .cascade) var toys`):
/// - ``nullify`` (the default): deleting either end only removes the link.
/// - ``cascade``: deleting the object that holds the link also deletes the objects it links to.
/// - ``deny``: deleting an object that is still the target of this link fails with
///   ``LiveObjectsError/Code-swift.struct/deleteDenied`` and changes nothing.
///
/// Links to embedded objects always cascade.
public enum DeleteRule: String, Hashable, Sendable, CaseIterable {
    case nullify, cascade, deny
}

/// The description of one property of an object type.
public struct Property: Hashable, Sendable, CustomStringConvertible {
    /// The property's name.
    public var name: String
    /// The stored type.
    public var type: PropertyType
    /// Whether the property accepts nil. To-one links are always optional.
    public var isOptional: Bool
    /// Whether the property is a collection of values of ``type``: a `List`, or a `MutableSet`
    /// when ``isSet`` is also true (a set is stored, queried and observed as a list whose
    /// members are distinct).
    public var isList: Bool
    /// Whether the property is a `MutableSet`: a collection (``isList`` is true) that holds each
    /// member once, in the order they were first inserted.
    public var isSet: Bool
    /// Whether the property is a `Map` from `String` keys to values of ``type``: a collection
    /// (``isList`` is true) whose elements are the values, kept in the order of their keys. Its
    /// whole value is a ``PropertyValue/list(_:)`` of `[.string(key), value]` pairs. A map of
    /// objects (``type`` `.object`) is optional, and its values are links or `.null`.
    public var isMap: Bool
    /// For links, lists of links and `LinkingObjects`: the name of the target (or origin) type.
    public var objectType: String?
    /// For `LinkingObjects`: the name of the link property on ``objectType`` that points here.
    public var originProperty: String?
    /// Whether this is the type's primary key.
    public var isPrimaryKey: Bool
    /// Whether the property has a secondary index.
    public var isIndexed: Bool
    /// Whether a `String` property has a full-text index: the rows of each word, which a
    /// `TEXT` query reads instead of scanning the column. Kept in memory only (rebuilt from the
    /// column when a query first needs it), independent of ``isIndexed``.
    public var isFullTextIndexed: Bool = false
    /// The delete rule of a link property.
    public var deleteRule: DeleteRule

    /// Creates a property description.
    public init(
        name: String, type: PropertyType, isOptional: Bool = false, isList: Bool = false,
        objectType: String? = nil, originProperty: String? = nil, isPrimaryKey: Bool = false,
        isIndexed: Bool = false, deleteRule: DeleteRule = .nullify, isSet: Bool = false,
        isMap: Bool = false, isFullTextIndexed: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isList = isList || isSet || isMap
        self.isSet = isSet
        self.isMap = isMap
        self.objectType = objectType
        self.originProperty = originProperty
        self.isPrimaryKey = isPrimaryKey
        self.isIndexed = isIndexed
        self.deleteRule = deleteRule
        self.isFullTextIndexed = isFullTextIndexed
    }

    /// A to-one link to `objectType`.
    public static func link(
        _ name: String, to objectType: String, deleteRule: DeleteRule = .nullify
    ) -> Property {
        Property(
            name: name, type: .object, isOptional: true, objectType: objectType,
            deleteRule: deleteRule)
    }

    /// A `List` of links to `objectType`.
    public static func list(
        _ name: String, of objectType: String, deleteRule: DeleteRule = .nullify
    ) -> Property {
        Property(
            name: name, type: .object, isList: true, objectType: objectType,
            deleteRule: deleteRule)
    }

    /// A `MutableSet` of links to `objectType`.
    public static func set(
        _ name: String, of objectType: String, deleteRule: DeleteRule = .nullify
    ) -> Property {
        Property(
            name: name, type: .object, objectType: objectType, deleteRule: deleteRule, isSet: true)
    }

    /// A `Map` from `String` keys to optional links to `objectType` (`Map<String, T?>`).
    public static func map(
        _ name: String, of objectType: String, deleteRule: DeleteRule = .nullify
    ) -> Property {
        Property(
            name: name, type: .object, isOptional: true, objectType: objectType, deleteRule: deleteRule,
            isMap: true)
    }

    /// The inverse of `property` on `objectType`.
    public static func linkingObjects(
        _ name: String, from objectType: String, property: String
    ) -> Property {
        Property(
            name: name, type: .linkingObjects, isList: true, objectType: objectType,
            originProperty: property)
    }

    /// Whether the property is stored (everything but `LinkingObjects`).
    public var isStored: Bool { type != .linkingObjects }

    /// Whether the property is a to-one link or a list of links.
    public var isLink: Bool { type == .object }

    public var description: String {
        var text: String
        switch type {
        case .object: text = objectType ?? "?"
        case .linkingObjects:
            return "\(name): <- \(objectType ?? "?").\(originProperty ?? "?")"
        case .mixed: text = "AnyValue"
        default: text = type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst()
        }
        if text == "Uuid" { text = "UUID" }
        if isMap {
            text = "[String: \(text)\(isOptional ? "?" : "")]"
        } else if isSet {
            text = "{\(text)\(isOptional ? "?" : "")}"
        } else if isList {
            text = "[\(text)\(isOptional ? "?" : "")]"
        } else if isOptional {
            text += "?"
        }
        var result = "\(name): \(text)"
        if isPrimaryKey { result += " primary" }
        if isIndexed { result += " indexed" }
        if isFullTextIndexed { result += " fulltext" }
        if deleteRule != .nullify { result += " \(deleteRule.rawValue)" }
        return result
    }
}

/// The description of one object type: its name and properties.
public struct ObjectSchema: Hashable, Sendable, CustomStringConvertible {
    /// The type's name, unique in a realm.
    public var name: String
    /// The properties, in declaration order.
    public var properties: [Property]
    /// Whether objects of this type are embedded: each has exactly one parent, and is deleted
    /// with it.
    public var isEmbedded: Bool

    /// Creates an object schema.
    public init(name: String, properties: [Property], isEmbedded: Bool = false) {
        self.name = name
        self.properties = properties
        self.isEmbedded = isEmbedded
    }

    /// The primary key property, if any.
    public var primaryKey: Property? { properties.first { $0.isPrimaryKey } }

    /// The property with the given name.
    public subscript(name: String) -> Property? { properties.first { $0.name == name } }

    public var description: String {
        let body = properties.map { "  " + $0.description }.joined(separator: "\n")
        return "\(isEmbedded ? "embedded " : "")\(name) {\n\(body)\n}"
    }
}

/// The schema of a realm: all its object types.
public struct Schema: Hashable, Sendable {
    /// The object types, in the order they were given.
    public var objectSchemas: [ObjectSchema]

    /// Creates a schema.
    public init(_ objectSchemas: [ObjectSchema]) {
        self.objectSchemas = objectSchemas
    }

    /// The object type with the given name.
    public subscript(name: String) -> ObjectSchema? {
        objectSchemas.first { $0.name == name }
    }

    /// What is wrong with a `MutableSet` property, if anything.
    private func setProblem(_ p: Property) -> String? {
        guard p.isList, p.type != .linkingObjects else { return "a set is a collection of values or of links" }
        if p.type == .object, let target = p.objectType.flatMap({ self[$0] }), target.isEmbedded {
            return "a set cannot hold embedded objects"
        }
        return nil
    }

    /// Why a map property breaks the rules, if it does.
    private func mapProblem(_ p: Property) -> String? {
        if p.isSet { return "a property is a set or a map, not both" }
        if p.type == .linkingObjects { return "LinkingObjects cannot be a map" }
        if p.type == .object {
            guard p.isOptional else { return "a map of objects holds optional values: declare it Map<String, T?>" }
        }
        return nil
    }

    /// Why a mixed (``AnyValue``) property breaks the rules, if it does.
    private func mixedProblem(_ p: Property) -> String? {
        if p.isOptional { return "an AnyValue property holds null itself: declare it non-optional" }
        return nil
    }

    /// Checks the rules every schema must keep.
    ///
    /// - Throws: ``LiveObjectsError`` with code `invalidSchema`, naming the type and property at
    ///   fault.
    public func validate() throws(LiveObjectsError) {
        var names = Set<String>()
        for type in objectSchemas {
            func fail(_ property: String?, _ message: String) -> LiveObjectsError {
                LiveObjectsError(.invalidSchema, message, objectType: type.name, property: property)
            }
            guard !type.name.isEmpty else { throw fail(nil, "an object type needs a name") }
            guard names.insert(type.name).inserted else {
                throw fail(nil, "the type is declared twice")
            }
            var propertyNames = Set<String>()
            var primaryKeys = 0
            for p in type.properties {
                guard !p.name.isEmpty else { throw fail(nil, "a property needs a name") }
                guard propertyNames.insert(p.name).inserted else {
                    throw fail(p.name, "the property is declared twice")
                }
                if p.isPrimaryKey {
                    primaryKeys += 1
                    guard primaryKeys == 1 else {
                        throw fail(p.name, "a type can have only one primary key")
                    }
                    guard !type.isEmbedded else {
                        throw fail(p.name, "an embedded object cannot have a primary key")
                    }
                    guard [.int, .int8, .int16, .int32, .int64, .string, .uuid, .objectID].contains(p.type),
                        !p.isOptional, !p.isList
                    else {
                        throw fail(
                            p.name,
                            "a primary key must be a non-optional Int, String, UUID or ObjectID, not \(p.description)")
                    }
                }
                if p.isIndexed {
                    guard
                        [.bool, .int, .int8, .int16, .int32, .int64, .string, .date, .uuid, .decimal, .objectID]
                            .contains(p.type), !p.isList
                    else {
                        throw fail(p.name, "properties of type \(p.type.rawValue) cannot be indexed")
                    }
                }
                if p.isFullTextIndexed && (p.type != .string || p.isList) {
                    throw fail(
                        p.name, "only a String or String? property can have a full-text index, not \(p.description)")
                }
                if p.type == .mixed, let why = mixedProblem(p) { throw fail(p.name, why) }
                if p.isSet, let why = setProblem(p) { throw fail(p.name, why) }
                if p.isMap, let why = mapProblem(p) { throw fail(p.name, why) }
                if p.deleteRule != .nullify && p.type != .object {
                    throw fail(p.name, "only link properties take a delete rule")
                }
                switch p.type {
                case .object:
                    guard let target = p.objectType.flatMap({ self[$0] }) else {
                        throw fail(
                            p.name,
                            "links to '\(p.objectType ?? "")', which is not an object type of this realm")
                    }
                    if !p.isList && !p.isOptional {
                        throw fail(p.name, "a to-one link must be optional")
                    }
                    if p.isList && p.isOptional && !p.isMap {
                        throw fail(p.name, "a \(p.isSet ? "set" : "list") of links cannot hold nil")
                    }
                    if target.isEmbedded && p.deleteRule == .deny {
                        throw fail(p.name, "a link to an embedded object cannot deny deletion")
                    }
                case .linkingObjects:
                    // Queries and notifications read LinkingObjects as a list of objects.
                    guard p.isList && !p.isOptional else {
                        throw fail(p.name, "LinkingObjects is a list and cannot be optional")
                    }
                    guard let originType = p.objectType.flatMap({ self[$0] }) else {
                        throw fail(
                            p.name,
                            "LinkingObjects names '\(p.objectType ?? "")', which is not an object type of this realm"
                        )
                    }
                    guard let originName = p.originProperty,
                        let origin = originType[originName]
                    else {
                        throw fail(
                            p.name,
                            "LinkingObjects names '\(originType.name).\(p.originProperty ?? "")', which does not exist"
                        )
                    }
                    guard origin.type == .object, origin.objectType == type.name else {
                        throw fail(
                            p.name,
                            "LinkingObjects names '\(originType.name).\(originName)', which is not a link to \(type.name)"
                        )
                    }
                default:
                    if p.objectType != nil || p.originProperty != nil {
                        throw fail(p.name, "only links and LinkingObjects name an object type")
                    }
                }
            }
        }
    }
}

extension Property {
    /// Why a string cannot be a key of a map, if it cannot: a key is not empty, holds no `.`
    /// (a query reads `a.b` as a path) and does not start with `$` (a query's argument).
    public static func mapKeyProblem(_ key: String) -> String? {
        if key.isEmpty { return "a map key cannot be empty" }
        if key.contains(".") { return "a map key cannot contain '.': \(key)" }
        if key.hasPrefix("$") { return "a map key cannot start with '$': \(key)" }
        if key.utf8.count > 16 << 20 { return "a map key is longer than a string may be" }
        return nil
    }
}
