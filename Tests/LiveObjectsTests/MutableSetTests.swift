import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class SetTag: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var rank = 0
}

final class SetHolder: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: MutableSet<Int>
    @Persisted var ratios: MutableSet<Double?>
    @Persisted var labels: MutableSet<SetTag>
    @Persisted(deleteRule: .cascade) var owned: MutableSet<SetTag>
    @Persisted var ordered: List<String>
}

private let setTypes: [Object.Type] = [SetTag.self, SetHolder.self]

@Suite struct MutableSetTests {
    @Test func theSchemaSaysSet() async throws {
        let realm = try await openFreshRealm(objectTypes: setTypes)
        let schema = try #require(realm.schema["SetHolder"])
        let tags = try #require(schema["tags"])
        #expect(tags.isSet && tags.isList && tags.type == .string)
        #expect(tags.description == "tags: {String}")
        #expect(schema["ratios"]?.description == "ratios: {Double?}")
        #expect(schema["labels"]?.isSet == true && schema["labels"]?.objectType == "SetTag")
        #expect(schema["ordered"]?.isSet == false)
        let embedded = ObjectSchema(name: "E", properties: [Property(name: "x", type: .int)], isEmbedded: true)
        let holder = ObjectSchema(name: "H", properties: [.set("es", of: "E")])
        #expect(throws: LiveObjectsError.self) { try Schema([embedded, holder]).validate() }
        let unlisted = Property(name: "s", type: .int, isList: false, isSet: true)
        #expect(unlisted.isList, "a set is a collection")
    }

    @Test func membersAreDistinct() async throws {
        let realm = try await openFreshRealm(objectTypes: setTypes)
        try await realm.write { r in
            let holder = try r.create(
                SetHolder.self, value: ["id": 1, "tags": ["a", "b", "a", "c", "b"], "scores": [3, 3, 3]])
            #expect(Array(holder.tags) == ["a", "b", "c"])
            #expect(Array(holder.scores) == [3])
            holder.tags.insert("a")
            holder.tags.insert("d")
            holder.ratios.insert(nil)
            holder.ratios.insert(nil)
            holder.ratios.insert(1.5)
            holder.ratios.insert(1.5)
        }
        try await realm.read { r in
            let found = r.object(ofType: SetHolder.self, forPrimaryKey: 1)
            let holder = try #require(found)
            #expect(Array(holder.tags) == ["a", "b", "c", "d"])
            #expect(holder.tags.contains("c") && !holder.tags.contains("z"))
            #expect(holder.ratios.count == 2)
            #expect(holder.ratios.contains(nil) && holder.ratios.contains(1.5))
            let dynamic = try #require(try r.dynamicObject(ofType: "SetHolder", forPrimaryKey: .int(1)))
            #expect(dynamic["tags"] == .list([.string("a"), .string("b"), .string("c"), .string("d")]))
        }
        // The dynamic API collapses duplicates too.
        try await realm.write { r in
            let dynamic = try #require(try r.dynamicObject(ofType: "SetHolder", forPrimaryKey: .int(1)))
            dynamic["scores"] = .list([.int(1), .int(2), .int(1)])
        }
        try await realm.read { r in
            #expect(Array(r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.scores) == [1, 2])
        }
        // An unmanaged object made from an array holds each member once; adding it keeps that.
        let unmanaged = try SetHolder(value: ["id": 2, "tags": ["x", "x", "y"]])
        #expect(!unmanaged.tags.isManaged && Array(unmanaged.tags) == ["x", "y"])
        try await realm.write { r in try r.add(try SetHolder(value: ["id": 2, "tags": ["x", "x", "y"]])) }
        try await realm.read { r in
            #expect(Array(r.object(ofType: SetHolder.self, forPrimaryKey: 2)!.tags) == ["x", "y"])
        }
    }

    @Test func setAlgebraManagedAndUnmanaged() async throws {
        let realm = try await openFreshRealm(objectTypes: setTypes)
        let unmanaged = MutableSet<Int>([1, 2, 3, 2])
        #expect(Array(unmanaged) == [1, 2, 3])
        unmanaged.formIntersection([2, 3, 4])
        #expect(Array(unmanaged) == [2, 3])
        unmanaged.formUnion([4, 2])
        unmanaged.subtract([3])
        #expect(Array(unmanaged) == [2, 4])
        #expect(unmanaged.isSubset(of: [1, 2, 4]) && !unmanaged.isSubset(of: [2]))
        #expect(unmanaged.intersects([4, 9]) && !unmanaged.intersects([9]))
        try await realm.write { r in
            let holder = try r.create(SetHolder.self, value: ["id": 1, "scores": [1, 2, 3]])
            holder.scores.formUnion([3, 4, 5])
            holder.scores.formIntersection([2, 3, 4, 5, 6])
            holder.scores.subtract([4])
            holder.scores.remove(99)
            #expect(Array(holder.scores) == [2, 3, 5])
            #expect(holder.scores.isSubset(of: [5, 3, 2]) && holder.scores.intersects([5]))
            holder.scores.removeAll()
            #expect(holder.scores.isEmpty)
        }
        // Outside a write a mutation is refused and changes nothing.
        await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.tags.insert("late") }
        }
        try await realm.read { r in #expect(r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.tags.isEmpty) }
    }

    @Test func objectMembersAreHeldOnceAndLeaveWhenDeleted() async throws {
        let realm = try await openFreshRealm(objectTypes: setTypes)
        try await realm.write { r in
            let a = try r.create(SetTag.self, value: ["id": 1, "name": "a"])
            let b = try r.create(SetTag.self, value: ["id": 2, "name": "b"])
            let holder = try r.create(SetHolder.self, value: ["id": 1, "labels": [1, 2, 1]])
            #expect(holder.labels.map(\.id) == [1, 2])
            holder.labels.insert(a)
            holder.labels.insert(b)
            #expect(holder.labels.count == 2 && holder.labels.contains(a))
            holder.owned.insert(try r.create(SetTag.self, value: ["id": 3, "name": "c"]))
            #expect(!holder.labels.contains(SetTag()), "an unmanaged object is in no stored set")
        }
        try await realm.write { r in try r.delete(r.object(ofType: SetTag.self, forPrimaryKey: 1)!) }
        try await realm.read { r in
            #expect(r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.labels.map(\.id) == [2])
        }
        // A cascade set deletes its members with the holder.
        try await realm.write { r in try r.delete(r.object(ofType: SetHolder.self, forPrimaryKey: 1)!) }
        try await realm.read { r in #expect(r.objects(SetTag.self).map(\.id) == [2]) }
    }

    @Test func objectNotificationsNameTheSet() async throws {
        let realm = try await openFreshRealm(objectTypes: setTypes)
        try await realm.write { r in _ = try r.create(SetHolder.self, value: ["id": 1]) }
        let changes = try await realm.read { r in r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.changes() }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        try await realm.write { r in r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.tags.insert("x") }
        guard case .changed(_, let properties) = try #require(await iterator.next()) else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.name) == ["tags"])
        // Inserting a member the set holds is no change: the next change is the one after.
        try await realm.write { r in
            let holder = r.object(ofType: SetHolder.self, forPrimaryKey: 1)!
            holder.tags.insert("x")
        }
        try await realm.write { r in r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.scores.insert(1) }
        guard case .changed(_, let next) = try #require(await iterator.next()) else {
            Issue.record("expected a change")
            return
        }
        #expect(next.map(\.name) == ["scores"])
    }

    @Test func codableRoundTripCollapsesDuplicates() async throws {
        let json =
            #"{"id":7,"labels":[],"ordered":["z","z"],"owned":[],"ratios":[null,2,2],"scores":[],"tags":["b","a","b"]}"#
        let decoded = try JSONDecoder().decode(SetHolder.self, from: Data(json.utf8))
        #expect(Array(decoded.tags) == ["b", "a"] && Array(decoded.ratios) == [nil, 2])
        #expect(Array(decoded.ordered) == ["z", "z"], "a list keeps its duplicates")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(decoded), as: UTF8.self)
        #expect(text.contains(#""tags":["b","a"]"#), "\(text)")
        let realm = try await openFreshRealm(objectTypes: setTypes)
        let managed = try await realm.write { r in
            try r.add(try JSONDecoder().decode(SetHolder.self, from: Data(json.utf8)))
            return String(
                decoding: try encoder.encode(r.object(ofType: SetHolder.self, forPrimaryKey: 7)!), as: UTF8.self)
        }
        #expect(managed == text)
    }

    @Test func keyPathFilteredSetChanges() async throws {
        let realm = try await openFreshRealm(objectTypes: setTypes)
        try await realm.write { r in
            _ = try r.create(SetTag.self, value: ["id": 1, "name": "a"])
            _ = try r.create(SetHolder.self, value: ["id": 1, "labels": [1]])
        }
        let changes = try await realm.read { r in
            r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.labels.changes(keyPaths: ["name"])
        }
        var iterator = changes.makeAsyncIterator()
        #expect(try #require(await iterator.next()).isInitial)
        // A change of an unobserved property of a member is not reported; one of `name` is.
        try await realm.write { r in r.object(ofType: SetTag.self, forPrimaryKey: 1)!.rank = 5 }
        try await realm.write { r in r.object(ofType: SetTag.self, forPrimaryKey: 1)!.name = "b" }
        let change = try #require(await iterator.next())
        #expect(change.modifications == [0] && change.insertions.isEmpty)
        try await realm.write { r in
            r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.labels.insert(
                try r.create(SetTag.self, value: ["id": 2]))
        }
        #expect(try #require(await iterator.next()).insertions == [1])
    }

    @Test func theStoreInvariantsCatchAMemberHeldTwice() async throws {
        let realm = try await openFreshRealm(objectTypes: setTypes)
        try await realm.write { r in _ = try r.create(SetHolder.self, value: ["id": 1, "tags": ["a"]]) }
        let found = await Self.violationsAfterDuplicating(realm)
        #expect(found.0.isEmpty)
        #expect(found.1.contains { $0.contains("SetHolder.tags") && $0.contains("twice") }, "\(found.1)")
    }

    private static func violationsAfterDuplicating(_ realm: isolated Realm) -> ([String], [String]) {
        let before = StoreInvariants.violations(in: realm.store)
        let table = realm.store.tablesByName["SetHolder"]!
        realm.store.listInsert(.string("a"), table, 0, table.propertyIndex["tags"]!, at: 1)
        return (before, StoreInvariants.violations(in: realm.store))
    }

    @Test func queriesReadSetsAsLists() async throws {
        let realm = try await openFreshRealm(objectTypes: setTypes)
        var rng = SeededRandomNumberGenerator(seed: 0x5e7)
        let words = ["a", "b", "c", "d"]
        let holders = (0..<40).map { _ in
            (
                (0..<rng.int(in: 0...5)).map { _ in rng.element(of: words) },
                (0..<rng.int(in: 0...4)).map { _ in rng.int(in: 0...5) }
            )
        }
        try await realm.write { r in
            for id in 0..<6 { _ = try r.create(SetTag.self, value: ["id": id, "name": words[id % 4]]) }
            for (id, (tags, labels)) in holders.enumerated() {
                _ = try r.create(SetHolder.self, value: ["id": id, "tags": tags, "labels": labels])
            }
        }
        try await realm.read { r in
            let results = r.objects(SetHolder.self)
            let all = Array(results)
            func ids(_ predicate: String) throws(LiveObjectsError) -> [Int] { try results.filter(predicate).map(\.id) }
            func expected(_ keep: (SetHolder) -> Bool) -> [Int] { all.filter(keep).map(\.id) }
            let cases: [(String, (SetHolder) -> Bool)] = [
                ("ANY tags == 'a'", { $0.tags.contains("a") }),
                ("tags == 'b'", { $0.tags.contains("b") }),
                ("'c' IN tags", { $0.tags.contains("c") }),
                ("NONE tags == 'd'", { !$0.tags.contains("d") }),
                ("tags.@count >= 3", { $0.tags.count >= 3 }),
                ("ANY labels.name == 'a'", { $0.labels.contains { $0.name == "a" } }),
                ("SUBQUERY(labels, $l, $l.id > 2).@count == 2", { $0.labels.filter { $0.id > 2 }.count == 2 }),
            ]
            for (predicate, keep) in cases {
                let found = try ids(predicate)
                #expect(found == expected(keep), "\(predicate)")
            }
            #expect(r.objects(SetHolder.self).where { $0.tags.count > 2 }.map(\.id) == expected { $0.tags.count > 2 })
            #expect(
                r.objects(SetHolder.self).where { $0.labels.name == "b" }.map(\.id)
                    == expected { $0.labels.contains { $0.name == "b" } })
            // Every set really holds distinct members.
            #expect(
                all.allSatisfy {
                    Set($0.tags).count == $0.tags.count && Set($0.labels.map(\.id)).count == $0.labels.count
                })
        }
    }
}

/// A managed `MutableSet` against Swift's `Set` over random operations, and its change sets
/// against the difference of its members before and after each write.
@Suite struct MutableSetRandomizedTests {
    enum Operation: CustomStringConvertible {
        case insert(Int), remove(Int), union([Int]), intersection([Int]), subtract([Int]), removeAll

        var description: String {
            switch self {
            case .insert(let v): "insert(\(v))"
            case .remove(let v): "remove(\(v))"
            case .union(let v): "formUnion(\(v))"
            case .intersection(let v): "formIntersection(\(v))"
            case .subtract(let v): "subtract(\(v))"
            case .removeAll: "removeAll()"
            }
        }

        static func random(_ rng: inout SeededRandomNumberGenerator) -> Operation {
            let some = { (rng: inout SeededRandomNumberGenerator) in
                (0..<rng.int(in: 0...4)).map { _ in rng.int(in: 0...9) }
            }
            switch rng.int(in: 0...11) {
            case 0...3: return .insert(rng.int(in: 0...9))
            case 4...6: return .remove(rng.int(in: 0...9))
            case 7: return .union(some(&rng))
            case 8: return .intersection(some(&rng) + some(&rng))
            case 9: return .subtract(some(&rng))
            case 10: return .removeAll
            default: return .insert(rng.int(in: 0...9))
            }
        }

        func apply(to set: MutableSet<SetTag>, tags: [Int: SetTag]) {
            switch self {
            case .insert(let v): set.insert(tags[v]!)
            case .remove(let v): set.remove(tags[v]!)
            case .union(let v): set.formUnion(v.map { tags[$0]! })
            case .intersection(let v): set.formIntersection(v.map { tags[$0]! })
            case .subtract(let v): set.subtract(v.map { tags[$0]! })
            case .removeAll: set.removeAll()
            }
        }

        func apply(to set: inout Set<Int>) {
            switch self {
            case .insert(let v): set.insert(v)
            case .remove(let v): set.remove(v)
            case .union(let v): set.formUnion(v)
            case .intersection(let v): set.formIntersection(v)
            case .subtract(let v): set.subtract(v)
            case .removeAll: set.removeAll()
            }
        }
    }

    @Test func matchesSwiftSetAndReportsMembersInsertedAndDeleted() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_SET_SEED") ?? 0x5e75_eed
        let writes = TestEnvironment.isLong ? 400 : 60
        var rng = SeededRandomNumberGenerator(seed: seed)
        var done: [String] = []
        let context = { "seed \(seed) (LIVEOBJECTS_SET_SEED), operations: \(done.joined(separator: "; "))" }
        let realm = try await openFreshRealm(objectTypes: setTypes)
        try await realm.write { r in
            for id in 0...9 { _ = try r.create(SetTag.self, value: ["id": id, "name": "t\(id)"]) }
            _ = try r.create(SetHolder.self, value: ["id": 1])
        }
        let changes = try await realm.read { r in r.object(ofType: SetHolder.self, forPrimaryKey: 1)!.labels.changes() }
        var iterator = changes.makeAsyncIterator()
        let initial = try #require(await iterator.next())
        var before = initial.snapshot.map(\.id)
        var keysBefore = initial.snapshot.keys
        var reference = Set<Int>()
        for _ in 0..<writes {
            let operations = (0..<rng.int(in: 1...3)).map { _ in Operation.random(&rng) }
            done.append(operations.map(\.description).joined(separator: ", "))
            for operation in operations { operation.apply(to: &reference) }
            let (note, expected) = (context(), reference)
            let after = try await realm.write { r in
                let holder = r.object(ofType: SetHolder.self, forPrimaryKey: 1)!
                let tags = Dictionary(uniqueKeysWithValues: r.objects(SetTag.self).map { ($0.id, $0) })
                for operation in operations { operation.apply(to: holder.labels, tags: tags) }
                let ids = holder.labels.map(\.id)
                let violations = StoreInvariants.violations(in: r.store)
                #expect(violations.isEmpty, "\(violations); \(note)")
                #expect(ids.count == Set(ids).count, "members are distinct; \(note)")
                #expect(holder.labels.isSubset(of: expected.map { tags[$0]! }), "\(note)")
                #expect((0...9).allSatisfy { holder.labels.contains(tags[$0]!) == expected.contains($0) }, "\(note)")
                return ids
            }
            #expect(Set(after) == reference, "\(context())")
            guard Set(after) != Set(before) || after != before else { continue }
            let change = try #require(await iterator.next(), "\(context())")
            #expect(change.snapshot.map(\.id) == after, "\(context())")
            #expect(Set(change.deletions.map { before[$0] }) == Set(before).subtracting(after), "\(context())")
            #expect(Set(change.insertions.map { after[$0] }) == Set(after).subtracting(before), "\(context())")
            #expect(change.applied(to: keysBefore) == change.snapshot.keys, "\(context())")
            keysBefore = change.snapshot.keys
            before = after
        }
    }
}
