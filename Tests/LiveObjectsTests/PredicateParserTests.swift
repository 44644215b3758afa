import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

// MARK: - Helpers

private func parse(_ text: String, _ arguments: [PropertyValue] = []) throws -> PredicateSyntax {
    try PredicateParser.parse(text, arguments: arguments)
}

/// The error that parsing throws (nil if it succeeds).
private func parseError(_ text: String, _ arguments: [PropertyValue] = []) -> LiveObjectsError? {
    do {
        _ = try PredicateParser.parse(text, arguments: arguments)
        return nil
    } catch {
        return error
    }
}

/// A key path expression from dotted text; a leading `$x.` is a variable.
private func kp(_ path: String) -> ExpressionSyntax {
    .keyPath(keyPath(path))
}

private func keyPath(_ path: String) -> KeyPathSyntax {
    var parts = path.split(separator: ".").map(String.init)
    var variable: String?
    if let first = parts.first, first.hasPrefix("$") {
        variable = String(first.dropFirst())
        parts.removeFirst()
    }
    return KeyPathSyntax(variable: variable, parts)
}

private func cmp(
    _ lhs: ExpressionSyntax, _ op: ComparisonOperator, _ rhs: ExpressionSyntax,
    _ options: ComparisonOptions = [], _ quantifier: Quantifier = .direct
) -> PredicateSyntax {
    .comparison(ComparisonSyntax(quantifier, lhs, op, options, rhs))
}

private func val(_ value: PropertyValue) -> ExpressionSyntax { .value(value) }

/// The single comparison a predicate consists of.
private func comparison(_ text: String, _ arguments: [PropertyValue] = []) throws -> ComparisonSyntax {
    guard case .comparison(let c) = try parse(text, arguments) else {
        Issue.record("\(text) is not a single comparison")
        throw LiveObjectsError(.invalidQuery, "not a comparison")
    }
    return c
}

/// The right-hand side of a single comparison.
private func rhs(_ text: String, _ arguments: [PropertyValue] = []) throws -> ExpressionSyntax {
    try comparison(text, arguments).rhs
}

// MARK: - Trees

@Suite struct PredicateParserTreeTests {
    @Test(arguments: [
        ("==", ComparisonOperator.equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual),
        ("<", .lessThan), ("<=", .lessThanOrEqual), ("=<", .lessThanOrEqual), (">", .greaterThan),
        (">=", .greaterThanOrEqual), ("=>", .greaterThanOrEqual), ("BEGINSWITH", .beginsWith),
        ("beginswith", .beginsWith), ("ENDSWITH", .endsWith), ("CONTAINS", .contains),
        ("Contains", .contains), ("LIKE", .like), ("like", .like), ("IN", .in),
    ])
    func comparisonOperators(spelling: String, op: ComparisonOperator) throws {
        #expect(try parse("age \(spelling) 3") == cmp(kp("age"), op, val(3)))
        // Also without spaces, where the operator is a symbol.
        if !spelling.first!.isLetter {
            #expect(try parse("age\(spelling)3") == cmp(kp("age"), op, val(3)))
        }
    }

    @Test func optionsOnOperators() throws {
        #expect(try parse("name ==[c] 'rex'") == cmp(kp("name"), .equal, val("rex"), .caseInsensitive))
        #expect(try parse("name CONTAINS[d] 'e'") == cmp(kp("name"), .contains, val("e"), .diacriticInsensitive))
        let both: ComparisonOptions = [.caseInsensitive, .diacriticInsensitive]
        #expect(try parse("name BEGINSWITH[cd] 'cr'") == cmp(kp("name"), .beginsWith, val("cr"), both))
        #expect(try parse("name ENDSWITH[dc] 'e'") == cmp(kp("name"), .endsWith, val("e"), both))
        #expect(try parse("name LIKE [c] 'r*'") == cmp(kp("name"), .like, val("r*"), .caseInsensitive))
        #expect(try parse("name !=[cd] 'x'") == cmp(kp("name"), .notEqual, val("x"), both))
        #expect(try parse("name <[c] 'm'") == cmp(kp("name"), .lessThan, val("m"), .caseInsensitive))
        #expect(try parse("name IN[c] {'a', 'b'}") == cmp(kp("name"), .in, val(["a", "b"]), .caseInsensitive))
    }

    @Test func between() throws {
        #expect(try parse("age BETWEEN {1, 10}") == cmp(kp("age"), .between, val([1, 10])))
        #expect(try parse("age between {-1.5, $0}", [7]) == cmp(kp("age"), .between, val([-1.5, 7])))
        #expect(try parse("age BETWEEN $0", [[2, 3]]) == cmp(kp("age"), .between, val([2, 3])))
        #expect(try parse("age BETWEEN %@", [[2, 3]]) == cmp(kp("age"), .between, val([2, 3])))
    }

    @Test func inForms() throws {
        #expect(try parse("name IN {'Rex', \"Fido\"}") == cmp(kp("name"), .in, val(["Rex", "Fido"])))
        #expect(try parse("age IN {}") == cmp(kp("age"), .in, val([])))
        #expect(try parse("age IN $0", [[1, 2, 3]]) == cmp(kp("age"), .in, val([1, 2, 3])))
        #expect(try parse("'Rex' IN dogs.name") == cmp(val("Rex"), .in, kp("dogs.name")))
        #expect(try parse("age IN {1, {2, 3}}") == cmp(kp("age"), .in, val([1, [2, 3]])))
    }

    @Test func booleanOperatorsAndPrecedence() throws {
        let a = cmp(kp("a"), .equal, val(1))
        let b = cmp(kp("b"), .equal, val(2))
        let c = cmp(kp("c"), .equal, val(3))
        #expect(try parse("a == 1 AND b == 2") == .and([a, b]))
        #expect(try parse("a == 1 and b == 2 And c == 3") == .and([a, b, c]))
        #expect(try parse("a == 1 && b == 2 && c == 3") == .and([a, b, c]))
        #expect(try parse("a == 1 OR b == 2 or c == 3") == .or([a, b, c]))
        #expect(try parse("a == 1 || b == 2") == .or([a, b]))
        // AND binds tighter than OR.
        #expect(try parse("a == 1 OR b == 2 AND c == 3") == .or([a, .and([b, c])]))
        #expect(try parse("a == 1 AND b == 2 OR c == 3") == .or([.and([a, b]), c]))
        // Parentheses are kept in the tree.
        #expect(try parse("(a == 1 OR b == 2) AND c == 3") == .and([.or([a, b]), c]))
        #expect(try parse("(a == 1 AND b == 2) AND c == 3") == .and([.and([a, b]), c]))
        #expect(try parse("((a == 1))") == a)
        // NOT binds to the next operand only.
        #expect(try parse("NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try parse("not (a == 1 AND b == 2)") == .not(.and([a, b])))
        #expect(try parse("!a == 1 || !(b == 2)") == .or([.not(a), .not(b)]))
        #expect(try parse("NOT NOT a == 1") == .not(.not(a)))
        #expect(try parse("NOT !(NOT a == 1)") == .not(.not(.not(a))))
    }

    @Test func constantPredicates() throws {
        #expect(try parse("TRUEPREDICATE") == .constant(true))
        #expect(try parse("falsepredicate") == .constant(false))
        #expect(try parse("TRUEPREDICATE AND NOT FALSEPREDICATE") == .and([.constant(true), .not(.constant(false))]))
    }

    @Test func integerLiterals() throws {
        #expect(try rhs("a == 0") == val(0))
        #expect(try rhs("a == 42") == val(42))
        #expect(try rhs("a == -42") == val(-42))
        #expect(try rhs("a == - 42") == val(-42))
        #expect(try rhs("a == 0x1F") == val(31))
        #expect(try rhs("a == 0XfF") == val(255))
        #expect(try rhs("a == -0x10") == val(-16))
        #expect(try rhs("a == 0b101") == val(5))
        #expect(try rhs("a == 0o17") == val(15))
        #expect(try rhs("a == 007") == val(7))
        #expect(try rhs("a == 9223372036854775807") == val(.int(.max)))
        #expect(try rhs("a == -9223372036854775808") == val(.int(.min)))
        // Fits in 64 bits but not in Int64.
        #expect(parseError("a == 0xFFFFFFFFFFFFFFFF")?.code == .invalidQuery)
    }

    @Test func floatingPointLiterals() throws {
        #expect(try rhs("a == 2.5") == val(2.5))
        #expect(try rhs("a == -2.5") == val(-2.5))
        #expect(try rhs("a == 1e3") == val(1000.0))
        #expect(try rhs("a == 1.5E-3") == val(0.0015))
        #expect(try rhs("a == 2e+2") == val(200.0))
        #expect(try rhs("a == 3.0") == val(.double(3)))
    }

    @Test func stringLiterals() throws {
        #expect(try rhs("a == 'Rex'") == val("Rex"))
        #expect(try rhs("a == \"Rex\"") == val("Rex"))
        #expect(try rhs("a == ''") == val(""))
        #expect(try rhs(#"a == 'it\'s'"#) == val("it's"))
        #expect(try rhs(#"a == "say \"hi\"""#) == val("say \"hi\""))
        #expect(try rhs(#"a == "it's""#) == val("it's"))
        #expect(try rhs(#"a == 'a\\b\n\t\r\0'"#) == val("a\\b\n\t\r\0"))
        #expect(try rhs(#"a == '\u00e9\u{1F415}'"#) == val("é\u{1F415}"))
        #expect(try rhs(#"a == '\uD83D\uDC15'"#) == val("\u{1F415}"))
        #expect(try rhs("a == 'Пятёрочка'") == val("Пятёрочка"))
        #expect(try rhs("a == 'line\nbreak'") == val("line\nbreak"))
    }

    @Test func boolAndNullLiterals() throws {
        for text in ["true", "TRUE", "True", "YES", "yes"] {
            #expect(try rhs("a == \(text)") == val(true))
        }
        for text in ["false", "FALSE", "NO", "no"] {
            #expect(try rhs("a == \(text)") == val(false))
        }
        for text in ["nil", "NIL", "null", "NULL"] {
            #expect(try rhs("a == \(text)") == val(.null))
        }
    }

    @Test func keyPaths() throws {
        #expect(try parse("owner.name == 'Ann'") == cmp(kp("owner.name"), .equal, val("Ann")))
        #expect(try parse("owner.address.city == 'Paris'") == cmp(kp("owner.address.city"), .equal, val("Paris")))
        // Key path against key path.
        #expect(try parse("age > minAge") == cmp(kp("age"), .greaterThan, kp("minAge")))
        #expect(try parse("owner.age >= age") == cmp(kp("owner.age"), .greaterThanOrEqual, kp("age")))
        // Keywords as property names, SELF, non-ASCII names.
        #expect(try parse("#in == 1") == cmp(.keyPath(KeyPathSyntax(["in"])), .equal, val(1)))
        #expect(try parse("owner.#any == 1") == cmp(.keyPath(KeyPathSyntax(["owner", "any"])), .equal, val(1)))
        #expect(try parse("SELF == 3") == cmp(.keyPath(KeyPathSyntax([])), .equal, val(3)))
        #expect(try parse("имя == 'Шарик'") == cmp(kp("имя"), .equal, val("Шарик")))
        #expect(try parse("_private1 == 1") == cmp(kp("_private1"), .equal, val(1)))
        // Reversed sides.
        #expect(try parse("3 < age") == cmp(val(3), .lessThan, kp("age")))
    }

    @Test func keyPathOffsets() throws {
        let c = try comparison("  ANY dogs.name == owner.name")
        #expect(c.offset == 2)
        guard case .keyPath(let lhs) = c.lhs, case .keyPath(let rhs) = c.rhs else {
            Issue.record("expected key paths")
            return
        }
        #expect(lhs.offset == 6)
        #expect(rhs.offset == 19)
        // Offsets are not part of equality.
        #expect(KeyPathSyntax(["a"], offset: 1) == KeyPathSyntax(["a"], offset: 9))
    }

    @Test func collectionOperators() throws {
        func op(_ o: CollectionOperator, _ path: String, _ property: [String] = []) -> ExpressionSyntax {
            .collectionOperation(o, collection: kp(path), property: property)
        }
        #expect(try parse("dogs.@count > 2") == cmp(op(.count, "dogs"), .greaterThan, val(2)))
        #expect(try parse("dogs.@max.age < 10") == cmp(op(.max, "dogs", ["age"]), .lessThan, val(10)))
        #expect(try parse("dogs.@min.age == 1") == cmp(op(.min, "dogs", ["age"]), .equal, val(1)))
        #expect(try parse("dogs.@sum.age == 1") == cmp(op(.sum, "dogs", ["age"]), .equal, val(1)))
        #expect(try parse("dogs.@avg.age == 1") == cmp(op(.avg, "dogs", ["age"]), .equal, val(1)))
        #expect(try parse("name.@size > 3") == cmp(op(.size, "name"), .greaterThan, val(3)))
        #expect(try parse("scores.@max > 3") == cmp(op(.max, "scores"), .greaterThan, val(3)))
        #expect(try parse("owner.dogs.@count > 1") == cmp(op(.count, "owner.dogs"), .greaterThan, val(1)))
        #expect(try parse("dogs.@max.owner.age > 1") == cmp(op(.max, "dogs", ["owner", "age"]), .greaterThan, val(1)))
        #expect(try parse("dogs.@count > toys.@count") == cmp(op(.count, "dogs"), .greaterThan, op(.count, "toys")))
    }

    @Test func quantifiers() throws {
        #expect(try parse("ANY dogs.name == 'Rex'") == cmp(kp("dogs.name"), .equal, val("Rex"), [], .any))
        #expect(try parse("any dogs.name == 'Rex'") == cmp(kp("dogs.name"), .equal, val("Rex"), [], .any))
        #expect(try parse("SOME dogs.age > 3") == cmp(kp("dogs.age"), .greaterThan, val(3), [], .any))
        #expect(try parse("ALL dogs.age > 3") == cmp(kp("dogs.age"), .greaterThan, val(3), [], .all))
        #expect(
            try parse("NONE dogs.name BEGINSWITH[c] 'r'")
                == cmp(kp("dogs.name"), .beginsWith, val("r"), .caseInsensitive, .none))
        #expect(try parse("NOT ANY dogs.age > 3") == .not(cmp(kp("dogs.age"), .greaterThan, val(3), [], .any)))
    }

    @Test func subqueries() throws {
        let inner = cmp(kp("$d.age"), .greaterThan, val(3))
        let subquery = ExpressionSyntax.subquery(collection: keyPath("dogs"), variable: "d", predicate: inner)
        #expect(
            try parse("SUBQUERY(dogs, $d, $d.age > 3).@count > 1")
                == cmp(.collectionOperation(.count, collection: subquery, property: []), .greaterThan, val(1)))
        #expect(
            try parse("subquery(dogs, $d, $d.age > 3).@max.age == 9")
                == cmp(.collectionOperation(.max, collection: subquery, property: ["age"]), .equal, val(9)))
        // Nested, with the outer variable used inside.
        let nested = try parse(
            "SUBQUERY(dogs, $d, SUBQUERY($d.toys, $t, $t.name == $d.name AND $t == SELF).@count > 0).@count == 2")
        let toys = cmp(kp("$t.name"), .equal, kp("$d.name"))
        let same = cmp(.keyPath(KeyPathSyntax(variable: "t", [])), .equal, .keyPath(KeyPathSyntax([])))
        let innerSub = ExpressionSyntax.subquery(
            collection: keyPath("$d.toys"), variable: "t", predicate: .and([toys, same]))
        let outerPred = cmp(.collectionOperation(.count, collection: innerSub, property: []), .greaterThan, val(0))
        let outerSub = ExpressionSyntax.subquery(collection: keyPath("dogs"), variable: "d", predicate: outerPred)
        #expect(nested == cmp(.collectionOperation(.count, collection: outerSub, property: []), .equal, val(2)))
    }

    @Test func positionalArguments() throws {
        let date = Date(timeIntervalSince1970: 1000)
        let args: [PropertyValue] = ["Rex", 3, .date(date), .null]
        #expect(
            try parse("name == $0 AND age > $1 AND born < $2 AND owner == $3 AND nick == $0", args)
                == .and([
                    cmp(kp("name"), .equal, val("Rex")), cmp(kp("age"), .greaterThan, val(3)),
                    cmp(kp("born"), .lessThan, val(.date(date))), cmp(kp("owner"), .equal, val(.null)),
                    cmp(kp("nick"), .equal, val("Rex")),
                ]))
        #expect(try rhs("a == $1", [1, 2]) == val(2))
    }

    @Test func percentPlaceholders() throws {
        // Each % placeholder takes the next argument; $N is positional and does not count.
        let tree = try parse("%K == %@ AND age > %d AND weight < %f AND x == $0", ["name", "Rex", 3, 2.5])
        #expect(
            tree
                == .and([
                    cmp(kp("name"), .equal, val("Rex")), cmp(kp("age"), .greaterThan, val(3)),
                    cmp(kp("weight"), .lessThan, val(2.5)), cmp(kp("x"), .equal, val("name")),
                ]))
        #expect(try rhs("a == %i", [7]) == val(7))
        // %f converts an integer argument to a double.
        #expect(try rhs("a == %f", [7]) == val(.double(7)))
        #expect(try rhs("a == %f", [.float(1.5)]) == val(.float(1.5)))
        // %K with a dotted path, a collection operator, and a suffix after it.
        #expect(try parse("%K == 1", ["owner.name"]) == cmp(kp("owner.name"), .equal, val(1)))
        #expect(
            try parse("%K > 1", ["dogs.@count"])
                == cmp(.collectionOperation(.count, collection: kp("dogs"), property: []), .greaterThan, val(1)))
        #expect(
            try parse("%K.@max.age > 1", ["owner.dogs"])
                == cmp(
                    .collectionOperation(.max, collection: kp("owner.dogs"), property: ["age"]), .greaterThan, val(1)))
        #expect(try parse("ANY %K == 1", ["in"]) == cmp(.keyPath(KeyPathSyntax(["in"])), .equal, val(1), [], .any))
        #expect(try parse("%@ IN %K", ["Rex", "dogs.name"]) == cmp(val("Rex"), .in, kp("dogs.name")))
    }

    @Test func whitespaceAndLayout() throws {
        let expected = PredicateSyntax.and([cmp(kp("a"), .equal, val(1)), cmp(kp("b"), .equal, val(2))])
        #expect(try parse("\t a==1\n&&\r\nb==2  ") == expected)
        #expect(try parse("a==1\u{00A0}AND\u{2003}b==2") == expected)
        #expect(try parse("(a==1)AND(b==2)") == expected)
    }
}

// MARK: - Errors

@Suite struct PredicateParserErrorTests {
    @Test(
        arguments: [
            ("age >", "expected a value or key path after > but found end of input", 6),
            ("age > > 3", "expected a value or key path after > but found '>'", 7),
            ("name == 'abc", "expected a closing ' for the string starting here but found end of input", 9),
            ("(age > 3", "expected AND, OR or ')' to close the '(' at column 1 but found end of input", 9),
            (
                "a == 1 AND (b == 2 OR (c == 3) d",
                "expected AND, OR or ')' to close the '(' at column 12 but found key path 'd'", 32
            ),
            ("age > 3)", "expected AND, OR or end of input but found ')'", 8),
            ("a == 1 b == 2", "expected AND, OR or end of input but found key path 'b'", 8),
            (
                "age 3",
                "expected a comparison operator (==, !=, <, <=, >, >=, BETWEEN, IN, BEGINSWITH, ENDSWITH, CONTAINS, LIKE or TEXT) but found number 3",
                5
            ),
            ("age", "expected a comparison operator", 4),
            (
                "",
                "expected a predicate (a comparison, TRUEPREDICATE, FALSEPREDICATE, NOT or '(') but found end of input",
                1
            ),
            ("a == 1 AND", "expected a predicate", 11),
            (
                "a == 1 AND )",
                "expected a predicate (a comparison, TRUEPREDICATE, FALSEPREDICATE, NOT or '(') but found ')'", 12
            ),
            ("age ==[x] 3", "expected comparison options c, d or cd but found key path 'x'", 8),
            ("age ==[c 3", "expected ']' after the comparison options but found number 3", 10),
            (
                "age BETWEEN {1, 2, 3}",
                "expected exactly two values (lower and upper bound) after BETWEEN but found 3", 13
            ),
            ("age BETWEEN 5", "expected '{lower, upper}' or a list argument after BETWEEN but found number 5", 13),
            ("age IN {1, 2", "expected ',' or '}' but found end of input", 13),
            ("age IN {1, name}", "expected a constant value in '{…}' but found key path 'name'", 12),
            ("a == 1 & b == 2", "expected '&&' but found '&'", 8),
            ("a == 1 | b == 2", "expected '||' but found '|'", 8),
            ("dogs.@foo > 1", "expected @count, @size, @min, @max, @sum or @avg but found collection operator @foo", 6),
            ("dogs.@count.age > 1", "expected nothing after @count but found key path 'age'", 13),
            (
                "dogs.@max.@min > 1",
                "expected a property name but found collection operator @min (one collection operator per key path)", 11
            ),
            ("owner. == 1", "expected a property name or collection operator after '.' but found '=='", 8),
            ("owner.in == 1", "expected a property name or collection operator after '.' but found keyword IN", 7),
            ("$x.age > 3", "expected a variable declared by an enclosing SUBQUERY but found $x", 1),
            (
                "SUBQUERY(dogs, $d, $d.age > 3) > 1",
                "expected '.@count' or another collection operator after SUBQUERY(…) but found '>'", 32
            ),
            (
                "SUBQUERY(dogs, $d, $d.age > 3).age > 1",
                "expected a collection operator such as @count after 'SUBQUERY(…).' but found key path 'age'", 32
            ),
            (
                "SUBQUERY(dogs, d, d.age > 3).@count > 1",
                "expected a variable such as $x as the second part of SUBQUERY but found key path 'd'", 16
            ),
            (
                "SUBQUERY(dogs, $d, $d.age > 3 .@count > 1", "expected AND, OR or ')' to close SUBQUERY but found '.'",
                31
            ),
            (
                "SUBQUERY(5, $d, $d.age > 3).@count > 1",
                "expected a key path as the collection of SUBQUERY but found number 5", 10
            ),
            ("name == 0x", "expected digits after '0x' but found end of input", 11),
            ("name == 0xZ", "expected a hexadecimal digit or the end of the number but found 'Z'", 11),
            ("name == 12abc", "expected a decimal digit or the end of the number but found 'a'", 11),
            (
                "age > 9999999999999999999999999999999999999999",
                "expected an integer that fits in 64 bits but found a longer number", 7
            ),
            (
                "age > 9223372036854775808",
                "expected an integer between -9223372036854775808 and 9223372036854775807 but found 9223372036854775808",
                7
            ),
            ("age > 1e999", "expected a floating-point number within range but found 1e999", 7),
            ("name MATCHES 'x'", "expected a comparison operator but found MATCHES", 6),
            ("ANY 5 == 3", "expected a key path after keyword ANY but found number 5", 5),
            ("ANY dogs.@count == 3", "expected a key path after keyword ANY but found key path 'dogs'", 5),
            (
                "name == ‘Rex’",
                "expected a key path, value or operator but found '‘' (strings use straight quotes ' or \")", 9
            ),
            (
                "name == any",
                "expected a value or key path after == but found keyword ANY (write #any for a property with that name)",
                9
            ),
            ("имя == ==", "expected a value or key path after == but found '=='", 8),
            (
                #"name == 'a\qb'"#,
                #"expected an escape sequence (\\, \', \", \n, \r, \t, \0, \uXXXX or \u{…}) but found '\' followed by 'q'"#,
                11
            ),
            (#"name == '\u12'"#, "expected four hex digits after \\u but found '''", 14),
            (#"name == '\u{110000}'"#, "expected a valid Unicode scalar but found U+110000", 10),
            ("a == $", "expected an argument such as $0 or a variable such as $x after '$' but found end of input", 7),
            ("a == %x", "expected %@, %d, %i, %f or %K but found '%' followed by 'x'", 6),
            ("a == @count", "expected a value or key path after == but found collection operator @count", 6),
            ("a == -'x'", "expected a number after '-' but found string \"x\"", 7),
            ("a == 1 AND\n  b = ", "expected a value or key path after == but found end of input", 7),
        ] as [(String, String, Int)])
    func messageAndColumn(text: String, message: String, column: Int) throws {
        let error = try #require(parseError(text))
        #expect(error.code == .invalidQuery)
        #expect(error.message.hasPrefix(message), "message was: \(error.message)")
        let location = try #require(error.queryLocation)
        #expect(location.column == column, "message was: \(error.message)")
        #expect(location.text == text)
        #expect(error.message.hasSuffix("column \(column)"))
    }

    @Test func multiLineLocation() throws {
        let error = try #require(parseError("a == 1 AND\n  b = "))
        #expect(error.queryLocation?.line == 2)
        #expect(error.message.hasSuffix("at line 2, column 7"))
        #expect(error.queryLocation?.caretDiagnostic == "  b = \n      ^")
    }

    @Test func argumentErrors() throws {
        let missing = try #require(parseError("name == $2", ["a"]))
        #expect(missing.message == "expected an argument for $2 but found only 1 argument at column 9")
        let missingPercent = try #require(parseError("a == %@ AND b == %@", [1]))
        #expect(
            missingPercent.message == "expected an argument for %@ (argument 2) but found only 1 argument at column 18")
        let notInt = try #require(parseError("a == %d", ["x"]))
        #expect(notInt.message == "expected an integer for %d (argument 1) but found \"x\" at column 6")
        let notDouble = try #require(parseError("a == %f", [true]))
        #expect(notDouble.message == "expected a floating-point number for %f (argument 1) but found true at column 6")
        let notKey = try #require(parseError("%K == 1", [5]))
        #expect(notKey.message == "expected a key path string for %K (argument 1) but found 5 at column 1")
        let badKey = try #require(parseError("%K == 1", ["owner..name"]))
        #expect(badKey.message.hasPrefix("expected a key path such as \"owner.name\" for %K but found \"owner..name\""))
        let badOp = try #require(parseError("a == 1 OR %K == 1", ["dogs.@count.age"]))
        #expect(badOp.message == "expected nothing after @count but found 'age' in the %K argument at column 11")
        let notList = try #require(parseError("age BETWEEN $0", [3]))
        #expect(
            notList.message.hasPrefix(
                "expected '{lower, upper}' or a list argument after BETWEEN but found argument $0"))
        let shortList = try #require(parseError("age BETWEEN $0", [[3]]))
        #expect(
            shortList.message.hasPrefix("expected exactly two values (lower and upper bound) after BETWEEN but found 1")
        )
    }

    @Test func caretDiagnostic() throws {
        let error = try #require(parseError("age > > 3"))
        #expect(error.queryLocation?.caretDiagnostic == "age > > 3\n      ^")
        let atEnd = try #require(parseError("age >"))
        #expect(atEnd.queryLocation?.caretDiagnostic == "age >\n     ^")
        let tabs = try #require(parseError("\tage\t> >"))
        #expect(tabs.queryLocation?.caretDiagnostic == "\tage\t> >\n\t   \t  ^")
        // A long line is shown as a window around the problem.
        let long = String(repeating: "a == 1 AND ", count: 50) + "b == == 2"
        let longError = try #require(parseError(long))
        let lines = try #require(longError.queryLocation?.caretDiagnostic.split(separator: "\n"))
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("…") && lines[0].count < 140)
        let caretColumn = lines[1].count - 1
        #expect(Array(lines[0])[caretColumn...].starts(with: "== 2"))
    }

    @Test func locationOfOtherStages() throws {
        // A later stage reports a problem at a key path's offset.
        let text = "age > 3 AND nmae == 'x'"
        guard case .and(let parts) = try parse(text), case .comparison(let c) = parts[1],
            case .keyPath(let path) = c.lhs
        else {
            Issue.record("unexpected tree")
            return
        }
        let error = PredicateParser.error(.invalidQuery, "unknown property 'nmae'", at: path.offset, in: text)
        #expect(error.message == "unknown property 'nmae' at column 13")
        #expect(error.queryLocation?.caretDiagnostic == text + "\n            ^")
    }
}

// MARK: - Limits

/// Runs `body` on a thread with a small stack (512 KiB, the size of secondary threads on Apple
/// platforms), so that a parser that recursed too deeply would crash the test.
private func onSmallStack<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = 512 * 1024
        thread.start()
    }
}

/// `SUBQUERY(d, $v0, SUBQUERY(d, $v1, … a == 1 …).@count > 0).@count > 0`, `levels` deep.
private func nestedSubqueries(_ levels: Int) -> String {
    var text = "a == 1"
    for level in (0..<levels).reversed() {
        text = "SUBQUERY(d, $v\(level), \(text)).@count > 0"
    }
    return text
}

@Suite struct PredicateParserLimitTests {
    let max = PredicateParser.maxNestingDepth

    @Test func deepParenthesesAreRefused() throws {
        let n = 100_000
        let text = String(repeating: "(", count: n) + "a == 1" + String(repeating: ")", count: n)
        let error = try #require(parseError(text))
        #expect(error.code == .limitExceeded)
        #expect(error.queryLocation?.column == max + 1)
        #expect(error.message.contains("\(max) levels of nesting"))
    }

    @Test func deepNotsAreRefused() throws {
        for prefix in ["NOT ", "!", "not "] {
            let error = try #require(parseError(String(repeating: prefix, count: 100_000) + "a == 1"))
            #expect(error.code == .limitExceeded)
            #expect(error.queryLocation?.column == prefix.count * max + 1)
        }
    }

    @Test func deepAggregatesAndSubqueriesAreRefused() throws {
        let braces = try #require(parseError("a IN " + String(repeating: "{", count: 100_000)))
        #expect(braces.code == .limitExceeded)
        #expect(braces.queryLocation?.column == 6 + max)
        let subqueryLimit = PredicateParser.maxSubqueryDepth
        let subqueries = try #require(parseError(nestedSubqueries(subqueryLimit + 1)))
        #expect(subqueries.code == .limitExceeded)
        #expect(subqueries.message.hasPrefix("expected at most \(subqueryLimit) nested SUBQUERYs but found more"))
        // At the (limit + 1)th SUBQUERY keyword.
        let column = 1 + (0..<subqueryLimit).map { "SUBQUERY(d, $v\($0), ".count }.reduce(0, +)
        #expect(subqueries.queryLocation?.column == column)
    }

    @Test func nestingUpToTheLimitIsAccepted() throws {
        let parens = String(repeating: "(", count: max) + "a == 1" + String(repeating: ")", count: max)
        #expect(try parse(parens) == cmp(kp("a"), .equal, val(1)))
        var nots = try parse(String(repeating: "NOT ", count: max) + "a == 1")
        var count = 0
        while case .not(let inner) = nots {
            count += 1
            nots = inner
        }
        #expect(count == max)
        // Parentheses and NOTs share one budget.
        let mixed = String(repeating: "NOT (", count: max / 2) + "a == 1" + String(repeating: ")", count: max / 2)
        #expect(throws: Never.self) { try parse(mixed) }
        let tooMixed = String(repeating: "NOT (", count: max / 2) + "!a == 1" + String(repeating: ")", count: max / 2)
        #expect(parseError(tooMixed)?.code == .limitExceeded)
        #expect(throws: Never.self) { try parse(nestedSubqueries(PredicateParser.maxSubqueryDepth)) }
        // A SUBQUERY counts towards the nesting budget too.
        let inSubquery =
            "SUBQUERY(d, $v, " + String(repeating: "(", count: max - 1) + "a == 1"
            + String(repeating: ")", count: max - 1) + ").@count > 0"
        #expect(throws: Never.self) { try parse(inSubquery) }
        #expect(parseError("NOT " + inSubquery)?.code == .limitExceeded)
        let braces = "a IN " + String(repeating: "{", count: max) + String(repeating: "}", count: max)
        #expect(throws: Never.self) { try parse(braces) }
    }

    @Test func deepestInputsParseOnASmallStack() async throws {
        let max = self.max
        let ok = await onSmallStack { () -> Bool in
            let inputs = [
                nestedSubqueries(PredicateParser.maxSubqueryDepth),
                "SUBQUERY(d, $v, " + String(repeating: "(", count: max - 1) + "a == 1"
                    + String(repeating: ")", count: max - 1) + ").@count > 0",
                "a IN " + String(repeating: "{", count: max) + String(repeating: "}", count: max),
                String(repeating: "(", count: max) + "a == 1" + String(repeating: ")", count: max),
                String(repeating: "NOT ", count: max) + "a == 1",
                String(repeating: "NOT (", count: max / 2) + "a == 1" + String(repeating: ")", count: max / 2),
            ]
            for input in inputs {
                guard let tree = try? PredicateParser.parse(input) else { return false }
                // Printing, comparing and hashing the tree also recurse.
                guard (try? PredicateParser.parse(tree.description)) == tree else { return false }
                _ = tree.hashValue
            }
            let tooDeep = [
                nestedSubqueries(100_000 / 40),
                String(repeating: "(", count: 100_000),
                "a IN " + String(repeating: "{", count: 100_000),
            ]
            for input in tooDeep {
                guard parseError(input)?.code == .limitExceeded else { return false }
            }
            return true
        }
        #expect(ok)
    }

    @Test func inputSizeLimit() throws {
        let limit = PredicateParser.maxInputLength
        let tooLong = "a == 1" + String(repeating: " ", count: limit)
        let error = try #require(parseError(tooLong))
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("\(limit) bytes"))
        #expect(error.queryLocation?.column == 1)
        // Exactly at the limit is fine.
        let atLimit = "a == 1" + String(repeating: " ", count: limit - 6)
        #expect(try parse(atLimit) == cmp(kp("a"), .equal, val(1)))
    }

    @Test func hugeFlatInputs() throws {
        // About 1 MiB of OR terms makes one flat `or`.
        let terms = 90_000
        let text = (0..<terms).map { "a == \($0 % 10)" }.joined(separator: " OR ")
        #expect(text.utf8.count <= PredicateParser.maxInputLength)
        guard case .or(let operands) = try parse(text) else {
            Issue.record("expected an OR")
            return
        }
        #expect(operands.count == terms)
        // A big list and a big string.
        let list = "a IN {" + (0..<100_000).map(String.init).joined(separator: ",") + "}"
        guard case .value(.list(let values)) = try rhs(list) else {
            Issue.record("expected a list")
            return
        }
        #expect(values.count == 100_000 && values.last == 99_999)
        let big = String(repeating: "x", count: 1_000_000)
        #expect(try rhs("a == '\(big)'") == val(.string(big)))
    }
}

// MARK: - Round trips and fuzzing

/// Builds random syntax trees that have a literal form.
private struct TreeGenerator {
    var rng: SeededRandomNumberGenerator
    var variables: [String] = []
    let names = ["name", "age", "owner", "dogs", "x1", "_y", "имя", "café", "in", "Any", "self", "like"]

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    mutating func predicate(depth: Int) -> PredicateSyntax {
        let choice = depth <= 0 ? int(0...1) : int(0...5)
        switch choice {
        case 0: return .comparison(comparison(depth: depth))
        case 1: return int(0...5) == 0 ? .constant(int(0...1) == 0) : .comparison(comparison(depth: depth))
        case 2: return .not(predicate(depth: depth - 1))
        case 3: return .and((0..<int(2...4)).map { _ in predicate(depth: depth - 1) })
        case 4: return .or((0..<int(2...4)).map { _ in predicate(depth: depth - 1) })
        default: return .comparison(comparison(depth: depth))
        }
    }

    mutating func comparison(depth: Int) -> ComparisonSyntax {
        let op = ComparisonOperator.allCases.randomElement(using: &rng)!
        var options = ComparisonOptions()
        if int(0...2) == 0 { options.insert(.caseInsensitive) }
        if int(0...2) == 0 { options.insert(.diacriticInsensitive) }
        var quantifier = Quantifier.direct
        let lhs: ExpressionSyntax
        if int(0...3) == 0 {
            quantifier = [.any, .all, .none].randomElement(using: &rng)!
            lhs = .keyPath(keyPath())
        } else {
            lhs = expression(depth: depth)
        }
        let rhs = op == .between ? .value(.list([value(depth: 0), value(depth: 0)])) : expression(depth: depth)
        return ComparisonSyntax(quantifier, lhs, op, options, rhs)
    }

    mutating func keyPath(minimumComponents: Int = 0) -> KeyPathSyntax {
        let variable = !variables.isEmpty && int(0...1) == 0 ? variables.randomElement(using: &rng) : nil
        let count = int(max(minimumComponents, variable == nil ? 0 : 0)...3)
        let components = (0..<count).map { _ in names.randomElement(using: &rng)! }
        return KeyPathSyntax(variable: variable, components)
    }

    mutating func expression(depth: Int) -> ExpressionSyntax {
        switch int(0...5) {
        case 0, 1: return .value(value(depth: 1))
        case 2, 3: return .keyPath(keyPath())
        case 4:
            let op = CollectionOperator.allCases.randomElement(using: &rng)!
            let property = op.takesProperty ? (0..<int(0...2)).map { _ in names.randomElement(using: &rng)! } : []
            return .collectionOperation(op, collection: .keyPath(keyPath()), property: property)
        default:
            guard depth > 0 else { return .keyPath(keyPath()) }
            let variable = "v\(int(0...3))"
            let collection = keyPath(minimumComponents: 1)
            variables.append(variable)
            let inner = predicate(depth: depth - 1)
            variables.removeLast()
            let op = CollectionOperator.allCases.randomElement(using: &rng)!
            return .collectionOperation(
                op, collection: .subquery(collection: collection, variable: variable, predicate: inner),
                property: op.takesProperty && int(0...1) == 0 ? ["age"] : [])
        }
    }

    mutating func value(depth: Int) -> PropertyValue {
        switch int(0...6) {
        case 0: return .null
        case 1: return .bool(int(0...1) == 0)
        case 2: return .int(Int64.random(in: .min ... .max, using: &rng) >> int(0...63))
        case 3:
            let d = Double(bitPattern: rng.next())
            return .double(d.isFinite ? d : Double(int(-1000...1000)) / 8)
        case 4, 5:
            let alphabet = Array("aZ é'\"\\\n\t\0Ёё🐕*?%$@{}()\u{301}\u{7F}")
            return .string(String((0..<int(0...8)).map { _ in alphabet.randomElement(using: &rng)! }))
        default:
            guard depth > 0 else { return .int(Int64(int(-5...5))) }
            return .list((0..<int(0...3)).map { _ in value(depth: depth - 1) })
        }
    }
}

@Suite struct PredicateParserFuzzTests {
    @Test func printedTreesParseBackEqual() throws {
        var generator = TreeGenerator(rng: SeededRandomNumberGenerator(seed: 0x5EED))
        for _ in 0..<2_000 {
            let tree = generator.predicate(depth: 4)
            let text = tree.description
            let parsed = try PredicateParser.parse(text)
            #expect(parsed == tree, "text: \(text)")
        }
    }

    @Test func randomBytesNeverCrash() throws {
        var rng = SeededRandomNumberGenerator(seed: 42)
        let alphabet = Array("abcANDORNOT $%@#0123456789.,(){}[]'\"\\=!<>&|-+*?eExXKdf ИйÉ\u{301}\n\t")
        var accepted = 0
        for round in 0..<5_000 {
            let text: String
            if round % 2 == 0 {
                let bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng)
                }
                text = String(decoding: bytes, as: UTF8.self)
            } else {
                text = String(
                    (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            }
            checkParses(text, accepted: &accepted)
        }
        #expect(accepted > 0)
    }

    @Test func mutatedTokenSequencesNeverCrash() throws {
        var rng = SeededRandomNumberGenerator(seed: 7)
        let lhs = [
            "name", "age", "dogs.name", "owner.age", "dogs.@count", "dogs.@max.age", "SELF", "#in", "%K", "1", "'s'",
        ]
        let ops = ["==", "!=", "<", ">=", "=>", "<>", "BEGINSWITH", "CONTAINS[c]", "LIKE[cd]", "IN", "ENDSWITH[d]"]
        let rhs = ["1", "-2", "0x1F", "2.5e3", "'s'", "\"t\"", "TRUE", "nil", "$0", "%@", "%d", "{1, 2}", "age", "{}"]
        let extra = [
            "(", ")", "{", "}", ",", ".", "@count", "AND", "OR", "NOT", "!", "&&", "||", "[c]", "ANY", "ALL",
            "NONE", "SUBQUERY(dogs, $d,", "$d", "$d.age", "TRUEPREDICATE", "BETWEEN", "{1, 2}", "'", "\\", "-",
        ]
        var accepted = 0
        for _ in 0..<20_000 {
            // A well-formed predicate of one to four comparisons…
            var tokens: [String] = []
            for i in 0..<Int.random(in: 1...4, using: &rng) {
                if i > 0 { tokens.append(Bool.random(using: &rng) ? "AND" : "OR") }
                if Int.random(in: 0...4, using: &rng) == 0 { tokens.append("NOT") }
                if Int.random(in: 0...5, using: &rng) == 0 { tokens.append("ANY") }
                tokens += [
                    lhs.randomElement(using: &rng)!, ops.randomElement(using: &rng)!, rhs.randomElement(using: &rng)!,
                ]
            }
            if Bool.random(using: &rng) { tokens = ["("] + tokens + [")"] }
            // …then zero to three random edits.
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                let index = Int.random(in: 0..<tokens.count, using: &rng)
                switch Int.random(in: 0...2, using: &rng) {
                case 0: tokens.remove(at: index)
                case 1: tokens.insert(extra.randomElement(using: &rng)!, at: index)
                default: tokens[index] = extra.randomElement(using: &rng)!
                }
                if tokens.isEmpty { break }
            }
            checkParses(tokens.joined(separator: " "), accepted: &accepted)
        }
        // Most unedited or harmlessly edited inputs parse; many edited ones fail.
        #expect(accepted > 2_000 && accepted < 19_000, "accepted \(accepted)")
    }

    /// Parses with a few arguments: either succeeds, and then printing and parsing again gives
    /// the same tree, or fails with a located query error.
    private func checkParses(_ text: String, accepted: inout Int) {
        do {
            let tree = try PredicateParser.parse(text, arguments: ["name", 2, [1, 2]])
            accepted += 1
            let again = try? PredicateParser.parse(tree.description)
            #expect(again == tree, "input: \(text) printed: \(tree.description)")
        } catch {
            #expect(error.code == .invalidQuery || error.code == .limitExceeded)
            let location = error.queryLocation
            #expect(location != nil && location!.column >= 1 && location!.text == text, "input: \(text)")
        }
    }
}
