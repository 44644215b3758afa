import Foundation
import LiveObjects

/// Asks the engine every query of a round through each front end, and checks every answer
/// against the reference model.
enum QueryChecker {
    /// The ids of all items in storage order, and each case's answers by the string query, the
    /// typed query, Foundation sort descriptors and a Foundation `Predicate`.
    static func answers(_ cases: [QueryCase], in realm: Realm) async throws -> (base: [Int], answers: [QueryAnswer]) {
        try await realm.read { r in
            let all = r.objects(QPItem.self)
            var answers: [QueryAnswer] = []
            for c in cases {
                let rendered = c.text
                let text: Result<[Int], LiveObjectsError>
                do {
                    let results = try all.filter(rendered.text, arguments: rendered.arguments)
                        .sorted(by: c.sorts.map(\.sortField))
                    text = .success(c.slice(results.map(\.id)))
                } catch let error as LiveObjectsError {
                    text = .failure(error)
                } catch {
                    text = .failure(LiveObjectsError(.invalidQuery, "\(error)"))
                }
                var typedAnswer: [Int]?
                var failed = false
                let typed = all.where { q in
                    guard let p = TypedBuilder(root: q).build(c.predicate) else {
                        failed = true
                        return q.id == q.id
                    }
                    return p
                }
                if !failed {
                    let sorted = typed.sorted(
                        by: c.sorts.map { ($0.keyPath, ascending: $0.ascending, comparison: $0.comparison) })
                    typedAnswer = c.slice(sorted.map(\.id))
                }
                var descriptorAnswer: [Int]?
                let descriptors = c.sorts.compactMap(\.descriptor)
                if descriptors.count == c.sorts.count, case .success = text {
                    let results = try all.filter(rendered.text, arguments: rendered.arguments).sorted(
                        using: descriptors)
                    descriptorAnswer = c.slice(results.map(\.id))
                }
                var unsupported = false
                let predicate = Predicate<QPItem> { v in
                    guard let e = FoundationBuilder(root: v, form: c.form).build(c.predicate) else {
                        unsupported = true
                        return PE.Value(true)
                    }
                    return e
                }
                var foundation: Result<[Int], LiveObjectsError>?
                var evaluated: [Int]?
                if !unsupported {
                    do {
                        let results = try all.filter(predicate).sorted(by: c.sorts.map(\.sortField))
                        foundation = .success(c.slice(results.map(\.id)))
                    } catch let error as LiveObjectsError {
                        foundation = .failure(error)
                    }
                    evaluated = try all.filter { try predicate.evaluate($0) }.map(\.id)
                }
                answers.append(
                    QueryAnswer(
                        text: text, typed: typedAnswer, descriptors: descriptorAnswer, foundation: foundation,
                        foundationEvaluated: evaluated))
            }
            return (all.map(\.id), answers)
        }
    }

    /// The problems of one case's answers, one message each (empty when every front end gave
    /// the reference's answer); `counts` adds up what was checked.
    ///
    /// - Parameters:
    ///   - ordered: The reference's items in the engine's storage order.
    ///   - context: Where the case comes from (seed, iteration, round), printed before each
    ///     problem.
    static func problems(
        _ c: QueryCase, _ answer: QueryAnswer, ordered: [RefItem], world: RefWorld, context: String,
        counts: inout QueryPropertyCounts
    ) -> [String] {
        var problems: [String] = []
        let matching = ordered.filter { c.predicate.matches($0, world) }
        let expected = c.slice(ReferenceSort.sort(matching, c.sorts, world).map(\.id))
        let context = "\(context): \(c.description)"
        if !matching.isEmpty && matching.count < ordered.count { counts.selective += 1 }
        switch answer.text {
        case .success(let ids):
            counts.text += 1
            if ids != expected {
                problems.append("\(context)\n  expected \(expected)\n  got      \(ids)")
            }
        case .failure(let error):
            problems.append("\(context)\n  failed: \(error)")
        }
        if let typed = answer.typed {
            counts.typed += 1
            if typed != expected {
                problems.append("\(context) (typed where { })\n  expected \(expected)\n  got      \(typed)")
            }
        }
        if let evaluated = answer.foundationEvaluated {
            counts.foundation += 1
            // Foundation's own evaluation checks the reference semantics too.
            if evaluated != matching.map(\.id) {
                problems.append(
                    "\(context) (Foundation's evaluation, form \(c.form))\n  reference \(matching.map(\.id))\n  Foundation \(evaluated)"
                )
            }
        }
        switch answer.foundation {
        case .success(let ids) where ids != expected:
            problems.append(
                "\(context) (Foundation Predicate, form \(c.form))\n  expected \(expected)\n  got      \(ids)"
            )
        case .failure(let error):
            problems.append("\(context) (Foundation Predicate, form \(c.form))\n  failed: \(error)")
        default:
            break
        }
        if let sorted = answer.descriptors {
            counts.descriptors += 1
            if sorted != expected {
                problems.append("\(context) (SortDescriptor)\n  expected \(expected)\n  got      \(sorted)")
            }
        }
        return problems
    }
}
