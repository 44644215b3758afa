import Foundation

/// The environment variables that size and seed the tests and the benchmarks
/// (`LIVEOBJECTS_STRESS`, `LIVEOBJECTS_PROPERTY_SEED`, `PERSISTENCE_SEED`, ...), read in one
/// place.
///
/// A variable that is set to the empty string counts as not set.
package enum TestEnvironment {
    /// Whether the long sizes were asked for (`LIVEOBJECTS_TESTS=long`): the full concurrency
    /// stress, more crash kills, longer property runs. CI asks for them; `swift test` alone
    /// runs the quick sizes.
    package static var isLong: Bool {
        string("LIVEOBJECTS_TESTS")?.lowercased() == "long"
    }

    /// The value of a variable, or `nil` when it is not set (or empty).
    package static func string(
        _ name: String, in environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// A decimal integer (a count, a size), or `nil` when the variable is not set or not a
    /// number.
    package static func int(
        _ name: String, in environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Int? {
        string(name, in: environment).flatMap { Int($0) }
    }

    /// A seed: decimal, hexadecimal after `0x`, or `random` for a new random one; `nil` when the
    /// variable is not set or none of these.
    package static func seed(
        _ name: String, in environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> UInt64? {
        guard let text = string(name, in: environment)?.lowercased() else { return nil }
        if text == "random" { return UInt64.random(in: 0...UInt64.max) }
        if text.hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) }
        return UInt64(text)
    }
}
