import Foundation
import LiveObjectsJSON

/// The queries a device syncs by (docs/SYNC-PROTOCOL.md, "Subscriptions"), sent with every pull
/// as the parameter `subscriptions`, a JSON array:
///
/// ```json
/// [{"type": "TaskItem", "where": "ANY board.members == $user AND done == false"},
///  {"type": "Board", "where": "owner == $user"}, {"type": "Tag"}]
/// ```
///
/// A pull with subscriptions sends the objects that match one of them (and that the rules let
/// the user read); an object without `where` matches every object of its type. Queries are read
/// by the rules' reader (``RulePredicate``) and checked against the space's schema as rules are.
struct PullSubscriptions: Sendable {
    /// The queries by type; a nil predicate matches every object of the type.
    private(set) var byType: [String: [RulePredicate?]] = [:]

    /// The most queries in one pull.
    static let maximumCount = 64
    /// The most key paths through links a space keeps for subscriptions.
    static let maximumPaths = 256

    /// The key paths through links the queries read, as `Type:link.property` (the key path
    /// without a quantifier): the ways a change of another object can move one of the type's
    /// objects in or out of a device's view.
    private(set) var linkPaths = Set<String>()

    /// Reads the parameter's JSON and checks every query against the space's schema.
    ///
    /// - Throws: ``SyncServerError`` `badRequest` naming the query and what is wrong: JSON of
    ///   another shape, a query that does not parse, a space without a schema, a type or key path
    ///   the schema does not have.
    static func parse(_ text: String, schema: SpaceSchema?) throws(SyncServerError) -> PullSubscriptions {
        func bad(_ reason: String) -> SyncServerError {
            SyncServerError(.badRequest, "the subscriptions are not valid: \(reason)")
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(text.utf8))
        } catch {
            throw bad("not JSON: \(error.message)")
        }
        guard case .array(let entries) = json else {
            throw bad("expected an array of queries, such as [{\"type\": \"TaskItem\", \"where\": \"owner == $user\"}]")
        }
        guard entries.count <= maximumCount else { throw bad("more than \(maximumCount) queries") }
        guard let schema else {
            throw bad("the space has no schema, and a subscription names its types and properties")
        }
        let byName = Dictionary(schema.types.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var subscriptions = PullSubscriptions()
        for (index, entry) in entries.enumerated() {
            let name = "query \(index + 1)"
            guard case .object(let members) = entry, case .string(let type)? = entry.fields?["type"] else {
                throw bad("\(name): expected an object with \"type\" and, optionally, \"where\"")
            }
            for (key, _) in members where key != "type" && key != "where" {
                throw bad("\(name): unknown member \"\(key)\"")
            }
            guard byName[type] != nil else { throw bad("\(name): the space's schema has no type \(type)") }
            var predicate: RulePredicate?
            if let condition = entry.fields?["where"] {
                guard case .string(let text) = condition else { throw bad("\(name): \"where\" is a string") }
                guard text.utf8.count <= SpaceRules.maximumRuleLength else {
                    throw bad("\(name): over \(SpaceRules.maximumRuleLength) bytes")
                }
                do {
                    predicate = try RulePredicate.parse(text)
                } catch {
                    throw bad("\(name) (\(type)), column \(error.column): \(error.message): \(text)")
                }
                for comparison in predicate?.comparisons ?? [] {
                    if let problem = SpaceRules.problem(of: comparison, type: type, byName) {
                        throw bad("\(name) (\(type)): \(comparison.text): \(problem)")
                    }
                }
            }
            subscriptions.byType[type, default: []].append(predicate)
            for comparison in predicate?.comparisons ?? [] where comparison.path.count > 1 {
                subscriptions.linkPaths.insert("\(type):" + comparison.path.joined(separator: "."))
            }
        }
        return subscriptions
    }

    /// The queries of a type; nil when none names it (no object of it matches).
    func queries(of type: String) -> [RulePredicate?]? { byType[type] }

    /// Whether an object matches one of the queries of its type.
    func matches(
        _ type: String, _ values: [String: JSONValue], user: String,
        resolve: (SpaceObjectName) -> [String: JSONValue]?
    ) -> Bool {
        guard let queries = byType[type] else { return false }
        return queries.contains { $0?.allows(values, user: user, resolve: resolve) ?? true }
    }
}
