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
            if rng.chance(0.2) {
                // A quoted phrase of two words, the second maybe a prefix.
                let second = rng.pick(vocabulary)!
                folded += second.folded
                text = "\"" + text + " " + second.written
                if rng.chance(0.3), let last = folded.last, last.count > 2 {
                    let cut = rng.int(1...last.count - 1)
                    folded[folded.count - 1] = String(last.prefix(cut))
                    text = "\"" + word.written + " " + second.folded.dropLast().joined() + folded.last! + "*"
                    prefix = true
                }
                text += "\""
            } else if rng.chance(0.25), let last = folded.last, last.count > 2 {
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

    /// The same edits on a note with a full-text index and one without, and thrown writes: the
    /// index's answers equal the scan's and the reference's, inside a write too, and the index
    /// equals one rebuilt from the data after every step (``StoreInvariants``).
    @Test func textAnswersMatchTheReference() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_FULLTEXT_SEED") ?? 0x5EED_F175
        var rng = SeededRandomNumberGenerator(seed: seed)
        let realm = try await openFreshRealm(objectTypes: [FullTextNote.self, FullTextIndexedNote.self])
        var documents: [Int: Document] = [:]
        var log: [String] = []
        func fail(_ step: Int, _ message: String) {
            let report = "FullTextRandomizedTests: seed \(seed) (LIVEOBJECTS_FULLTEXT_SEED), step \(step): "
            Issue.record(Comment(rawValue: report + message + "; operations:\n" + log.joined(separator: "\n")))
        }
        for step in 0..<150 {
            let id = rng.int(1...30)
            let (text, terms) = Self.query(&rng)
            if documents[id] != nil, rng.chance(0.2) {
                documents[id] = nil
                log.append("delete \(id)")
                try await realm.write { r in try Self.delete(id, r) }
            } else if rng.chance(0.15) {
                let document = Self.document(&rng)
                log.append("set \(id) \(document.written.debugDescription), query \(text.debugDescription), then throw")
                // Inside the write the index holds the write's changes; the write then rolls back.
                let alsoDeleted = rng.chance(0.5) ? rng.int(1...30) : nil
                do {
                    try await realm.write { r in
                        try Self.set(id, document.written, r)
                        if let alsoDeleted { try Self.delete(alsoDeleted, r) }
                        throw AbandonedWrite(answers: try Self.answers(text, r))
                    }
                    fail(step, "the write did not throw")
                    return
                } catch let abandoned as AbandonedWrite {
                    if abandoned.answers.0 != abandoned.answers.1 {
                        fail(
                            step,
                            "inside the write, \(text) found \(abandoned.answers.1) with the index, "
                                + "\(abandoned.answers.0) by a scan")
                        return
                    }
                }
            } else {
                let document = Self.document(&rng)
                documents[id] = document
                log.append("set \(id) \(document.written.debugDescription)")
                try await realm.write { r in try Self.set(id, document.written, r) }
            }
            log.append("query \(text.debugDescription)")
            let expected = documents.filter { Self.reference($0.value.words, terms) }.keys.sorted()
            let (scanned, indexed) = try await realm.read { r in try Self.answers(text, r) }
            if scanned != expected || indexed != expected {
                fail(step, "\(text) found \(scanned) by a scan, \(indexed) with the index, expected \(expected)")
                return
            }
            let violations = try await realm.read { r in StoreInvariants.violations(in: r.store) }
            if !violations.isEmpty {
                fail(step, "the store breaks its invariants: \(violations)")
                return
            }
        }
    }

    /// Thrown to roll a write back, with what it found inside (scan, index).
    struct AbandonedWrite: Error {
        let answers: ([Int], [Int])
    }

    static func set(_ id: Int, _ body: String, _ r: isolated Realm) throws {
        _ = try r.create(FullTextNote.self, value: ["id": id, "body": body], update: .modified)
        _ = try r.create(FullTextIndexedNote.self, value: ["id": id, "body": body], update: .modified)
    }

    static func delete(_ id: Int, _ r: isolated Realm) throws {
        if let note = r.object(ofType: FullTextNote.self, forPrimaryKey: id) { try r.delete(note) }
        if let note = r.object(ofType: FullTextIndexedNote.self, forPrimaryKey: id) { try r.delete(note) }
    }

    /// The ids a full-text query finds by a scan (no index) and with the index.
    static func answers(_ text: String, _ r: isolated Realm) throws -> ([Int], [Int]) {
        let scanned = try r.objects(FullTextNote.self).filter("body TEXT %@", text).map(\.id).sorted()
        let indexed = try r.objects(FullTextIndexedNote.self).filter("body TEXT %@", text).map(\.id).sorted()
        return (scanned, indexed)
    }
}

/// The full-text index's word sequences (one array, a span per row) against a dictionary, over
/// enough changes that the array is compacted many times. `LIVEOBJECTS_FULLTEXT_SEED` replays.
@Suite struct WordSequencesTests {
    @Test func spansFollowEveryChangeAndCompactionBoundsTheArray() {
        let seed = TestEnvironment.seed("LIVEOBJECTS_FULLTEXT_SEED") ?? 0x5EED_5E05
        var rng = SeededRandomNumberGenerator(seed: seed)
        var sequences = WordSequences()
        var model: [Int32: [UInt32]] = [:]
        var log: [String] = []
        var compactions = 0
        for step in 0..<6_000 {
            let row = Int32(rng.int(0...199))
            if rng.chance(0.3) {
                log.append("remove \(row)")
                sequences.remove(row: row)
                model[row] = nil
            } else {
                let words = (0..<rng.int(0...60)).map { _ in UInt32(rng.int(0...999)) }
                log.append("set \(row) \(words.count) words")
                let before = sequences.arenaCount
                sequences.set(words, row: row)
                if sequences.arenaCount < before { compactions += 1 }
                model[row] = words
            }
            let live = model.values.reduce(0) { $0 + $1.count }
            var problem: String?
            if let wrong = (0..<200).map(Int32.init).first(where: { sequences.words(of: $0) != model[$0] }) {
                problem = "row \(wrong) holds the wrong words"
            } else if Set(sequences.rows) != Set(model.keys) {
                problem = "the rows with words are \(sequences.rows.sorted())"
            } else if sequences.arenaCount > 2 * live + 4_096 + 60 {
                problem = "the arena holds \(sequences.arenaCount) numbers for \(live) in use"
            }
            if let problem {
                let header = "WordSequencesTests: seed \(seed) (LIVEOBJECTS_FULLTEXT_SEED), step \(step): "
                Issue.record(Comment(rawValue: header + problem + "; operations:\n" + log.joined(separator: "\n")))
                return
            }
        }
        #expect(compactions > 5)
    }
}
