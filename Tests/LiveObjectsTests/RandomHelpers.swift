import LiveObjectsTestSupport

/// The draws of the notification and query property tests, on the shared seeded generator.
extension SeededRandomNumberGenerator {
    /// A uniformly drawn integer in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    /// True with the given probability (in `0...1`).
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    /// A uniformly drawn element, or `nil` for an empty array.
    mutating func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[int(0...items.count - 1)] }
}
