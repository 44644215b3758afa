import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// The cache of parsed string predicates: a text parsed once is reused with other arguments,
/// and must give exactly what parsing it again would.
@Suite struct PredicateTemplateTests {
    /// Texts and argument lists; each text is run with every list of its group.
    static let cases: [(text: String, argumentSets: [[PropertyValue]])] = [
        ("name == %@", [[.string("Rex")], [.string("Fido")], [.int(3)], [.null], [.uuid(UUID())]]),
        ("age > $0 AND name BEGINSWITH[c] $1", [[.int(3), .string("r")], [.double(2.5), .string("")]]),
        ("$1 < age OR $0 == name", [[.string("a"), .int(1)], [.string("b"), .int(-7)]]),
        ("age BETWEEN {$0, $1}", [[.int(1), .int(5)], [.int(9), .int(2)]]),
        ("age IN {$0, 3, {$1}}", [[.int(1), .string("x")], [.null, .list([.int(2)])]]),
        ("age IN $0", [[.list([.int(1), .int(2)])], [.list([])]]),
        ("SUBQUERY(dogs, $d, $d.age > %@ AND $d.name == $1).@count > %@",
         [[.int(3), .string("Rex")], [.int(0), .string("Fido")]]),
        ("NOT (name == %@) OR TRUEPREDICATE", [[.string("a")], [.bool(true)]]),
        ("dogs.@max.age >= $0", [[.int(4)], [.double(1.5)]]),
        // These depend on the arguments' values, and are parsed every time.
        ("%K == %@", [[.string("name"), .string("Rex")], [.string("age"), .int(3)], [.int(1), .int(1)]]),
        ("age == %d", [[.int(3)], [.string("x")]]),
        ("age == %f", [[.int(3)], [.double(2.5)], [.string("x")]]),
        ("age BETWEEN %@", [[.list([.int(1), .int(2)])], [.int(1)], [.list([.int(1)])]]),
        // Errors: missing arguments, bad text.
        ("name == $1", [[.string("only one")], [.string("a"), .string("b")]]),
        ("name == %@ AND age == %@", [[.string("a")], [.string("a"), .int(1)]]),
        ("name == (", [[], [.string("x")]]),
    ]

    func direct(_ text: String, _ arguments: [PropertyValue]) -> Result<PredicateSyntax, LiveObjectsError> {
        Result { () throws(LiveObjectsError) in try PredicateParser.parse(text, arguments: arguments) }
    }

    func cached(_ templates: PredicateTemplates, _ text: String, _ arguments: [PropertyValue])
        -> Result<PredicateSyntax, LiveObjectsError>
    {
        Result { () throws(LiveObjectsError) in try templates.parse(text, arguments: arguments) }
    }

    @Test func givesWhatTheParserGives() {
        let templates = PredicateTemplates()
        // Twice over, so that the second round runs from the cache.
        for round in 0..<2 {
            for (text, argumentSets) in Self.cases {
                for arguments in argumentSets {
                    let want = direct(text, arguments)
                    let have = cached(templates, text, arguments)
                    switch (want, have) {
                    case (.success(let a), .success(let b)):
                        #expect(a == b, "round \(round): \(text) with \(arguments)")
                        // Equality leaves out offsets, which error messages use.
                        #expect(a.description == b.description)
                    case (.failure(let a), .failure(let b)):
                        #expect(a.message == b.message, "round \(round): \(text) with \(arguments)")
                        #expect(a.code == b.code)
                    default:
                        Issue.record("round \(round): \(text) with \(arguments): parser \(want), cache \(have)")
                    }
                }
            }
        }
    }

    @Test func argumentsNeverLeakBetweenCalls() throws {
        let templates = PredicateTemplates()
        let a = try templates.parse("name == %@ OR name == $0", arguments: [.string("a")])
        let b = try templates.parse("name == %@ OR name == $0", arguments: [.string("b")])
        let c = try templates.parse("name == %@ OR name == $0", arguments: [.string("a")])
        #expect(a != b)
        #expect(a == c)
        #expect(b == (try PredicateParser.parse("name == 'b' OR name == 'b'")))
    }

    @Test func staysBounded() throws {
        let templates = PredicateTemplates()
        for i in 0..<(PredicateTemplates.capacity * 2 + 3) {
            _ = try templates.parse("age == \(i) AND name == %@", arguments: [.string("x")])
            #expect(templates.count <= PredicateTemplates.capacity)
        }
        let long = "name == %@" + String(repeating: " ", count: PredicateTemplates.maxTextLength)
        let before = templates.count
        let tree = try templates.parse(long, arguments: [.string("x")])
        #expect(tree == (try PredicateParser.parse("name == 'x'")))
        #expect(templates.count == before)
    }

    @Test func sameTextGivesEachCallItsOwnResults() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            for (id, name) in [(1, "Rex"), (2, "Fido"), (3, "Rex"), (4, "Bo")] {
                _ = try r.create(Dog.self, value: ["id": id, "name": name, "age": id])
            }
            _ = try r.create(Person.self, value: ["id": 1, "name": "Rex"])
        }
        let found = try await realm.read { r in
            try ["Rex", "Fido", "Bo", "Nobody", "Rex"].map { name in
                try r.objects(Dog.self).filter("name == %@", name).map(\.id)
            }
        }
        #expect(found == [[1, 3], [2], [4], [], [1, 3]])
        // The same text on another table, and with the comparison the other way round.
        let people = try await realm.read { r in try r.objects(Person.self).filter("name == %@", "Rex").map(\.id) }
        #expect(people == [1])
        let typeMismatch = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in _ = try r.objects(Dog.self).filter("name == %@", 3) }
        }
        #expect(typeMismatch != nil)
        // Results made before a write show it; the text is the same.
        let (before, after) = try await realm.write { r in
            let results = try r.objects(Dog.self).filter("name == %@", "Bo")
            let before = results.count
            _ = try r.create(Dog.self, value: ["id": 5, "name": "Bo"])
            return (before, try r.objects(Dog.self).filter("name == %@", "Bo").count + 10 * results.count)
        }
        #expect(before == 1)
        #expect(after == 2 + 10 * 2)
        // Another realm with other data, same text.
        let other = try await openPets()
        try await other.write { r in _ = try r.create(Dog.self, value: ["id": 9, "name": "Rex"]) }
        let inOther = try await other.read { r in try r.objects(Dog.self).filter("name == %@", "Rex").map(\.id) }
        #expect(inOther == [9])
    }
}
