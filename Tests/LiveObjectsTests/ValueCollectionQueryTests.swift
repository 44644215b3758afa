import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Random queries over sets, lists and maps of values (`ANY labels ==[c] 'red'`, `'x' IN
/// labels`, `scores.@sum > 3`, `ANY settings.@keys == 'font'`, `settings['theme'] == 'dark'`, `ANY prices == 0.10`,
/// quantifiers, `NOT`, `AND`, `OR`), as query text and as typed queries, against a plain Swift
/// evaluation of the same data, after each round of random writes.
@Suite struct ValueCollectionQueryTests {
    final class Bag: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var labels: MutableSet<String>
        @Persisted var scores: List<Int>
        @Persisted var settings: Map<String, String>
        @Persisted var prices: MutableSet<Decimal>
    }

    /// A bag's values, as the reference reads them.
    struct Plain: Sendable {
        var id: Int
        var labels: [String]
        var scores: [Int]
        var settings: [String: String]
        var prices: [Decimal] = []
    }

    static let words = ["red", "Red", "blue", "café", "cafe", "green", "", "bluer"]
    static let keys = ["theme", "font", "lang"]
    /// Decimals written differently that are equal (`0.1` and `0.10`), and others.
    static let decimals = ["0.1", "0.10", "0.2", "1", "1.00", "-3.5", "0.30000000000000000001"]

    enum Quantifier: String, CaseIterable, Sendable { case any = "ANY", all = "ALL", none = "NONE" }
    enum StringOp: String, CaseIterable, Sendable {
        case equal = "==", notEqual = "!=", begins = "BEGINSWITH", contains = "CONTAINS"
    }
    enum NumberOp: String, CaseIterable, Sendable { case equal = "==", less = "<", greater = ">=" }
    enum Options: String, CaseIterable, Sendable { case exact = "", caseless = "[c]", folded = "[cd]" }
    enum Collection: String, CaseIterable, Sendable {
        case labels, values = "settings.@values", keys = "settings.@keys"
    }

    indirect enum Predicate: CustomStringConvertible, Sendable {
        case strings(Quantifier, Collection, StringOp, Options, String)
        case member(String)
        case count(Collection, NumberOp, Int)
        case scores(Quantifier, NumberOp, Int)
        case scoreSum(NumberOp, Int)
        case setting(String, String)
        case prices(Quantifier, NumberOp, String)
        case not(Predicate)
        case and(Predicate, Predicate)
        case or(Predicate, Predicate)

        var description: String {
            switch self {
            case .strings(let q, let c, let op, let o, let w):
                "\(q.rawValue) \(c.rawValue) \(op.rawValue)\(o.rawValue) '\(w)'"
            case .member(let w): "'\(w)' IN labels"
            case .count(let c, let op, let n): "\(c == .labels ? "labels" : "settings").@count \(op.rawValue) \(n)"
            case .scores(let q, let op, let n): "\(q.rawValue) scores \(op.rawValue) \(n)"
            case .scoreSum(let op, let n): "scores.@sum \(op.rawValue) \(n)"
            case .setting(let k, let w): "settings['\(k)'] == '\(w)'"
            case .prices(let q, let op, let d): "\(q.rawValue) prices \(op.rawValue) \(d)"
            case .not(let p): "NOT (\(p))"
            case .and(let a, let b): "(\(a)) AND (\(b))"
            case .or(let a, let b): "(\(a)) OR (\(b))"
            }
        }
    }

    static func fold(_ text: String, _ options: Options) -> String {
        switch options {
        case .exact: text
        case .caseless: text.lowercased()
        case .folded: text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        }
    }

    static func holds(_ op: StringOp, _ options: Options, _ value: String, _ word: String) -> Bool {
        let (v, w) = (fold(value, options), fold(word, options))
        switch op {
        case .equal: return v == w
        case .notEqual: return v != w
        case .begins: return v.hasPrefix(w)
        case .contains: return v.contains(w)
        }
    }

    static func holds<N: Comparable>(_ op: NumberOp, _ value: N, _ n: N) -> Bool {
        switch op {
        case .equal: value == n
        case .less: value < n
        case .greater: value >= n
        }
    }

    static func elements(_ collection: Collection, _ bag: Plain) -> [String] {
        switch collection {
        case .labels: bag.labels
        case .values: Array(bag.settings.values)
        case .keys: Array(bag.settings.keys)
        }
    }

    static func quantify<T>(_ q: Quantifier, _ items: [T], _ test: (T) -> Bool) -> Bool {
        switch q {
        case .any: items.contains(where: test)
        case .all: items.allSatisfy(test)
        case .none: !items.contains(where: test)
        }
    }

    /// The reference: what the predicate says of a bag.
    static func evaluate(_ p: Predicate, _ bag: Plain) -> Bool {
        switch p {
        case .strings(let q, let c, let op, let o, let w): quantify(q, elements(c, bag)) { holds(op, o, $0, w) }
        case .member(let w): bag.labels.contains(w)
        case .count(let c, let op, let n): holds(op, elements(c, bag).count, n)
        case .scores(let q, let op, let n): quantify(q, bag.scores) { holds(op, $0, n) }
        case .scoreSum(let op, let n): holds(op, bag.scores.reduce(0, +), n)
        case .setting(let k, let w): bag.settings[k] == w
        case .prices(let q, let op, let d): quantify(q, bag.prices) { holds(op, $0, Decimal(string: d)!) }
        case .not(let inner): !evaluate(inner, bag)
        case .and(let a, let b): evaluate(a, bag) && evaluate(b, bag)
        case .or(let a, let b): evaluate(a, bag) || evaluate(b, bag)
        }
    }

    /// The typed query of a predicate, for the forms a typed query spells (nil otherwise).
    static func typed(_ p: Predicate, _ q: Query<Bag>) -> Query<Bool>? {
        switch p {
        case .strings(.any, .labels, .equal, .exact, let w): return q.labels.contains(w)
        case .strings(.any, .keys, .equal, .exact, let w): return q.settings.keys.contains(w)
        case .strings(.any, .values, .equal, .exact, let w): return q.settings.contains(w)
        case .member(let w): return q.labels.containsAny(in: [w, "no such word"])
        case .count(.labels, .equal, let n): return q.labels.count == n
        case .count(.keys, .greater, let n): return q.settings.count >= n
        case .scores(.any, .equal, let n): return q.scores.contains(n)
        case .setting(let k, let w): return q.settings[k] == w
        case .prices(.any, .equal, let d): return q.prices.contains(Decimal(string: d)!)
        case .not(let inner): return typed(inner, q).map { !$0 }
        case .and(let a, let b):
            guard let a = typed(a, q), let b = typed(b, q) else { return nil }
            return a && b
        case .or(let a, let b):
            guard let a = typed(a, q), let b = typed(b, q) else { return nil }
            return a || b
        default: return nil
        }
    }

    static func randomPredicate(_ rng: inout SeededRandomNumberGenerator, depth: Int = 0) -> Predicate {
        let word = { (rng: inout SeededRandomNumberGenerator) in
            words.filter { !$0.isEmpty }.randomElement(using: &rng)!
        }
        switch Int.random(in: 0..<(depth < 2 ? 9 : 6), using: &rng) {
        case 0, 1:
            return .strings(
                Quantifier.allCases.randomElement(using: &rng)!, Collection.allCases.randomElement(using: &rng)!,
                StringOp.allCases.randomElement(using: &rng)!, Options.allCases.randomElement(using: &rng)!,
                Bool.random(using: &rng) ? word(&rng) : String(word(&rng).prefix(2)))
        case 2: return .member(word(&rng))
        case 3:
            return .count(
                Collection.allCases.randomElement(using: &rng)!, NumberOp.allCases.randomElement(using: &rng)!,
                Int.random(in: 0...3, using: &rng))
        case 4:
            return Bool.random(using: &rng)
                ? .scores(
                    Quantifier.allCases.randomElement(using: &rng)!, NumberOp.allCases.randomElement(using: &rng)!,
                    Int.random(in: -2...4, using: &rng))
                : .scoreSum(NumberOp.allCases.randomElement(using: &rng)!, Int.random(in: -3...8, using: &rng))
        case 5:
            return Bool.random(using: &rng)
                ? .setting(keys.randomElement(using: &rng)!, word(&rng))
                : .prices(
                    Quantifier.allCases.randomElement(using: &rng)!, NumberOp.allCases.randomElement(using: &rng)!,
                    decimals.randomElement(using: &rng)!)
        case 6: return .not(randomPredicate(&rng, depth: depth + 1))
        case 7: return .and(randomPredicate(&rng, depth: depth + 1), randomPredicate(&rng, depth: depth + 1))
        default: return .or(randomPredicate(&rng, depth: depth + 1), randomPredicate(&rng, depth: depth + 1))
        }
    }

    static func randomBag(_ id: Int, _ rng: inout SeededRandomNumberGenerator) -> Plain {
        var labels: [String] = []
        for _ in 0..<Int.random(in: 0...4, using: &rng) {
            let word = words.randomElement(using: &rng)!
            if !labels.contains(word) { labels.append(word) }
        }
        var settings: [String: String] = [:]
        for key in keys where Bool.random(using: &rng) { settings[key] = words.randomElement(using: &rng)! }
        let scores = (0..<Int.random(in: 0...4, using: &rng)).map { _ in Int.random(in: -2...4, using: &rng) }
        var prices: [Decimal] = []
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            let price = Decimal(string: decimals.randomElement(using: &rng)!)!
            if !prices.contains(price) { prices.append(price) }
        }
        return Plain(id: id, labels: labels, scores: scores, settings: settings, prices: prices)
    }

    static func write(_ plain: Plain, to bag: Bag) {
        bag.labels.removeAll()
        bag.labels.insert(objectsIn: plain.labels)
        bag.scores.removeAll()
        bag.scores.append(objectsIn: plain.scores)
        bag.settings.removeAll()
        for (key, value) in plain.settings { bag.settings[key] = value }
        bag.prices.removeAll()
        bag.prices.insert(objectsIn: plain.prices)
    }

    @Test func randomQueriesAgreeWithTheReferenceThroughWrites() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_VALUE_QUERY_SEED") ?? 20_261_129
        var rng = SeededRandomNumberGenerator(seed: seed)
        let rounds = TestEnvironment.isLong ? 40 : 8
        let realm = try await openFreshRealm(objectTypes: [Bag.self])
        var bags = (0..<30).map { Self.randomBag($0, &rng) }
        var log: [String] = []
        let first = bags
        try await realm.write { realm in
            for plain in first { Self.write(plain, to: try realm.create(Bag.self, value: ["id": plain.id])) }
        }
        for round in 0..<rounds {
            let predicates = (0..<25).map { _ in Self.randomPredicate(&rng) }
            let snapshot = bags
            let found = try await realm.read { realm in
                try predicates.map { predicate -> ([Int], [Int]?) in
                    let all = realm.objects(Bag.self).sorted(by: \.id)
                    let text = try all.filter(predicate.description).map(\.id)
                    var typedFailed = false
                    let typed = all.where { q in
                        guard let condition = Self.typed(predicate, q) else {
                            typedFailed = true
                            return q.id >= 0
                        }
                        return condition
                    }.map(\.id)
                    return (text, typedFailed ? nil : typed)
                }
            }
            for (predicate, (text, typed)) in zip(predicates, found) {
                let expected = snapshot.filter { Self.evaluate(predicate, $0) }.map(\.id)
                #expect(
                    text == expected && (typed == nil || typed == expected),
                    """
                    seed \(seed) (LIVEOBJECTS_VALUE_QUERY_SEED), round \(round): \(predicate)
                    text \(text), typed \(typed.map { "\($0)" } ?? "-"), expected \(expected)
                    writes: \(log.joined(separator: "; "))
                    """)
                if text != expected || (typed != nil && typed != expected) { return }
            }
            // Rewrite a few bags, one edit at a time on the live collections.
            var changed: [Plain] = []
            for _ in 0..<5 {
                let id = Int.random(in: 0..<bags.count, using: &rng)
                bags[id] = Self.randomBag(id, &rng)
                changed.append(bags[id])
                log.append("bag \(id) = \(bags[id])")
            }
            let batch = changed
            try await realm.write { realm in
                for plain in batch { Self.write(plain, to: realm.object(ofType: Bag.self, forPrimaryKey: plain.id)!) }
            }
        }
    }
}
