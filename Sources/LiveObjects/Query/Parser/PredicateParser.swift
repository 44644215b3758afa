import LiveObjectsStore

/// Parses predicate strings in the style of `NSPredicate` into a ``PredicateSyntax`` tree.
///
/// ```swift
/// let tree = try PredicateParser.parse("ANY dogs.name BEGINSWITH[c] %@ AND age > $1",
///                                      arguments: ["r", 30])
/// ```
///
/// ## Grammar
///
/// - Predicates: comparisons, `TRUEPREDICATE`, `FALSEPREDICATE`, joined with `AND`/`&&`,
///   `OR`/`||` (`AND` binds tighter), negated with `NOT`/`!`, grouped with parentheses.
/// - Comparisons: `lhs op rhs` with `==`/`=`, `!=`/`<>`, `<`, `<=`/`=<`, `>`, `>=`/`=>`,
///   `BETWEEN {lower, upper}`, `IN`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`; any operator
///   may be followed by `[c]`, `[d]` or `[cd]`. The left-hand side may be preceded by `ANY`
///   (or `SOME`), `ALL` or `NONE`.
/// - Expressions: key paths (`owner.address.city`, `#in` for a property named like a keyword,
///   `SELF`), collection operators (`dogs.@count`, `dogs.@max.age`, `name.@size`; `@min`,
///   `@max`, `@sum`, `@avg` may be followed by a property), `SUBQUERY(dogs, $d, $d.age > 3)`
///   followed by a collection operator, literals (integers, also `-5`, `0x1F`, `0b101`, `0o17`;
///   floating point `2.5`, `1e-3`; strings in `'…'` or `"…"` with the escapes `\\ \' \" \n \r
///   \t \0 \uXXXX \u{X…}`; `TRUE`/`FALSE`/`YES`/`NO`; `NIL`/`NULL`), aggregates of constants
///   `{1, 2, 3}`, and arguments.
/// - Keywords are case-insensitive; property names are not.
///
/// ## Arguments
///
/// Arguments are substituted while parsing, so the tree holds no placeholder:
/// - `$0`, `$1`, … name an argument by position and become `.value(argument)`. They may be
///   used in any order and more than once.
/// - `%@`, `%d` (or `%i`), `%f` and `%K` each take the next argument in order, counting only
///   `%` placeholders. `%@` accepts any value, `%d` an `.int`, `%f` a `.double` or `.float`
///   (an `.int` is converted to `.double`). `%K` takes a `.string` holding a key path such as
///   `"owner.name"` or `"dogs.@count"` and becomes that key path.
/// - An argument may be a `.list`, for `IN $0` or `BETWEEN %@` (two elements).
/// - Unused arguments are ignored; a missing one is an error.
///
/// ## Limits
///
/// Input longer than ``maxInputLength`` UTF-8 bytes, nested deeper than ``maxNestingDepth``
/// (counting every `(`, `NOT`/`!`, `SUBQUERY` and `{` that is open at once), or with more than
/// ``maxSubqueryDepth`` nested `SUBQUERY`s, is refused with a
/// ``LiveObjectsError/Code/limitExceeded`` error. Parentheses, `NOT` and `{…}` are read with
/// explicit stacks; only `SUBQUERY` recurses, so the parser's stack use is bounded by
/// ``maxSubqueryDepth`` whatever the input. Time is linear in the input length.
///
/// ## Errors
///
/// Every failure is a ``LiveObjectsError`` with code ``LiveObjectsError/Code/invalidQuery`` (or
/// `limitExceeded`) whose message says what was expected and what was found, followed by the
/// column, like `expected a comparison operator … but found end of input at column 5`; its
/// ``LiveObjectsError/queryLocation`` holds the text, line and column.
package enum PredicateParser {
    /// The deepest nesting accepted: parentheses, `NOT`, `SUBQUERY` and `{…}` open at once.
    package static let maxNestingDepth = 256
    /// The deepest nesting of `SUBQUERY` inside `SUBQUERY` accepted. `SUBQUERY` is the only
    /// construct the parser reads by recursion, so this bounds the parser's stack use; each
    /// level also counts towards ``maxNestingDepth``.
    package static let maxSubqueryDepth = 16
    /// The longest predicate accepted, in UTF-8 bytes (1 MiB).
    package static let maxInputLength = 1 << 20
    /// The most property names one key path may have, before and after a collection operator
    /// together (`owner.dogs.@max.age` has three).
    static let maxKeyPathLength = 256

    /// Parses a predicate.
    ///
    /// - Parameters:
    ///   - text: The predicate.
    ///   - arguments: The values of `$0`, `$1`, … and of `%@`, `%d`, `%f`, `%K` (see the type's
    ///     documentation).
    /// - Throws: ``LiveObjectsError`` with code `invalidQuery`, or `limitExceeded` when the text
    ///   is too long or nested too deeply.
    package static func parse(_ text: String, arguments: [PropertyValue] = []) throws(LiveObjectsError)
        -> PredicateSyntax
    {
        do throws(PredicateSyntaxFailure) {
            guard text.utf8.count <= maxInputLength else {
                throw PredicateSyntaxFailure(
                    "expected a predicate of at most \(maxInputLength) bytes but found "
                        + "\(text.utf8.count) bytes",
                    at: 0, code: .limitExceeded)
            }
            var state = try PredicateParserState(text: text, arguments: arguments)
            let predicate = try state.parsePredicate()
            guard case .end = state.token.kind else {
                throw state.failure(expected: "AND, OR or end of input")
            }
            return predicate
        } catch {
            throw error.liveObjectsError(text: text)
        }
    }

    /// Makes the error for a problem at a UTF-8 offset of a predicate: the message gets
    /// `at column N` (and the line when the text has several), and the error carries the
    /// location. For use by later stages (such as compiling a key path against a schema) that
    /// find problems at a ``KeyPathSyntax/offset`` or ``ComparisonSyntax/offset``.
    package static func error(
        _ code: LiveObjectsError.Code = .invalidQuery, _ message: String, at utf8Offset: Int,
        in text: String
    ) -> LiveObjectsError {
        PredicateSyntaxFailure(message, at: utf8Offset, code: code).liveObjectsError(text: text)
    }
}

extension PredicateSyntaxFailure {
    func liveObjectsError(text: String) -> LiveObjectsError {
        let location = QueryErrorLocation(text: text, utf8Offset: offset)
        let place =
            location.line > 1 || text.utf8.contains(UInt8(ascii: "\n"))
            ? "line \(location.line), column \(location.column)" : "column \(location.column)"
        var error = LiveObjectsError(code, "\(message) at \(place)")
        error.queryLocation = location
        return error
    }
}

/// One open group of the iterative predicate parser: the operands of its `OR` chain, the
/// operands of the `AND` chain being read, and the `NOT`s written before its `(`.
private struct GroupFrame {
    var orOperands: [PredicateSyntax] = []
    var andOperands: [PredicateSyntax] = []
    var nots: Int
    var openOffset: Int

    mutating func closeAndChain() {
        orOperands.append(andOperands.count == 1 ? andOperands[0] : .and(andOperands))
        andOperands = []
    }

    mutating func finish() -> PredicateSyntax {
        closeAndChain()
        return orOperands.count == 1 ? orOperands[0] : .or(orOperands)
    }
}

/// The start of a key path being read: a key path, or a `SUBQUERY` (which must be followed by
/// a collection operator).
private enum PathBase {
    case keyPath(KeyPathSyntax)
    case subquery(ExpressionSyntax)
}

/// The parser's state while reading one predicate.
struct PredicateParserState {
    private var lexer: PredicateLexer
    private let text: String
    private(set) var token: PredicateToken
    private let arguments: [PropertyValue]
    private var nextSequentialArgument = 0
    private var depth = 0
    private var subqueryDepth = 0
    private var boundVariables: [String] = []

    init(text: String, arguments: [PropertyValue]) throws(PredicateSyntaxFailure) {
        self.text = text
        self.arguments = arguments
        lexer = PredicateLexer(text)
        token = PredicateToken(kind: .end, offset: 0, length: 0)
        token = try lexer.next()
    }

    // MARK: Helpers

    private mutating func advance() throws(PredicateSyntaxFailure) {
        token = try lexer.next()
    }

    private func isSymbol(_ symbol: PredicateSymbol) -> Bool {
        token.kind == .symbol(symbol)
    }

    private func isKeyword(_ keyword: PredicateKeyword) -> Bool {
        token.kind == .keyword(keyword)
    }

    /// "expected X but found <current token>", at the current token.
    func failure(expected: String) -> PredicateSyntaxFailure {
        var found = token.kind.errorDescription
        if case .keyword(let keyword) = token.kind, !Self.operatorKeywords.contains(keyword) {
            found += " (write #\(keyword.rawValue.lowercased()) for a property with that name)"
        }
        return PredicateSyntaxFailure("expected \(expected) but found \(found)", at: token.offset)
    }

    private static let operatorKeywords: Set<PredicateKeyword> = [
        .and, .or, .not, .between, .in, .beginsWith, .endsWith, .contains, .like, .matches,
    ]

    private mutating func expect(_ symbol: PredicateSymbol, _ expected: String) throws(PredicateSyntaxFailure) {
        guard isSymbol(symbol) else { throw failure(expected: expected) }
        try advance()
    }

    /// Opens one level of nesting at `offset`, failing past the limit.
    private mutating func enter(at offset: Int) throws(PredicateSyntaxFailure) {
        depth += 1
        if depth > PredicateParser.maxNestingDepth {
            throw PredicateSyntaxFailure(
                "expected at most \(PredicateParser.maxNestingDepth) levels of nesting (parentheses, "
                    + "NOT, SUBQUERY and {…}) but found more",
                at: offset, code: .limitExceeded)
        }
    }

    private func column(of offset: Int) -> Int {
        QueryErrorLocation(text: text, utf8Offset: offset).column
    }

    // MARK: Predicates

    /// Reads a predicate up to the first token that cannot continue it (end of input, or a `)`
    /// closing an enclosing `SUBQUERY`). Parentheses and `NOT` are handled with an explicit
    /// stack, so this does not recurse for them.
    mutating func parsePredicate() throws(PredicateSyntaxFailure) -> PredicateSyntax {
        var frames = [GroupFrame(nots: 0, openOffset: token.offset)]
        while true {
            // An operand: NOTs, then a '(' or a simple predicate.
            var nots = 0
            while isKeyword(.not) || isSymbol(.bang) {
                try enter(at: token.offset)
                nots += 1
                try advance()
            }
            if isSymbol(.leftParen) {
                try enter(at: token.offset)
                frames.append(GroupFrame(nots: nots, openOffset: token.offset))
                try advance()
                continue
            }
            var operand = try parseSimplePredicate()
            operand = Self.negated(operand, times: nots)
            depth -= nots

            // After an operand: AND, OR, ')' or the end of this predicate.
            while true {
                if isKeyword(.and) || isSymbol(.and) {
                    frames[frames.count - 1].andOperands.append(operand)
                    try advance()
                    break
                }
                if isKeyword(.or) || isSymbol(.or) {
                    frames[frames.count - 1].andOperands.append(operand)
                    frames[frames.count - 1].closeAndChain()
                    try advance()
                    break
                }
                frames[frames.count - 1].andOperands.append(operand)
                let group = frames[frames.count - 1].finish()
                guard frames.count > 1 else { return group }
                guard isSymbol(.rightParen) else {
                    let open = frames[frames.count - 1].openOffset
                    throw failure(expected: "AND, OR or ')' to close the '(' at column \(column(of: open))")
                }
                try advance()
                let frame = frames.removeLast()
                depth -= 1 + frame.nots
                operand = Self.negated(group, times: frame.nots)
            }
        }
    }

    private static func negated(_ predicate: PredicateSyntax, times: Int) -> PredicateSyntax {
        var result = predicate
        for _ in 0..<times { result = .not(result) }
        return result
    }

    /// `TRUEPREDICATE`, `FALSEPREDICATE` or a comparison.
    private mutating func parseSimplePredicate() throws(PredicateSyntaxFailure) -> PredicateSyntax {
        if isKeyword(.truePredicate) || isKeyword(.falsePredicate) {
            let value = isKeyword(.truePredicate)
            try advance()
            return .constant(value)
        }
        return .comparison(try parseComparison())
    }

    private mutating func parseComparison() throws(PredicateSyntaxFailure) -> ComparisonSyntax {
        let start = token.offset
        var quantifier = Quantifier.direct
        switch token.kind {
        case .keyword(.any), .keyword(.some): quantifier = .any
        case .keyword(.all): quantifier = .all
        case .keyword(.none): quantifier = .none
        default: break
        }
        if quantifier != .direct {
            let keyword = token.kind.errorDescription
            try advance()
            let lhsToken = token
            let lhs = try parseExpression(expected: "a key path")
            guard case .keyPath = lhs else {
                throw PredicateSyntaxFailure(
                    "expected a key path after \(keyword) but found \(lhsToken.kind.errorDescription)",
                    at: lhsToken.offset)
            }
            return try parseComparisonRest(quantifier, lhs, start: start)
        }
        let lhs = try parseExpression(
            expected: "a predicate (a comparison, TRUEPREDICATE, FALSEPREDICATE, NOT or '(')")
        return try parseComparisonRest(.direct, lhs, start: start)
    }

    private mutating func parseComparisonRest(
        _ quantifier: Quantifier, _ lhs: ExpressionSyntax, start: Int
    ) throws(PredicateSyntaxFailure) -> ComparisonSyntax {
        let op: ComparisonOperator
        switch token.kind {
        case .symbol(.equal): op = .equal
        case .symbol(.notEqual): op = .notEqual
        case .symbol(.less): op = .lessThan
        case .symbol(.lessOrEqual): op = .lessThanOrEqual
        case .symbol(.greater): op = .greaterThan
        case .symbol(.greaterOrEqual): op = .greaterThanOrEqual
        case .keyword(.between): op = .between
        case .keyword(.in): op = .in
        case .keyword(.beginsWith): op = .beginsWith
        case .keyword(.endsWith): op = .endsWith
        case .keyword(.contains): op = .contains
        case .keyword(.like): op = .like
        // Not a keyword, so that a property may still be called `text`.
        case .identifier(let name) where name.uppercased() == "TEXT": op = .text
        case .keyword(.matches):
            throw PredicateSyntaxFailure(
                "expected a comparison operator but found MATCHES, which is not supported "
                    + "(regular expressions are not available; LIKE takes * and ? wildcards)",
                at: token.offset)
        default:
            throw failure(
                expected: "a comparison operator (==, !=, <, <=, >, >=, BETWEEN, IN, BEGINSWITH, "
                    + "ENDSWITH, CONTAINS, LIKE or TEXT)")
        }
        try advance()
        var options = ComparisonOptions()
        if isSymbol(.leftBracket) {
            try advance()
            guard case .identifier(let letters) = token.kind,
                letters.allSatisfy({ "cCdD".contains($0) })
            else {
                throw failure(expected: "comparison options c, d or cd")
            }
            for letter in letters {
                options.insert(letter == "c" || letter == "C" ? .caseInsensitive : .diacriticInsensitive)
            }
            try advance()
            try expect(.rightBracket, "']' after the comparison options")
        }
        let rhsToken = token
        let rhs = try parseExpression(expected: "a value or key path after \(op.rawValue)")
        if op == .between {
            guard case .value(.list(let bounds)) = rhs else {
                throw PredicateSyntaxFailure(
                    "expected '{lower, upper}' or a list argument after BETWEEN but found "
                        + rhsToken.kind.errorDescription,
                    at: rhsToken.offset)
            }
            guard bounds.count == 2 else {
                throw PredicateSyntaxFailure(
                    "expected exactly two values (lower and upper bound) after BETWEEN but found "
                        + "\(bounds.count)",
                    at: rhsToken.offset)
            }
        }
        return ComparisonSyntax(quantifier, lhs, op, options, rhs, offset: start)
    }

    // MARK: Expressions

    /// Reads a value, key path, collection operation or `SUBQUERY`. `expected` describes what
    /// the caller wants, for the error message when none is there.
    ///
    /// This function is on the recursive path of nested `SUBQUERY`s, so it only dispatches: the
    /// work is done in helpers, which keeps its stack frame small.
    private mutating func parseExpression(expected: String) throws(PredicateSyntaxFailure) -> ExpressionSyntax {
        switch token.kind {
        case .identifier, .variable, .keyword(.self):
            return try parseKeyPath()
        case .keyword(.subquery):
            return try parseSubquery()
        case .symbol(.leftBrace):
            return .value(try parseAggregate())
        case .placeholder:
            return try parsePlaceholder()
        default:
            return .value(try parseConstant(expected: expected))
        }
    }

    /// A literal or a positional argument.
    private mutating func parseConstant(expected: String) throws(PredicateSyntaxFailure) -> PropertyValue {
        let start = token.offset
        switch token.kind {
        case .integer(let magnitude):
            try advance()
            return .int(try Self.signed(magnitude, negative: false, at: start))
        case .float(let value):
            try advance()
            return .double(value)
        case .decimal(let value):
            try advance()
            return .decimal(value)
        case .objectID(let value):
            try advance()
            return .objectID(value)
        case .symbol(.minus):
            try advance()
            switch token.kind {
            case .integer(let magnitude):
                try advance()
                return .int(try Self.signed(magnitude, negative: true, at: start))
            case .float(let value):
                try advance()
                return .double(-value)
            case .decimal(let value):
                try advance()
                return .decimal(-value)
            default:
                throw failure(expected: "a number after '-'")
            }
        case .string(let value):
            try advance()
            return .string(value)
        case .keyword(.true), .keyword(.yes):
            try advance()
            return .bool(true)
        case .keyword(.false), .keyword(.no):
            try advance()
            return .bool(false)
        case .keyword(.nil), .keyword(.null):
            try advance()
            return .null
        case .argument(let index):
            guard index < arguments.count else {
                throw PredicateSyntaxFailure(
                    "expected an argument for $\(index) but found only \(arguments.count) "
                        + (arguments.count == 1 ? "argument" : "arguments"),
                    at: start)
            }
            try advance()
            return arguments[index]
        default:
            throw failure(expected: expected)
        }
    }

    /// `%@`, `%d`, `%i`, `%f` or `%K`, taking the next argument.
    private mutating func parsePlaceholder() throws(PredicateSyntaxFailure) -> ExpressionSyntax {
        guard case .placeholder(let letter) = token.kind else { throw failure(expected: "a placeholder") }
        let start = token.offset
        let index = nextSequentialArgument
        guard index < arguments.count else {
            throw PredicateSyntaxFailure(
                "expected an argument for %\(letter) (argument \(index + 1)) but found only "
                    + "\(arguments.count) " + (arguments.count == 1 ? "argument" : "arguments"),
                at: start)
        }
        nextSequentialArgument += 1
        let argument = arguments[index]
        func mismatch(_ wanted: String) -> PredicateSyntaxFailure {
            PredicateSyntaxFailure(
                "expected \(wanted) for %\(letter) (argument \(index + 1)) but found \(argument)",
                at: start)
        }
        switch letter {
        case "K":
            guard case .string(let path) = argument else { throw mismatch("a key path string") }
            let parts = try Self.keyPathParts(fromArgument: path, at: start)
            try advance()
            return try parsePathSuffix(
                .keyPath(KeyPathSyntax([parts[0]], offset: start)), pending: Array(parts.dropFirst()),
                pendingOffset: start)
        case "d", "i":
            guard case .int = argument else { throw mismatch("an integer") }
        case "f":
            switch argument {
            case .double, .float: break
            case .int(let i):
                try advance()
                return .value(.double(Double(i)))
            default: throw mismatch("a floating-point number")
            }
        default:
            break
        }
        try advance()
        return .value(argument)
    }

    /// A key path starting with a name, a `$variable` or `SELF`, and its suffix.
    private mutating func parseKeyPath() throws(PredicateSyntaxFailure) -> ExpressionSyntax {
        let start = token.offset
        let path: KeyPathSyntax
        switch token.kind {
        case .variable(let name):
            guard boundVariables.contains(name) else {
                throw PredicateSyntaxFailure(
                    "expected a variable declared by an enclosing SUBQUERY but found $\(name)", at: start)
            }
            path = KeyPathSyntax(variable: name, [], offset: start)
        case .identifier(let name):
            path = KeyPathSyntax([name], offset: start)
        default:
            path = KeyPathSyntax([], offset: start)
        }
        try advance()
        return try parsePathSuffix(.keyPath(path))
    }

    private static func signed(_ magnitude: UInt64, negative: Bool, at offset: Int) throws(PredicateSyntaxFailure)
        -> Int64
    {
        if negative {
            if magnitude <= UInt64(Int64.max) { return -Int64(magnitude) }
            if magnitude == UInt64(Int64.max) + 1 { return .min }
        } else if magnitude <= UInt64(Int64.max) {
            return Int64(magnitude)
        }
        throw PredicateSyntaxFailure(
            "expected an integer between \(Int64.min) and \(Int64.max) but found "
                + (negative ? "-" : "") + "\(magnitude)",
            at: offset)
    }

    /// `{a, b, …}` of constants, as a `.list`. Nested braces are read with an explicit stack,
    /// not by recursion.
    private mutating func parseAggregate() throws(PredicateSyntaxFailure) -> PropertyValue {
        var lists: [[PropertyValue]] = []
        var justOpened = false
        var expectingElement = true
        while true {
            if expectingElement {
                if isSymbol(.leftBrace) {
                    try enter(at: token.offset)
                    try advance()
                    lists.append([])
                    justOpened = true
                    continue
                }
                if !(justOpened && isSymbol(.rightBrace)) {
                    let elementToken = token
                    let element = try parseExpression(expected: "a constant value in '{…}'")
                    guard case .value(let value) = element else {
                        throw PredicateSyntaxFailure(
                            "expected a constant value in '{…}' but found "
                                + elementToken.kind.errorDescription,
                            at: elementToken.offset)
                    }
                    lists[lists.count - 1].append(value)
                    expectingElement = false
                    justOpened = false
                    continue
                }
            } else if isSymbol(.comma) {
                try advance()
                expectingElement = true
                continue
            } else if !isSymbol(.rightBrace) {
                throw failure(expected: "',' or '}'")
            }
            // A '}' closing the innermost list.
            try advance()
            depth -= 1
            let list = PropertyValue.list(lists.removeLast())
            if lists.isEmpty { return list }
            lists[lists.count - 1].append(list)
            expectingElement = false
            justOpened = false
        }
    }

    /// The parts of a key path given as a `%K` argument: names separated by dots, possibly
    /// with one collection operator (`"dogs.@max.age"`).
    private static func keyPathParts(fromArgument path: String, at offset: Int) throws(PredicateSyntaxFailure)
        -> [String]
    {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !parts.contains(where: \.isEmpty), !parts[0].hasPrefix("@") else {
            throw PredicateSyntaxFailure(
                "expected a key path such as \"owner.name\" for %K but found \(PropertyValue.string(path))",
                at: offset)
        }
        return parts
    }

    /// Reads the `.name` and `.@operator` parts after the start of a key path or after a
    /// `SUBQUERY(…)`. `pending` are parts already known (from a `%K` argument at
    /// `pendingOffset`), taken before any token.
    private mutating func parsePathSuffix(
        _ base: PathBase, pending: [String] = [], pendingOffset: Int = 0
    ) throws(PredicateSyntaxFailure) -> ExpressionSyntax {
        var path = KeyPathSyntax([])
        var collection: ExpressionSyntax?
        let isSubquery: Bool
        switch base {
        case .keyPath(let keyPath):
            path = keyPath
            isSubquery = false
        case .subquery(let subquery):
            collection = subquery
            isSubquery = true
        }
        var op: CollectionOperator?
        var property: [String] = []

        /// Adds one part; `found` describes it for error messages.
        func add(_ part: String, isOperator: Bool, at offset: Int, found: String) throws(PredicateSyntaxFailure) {
            if !isOperator && path.components.count + property.count >= PredicateParser.maxKeyPathLength {
                throw PredicateSyntaxFailure(
                    "expected at most \(PredicateParser.maxKeyPathLength) property names in a key path but found more",
                    at: offset, code: .limitExceeded)
            }
            if isOperator, op == nil, !isSubquery,
                KeyPathSyntax.mapSteps.contains("@" + part) || "@" + part == KeyPathSyntax.typeStep
            {
                // `settings.@keys`, `settings.@values`, `payload.@type`: steps of the path, not
                // operators.
                path.components.append("@" + part)
                return
            }
            if isOperator {
                guard let newOp = CollectionOperator(rawValue: part) else {
                    throw PredicateSyntaxFailure(
                        "expected @count, @size, @min, @max, @sum or @avg but found \(found)", at: offset)
                }
                guard op == nil else {
                    throw PredicateSyntaxFailure(
                        "expected a property name but found \(found) (one collection operator per key path)",
                        at: offset)
                }
                if collection == nil { collection = .keyPath(path) }
                op = newOp
            } else if let op {
                guard op.takesProperty else {
                    throw PredicateSyntaxFailure(
                        "expected nothing after @\(op.rawValue) but found \(found)", at: offset)
                }
                property.append(part)
            } else if isSubquery {
                throw PredicateSyntaxFailure(
                    "expected a collection operator such as @count after 'SUBQUERY(…).' but found \(found)",
                    at: offset)
            } else {
                path.components.append(part)
            }
        }

        for part in pending {
            let isOperator = part.hasPrefix("@")
            try add(
                isOperator ? String(part.dropFirst()) : part, isOperator: isOperator, at: pendingOffset,
                found: "'\(part)' in the %K argument")
        }
        while isSymbol(.dot) || isSymbol(.leftBracket) {
            if isSymbol(.leftBracket) {
                let (component, offset) = try parseSubscript()
                try add(component, isOperator: false, at: offset, found: "'[…]'")
                continue
            }
            try advance()
            switch token.kind {
            case .identifier(let name):
                try add(name, isOperator: false, at: token.offset, found: token.kind.errorDescription)
            case .collectionOperator(let name):
                try add(name, isOperator: true, at: token.offset, found: token.kind.errorDescription)
            default:
                throw failure(
                    expected: isSubquery && op == nil
                        ? "a collection operator such as @count after 'SUBQUERY(…).'"
                        : "a property name or collection operator after '.'")
            }
            try advance()
        }
        if let op, let collection {
            return .collectionOperation(op, collection: collection, property: property)
        }
        if isSubquery {
            throw failure(expected: "'.@count' or another collection operator after SUBQUERY(…)")
        }
        return .keyPath(path)
    }

    /// A subscript after a key path, from its `[`: `settings['theme']`, a map's value by key;
    /// `payload[0]` and `payload[*]`, an AnyValue's element by position or every element. The
    /// key path component it is, and where its content starts.
    private mutating func parseSubscript() throws(PredicateSyntaxFailure) -> (String, Int) {
        try advance()
        let component: String
        switch token.kind {
        case .string(let key): component = KeyPathSyntax.mapKeyComponent(key)
        case .integer(let index) where index <= UInt64(Int.max):
            component = KeyPathSyntax.indexComponent(Int(index))
        case .symbol(.star): component = KeyPathSyntax.everyElementComponent
        default: throw failure(expected: "a string, an index or '*' in '[…]'")
        }
        let offset = token.offset
        try advance()
        try expect(.rightBracket, "']' after a key, an index or '*'")
        return (component, offset)
    }

    /// `SUBQUERY(collection, $variable, predicate)` and the collection operator after it.
    private mutating func parseSubquery() throws(PredicateSyntaxFailure) -> ExpressionSyntax {
        try enter(at: token.offset)
        subqueryDepth += 1
        if subqueryDepth > PredicateParser.maxSubqueryDepth {
            throw PredicateSyntaxFailure(
                "expected at most \(PredicateParser.maxSubqueryDepth) nested SUBQUERYs but found more",
                at: token.offset, code: .limitExceeded)
        }
        try advance()
        try expect(.leftParen, "'(' after SUBQUERY")
        let collectionToken = token
        let collection = try parseExpression(expected: "a key path as the collection of SUBQUERY")
        guard case .keyPath(let collectionPath) = collection, !collectionPath.components.isEmpty else {
            throw PredicateSyntaxFailure(
                "expected a key path as the collection of SUBQUERY but found "
                    + collectionToken.kind.errorDescription,
                at: collectionToken.offset)
        }
        try expect(.comma, "',' after the collection of SUBQUERY")
        guard case .variable(let variable) = token.kind else {
            throw failure(expected: "a variable such as $x as the second part of SUBQUERY")
        }
        try advance()
        try expect(.comma, "',' after the variable of SUBQUERY")
        boundVariables.append(variable)
        let predicate = try parsePredicate()
        boundVariables.removeLast()
        try expect(.rightParen, "AND, OR or ')' to close SUBQUERY")
        depth -= 1
        subqueryDepth -= 1
        let subquery = ExpressionSyntax.subquery(
            collection: collectionPath, variable: variable, predicate: predicate)
        return try parsePathSuffix(.subquery(subquery))
    }
}
