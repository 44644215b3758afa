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
/// phrase, each of them is then tested with the query itself, which decides adjacency (and
/// excluded phrases) exactly as a scan does.
final class FullTextIndex: DerivedIndex {
    /// The rows holding each word.
    private(set) var rows: [String: Set<Int32>] = [:]

    init() {}

    /// An index of the live rows of a table's string column.
    convenience init(table: Table, property: Int) {
        self.init()
        let column = table.columns[property]!
        for row in table.liveRows { insert(column.value(at: Int(row)), row: row) }
    }

    func insert(_ value: PropertyValue, row: Int32) {
        guard case .string(let text) = value else { return }
        for word in Set(FullTextTokenizer.words(text)) { rows[word, default: []].insert(row) }
    }

    func remove(_ value: PropertyValue, row: Int32) {
        guard case .string(let text) = value else { return }
        for word in Set(FullTextTokenizer.words(text)) {
            guard var set = rows.removeValue(forKey: word) else { continue }
            set.remove(row)
            if !set.isEmpty { rows[word] = set }
        }
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

    /// The rows holding a word that starts with `prefix` (its UTF-8 bytes).
    private func rows(withPrefix prefix: String) -> Set<Int32> {
        var union = Set<Int32>()
        for (word, rows) in rows where word.hasPrefixBytes(prefix) { union.formUnion(rows) }
        return union
    }

    /// About how many bytes the index holds: each word's text and, per row it is in, a
    /// 4-byte row number with the set's slack (an estimate, for comparisons).
    var estimatedBytes: Int {
        var bytes = 0
        for (word, set) in rows { bytes += word.utf8.count + 16 + set.capacity * 4 * 4 / 3 + 32 }
        return bytes
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
        let (found, isExact) = fullTextIndex(property).candidates(query)
        let column = columns[property]!
        func matches(_ row: Int32) -> Bool {
            guard isLive(row) else { return false }
            if isExact { return true }
            guard case .string(let text) = column.value(at: Int(row)) else { return false }
            return query.matches(text)
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
        }
        return differences
    }
}
