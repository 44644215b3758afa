import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Nested `SUBQUERY` and `ANY` through lists: answers equal to the plain evaluation's, work
/// that grows with the data and the predicate's size (never as a power of the lists' length),
/// and a budget past which a query stops with `limitExceeded`.
@Suite struct QueryWorkTests {
    /// Random graphs and random nested predicates (`QueryGraphRun`). `LIVEOBJECTS_QUERY_SEED`
    /// (a number, or `random`) changes the seed.
    @Test func randomNestedQueriesMatchTheReferenceWithBoundedWork() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_QUERY_SEED") ?? QueryPropertyConfiguration.defaultSeed
        let graphs = TestEnvironment.isLong ? 30 : 6
        let report = try await QueryGraphRun.run(seed: seed, graphs: graphs)
        for problem in report.problems { Issue.record(Comment(rawValue: problem)) }
        print(
            "QueryWorkTests: seed \(seed) (LIVEOBJECTS_QUERY_SEED), \(report.queries) queries, \(report.localQueries) "
                + "with a work bound, \(report.selective) selective, largest work / bound \(report.largestWorkRatio)")
        #expect(report.queries == graphs * 20)
        #expect(report.localQueries > report.queries / 3 && report.localQueries < report.queries)
        #expect(report.selective > report.queries / 4)
    }

    /// A graph of `count` nodes with `degree` friends each (seeded).
    static func graph(_ realm: Realm, count: Int, degree: Int, seed: UInt64 = 7) async throws {
        try await realm.write { r in
            var rng = SeededRandomNumberGenerator(seed: seed)
            let nodes = try (0..<count).map { try r.create(QPNode.self, value: ["id": $0, "age": rng.below(15)]) }
            for node in nodes {
                for _ in 0..<degree { node.friends.append(nodes[rng.below(count)]) }
            }
        }
    }

    static func nested(_ levels: Int) -> String {
        var inner = "$v\(levels - 1).age > 14"
        for level in stride(from: levels - 1, through: 0, by: -1) {
            let list = level == 0 ? "friends" : "$v\(level - 1).friends"
            inner = "SUBQUERY(\(list), $v\(level), \(inner)).@count > 0"
        }
        return inner
    }

    @Test func theWorkOfNestedQueriesGrowsWithTheirDepthNotAsAPower() async throws {
        let realm = try await Realm.open(.init(identifier: "work-depth", objectTypes: [QPNode.self]))
        try await Self.graph(realm, count: 300, degree: 20)
        let chains = (1...10).map {
            "ANY " + Array(repeating: "friends", count: $0).joined(separator: ".") + ".age > 14"
        }
        let queries = (1...6).map(Self.nested) + chains
        let work = try await realm.read { r in
            try queries.map { try r.store.evaluate($0, on: r.store.table(named: "QPNode")).work }
        }
        // Nodes and links: 300 + 6,000. Naively, 3 levels would visit 300 × 20³ = 2.4 million.
        let graphSize = 300 + 300 * 20
        for (query, units) in zip(queries, work) {
            let levels = query.components(separatedBy: "friends").count - 1
            #expect(units <= 3 * levels * graphSize, "\(query): \(units) units")
        }
        try await realm.close()
    }

    @Test func aQueryPastTheBudgetThrowsLimitExceededAndTheRealmGoesOn() async throws {
        var configuration = Realm.Configuration(identifier: "work-budget", objectTypes: [QPNode.self])
        configuration.maximumQueryWork = 10_000
        let realm = try await Realm.open(configuration)
        try await Self.graph(realm, count: 300, degree: 20)
        // Each object's SUBQUERY reads the object tested: nothing is shared, 300 × 20 × 20.
        let query = "SUBQUERY(friends, $a, SUBQUERY($a.friends, $b, $b.age > age).@count > 0).@count > 0"
        let error = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in try r.objects(QPNode.self).filter(query).count }
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("maximumQueryWork") == true, "\(String(describing: error))")
        #expect(error?.message.contains(query) == true, "\(String(describing: error))")
        #expect(error?.objectType == "QPNode")
        // A query within the budget runs, in a write too.
        let small = try await realm.read { r in try r.objects(QPNode.self).filter("age > 3").count }
        #expect(small > 0)
        let writeError = await #expect(throws: LiveObjectsError.self) {
            try await realm.write { r in
                try r.create(QPNode.self, value: ["id": 1_000, "age": 1])
                _ = try r.objects(QPNode.self).filter(query).count
            }
        }
        #expect(writeError?.code == .limitExceeded)
        // The write was rolled back.
        #expect(try await realm.read { r in r.objects(QPNode.self).count } == 300)
        try await realm.close()
    }

    @Test func aSubscriptionWhoseReevaluationGoesPastTheBudgetEnds() async throws {
        var configuration = Realm.Configuration(identifier: "work-subscription", objectTypes: [QPNode.self])
        configuration.maximumQueryWork = 5_000
        let realm = try await Realm.open(configuration)
        // Nodes without friends: the first evaluation is cheap.
        try await Self.graph(realm, count: 300, degree: 0)
        let query = "SUBQUERY(friends, $a, $a.age > age).@count > 5"
        let changes = try await realm.read { r in try r.objects(QPNode.self).filter(query).changes() }
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next()?.isInitial == true)
        // Twenty friends each: testing the 300 nodes again visits 6,000 friends, past the budget.
        try await realm.write { r in
            let nodes = Array(r.objects(QPNode.self))
            for (i, node) in nodes.enumerated() {
                for k in 1...20 { node.friends.append(nodes[(i + k * 7) % nodes.count]) }
            }
        }
        let next = await iterator.next()
        #expect(next == nil, "the sequence went on: \(String(describing: next))")
        try await realm.close()
    }

    @Test func aCancelledTaskStopsItsQueryWithCancelled() async throws {
        let realm = try await Realm.open(.init(identifier: "work-cancel", objectTypes: [QPNode.self]))
        try await Self.graph(realm, count: 300, degree: 20)
        let query = "SUBQUERY(friends, $a, SUBQUERY($a.friends, $b, $b.age > age).@count > 0).@count > 0"
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await realm.read { r in try r.objects(QPNode.self).filter(query).count }
        }
        task.cancel()
        let error = await #expect(throws: LiveObjectsError.self) { try await task.value }
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        try await realm.close()
    }
}
