import LiveObjectsStore
@_spi(Reflection) import Swift

/// What a model class looks like: its schema, and where each `@Persisted` field sits in an
/// instance. Discovered once per class (field names, offsets and types from the runtime's
/// reflection metadata; defaults from a prototype made with `init()`), then cached.
final class ModelInfo: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init; metatypes are immutable.

    struct Field: @unchecked Sendable {
        let property: Property
        let propertyIndex: Int
        let offset: Int
        let accessor: any PersistedField.Type
    }

    /// A property of a ``PersistableEnum`` type (or a list of one): the values it may hold.
    struct EnumCheck: Sendable {
        let propertyIndex: Int
        let allowed: Set<PropertyValue>
        let enumName: String
    }

    /// A property of a ``FailableCustomPersistable`` type (or a list of one): the test of the
    /// values it may hold.
    struct ValueCheck: Sendable {
        let propertyIndex: Int
        let accepts: @Sendable (PropertyValue) -> Bool
        let typeName: String
    }

    let type: Object.Type
    let schema: ObjectSchema
    let fields: [Field]
    let defaults: [PropertyValue]
    let enumChecks: [EnumCheck]
    let valueChecks: [ValueCheck]

    private static let cache = Locked<[ObjectIdentifier: ModelInfo]>([:])

    /// The cached info of a class, if it was discovered before.
    static func cached(_ type: Object.Type) -> ModelInfo? {
        cache.withLock { $0[ObjectIdentifier(type)] }
    }

    /// The info of a class, discovering it on first use.
    static func info(for type: Object.Type) throws(LiveObjectsError) -> ModelInfo {
        if let info = cached(type) { return info }
        let info = try ModelInfo(type)
        return cache.withLock { cache in
            if let existing = cache[ObjectIdentifier(type)] { return existing }
            cache[ObjectIdentifier(type)] = info
            return info
        }
    }

    private init(_ type: Object.Type) throws(LiveObjectsError) {
        self.type = type
        let name = type.className
        var raw: [(String, Int, any PersistedField.Type)] = []
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { cName, offset, fieldType, _ in
            if let accessor = fieldType as? any PersistedField.Type {
                precondition(accessor._storageOffset == 0, "the layout of @Persisted changed")
                raw.append((String(cString: cName), offset, accessor))
            }
            return true
        }
        let prototype = type.init()
        var properties: [Property] = []
        var fields: [Field] = []
        var defaults: [PropertyValue] = []
        var enumChecks: [EnumCheck] = []
        var valueChecks: [ValueCheck] = []
        withExtendedLifetime(prototype) {
            let base = UnsafeRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
            for (fieldName, offset, accessor) in raw {
                let propertyName = fieldName.hasPrefix("_") ? String(fieldName.dropFirst()) : fieldName
                let template = accessor._template
                let flags = accessor._flags(at: base + offset)
                var property = Property(
                    name: propertyName, type: template.type, isOptional: template.isOptional,
                    isList: template.isList, objectType: template.objectType,
                    isPrimaryKey: flags & 1 != 0, isIndexed: flags & 2 != 0,
                    deleteRule: flags & 4 != 0 ? .cascade : flags & 8 != 0 ? .deny : .nullify,
                    isSet: template.isSet, isMap: template.isMap, isFullTextIndexed: flags & 16 != 0)
                if template.type == .linkingObjects {
                    property.originProperty = accessor._originProperty(at: base + offset)
                }
                if let allowed = template.allowedValues {
                    enumChecks.append(
                        EnumCheck(
                            propertyIndex: properties.count, allowed: Set(allowed),
                            enumName: template.enumName ?? "the enum"))
                }
                if let accepts = template.accepts {
                    valueChecks.append(
                        ValueCheck(
                            propertyIndex: properties.count, accepts: accepts,
                            typeName: template.customTypeName ?? "value of the property's type"))
                }
                fields.append(
                    Field(property: property, propertyIndex: properties.count, offset: offset, accessor: accessor))
                properties.append(property)
                let value = accessor._unmanagedValue(at: base + offset)
                defaults.append(property.type == .object ? property.zeroValue : value)
            }
        }
        self.schema = ObjectSchema(
            name: name, properties: properties, isEmbedded: type is EmbeddedObject.Type)
        self.fields = fields
        self.defaults = defaults
        self.enumChecks = enumChecks
        self.valueChecks = valueChecks
    }
}

extension Table {
    /// Where the model class keeps its fields, when the realm was opened with model types.
    @inline(__always)
    var modelInfo: ModelInfo? { model.map { unsafeDowncast($0, to: ModelInfo.self) } }

    /// The Swift model class, when the realm was opened with model types.
    package var objectType: Object.Type? { modelInfo?.type }
}

extension Store {
    /// Attaches model classes to their tables.
    func register(_ info: ModelInfo) {
        let type = info.type
        let table = tablesByName[type.className]!
        table.setModel(info, defaults: info.defaults)
        for check in info.enumChecks {
            table.enumCases[table.schema.properties[check.propertyIndex].name] = (check.allowed, check.enumName)
        }
        for check in info.valueChecks {
            table.valueChecks[table.schema.properties[check.propertyIndex].name] = (check.accepts, check.typeName)
        }
        tablesByType[ObjectIdentifier(type)] = table
    }

    /// The table of a model class, not retained (nil for a class that is not part of the
    /// realm): for lookups that use the table within the call, where the store keeps it alive,
    /// without the retain and release that returning it strongly costs.
    @usableFromInline
    func unretainedTable(for type: Object.Type) -> Unmanaged<Table>? {
        tables.withUnsafeBufferPointer { tables in
            for i in tables.indices {
                let found = Unmanaged.passUnretained(tables[i])._withUnsafeGuaranteedRef { table in
                    table.model.map { unsafeDowncast($0, to: ModelInfo.self).type == type } ?? false
                }
                if found { return Unmanaged.passUnretained(tables[i]) }
            }
            return nil
        }
    }

    /// The table of a model class.
    package func table(for type: Object.Type) throws(LiveObjectsError) -> Table {
        for table in tables where table.objectType == type { return table }
        throw LiveObjectsError(
            .unknownType, "the type is not part of this realm's configuration",
            objectType: type.className)
    }
}
