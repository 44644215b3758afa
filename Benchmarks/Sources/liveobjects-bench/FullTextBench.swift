import Foundation
import GRDB
import LiveObjects

/// `liveobjects-bench --fulltext [--n N] [--runs R]`: full-text search by LiveObjects
/// (`@Persisted(indexed: .fullText)`, `TEXT`), by SQLite's FTS5 (through GRDB, in memory,
/// `unicode61 remove_diacritics 2`) and by a plain-Swift index (a dictionary of sets of ids), on
/// one corpus generated from a fixed seed: N documents of 10–40 words, English, Russian or
/// Japanese (Japanese written without spaces).
///
/// Reported: building the index (inserting every document and indexing it), the median time of
/// each query shape, the index's bytes (FTS5: its `docs_data` blocks; LiveObjects: the growth of
/// the resident memory while its index is built on the first run, an estimate), and each query's answer count
/// per system. Counts are compared for the Latin and Cyrillic queries; for Japanese FTS5's
/// `unicode61` keeps a run of kana and ideographs up to the next space as one token, where
/// LiveObjects makes each ideograph and hiragana character a word, so their counts differ by
/// design and are shown, not compared.
enum FullTextBench {
    final class Doc: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted(indexed: .fullText) var body = ""
    }

    static let english = [
        "coffee", "milk", "black", "tea", "morning", "house", "river", "garden", "window", "street", "music", "paper",
        "light", "green", "market", "winter", "summer", "bread", "table", "friend", "letter", "station", "café",
        "crème", "naïve", "decaf", "caffeine", "cafeteria", "travel", "city",
    ]
    static let russian = [
        "кофе", "молоко", "чай", "утро", "дом", "дома", "река", "сад", "окно", "улица", "музыка", "бумага", "свет",
        "рынок", "зима", "лето", "хлеб", "стол", "друг", "письмо", "вокзал", "город", "дорога", "книга",
    ]
    static let japanese = [
        "東京", "京都", "コーヒー", "牛乳", "お茶", "朝", "家", "川", "庭", "窓", "音楽", "紙", "光", "市場", "冬", "夏",
        "パン", "机", "友達", "手紙", "駅", "町", "旅行", "本",
    ]

    /// Query shapes: (name, LiveObjects' query, FTS5's query, plain Swift's terms, counts compared).
    static let queries: [(String, String, String, [String], Bool)] = [
        ("one word", "coffee", "coffee", ["coffee"], true),
        ("two words (AND)", "coffee milk", "coffee milk", ["coffee", "milk"], true),
        ("prefix", "caf*", "caf*", ["caf*"], true),
        ("phrase", "\"black coffee\"", "\"black coffee\"", [], true),
        ("exclusion", "coffee -milk", "coffee NOT milk", ["coffee", "-milk"], true),
        ("Cyrillic word", "молоко", "молоко", ["молоко"], true),
        ("Cyrillic prefix", "дом*", "дом*", ["дом*"], true),
        ("Japanese phrase", "\"東京\"", "東京*", [], false),
    ]

    /// One word drawn with a skew (a few words are common, most are rare), as in real text.
    static func word(_ words: [String], _ rng: inout SplitMix64) -> String {
        let u = Double.random(in: 0..<1, using: &rng)
        return words[min(words.count - 1, Int(pow(u, 2.2) * Double(words.count)))]
    }

    static func corpus(n: Int) -> [String] {
        var rng = SplitMix64(seed: 0xF75_5EED)
        return (0..<n).map { _ in
            let count = Int.random(in: 10...40, using: &rng)
            let language = Int.random(in: 0..<10, using: &rng)
            if language < 3 {
                return (0..<count).map { _ in word(japanese, &rng) }.joined()
            }
            let words = language < 6 ? russian : english
            var text = (0..<count).map { _ in word(words, &rng) }
            if language >= 6 && Int.random(in: 0..<20, using: &rng) == 0 { text[0] = "Black Coffee," }
            return text.joined(separator: " ")
        }
    }

    static func run(n: Int, runs: Int) async throws {
        let documents = corpus(n: n)
        log("fulltext: \(n) documents, \(runs) runs")
        var builds: [[Double]] = [[], [], []]
        var answers: [[Int]] = [[], [], []]
        var times: [[[Double]]] = Array(repeating: Array(repeating: [], count: queries.count), count: 3)
        var bytes = [0, 0]
        let clock = ContinuousClock()
        for run in 0..<runs {
            // LiveObjects: insert, then the first TEXT query builds the index.
            var start = clock.now
            let realm = try await Realm.open(.init(identifier: "fulltext-\(run)", objectTypes: [Doc.self]))
            try await realm.write { r in
                for (i, body) in documents.enumerated() { _ = try r.create(Doc.self, value: ["id": i, "body": body]) }
            }
            // The index's bytes: the resident memory's growth while it is built, on the first run
            // (later runs reuse memory the earlier ones freed).
            let before = MemoryProbe.residentMemory().current
            _ = try await realm.read { r in try r.objects(Doc.self).filter("body TEXT 'zzz'").count }
            builds[0].append(seconds(start.duration(to: clock.now)))
            if run == 0 { bytes[0] = MemoryProbe.residentMemory().current - before }
            for (q, query) in queries.enumerated() {
                start = clock.now
                let count = try await realm.read { r in try r.objects(Doc.self).filter("body TEXT %@", query.1).count }
                times[0][q].append(seconds(start.duration(to: clock.now)))
                if run == 0 { answers[0].append(count) }
            }
            try await realm.close()

            // FTS5.
            start = clock.now
            let db = try DatabaseQueue()
            try await db.write { db in
                try db.execute(
                    sql: "CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
                let insert = try db.cachedStatement(sql: "INSERT INTO docs(rowid, body) VALUES (?, ?)")
                for (i, body) in documents.enumerated() { try insert.execute(arguments: [i, body]) }
            }
            builds[1].append(seconds(start.duration(to: clock.now)))
            bytes[1] = try await db.read { db in
                try Int.fetchOne(db, sql: "SELECT SUM(length(block)) FROM docs_data") ?? 0
            }
            for (q, query) in queries.enumerated() {
                start = clock.now
                let count = try await db.read { db in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM docs WHERE docs MATCH ?", arguments: [query.2]) ?? 0
                }
                times[1][q].append(seconds(start.duration(to: clock.now)))
                if run == 0 { answers[1].append(count) }
            }

            // Plain Swift: lowercased words split at spaces and punctuation (Latin and Cyrillic only).
            start = clock.now
            var index: [String: Set<Int>] = [:]
            for (i, body) in documents.enumerated() {
                for word in body.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
                    .split(whereSeparator: { !$0.isLetter })
                {
                    index[String(word), default: []].insert(i)
                }
            }
            builds[2].append(seconds(start.duration(to: clock.now)))
            for (q, query) in queries.enumerated() where !query.3.isEmpty {
                start = clock.now
                let count = rawCount(index, query.3)
                times[2][q].append(seconds(start.duration(to: clock.now)))
                if run == 0 { answers[2].append(count) }
            }
        }
        report(builds, times, bytes, answers)
    }

    static func rawCount(_ index: [String: Set<Int>], _ terms: [String]) -> Int {
        var result: Set<Int>?
        var excluded = Set<Int>()
        for term in terms {
            let rows: Set<Int>
            if term.hasSuffix("*") {
                let prefix = term.dropLast()
                rows = index.reduce(into: Set<Int>()) { set, entry in
                    if entry.key.hasPrefix(prefix) { set.formUnion(entry.value) }
                }
            } else {
                rows = index[term.hasPrefix("-") ? String(term.dropFirst()) : term] ?? []
            }
            if term.hasPrefix("-") {
                excluded.formUnion(rows)
            } else {
                result = result.map { $0.intersection(rows) } ?? rows
            }
        }
        return (result ?? []).subtracting(excluded).count
    }

    static func report(_ builds: [[Double]], _ times: [[[Double]]], _ bytes: [Int], _ answers: [[Int]]) {
        func median(_ values: [Double]) -> String { values.isEmpty ? "—" : Report.time(percentile(values, 0.5)) }
        print("| | LiveObjects | FTS5 | plain Swift | LiveObjects / FTS5 |")
        print("|---|---|---|---|---|")
        let ratio = percentile(builds[0], 0.5) / percentile(builds[1], 0.5)
        print(
            "| build (insert + index) | \(median(builds[0])) | \(median(builds[1])) | \(median(builds[2])) | \(String(format: "%.2f×", ratio)) |"
        )
        var rawAnswer = 0
        for (q, query) in queries.enumerated() {
            let lo = answers[0][q]
            let fts = answers[1][q]
            var raw = "—"
            if !query.3.isEmpty {
                raw = "\(answers[2][rawAnswer])"
                rawAnswer += 1
            }
            let r = percentile(times[0][q], 0.5) / percentile(times[1][q], 0.5)
            print(
                "| \(query.0) (\(lo) / \(fts) / \(raw) found) | \(median(times[0][q])) | \(median(times[1][q])) | "
                    + "\(median(times[2][q])) | \(String(format: "%.2f×", r)) |")
            if query.4 && lo != fts { print("MISMATCH: \(query.0): LiveObjects \(lo), FTS5 \(fts)") }
        }
        print(
            String(
                format: "| index bytes | %.1f MB (resident growth) | %.1f MB (docs_data) | | |", Double(bytes[0]) / 1e6,
                Double(bytes[1]) / 1e6))
    }
}
