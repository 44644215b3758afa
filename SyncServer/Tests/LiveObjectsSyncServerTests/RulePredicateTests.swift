import LiveObjectsJSON
import Testing

@testable import LiveObjectsSyncServer

/// The rules' predicates alone, without a database: what they read and how they decide.
@Suite struct RulePredicateTests {
    static func string(_ text: String) -> JSONValue { .object([(key: "string", value: .string(text))]) }
    static func list(_ items: [String]) -> JSONValue { .object([(key: "list", value: .array(items.map(string)))]) }
    static func reference(_ id: String) -> JSONValue {
        .object([
            (key: "ref", value: .object([(key: "id", value: string(id)), (key: "type", value: .string("Board"))]))
        ])
    }

    static let boards: [String: [String: JSONValue]] = [
        "b1": ["owner": string("ann"), "members": list(["ann", "bob"])],
        "b2": ["owner": string("cat"), "members": list([])],
    ]

    func allows(_ rule: String, _ values: [String: JSONValue], _ user: String) throws -> Bool {
        try RulePredicate.parse(rule).allows(values, user: user) { name in
            guard case .object(let members) = name.id, case .string(let id)? = members.first?.value else { return nil }
            return Self.boards[id]
        }
    }

    @Test func comparisonsQuantifiersAndLinks() throws {
        let task: [String: JSONValue] = ["owner": Self.string("dan"), "board": Self.reference("b1")]
        #expect(try allows("owner == $user", task, "dan"))
        #expect(try !allows("owner == $user", task, "ann"))
        #expect(try allows("owner != $user", task, "ann"))
        #expect(try allows("ANY board.members == $user", task, "bob"))
        #expect(try !allows("ANY board.members == $user", task, "cat"))
        #expect(try allows("$user IN board.members", task, "ann"))
        #expect(try allows("NONE board.members == $user", task, "cat"))
        #expect(try !allows("ALL board.members == $user", task, "ann"))
        #expect(try allows("board.owner == 'ann' AND NOT owner == 'ann'", task, "x"))
        #expect(try allows("owner == \"x\" || (board.owner == $user && TRUEPREDICATE)", task, "ann"))
        #expect(try !allows("FALSEPREDICATE OR board == nil", task, "ann"))
        // A nil link, a missing board and a missing property read as nil; through a list, as
        // no element (so ALL holds, and != under ANY does not).
        for board: JSONValue in [.object([(key: "ref", value: .null)]), Self.reference("b9")] {
            let loose: [String: JSONValue] = ["owner": Self.string("dan"), "board": board]
            #expect(try allows("board == nil", loose, "dan"))
            #expect(try allows("board.owner == nil", loose, "dan"))
            #expect(try !allows("ANY board.members == $user", loose, "dan"))
            #expect(try !allows("ANY board.members != $user", loose, "dan"))
            #expect(try allows("ALL board.members == $user", loose, "dan"))
        }
        #expect(try allows("title == nil", task, "dan"))
        #expect(try allows("owner == nil", ["owner": .object([(key: "null", value: .bool(true))])], "dan"))
        #expect(try !allows("ANY board.members == $user", ["board": Self.reference("b2")], "cat"))
    }

    @Test func integersAndBools() throws {
        let values: [String: JSONValue] = [
            "level": .object([(key: "int", value: .int(3))]), "open": .object([(key: "bool", value: .bool(true))]),
        ]
        #expect(try allows("level == 3 AND open == true", values, "u"))
        #expect(try !allows("level == -3 OR open == false", values, "u"))
        #expect(try !allows("level == '3'", values, "u"), "a string is not an integer")
    }

    @Test func syntaxErrorsNameTheirColumn() {
        let cases: [(String, Int, String)] = [
            ("owner == $me", 10, "one variable"),
            ("owner >= 3", 7, "is not part of a rule"),
            ("owner == ", 10, "expected $user"),
            ("owner == 'open", 10, "not closed"),
            ("owner == $user owner", 16, "expected AND, OR"),
            ("(owner == $user", 16, "expected ')'"),
            ("$user == owner", 7, "expected IN"),
            ("a.b.c.d.e == 1", 11, "at most 4"),
            ("AND == 1", 1, "expected a property name"),
            ("owner == 99999999999999999999", 10, "64-bit"),
            (String(repeating: "NOT ", count: 40) + "a == 1", 129, "nests too deeply"),
        ]
        for (text, column, message) in cases {
            do {
                _ = try RulePredicate.parse(text)
                Issue.record("\(text) parsed")
            } catch {
                #expect(error.column == column && error.message.contains(message), "\(text): \(error)")
            }
        }
    }
}
