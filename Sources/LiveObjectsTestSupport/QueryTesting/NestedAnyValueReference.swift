import Foundation
import LiveObjects

/// Random `AnyValue`s with nested lists and dictionaries, and random queries that read into
/// them, with the answer of each query written in plain Swift from docs/QUERIES.md: the
/// reference the nested-value tests compare the realm with.
package enum NestedAnyValueReference {
    /// The dictionary keys the generator draws (so that queries by key find some).
    package static let keys = ["a", "b", "c"]

    /// A random value: a scalar (null, bool, small int, double, string), or a list or
    /// dictionary of up to three values while `depth` allows.
    package static func value(_ rng: inout SeededRandomNumberGenerator, depth: Int = 3) -> AnyValue {
        switch rng.int(0...(depth > 0 ? 8 : 5)) {
        case 0: return .null
        case 1: return .bool(rng.chance(0.5))
        case 2, 3: return .int(rng.int(0...3))
        case 4: return .double(Double(rng.int(0...6)) / 2)
        case 5: return .string(rng.element(of: ["a", "b", "x"]))
        case 6, 7:
            return .list((0..<rng.int(0...3)).map { _ in value(&rng, depth: depth - 1) })
        default:
            var values: [String: AnyValue] = [:]
            for key in keys where rng.chance(0.5) { values[key] = value(&rng, depth: depth - 1) }
            return .dictionary(values)
        }
    }

    /// A random scalar to compare with.
    package static func constant(_ rng: inout SeededRandomNumberGenerator) -> AnyValue {
        switch rng.int(0...3) {
        case 0: .int(rng.int(0...3))
        case 1: .double(Double(rng.int(0...6)) / 2)
        case 2: .string(rng.element(of: ["a", "b", "x"]))
        default: rng.chance(0.5) ? .bool(true) : .null
        }
    }

    /// A step into a value, as a query writes it.
    package enum Access: CustomStringConvertible, Sendable {
        case index(Int)
        case key(String)
        case every

        package var description: String {
            switch self {
            case .index(let i): "[\(i)]"
            case .key(let k): "['\(k)']"
            case .every: "[*]"
            }
        }
    }

    /// A query over a property `value`: its text and which values it matches.
    package struct Query: Sendable {
        package var text: String
        package var matches: @Sendable (AnyValue) -> Bool
    }

    /// The values a path of steps reads: a missing position or key reads as null, `[*]` of a
    /// value that is no list or dictionary as nothing.
    package static func read(_ value: AnyValue, _ path: [Access]) -> [AnyValue] {
        var current = [value]
        for access in path {
            switch access {
            case .index(let i): current = current.map { $0[i] ?? .null }
            case .key(let k): current = current.map { $0[k] ?? .null }
            case .every:
                current = current.flatMap { v -> [AnyValue] in
                    switch v {
                    case .list(let items): items
                    case .dictionary(let values): values.sorted { $0.key < $1.key }.map(\.value)
                    default: []
                    }
                }
            }
        }
        return current
    }

    /// Equal in a query: numbers by value across kinds, a list or dictionary equal to no scalar.
    package static func equal(_ a: AnyValue, _ b: AnyValue) -> Bool {
        func number(_ v: AnyValue) -> Double? {
            switch v {
            case .int(let i): Double(i)
            case .double(let d): d
            default: nil
            }
        }
        if let x = number(a), let y = number(b) { return x == y }
        return a == b
    }

    /// The number of elements of a list or dictionary; nil for another value.
    package static func count(_ value: AnyValue) -> Int? {
        switch value {
        case .list(let items): items.count
        case .dictionary(let values): values.count
        default: nil
        }
    }

    /// A random path of one to three steps.
    package static func path(_ rng: inout SeededRandomNumberGenerator) -> [Access] {
        (0..<rng.int(1...3)).map { _ in
            switch rng.int(0...2) {
            case 0: .index(rng.int(0...2))
            case 1: .key(rng.element(of: keys))
            default: .every
            }
        }
    }

    /// A random query that reads into a value.
    package static func query(_ rng: inout SeededRandomNumberGenerator) -> Query {
        let path = path(&rng)
        let text = "value" + path.map(\.description).joined()
        let c = constant(&rng)
        let literal: String =
            switch c {
            case .string(let s): "'\(s)'"
            case .null: "nil"
            case .bool(let b): b ? "TRUE" : "FALSE"
            default: "\(c.propertyValue)"
            }
        // ANY and NONE take a path that yields several values (through [*]).
        let isToMany = path.contains { if case .every = $0 { true } else { false } }
        let any = isToMany ? "ANY " : ""
        switch rng.int(0...4) {
        case 0:
            return Query(text: "\(any)\(text) == \(literal)") { v in read(v, path).contains { equal($0, c) } }
        case 1:
            return Query(text: isToMany ? "NONE \(text) == \(literal)" : "NOT \(text) == \(literal)") { v in
                !read(v, path).contains { equal($0, c) }
            }
        case 2:
            let n = rng.int(0...3)
            return Query(text: "\(text).@count == \(n)") { v in
                // With [*] on the way, the count of the values read; else the count of the one.
                if isToMany { return read(v, path).count == n }
                return read(v, path).first.flatMap(count) == n
            }
        case 3:
            let kind = rng.element(of: ["list", "dictionary", "int", "null", "string", "numeric"])
            return Query(text: "\(any)\(text).@type == '\(kind)'") { v in
                read(v, path).contains {
                    kind == "numeric" ? ["int", "double"].contains($0.kindName) : $0.kindName == kind
                }
            }
        default:
            let kind = rng.element(of: ["list", "dictionary", "numeric"])
            return Query(text: "value.@type == '\(kind)'") { v in
                kind == "numeric" ? ["int", "double"].contains(v.kindName) : v.kindName == kind
            }
        }
    }
}
