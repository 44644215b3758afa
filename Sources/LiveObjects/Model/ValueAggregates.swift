import Foundation
import LiveObjectsStore

// Realm's reads of collections of values: `scores.sum()`, `scores.average()`, `prices.max()` on
// a `List` or `MutableSet` of numbers and over a `Map`'s values, `tags.sorted(ascending:)`.
// `min()` and `max()` of a list or set are the standard library's (their elements are
// `Comparable`).

extension List where Element: Comparable {
    /// The elements sorted, smallest first unless `ascending` is false (Realm's
    /// `sorted(ascending:)`; `sorted()` is the standard library's).
    ///
    /// - Complexity: O(n log n).
    public func sorted(ascending: Bool) -> [Element] { ascending ? sorted(by: <) : sorted(by: >) }
}

extension MutableSet where Element: Comparable {
    /// The members sorted, smallest first unless `ascending` is false (Realm's
    /// `sorted(ascending:)`; `sorted()` is the standard library's).
    ///
    /// - Complexity: O(n log n).
    public func sorted(ascending: Bool) -> [Element] { ascending ? sorted(by: <) : sorted(by: >) }
}

extension List where Element: AdditiveArithmetic {
    /// The sum of the elements (zero for an empty list).
    ///
    /// - Complexity: O(n).
    public func sum() -> Element { ValueAggregate.sum(self) }
}

extension List where Element: BinaryInteger {
    /// The average of the elements, or nil for an empty list.
    ///
    /// - Complexity: O(n).
    public func average() -> Double? { ValueAggregate.average(self) }
}

extension List where Element: BinaryFloatingPoint {
    /// The average of the elements, or nil for an empty list.
    ///
    /// - Complexity: O(n).
    public func average() -> Double? { ValueAggregate.average(self) }
}

extension List where Element == Decimal {
    /// The average of the elements, computed exactly as a decimal, or nil for an empty list.
    ///
    /// - Complexity: O(n).
    public func average() -> Decimal? { ValueAggregate.average(self) }
}

extension MutableSet where Element: AdditiveArithmetic {
    /// The sum of the members (zero for an empty set).
    ///
    /// - Complexity: O(n).
    public func sum() -> Element { ValueAggregate.sum(self) }
}

extension MutableSet where Element: BinaryInteger {
    /// The average of the members, or nil for an empty set.
    ///
    /// - Complexity: O(n).
    public func average() -> Double? { ValueAggregate.average(self) }
}

extension MutableSet where Element: BinaryFloatingPoint {
    /// The average of the members, or nil for an empty set.
    ///
    /// - Complexity: O(n).
    public func average() -> Double? { ValueAggregate.average(self) }
}

extension MutableSet where Element == Decimal {
    /// The average of the members, computed exactly as a decimal, or nil for an empty set.
    ///
    /// - Complexity: O(n).
    public func average() -> Decimal? { ValueAggregate.average(self) }
}

extension Map {
    /// The entries as `(key, value)` pairs in key order, as Realm's `asKeyValueSequence()`
    /// (a map iterates as these pairs itself).
    ///
    /// - Complexity: O(n).
    public func asKeyValueSequence() -> [(key: Key, value: Value)] { Array(self) }
}

extension Map where Value: Comparable {
    /// The smallest value, or nil for an empty map.
    ///
    /// - Complexity: O(n).
    public func min() -> Value? { values.min() }

    /// The largest value, or nil for an empty map.
    ///
    /// - Complexity: O(n).
    public func max() -> Value? { values.max() }
}

extension Map where Value: AdditiveArithmetic {
    /// The sum of the values (zero for an empty map).
    ///
    /// - Complexity: O(n).
    public func sum() -> Value { ValueAggregate.sum(values) }
}

extension Map where Value: BinaryInteger {
    /// The average of the values, or nil for an empty map.
    ///
    /// - Complexity: O(n).
    public func average() -> Double? { ValueAggregate.average(values) }
}

extension Map where Value: BinaryFloatingPoint {
    /// The average of the values, or nil for an empty map.
    ///
    /// - Complexity: O(n).
    public func average() -> Double? { ValueAggregate.average(values) }
}

extension Map where Value == Decimal {
    /// The average of the values, computed exactly as a decimal, or nil for an empty map.
    ///
    /// - Complexity: O(n).
    public func average() -> Decimal? { ValueAggregate.average(values) }
}

/// The sums and averages of the collections of values, in one place.
enum ValueAggregate {
    static func sum<S: Sequence>(_ values: S) -> S.Element where S.Element: AdditiveArithmetic {
        values.reduce(.zero, +)
    }

    /// An integer average, summed as doubles (a sum of `Int`s may not fit an `Int`).
    static func average<S: Sequence>(_ values: S) -> Double? where S.Element: BinaryInteger {
        mean(values) { Double($0) }
    }

    static func average<S: Sequence>(_ values: S) -> Double? where S.Element: BinaryFloatingPoint {
        mean(values) { Double($0) }
    }

    /// The average of the values as doubles, or nil for none.
    private static func mean<S: Sequence>(_ values: S, _ double: (S.Element) -> Double) -> Double? {
        var count = 0
        let total = values.reduce(0.0) { total, value in
            count += 1
            return total + double(value)
        }
        return count == 0 ? nil : total / Double(count)
    }

    static func average<S: Sequence<Decimal>>(_ values: S) -> Decimal? {
        var count = 0
        let total = values.reduce(Decimal.zero) { total, value in
            count += 1
            return total + value
        }
        return count == 0 ? nil : total / Decimal(count)
    }
}
