import Foundation
import LiveObjects

/// Seed and size of a run of the randomized query test, overridable with environment variables.
package struct QueryPropertyConfiguration: Sendable, Hashable {
    /// The seed CI uses: every run checks the same queries unless a seed is given.
    package static let defaultSeed: UInt64 = 20_261_122

    /// The seed of the whole run.
    package var seed: UInt64
    /// How many data sets are made (40 by default); each is queried in two rounds, before and
    /// after random changes.
    package var iterations: Int
    /// How many queries each round asks (12).
    package var queriesPerRound: Int

    /// A configuration; the defaults are those of CI.
    package init(seed: UInt64 = defaultSeed, iterations: Int = 40, queriesPerRound: Int = 12) {
        self.seed = seed
        self.iterations = iterations
        self.queriesPerRound = queriesPerRound
    }

    /// The configuration from `LIVEOBJECTS_QUERY_SEED` (decimal, `0x` hex or `random`) and
    /// `LIVEOBJECTS_QUERY_ITERATIONS`, with the defaults for what is not set.
    package static func fromEnvironment() -> QueryPropertyConfiguration {
        QueryPropertyConfiguration(
            seed: TestEnvironment.seed("LIVEOBJECTS_QUERY_SEED") ?? defaultSeed,
            iterations: TestEnvironment.int("LIVEOBJECTS_QUERY_ITERATIONS") ?? 40)
    }
}

/// How many answers a run checked, by front end.
package struct QueryPropertyCounts: Sendable, Hashable {
    /// String queries (`filter(_:arguments:)`), one per case.
    package var text = 0
    /// Typed queries (`where { }`), where the predicate has that shape.
    package var typed = 0
    /// Results sorted with Foundation sort descriptors, where every criterion has one.
    package var descriptors = 0
    /// Cases whose predicate matched some but not all items.
    package var selective = 0
    /// Foundation `Predicate`s, where the predicate has that shape.
    package var foundation = 0

    /// No answers yet.
    package init() {}
}

/// What a run of the randomized query test found.
package struct QueryPropertyReport: Sendable {
    /// Every problem, one message each: the seed, iteration and round, the query (its text,
    /// arguments, sort and slice) and the expected and actual ids, enough to replay it.
    package var problems: [String] = []
    /// How many queries gave a wrong answer (the run stops after a round with 5 or more).
    package var failedQueries = 0
    /// What was checked.
    package var counts = QueryPropertyCounts()
}

/// The randomized query test: random data sets of `QPItem`s, random predicates (comparisons of
/// every kind, string operations with options, `ANY`/`ALL`/`NONE`, aggregates, `SUBQUERY`) and
/// sorts, asked through the string language, the typed DSL, Foundation predicates and sort
/// descriptors; every answer must equal the plain-Swift reference's (`RefWorld`,
/// `QueryReference`, `ReferenceSort`).
package enum QueryPropertyRun {
    /// Runs every iteration of a configuration; the same configuration always asks the same
    /// queries of the same data.
    package static func run(_ configuration: QueryPropertyConfiguration) async throws -> QueryPropertyReport {
        let seed = configuration.seed
        var rng = SeededRandomNumberGenerator(seed: seed)
        var report = QueryPropertyReport()
        for iteration in 0..<configuration.iterations where report.failedQueries < 5 {
            let realm = try await openFreshRealm("query-property", objectTypes: queryPropertyModelTypes)
            var world = RefWorld()
            try await QueryWorld.populate(realm, &world, &rng)
            for round in 0..<2 where report.failedQueries < 5 {
                var generator = PredicateGenerator(rng: rng, world: world)
                let cases = (0..<configuration.queriesPerRound).map { _ in generator.queryCase() }
                rng = generator.rng
                let (base, answers) = try await QueryChecker.answers(cases, in: realm)
                // The unsorted order is the storage order, which the reference takes from the
                // engine (it is not insertion order once objects were deleted).
                let ordered = base.map { world.items[$0]! }
                if Set(base) != Set(world.items.keys) {
                    report.problems.append("seed \(seed) iteration \(iteration): the realm lost objects")
                }
                for (c, answer) in zip(cases, answers) {
                    let problems = QueryChecker.problems(
                        c, answer, ordered: ordered, world: world,
                        context: "seed \(seed) iteration \(iteration) round \(round)", counts: &report.counts)
                    report.problems += problems
                    report.failedQueries += problems.count
                }
                if round == 0 { try await QueryWorld.mutate(realm, &world, &rng) }
            }
        }
        return report
    }
}
