import Foundation
import LiveObjectsStore

/// A type that a `@Persisted` property can hold: the supported primitives, optionals of them,
/// model objects (as optional links), `List` and `LinkingObjects`.
///
/// The requirements are implementation details; do not conform your own types.
public protocol _Persistable {
    /// The stored shape of the type.
    static var _propertyTemplate: _PropertyTemplate { get }
    /// The value a property of this type takes when no default is written.
    static var _defaultValue: Self { get }
    /// Makes a value from its stored form.
    static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> Self
    /// Reads the property of a managed object.
    static func _get(_ context: _AccessContext) -> Self
    /// Writes the property of a managed object.
    static func _set(_ value: Self, _ context: _AccessContext) throws(LiveObjectsError)
    /// The value as input for a realm.
    func _encode() -> _Input
    /// The managed object that `target` (a context of no property) is the handle of; for a
    /// to-one link's `Wrapped` type.
    static func _linked(_ target: _AccessContext) -> Self
}

extension _Persistable {
    @inlinable @inline(__always)
    public static func _get(_ context: _AccessContext) -> Self {
        _decode(context.storedValue, context)
    }

    public static func _linked(_ target: _AccessContext) -> Self { _defaultValue }

    public static func _set(_ value: Self, _ context: _AccessContext) throws(LiveObjectsError) {
        let h = context.handle
        try h.store.set(
            value._encode().input, h.table, h.row, context.property,
            context: AddContext(update: .error), force: false)
    }
}

/// A primitive that converts to and from ``PropertyValue`` on its own.
public protocol _PrimitivePersistable: _Persistable {
    static var _type: PropertyType { get }
    init?(_propertyValue value: PropertyValue)
    var _propertyValue: PropertyValue { get }
}

extension _PrimitivePersistable {
    public static var _propertyTemplate: _PropertyTemplate { _PropertyTemplate(type: _type) }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> Self {
        Self(_propertyValue: value) ?? _defaultValue
    }
    public func _encode() -> _Input { _Input(.value(_propertyValue)) }
    public static func _set(_ value: Self, _ context: _AccessContext) throws(LiveObjectsError) {
        try context.handle.store.setPrimitive(value._propertyValue, context.handle, context.property)
    }
}

extension Bool: _PrimitivePersistable {
    @inlinable @inline(__always)
    public static func _get(_ context: _AccessContext) -> Bool {
        context.scalar(Bool.self, .bool) ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .bool }
    public static var _defaultValue: Bool { false }
    public init?(_propertyValue value: PropertyValue) {
        guard case .bool(let v) = value else { return nil }
        self = v
    }
    public var _propertyValue: PropertyValue { .bool(self) }
}

/// Integer types share one stored form.
public protocol _IntegerPersistable: _PrimitivePersistable, FixedWidthInteger {}

extension _IntegerPersistable {
    public static var _defaultValue: Self { 0 }
    @inlinable @inline(__always)
    public static func _get(_ context: _AccessContext) -> Self {
        if let value = context.scalar(Int64.self, .int) { return Self(truncatingIfNeeded: value) }
        return _decode(context.storedValue, context)
    }
    public init?(_propertyValue value: PropertyValue) {
        guard case .int(let v) = value, let i = Self(exactly: v) else { return nil }
        self = i
    }
    @inlinable public var _propertyValue: PropertyValue { .int(Int64(self)) }
}

extension Int: _IntegerPersistable { public static var _type: PropertyType { .int } }
extension Int8: _IntegerPersistable { public static var _type: PropertyType { .int8 } }
extension Int16: _IntegerPersistable { public static var _type: PropertyType { .int16 } }
extension Int32: _IntegerPersistable { public static var _type: PropertyType { .int32 } }
extension Int64: _IntegerPersistable { public static var _type: PropertyType { .int64 } }

extension Float: _PrimitivePersistable {
    @inlinable @inline(__always)
    public static func _get(_ context: _AccessContext) -> Float {
        context.scalar(Float.self, .float) ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .float }
    public static var _defaultValue: Float { 0 }
    public init?(_propertyValue value: PropertyValue) {
        guard case .float(let v) = value else { return nil }
        self = v
    }
    public var _propertyValue: PropertyValue { .float(self) }
}

extension Double: _PrimitivePersistable {
    @inlinable @inline(__always)
    public static func _get(_ context: _AccessContext) -> Double {
        context.scalar(Double.self, .double) ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .double }
    public static var _defaultValue: Double { 0 }
    public init?(_propertyValue value: PropertyValue) {
        guard case .double(let v) = value else { return nil }
        self = v
    }
    public var _propertyValue: PropertyValue { .double(self) }
}

extension String: _PrimitivePersistable {
    @inlinable @inline(__always)
    public static func _get(_ context: _AccessContext) -> String {
        context.scalar(String.self, .string) ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .string }
    public static var _defaultValue: String { "" }
    public init?(_propertyValue value: PropertyValue) {
        guard case .string(let v) = value else { return nil }
        self = v
    }
    public var _propertyValue: PropertyValue { .string(self) }
}

extension Date: _PrimitivePersistable {
    @inlinable @inline(__always)
    public static func _get(_ context: _AccessContext) -> Date {
        context.scalar(Date.self, .date) ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .date }
    public static var _defaultValue: Date { .zero }
    public init?(_propertyValue value: PropertyValue) {
        guard case .date(let v) = value else { return nil }
        self = v
    }
    public var _propertyValue: PropertyValue { .date(self) }
}

extension Data: _PrimitivePersistable {
    public static func _get(_ context: _AccessContext) -> Data {
        context.scalar(Data.self, .data) ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .data }
    public static var _defaultValue: Data { Data() }
    public init?(_propertyValue value: PropertyValue) {
        guard case .data(let v) = value else { return nil }
        self = v
    }
    public var _propertyValue: PropertyValue { .data(self) }
}

extension UUID: _PrimitivePersistable {
    public static func _get(_ context: _AccessContext) -> UUID {
        context.scalar(UUID.self, .uuid) ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .uuid }
    public static var _defaultValue: UUID { .zero }
    public init?(_propertyValue value: PropertyValue) {
        guard case .uuid(let v) = value else { return nil }
        self = v
    }
    public var _propertyValue: PropertyValue { .uuid(self) }
}

extension Decimal: _PrimitivePersistable {
    public static func _get(_ context: _AccessContext) -> Decimal {
        context.scalar(Decimal.self, .decimal) ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .decimal }
    public static var _defaultValue: Decimal { 0 }
    public init?(_propertyValue value: PropertyValue) {
        guard case .decimal(let v) = value else { return nil }
        self = v
    }
    public var _propertyValue: PropertyValue { .decimal(self) }
}

extension ObjectID: _PrimitivePersistable {
    public static func _get(_ context: _AccessContext) -> ObjectID {
        context.scalar(ObjectID.self, .objectID) ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .objectID }
    public static var _defaultValue: ObjectID { .zero }
    public init?(_propertyValue value: PropertyValue) {
        guard case .objectID(let v) = value else { return nil }
        self = v
    }
    public var _propertyValue: PropertyValue { .objectID(self) }
}

extension AnyValue: _PrimitivePersistable {
    public static func _get(_ context: _AccessContext) -> AnyValue {
        context.scalar(PropertyValue.self, .mixed).flatMap { AnyValue($0) } ?? _decode(context.storedValue, context)
    }
    public static var _type: PropertyType { .mixed }
    public static var _defaultValue: AnyValue { .null }
    public init?(_propertyValue value: PropertyValue) { self.init(value as PropertyValue) }
    public var _propertyValue: PropertyValue { propertyValue }
}

extension Optional: _Persistable where Wrapped: _Persistable {
    public static var _propertyTemplate: _PropertyTemplate {
        var t = Wrapped._propertyTemplate
        t.isOptional = true
        return t
    }
    public static var _defaultValue: Wrapped? { nil }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> Wrapped? {
        value.isNull ? nil : Wrapped._decode(value, context)
    }
    /// A to-one link is read from its column straight to the target's handle; other optional
    /// properties through their stored value.
    public static func _get(_ context: _AccessContext) -> Wrapped? {
        if let link = context.linkedObject() {
            guard let target = link else { return nil }
            return Wrapped._linked(_AccessContext(handle: target, property: _AccessContext.invalid))
        }
        return _decode(context.storedValue, context)
    }
    public func _encode() -> _Input {
        self?._encode() ?? _Input(.value(.null))
    }
}

// Swift collections are not property types: these unavailable conformances make the compiler
// say what to write instead of naming the internal protocol.

@available(
    *, unavailable,
    message: "a @Persisted list property is a List: write '@Persisted var tags: List<String>' (it starts empty)"
)
extension Array: _Persistable {
    public static var _propertyTemplate: _PropertyTemplate { fatalError("unavailable") }
    public static var _defaultValue: Array { [] }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> Array { [] }
    public func _encode() -> _Input { fatalError("unavailable") }
}

@available(
    *, unavailable,
    message:
        "a @Persisted set property is a MutableSet: write '@Persisted var tags: MutableSet<String>' (it starts empty)"
)
extension Set: _Persistable {
    public static var _propertyTemplate: _PropertyTemplate { fatalError("unavailable") }
    public static var _defaultValue: Set { [] }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> Set { [] }
    public func _encode() -> _Input { fatalError("unavailable") }
}

@available(
    *, unavailable,
    message:
        "a @Persisted dictionary property is a Map: write '@Persisted var settings: Map<String, String>' (it starts empty)"
)
extension Dictionary: _Persistable {
    public static var _propertyTemplate: _PropertyTemplate { fatalError("unavailable") }
    public static var _defaultValue: Dictionary { [:] }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> Dictionary { [:] }
    public func _encode() -> _Input { fatalError("unavailable") }
}

/// A value that can stand on the right of a query comparison.
public protocol _QueryValue {
    var _queryValue: PropertyValue { get }
}

extension _PrimitivePersistable {
    public var _queryValue: PropertyValue { _propertyValue }
}
extension Bool: _QueryValue {}
extension Int: _QueryValue {}
extension Int8: _QueryValue {}
extension Int16: _QueryValue {}
extension Int32: _QueryValue {}
extension Int64: _QueryValue {}
extension Float: _QueryValue {}
extension Double: _QueryValue {}
extension String: _QueryValue {}
extension Date: _QueryValue {}
extension Data: _QueryValue {}
extension UUID: _QueryValue {}
extension Decimal: _QueryValue {}
extension ObjectID: _QueryValue {}
extension AnyValue: _QueryValue {}
extension Optional: _QueryValue where Wrapped: _QueryValue {
    public var _queryValue: PropertyValue { self?._queryValue ?? .null }
}
extension Object: _QueryValue {
    public var _queryValue: PropertyValue { objectKey.map { .object($0) } ?? .null }
}
