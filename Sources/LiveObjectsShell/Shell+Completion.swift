import Foundation
import LiveObjects

/// Tab completion: what can follow the words before the cursor, by the grammar of the command
/// they start.
extension Shell {
    /// The keywords of predicates (not MATCHES, which the query language refuses: it has no
    /// regular expressions).
    static let predicateKeywords = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "ANY", "ALL",
        "NONE", "nil", "true", "false", "TRUEPREDICATE", "FALSEPREDICATE",
    ]
    static let sortModifiers = ["asc", "desc", "natural", "nocase", "binary"]
    static let propertyModifiers = ["primary", "indexed", "fulltext", "cascade", "deny", "nullify"]

    /// The completions of the word before `cursor` (an index in characters) in `line`.
    package func completions(_ line: String, cursor: Int) -> CompletionCandidates {
        let before = Array(line.prefix(cursor))
        var start = before.count
        while start > 0, Self.isWordCharacter(before[start - 1]) { start -= 1 }
        let word = String(before[start...])
        // The words of the command being typed (after the last ';').
        var head = String(before[..<start])
        if let semicolon = head.lastIndex(of: ";") { head = String(head[head.index(after: semicolon)...]) }
        let words = head.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        let candidates = candidates(after: words, head: head, word: word)
        let lowered = word.lowercased()
        var seen = Set<String>()
        let matching = candidates.filter { $0.lowercased().hasPrefix(lowered) && seen.insert($0).inserted }
        return CompletionCandidates(start: start, candidates: matching)
    }

    static func isWordCharacter(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || "_.@/~-".contains(c)
    }

    var typeNames: [String] { realm.schema.objectSchemas.map(\.name) }

    func candidates(after words: [String], head: String, word: String) -> [String] {
        guard let first = words.first else { return CommandDoc.all.flatMap { [$0.name] + $0.aliases } }
        guard let command = CommandDoc.named(first)?.name else { return [] }
        let lower = words.map { $0.lowercased() }
        switch command {
        case "help": return words.count == 1 ? CommandDoc.all.map(\.name) : []
        case "schema": return words.count == 1 ? typeNames : []
        case "import", "export":
            return words.count == 1 ? typeNames + fileNames(word) : words.count == 2 ? fileNames(word) : []
        case "define":
            if words.count == 1 { return ["embedded"] + typeNames }
            if head.hasSuffix(":") || words.last?.hasSuffix(":") == true || words.last == "[" {
                return CommandParser.primitiveTypes.keys.sorted() + typeNames
            }
            return Self.propertyModifiers
        case "create", "get": return words.count == 1 ? typeNames : []
        case "mode": return words.count == 1 ? OutputMode.allCases.map(\.rawValue) : []
        case "query", "count", "update", "delete", "watch":
            var typeIndex = 1
            if command == "watch" {
                guard let equals = words.firstIndex(where: { $0.hasSuffix("=") }) else { return [] }
                typeIndex = equals + 1
                if lower.count > typeIndex, lower[typeIndex] == "query" { typeIndex += 1 }
            }
            if words.count == typeIndex { return typeNames + (command == "watch" ? ["query"] : []) }
            guard words.count > typeIndex, let schema = realm.schema[words[typeIndex]] else { return [] }
            let clauses = lower[(typeIndex + 1)...]
            let isQuery = command == "query" || command == "watch"
            // Clauses that may come next, after the predicate or the sort.
            let later = isQuery ? (command == "query" ? ["section", "limit"] : ["limit"]) : []
            if clauses.isEmpty {
                return ["where"] + (isQuery ? ["sort"] + later : [])
            }
            if let section = clauses.lastIndex(of: "section"), command == "query" {
                if section == lower.count - 1 { return ["by"] }
                return lower.last == "by" ? keyPaths(word, in: schema) : ["limit"]
            }
            if let sort = clauses.lastIndex(of: "sort") {
                if sort == lower.count - 1 { return ["by"] }
                if lower.last == "by" || head.trimmingCharacters(in: .whitespaces).hasSuffix(",") {
                    return keyPaths(word, in: schema)
                }
                return Self.sortModifiers + later
            }
            if clauses.last == "limit" { return [] }
            if let set = clauses.lastIndex(of: "set"), command == "update" {
                if set == lower.count - 1 || head.trimmingCharacters(in: .whitespaces).hasSuffix(",") {
                    return schema.properties.filter(\.isStored).map(\.name)
                }
                return []
            }
            if clauses.contains("where") {
                let more = command == "update" ? ["set"] : isQuery ? ["sort"] + later : []
                return keyPaths(word, in: schema) + Self.predicateKeywords + more
            }
            return []
        default: return []
        }
    }

    /// Key paths from a type: the properties of the type reached by the path before the last dot.
    func keyPaths(_ word: String, in schema: ObjectSchema) -> [String] {
        var parts = word.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts.removeLast()
        var current = schema
        for part in parts {
            guard let property = current.properties.first(where: { $0.name == part }),
                let target = property.objectType.flatMap({ realm.schema[$0] })
            else { return [] }
            current = target
        }
        let prefix = parts.isEmpty ? "" : parts.joined(separator: ".") + "."
        // A link ends with a dot, as a directory ends with a slash: its properties come next.
        return current.properties.map { prefix + $0.name + ($0.objectType != nil ? "." : "") }
    }

    /// Files and directories (with a `/`) whose path starts with `word`.
    func fileNames(_ word: String) -> [String] {
        let expanded = word.hasPrefix("~/") ? NSHomeDirectory() + word.dropFirst(1) : word
        let slash = expanded.lastIndex(of: "/")
        let directory = slash.map { String(expanded[...$0]) } ?? ""
        let shownDirectory = word.lastIndex(of: "/").map { String(word[...$0]) } ?? ""
        let base = slash.map { String(expanded[expanded.index(after: $0)...]) } ?? expanded
        let path = directory.isEmpty ? "." : directory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return names.filter { $0.hasPrefix(base) && (!$0.hasPrefix(".") || base.hasPrefix(".")) }.sorted().map {
            name in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory)
            return shownDirectory + name + (isDirectory.boolValue ? "/" : "")
        }
    }
}
