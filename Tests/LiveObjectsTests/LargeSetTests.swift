import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Large sets, whose membership tests use the members the store keeps by value: random inserts,
/// removals, membership tests, other sets and lists changed between them, deletes of linked
/// objects, failed writes and frozen copies, against a plain Swift model.
/// `LIVEOBJECTS_LARGE_SET_SEED` (a number, or `random`) replays one run; a failure prints the
/// seed and the operations.
@Suite struct LargeSetTests {
    struct Failure: Error {}

    @Test func randomSetOperationsMatchAPlainModel() async throws {
        let failure = try await SeededRun.run(
            "LargeSetTests", variable: "LIVEOBJECTS_LARGE_SET_SEED", seed: 0x5E7, steps: (150, 600)
        ) { steps, rng, log in try await Self.run(steps: steps, &rng, &log) }
        #expect(failure == nil, "\(failure ?? "")")
    }

    /// A set given whole (the dynamic API) with as many members as it had answers for its new
    /// members, in the same write and after it.
    @Test func aSetGivenWholeAnswersForItsNewMembers() async throws {
        let realm = try await openFreshRealm(objectTypes: [SetTag.self, SetHolder.self])
        try await realm.write { r in
            let holder = try r.create(SetHolder.self, value: ["id": 1])
            holder.scores.insert(objectsIn: Array(0..<20))
            #expect(holder.scores.contains(5))
            let dynamic = try r.dynamicObject(ofType: "SetHolder", forPrimaryKey: 1)!
            try dynamic.set("scores", to: .list((100..<120).map { .int(Int64($0)) }))
            #expect(holder.scores.contains(100) && !holder.scores.contains(5))
        }
        try await realm.read { r in
            let holder = r.object(ofType: SetHolder.self, forPrimaryKey: 1)!
            #expect(holder.scores.contains(119) && !holder.scores.contains(19))
        }
    }

    struct Model {
        var scores: [[Int]] = [[], []]
        var labels: [[Int]] = [[], []]
        var tags: Set<Int> = Set(0..<40)
    }

    static func run(steps: Int, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]) async throws
        -> String?
    {
        let realm = try await openFreshRealm(objectTypes: [SetTag.self, SetHolder.self])
        var model = Model()
        try await realm.write { r in
            for id in 0..<2 { _ = try r.create(SetHolder.self, value: ["id": id]) }
            for id in 0..<40 { _ = try r.create(SetTag.self, value: ["id": id]) }
        }
        for _ in 0..<steps {
            let holder = rng.int(0...1)
            let n = rng.int(0...59)
            let tag = rng.pick(model.tags.sorted()) ?? 0
            switch rng.int(0...10) {
            case 0, 1, 2:
                // Several inserts in one write, with repeats: the kept members grow with them.
                let values = (0..<rng.int(1...30)).map { _ in rng.int(0...59) }
                log.append("holder \(holder): insert \(values)")
                try await realm.write { r in
                    r.object(ofType: SetHolder.self, forPrimaryKey: holder)!.scores.insert(objectsIn: values)
                }
                for v in values where !model.scores[holder].contains(v) { model.scores[holder].append(v) }
            case 3:
                log.append("holder \(holder): remove \(n)")
                try await realm.write { r in r.object(ofType: SetHolder.self, forPrimaryKey: holder)!.scores.remove(n) }
                model.scores[holder].removeAll { $0 == n }
            case 4:
                // Another holder's set and a list change between two lookups in one write.
                log.append("holder \(holder): insert \(n), the other holder's set and list change, insert \(n + 1)")
                try await realm.write { r in
                    let this = r.object(ofType: SetHolder.self, forPrimaryKey: holder)!
                    let other = r.object(ofType: SetHolder.self, forPrimaryKey: 1 - holder)!
                    this.scores.insert(n)
                    other.scores.insert(n)
                    other.ordered.append("x")
                    this.scores.insert(n + 1)
                }
                for (h, v) in [(holder, n), (1 - holder, n), (holder, n + 1)] where !model.scores[h].contains(v) {
                    model.scores[h].append(v)
                }
            case 5:
                guard model.tags.contains(tag) else { continue }
                log.append("holder \(holder): insert \(n) and link tag \(tag), then fail")
                do {
                    try await realm.write { r in
                        let this = r.object(ofType: SetHolder.self, forPrimaryKey: holder)!
                        this.scores.insert(n)
                        this.labels.insert(r.object(ofType: SetTag.self, forPrimaryKey: tag)!)
                        throw Failure()
                    }
                } catch is Failure {}
            case 6, 7:
                let tags = (0..<rng.int(1...20)).compactMap { _ in rng.pick(model.tags.sorted()) }
                log.append("holder \(holder): link tags \(tags)")
                try await realm.write { r in
                    let this = r.object(ofType: SetHolder.self, forPrimaryKey: holder)!
                    for t in tags { this.labels.insert(r.object(ofType: SetTag.self, forPrimaryKey: t)!) }
                }
                for t in tags where !model.labels[holder].contains(t) { model.labels[holder].append(t) }
            case 8:
                guard model.tags.contains(tag), model.tags.count > 20 else { continue }
                log.append("delete tag \(tag)")
                try await realm.write { r in try r.delete(r.object(ofType: SetTag.self, forPrimaryKey: tag)!) }
                model.tags.remove(tag)
                model.labels = model.labels.map { $0.filter { $0 != tag } }
            case 9:
                // The whole set given through the dynamic API, as many members as it had.
                let count = model.scores[holder].count
                let values = (0..<count).map { $0 + n }
                log.append("holder \(holder): set the set to \(values) through the dynamic API")
                try await realm.write { r in
                    let this = try r.dynamicObject(ofType: "SetHolder", forPrimaryKey: .int(Int64(holder)))!
                    try this.set("scores", to: .list(values.map { .int(Int64($0)) }))
                    // Looked up in the same write.
                    _ = r.object(ofType: SetHolder.self, forPrimaryKey: holder)!.scores.contains(n)
                }
                model.scores[holder] = values
            default:
                log.append("holder \(holder): replace the set by \(n)..<\(n + 20)")
                try await realm.write { r in
                    let this = r.object(ofType: SetHolder.self, forPrimaryKey: holder)!
                    this.scores.removeAll()
                    this.scores.insert(objectsIn: Array(n..<(n + 20)))
                }
                model.scores[holder] = Array(n..<(n + 20))
            }
            let expected = model
            let mismatch = try await realm.read { r -> String? in
                for holder in 0..<2 {
                    let object = r.object(ofType: SetHolder.self, forPrimaryKey: holder)!
                    let frozen = r.freeze().object(ofType: SetHolder.self, forPrimaryKey: holder)!
                    if Array(object.scores) != expected.scores[holder] {
                        return "holder \(holder): scores \(Array(object.scores)), expected \(expected.scores[holder])"
                    }
                    if object.labels.map(\.id) != expected.labels[holder] {
                        return
                            "holder \(holder): labels \(object.labels.map(\.id)), expected \(expected.labels[holder])"
                    }
                    let scores = object.scores
                    let frozenScores = frozen.scores
                    for v in 0..<62 {
                        let wanted = expected.scores[holder].contains(v)
                        if scores.contains(v) != wanted || frozenScores.contains(v) != wanted {
                            return "holder \(holder): contains(\(v)) is \(scores.contains(v)), expected \(wanted)"
                        }
                    }
                    for t in expected.tags {
                        let tag = r.object(ofType: SetTag.self, forPrimaryKey: t)!
                        if object.labels.contains(tag) != expected.labels[holder].contains(t) {
                            return "holder \(holder): contains(tag \(t)) is \(object.labels.contains(tag))"
                        }
                    }
                }
                let violations = StoreInvariants.violations(in: r.store)
                return violations.isEmpty ? nil : "\(violations)"
            }
            if let mismatch { return "after \(log.last ?? ""): \(mismatch)" }
        }
        return nil
    }
}
