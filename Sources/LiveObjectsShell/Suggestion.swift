import Foundation

/// "Did you mean …?": the closest of some names to a misspelt one, or the shell's spelling of
/// another tool's command.
enum Suggestion {
    /// The name closest to `name` (case-insensitive edit distance), if it is close enough to be
    /// a likely typo: at most a third of its length, and at most 3 edits.
    static func closest(to name: String, among names: [String]) -> String? {
        let target = Array(name.lowercased())
        var best: (name: String, distance: Int)?
        for candidate in names {
            let distance = editDistance(target, Array(candidate.lowercased()))
            if distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        guard let best, best.distance > 0, best.distance <= min(3, max(1, target.count / 3)) else { return nil }
        return best.name
    }

    /// The shell's spelling of a command typed out of the habits of psql, sqlite3 or SQL
    /// (`\d Dog` is `schema Dog`, `.tables` is `types`, `SELECT * FROM Dog` is `query Dog`), or
    /// nil. `arguments` are the words after the command's name.
    static func shellSpelling(of name: String, arguments: [String]) -> String? {
        let type = arguments.first.map { " " + $0.trimmingCharacters(in: CharacterSet(charactersIn: ";")) } ?? ""
        switch name.lowercased() {
        case "select":
            // SELECT … FROM TYPE [WHERE …]; SELECT COUNT(*) FROM TYPE: count.
            let lower = arguments.map { $0.lowercased() }
            guard let from = lower.firstIndex(of: "from"), from + 1 < arguments.count else { return "query TYPE" }
            let isCount = lower[..<from].joined().hasPrefix("count(")
            let type = arguments[from + 1].trimmingCharacters(in: CharacterSet(charactersIn: ";"))
            return (isCount ? "count " : "query ") + type + (lower.contains("where") ? " where PREDICATE" : "")
        case "\\d", "\\d+", ".schema", "describe", "desc": return "schema" + type
        case "\\dt", "\\dt+", ".tables": return "types"
        case "show" where arguments.first?.lowercased().hasPrefix("tables") == true: return "types"
        case "\\q", ".quit", ".exit": return "quit"
        case "\\?", "\\h", ".help": return "help"
        case ".mode": return "mode" + type
        case ".import": return "import"
        case ".dump", ".output", ".once": return "export"
        default: return nil
        }
    }

    /// `; did you mean 'NAME'?`, or nothing.
    static func clause(for name: String, among names: [String]) -> String {
        closest(to: name, among: names).map { "; did you mean '\($0)'?" } ?? ""
    }

    /// Levenshtein distance, with a swap of two neighbours counted as one edit.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousRow: [Int] = []
        var row = Array(0...b.count)
        for i in 1...a.count {
            var next = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                next[j] = min(row[j] + 1, next[j - 1] + 1, row[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    next[j] = min(next[j], previousRow[j - 2] + 1)
                }
            }
            previousRow = row
            row = next
        }
        return row[b.count]
    }
}
