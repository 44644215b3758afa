// Micro-benchmarks of the query engine's common paths, on LiveObjects alone: exact string
// orderings and sorts (ASCII and not), range lookups on a sorted index, string matching, and
// key paths through lists, nested SUBQUERY and chains of ANY through lists (on a graph of 2,000
// objects with 100 links each, whatever N), and AnyValue properties read whole and read into
// (a nested dictionary holding a list, per object). `swift run -c release liveobjects-querybench [N]
// [repetitions]` prints the median time of each, in milliseconds.
import Foundation
import LiveObjects

final class QBOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(originProperty: "owner") var pets: LinkingObjects<QBPet>
}

final class QBPet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var local = ""
    @Persisted(indexed: true) var code = ""
    @Persisted var age = 0
    @Persisted var owner: QBOwner?
}

/// A node of the graph of the nested queries: 100 friends each.
final class QBDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var age = 0
    @Persisted var friends: List<QBDog>
}

/// An AnyValue read whole (`flat`, an integer) and read into (`nested`, a dictionary of an
/// integer and a list of strings).
final class QBMixed: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var flat: AnyValue
    @Persisted var nested: AnyValue
}

/// SplitMix64.
struct Random {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

let arguments = CommandLine.arguments
let count = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000
let repetitions = arguments.count > 2 ? Int(arguments[2]) ?? 9 : 9

let syllables = ["ba", "mo", "ku", "ri", "te", "sa", "lo", "ne", "vi", "do"]
let local = [
    "Émile", "e\u{301}cole", "Ёлка", "Пятёрочка", "東京", "さくら", "Straße", "Ωmega", "😀 smile", "\u{212A}elvin",
]

func asciiName(_ rng: inout Random) -> String {
    var s = ""
    for i in 0..<(2 + rng.int(3)) { s += i == 0 ? syllables[rng.int(10)].capitalized : syllables[rng.int(10)] }
    return s
}

let realm = try await Realm.open(
    .init(identifier: "querybench", objectTypes: [QBOwner.self, QBPet.self, QBDog.self, QBMixed.self]))
try await realm.write { r in
    var rng = Random(state: 42)
    var owners: [QBOwner] = []
    for i in 0..<max(1, count / 10) {
        owners.append(try r.create(QBOwner.self, value: ["id": i, "name": asciiName(&rng)]))
    }
    for i in 0..<count {
        _ = try r.create(
            QBPet.self,
            value: [
                "id": i, "name": asciiName(&rng), "local": local[rng.int(local.count)] + String(rng.int(1000)),
                "code": asciiName(&rng), "age": rng.int(20), "owner": owners[rng.int(owners.count)],
            ])
    }
}

func measure(_ name: String, _ body: @escaping @Sendable (isolated Realm) throws -> Int) async throws {
    var times: [Double] = []
    var checksum = 0
    for _ in 0..<repetitions {
        let (elapsed, result) = try await realm.read { r in
            let clock = ContinuousClock()
            let start = clock.now
            let result = try body(r)
            let d = start.duration(to: clock.now).components
            return (Double(d.seconds) * 1e3 + Double(d.attoseconds) * 1e-15, result)
        }
        times.append(elapsed)
        checksum = result
    }
    times.sort()
    print(String(format: "%-34@ %9.3f ms   (result %d)", name as NSString, times[times.count / 2], checksum))
}

print("N = \(count), median of \(repetitions)")
try await measure("filter name > 'Mo' (ASCII)") { r in try r.objects(QBPet.self).filter("name > 'Mo'").count }
try await measure("filter local > 'Ж' (non-ASCII)") { r in try r.objects(QBPet.self).filter("local > 'Ж'").count }
try await measure("filter name == 'Moku'") { r in try r.objects(QBPet.self).filter("name == 'Moku'").count }
try await measure("range code >= 'Mo' (indexed)") { r in
    try r.objects(QBPet.self).filter("code >= 'Mo' AND code < 'N'").count
}
try await measure("sort by name (ASCII)") { r in
    try r.objects(QBPet.self).sorted(byKeyPath: "name").first.map { $0.id } ?? -1
}
try await measure("sort by local (non-ASCII)") { r in
    try r.objects(QBPet.self).sorted(byKeyPath: "local").first.map { $0.id } ?? -1
}
try await measure("sort by name desc, age") { r in
    try r.objects(QBPet.self).sorted(by: [SortField("name", ascending: false), SortField("age")]).first.map { $0.id }
        ?? -1
}
try await measure("name CONTAINS 'ku'") { r in try r.objects(QBPet.self).filter("name CONTAINS 'ku'").count }
try await measure("local LIKE '?*1'") { r in try r.objects(QBPet.self).filter("local LIKE '?*1'").count }
try await measure("local BEGINSWITH[c] 'ё'") { r in
    try r.objects(QBPet.self).filter("local BEGINSWITH[c] 'ё'").count
}
try await measure("owners ANY pets.age > 18") { r in try r.objects(QBOwner.self).filter("ANY pets.age > 18").count }
try await measure("owners pets.@sum.age > 100") { r in
    try r.objects(QBOwner.self).filter("pets.@sum.age > 100").count
}
try await measure("pets owner.pets.owner.name BEGINSWITH 'Ba'") { r in
    try r.objects(QBPet.self).filter("ANY owner.pets.owner.name BEGINSWITH 'Ba'").count
}
try await measure("typed age > 10 && name CONTAINS[c] 'a'") { r in
    r.objects(QBPet.self).where { $0.age > 10 && $0.name.contains("a", options: .caseInsensitive) }.count
}

// AnyValue: a value read whole, and a nested dictionary read into.
try await realm.write { r in
    var rng = Random(state: 11)
    for i in 0..<count {
        let age = rng.int(20)
        let tags = (0..<(1 + rng.int(3))).map { _ in AnyValue.string(syllables[rng.int(10)]) }
        _ = try r.create(
            QBMixed.self,
            value: [
                "id": i, "flat": AnyValue.int(age),
                "nested": AnyValue.dictionary(["age": .int(age), "tags": .list(tags)]),
            ])
    }
}
try await measure("AnyValue flat == 7") { r in try r.objects(QBMixed.self).filter("flat == 7").count }
try await measure("AnyValue nested['age'] == 7") { r in
    try r.objects(QBMixed.self).filter("nested['age'] == 7").count
}
try await measure("AnyValue ANY nested['tags'][*] == 'ba'") { r in
    try r.objects(QBMixed.self).filter("ANY nested['tags'][*] == 'ba'").count
}
try await measure("AnyValue nested['tags'].@count == 3") { r in
    try r.objects(QBMixed.self).filter("nested['tags'].@count == 3").count
}

// Nested queries on the graph: each level of SUBQUERY and each link of ANY through a list
// multiplies the ways by 100; the engine follows each object once per level.
try await realm.write { r in
    var rng = Random(state: 7)
    var dogs: [QBDog] = []
    for i in 0..<2_000 { dogs.append(try r.create(QBDog.self, value: ["id": i, "age": rng.int(15)])) }
    for dog in dogs {
        for _ in 0..<100 { dog.friends.append(dogs[rng.int(dogs.count)]) }
    }
}
try await measure("SUBQUERY 1 level") { r in
    try r.objects(QBDog.self).filter("SUBQUERY(friends, $a, $a.age > 13).@count > 0").count
}
try await measure("SUBQUERY 2 levels") { r in
    try r.objects(QBDog.self).filter(
        "SUBQUERY(friends, $a, SUBQUERY($a.friends, $b, $b.age > 13).@count > 0).@count > 0"
    ).count
}
try await measure("SUBQUERY 4 levels") { r in
    try r.objects(QBDog.self).filter(
        "SUBQUERY(friends, $a, SUBQUERY($a.friends, $b, SUBQUERY($b.friends, $c, "
            + "SUBQUERY($c.friends, $d, $d.age > 13).@count > 90).@count > 0).@count > 0).@count > 0"
    ).count
}
try await measure("SUBQUERY 2 levels, no match") { r in
    try r.objects(QBDog.self).filter(
        "SUBQUERY(friends, $a, SUBQUERY($a.friends, $b, $b.age > 14).@count > 0).@count > 0"
    ).count
}
try await measure("ANY friends x10 .age > 13") { r in
    try r.objects(QBDog.self).filter(
        "ANY friends.friends.friends.friends.friends.friends.friends.friends.friends.friends.age > 13"
    ).count
}
// No dog is older than 14: every object on the way is visited.
try await measure("ANY friends x10 .age > 14 (none)") { r in
    try r.objects(QBDog.self).filter(
        "ANY friends.friends.friends.friends.friends.friends.friends.friends.friends.friends.age > 14"
    ).count
}
try await measure("ALL friends x10 .age < 15 (all)") { r in
    try r.objects(QBDog.self).filter(
        "ALL friends.friends.friends.friends.friends.friends.friends.friends.friends.friends.age < 15"
    ).count
}
