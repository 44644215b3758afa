import LiveObjectsStore

/// A full-text query (the right-hand side of `TEXT`), parsed and folded once.
///
/// Terms are separated by spaces and must all appear (AND):
/// - `coffee`: the word, in any case and with or without diacritics;
/// - `caf*`: a word starting with `caf`;
/// - `"flat white"`: the words next to each other, in this order (a phrase); a bare term that
///   splits into several words (`e-mail`, `東京`) is a phrase too;
/// - `-decaf`: rows with the word (or phrase, or prefix) are left out.
///
/// A query needs at least one term that must appear: an empty query, one of punctuation only
/// or one of exclusions only is refused (``FullTextQuery/Failure``), as a query that matched
/// everything or nothing by accident would hide the mistake.
package struct FullTextQuery: Hashable, Sendable {
    /// One term: a phrase of one or more words, the last one possibly a prefix.
    package struct Term: Hashable, Sendable {
        /// The folded words, in order.
        package var words: [String]
        /// Whether the last word is a prefix (`caf*`).
        package var lastIsPrefix: Bool
        /// Whether rows with the term are left out (`-term`).
        package var excluded: Bool
    }

    /// Why a query was refused.
    package struct Failure: Error, Equatable {
        /// What is wrong, for an error message.
        package let message: String
    }

    /// The terms, in the query's order.
    package let terms: [Term]
    /// The query as written.
    package let text: String

    /// Parses and folds a query.
    package init(_ text: String) throws(Failure) {
        self.text = text
        var terms: [Term] = []
        var rest = Substring(text)
        while let term = try Self.nextTerm(&rest) {
            if !term.words.isEmpty { terms.append(term) }
        }
        guard terms.contains(where: { !$0.excluded }) else {
            throw Failure(
                message: "a full-text query needs at least one word that must appear, but '\(text)' has "
                    + (terms.isEmpty ? "no word" : "only excluded words"))
        }
        self.terms = terms
    }

    /// Reads the next term, or nil at the end of the query.
    private static func nextTerm(_ rest: inout Substring) throws(Failure) -> Term? {
        rest = rest.drop(while: \.isWhitespace)
        guard !rest.isEmpty else { return nil }
        var excluded = false
        if rest.first == "-" {
            excluded = true
            rest = rest.dropFirst()
        }
        let body: Substring
        if rest.first == "\"" {
            rest = rest.dropFirst()
            guard let end = rest.firstIndex(of: "\"") else {
                throw Failure(message: "a phrase in a full-text query is not closed with '\"'")
            }
            body = rest[..<end]
            rest = rest[rest.index(after: end)...]
        } else {
            let end = rest.firstIndex(where: \.isWhitespace) ?? rest.endIndex
            body = rest[..<end]
            rest = rest[end...]
        }
        var lastIsPrefix = body.last == "*"
        if rest.first == "*" {
            lastIsPrefix = true
            rest = rest.dropFirst()
        }
        let words = FullTextTokenizer.words(String(body))
        return Term(words: words, lastIsPrefix: lastIsPrefix, excluded: excluded)
    }

    /// Whether a string matches.
    package func matches(_ string: String) -> Bool {
        matches(words: FullTextTokenizer.words(string))
    }

    /// Whether the words of a row (``FullTextTokenizer``) match.
    package func matches(words: [String]) -> Bool {
        for term in terms where Self.contains(words, term) == term.excluded { return false }
        return true
    }

    /// Whether the words contain the term's phrase.
    static func contains(_ words: [String], _ term: Term) -> Bool {
        let n = term.words.count
        guard n <= words.count else { return false }
        var start = 0
        while start + n <= words.count {
            if phrase(term, at: start, in: words) { return true }
            start += 1
        }
        return false
    }

    /// Whether the term's phrase starts at `start`.
    static func phrase(_ term: Term, at start: Int, in words: [String]) -> Bool {
        let last = term.words.count - 1
        for (k, word) in term.words.enumerated() {
            let candidate = words[start + k]
            if k == last && term.lastIsPrefix {
                if !candidate.hasPrefixBytes(word) { return false }
            } else if candidate != word {
                return false
            }
        }
        return true
    }
}

extension String {
    /// Whether the string's UTF-8 bytes start with those of `prefix` (words are folded to NFD,
    /// so a byte prefix is a prefix of whole scalars; `String.hasPrefix` compares characters,
    /// and `"cafe"` is not a character prefix of `"cafe\u{301}"`).
    func hasPrefixBytes(_ prefix: String) -> Bool {
        utf8.starts(with: prefix.utf8)
    }
}
