import LiveObjectsStore
import Observation

/// Marks a stored property of a model object.
///
/// ```swift
/// @Persisted(primaryKey: true) var id = 0
/// @Persisted(indexed: true) var name = ""
/// @Persisted(indexed: .fullText) var notes = ""
/// @Persisted var nickname: String?
/// @Persisted(deleteRule: .cascade) var toys: List<DogToy>
/// @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// ```
///
/// On an unmanaged object the wrapper keeps the value; on a managed object every read and write
/// goes to the realm's storage. Reads are tracked by the Observation framework (see
/// ``Object``'s `Observable` conformance).
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    @usableFromInline var storage: Value
    @usableFromInline var flags: UInt8

    /// Declares a stored property with a default value.
    ///
    /// - Parameters:
    ///   - wrappedValue: The default value.
    ///   - primaryKey: Whether this is the type's primary key (Int, String or UUID).
    ///   - indexed: Whether to keep a secondary index (faster queries, slower writes).
    ///   - deleteRule: For links and lists of links, what deletions do (see ``DeleteRule``).
    @inlinable
    public init(
        wrappedValue: Value, primaryKey: Bool = false, indexed: Bool = false,
        deleteRule: DeleteRule = .nullify
    ) {
        storage = wrappedValue
        flags = _persistedFlags(primaryKey, indexed, deleteRule)
    }

    /// Declares a stored property whose default is the type's own (0, "", nil, an empty list…).
    @inlinable
    public init(primaryKey: Bool = false, indexed: Bool = false, deleteRule: DeleteRule = .nullify) {
        storage = Value._defaultValue
        flags = _persistedFlags(primaryKey, indexed, deleteRule)
    }

    /// Declares a stored property with a default value and an index of the given kind.
    ///
    /// `indexed: .fullText` keeps a full-text index of a `String` or `String?` property, which
    /// `TEXT` queries and ``Query/matches(_:)`` read instead of scanning every object;
    /// `indexed: .value` is `indexed: true`. The schema refuses a full-text index on other types.
    @inlinable
    public init(
        wrappedValue: Value, primaryKey: Bool = false, indexed: IndexKind, deleteRule: DeleteRule = .nullify
    ) {
        storage = wrappedValue
        flags = _persistedFlags(primaryKey, indexed == .value, deleteRule) | (indexed == .fullText ? 16 : 0)
    }

    /// Declares a stored property whose default is the type's own (`""` or nil for a string),
    /// with an index of the given kind (`indexed: .fullText` on a `String` or `String?`).
    @inlinable
    public init(primaryKey: Bool = false, indexed: IndexKind, deleteRule: DeleteRule = .nullify) {
        storage = Value._defaultValue
        flags = _persistedFlags(primaryKey, indexed == .value, deleteRule) | (indexed == .fullText ? 16 : 0)
    }

    @available(*, unavailable, message: "@Persisted can only be used on properties of Object subclasses")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    @inlinable
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        // The key paths are only ever projected here, never kept or passed on: projecting a
        // literal key path compiles to a plain field access, while keeping one would make
        // every access fetch (and retain and release) the key path object. The property is
        // told apart by its field's offset in the object instead (`_field`).
        @inline(__always) get {
            guard object._handle != nil else {
                _access(object, _field(object, storageKeyPath))
                return object[keyPath: storageKeyPath].storage
            }
            let field = _field(object, storageKeyPath)
            let context = _context(object, field)
            guard context.isUsable else {
                object._readOfInvalidatedObject(field: field)
                return Value._defaultValue
            }
            _access(object, field)
            return Value._get(context)
        }
        @inline(__always) set {
            guard object._handle != nil else {
                if let observation = object._observation,
                    object._reportsChange(from: object[keyPath: storageKeyPath].storage, to: newValue)
                {
                    let field = _field(object, storageKeyPath)
                    object._willSet(observation, field: field)
                    object[keyPath: storageKeyPath].storage = newValue
                    object._didSet(observation, field: field)
                } else {
                    object[keyPath: storageKeyPath].storage = newValue
                }
                return
            }
            _managedSet(newValue, object, _field(object, storageKeyPath))
        }
    }

    /// The offset of the wrapper's field in the object: what tells the properties of a class
    /// apart (also across subclasses, which keep their superclass's layout).
    @inlinable @inline(__always)
    static func _field<EnclosingSelf: Object>(
        _ object: EnclosingSelf,
        _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Int {
        withUnsafeMutablePointer(to: &object[keyPath: storageKeyPath]) { field in
            UnsafeRawPointer(field) - UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        }
    }

    /// Registers a read with the object's observation registrar, made on the instance's first
    /// read inside `withObservationTracking` (untracked reads of an instance without one only
    /// ask the probe). Managed objects report changes at commit, not in their setters.
    @inlinable @inline(__always)
    static func _access(_ object: Object, _ field: Int) {
        if let observation = object._observation {
            object._access(observation, field: field)
        } else if object._isTracked {
            object._beginObservation(field: field)
        }
    }

    @inlinable
    static func _managedSet(_ newValue: Value, _ object: Object, _ field: Int) {
        let context = _context(object, field)
        guard context.isUsable else { return object._writeOfInvalidatedObject(field: field) }
        let savepoint = context.savepoint
        do {
            try Value._set(newValue, context)
        } catch {
            context.failed(error, rollingBackTo: savepoint)
        }
    }

    @inlinable
    static func _context(_ object: Object, _ field: Int) -> _AccessContext {
        let context = object._context(forField: field)
        if context.isResolved { return context }
        object._resolve(field: field)
        return object._context(forField: field)
    }

    var deleteRule: DeleteRule {
        if flags & 4 != 0 { return .cascade }
        if flags & 8 != 0 { return .deny }
        return .nullify
    }
}

/// The kinds of index a `@Persisted` property can have (`@Persisted(indexed: .fullText)`).
public enum IndexKind: Hashable, Sendable {
    /// A secondary index of values: what `indexed: true` declares (equality, `IN` and ranges).
    case value
    /// A full-text index of a string's words, for `TEXT` and ``Query/matches(_:)``.
    case fullText
}

/// The flag bits of a `@Persisted` declaration (16, a full-text index, is added by the
/// initializers that take an ``IndexKind``).
@inlinable
func _persistedFlags(_ primaryKey: Bool, _ indexed: Bool, _ deleteRule: DeleteRule) -> UInt8 {
    var f: UInt8 = 0
    if primaryKey { f |= 1 }
    if indexed { f |= 2 }
    switch deleteRule {
    case .nullify: break
    case .cascade: f |= 4
    case .deny: f |= 8
    }
    return f
}

/// The type-erased view of a `Persisted<Value>` field, used by schema discovery and `add`.
protocol PersistedField {
    static var _template: _PropertyTemplate { get }
    /// Where the value sits in the wrapper (always 0: the readers rely on it).
    static var _storageOffset: Int { get }
    static func _flags(at pointer: UnsafeRawPointer) -> UInt8
    static func _originProperty(at pointer: UnsafeRawPointer) -> String?
    static func _input(at pointer: UnsafeRawPointer) -> Input
    static func _unmanagedValue(at pointer: UnsafeRawPointer) -> PropertyValue
    static func _detach(
        from source: Object, field: ModelInfo.Field, into pointer: UnsafeMutableRawPointer,
        copies: inout [Object: Object])
    /// Sets the value of an unmanaged object's field from a Swift value of the property's
    /// type (nil for nil; an array of such values for a list). False if the value does not fit.
    static func _assign(_ value: Any?, at pointer: UnsafeMutableRawPointer) -> Bool
    /// The model class a link, list of links or `LinkingObjects` points to.
    static var _linkedType: Object.Type? { get }
}

extension Persisted: PersistedField {
    static var _template: _PropertyTemplate { Value._propertyTemplate }

    static func _flags(at pointer: UnsafeRawPointer) -> UInt8 {
        pointer.assumingMemoryBound(to: Self.self).pointee.flags
    }

    static func _originProperty(at pointer: UnsafeRawPointer) -> String? {
        (pointer.assumingMemoryBound(to: Self.self).pointee.storage as? any _LinkingObjectsProtocol)?
            ._originProperty
    }

    static var _storageOffset: Int { MemoryLayout<Self>.offset(of: \Self.storage)! }

    // The two readers below run for every property of every object added to a realm. They read
    // the field as its `Value` (the wrapper's first stored property; `ModelInfo` checks that
    // it sits at offset 0): naming `Self` would look up the generic metadata of
    // `Persisted<Value>` in the runtime's cache on every call.

    static func _input(at pointer: UnsafeRawPointer) -> Input {
        pointer.assumingMemoryBound(to: Value.self).pointee._encode().input
    }

    static func _unmanagedValue(at pointer: UnsafeRawPointer) -> PropertyValue {
        switch pointer.assumingMemoryBound(to: Value.self).pointee._encode().input {
        case .value(let v): v
        case .array(let items):
            .list(items.map { if case .value(let v) = $0 { v } else { .null } })
        default: .null
        }
    }

    static func _detach(
        from source: Object, field: ModelInfo.Field, into pointer: UnsafeMutableRawPointer,
        copies: inout [Object: Object]
    ) {
        let value: Value
        if let handle = source._handle {
            guard handle.isValid, let p = handle.table.propertyIndex[field.property.name] else { return }
            value = Value._get(_AccessContext(handle: handle, property: p))
        } else {
            value = withExtendedLifetime(source) {
                let base = UnsafeRawPointer(Unmanaged.passUnretained(source).toOpaque())
                return (base + field.offset).assumingMemoryBound(to: Self.self).pointee.storage
            }
        }
        pointer.assumingMemoryBound(to: Self.self).pointee.storage = value._detached(&copies)
    }

    static func _assign(_ value: Any?, at pointer: UnsafeMutableRawPointer) -> Bool {
        let field = pointer.assumingMemoryBound(to: Self.self)
        if let map = field.pointee.storage as? any _UnmanagedMapFilling {
            if let items = value as? [String: Any?] { return map._replaceEntries(with: items) }
            guard let items = value as? [String: Any] else { return false }
            return map._replaceEntries(with: items.mapValues { $0 })
        }
        if let list = field.pointee.storage as? any _UnmanagedListFilling {
            guard let items = value as? [Any?] else { return false }
            return list._replaceElements(with: items)
        }
        guard let value else {
            guard Value._propertyTemplate.isOptional else { return false }
            field.pointee.storage = Value._defaultValue
            return true
        }
        guard let typed = _persistedCast(value, to: Value.self) else { return false }
        field.pointee.storage = typed
        return true
    }

    static var _linkedType: Object.Type? {
        (Value.self as? any _LinkedTypeProviding.Type)?._linkedObjectType
    }
}

/// A list whose elements can be set from type-erased values (decoding).
protocol _UnmanagedListFilling {
    func _replaceElements(with items: [Any?]) -> Bool
}

/// A property type that links to a model class.
protocol _LinkedTypeProviding {
    static var _linkedObjectType: Object.Type { get }
}

extension Optional: _LinkedTypeProviding where Wrapped: Object {
    static var _linkedObjectType: Object.Type { Wrapped.self }
}

extension LinkingObjects: _LinkedTypeProviding {
    static var _linkedObjectType: Object.Type { Element.self }
}

extension _Persistable {
    /// An unmanaged copy of a value (objects and lists copied deeply).
    public func _detached(_ copies: inout [Object: Object]) -> Self {
        switch self {
        case let object as Object:
            return Object.detachedLink(object, copies: &copies) as! Self
        case let value as any _DetachableCollection:
            return value._detachedCollection(&copies) as! Self
        case let optional as any _OptionalObject:
            return optional._detachedOptional(&copies) as! Self
        default:
            return self
        }
    }
}

/// Lists detach element by element.
public protocol _DetachableCollection {
    func _detachedCollection(_ copies: inout [Object: Object]) -> Any
}

/// Optional links detach their object.
public protocol _OptionalObject {
    func _detachedOptional(_ copies: inout [Object: Object]) -> Any
}

extension Optional: _OptionalObject where Wrapped: _Persistable {
    public func _detachedOptional(_ copies: inout [Object: Object]) -> Any {
        self.map { $0._detached(&copies) } as Any
    }
}
