import LiveObjectsStore

// The typed-query comparisons of a custom persistable property with a value of its type: by
// the persisted value, as the realm stores it.

extension Query where Value: _CustomPersistable {
    /// Whether the property holds `rhs` (so that a member like `.init(...)` needs no type name).
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
    /// Whether an optional custom persistable property holds `rhs` (nil for none).
    public static func == <C: _CustomPersistable>(lhs: Query, rhs: C?) -> Query<Bool> where Value == C? {
        Query<Bool>(lhs.core.equal(rhs._queryValue))
    }
    /// Whether an optional custom persistable property does not hold `rhs`.
    public static func != <C: _CustomPersistable>(lhs: Query, rhs: C?) -> Query<Bool> where Value == C? {
        lhs.comparison(.notEqual, .value(rhs._queryValue))
    }
}
