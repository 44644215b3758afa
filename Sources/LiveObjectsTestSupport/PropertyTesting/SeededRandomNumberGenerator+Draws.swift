/// The draws of the notification and query property tests, on the shared seeded generator.
///
/// Unlike `int(in:)` and `chance(_:)` with a percentage, these go through the standard library's
/// `random(in:using:)`, whose algorithm Swift does not promise to keep: they stay as they are
/// because changing them would change the sequence of every recorded seed of those tests.
extension SeededRandomNumberGenerator {
    /// A uniformly drawn integer in `range`, by the standard library's `Int.random(in:using:)`.
    package mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// True with the given probability (in `0...1`).
    package mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    /// A uniformly drawn element, or `nil` for an empty array.
    package mutating func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[int(0...items.count - 1)] }
}
