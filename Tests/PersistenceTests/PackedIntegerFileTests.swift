import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

final class PackedNumber: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var amount = 0
    @Persisted(indexed: true) var small: Int8 = 0
    @Persisted var maybe: Int?
}

/// Integer columns are stored at the width their values need (`PackedIntArray`): a realm's
/// integers against a dictionary, through widenings, writes, rolled-back writes, frozen copies,
/// queries and file round trips.
@Suite struct PackedIntegerFileTests {
    struct Row: Equatable, CustomStringConvertible {
        var value: Int
        var small: Int8
        var maybe: Int?
        var description: String { "(\(value), \(small), \(maybe.map(String.init) ?? "nil"))" }
    }

    struct Abort: Error {}

    /// A value of a random width class (mostly 1 byte), or an extreme of one.
    static func draw(_ rng: inout SeededRandomNumberGenerator) -> Int {
        switch rng.below(10) {
        case 0...4: rng.int(in: -128...127)
        case 5: rng.int(in: -40_000...40_000)
        case 6: rng.int(in: -3_000_000_000...3_000_000_000)
        case 7: [Int.min, .max, Int(Int32.min), Int(Int32.max), Int(Int16.min) - 1, 128, -129][rng.below(7)]
        default: Int(bitPattern: UInt(rng.next()))
        }
    }

    /// Sets an object's integers to a row's.
    static func set(_ object: PackedNumber, _ row: Row) {
        object.amount = row.value
        object.small = row.small
        object.maybe = row.maybe
    }

    static func rows(_ realm: Realm) async throws -> [Int: Row] {
        try await realm.read { realm in
            var rows: [Int: Row] = [:]
            for n in realm.objects(PackedNumber.self) {
                rows[n.id] = Row(value: n.amount, small: n.small, maybe: n.maybe)
            }
            return rows
        }
    }

    static func frozenRows(_ frozen: FrozenRealm) -> [Int: Row] {
        var rows: [Int: Row] = [:]
        for n in frozen.objects(PackedNumber.self) { rows[n.id] = Row(value: n.amount, small: n.small, maybe: n.maybe) }
        return rows
    }

    /// Random writes agree with a dictionary after every round, in the realm, in frozen copies
    /// taken along the way, in queries that scan the columns, and after reopening the file
    /// (seeded; the seed and the operations are in the message).
    @Test(arguments: [1, 2])
    func integersAgreeWithAModel(seed: UInt64) async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("numbers.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true)
        let configuration = Realm.Configuration(file: url, objectTypes: [PackedNumber.self], options: options)
        var rng = SeededRandomNumberGenerator(seed: seed)
        var model: [Int: Row] = [:]
        var nextID = 1
        var operations: [String] = []
        var frozen: [(FrozenRealm, [Int: Row])] = []
        var realm: Realm? = try await openRealm(configuration)
        func fail(_ what: String) {
            Issue.record("seed \(seed): \(what); operations: \(operations.suffix(60).joined(separator: "; "))")
        }
        // Narrow values first, past a chunk's end, so that later writes widen chunks.
        let first = (0..<4_200).map { i in Row(value: i % 100, small: Int8(i % 50), maybe: i % 3 == 0 ? nil : i) }
        try await realm!.write { r in
            for (i, row) in first.enumerated() {
                let object = PackedNumber()
                object.id = i + 1
                Self.set(object, row)
                try r.add(object)
            }
        }
        for (i, row) in first.enumerated() { model[i + 1] = row }
        nextID = first.count + 1
        operations.append("add 4200 narrow")
        for round in 0..<12 {
            // One write of random changes; every fourth is rolled back.
            var changes: [(id: Int, row: Row?)] = []
            var scratch = model
            var id = nextID
            for _ in 0..<rng.int(in: 1...60) {
                let live = scratch.keys.sorted()
                switch rng.below(6) {
                case 0...1:
                    let row = Row(
                        value: Self.draw(&rng), small: Int8(truncatingIfNeeded: rng.next()),
                        maybe: rng.below(3) == 0 ? nil : Self.draw(&rng))
                    changes.append((id, row))
                    scratch[id] = row
                    id += 1
                case 2...4 where !live.isEmpty:
                    let target = live[rng.below(live.count)]
                    var row = scratch[target]!
                    row.value = Self.draw(&rng)
                    if rng.below(2) == 0 { row.maybe = rng.below(2) == 0 ? nil : Self.draw(&rng) }
                    changes.append((target, row))
                    scratch[target] = row
                case 5 where !live.isEmpty:
                    let target = live[rng.below(live.count)]
                    changes.append((target, nil))
                    scratch[target] = nil
                default: break
                }
            }
            let rollBack = round % 4 == 3
            operations.append(
                "round \(round)\(rollBack ? " (rolled back)" : ""): "
                    + changes.map { "\($0.id) = \($0.row.map(\.description) ?? "deleted")" }.joined(separator: ", "))
            let write = changes
            do {
                try await realm!.write { r in
                    for (id, row) in write {
                        let existing = r.object(ofType: PackedNumber.self, forPrimaryKey: id)
                        guard let row else {
                            try r.delete(existing!)
                            continue
                        }
                        if let existing {
                            Self.set(existing, row)
                        } else {
                            let object = PackedNumber()
                            object.id = id
                            Self.set(object, row)
                            try r.add(object)
                        }
                    }
                    if rollBack { throw Abort() }
                }
            } catch is Abort {}
            if !rollBack {
                model = scratch
                nextID = id
            }
            guard try await Self.rows(realm!) == model else { return fail("round \(round): the realm differs") }
            // Scans of the integer columns, against the model.
            let c = Self.draw(&rng)
            let (greater, equal, asDouble) = try await realm!.read { r in
                let all = r.objects(PackedNumber.self)
                return (
                    Set(try all.filter("amount > %@", c).map(\.id)), try all.filter("amount == %@", c).count,
                    try all.filter("amount <= %@", Double(c) + 0.5).count
                )
            }
            guard greater == Set(model.filter { $0.value.value > c }.keys),
                equal == model.values.filter({ $0.value == c }).count,
                asDouble == model.values.filter({ Double($0.value) <= Double(c) + 0.5 }).count
            else { return fail("round \(round): a query against \(c) differs") }
            if rng.below(3) == 0 {
                operations.append("freeze")
                frozen = frozen.suffix(2) + [(await realm!.freeze(), model)]
            }
            for (n, (copy, expected)) in frozen.enumerated() where Self.frozenRows(copy) != expected {
                return fail("round \(round): frozen copy \(n) differs")
            }
            switch rng.below(4) {
            case 0:
                operations.append("save and reopen")
                try await realm!.save()
                realm = nil
                for _ in 0..<1000 where FileStorage.isOpen(configuration) {
                    try await Task.sleep(for: .milliseconds(5))
                }
                realm = try await openRealm(configuration)
            case 1:
                operations.append("reopen from the journal")
                realm = nil
                for _ in 0..<1000 where FileStorage.isOpen(configuration) {
                    try await Task.sleep(for: .milliseconds(5))
                }
                realm = try await openRealm(configuration)
            default: break
            }
            guard try await Self.rows(realm!) == model else {
                return fail("round \(round): the reopened realm differs")
            }
        }
    }
}
