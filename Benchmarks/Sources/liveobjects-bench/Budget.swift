import Foundation
import LiveObjects
import Persistence

/// `liveobjects-bench --budget [--n N] [--runs R]`: the Persistence module's speed budget.
/// N objects of one type (Int primary key, String, Int, Double, optional link to another
/// object of the type, set on every other object) saved to a file and loaded back, by
/// LiveObjects (snapshot file, `Realm.open`) and by Foundation's `JSONEncoder` / `JSONDecoder`
/// on the same objects as `Codable` structs (an array, the link as the target's id). Both
/// sides write a new file and sync it; both read the whole file back.
enum Budget {
    final class Item: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var count = 0
        @Persisted var score = 0.0
        @Persisted var next: Item?
    }

    struct CodableItem: Codable {
        var id: Int
        var name: String
        var count: Int
        var score: Double
        var next: Int?
    }

    static func items(n: Int) -> [CodableItem] {
        var rng = SplitMix64(seed: Dataset.seed)
        let names = Dataset.namePool(count: max(1, n / 10), rng: &rng)
        return (0..<n).map { i in
            CodableItem(
                id: i + 1, name: names[Int.random(in: 0..<names.count, using: &rng)],
                count: Int.random(in: 0..<1_000_000, using: &rng), score: Double.random(in: 0..<1000, using: &rng),
                next: i % 2 == 0 ? Int.random(in: 1...n, using: &rng) : nil)
        }
    }

    static func run(n: Int, runs: Int) async throws {
        let items = items(n: n)
        log("budget: \(n) objects (Int primary key, String, Int, Double, optional link), \(runs) runs")
        let realm = try await Realm.open(.init(identifier: "budget", objectTypes: [Item.self]))
        try await realm.write { realm in
            var made: [Item] = []
            made.reserveCapacity(items.count)
            for item in items {
                let object = Item()
                object.id = item.id
                object.name = item.name
                object.count = item.count
                object.score = item.score
                try realm.add(object)
                made.append(object)
            }
            for (i, item) in items.enumerated() {
                if let next = item.next { made[i].next = made[next - 1] }
            }
        }
        let liveURL = BenchFiles.directory.appendingPathComponent("budget-liveobjects.json")
        let codableURL = BenchFiles.directory.appendingPathComponent("budget-codable.json")
        let clock = ContinuousClock()
        var saves: ([Double], [Double]) = ([], [])
        var loads: ([Double], [Double]) = ([], [])
        for _ in 0..<runs {
            BenchFiles.remove(liveURL)
            var start = clock.now
            try await FileStorage.writeSnapshot(of: realm, to: liveURL, schemaVersion: 0)
            saves.0.append(seconds(start.duration(to: clock.now)))

            BenchFiles.remove(codableURL)
            start = clock.now
            try writeSynced(try JSONEncoder().encode(items), to: codableURL)
            saves.1.append(seconds(start.duration(to: clock.now)))

            let configuration = Realm.Configuration(
                file: liveURL, objectTypes: [Item.self], options: .init(savePolicy: .manual, journal: false))
            start = clock.now
            let loaded = try await Realm.open(configuration)
            loads.0.append(seconds(start.duration(to: clock.now)))
            let count = try await loaded.read { $0.objects(Item.self).count }
            try await loaded.close()

            start = clock.now
            let decoded = try JSONDecoder().decode([CodableItem].self, from: Data(contentsOf: codableURL))
            loads.1.append(seconds(start.duration(to: clock.now)))
            guard count == n, decoded.count == n else { throw UsageError(description: "budget: lost objects") }
        }
        let liveSize = BenchFiles.size(liveURL)
        let codableSize = BenchFiles.size(codableURL)
        BenchFiles.removeAll()
        func line(_ what: String, _ samples: ([Double], [Double])) -> String {
            let lo = percentile(samples.0, 0.5)
            let foundation = percentile(samples.1, 0.5)
            return "\(what): LiveObjects \(Report.time(lo)), Foundation \(Report.time(foundation)): "
                + String(format: "%.1f× faster (target ≥ 10×)", foundation / lo)
        }
        print(line("save", saves))
        print(line("load", loads))
        print(
            String(
                format: "files: LiveObjects %.1f MB, JSONEncoder %.1f MB", Double(liveSize) / 1e6,
                Double(codableSize) / 1e6))
    }
}
