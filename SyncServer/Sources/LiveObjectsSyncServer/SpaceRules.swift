import Foundation
import LiveObjectsJSON

/// The read and write rules of a space's types (docs/SYNC-PROTOCOL.md, "Rules"): per type, a
/// predicate over the object and the signed-in user that says who pulls it, and one that says
/// who pushes changes to it. `liveobjects-sync-server rules set SPACE FILE` sets them from JSON:
///
/// ```json
/// {"Board": {"read": "ANY members == $user", "write": "owner == $user"},
///  "TaskItem": {"read": "ANY board.members == $user", "write": "ANY board.members == $user"}}
/// ```
///
/// A type with rules is denied by default: a missing `read` (or `write`) lets no one but an
/// admin pull (or push) its objects. A type without rules follows the roles alone.
public struct SpaceRules: Hashable, Sendable {
    /// The rules of one type; nil denies.
    public struct TypeRules: Hashable, Sendable {
        /// The read rule's text.
        public var read: String?
        /// The write rule's text.
        public var write: String?

        var readPredicate: RulePredicate?
        var writePredicate: RulePredicate?
    }

    /// The rules, by type name.
    public let types: [String: TypeRules]

    init(types: [String: TypeRules]) {
        self.types = types
    }

    /// Whether the space has no rules (the roles alone decide).
    public var isEmpty: Bool { types.isEmpty }

    /// The most bytes of a rule's text.
    static let maximumRuleLength = 4_096

    /// Reads rules from their JSON and parses every predicate.
    ///
    /// - Throws: ``SyncServerError`` `badRequest` naming the type and the rule: JSON of another
    ///   shape, or a rule that does not parse (with its column).
    public static func parse(_ data: Data) throws(SyncServerError) -> SpaceRules {
        func bad(_ reason: String) -> SyncServerError {
            SyncServerError(.badRequest, "the rules are not valid: \(reason)")
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(data))
        } catch {
            throw bad("not JSON: \(error.message)")
        }
        guard case .object(let members) = json else {
            throw bad("expected an object of types, such as {\"TaskItem\": {\"read\": \"owner == $user\"}}")
        }
        var types: [String: TypeRules] = [:]
        for (type, value) in members {
            guard types[type] == nil else { throw bad("type \(type) appears twice") }
            guard case .object(let ruleMembers) = value else {
                throw bad("\(type): expected an object with \"read\" and \"write\"")
            }
            var rules = TypeRules()
            for (kind, text) in ruleMembers {
                guard kind == "read" || kind == "write" else {
                    throw bad("\(type): unknown member \"\(kind)\" (a type has \"read\" and \"write\")")
                }
                guard case .string(let text) = text else { throw bad("\(type).\(kind): expected a string") }
                let predicate = try predicate(text, type: type, kind: kind)
                if kind == "read" {
                    rules.read = text
                    rules.readPredicate = predicate
                } else {
                    rules.write = text
                    rules.writePredicate = predicate
                }
            }
            types[type] = rules
        }
        return SpaceRules(types: types)
    }

    private static func predicate(_ text: String, type: String, kind: String) throws(SyncServerError)
        -> RulePredicate
    {
        guard text.utf8.count <= maximumRuleLength else {
            throw SyncServerError(.badRequest, "\(type)'s \(kind) rule is over \(maximumRuleLength) bytes")
        }
        do {
            return try RulePredicate.parse(text)
        } catch {
            throw SyncServerError(
                .badRequest, "\(type)'s \(kind) rule, column \(error.column): \(error.message): \(text)")
        }
    }

    /// The rules as JSON: types by name, `read` before `write`; `pretty` indents them.
    public func json(pretty: Bool = false) -> String {
        let members = types.sorted { $0.key < $1.key }.map { type, rules -> (key: String, value: JSONValue) in
            let kinds: [(key: String, value: JSONValue)] =
                [("read", rules.read), ("write", rules.write)].compactMap { kind, text in
                    text.map { (key: kind, value: .string($0)) }
                }
            return (key: type, value: .object(kinds))
        }
        return String(
            decoding: JSONValue.object(members).jsonBytes(options: pretty ? .pretty : .compact), as: UTF8.self)
    }

    /// Checks every rule against the space's schema: each type is the schema's, each key path
    /// names properties that exist, goes on only through links, takes a quantifier exactly when
    /// it goes through a list, and ends at a property the operand can be compared with.
    ///
    /// - Throws: ``SyncServerError`` `badRequest` naming the type, the rule and the problem.
    public func checked(against schema: SpaceSchema) throws(SyncServerError) {
        let byName = Dictionary(schema.types.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (type, rules) in types.sorted(by: { $0.key < $1.key }) {
            guard byName[type] != nil else {
                let known = byName.keys.sorted().joined(separator: ", ")
                throw SyncServerError(
                    .badRequest, "the rules name type \(type), which the space's schema does not have (it has \(known))"
                )
            }
            for (kind, predicate) in [("read", rules.readPredicate), ("write", rules.writePredicate)] {
                for comparison in predicate?.comparisons ?? [] {
                    if let problem = Self.problem(of: comparison, type: type, byName) {
                        throw SyncServerError(.badRequest, "\(type)'s \(kind) rule: \(comparison.text): \(problem)")
                    }
                }
            }
        }
    }

    /// What is wrong with a comparison of a predicate over a type, by the schema; nil: nothing.
    static func problem(
        of comparison: RuleComparison, type: String, _ byName: [String: SpaceSchema.ObjectType]
    ) -> String? {
        var current = type
        var throughList = false
        for (index, name) in comparison.path.enumerated() {
            guard let property = byName[current]?.properties.first(where: { $0.name == name }) else {
                return "\(current) has no property \(name)"
            }
            guard !property.isMap else { return "\(current).\(name) is a map: a rule does not read maps" }
            throughList = throughList || property.isList
            if index == comparison.path.count - 1 {
                if let problem = operandProblem(comparison.operand, property) { return problem }
                break
            }
            guard property.type == "link", let target = property.target else {
                return "\(current).\(name) is not a link: a key path goes on only through links"
            }
            current = target
        }
        if throughList && comparison.quantifier == .direct {
            return "the key path goes through a list: write ANY (or ALL, NONE) before it"
        }
        if !throughList && comparison.quantifier != .direct {
            return "\(comparison.quantifier.rawValue) needs a key path through a list"
        }
        return nil
    }

    private static func operandProblem(_ operand: RuleComparison.Operand, _ property: SpaceSchema.Property)
        -> String?
    {
        let fits: Bool
        switch operand {
        case .null: fits = true
        case _ where property.type == "mixed": fits = true
        case .user, .string: fits = property.type == "string"
        case .int: fits = ["int", "int8", "int16", "int32", "int64"].contains(property.type)
        case .bool: fits = property.type == "bool"
        }
        if fits { return nil }
        return "\(property.name) is \(property.type): a rule compares a string property with $user or a string, "
            + "an integer with an integer, a bool with true or false, an AnyValue (mixed) with any of them, "
            + "and any property (a link too) with nil"
    }

    /// The rules of a type; nil when the type has none (the roles alone decide).
    func rules(for type: String) -> TypeRules? { types[type] }

    /// Whether the user may pull the object (of a type with rules).
    func mayRead(
        _ type: String, _ values: [String: JSONValue], user: String,
        resolve: (SpaceObjectName) -> [String: JSONValue]?
    ) -> Bool {
        guard let rules = types[type] else { return true }
        return rules.readPredicate?.allows(values, user: user, resolve: resolve) ?? false
    }
}
