import LiveObjectsJSON

// A rule's predicate (docs/SYNC-PROTOCOL.md, "Rules"): the part of the query language of
// docs/QUERIES.md that a rule needs, read on the server. Every rule is also a valid query of
// that language, with `$user` standing for the signed-in user's name:
//
//     owner == $user OR ANY board.members == $user
//
// Comparisons are `==` (or `=`) and `!=` (or `<>`) of a key path with `$user`, a string, an
// integer, `true`, `false` or `nil`; `$user IN path` is `ANY path == $user`; `AND` (`&&`), `OR`
// (`||`), `NOT` (`!`), parentheses, `TRUEPREDICATE` and `FALSEPREDICATE` combine them. A key path
// goes through links (`board.members`); one that goes through a list (of links or of values)
// takes `ANY`/`SOME`, `ALL` or `NONE`.

/// A rule's predicate, parsed.
indirect enum RulePredicate: Hashable, Sendable {
    case constant(Bool)
    case not(RulePredicate)
    case and([RulePredicate])
    case or([RulePredicate])
    case comparison(RuleComparison)

    /// The most properties in one key path (so a rule reads at most three linked objects deep).
    static let maximumPathLength = 4
    /// The most nesting of parentheses and `NOT`.
    static let maximumDepth = 32

    /// Parses a rule.
    ///
    /// - Throws: ``RuleSyntaxError``, with the column (in characters, from 1) of the problem.
    static func parse(_ text: String) throws(RuleSyntaxError) -> RulePredicate {
        var parser = RuleParser(text)
        let predicate = try parser.parseOr(depth: 0)
        guard parser.token == .end, parser.lexError == nil else {
            throw parser.failure("expected AND, OR or the end of the rule")
        }
        return predicate
    }

    /// Whether the object whose values are given satisfies the predicate for a user.
    ///
    /// - Parameter resolve: The values of a linked object; nil for one that does not exist or
    ///   is deleted (a to-one link to it reads as nil, a list leaves it out).
    func allows(
        _ values: [String: JSONValue], user: String, resolve: (SpaceObjectName) -> [String: JSONValue]?
    ) -> Bool {
        switch self {
        case .constant(let value): value
        case .not(let operand): !operand.allows(values, user: user, resolve: resolve)
        case .and(let operands): operands.allSatisfy { $0.allows(values, user: user, resolve: resolve) }
        case .or(let operands): operands.contains { $0.allows(values, user: user, resolve: resolve) }
        case .comparison(let comparison): comparison.holds(values, user: user, resolve: resolve)
        }
    }

    /// Every comparison of the predicate.
    var comparisons: [RuleComparison] {
        switch self {
        case .constant: []
        case .not(let operand): operand.comparisons
        case .and(let operands), .or(let operands): operands.flatMap(\.comparisons)
        case .comparison(let comparison): [comparison]
        }
    }
}

/// One comparison of a rule: `[ANY|ALL|NONE] path ==|!= operand`.
struct RuleComparison: Hashable, Sendable {
    enum Quantifier: String, Hashable, Sendable {
        case direct = "", any = "ANY", all = "ALL", none = "NONE"
    }

    /// What a key path is compared with.
    enum Operand: Hashable, Sendable {
        case user
        case string(String)
        case int(Int64)
        case bool(Bool)
        case null
    }

    var quantifier: Quantifier
    var path: [String]
    /// `==` (true) or `!=` (false).
    var equal: Bool
    var operand: Operand

    func holds(_ values: [String: JSONValue], user: String, resolve: (SpaceObjectName) -> [String: JSONValue]?)
        -> Bool
    {
        // Without a quantifier the path ends at one value: a mixed property's nested list is
        // that value, not its elements (a list property always takes a quantifier).
        var leaves = Self.leaves(path[...], values, listElements: quantifier != .direct, resolve: resolve)
        // Through a list, a nil link or a missing property adds no element.
        if quantifier != .direct { leaves.removeAll { $0 == nil } }
        let test = { (leaf: JSONValue?) in matches(leaf, user: user) == equal }
        switch quantifier {
        case .direct: return test(leaves.first ?? nil)
        case .any: return leaves.contains(where: test)
        case .all: return leaves.allSatisfy(test)
        case .none: return !leaves.contains(where: test)
        }
    }

    /// The values at the end of a key path: one for a path of to-one links (nil where a link or
    /// the property is nil), each element for a path through lists (and, with `listElements`,
    /// of a list at its end).
    static func leaves(
        _ path: ArraySlice<String>, _ values: [String: JSONValue], listElements: Bool = true,
        resolve: (SpaceObjectName) -> [String: JSONValue]?
    ) -> [JSONValue?] {
        guard let name = path.first else { return [] }
        let value = values[name]
        if path.count == 1 {
            if listElements, case .array(let items)? = value?["list"] { return items }
            if case .array(let items)? = value?["refs"] { return items.map { .object([(key: "ref", value: $0)]) } }
            // A link to an object deleted or not on the server reads as nil.
            if let reference = value?["ref"], let target = SpaceObjectName(reference: reference), resolve(target) == nil
            {
                return [nil]
            }
            return [value]
        }
        let rest = path.dropFirst()
        if case .array(let items)? = value?["refs"] {
            return items.flatMap { reference -> [JSONValue?] in
                guard let target = SpaceObjectName(reference: reference), let linked = resolve(target) else {
                    return []
                }
                return leaves(rest, linked, listElements: listElements, resolve: resolve)
            }
        }
        guard let reference = value?["ref"], let target = SpaceObjectName(reference: reference),
            let linked = resolve(target)
        else { return [nil] }
        return leaves(rest, linked, listElements: listElements, resolve: resolve)
    }

    /// Whether a stored value (`{"string": "ann"}`; nil for none) equals the operand.
    func matches(_ leaf: JSONValue?, user: String) -> Bool {
        guard let leaf, case .object(let members) = leaf, let (tag, payload) = members.first, tag != "null" else {
            return operand == .null
        }
        switch (operand, tag) {
        case (.user, "string"): return payload.stringValue == user
        case (.string(let text), "string"): return payload.stringValue == text
        case (.int(let number), "int"): return payload.int64Value == number
        case (.bool(let flag), "bool"): return payload.boolValue == flag
        case (.null, _): return payload.isNull
        default: return false
        }
    }

    /// The comparison as the rule's text spells it.
    var text: String {
        let operandText: String
        switch operand {
        case .user: operandText = "$user"
        case .string(let text): operandText = JSONValue.string(text).description
        case .int(let number): operandText = String(number)
        case .bool(let flag): operandText = flag ? "true" : "false"
        case .null: operandText = "nil"
        }
        let prefix = quantifier == .direct ? "" : quantifier.rawValue + " "
        return "\(prefix)\(path.joined(separator: ".")) \(equal ? "==" : "!=") \(operandText)"
    }
}

/// Why a rule's text could not be read: the message and the column (from 1).
struct RuleSyntaxError: Error, Sendable {
    var message: String
    var column: Int
}

/// A recursive-descent reader of a rule's text.
private struct RuleParser {
    enum Token: Equatable {
        case word(String)
        case user
        case string(String)
        case int(Int64)
        case symbol(String)
        case end
    }

    let characters: [Character]
    var position = 0
    var token = Token.end
    var tokenStart = 0
    var lexError: RuleSyntaxError?

    init(_ text: String) {
        characters = Array(text)
        advance()
    }

    func failure(_ message: String) -> RuleSyntaxError {
        lexError ?? RuleSyntaxError(message: message, column: tokenStart + 1)
    }

    func isKeyword(_ word: String) -> Bool {
        if case .word(let found) = token { return found.uppercased() == word }
        return false
    }

    mutating func parseOr(depth: Int) throws(RuleSyntaxError) -> RulePredicate {
        guard depth <= RulePredicate.maximumDepth else { throw failure("the rule nests too deeply") }
        var operands = [try parseAnd(depth: depth)]
        while isKeyword("OR") || token == .symbol("||") {
            advance()
            operands.append(try parseAnd(depth: depth))
        }
        return operands.count == 1 ? operands[0] : .or(operands)
    }

    mutating func parseAnd(depth: Int) throws(RuleSyntaxError) -> RulePredicate {
        var operands = [try parseUnary(depth: depth)]
        while isKeyword("AND") || token == .symbol("&&") {
            advance()
            operands.append(try parseUnary(depth: depth))
        }
        return operands.count == 1 ? operands[0] : .and(operands)
    }

    mutating func parseUnary(depth: Int) throws(RuleSyntaxError) -> RulePredicate {
        if isKeyword("NOT") || token == .symbol("!") {
            guard depth < RulePredicate.maximumDepth else { throw failure("the rule nests too deeply") }
            advance()
            return .not(try parseUnary(depth: depth + 1))
        }
        if token == .symbol("(") {
            advance()
            let inner = try parseOr(depth: depth + 1)
            guard token == .symbol(")") else { throw failure("expected ')'") }
            advance()
            return inner
        }
        if isKeyword("TRUEPREDICATE") || isKeyword("FALSEPREDICATE") {
            defer { advance() }
            return .constant(isKeyword("TRUEPREDICATE"))
        }
        return .comparison(try parseComparison())
    }

    mutating func parseComparison() throws(RuleSyntaxError) -> RuleComparison {
        if token == .user {
            // `$user IN members`: ANY members == $user.
            advance()
            guard isKeyword("IN") else { throw failure("expected IN after $user (write $user IN members)") }
            advance()
            return RuleComparison(quantifier: .any, path: try parsePath(), equal: true, operand: .user)
        }
        var quantifier = RuleComparison.Quantifier.direct
        for (word, found) in [("ANY", .any), ("SOME", .any), ("ALL", .all), ("NONE", .none)]
            as [(String, RuleComparison.Quantifier)] where isKeyword(word)
        {
            quantifier = found
            advance()
            break
        }
        let path = try parsePath()
        let equal: Bool
        switch token {
        case .symbol("=="), .symbol("="): equal = true
        case .symbol("!="), .symbol("<>"): equal = false
        default:
            throw failure(
                "expected == or != (a rule compares a key path with $user, a string, an integer, a bool or nil)")
        }
        advance()
        return RuleComparison(quantifier: quantifier, path: path, equal: equal, operand: try parseOperand())
    }

    mutating func parsePath() throws(RuleSyntaxError) -> [String] {
        var path: [String] = []
        while true {
            guard case .word(let name) = token, !Self.reserved.contains(name.uppercased()) else {
                throw failure("expected a property name")
            }
            path.append(name)
            advance()
            guard token == .symbol(".") else { break }
            advance()
        }
        guard path.count <= RulePredicate.maximumPathLength else {
            throw failure("a key path of a rule has at most \(RulePredicate.maximumPathLength) properties")
        }
        return path
    }

    mutating func parseOperand() throws(RuleSyntaxError) -> RuleComparison.Operand {
        let operand: RuleComparison.Operand
        switch token {
        case .user: operand = .user
        case .string(let text): operand = .string(text)
        case .int(let number): operand = .int(number)
        case .word(let word) where ["TRUE", "FALSE"].contains(word.uppercased()):
            operand = .bool(word.uppercased() == "TRUE")
        case .word(let word) where ["NIL", "NULL"].contains(word.uppercased()): operand = .null
        default: throw failure("expected $user, a string, an integer, true, false or nil")
        }
        advance()
        return operand
    }

    static let reserved: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "TRUE", "FALSE", "NIL", "NULL", "TRUEPREDICATE",
        "FALSEPREDICATE",
    ]

    // MARK: Tokens

    mutating func advance() {
        while position < characters.count, characters[position].isWhitespace { position += 1 }
        tokenStart = position
        guard position < characters.count else {
            token = .end
            return
        }
        let character = characters[position]
        if character.isLetter || character == "_" {
            let start = position
            while position < characters.count,
                characters[position].isLetter || characters[position].isNumber
                    || characters[position] == "_"
            {
                position += 1
            }
            token = .word(String(characters[start..<position]))
        } else if character == "$" {
            position += 1
            let start = position
            while position < characters.count, characters[position].isLetter { position += 1 }
            let name = String(characters[start..<position])
            guard name == "user" else {
                lexError = RuleSyntaxError(
                    message: "a rule knows one variable, $user (the signed-in user's name), not $\(name)",
                    column: tokenStart + 1)
                token = .end
                return
            }
            token = .user
        } else if character == "'" || character == "\"" {
            readString(quote: character)
        } else if character.isASCII, character.isNumber || character == "-" {
            readInteger()
        } else {
            readSymbol()
        }
    }

    private mutating func readString(quote: Character) {
        position += 1
        var text = ""
        while position < characters.count, characters[position] != quote {
            if characters[position] == "\\", position + 1 < characters.count { position += 1 }
            text.append(characters[position])
            position += 1
        }
        guard position < characters.count else {
            lexError = RuleSyntaxError(message: "a string is not closed", column: tokenStart + 1)
            token = .end
            return
        }
        position += 1
        token = .string(text)
    }

    private mutating func readInteger() {
        let start = position
        position += 1
        while position < characters.count, characters[position].isASCII, characters[position].isNumber {
            position += 1
        }
        guard let number = Int64(String(characters[start..<position])) else {
            lexError = RuleSyntaxError(message: "expected a 64-bit integer", column: tokenStart + 1)
            token = .end
            return
        }
        token = .int(number)
    }

    private mutating func readSymbol() {
        let two = position + 1 < characters.count ? String(characters[position...position + 1]) : ""
        if ["==", "!=", "<>", "&&", "||"].contains(two) {
            position += 2
            token = .symbol(two)
            return
        }
        let one = String(characters[position])
        guard ["=", "!", "(", ")", "."].contains(one) else {
            lexError = RuleSyntaxError(
                message: "\"\(one)\" is not part of a rule (a rule compares with == and !=)", column: tokenStart + 1)
            token = .end
            return
        }
        position += 1
        token = .symbol(one)
    }
}
