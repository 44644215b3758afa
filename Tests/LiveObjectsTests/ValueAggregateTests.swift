import Foundation
import LiveObjects
import Testing

/// Realm's aggregates of collections of values (`scores.sum()`, `weights.average()`,
/// `prices.max()`) and `AnyValue`'s typed readers (`payload.stringValue`).
@Suite struct ValueAggregateTests {
    final class Stats: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var scores: List<Int>
        @Persisted var weights: MutableSet<Double>
        @Persisted var prices: Map<String, Decimal>
        @Persisted var counts: Map<String, Int>
        @Persisted var amounts: List<Decimal>
    }

    struct Figures: Equatable, Sendable {
        var scoreSum = 0
        var scoreAverage: Double?
        var weightSum = 0.0
        var weightAverage: Double?
        var priceSum = Decimal.zero
        var priceAverage: Decimal?
        var priceRange: [Decimal?] = []
        var countAverage: Double?
        var amountAverage: Decimal?
        var pairs: [String] = []
    }

    static func figures(_ stats: Stats) -> Figures {
        Figures(
            scoreSum: stats.scores.sum(), scoreAverage: stats.scores.average(), weightSum: stats.weights.sum(),
            weightAverage: stats.weights.average(), priceSum: stats.prices.sum(), priceAverage: stats.prices.average(),
            priceRange: [stats.prices.min(), stats.prices.max()], countAverage: stats.counts.average(),
            amountAverage: stats.amounts.average(),
            pairs: stats.prices.asKeyValueSequence().map { "\($0.key)=\($0.value)" })
    }

    static func fill(_ stats: Stats) {
        stats.scores.append(objectsIn: [3, 4, 4])
        stats.weights.insert(objectsIn: [0.5, 1.5, 0.5])
        stats.prices["b"] = Decimal(string: "0.2")!
        stats.prices["a"] = Decimal(string: "0.1")!
        stats.counts["x"] = .max
        stats.counts["y"] = .max
        stats.amounts.append(objectsIn: ["0.1", "0.2", "0.4"].map { Decimal(string: $0)! })
    }

    static let expected = Figures(
        scoreSum: 11, scoreAverage: 11.0 / 3, weightSum: 2, weightAverage: 1, priceSum: Decimal(string: "0.3")!,
        priceAverage: Decimal(string: "0.15")!, priceRange: [Decimal(string: "0.1")!, Decimal(string: "0.2")!],
        countAverage: Double(Int.max), amountAverage: Decimal(string: "0.7")! / 3, pairs: ["a=0.1", "b=0.2"])

    @Test func managedAndUnmanagedCollectionsAggregateTheirValues() async throws {
        let realm = try await Realm.open(.init(identifier: "aggregates", objectTypes: [Stats.self]))
        let (empty, managed) = try await realm.write { realm in
            let stats = try realm.create(Stats.self, value: ["id": 1])
            let empty = Self.figures(stats)
            Self.fill(stats)
            return (empty, Self.figures(stats))
        }
        #expect(empty == Figures(priceRange: [nil, nil]), "\(empty)")
        #expect(managed == Self.expected, "\(managed)")
        let unmanaged = Stats()
        Self.fill(unmanaged)
        #expect(Self.figures(unmanaged) == Self.expected, "\(Self.figures(unmanaged))")
    }

    @Test func containsAnyMatchesAnElementOfAListSetOrMapAndSortedTakesADirection() async throws {
        let realm = try await Realm.open(.init(identifier: "containsAny", objectTypes: [Stats.self]))
        let found = try await realm.write { realm in
            for id in 1...3 {
                let stats = try realm.create(Stats.self, value: ["id": id])
                stats.scores.append(objectsIn: [id, id * 10])
                stats.weights.insert(Double(id) / 2)
                stats.counts["k\(id)"] = id * 100
            }
            let all = realm.objects(Stats.self).sorted(by: \.id)
            return [
                all.where { $0.scores.containsAny(in: [2, 30, 99]) }.map(\.id),
                all.where { $0.weights.containsAny(in: [0.5, 1.5]) }.map(\.id),
                all.where { $0.counts.containsAny(in: [200]) }.map(\.id),
                all.where { $0.scores.containsAny(in: [Int]()) }.map(\.id),
                all.where { !$0.scores.containsAny(in: [1]) }.map(\.id),
                realm.object(ofType: Stats.self, forPrimaryKey: 3)!.scores.sorted(ascending: false),
            ]
        }
        #expect(found == [[2, 3], [1, 3], [2], [], [2, 3], [30, 3]], "\(found)")
        let set = MutableSet<String>()
        set.insert(objectsIn: ["b", "c", "a"])
        #expect(set.sorted(ascending: false) == ["c", "b", "a"] && set.sorted(ascending: true) == ["a", "b", "c"])
    }

    @Test func anyValueReadsEachKindOnlyAsItself() {
        let id = ObjectID()
        let date = Date(timeIntervalSince1970: 1_000)
        let uuid = UUID()
        let values: [AnyValue] = [
            .bool(true), .int(3), .float(1.5), .double(3), .string("s"), .date(date), .data(Data([1])), .uuid(uuid),
            .decimal(Decimal(string: "1.25")!), .objectID(id), .list([1]), .dictionary(["k": 1]), .null,
        ]
        let read: [[String?]] = values.map { value in
            [
                value.boolValue.map { "\($0)" }, value.intValue.map { "\($0)" }, value.floatValue.map { "\($0)" },
                value.doubleValue.map { "\($0)" }, value.stringValue,
                value.dateValue.map { "\($0.timeIntervalSince1970)" },
                value.dataValue.map { "\($0.count)" }, value.uuidValue.map { "\($0 == uuid)" },
                value.decimalValue.map { "\($0)" }, value.objectIDValue.map { "\($0 == id)" },
                value.listValue.map { "\($0)" }, value.dictionaryValue.map { "\($0.keys.sorted())" },
            ]
        }
        // Each value answers to its own reader alone: an int is not a double and a double is not an int.
        for (index, row) in read.enumerated() {
            let answered = row.indices.filter { row[$0] != nil }
            #expect(answered == (index < 12 ? [index] : []), "\(values[index]): \(row)")
        }
        #expect(read[1][1] == "3" && read[3][3] == "3.0" && read[4][4] == "s" && read[8][8] == "1.25")
        #expect(read[7][7] == "true" && read[9][9] == "true" && read[10][10] == "[1]" && read[11][11] == "[\"k\"]")
    }
}
