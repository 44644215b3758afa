import Foundation
import LiveObjects

/// A randomized, seeded property test of change notifications: one scenario per seed.
///
/// Each scenario opens a fresh realm of the pet models, fills it, starts several subscriptions
/// (query results filtered and sorted in many ways, sliced results, lists, `LinkingObjects`,
/// single objects, the whole realm), runs a random sequence of writes, and then checks every
/// element every subscription produced against what the scenario itself recorded about each write
/// (`WriteRecorder`, `NotificationModel`).
///
/// Environment: `LIVEOBJECTS_NOTIFY_SEED` (decimal, `0x` hex or `random`; fixed by default),
/// `LIVEOBJECTS_NOTIFY_ITERATIONS` (scenarios, 60), `LIVEOBJECTS_NOTIFY_WRITES` (writes per
/// scenario, 14). A failure records the seed, the failing iteration, every subscription and every
/// write's operations.
///
/// Reading the elements never waits: a commit yields its elements synchronously, so after the
/// last write every element is already buffered. The streams are then drained by a task that is
/// cancelled at once: a cancelled `AsyncStream` iterator still returns the buffered elements and
/// then ends. Each element carries the version of its commit, which ties it to a write.
///
/// Semantics the checks encode (decided here where the documentation leaves room):
/// - A property is "changed" by a write when an operation gave it a different value, even if a
///   later operation of the same write set it back (the changeset records the operation). For a
///   list: any insert, remove, move or replace. For a `LinkingObjects` property: a link to the
///   object was made or removed (a move inside the origin list does not change it).
/// - Objects inserted or deleted by the write are not "modified".
/// - Default collection subscriptions are deep one level: an element is modified when one of its
///   own properties changed, or any property of an object it links to directly (to-one link,
///   list, `LinkingObjects`) after the write.
/// - A key-path-filtered subscription reports exactly the named paths: `"owner.name"` counts
///   changes of the element's `owner` link and of the name of its owner; `"owner"` alone counts
///   only the link itself, not the owner's properties.
/// - Paths used only by the predicate, the sort or `distinct` decide membership and order, but do
///   not make an element "modified".
/// - A move is an element whose order relative to another element present before and after
///   changed; with unique keys no element present before and after is reported as deleted or
///   inserted.
/// - Object subscriptions observe the object's own properties (not deep); their old values are the
///   values before the write, `LinkingObjects` included.
/// - `withoutNotifying` silences the named subscriptions for that commit; their next element
///   applies to the state after it. A silenced object subscription whose object is deleted ends
///   without a `.deleted` element.
package enum NotificationScenario {
    /// Runs the scenario of one seed; returns the failures found (empty when every
    /// subscription produced exactly what the reference expected), followed by every
    /// subscription and every write's operations when there are any.
    ///
    /// The same seed and number of writes always run the same scenario.
    package static func run(seed: UInt64, writes: Int) async throws -> [String] {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let realm = try await openPets("notify-property")
        let populateSeed = rng.next()
        let nextId = try await realm.write { r in
            var local = SeededRandomNumberGenerator(seed: populateSeed)
            return try NotificationGenerator.populate(r, &local)
        }
        var run = ScenarioRun(rng: rng, realm: realm, nextId: nextId)
        let initialCount = run.rng.int(3...7)
        try await run.startSubscriptions(count: initialCount, firstWrite: 0)
        for w in 0..<writes {
            try await run.write(w)
            if !run.failures.isEmpty { break }
        }
        return await run.check()
    }
}

/// One write of a scenario as drawn from its seed, before it runs.
private struct PlannedWrite: Sendable {
    /// `write`, `throwing`, `withoutNotifying`, `begin/commit with subscription` or `empty`.
    var kind: String
    /// The subscriptions silenced by `withoutNotifying`.
    var silenced: Set<Int>
    var tokens: [SubscriptionToken]
    var opCount: Int
    var opSeed: UInt64
    /// Whether a subscription is made inside the write (its spec drawn from `insideSeed`).
    var subscribeInside: Bool
    var insideSeed: UInt64
}

/// The state of one scenario: its generator, the subscriptions, what every write did and the
/// failures found so far.
private struct ScenarioRun {
    var rng: SeededRandomNumberGenerator
    let realm: Realm
    let schema: Schema
    var nextId: Int
    var failures: [String] = []
    var subs: [ActiveSub] = []
    var outcomes: [NotificationWriteOutcome] = []
    /// Owners of lists that no longer exist (deleted, or created by a rolled-back write).
    var deadOwners = Set<ObjRef>()

    init(rng: SeededRandomNumberGenerator, realm: Realm, nextId: Int) {
        self.rng = rng
        self.realm = realm
        self.schema = realm.schema
        self.nextId = nextId
    }

    /// Starts `count` subscriptions (fewer when the realm offers nothing to observe).
    mutating func startSubscriptions(count: Int, firstWrite: Int) async throws {
        for _ in 0..<count {
            let specSeed = rng.next()
            let id = subs.count
            let dead = deadOwners
            let started: (SubSpec, SubHandle, SubExpectation, UInt64)? = try await realm.read { r in
                var local = SeededRandomNumberGenerator(seed: specSeed)
                guard let spec = NotificationGenerator.randomSpec(r, &local) else { return nil }
                let handle = try SubscriptionFactory.start(r, spec)
                let expectation = try NotificationModel.expectation(r, spec, record: nil, deadOwners: dead)
                return (spec, handle, expectation, r.version)
            }
            guard let (spec, handle, expectation, version) = started else { continue }
            subs.append(
                ActiveSub(
                    id: id, spec: spec, handle: handle, firstWrite: firstWrite, initial: expectation,
                    initialVersion: version))
        }
    }

    /// Runs write number `w` and records what every subscription should show after it.
    mutating func write(_ w: Int) async throws {
        if rng.chance(0.15) { try await startSubscriptions(count: 1, firstWrite: w) }
        // Values before the write, for object subscriptions' old values.
        let objectSubs = subs.compactMap { sub -> (Int, ObjRef)? in
            if case .object(let type, let key) = sub.spec.kind { return (sub.id, ObjRef(type: type, key: key)) }
            return nil
        }
        let before: [Int: [String: PropertyValue]] = try await realm.read { r in
            var values: [Int: [String: PropertyValue]] = [:]
            for (id, ref) in objectSubs { values[id] = NotificationModel.values(r, ref) }
            return values
        }
        let versionBefore = await realm.version
        let plan = drawWrite()
        let box = LockedBox<(WriteRecord, SubSpec?, SubHandle?, Int)?>(nil)
        let rolledBack = await commit(plan, Self.body(plan, schema: schema, firstId: nextId, into: box), w)
        guard let (record, insideSpec, insideHandle, idAfter) = box.get() else {
            failures.append("write #\(w) recorded nothing")
            return
        }
        nextId = idAfter
        let effectiveRecord = rolledBack ? WriteRecord(log: record.log, problems: record.problems) : record
        // Objects created by a rolled-back write are gone (their slots may be reused).
        deadOwners.formUnion(rolledBack ? record.inserted : record.deleted)
        let versionAfter = await realm.version
        var outcome = NotificationWriteOutcome(
            index: w, kind: plan.kind, versionBefore: versionBefore, versionAfter: versionAfter,
            rolledBack: rolledBack, silenced: plan.silenced, record: effectiveRecord)
        outcome.valuesBefore = before
        for problem in record.problems { failures.append("write #\(w): \(problem)") }
        if outcome.committed == effectiveRecord.isNoOp {
            failures.append(
                "write #\(w): version went \(versionBefore) -> \(versionAfter), but the test recorded \(effectiveRecord.isNoOp ? "no" : "some") change"
            )
        }
        if let insideSpec, let insideHandle {
            subs.append(
                ActiveSub(
                    id: subs.count, spec: insideSpec, handle: insideHandle, firstWrite: w + 1, initial: nil,
                    initialVersion: versionAfter))
        }
        outcome.expectations = try await expectations(after: effectiveRecord)
        outcomes.append(outcome)
    }

    /// Draws the kind, the silenced subscriptions, the size and the seeds of the next write.
    mutating func drawWrite() -> PlannedWrite {
        let roll = rng.int(0...99)
        let kind =
            roll < 62
            ? "write"
            : roll < 74
                ? "throwing"
                : roll < 90 ? "withoutNotifying" : roll < 95 ? "begin/commit with subscription" : "empty"
        var silenced = Set<Int>()
        if kind == "withoutNotifying" {
            for sub in subs where rng.chance(0.6) { silenced.insert(sub.id) }
        }
        let tokens = subs.filter { silenced.contains($0.id) }.map(\.handle.token)
        let opCount = kind == "empty" ? 0 : rng.int(1...4)
        let opSeed = rng.next()
        let subscribeInside = kind == "begin/commit with subscription" || (kind != "empty" && rng.chance(0.25))
        let insideSeed = rng.next()
        return PlannedWrite(
            kind: kind, silenced: silenced, tokens: tokens, opCount: opCount, opSeed: opSeed,
            subscribeInside: subscribeInside, insideSeed: insideSeed)
    }

    /// The body of a planned write: its operations, and the subscription made inside it. It puts
    /// the write's record, that subscription and the next free id into `box`.
    static func body(
        _ plan: PlannedWrite, schema: Schema, firstId: Int,
        into box: LockedBox<(WriteRecord, SubSpec?, SubHandle?, Int)?>
    ) -> @Sendable (isolated Realm) throws -> sending Void {
        { r in
            var local = SeededRandomNumberGenerator(seed: plan.opSeed)
            let rec = WriteRecorder(schema: schema)
            var id = firstId
            var spec: SubSpec?
            var handle: SubHandle?
            let subscribeAt = plan.subscribeInside ? local.int(0...plan.opCount) : -1
            var failure: Error?
            for i in 0...plan.opCount {
                if i == subscribeAt {
                    var specRng = SeededRandomNumberGenerator(seed: plan.insideSeed)
                    if let s = NotificationGenerator.randomSpec(r, &specRng) {
                        spec = s
                        handle = try? SubscriptionFactory.start(r, s)
                        rec.log("subscribe inside the write: \(s)")
                    }
                }
                guard i < plan.opCount else { break }
                do {
                    try NotificationGenerator.operation(
                        r, &local, rec, nextId: &id, propagateErrors: plan.kind == "throwing" && local.chance(0.3))
                } catch {
                    failure = error
                    break
                }
            }
            box.set((rec.record, spec, handle, id))
            if let failure { throw failure }
            if plan.kind == "throwing" { throw RollbackError() }
        }
    }

    /// Runs `body` as the plan's kind of write; returns whether it was rolled back.
    mutating func commit(
        _ plan: PlannedWrite, _ body: @escaping @Sendable (isolated Realm) throws -> sending Void, _ w: Int
    ) async -> Bool {
        do {
            switch plan.kind {
            case "withoutNotifying":
                try await realm.write(withoutNotifying: plan.tokens, body)
            case "begin/commit with subscription":
                try await realm.beginWrite()
                do {
                    try await realm.read(body)
                    try await realm.commitWrite()
                } catch {
                    await realm.cancelWrite()
                    throw error
                }
            default:
                try await realm.write(body)
            }
            return false
        } catch {
            if plan.kind != "throwing" { failures.append("write #\(w) [\(plan.kind)] threw \(error)") }
            return true
        }
    }

    /// What every subscription should show after a write that recorded `record`.
    func expectations(after record: WriteRecord) async throws -> [Int: SubExpectation] {
        let specs = subs.map { ($0.id, $0.spec) }
        let deadNow = deadOwners
        return try await realm.read { r in
            var result: [Int: SubExpectation] = [:]
            for (id, spec) in specs {
                result[id] = try NotificationModel.expectation(r, spec, record: record, deadOwners: deadNow)
            }
            return result
        }
    }

    /// Checks every element every subscription produced; returns the failures, followed by every
    /// subscription and every write's operations when there are any.
    func check() async -> [String] {
        var failures = self.failures
        for sub in subs {
            let elements = await sub.handle.drain()
            failures += NotificationChecker.checkSubscription(sub, elements, outcomes, schema: schema).map {
                "sub \(sub.id) (\(sub.spec)): \($0)"
            }
        }
        if !failures.isEmpty {
            failures.append(
                "subscriptions:\n    "
                    + subs.map { "\($0.id): \($0.spec) from write #\($0.firstWrite)" }.joined(separator: "\n    "))
            failures.append("writes:\n    " + outcomes.map(\.summary).joined(separator: "\n    "))
        }
        return failures
    }
}

// MARK: - Configuration

/// Seed and size of a run of notification scenarios, overridable with environment variables.
package struct NotificationPropertyConfiguration: Sendable, Hashable {
    /// The seed CI uses: every run checks the same scenarios unless a seed is given.
    package static let defaultSeed: UInt64 = 0x4E07_1F1E_5EED

    /// The seed of the whole run; each scenario's seed is drawn from it.
    package var seed: UInt64
    /// How many scenarios run (60 by default).
    package var iterations: Int
    /// How many writes each scenario makes (14 by default).
    package var writes: Int

    /// A configuration; the defaults are those of CI.
    package init(seed: UInt64 = defaultSeed, iterations: Int = 60, writes: Int = 14) {
        self.seed = seed
        self.iterations = iterations
        self.writes = writes
    }

    /// The configuration from `LIVEOBJECTS_NOTIFY_SEED` (decimal, `0x` hex or `random`),
    /// `LIVEOBJECTS_NOTIFY_ITERATIONS` and `LIVEOBJECTS_NOTIFY_WRITES`, with the defaults for
    /// what is not set.
    package static func fromEnvironment() -> NotificationPropertyConfiguration {
        // A fixed seed by default, so that runs repeat; `random` for a new one each run.
        NotificationPropertyConfiguration(
            seed: TestEnvironment.seed("LIVEOBJECTS_NOTIFY_SEED") ?? defaultSeed,
            iterations: TestEnvironment.int("LIVEOBJECTS_NOTIFY_ITERATIONS") ?? 60,
            writes: TestEnvironment.int("LIVEOBJECTS_NOTIFY_WRITES") ?? 14)
    }
}

struct NotificationWriteOutcome: Sendable {
    let index: Int
    let kind: String
    let versionBefore: UInt64
    let versionAfter: UInt64
    let rolledBack: Bool
    let silenced: Set<Int>
    let record: WriteRecord
    var expectations: [Int: SubExpectation] = [:]
    var valuesBefore: [Int: [String: PropertyValue]] = [:]

    var committed: Bool { versionAfter > versionBefore }
    var summary: String {
        "write #\(index) [\(kind)] v\(versionBefore)->v\(versionAfter)\(rolledBack ? " rolled back" : "")"
            + (silenced.isEmpty ? "" : " silencing subs \(silenced.sorted())") + "\n      "
            + record.log.joined(separator: "\n      ")
    }
}

struct ActiveSub: Sendable {
    let id: Int
    let spec: SubSpec
    let handle: SubHandle
    /// The first write whose changes the subscription reports.
    let firstWrite: Int
    /// For subscriptions started between writes: the state they start from.
    let initial: SubExpectation?
    let initialVersion: UInt64
}

struct RollbackError: Error {}

/// A value shared with a `@Sendable` closure.
final class LockedBox<T: Sendable>: Sendable {
    private let mutex: Locked<T>
    init(_ value: T) { mutex = Locked(value) }
    func set(_ value: T) { mutex.withLock { $0 = value } }
    func get() -> T { mutex.withLock { $0 } }
}
