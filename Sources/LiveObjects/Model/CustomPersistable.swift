import Foundation
import LiveObjectsStore

/// What ``CustomPersistable`` and ``FailableCustomPersistable`` share: a Swift type that a
/// `@Persisted` property holds as another type, its ``PersistedType``.
///
/// Conform to one of the two protocols, not to this one.
public protocol _CustomPersistable: _PrimitivePersistable, _QueryValue {
    /// The type the realm stores: `Bool`, an integer type, `Float`, `Double`, `String`, `Date`,
    /// `Data`, `UUID`, `Decimal`, `ObjectID`, a ``PersistableEnum``, or another custom
    /// persistable type (the realm then stores the end of the chain).
    associatedtype PersistedType: _PrimitivePersistable
    /// The value as the realm stores it.
    var persistableValue: PersistedType { get }
}

/// A Swift type that a `@Persisted` property holds as a type the realm stores, converting both
/// ways without failing: a wrapped identifier, say.
///
/// ```swift
/// struct UserID: CustomPersistable, Hashable {
///     let raw: String
///     init(raw: String) { self.raw = raw }
///     init(persistedValue: String) { raw = persistedValue }
///     var persistableValue: String { raw }
/// }
///
/// final class User: Object {
///     @Persisted(primaryKey: true) var id = UserID(raw: "")
///     @Persisted var friends: List<UserID>
/// }
/// ```
///
/// The property may be optional, a `List` of the type, the primary key or indexed when its
/// persisted type can be. The realm, its files, the shell, migrations and sync see the
/// persisted type only, so a file stays readable by a model that declares the persisted type
/// instead. Typed queries compare and sort by the persisted value (`$0.id == userID`); the
/// string language compares the stored value, and a `%@` argument of the type is converted.
/// `Object(value:)`, `create(_:value:)` and JSON take either the type or its persisted value.
/// A property without a default takes the value made from the persisted type's default (`""`,
/// `0`…).
public protocol CustomPersistable: _CustomPersistable {
    /// Makes the value from its stored form.
    init(persistedValue: PersistedType)
}

/// A Swift type that a `@Persisted` property holds as a type the realm stores, where not every
/// stored value makes one (`URL` from a `String`, say).
///
/// ```swift
/// struct Hue: FailableCustomPersistable {
///     let degrees: Int
///     init?(persistedValue: Int) {
///         guard (0..<360).contains(persistedValue) else { return nil }
///         degrees = persistedValue
///     }
///     var persistableValue: Int { degrees }
/// }
/// ```
///
/// Everything ``CustomPersistable`` says holds, and the realm keeps the values the type refuses
/// out: writing one through the dynamic API, `create(_:value:)`, JSON or the shell throws
/// `typeMismatch`, and so does opening a realm whose file holds one (naming the object and
/// the property), so a read never meets one. (Realm instead reads such a value as nil, or stops
/// the program for a non-optional property.) A property whose type refuses its persisted
/// type's default (as `URL` refuses `""`) needs a default value or an optional type: a model
/// that declares one without either stops the program, with a message naming the type, as
/// soon as an object of the class is made (the realm makes one when it opens).
public protocol FailableCustomPersistable: _CustomPersistable {
    /// Makes the value from its stored form, or nil for a stored value that makes none.
    init?(persistedValue: PersistedType)
}

extension _CustomPersistable {
    public static var _type: PropertyType { PersistedType._type }
    public var _propertyValue: PropertyValue { persistableValue._propertyValue }
}

extension CustomPersistable {
    public static var _propertyTemplate: _PropertyTemplate { PersistedType._propertyTemplate }
    public static var _defaultValue: Self { Self(persistedValue: PersistedType._defaultValue) }
    public init?(_propertyValue value: PropertyValue) {
        guard let persisted = PersistedType(_propertyValue: value) else { return nil }
        self.init(persistedValue: persisted)
    }
}

extension FailableCustomPersistable {
    public static var _propertyTemplate: _PropertyTemplate {
        var template = PersistedType._propertyTemplate
        let type = _AcceptingType(type: Self.self)
        template.accepts = { type.type.init(_propertyValue: $0) != nil }
        template.customTypeName = String(describing: Self.self)
        return template
    }
    public static var _defaultValue: Self {
        guard let value = Self(persistedValue: PersistedType._defaultValue) else {
            preconditionFailure(
                "\(Self.self) refuses the default \(PersistedType.self) value: give the @Persisted property a "
                    + "default value or make it optional")
        }
        return value
    }
    public init?(_propertyValue value: PropertyValue) {
        guard let persisted = PersistedType(_propertyValue: value) else { return nil }
        self.init(persistedValue: persisted)
    }
}

extension URL: FailableCustomPersistable {
    /// A URL is stored as its absolute string.
    public typealias PersistedType = String
    /// The URL a stored string spells, or nil when it spells none.
    public init?(persistedValue: String) { self.init(string: persistedValue) }
    /// The URL's absolute string.
    public var persistableValue: String { absoluteString }
}

/// A loosely typed value (from `Object(value:)` or decoding) as a property's Swift type: the
/// value itself, or for a custom persistable type or a `PersistableEnum` (or an optional of
/// either) its persisted value (a raw value) converted.
func _persistedCast<Value>(_ value: Any, to type: Value.Type) -> Value? {
    if let typed = value as? Value { return typed }
    let custom: (any _PrimitivePersistable.Type)? =
        (Value.self as? any _CustomPersistable.Type)
        ?? (Value.self as? any _OptionalOfCustom.Type)?._customWrapped
        ?? (Value.self as? any PersistableEnum.Type)
        ?? (Value.self as? any _OptionalOfEnum.Type)?._enumWrapped
    guard let custom, case .value(let stored)? = try? Input(any: value, objectType: "") else { return nil }
    // Unwrapped first: a refused value must not pass as an optional property's nil.
    guard let made = custom.init(_propertyValue: stored) else { return nil }
    return made as? Value
}

/// An optional of a `PersistableEnum`, named by ``_persistedCast(_:to:)``.
protocol _OptionalOfEnum {
    static var _enumWrapped: any PersistableEnum.Type { get }
}

extension Optional: _OptionalOfEnum where Wrapped: PersistableEnum {
    static var _enumWrapped: any PersistableEnum.Type { Wrapped.self }
}

/// An optional of a custom persistable type, named by ``_persistedCast(_:to:)``.
protocol _OptionalOfCustom {
    static var _customWrapped: any _CustomPersistable.Type { get }
}

extension Optional: _OptionalOfCustom where Wrapped: _CustomPersistable {
    static var _customWrapped: any _CustomPersistable.Type { Wrapped.self }
}

/// A custom persistable type, captured by the test of stored values that its template carries.
struct _AcceptingType: @unchecked Sendable {
    // @unchecked: a metatype is immutable; only its static members are used.
    let type: any _CustomPersistable.Type
}
