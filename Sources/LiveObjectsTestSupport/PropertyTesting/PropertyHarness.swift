import Foundation
import LiveObjects

/// Where and why a sequence of operations went wrong.
package struct PropertyFailure: Sendable, Hashable, CustomStringConvertible {
    /// The position of the operation after which a check failed.
    package var index: Int
    /// That operation.
    package var operation: PropertyOperation
    /// What went wrong, one line per finding.
    package var findings: [String]

    package init(index: Int, operation: PropertyOperation, findings: [String]) {
        self.index = index
        self.operation = operation
        self.findings = findings
    }

    package var description: String {
        "after operation \(index), \(operation):\n" + findings.map { "  - " + $0 }.joined(separator: "\n")
    }
}

/// The model-based test harness: runs operation sequences against a realm and a
/// ``ReferenceModel`` side by side and checks, after every operation, that
/// - the write ended as the model says (committed, or failed with the expected error);
/// - a write that did not commit left the store exactly as it was (``StoreSnapshot``);
/// - the store keeps its invariants (``StoreInvariants``): `LinkingObjects` and the backlink
///   index are the inverse of the links, no link points to a deleted object, every embedded
///   object has one parent, primary-key and secondary indexes agree with the data;
/// - no key of an object that was deleted, or whose creation was rolled back, resolves again;
/// - the realm shows exactly the model's objects, values, list contents, links and
///   `LinkingObjects`, read back through the typed API every third operation and through the
///   dynamic API otherwise.
package enum PropertyHarness {
    // MARK: Running one sequence

    /// Runs operations on a fresh realm; returns the first failure, or nil.
    ///
    /// A printed failure's operation list can be pasted here to replay it:
    /// `#expect(await PropertyHarness.run([...]) == nil)`.
    package static func run(_ operations: [PropertyOperation]) async -> PropertyFailure? {
        let realm: Realm
        do {
            realm = try await openFreshRealm("property", objectTypes: propertyTestModelTypes)
        } catch {
            return PropertyFailure(
                index: 0, operation: operations.first ?? .write([]), findings: ["cannot open a realm: \(error)"])
        }
        return await run(operations, on: realm)
    }

    /// Runs operations on an empty realm of ``propertyTestModelTypes``.
    package static func run(_ operations: [PropertyOperation], on realm: isolated Realm) -> PropertyFailure? {
        var outcomes: [String: Int] = [:]
        return run(operations, on: realm, outcomes: &outcomes)
    }

    private static func counting(
        _ operations: [PropertyOperation], on realm: isolated Realm, outcomes: [String: Int]
    ) -> (PropertyFailure?, [String: Int]) {
        var outcomes = outcomes
        let failure = run(operations, on: realm, outcomes: &outcomes)
        return (failure, outcomes)
    }

    /// Runs operations on an empty realm, counting how the writes end.
    static func run(
        _ operations: [PropertyOperation], on realm: isolated Realm, outcomes: inout [String: Int]
    ) -> PropertyFailure? {
        var model = ReferenceModel()
        var keys = KeyTracker()
        for (index, operation) in operations.enumerated() {
            let (outcome, findings) = step(
                operation, &model, realm, readThrough: index % 3 == 0 ? .typed : .dynamic, keys: &keys)
            outcomes[outcome.description, default: 0] += 1
            if !findings.isEmpty {
                return PropertyFailure(index: index, operation: operation, findings: Array(findings.prefix(40)))
            }
        }
        return nil
    }

    /// Runs one operation on the realm and the model, and checks everything; reads the realm
    /// back through the given API.
    static func step(
        _ operation: PropertyOperation, _ model: inout ReferenceModel, _ realm: isolated Realm, readThrough api: API,
        keys: inout KeyTracker
    ) -> (WriteOutcome, [String]) {
        let expected = model.apply(operation)
        // A write the model expects to roll back must leave the store exactly as it was. (When
        // the realm fails a write the model expects to commit, the outcomes already differ.)
        let before = expected == .committed ? nil : StoreSnapshot(realm.store)
        let log = CreationLog()
        let outcome = RealmDriver.perform(operation, on: realm, log: log)
        var findings: [String] = []
        if outcome != expected {
            findings.append("the write \(outcome); the model says it should have \(expected)")
        }
        if realm.isInWriteTransaction {
            findings.append("a write is still open after the operation")
            realm.cancelWrite()
        }
        if let before, outcome != .committed {
            let changes = before.differences(from: StoreSnapshot(realm.store))
            if !changes.isEmpty {
                findings.append("the write did not commit, yet the store changed:")
                findings += changes.map { "    " + $0 }
            }
        }
        findings += StoreInvariants.violations(in: realm.store)
        findings += keys.update(realm, created: log.keys)
        let (view, problems) = RealmDriver.observe(realm, through: api)
        findings += problems
        findings += model.view.differences(from: view)
        return (outcome, findings)
    }

    // MARK: Shrinking

    /// Shrinks a failing operation list: drops what follows the failure, then removes chunks of
    /// operations (halving the chunk size down to one), steps inside operations, and details
    /// inside steps, keeping each change while the list still fails. `fails` runs a candidate.
    package static func shrink(
        _ operations: [PropertyOperation], failure: PropertyFailure, budget: Int = 3000,
        fails: ([PropertyOperation]) async -> PropertyFailure?
    ) async -> (operations: [PropertyOperation], failure: PropertyFailure) {
        var best = Array(operations.prefix(failure.index + 1))
        var bestFailure = failure
        var runs = 0
        func attempt(_ candidate: [PropertyOperation]) async -> Bool {
            guard runs < budget, candidate != best else { return false }
            runs += 1
            guard let f = await fails(candidate) else { return false }
            best = Array(candidate.prefix(f.index + 1))
            bestFailure = f
            return true
        }
        var changed = true
        while changed && runs < budget {
            changed = false
            // Chunks of operations.
            var size = max(best.count / 2, 1)
            while true {
                var start = 0
                while start < best.count {
                    var candidate = best
                    candidate.removeSubrange(start..<min(start + size, best.count))
                    if await attempt(candidate) { changed = true } else { start += size }
                }
                if size == 1 { break }
                size /= 2
            }
            // Inside operations.
            var i = 0
            while i < best.count {
                var j = 0
                while i < best.count && j < best[i].steps.count && best[i].steps.count > 1 {
                    var steps = best[i].steps
                    steps.remove(at: j)
                    var candidate = best
                    candidate[i] = best[i].with(steps: steps)
                    if await attempt(candidate) { changed = true } else { j += 1 }
                }
                if i < best.count, case .write = best[i] {
                } else if i < best.count {
                    var candidate = best
                    candidate[i] = .write(best[i].steps)
                    if await attempt(candidate) { changed = true }
                }
                j = 0
                while i < best.count && j < best[i].steps.count {
                    var simplified = false
                    for simpler in best[i].steps[j].simplifications {
                        var steps = best[i].steps
                        steps[j] = simpler
                        var candidate = best
                        candidate[i] = best[i].with(steps: steps)
                        if await attempt(candidate) {
                            changed = true
                            simplified = true
                            break
                        }
                    }
                    if !simplified { j += 1 }
                }
                i += 1
            }
        }
        return (best, bestFailure)
    }

    // MARK: Many sequences

    /// Runs `configuration.sequences` generated sequences; the sequence number `i` uses the seed
    /// `configuration.seed + i`. Stops at the first failure, which it shrinks.
    package static func runSequences(_ configuration: PropertyTestConfiguration) async -> PropertyTestReport {
        var report = PropertyTestReport(configuration: configuration)
        CrashNote.install()
        defer { CrashNote.uninstall() }
        for i in 0..<configuration.sequences {
            let seed = configuration.seed &+ UInt64(i)
            CrashNote.set(
                "\nLiveObjects property test: the process crashed while running the sequence of seed \(seed).\n"
                    + "Replay it with: \(configuration.replayCommand(seed: seed))\n")
            let operations = OperationGenerator.operations(seed: seed, count: configuration.operations)
            let failure: PropertyFailure?
            do {
                let realm = try await openFreshRealm("property-\(seed)", objectTypes: propertyTestModelTypes)
                (failure, report.outcomes) = await counting(operations, on: realm, outcomes: report.outcomes)
            } catch {
                failure = PropertyFailure(
                    index: 0, operation: operations.first ?? .write([]), findings: ["cannot open a realm: \(error)"])
            }
            report.sequencesRun += 1
            report.operationsRun += failure.map { $0.index + 1 } ?? operations.count
            if let failure {
                CrashNote.set(
                    "\nLiveObjects property test: the process crashed while shrinking the failing sequence of seed \(seed).\n"
                        + "Replay it with: \(configuration.replayCommand(seed: seed))\n")
                let shrunk = await shrink(operations, failure: failure) { await run($0) }
                report.failure = SequenceFailure(
                    seed: seed, configuration: configuration, original: failure, originalCount: operations.count,
                    shrunk: shrunk.operations, failure: shrunk.failure)
                break
            }
        }
        return report
    }
}

/// How many sequences of how many operations to run, from which seed.
package struct PropertyTestConfiguration: Sendable, Hashable {
    /// The seed CI uses: every run checks the same sequences unless a seed is given.
    package static let defaultSeed: UInt64 = 0x4C69_7665_4F62_6A73

    package var sequences: Int
    package var operations: Int
    package var seed: UInt64

    package init(sequences: Int = 200, operations: Int = 200, seed: UInt64 = defaultSeed) {
        self.sequences = sequences
        self.operations = operations
        self.seed = seed
    }

    /// The configuration from `LIVEOBJECTS_PROPERTY_SEQUENCES`, `LIVEOBJECTS_PROPERTY_OPS` and
    /// `LIVEOBJECTS_PROPERTY_SEED` (decimal, `0x` hex, or `random`), with the defaults for what
    /// is not set: 200 sequences of 200 operations with the long sizes
    /// (`LIVEOBJECTS_TESTS=long`), else 60.
    package static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> PropertyTestConfiguration {
        var configuration = PropertyTestConfiguration()
        if TestEnvironment.string("LIVEOBJECTS_TESTS", in: environment)?.lowercased() != "long" {
            configuration.sequences = 60
        }
        if let n = TestEnvironment.int("LIVEOBJECTS_PROPERTY_SEQUENCES", in: environment), n >= 0 {
            configuration.sequences = n
        }
        if let n = TestEnvironment.int("LIVEOBJECTS_PROPERTY_OPS", in: environment), n >= 0 {
            configuration.operations = n
        }
        if let seed = TestEnvironment.seed("LIVEOBJECTS_PROPERTY_SEED", in: environment) {
            configuration.seed = seed
        }
        return configuration
    }

    /// The command that runs the one sequence of a seed again.
    func replayCommand(seed: UInt64) -> String {
        "LIVEOBJECTS_PROPERTY_SEED=\(seed) LIVEOBJECTS_PROPERTY_SEQUENCES=1 LIVEOBJECTS_PROPERTY_OPS=\(operations) "
            + "swift test --filter LiveObjectsTests.PropertyTests"
    }
}

/// The keys of objects that are gone (deleted, or created in a write that did not commit): none
/// may ever resolve again, even when a later object reuses the storage slot.
struct KeyTracker {
    private var live: [String: Set<ObjectKey>] = [:]
    private var retired: [String: Set<ObjectKey>] = [:]

    /// Retires the keys that went away in the last operation, then checks every retired key.
    mutating func update(_ realm: isolated Realm, created: [(type: String, key: ObjectKey)]) -> [String] {
        var now: [String: Set<ObjectKey>] = [:]
        for table in realm.store.tables {
            now[table.name] = Set(table.liveRows.map { table.key($0) })
        }
        var candidates = live
        for (type, key) in created { candidates[type, default: []].insert(key) }
        for (type, keys) in candidates {
            retired[type, default: []].formUnion(keys.subtracting(now[type] ?? []))
        }
        live = now
        var findings: [String] = []
        for (type, keys) in retired.sorted(by: { $0.key < $1.key }) {
            guard let table = realm.store.tablesByName[type] else { continue }
            for key in keys.sorted() where table.row(for: key) != nil {
                let object = (try? realm.dynamicObject(ofType: type, key: key)).map { "\($0)" } ?? "?"
                findings.append("the key \(key) of a \(type) that is gone resolves again, to \(object)")
            }
        }
        return findings
    }
}

/// What ``PropertyHarness/runSequences(_:)`` did.
package struct PropertyTestReport: Sendable {
    package var configuration: PropertyTestConfiguration
    package var sequencesRun = 0
    /// Operations run in the sequences (up to the failure in a failing one), shrinking aside.
    package var operationsRun = 0
    /// How the writes ended, by outcome (`committed`, `failed with deleteDenied`…).
    package var outcomes: [String: Int] = [:]
    package var failure: SequenceFailure?
}

/// A failing sequence, shrunk.
package struct SequenceFailure: Sendable, CustomStringConvertible {
    /// The seed of the sequence.
    package var seed: UInt64
    package var configuration: PropertyTestConfiguration
    /// The failure of the generated sequence.
    package var original: PropertyFailure
    package var originalCount: Int
    /// The shrunk operation list, and how it fails.
    package var shrunk: [PropertyOperation]
    package var failure: PropertyFailure

    package init(
        seed: UInt64, configuration: PropertyTestConfiguration, original: PropertyFailure, originalCount: Int,
        shrunk: [PropertyOperation], failure: PropertyFailure
    ) {
        self.seed = seed
        self.configuration = configuration
        self.original = original
        self.originalCount = originalCount
        self.shrunk = shrunk
        self.failure = failure
    }

    package var description: String {
        """
        LiveObjects property test failed for the sequence of seed \(seed) \
        (\(originalCount) operations, failing after operation \(original.index)).
        Replay the sequence: \(configuration.replayCommand(seed: seed))
        Shrunk to \(shrunk.count) operations, failing \(failure)
        Replay the shrunk list in a test: #expect(await PropertyHarness.run(ops) == nil) with
        let ops: [PropertyOperation] = \(shrunk.swiftSource)
        """
    }
}

extension Step {
    /// Simpler versions of the step, for shrinking.
    var simplifications: [Step] {
        switch self {
        case let .createNode(id, tag, score, next, friends, note, api):
            var result: [Step] = []
            if let note {
                result.append(
                    .createNode(id: id, tag: tag, score: score, next: next, friends: friends, note: nil, api: api))
                result += note.simplifications.map {
                    .createNode(id: id, tag: tag, score: score, next: next, friends: friends, note: $0, api: api)
                }
            }
            if !friends.isEmpty {
                result.append(
                    .createNode(id: id, tag: tag, score: score, next: next, friends: [], note: note, api: api))
            }
            if next != nil {
                result.append(
                    .createNode(id: id, tag: tag, score: score, next: nil, friends: friends, note: note, api: api))
            }
            return result
        case let .upsertNode(id, score, friends, api):
            return friends == nil ? [] : [.upsertNode(id: id, score: score, friends: nil, api: api)]
        case let .addNode(id, tag, friends, note, update):
            var result: [Step] = []
            if let note {
                result.append(.addNode(id: id, tag: tag, friends: friends, note: nil, update: update))
                result += note.simplifications.map {
                    .addNode(id: id, tag: tag, friends: friends, note: $0, update: update)
                }
            }
            for i in friends.indices {
                var fewer = friends
                fewer.remove(at: i)
                result.append(.addNode(id: id, tag: tag, friends: fewer, note: note, update: update))
            }
            return result
        case let .setFriends(node, to, api) where !to.isEmpty:
            return to.indices.map { i in
                var fewer = to
                fewer.remove(at: i)
                return .setFriends(node: node, to: fewer, api: api)
            }
        case let .setNotes(node, keep, new, api):
            return keep.indices.map { i in
                var fewer = keep
                fewer.remove(at: i)
                return .setNotes(node: node, keep: fewer, new: new, api: api)
            }
                + new.indices.map { i in
                    var fewer = new
                    fewer.remove(at: i)
                    return .setNotes(node: node, keep: keep, new: fewer, api: api)
                }
        case let .createPart(id, label, sub, api):
            return (sub == nil ? [] : [.createPart(id: id, label: label, sub: nil, api: api)])
                + (label == nil ? [] : [.createPart(id: id, label: nil, sub: sub, api: api)])
        case let .setNote(node, note, api):
            return note?.simplifications.map { .setNote(node: node, note: $0, api: api) } ?? []
        case let .appendNote(node, note, api):
            return note.simplifications.map { .appendNote(node: node, note: $0, api: api) }
        case let .replaceNote(node, at, note):
            return note.simplifications.map { .replaceNote(node: node, at: at, note: $0) }
        case let .appendSubnote(node, path, note, api):
            return note.simplifications.map { .appendSubnote(node: node, path: path, note: $0, api: api) }
        case let .deleteNodes(ids, api) where ids.count > 1:
            return ids.indices.map { i in
                var fewer = ids
                fewer.remove(at: i)
                return .deleteNodes(ids: fewer, api: api)
            }
        default:
            return []
        }
    }
}

extension NoteValue {
    /// Simpler notes, for shrinking.
    var simplifications: [NoteValue] {
        var result: [NoteValue] = []
        if ref != nil { result.append(NoteValue(text, ref: nil, subnotes)) }
        for i in subnotes.indices {
            var fewer = subnotes
            fewer.remove(at: i)
            result.append(NoteValue(text, ref: ref, fewer))
        }
        return result
    }
}
