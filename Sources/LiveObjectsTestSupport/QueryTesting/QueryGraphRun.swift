import Foundation
import LiveObjects

// The randomized test of nested queries: random graphs of objects linked by lists, random
// nested `SUBQUERY` and `ANY`/`ALL`/`NONE` through several lists, the answers compared with a
// plain recursive evaluation, and the work the engine counts compared with a polynomial bound
// (the naive evaluation grows as the lists' length to the power of the nesting).

/// A node of a random graph: an age and a list of friends (repeats and itself allowed).
package final class QPNode: Object {
    @Persisted(primaryKey: true) package var id = 0
    @Persisted package var age = 0
    @Persisted package var friends: List<QPNode>
}

/// A random predicate over nodes. Subjects are the object tested (`nil`) or a `SUBQUERY`
/// variable (`$v0` is the outermost).
indirect enum GraphPredicate: Sendable {
    /// `subject.age op constant`.
    case age(subject: Int?, QueryOperator, Int)
    /// `Q subject.friends(.friends)….age op constant`, through `hops` lists.
    case path(RandomQuantifier, subject: Int?, hops: Int, QueryOperator, Int)
    /// `SUBQUERY(subject.friends, $vN, inner).@count op constant`, N the nesting depth.
    case subquery(subject: Int?, variable: Int, GraphPredicate, QueryOperator, Int)
    case and(GraphPredicate, GraphPredicate)
    case or(GraphPredicate, GraphPredicate)
    case not(GraphPredicate)

    /// The predicate in the string language.
    var text: String {
        func subject(_ s: Int?) -> String { s.map { "$v\($0)." } ?? "" }
        switch self {
        case .age(let s, let op, let c): return "\(subject(s))age \(op.rawValue) \(c)"
        case .path(let q, let s, let hops, let op, let c):
            let path = Array(repeating: "friends", count: hops).joined(separator: ".")
            return "\(q == .direct ? "" : q.rawValue + " ")\(subject(s))\(path).age \(op.rawValue) \(c)"
        case .subquery(let s, let v, let inner, let op, let c):
            return "SUBQUERY(\(subject(s))friends, $v\(v), \(inner.text)).@count \(op.rawValue) \(c)"
        case .and(let a, let b): return "(\(a.text) AND \(b.text))"
        case .or(let a, let b): return "(\(a.text) OR \(b.text))"
        case .not(let p): return "NOT (\(p.text))"
        }
    }

    /// The number of comparisons, subqueries and groups.
    var size: Int {
        switch self {
        case .age, .path: 1
        case .subquery(_, _, let inner, _, _): 1 + inner.size
        case .and(let a, let b), .or(let a, let b): 1 + a.size + b.size
        case .not(let p): 1 + p.size
        }
    }

    /// The most lists one comparison goes through.
    var maximumHops: Int {
        switch self {
        case .age: 0
        case .path(_, _, let hops, _, _): hops
        case .subquery(_, _, let inner, _, _): max(1, inner.maximumHops)
        case .and(let a, let b), .or(let a, let b): max(a.maximumHops, b.maximumHops)
        case .not(let p): p.maximumHops
        }
    }

    /// Whether every `SUBQUERY` reads only its own variable (the shapes whose work the engine
    /// bounds by sharing; others are bounded by the budget only).
    var isLocal: Bool { isLocal(own: nil) }

    private func isLocal(own: Int?) -> Bool {
        switch self {
        case .age(let s, _, _), .path(_, let s, _, _, _): return s == own
        case .subquery(let s, let v, let inner, _, _): return s == own && inner.isLocal(own: v)
        case .and(let a, let b), .or(let a, let b): return a.isLocal(own: own) && b.isLocal(own: own)
        case .not(let p): return p.isLocal(own: own)
        }
    }

    /// Whether a node matches, by the plain recursive reading of the predicate: every way
    /// through the lists followed one by one. `variables[k]` is the node of `$vk`.
    func matches(_ node: Int, _ variables: [Int], _ graph: [(age: Int, friends: [Int])]) -> Bool {
        func start(_ s: Int?) -> Int { s.map { variables[$0] } ?? node }
        switch self {
        case .age(let s, let op, let c):
            return QueryReference.test(.int(Int64(graph[start(s)].age)), op, .int(Int64(c)), [])
        case .path(let q, let s, let hops, let op, let c):
            var reached = [start(s)]
            for _ in 0..<hops { reached = reached.flatMap { graph[$0].friends } }
            let passes = { (n: Int) in QueryReference.test(.int(Int64(graph[n].age)), op, .int(Int64(c)), []) }
            switch q {
            case .all: return reached.allSatisfy(passes)
            case .none: return !reached.contains(where: passes)
            case .any, .direct: return reached.contains(where: passes)
            }
        case .subquery(let s, let v, let inner, let op, let c):
            var inside = variables
            if inside.count <= v { inside += Array(repeating: 0, count: v + 1 - inside.count) }
            var count = 0
            for friend in graph[start(s)].friends {
                inside[v] = friend
                if inner.matches(node, inside, graph) { count += 1 }
            }
            return QueryReference.test(.int(Int64(count)), op, .int(Int64(c)), [])
        case .and(let a, let b): return a.matches(node, variables, graph) && b.matches(node, variables, graph)
        case .or(let a, let b): return a.matches(node, variables, graph) || b.matches(node, variables, graph)
        case .not(let p): return !p.matches(node, variables, graph)
        }
    }

    /// A random predicate: `depth` SUBQUERY levels at most; `local` keeps every SUBQUERY on its
    /// own variable.
    static func random(
        _ rng: inout SeededRandomNumberGenerator, depth: Int, own: Int?, variables: Int, local: Bool
    ) -> GraphPredicate {
        let ops: [QueryOperator] = [.less, .greater, .equal, .notEqual, .greaterOrEqual]
        func subject() -> Int? {
            // A subquery's predicate reads its own variable, or (not local) an outer one.
            if local || variables == 0 || rng.chance(40) { return own }
            let outer = rng.below(variables + 1)
            return outer == variables ? nil : outer
        }
        let choice = rng.below(depth > 0 ? 10 : 6)
        switch choice {
        case 0, 1: return .age(subject: subject(), rng.element(of: ops), rng.below(10))
        case 2, 3, 4:
            let quantifier = rng.element(of: [RandomQuantifier.any, .all, .none, .direct])
            return .path(quantifier, subject: subject(), hops: 1 + rng.below(4), rng.element(of: ops), rng.below(10))
        case 5:
            let a = random(&rng, depth: depth, own: own, variables: variables, local: local)
            let b = random(&rng, depth: depth, own: own, variables: variables, local: local)
            return rng.chance(50) ? .and(a, b) : rng.chance(50) ? .or(a, b) : .not(a)
        default:
            let inner = random(&rng, depth: depth - 1, own: variables, variables: variables + 1, local: local)
            return .subquery(
                subject: subject(), variable: variables, inner, rng.element(of: [.greater, .equal, .less]),
                rng.below(3))
        }
    }
}

/// What a run of the nested-query test found.
package struct QueryGraphReport: Sendable {
    /// Every problem, with the seed, the graph's size and the query: enough to replay it.
    package var problems: [String] = []
    /// How many queries were checked, and how many of them were local (bounded by sharing).
    package var queries = 0
    package var localQueries = 0
    /// How many queries matched some but not all nodes.
    package var selective = 0
    /// The largest ratio, over the local queries, of the work counted to the bound checked.
    package var largestWorkRatio = 0.0
}

/// The randomized nested-query test: for each of `graphs` random graphs, `queriesPerGraph`
/// random predicates nested up to `depth` SUBQUERY levels, each checked against the reference,
/// with its work bounded (local predicates) and its budget exact (one unit less stops it).
package enum QueryGraphRun {
    /// Runs the test.
    package static func run(
        seed: UInt64, graphs: Int = 6, queriesPerGraph: Int = 20, depth: Int = 4
    ) async throws -> QueryGraphReport {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var report = QueryGraphReport()
        for g in 0..<graphs {
            let count = 10 + rng.below(40)
            let degree = 1 + rng.below(8)
            var graph: [(age: Int, friends: [Int])] = []
            for _ in 0..<count {
                graph.append((rng.below(10), (0..<rng.below(degree + 1)).map { _ in rng.below(count) }))
            }
            let edges = graph.reduce(0) { $0 + $1.friends.count }
            let realm = try await Realm.open(
                Realm.Configuration(identifier: "graph-\(seed)-\(g)", objectTypes: [QPNode.self]))
            let frozenGraph = graph
            try await realm.write { r in
                let nodes = try frozenGraph.indices.map {
                    try r.create(QPNode.self, value: ["id": $0, "age": frozenGraph[$0].age])
                }
                for (i, node) in frozenGraph.enumerated() {
                    for f in node.friends { nodes[i].friends.append(nodes[f]) }
                }
            }
            for _ in 0..<queriesPerGraph {
                let local = rng.chance(50)
                let predicate = GraphPredicate.random(
                    &rng, depth: 1 + rng.below(depth), own: nil, variables: 0, local: local)
                let text = predicate.text
                let context = "seed \(seed), graph \(g) (\(count) nodes, \(edges) links), query: \(text)"
                report.queries += 1
                let expected = graph.indices.filter { predicate.matches($0, [], graph) }
                if !expected.isEmpty && expected.count < count { report.selective += 1 }
                let (actual, work, stopped, again) = try await realm.read { r in
                    let table = try r.store.table(named: "QPNode")
                    let work = try r.store.evaluate(text, on: table).work
                    let actual = try r.objects(QPNode.self).filter(text).map(\.id).sorted()
                    // One unit less than it needs stops it; exactly what it needs does not.
                    var stopped: LiveObjectsError?
                    do throws(LiveObjectsError) {
                        _ = try r.store.evaluate(text, on: table, budget: work - 1)
                    } catch {
                        stopped = error
                    }
                    let again = try r.store.evaluate(text, on: table, budget: work).rows.count
                    return (actual, work, stopped, again)
                }
                if actual != expected {
                    report.problems.append("\(context): expected ids \(expected), got \(actual)")
                }
                if work > 0 && stopped?.code != .limitExceeded {
                    report.problems.append(
                        "\(context): a budget of \(work - 1) did not stop it (\(String(describing: stopped)))")
                }
                if again != expected.count {
                    report.problems.append(
                        "\(context): a budget of \(work), its work, stopped it or changed the answer")
                }
                guard predicate.isLocal else { continue }
                report.localQueries += 1
                // Each comparison and SUBQUERY follows each object and link once per list on
                // its way, whatever the nesting.
                let bound = 4 * predicate.size * max(1, predicate.maximumHops) * (count + edges + 1)
                report.largestWorkRatio = max(report.largestWorkRatio, Double(work) / Double(bound))
                if work > bound {
                    report.problems.append("\(context): \(work) units of work, more than the bound \(bound)")
                }
            }
            try await realm.close()
            if report.problems.count >= 5 { break }
        }
        return report
    }
}
