import LiveObjectsStore

/// The full-text index of one `String` property (`@Persisted(indexed: .fullText)`): the rows
/// of each folded word (``FullTextTokenizer``).
///
/// Built from the column on the first `TEXT` query that needs it and attached to the table as
/// a ``DerivedIndex``; from then on the store keeps it in step with every change of the
/// property (creation, change, deletion, and their rollbacks), so it is never written to a
/// file and never rebuilt for a commit. A query reads the rows of its words, not the column:
/// the rows that hold every word of every required term (all words beginning with the prefix,
/// for `caf*`), less the rows holding an excluded word, are the answer; when the query has a
/// phrase, each of them is then tested for adjacency (and excluded phrases) against the row's
/// words in order, which the index keeps as word numbers (``sequences``), so that a phrase never
/// splits a string into words again.
final class FullTextIndex: DerivedIndex {
    /// The rows holding each word.
    private(set) var rows: [String: Set<Int32>] = [:]
    /// Each row's words in order, as numbers into ``words`` (the tokenizer finds them in order
    /// for ``rows`` anyway).
    private(set) var sequences = WordSequences()
    /// The number of each word a row has held (never reused; a word no row holds any more keeps
    /// its number).
    private var numbers: [String: UInt32] = [:]
    /// The words by number.
    private var words: [String] = []

    init() {}

    /// An index of the live rows of a table's string column.
    convenience init(table: Table, property: Int) {
        self.init()
        let column = table.columns[property]!
        for row in table.liveRows { insert(column.value(at: Int(row)), row: row) }
        sequences.shrink()
    }

    func insert(_ value: PropertyValue, row: Int32) {
        guard case .string(let text) = value else { return }
        let found = FullTextTokenizer.words(text)
        for word in Set(found) { rows[word, default: []].insert(row) }
        sequences.set(found.map(number), row: row)
    }

    func remove(_ value: PropertyValue, row: Int32) {
        guard case .string(let text) = value else { return }
        // The row's words are kept: no need to split the old string again.
        let held = sequences.words(of: row).map { Set($0.map(word)) } ?? Set(FullTextTokenizer.words(text))
        for word in held {
            guard var set = rows.removeValue(forKey: word) else { continue }
            set.remove(row)
            if !set.isEmpty { rows[word] = set }
        }
        sequences.remove(row: row)
    }

    /// The number of a word, given one if it has none.
    private func number(_ word: String) -> UInt32 {
        if let n = numbers[word] { return n }
        let n = UInt32(words.count)
        numbers[word] = n
        words.append(word)
        return n
    }

    /// Whether a row's words match `query`: the same answer as ``FullTextQuery/matches(_:)`` on
    /// the row's string, from its word numbers.
    func matches(_ query: PhraseMatcher, row: Int32) -> Bool {
        sequences.withWords(of: row) { query.matches($0) }
    }

    /// A query's terms as word numbers, to test rows' sequences against.
    func phraseMatcher(_ query: FullTextQuery) -> PhraseMatcher {
        PhraseMatcher(
            terms: query.terms.map { term in
                let last = term.words.count - 1
                var ids: [UInt32?] = term.words.map { numbers[$0] }
                var prefixed: Set<UInt32> = []
                if term.lastIsPrefix {
                    ids[last] = nil
                    for (word, n) in numbers where word.hasPrefixBytes(term.words[last]) { prefixed.insert(n) }
                }
                return PhraseMatcher.Term(
                    ids: ids, prefixed: term.lastIsPrefix ? prefixed : nil, excluded: term.excluded)
            })
    }

    /// The rows that may match `query`: those holding every word of each term that must
    /// appear, less those holding an excluded word. Exact (`isExact`) when no term is a phrase
    /// of several words; otherwise a superset, which the caller tests with the query.
    func candidates(_ query: FullTextQuery) -> (rows: Set<Int32>, isExact: Bool) {
        var sets: [Set<Int32>] = []
        var excluded: [Set<Int32>] = []
        var isExact = true
        for term in query.terms {
            if term.words.count > 1 { isExact = false }
            // An excluded phrase is decided by the test: only an excluded word is subtracted here.
            if term.excluded && term.words.count > 1 { continue }
            for (k, word) in term.words.enumerated() {
                let found = k == term.words.count - 1 && term.lastIsPrefix ? rows(withPrefix: word) : rows[word] ?? []
                if term.excluded { excluded.append(found) } else { sets.append(found) }
            }
        }
        sets.sort { $0.count < $1.count }
        guard var result = sets.first else { return ([], true) }
        for set in sets.dropFirst() where !result.isEmpty { result.formIntersection(set) }
        for set in excluded where !result.isEmpty { result.subtract(set) }
        return (result, isExact)
    }

    /// The word of a number.
    func word(_ number: UInt32) -> String { words[Int(number)] }

    /// The rows holding a word that starts with `prefix` (its UTF-8 bytes).
    private func rows(withPrefix prefix: String) -> Set<Int32> {
        var union = Set<Int32>()
        for (word, rows) in rows where word.hasPrefixBytes(prefix) { union.formUnion(rows) }
        return union
    }

    /// About how many bytes the index holds: each word's text and, per row it is in, a
    /// 4-byte row number with the set's slack; per row, its words' 4-byte numbers and the
    /// array's header (an estimate, for comparisons).
    var estimatedBytes: Int {
        var bytes = 0
        for (word, set) in rows { bytes += word.utf8.count + 16 + set.capacity * 4 * 4 / 3 + 32 }
        bytes += sequences.estimatedBytes
        return bytes + words.reduce(0) { $0 + 16 + $1.utf8.count }
    }
}

/// The word numbers of every row, in one array: each row's words are a span of it. A row whose
/// words change gets a new span at the end; the old one is left as waste, and the array is
/// compacted when the waste outgrows what rows use.
package struct WordSequences {
    private var arena: [UInt32] = []
    /// Per row number: where its words start in `arena` and how many (`count == .max`: none).
    private var spans: [(start: UInt32, count: UInt32)] = []
    /// How many numbers in `arena` no row uses.
    private var waste = 0

    package init() {}

    /// How many numbers the arena holds, used or not.
    package var arenaCount: Int { arena.count }

    /// Keeps a row's words.
    package mutating func set(_ numbers: [UInt32], row: Int32) {
        remove(row: row)
        let index = Int(row)
        if index >= spans.count { spans += repeatElement((0, .max), count: index + 1 - spans.count) }
        precondition(arena.count + numbers.count < Int(UInt32.max), "a full-text index holds at most 4 billion words")
        spans[index] = (UInt32(arena.count), UInt32(numbers.count))
        arena += numbers
    }

    /// Forgets a row's words.
    package mutating func remove(row: Int32) {
        let index = Int(row)
        guard index < spans.count, spans[index].count != .max else { return }
        waste += Int(spans[index].count)
        spans[index] = (0, .max)
        if waste > 4_096 && waste > arena.count / 2 { compact() }
    }

    /// Gives the arena exactly the room its numbers need (after a build).
    mutating func shrink() {
        arena = Array(arena[...])
    }

    private mutating func compact() {
        var compacted: [UInt32] = []
        compacted.reserveCapacity(arena.count - waste)
        for index in spans.indices where spans[index].count != .max {
            let (start, count) = spans[index]
            spans[index].start = UInt32(compacted.count)
            compacted += arena[Int(start)..<Int(start) + Int(count)]
        }
        arena = compacted
        waste = 0
    }

    /// Calls `body` with a row's words (none for a row without them).
    func withWords<R>(of row: Int32, _ body: (UnsafeBufferPointer<UInt32>) -> R) -> R {
        let index = Int(row)
        guard index < spans.count, spans[index].count != .max else {
            return body(UnsafeBufferPointer(start: nil, count: 0))
        }
        let (start, count) = spans[index]
        return arena.withUnsafeBufferPointer { all in
            body(UnsafeBufferPointer(rebasing: all[Int(start)..<Int(start) + Int(count)]))
        }
    }

    /// A row's words, or nil when it has none kept.
    package func words(of row: Int32) -> [UInt32]? {
        let index = Int(row)
        guard index < spans.count, spans[index].count != .max else { return nil }
        let (start, count) = spans[index]
        return Array(arena[Int(start)..<Int(start) + Int(count)])
    }

    /// The rows whose words are kept.
    package var rows: [Int32] { spans.indices.filter { spans[$0].count != .max }.map { Int32($0) } }

    /// About how many bytes the numbers and spans take.
    var estimatedBytes: Int { arena.capacity * 4 + spans.capacity * 8 }
}

/// A full-text query's terms as the word numbers of one index, testing rows' word sequences.
struct PhraseMatcher {
    struct Term {
        /// The number of each word of the phrase; nil for a word the index has never seen (the
        /// term appears nowhere), and for the last word when it is a prefix.
        var ids: [UInt32?]
        /// The numbers of the words the last word is a prefix of, when it is one.
        var prefixed: Set<UInt32>?
        var excluded: Bool
    }

    var terms: [Term]

    /// Whether a row with these words matches: every term that must appear does, no excluded
    /// one does.
    func matches(_ sequence: UnsafeBufferPointer<UInt32>) -> Bool {
        for term in terms where Self.contains(sequence, term) == term.excluded { return false }
        return true
    }

    /// Whether the sequence holds the term's words next to each other, in order.
    static func contains(_ sequence: UnsafeBufferPointer<UInt32>, _ term: Term) -> Bool {
        let n = term.ids.count
        guard n <= sequence.count else { return false }
        let last = n - 1
        if term.prefixed == nil && term.ids.contains(nil) { return false }
        for start in 0...(sequence.count - n) {
            var k = 0
            while k < n {
                let word = sequence[start + k]
                if k == last, let prefixed = term.prefixed {
                    if !prefixed.contains(word) { break }
                } else if term.ids[k] != word {
                    break
                }
                k += 1
            }
            if k == n { return true }
        }
        return false
    }
}

extension Table {
    /// The full-text index of a property, built from its column on first use.
    func fullTextIndex(_ property: Int) -> FullTextIndex {
        if let index = derivedIndexes[property] as? FullTextIndex { return index }
        let index = FullTextIndex(table: self, property: property)
        derivedIndexes[property] = index
        return index
    }

    /// The rows among `candidates` (all live rows when nil), in their order, whose value of a
    /// full-text indexed property matches `query`, found through the index.
    func fullTextMatches(_ property: Int, _ query: FullTextQuery, candidates: [Int32]?) -> [Int32] {
        let index = fullTextIndex(property)
        let (found, isExact) = index.candidates(query)
        let phrases = isExact ? nil : index.phraseMatcher(query)
        func matches(_ row: Int32) -> Bool {
            guard isLive(row) else { return false }
            guard let phrases else { return true }
            return index.matches(phrases, row: row)
        }
        if let candidates {
            return candidates.filter { found.contains($0) && matches($0) }
        }
        return found.sorted().filter(matches)
    }
}

extension Table {
    /// What differs between each full-text index attached to the table and one built afresh
    /// from its data (for the store's invariant checks); empty when they agree.
    package func fullTextIndexDifferences() -> [String] {
        var differences: [String] = []
        for (p, derived) in derivedIndexes {
            guard let index = derived as? FullTextIndex else { continue }
            let name = "\(self.name).\(schema.properties[p].name)"
            if !schema.properties[p].isFullTextIndexed {
                differences.append("\(name) has a full-text index but is not full-text indexed")
            }
            let rebuilt = FullTextIndex(table: self, property: p)
            for word in Set(index.rows.keys).union(rebuilt.rows.keys) where index.rows[word] != rebuilt.rows[word] {
                let have = (index.rows[word] ?? []).sorted()
                let want = (rebuilt.rows[word] ?? []).sorted()
                differences.append("\(name): the full-text index maps '\(word)' to slots \(have), the data to \(want)")
            }
            let column = columns[p]!
            for row in Set(index.sequences.rows).union(liveRows) {
                let want: [String]? =
                    if isLive(row), case .string(let text) = column.value(at: Int(row)) {
                        FullTextTokenizer.words(text)
                    } else { nil }
                let have = index.sequences.words(of: row).map { $0.map(index.word) }
                if have != want {
                    differences.append(
                        "\(name): the full-text index keeps the words \(have.map { "\($0)" } ?? "none") for slot "
                            + "\(row), the data has \(want.map { "\($0)" } ?? "none")")
                }
            }
        }
        return differences
    }
}
