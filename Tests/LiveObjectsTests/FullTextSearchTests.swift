import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// A note with a body to search.
final class FullTextNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var body = ""
    @Persisted var title: String?
}

final class FullTextIndexedNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: .fullText) var body = ""
    @Persisted(indexed: .fullText) var title: String?
}

@Suite struct FullTextTokenizerTests {
    @Test func latinWordsAreFolded() {
        #expect(FullTextTokenizer.words("Crème Brûlée, CAFÉ au lait!") == ["creme", "brulee", "cafe", "au", "lait"])
        #expect(FullTextTokenizer.words("Straße") == ["strasse"])
        #expect(FullTextTokenizer.words("don't stop: 3.14") == ["don", "t", "stop", "3", "14"])
        #expect(FullTextTokenizer.words("   ").isEmpty)
        #expect(FullTextTokenizer.words("") == [])
        #expect(FullTextTokenizer.words("Łódź") == ["lodz"])
    }

    @Test func cyrillicAndGreek() {
        #expect(FullTextTokenizer.words("Пятёрочка — МАГАЗИН у дома") == ["пятерочка", "магазин", "у", "дома"])
        #expect(FullTextTokenizer.words("ΣΊΣΥΦΟΣ") == FullTextTokenizer.words("σίσυφος"))
    }

    @Test func hanAndHiraganaAreOneWordPerCharacter() {
        #expect(FullTextTokenizer.words("東京都に行きます") == ["東", "京", "都", "に", "行", "き", "ま", "す"])
        #expect(FullTextTokenizer.words("北京欢迎你") == ["北", "京", "欢", "迎", "你"])
    }

    @Test func katakanaRunsAreWords() {
        #expect(FullTextTokenizer.words("コーヒーを飲む") == ["コーヒー", "を", "飲", "む"])
        #expect(FullTextTokenizer.words("Tシャツ") == ["t", "シャツ"])
    }

    /// The differences from SQLite FTS5's `unicode61` that docs/QUERIES.md lists.
    @Test func foldingDiffersFromUnicode61AsDocumented() {
        #expect(FullTextTokenizer.words("всё мой") == FullTextTokenizer.words("все мои"))
        #expect(FullTextTokenizer.words("ﬁne Straße") == ["fine", "strasse"])
        #expect(FullTextTokenizer.words("いつも東京で") == ["い", "つ", "も", "東", "京", "て"])
    }

    @Test func hangulRunsAreWords() {
        #expect(FullTextTokenizer.words("안녕하세요 세계") == ["안녕하세요", "세계"])
    }

    @Test func eachEmojiIsAWord() {
        #expect(FullTextTokenizer.words("I ❤️ coffee☕️!") == ["i", "❤", "coffee", "☕"])
        #expect(FullTextTokenizer.words("© 2024 1️⃣") == ["©", "2024", "1\u{20E3}"])
        #expect(FullTextTokenizer.words("👨‍👩‍👧🇯🇵👍🏽") == ["👨‍👩‍👧", "🇯🇵", "👍🏽"])
    }
}

@Suite struct FullTextQueryTests {
    func matches(_ text: String, _ query: String) throws -> Bool {
        try FullTextQuery(query).matches(text)
    }

    @Test func allTermsMustAppear() throws {
        #expect(try matches("Strong coffee, no sugar", "coffee strong"))
        #expect(try !matches("Strong coffee, no sugar", "coffee milk"))
        #expect(try matches("CAFÉ crème", "cafe CREME"))
        #expect(try !matches("coffeehouse", "coffee"))  // whole words only
    }

    @Test func exclusionPrefixAndPhrase() throws {
        #expect(try !matches("decaf coffee", "coffee -decaf"))
        #expect(try matches("black coffee", "coffee -decaf"))
        #expect(try matches("coffeehouse", "coffee*"))
        #expect(try matches("Café society", "caf*"))
        #expect(try !matches("a cafe", "-caf* a"))
        #expect(try matches("a flat white please", "\"flat white\""))
        #expect(try !matches("white flat", "\"flat white\""))
        #expect(try !matches("flat, and white", "\"flat white\" -and"))
        #expect(try matches("send an e-mail", "e-mail"))
        #expect(try !matches("mail e", "e-mail"))
    }

    @Test func scriptsWithoutSpaces() throws {
        #expect(try matches("東京都に行きます", "東京"))
        #expect(try !matches("京東", "東京"))
        #expect(try matches("コーヒーを飲む", "コーヒー"))
        #expect(try matches("コーヒーを飲む", "コー*"))
        #expect(try matches("Пятёрочка у дома", "пятерочка"))
        #expect(try matches("I ❤️ coffee", "❤️"))
    }

    @Test func queriesWithoutARequiredWordAreRefused() {
        for query in ["", "   ", "-decaf", "-a -b", "!!", "\"unclosed"] {
            #expect(throws: FullTextQuery.Failure.self, "\(query)") { try FullTextQuery(query) }
        }
    }
}

@Suite struct FullTextPredicateTests {
    func openNotes() async throws -> Realm {
        let realm = try await openFreshRealm(objectTypes: [FullTextNote.self])
        try await realm.write { r in
            let bodies = [
                "Strong coffee with milk", "Decaf coffee, no sugar", "Пятёрочка у дома",
                "東京都に行きます", "Café crème at the café", "Tea, not coffee", "I ❤️ coffee",
            ]
            for (id, body) in bodies.enumerated() {
                _ = try r.create(FullTextNote.self, value: ["id": id + 1, "body": body, "title": body.uppercased()])
            }
        }
        return realm
    }

    func ids(_ realm: Realm, _ predicate: String) async throws -> [Int] {
        try await realm.read { r in try r.objects(FullTextNote.self).filter(predicate).map(\.id).sorted() }
    }

    @Test func textOperator() async throws {
        let realm = try await openNotes()
        #expect(try await ids(realm, "body TEXT 'coffee'") == [1, 2, 6, 7])
        #expect(try await ids(realm, "body TEXT 'coffee -decaf'") == [1, 6, 7])
        #expect(try await ids(realm, "body text 'CAF*'") == [5])
        #expect(try await ids(realm, "body TEXT '東京'") == [4])
        #expect(try await ids(realm, "body TEXT 'пятерочка'") == [3])
        #expect(try await ids(realm, "NOT body TEXT 'coffee'") == [3, 4, 5])
        #expect(try await ids(realm, "title TEXT 'coffee' AND id > 5") == [6, 7])
        #expect(try await ids(realm, "body TEXT '\"no sugar\"'") == [2])
    }

    @Test func typedMatches() async throws {
        let realm = try await openNotes()
        let typed = try await realm.read { r in
            r.objects(FullTextNote.self).where { $0.body.matches("coffee -decaf") }.map(\.id).sorted()
        }
        #expect(typed == [1, 6, 7])
    }

    @Test func badFullTextQueriesAreTypedErrors() async throws {
        let realm = try await openNotes()
        for predicate in ["body TEXT ''", "body TEXT '-decaf'", "id TEXT 'coffee'", "body TEXT title"] {
            do {
                _ = try await ids(realm, predicate)
                Issue.record("expected an error for \(predicate)")
            } catch let error as LiveObjectsError {
                #expect(error.code == .invalidQuery, "\(predicate): \(error)")
            }
        }
    }

    @Test func resultsStayLive() async throws {
        let realm = try await openNotes()
        try await realm.write { r in
            _ = try r.create(FullTextNote.self, value: ["id": 8, "body": "more COFFEE"])
            if let note = r.object(ofType: FullTextNote.self, forPrimaryKey: 2) { note.body = "just tea" }
        }
        #expect(try await ids(realm, "body TEXT 'coffee'") == [1, 6, 7, 8])
    }
}
