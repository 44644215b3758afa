import Foundation
import LiveObjectsStore

/// A syntax error found while reading a predicate: what went wrong, and the UTF-8 offset in the
/// predicate text where it starts. `PredicateParser` turns it into a `LiveObjectsError`.
struct PredicateSyntaxFailure: Error {
    var code: LiveObjectsError.Code
    var message: String
    var offset: Int

    init(_ message: String, at offset: Int, code: LiveObjectsError.Code = .invalidQuery) {
        self.code = code
        self.message = message
        self.offset = offset
    }
}

/// A reserved word of the predicate language. Keywords are case-insensitive; a property whose
/// name is a keyword is written with a `#` in front (`#in`).
enum PredicateKeyword: String, CaseIterable {
    case and = "AND", or = "OR", not = "NOT"
    case between = "BETWEEN", `in` = "IN", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case contains = "CONTAINS", like = "LIKE", matches = "MATCHES"
    case any = "ANY", all = "ALL", none = "NONE", some = "SOME"
    case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case `true` = "TRUE", `false` = "FALSE", yes = "YES", no = "NO"
    case `nil` = "NIL", null = "NULL"
    case subquery = "SUBQUERY", `self` = "SELF"

    static let byName: [String: PredicateKeyword] = Dictionary(
        uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })
    static let maxLength = allCases.map(\.rawValue.utf8.count).max()!
}

/// Punctuation and operator symbols. The lexer folds the spelling variants: `=` is `==`, `<>` is
/// `!=`, `=<` is `<=` and `=>` is `>=`.
enum PredicateSymbol: String {
    case leftParen = "(", rightParen = ")", leftBrace = "{", rightBrace = "}"
    case leftBracket = "[", rightBracket = "]", comma = ",", dot = ".", minus = "-", star = "*"
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">"
    case greaterOrEqual = ">=", and = "&&", or = "||", bang = "!"
}

/// One token of a predicate.
struct PredicateToken {
    enum Kind: Equatable {
        /// The end of the input.
        case end
        /// A property name (`name`, or `#in` for a property named like a keyword).
        case identifier(String)
        /// A reserved word.
        case keyword(PredicateKeyword)
        /// An integer literal's magnitude (the sign is a separate `-`).
        case integer(UInt64)
        /// A floating-point literal.
        case float(Double)
        /// A decimal literal whose digits a `Double` does not keep (`0.1000000000000000000001`):
        /// its exact value.
        case decimal(Decimal)
        /// An `oid(…)` literal: an ``ObjectID`` from 24 hex digits.
        case objectID(ObjectID)
        /// A string literal, escapes resolved.
        case string(String)
        /// A positional argument `$0`, `$1`, …
        case argument(Int)
        /// A `SUBQUERY` variable `$name` (the name without `$`).
        case variable(String)
        /// `%@`, `%d`, `%i`, `%f` or `%K`: the letter after `%`.
        case placeholder(Character)
        /// `@count`, `@max`, …: the name after `@`.
        case collectionOperator(String)
        /// Punctuation or an operator.
        case symbol(PredicateSymbol)
    }

    var kind: Kind
    /// UTF-8 offset of the token's first byte.
    var offset: Int
    /// UTF-8 length of the token.
    var length: Int
}

extension PredicateToken.Kind {
    /// How an error message names the token: `'('`, `end of input`, `keyword AND`, …
    var errorDescription: String {
        switch self {
        case .end: return "end of input"
        case .identifier(let name): return "key path '\(Self.shortened(name))'"
        case .keyword(let keyword): return "keyword \(keyword.rawValue)"
        case .integer(let value): return "number \(value)"
        case .float(let value): return "number \(value)"
        case .decimal(let value): return "number \(value)"
        case .objectID(let value): return "oid(\(value.hexString))"
        case .string(let value): return "string \(ExpressionSyntax.quoted(Self.shortened(value)))"
        case .argument(let index): return "argument $\(index)"
        case .variable(let name): return "variable $\(Self.shortened(name))"
        case .placeholder(let letter): return "placeholder %\(letter)"
        case .collectionOperator(let name): return "collection operator @\(Self.shortened(name))"
        case .symbol(let symbol): return "'\(symbol.rawValue)'"
        }
    }

    static func shortened(_ text: String) -> String {
        text.count > 24 ? text.prefix(24) + "…" : text
    }
}

/// Splits a predicate into tokens, one at a time, reading its UTF-8 bytes.
///
/// Never recursive, and linear in the input length.
struct PredicateLexer {
    let bytes: [UInt8]
    private(set) var position = 0

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// Whether a key path component must be written with `#` because it is a keyword.
    static func isReservedWord(_ name: String) -> Bool {
        PredicateKeyword.byName[name.uppercased()] != nil
    }

    private func byte(at index: Int) -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    /// Reads the next token.
    mutating func next() throws(PredicateSyntaxFailure) -> PredicateToken {
        skipWhitespace()
        let start = position
        guard position < bytes.count else { return PredicateToken(kind: .end, offset: start, length: 0) }
        let kind = try readToken()
        return PredicateToken(kind: kind, offset: start, length: position - start)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            let b = bytes[position]
            if b == 0x20 || (b >= 0x09 && b <= 0x0D) {
                position += 1
            } else if b >= 0x80, let (scalar, length) = scalar(at: position),
                scalar.properties.isWhitespace
            {
                position += length
            } else {
                return
            }
        }
    }

    /// Decodes the scalar starting at a byte offset (the input came from a `String`, so it is
    /// valid UTF-8).
    private func scalar(at index: Int) -> (Unicode.Scalar, Int)? {
        guard index < bytes.count else { return nil }
        let lead = bytes[index]
        let length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        guard index + length <= bytes.count else { return nil }
        var value = length == 1 ? UInt32(lead) : UInt32(lead) & (0xFF >> (length + 1))
        for i in 1..<length { value = value << 6 | UInt32(bytes[index + i] & 0x3F) }
        return Unicode.Scalar(value).map { ($0, length) }
    }

    private static func isIdentifierStart(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || b == 0x5F
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    private static func isIdentifierContinue(_ b: UInt8) -> Bool {
        isIdentifierStart(b) || isDigit(b)
    }

    /// The length of the identifier character at `index`, or nil if there is none.
    private func identifierCharacter(at index: Int, first: Bool) -> Int? {
        guard let b = byte(at: index) else { return nil }
        if b < 0x80 {
            return (first ? Self.isIdentifierStart(b) : Self.isIdentifierContinue(b)) ? 1 : nil
        }
        guard let (scalar, length) = scalar(at: index) else { return nil }
        let ok = first ? scalar.properties.isXIDStart : scalar.properties.isXIDContinue
        return ok ? length : nil
    }

    /// Reads an identifier starting at `position` (which must be an identifier start).
    private mutating func readIdentifier() -> String {
        let start = position
        var first = true
        while let length = identifierCharacter(at: position, first: first) {
            position += length
            first = false
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// A short description of the character at `index`, for error messages.
    private func characterDescription(at index: Int) -> String {
        guard let (scalar, _) = scalar(at: index) else { return "end of input" }
        if scalar.value < 0x20 || scalar.value == 0x7F {
            return "character U+" + String(scalar.value, radix: 16, uppercase: true)
        }
        return "'\(Character(scalar))'"
    }

    private mutating func readToken() throws(PredicateSyntaxFailure) -> PredicateToken.Kind {
        let start = position
        let b = bytes[position]
        func symbol(_ s: PredicateSymbol, length: Int) -> PredicateToken.Kind {
            position += length
            return .symbol(s)
        }
        let next = byte(at: position + 1)
        switch b {
        case UInt8(ascii: "("): return symbol(.leftParen, length: 1)
        case UInt8(ascii: ")"): return symbol(.rightParen, length: 1)
        case UInt8(ascii: "{"): return symbol(.leftBrace, length: 1)
        case UInt8(ascii: "}"): return symbol(.rightBrace, length: 1)
        case UInt8(ascii: "["): return symbol(.leftBracket, length: 1)
        case UInt8(ascii: "]"): return symbol(.rightBracket, length: 1)
        case UInt8(ascii: "*"): return symbol(.star, length: 1)
        case UInt8(ascii: ","): return symbol(.comma, length: 1)
        case UInt8(ascii: "."): return symbol(.dot, length: 1)
        case UInt8(ascii: "-"): return symbol(.minus, length: 1)
        case UInt8(ascii: "="):
            switch next {
            case UInt8(ascii: "="): return symbol(.equal, length: 2)
            case UInt8(ascii: "<"): return symbol(.lessOrEqual, length: 2)
            case UInt8(ascii: ">"): return symbol(.greaterOrEqual, length: 2)
            default: return symbol(.equal, length: 1)
            }
        case UInt8(ascii: "!"):
            return next == UInt8(ascii: "=") ? symbol(.notEqual, length: 2) : symbol(.bang, length: 1)
        case UInt8(ascii: "<"):
            switch next {
            case UInt8(ascii: "="): return symbol(.lessOrEqual, length: 2)
            case UInt8(ascii: ">"): return symbol(.notEqual, length: 2)
            default: return symbol(.less, length: 1)
            }
        case UInt8(ascii: ">"):
            return next == UInt8(ascii: "=") ? symbol(.greaterOrEqual, length: 2) : symbol(.greater, length: 1)
        case UInt8(ascii: "&"):
            guard next == UInt8(ascii: "&") else {
                throw PredicateSyntaxFailure(
                    "expected '&&' but found '&' followed by \(characterDescription(at: position + 1))",
                    at: start)
            }
            return symbol(.and, length: 2)
        case UInt8(ascii: "|"):
            guard next == UInt8(ascii: "|") else {
                throw PredicateSyntaxFailure(
                    "expected '||' but found '|' followed by \(characterDescription(at: position + 1))",
                    at: start)
            }
            return symbol(.or, length: 2)
        case UInt8(ascii: "'"), UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try readNumber()
        case UInt8(ascii: "$"):
            return try readArgumentOrVariable()
        case UInt8(ascii: "%"):
            return try readPlaceholder(start: start, next: next)
        case UInt8(ascii: "@"):
            position += 1
            guard identifierCharacter(at: position, first: true) != nil else {
                throw PredicateSyntaxFailure(
                    "expected a collection operator such as @count after '@' but found "
                        + characterDescription(at: position),
                    at: position)
            }
            return .collectionOperator(readIdentifier())
        case UInt8(ascii: "#"):
            position += 1
            guard identifierCharacter(at: position, first: true) != nil else {
                throw PredicateSyntaxFailure(
                    "expected a property name after '#' but found " + characterDescription(at: position),
                    at: position)
            }
            return .identifier(readIdentifier())
        default:
            return try readWord(start: start)
        }
    }

    /// `$0` (an argument) or `$x` (a variable), from the `$`.
    private mutating func readArgumentOrVariable() throws(PredicateSyntaxFailure) -> PredicateToken.Kind {
        position += 1
        if let d = byte(at: position), Self.isDigit(d) {
            var index = 0
            while let d = byte(at: position), Self.isDigit(d) {
                // Saturate: an absurd index is reported as missing by the parser.
                index = index > 1_000_000_000 ? index : index * 10 + Int(d - 0x30)
                position += 1
            }
            if identifierCharacter(at: position, first: false) != nil {
                throw PredicateSyntaxFailure(
                    "expected an argument such as $0 or a variable such as $x but found "
                        + "\(characterDescription(at: position)) after the digits",
                    at: position)
            }
            return .argument(index)
        }
        guard identifierCharacter(at: position, first: true) != nil else {
            throw PredicateSyntaxFailure(
                "expected an argument such as $0 or a variable such as $x after '$' but found "
                    + characterDescription(at: position),
                at: position)
        }
        return .variable(readIdentifier())
    }

    /// `%@`, `%d`, `%i`, `%f` or `%K`, from the `%` (`next` is the byte after it).
    private mutating func readPlaceholder(start: Int, next: UInt8?) throws(PredicateSyntaxFailure)
        -> PredicateToken.Kind
    {
        position += 1
        switch next {
        case UInt8(ascii: "@"), UInt8(ascii: "d"), UInt8(ascii: "i"), UInt8(ascii: "f"),
            UInt8(ascii: "K"):
            position += 1
            return .placeholder(Character(Unicode.Scalar(next!)))
        default:
            throw PredicateSyntaxFailure(
                "expected %@, %d, %i, %f or %K but found '%' followed by "
                    + characterDescription(at: position),
                at: start)
        }
    }

    /// A keyword or an identifier.
    private mutating func readWord(start: Int) throws(PredicateSyntaxFailure) -> PredicateToken.Kind {
        guard identifierCharacter(at: position, first: true) != nil else {
            var hint = ""
            if let (scalar, _) = scalar(at: position),
                ["\u{2018}", "\u{2019}", "\u{201C}", "\u{201D}"].contains(scalar)
            {
                hint = " (strings use straight quotes ' or \")"
            }
            throw PredicateSyntaxFailure(
                "expected a key path, value or operator but found "
                    + characterDescription(at: position) + hint,
                at: start)
        }
        let name = readIdentifier()
        if name.lowercased() == "oid", position < bytes.count, bytes[position] == UInt8(ascii: "(") {
            return try readObjectID(start: start)
        }
        if name.utf8.count <= PredicateKeyword.maxLength,
            let keyword = PredicateKeyword.byName[name.uppercased()]
        {
            return .keyword(keyword)
        }
        return .identifier(name)
    }

    /// The rest of `oid(507f1f77bcf86cd799439011)`, from its `(`.
    private mutating func readObjectID(start: Int) throws(PredicateSyntaxFailure) -> PredicateToken.Kind {
        position += 1
        let digitsStart = position
        while position < bytes.count, bytes[position] != UInt8(ascii: ")") { position += 1 }
        guard position < bytes.count else {
            throw PredicateSyntaxFailure("expected ')' to close oid(", at: start)
        }
        let text = String(decoding: bytes[digitsStart..<position], as: UTF8.self)
        position += 1
        guard let id = ObjectID(hex: text.trimmingCharacters(in: .whitespaces)) else {
            throw PredicateSyntaxFailure(
                "expected 24 hex digits in oid(…) but found '\(PredicateToken.Kind.shortened(text))'", at: digitsStart)
        }
        return .objectID(id)
    }

    private mutating func readNumber() throws(PredicateSyntaxFailure) -> PredicateToken.Kind {
        let start = position
        var radix: UInt64 = 10
        if bytes[position] == UInt8(ascii: "0"), let p = byte(at: position + 1) {
            switch p | 0x20 {
            case UInt8(ascii: "x"): radix = 16
            case UInt8(ascii: "b"): radix = 2
            case UInt8(ascii: "o"): radix = 8
            default: break
            }
        }
        var isFloat = false
        if radix != 10 {
            position += 2
        } else {
            while let d = byte(at: position), Self.isDigit(d) { position += 1 }
            if byte(at: position) == UInt8(ascii: "."), let d = byte(at: position + 1), Self.isDigit(d) {
                isFloat = true
                position += 1
                while let d = byte(at: position), Self.isDigit(d) { position += 1 }
            }
            if let e = byte(at: position), e | 0x20 == UInt8(ascii: "e") {
                var p = position + 1
                if let sign = byte(at: p), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { p += 1 }
                if let d = byte(at: p), Self.isDigit(d) {
                    isFloat = true
                    position = p
                    while let d = byte(at: position), Self.isDigit(d) { position += 1 }
                }
            }
            if !isFloat { position = start }
        }
        var value: UInt64 = 0
        var digitCount = 0
        if !isFloat {
            while let b = byte(at: position) {
                let digit: UInt64
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(b - 0x30)
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt64(b - 0x61 + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt64(b - 0x41 + 10)
                default: digit = .max
                }
                if digit >= radix { break }
                let (times, o1) = value.multipliedReportingOverflow(by: radix)
                let (sum, o2) = times.addingReportingOverflow(digit)
                if o1 || o2 {
                    // A longer decimal integer is a decimal literal (exact against a Decimal
                    // property), up to the 38 digits a Decimal keeps.
                    if radix == 10, let exact = decimalInteger(from: start) { return .decimal(exact) }
                    throw PredicateSyntaxFailure(
                        "expected an integer that fits in 64 bits but found a longer number", at: start)
                }
                value = sum
                digitCount += 1
                position += 1
            }
        }
        if identifierCharacter(at: position, first: false) != nil {
            let name = radix == 16 ? "hexadecimal" : radix == 8 ? "octal" : radix == 2 ? "binary" : "decimal"
            throw PredicateSyntaxFailure(
                "expected a \(name) digit or the end of the number but found \(characterDescription(at: position))",
                at: position)
        }
        if !isFloat && digitCount == 0 {
            throw PredicateSyntaxFailure(
                "expected digits after '\(String(decoding: bytes[start..<start + 2], as: UTF8.self))' "
                    + "but found \(characterDescription(at: position))",
                at: position)
        }
        if isFloat {
            let text = String(decoding: bytes[start..<position], as: UTF8.self)
            guard let value = Double(text), value.isFinite else {
                throw PredicateSyntaxFailure(
                    "expected a floating-point number within range but found \(text)", at: start)
            }
            // A literal compares exactly against a Decimal property: when the double does not keep
            // the literal's value, the literal is a decimal.
            if let exact = Decimal(exactText: text), Decimal(exactText: "\(value)") != exact {
                return .decimal(exact)
            }
            return .float(value)
        }
        // Above the magnitude of Int64.min: a decimal literal, as for longer integers.
        if radix == 10, value > UInt64(Int64.max) + 1, let exact = decimalInteger(from: start) {
            return .decimal(exact)
        }
        return .integer(value)
    }

    /// The decimal integer whose digits start at `start`, read to its last digit (which moves
    /// the position there), when a `Decimal` keeps it exactly.
    private mutating func decimalInteger(from start: Int) -> Decimal? {
        var end = start
        while let d = byte(at: end), Self.isDigit(d) { end += 1 }
        guard identifierCharacter(at: end, first: false) == nil,
            let exact = Decimal(exactText: String(decoding: bytes[start..<end], as: UTF8.self))
        else { return nil }
        position = end
        return exact
    }

    private mutating func readString() throws(PredicateSyntaxFailure) -> String {
        let start = position
        let quote = bytes[position]
        position += 1
        var contentStart = position
        var buffer: [UInt8] = []
        while true {
            guard position < bytes.count else {
                throw PredicateSyntaxFailure(
                    "expected a closing \(quote == UInt8(ascii: "'") ? "'" : "\"") for the string "
                        + "starting here but found end of input",
                    at: start)
            }
            let b = bytes[position]
            if b == quote {
                buffer.append(contentsOf: bytes[contentStart..<position])
                position += 1
                return String(decoding: buffer, as: UTF8.self)
            }
            guard b == UInt8(ascii: "\\") else {
                position += 1
                continue
            }
            buffer.append(contentsOf: bytes[contentStart..<position])
            let escapeStart = position
            position += 1
            guard let e = byte(at: position) else {
                throw PredicateSyntaxFailure(
                    "expected an escaped character after '\\' but found end of input", at: escapeStart)
            }
            position += 1
            switch e {
            case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""): buffer.append(e)
            case UInt8(ascii: "n"): buffer.append(0x0A)
            case UInt8(ascii: "r"): buffer.append(0x0D)
            case UInt8(ascii: "t"): buffer.append(0x09)
            case UInt8(ascii: "0"): buffer.append(0x00)
            case UInt8(ascii: "u"):
                var scalarValue = try readUnicodeEscape(escapeStart: escapeStart)
                if (0xD800...0xDBFF).contains(scalarValue), byte(at: position) == UInt8(ascii: "\\"),
                    byte(at: position + 1) == UInt8(ascii: "u")
                {
                    // A UTF-16 surrogate pair written as two escapes.
                    let lowStart = position
                    position += 2
                    let low = try readUnicodeEscape(escapeStart: lowStart)
                    if (0xDC00...0xDFFF).contains(low) {
                        scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        position = lowStart
                    }
                }
                guard let scalar = Unicode.Scalar(scalarValue) else {
                    throw PredicateSyntaxFailure(
                        "expected a valid Unicode scalar but found U+"
                            + String(scalarValue, radix: 16, uppercase: true),
                        at: escapeStart)
                }
                buffer.append(contentsOf: String(scalar).utf8)
            default:
                throw PredicateSyntaxFailure(
                    "expected an escape sequence (\\\\, \\', \\\", \\n, \\r, \\t, \\0, \\uXXXX or \\u{…}) "
                        + "but found '\\' followed by \(characterDescription(at: position - 1))",
                    at: escapeStart)
            }
            contentStart = position
        }
    }

    /// Reads the part after `\u`: four hex digits, or one to eight hex digits in braces.
    private mutating func readUnicodeEscape(escapeStart: Int) throws(PredicateSyntaxFailure) -> UInt32 {
        func hexValue(_ b: UInt8?) -> UInt32? {
            guard let b else { return nil }
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(b - 0x30)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(b - 0x61 + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(b - 0x41 + 10)
            default: return nil
            }
        }
        var value: UInt32 = 0
        if byte(at: position) == UInt8(ascii: "{") {
            position += 1
            var count = 0
            while let h = hexValue(byte(at: position)), count < 8 {
                value = value << 4 | h
                count += 1
                position += 1
            }
            guard count > 0, byte(at: position) == UInt8(ascii: "}") else {
                throw PredicateSyntaxFailure(
                    "expected one to eight hex digits and '}' in \\u{…} but found "
                        + characterDescription(at: position),
                    at: position)
            }
            position += 1
            return value
        }
        for _ in 0..<4 {
            guard let h = hexValue(byte(at: position)) else {
                throw PredicateSyntaxFailure(
                    "expected four hex digits after \\u but found " + characterDescription(at: position),
                    at: position)
            }
            value = value << 4 | h
            position += 1
        }
        return value
    }
}
