// The typed-query comparisons of a `PersistableEnum` property with a case.

extension Query where Value: PersistableEnum {
    /// Whether the property holds `rhs` (so that `.pitcher` needs no type name).
    @inlinable
    public static func == (lhs: Query, rhs: Value) -> Query<Bool> {
        Query<Bool>(lhs.core.equal(rhs._queryValue))
    }
    /// Whether the property does not hold `rhs`.
    public static func != (lhs: Query, rhs: Value) -> Query<Bool> {
        lhs.comparison(.notEqual, .value(rhs._queryValue))
    }
}

extension Query {
    /// Whether an optional enum property holds `rhs` (nil for none).
    public static func == <E: PersistableEnum>(lhs: Query, rhs: E?) -> Query<Bool> where Value == E? {
        Query<Bool>(lhs.core.equal(rhs._queryValue))
    }
    /// Whether an optional enum property does not hold `rhs`.
    public static func != <E: PersistableEnum>(lhs: Query, rhs: E?) -> Query<Bool> where Value == E? {
        lhs.comparison(.notEqual, .value(rhs._queryValue))
    }
}
