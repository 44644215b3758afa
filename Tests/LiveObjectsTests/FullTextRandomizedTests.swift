import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Random documents in English, Russian and Japanese, random edits and random full-text queries:
/// the realm's `TEXT` answers are compared with a plain-Swift reference that knows each
/// document's words. `LIVEOBJECTS_FULLTEXT_SEED` replays a seed; a failure prints the seed and
/// the operations.
@Suite struct FullTextRandomizedTests {
    /// Words as written (with case and diacritics) and their folded form; a Japanese word written
    /// in Han or Hiragana is one word per character.
    static let vocabulary: [(written: String, folded: [String])] = [
        ("Coffee", ["coffee"]), ("COFFEEHOUSE", ["coffeehouse"]), ("café", ["cafe"]), ("Crème", ["creme"]),
        ("decaf", ["decaf"]), ("milk", ["milk"]), ("Ёлка", ["елка"]), ("ёж", ["еж"]), ("Пятёрочка", ["пятерочка"]),
        ("дом", ["дом"]), ("дома", ["дома"]), ("東京", ["東", "京"]), ("京都", ["京", "都"]), ("コーヒー", ["コーヒー"]),
        ("コーラ", ["コーラ"]), ("のむ", ["の", "む"]),
    ]
    static let separators = [" ", ", ", " — ", "\n", "! "]

    struct Document {
        var written: String
        var words: [String]
    }

    static func document(_ rng: inout SeededRandomNumberGenerator) -> Document {
        var written = ""
        var words: [String] = []
        for i in 0..<rng.int(1...6) {
            let word = rng.pick(vocabulary)!
            if i > 0 { written += rng.pick(separators)! }
            written += word.written
            words += word.folded
        }
        return Document(written: written, words: words)
    }

    /// A random query, with the reference's term list: (folded words, prefix, excluded).
    static func query(_ rng: inout SeededRandomNumberGenerator) -> (String, [([String], Bool, Bool)]) {
        var parts: [String] = []
        var terms: [([String], Bool, Bool)] = []
        for i in 0..<rng.int(1...3) {
            let word = rng.pick(vocabulary)!
            let excluded = i > 0 && rng.chance(0.3)
            var text = rng.chance(0.5) ? word.written.uppercased() : word.written
            var folded = word.folded
            var prefix = false
            if rng.chance(0.25), let last = folded.last, last.count > 2 {
                let cut = rng.int(1...last.count - 1)
                folded[folded.count - 1] = String(last.prefix(cut))
                text = folded.joined() + "*"
                prefix = true
            }
            parts.append((excluded ? "-" : "") + text)
            terms.append((folded, prefix, excluded))
        }
        return (parts.joined(separator: " "), terms)
    }

    static func reference(_ words: [String], _ terms: [([String], Bool, Bool)]) -> Bool {
        terms.allSatisfy { phrase, prefix, excluded in
            let found = words.indices.contains { start in
                guard start + phrase.count <= words.count else { return false }
                return phrase.indices.allSatisfy { k in
                    let word = words[start + k]
                    return prefix && k == phrase.count - 1 ? word.hasPrefix(phrase[k]) : word == phrase[k]
                }
            }
            return found != excluded
        }
    }

    @Test func textAnswersMatchTheReference() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_FULLTEXT_SEED") ?? 0x5EED_F175
        var rng = SeededRandomNumberGenerator(seed: seed)
        let realm = try await openFreshRealm(objectTypes: [FullTextNote.self])
        var documents: [Int: Document] = [:]
        var log: [String] = []
        for step in 0..<120 {
            let id = rng.int(1...30)
            if documents[id] != nil, rng.chance(0.2) {
                documents[id] = nil
                log.append("delete \(id)")
                try await realm.write { r in
                    if let note = r.object(ofType: FullTextNote.self, forPrimaryKey: id) { try r.delete(note) }
                }
            } else {
                let document = Self.document(&rng)
                documents[id] = document
                log.append("set \(id) \(document.written.debugDescription)")
                try await realm.write { r in
                    _ = try r.create(FullTextNote.self, value: ["id": id, "body": document.written], update: .modified)
                }
            }
            let (text, terms) = Self.query(&rng)
            log.append("query \(text.debugDescription)")
            let expected = documents.filter { Self.reference($0.value.words, terms) }.keys.sorted()
            let found = try await realm.read { r in
                try r.objects(FullTextNote.self).filter("body TEXT %@", text).map(\.id).sorted()
            }
            if found != expected {
                let operations = log.joined(separator: "\n")
                let report = "FullTextRandomizedTests: seed \(seed) (LIVEOBJECTS_FULLTEXT_SEED), step \(step): "
                let failure = report + "\(text) found \(found), expected \(expected); operations:\n\(operations)"
                Issue.record(Comment(rawValue: failure))
                return
            }
        }
    }
}
