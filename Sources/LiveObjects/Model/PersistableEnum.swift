/// A Swift enum that a `@Persisted` property can hold, kept as its raw value.
///
/// Declare the conformance on an enum whose raw values are strings or integers; the property
/// may be optional, or a `List` of the enum:
///
/// ```swift
/// enum Position: String, PersistableEnum {
///     case pitcher, catcher, shortstop
/// }
///
/// final class Player: Object {
///     @Persisted(primaryKey: true) var name = ""
///     @Persisted var position = Position.pitcher
///     @Persisted var backup: Position?
///     @Persisted var played: List<Position>
/// }
/// ```
///
/// The realm stores the raw value (`"pitcher"`): snapshots, journals, the shell, migrations and
/// sync see a `String` (or integer) property. Typed queries compare with cases
/// (`$0.position == .pitcher`), string queries with raw values (`"position == 'pitcher'"`). A
/// property without a default takes the first case. Opening a realm whose file holds a value
/// that is not the raw value of a case fails with `typeMismatch`, naming the object and the
/// property.
public protocol PersistableEnum: _PrimitivePersistable, _QueryValue, RawRepresentable, CaseIterable
where RawValue: _PrimitivePersistable {}

extension PersistableEnum {
    public static var _type: PropertyType { RawValue._type }
    public static var _propertyTemplate: _PropertyTemplate {
        var template = _PropertyTemplate(type: _type)
        template.allowedValues = allCases.map(\.rawValue._propertyValue)
        template.enumName = String(describing: Self.self)
        return template
    }
    public static var _defaultValue: Self {
        guard let first = allCases.first else {
            preconditionFailure("\(Self.self) has no case: a persisted enum needs at least one")
        }
        return first
    }
    public init?(_propertyValue value: PropertyValue) {
        guard let raw = RawValue(_propertyValue: value) else { return nil }
        self.init(rawValue: raw)
    }
    public var _propertyValue: PropertyValue { rawValue._propertyValue }
}
