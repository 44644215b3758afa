import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class MixedBag: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var items: List<AnyValue>
    @Persisted var fields: Map<String, AnyValue>
    @Persisted var members: MutableSet<AnyValue>
    @Persisted var pet: MixedBagPet?
}

final class MixedBagPet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
}

private let bagTypes: [Object.Type] = [MixedBag.self, MixedBagPet.self]

/// `List<AnyValue>`, `Map<String, AnyValue>` and `MutableSet<AnyValue>`: every kind as an
/// element, nested lists and dictionaries, links that turn null when their object is deleted,
/// queries, rollbacks and files.
@Suite struct AnyValueCollectionTests {
    @Test func collectionsHoldEveryKindLive() async throws {
        let realm = try await openFreshRealm(objectTypes: bagTypes)
        let nested: AnyValue = ["a": [1, "two", nil], "b": .dictionary([:])]
        try await realm.write { r in
            let bag = MixedBag()
            bag.id = 1
            bag.items.append(objectsIn: everyKind)
            bag.items.append(nested)
            bag.fields["n"] = 3
            bag.fields["s"] = "text"
            bag.fields["nested"] = nested
            bag.members.insert(objectsIn: [1, 1, "1", 1.5, nil, nil])
            try r.add(bag)
        }
        try await realm.read { r in
            let found = r.object(ofType: MixedBag.self, forPrimaryKey: 1)
            let bag = try #require(found)
            #expect(bag.items.count == everyKind.count + 1)
            for (a, b) in zip(bag.items, everyKind) {
                if case .double(let x) = a, case .double(let y) = b, x.isNaN {
                    #expect(y.isNaN)
                } else {
                    #expect(a == b)
                }
            }
            #expect(bag.items.last == nested)
            #expect(bag.fields["n"] == 3 && bag.fields["s"] == "text" && bag.fields["nested"] == nested)
            #expect(bag.fields["missing"] == nil)
            #expect(Array(bag.members) == [1, "1", 1.5, nil])
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    /// A set of AnyValues holds one member per number, whatever its kind (as queries compare
    /// numbers, and as Realm's sets of mixed values do): small and large sets, unmanaged and
    /// managed, whole-set values and the set operations.
    @Test func aSetHoldsANumberOnceWhateverItsKind() async throws {
        let realm = try await openFreshRealm(objectTypes: bagTypes)
        let ones: [AnyValue] = [1, 1.0, .float(1), .decimal(1), .decimal(Decimal(string: "1.00")!)]
        let tenths: [AnyValue] = [0.1, .float(0.1), .decimal(Decimal(string: "0.1")!)]
        let unmanaged = MutableSet<AnyValue>(ones + tenths + ["1", true, .data(Data([1]))])
        #expect(Array(unmanaged) == [1, 0.1, "1", true, .data(Data([1]))])
        for filler in [0, 40] {
            try await realm.write { r in
                let bag = try r.create(MixedBag.self, value: ["id": filler + 1])
                bag.members.insert(objectsIn: (0..<filler).map { AnyValue.string("s\($0)") })
                bag.members.insert(objectsIn: ones + tenths + ["1", true])
                #expect(bag.members.count == filler + 4, "filler \(filler)")
                #expect(Array(bag.members.suffix(4)) == [1, 0.1, "1", true], "the first of equal members stays")
                #expect(bag.members.contains(.decimal(1)) && bag.members.contains(.float(0.1)))
                #expect(!bag.members.contains(2) && !bag.members.contains(.double(0.1 + 1e-12)))
                bag.members.remove(1.0)
                #expect(!bag.members.contains(1), "removing 1.0 removes the member 1")
                #expect(
                    bag.members.isSubset(
                        of: (0..<filler).map { AnyValue.string("s\($0)") } + [
                            .decimal(Decimal(string: "0.1")!), "1", true,
                        ]))
                bag.members.subtract([.float(0.1)])
                #expect(!bag.members.contains(0.1))
            }
        }
        try await realm.write { r in
            let bag = try r.create(
                MixedBag.self, value: ["id": 100, "members": [2, 2.0, "2", .decimal(2)] as [AnyValue]])
            #expect(Array(bag.members) == [2, "2"], "a whole set keeps the first of equal members")
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    static func pet(_ r: isolated Realm, _ id: Int) throws -> AnyValue {
        try .object(r.object(ofType: MixedBagPet.self, forPrimaryKey: id)!)
    }

    /// A run of deletes finds the links to each deleted object through the rows the first
    /// delete found, kept while nothing else changes the property: each change between the
    /// deletes (a new link set, an element appended, moved or removed, a rollback) is seen.
    @Test func aRunOfDeletesSeesEveryChangeBetweenThem() async throws {
        let realm = try await openFreshRealm(objectTypes: bagTypes)
        struct Stop: Error {}
        try await realm.write { r in
            var pets: [AnyValue] = []
            for id in 1...12 { pets.append(try .object(r.create(MixedBagPet.self, value: ["id": id]))) }
            _ = try r.create(MixedBag.self, value: ["id": 1, "items": [pets[0], pets[1]], "fields": ["a": pets[2]]])
            _ = try r.create(MixedBag.self, value: ["id": 2, "members": [pets[3], 7]])
        }
        func delete(_ id: Int) async throws {
            try await realm.write { r in try r.delete(r.object(ofType: MixedBagPet.self, forPrimaryKey: id)!) }
        }
        func bags() async throws -> [[AnyValue]] {
            try await realm.read { r in
                r.objects(MixedBag.self).sorted(by: \.id).map {
                    Array($0.items) + $0.fields.map(\.value) + Array($0.members)
                }
            }
        }
        try await delete(1)  // finds the holders by a scan
        try await delete(4)  // through the holders kept
        let (two, three) = try await realm.read { r in (try Self.pet(r, 2), try Self.pet(r, 3)) }
        #expect(try await bags() == [[nil, two, three], [7]])
        try await realm.write { r in
            let bag = r.objects(MixedBag.self).sorted(by: \.id).first!
            bag.items.append(try Self.pet(r, 5))  // an element appended
            bag.fields["b"] = try Self.pet(r, 6)  // a map's key added
            r.objects(MixedBag.self).sorted(by: \.id).last!.members.insert(try Self.pet(r, 7))
        }
        try await delete(5)
        try await delete(6)
        try await delete(7)
        try await realm.write { r in
            let bag = r.objects(MixedBag.self).sorted(by: \.id).first!
            bag.items.append(try Self.pet(r, 8))
            bag.items.move(from: 3, to: 0)  // an element moved
        }
        try await delete(8)
        await #expect(throws: Stop.self) {
            try await realm.write { r in
                r.objects(MixedBag.self).sorted(by: \.id).first!.items.append(try Self.pet(r, 9))
                throw Stop()
            }
        }
        try await realm.write { r in
            r.objects(MixedBag.self).sorted(by: \.id).first!.items.append(try Self.pet(r, 10))
        }
        try await delete(10)
        try await delete(2)
        #expect(try await bags() == [[nil, nil, nil, nil, nil, three, nil], [7]])
        try await realm.read { r in #expect(StoreInvariants.violations(in: r.store).isEmpty) }
    }

    static func contents(_ r: isolated Realm) -> (items: [AnyValue], fields: [String: AnyValue], members: [AnyValue]) {
        let bag = r.objects(MixedBag.self).first!
        var fields: [String: AnyValue] = [:]
        for (key, value) in bag.fields { fields[key] = value }
        return (Array(bag.items), fields, Array(bag.members))
    }

    @Test func linksInElementsTurnNullWhenTheirObjectIsDeleted() async throws {
        let realm = try await openFreshRealm(objectTypes: bagTypes)
        try await realm.write { r in
            let rex = try r.create(MixedBagPet.self, value: ["id": 1, "name": "Rex"])
            let fido = try r.create(MixedBagPet.self, value: ["id": 2, "name": "Fido"])
            let bag = try r.create(MixedBag.self, value: ["id": 1])
            bag.items.append(objectsIn: [try .object(rex), 1, ["deep": [try .object(rex)]], try .object(fido)])
            bag.fields["rex"] = try .object(rex)
            bag.fields["fido"] = try .object(fido)
            bag.members.insert(objectsIn: [try .object(rex), try .object(fido), nil, [try .object(rex)], [nil]])
        }
        let before = try await realm.read { r in
            let c = Self.contents(r)
            return (c.items.map(\.kindName), c.members.count)
        }
        #expect(before.0 == ["object", "int", "dictionary", "object"] && before.1 == 5)
        // A delete rolled back changes nothing.
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { r in
                try r.delete(r.objects(MixedBagPet.self).filter("id == 1"))
                throw LiveObjectsError(.invalidOperation, "rolled back")
            }
        }
        #expect(try await realm.read { r in Self.contents(r).items.map(\.kindName) } == before.0)
        try await realm.write { r in try r.delete(r.objects(MixedBagPet.self).filter("id == 1")) }
        try await realm.read { r in
            let c = Self.contents(r)
            let fido = try #require(c.items[3].link)
            #expect(r.object(ofType: MixedBagPet.self, for: fido)?.name == "Fido")
            #expect(c.items[0] == nil && c.items[1] == 1 && c.items[2] == ["deep": [nil]])
            #expect(c.fields["rex"] == .null && c.fields["fido"]?.link == fido && c.fields.count == 2)
            // The link member leaves the set; [rex] becomes [nil], equal to a member already there.
            #expect(c.members.count == 3 && c.members.contains(nil) && c.members.contains([nil]))
            #expect(c.members.contains { $0.link == fido })
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func queriesReadElementsByValueAndKind() async throws {
        let realm = try await openFreshRealm(objectTypes: bagTypes)
        try await realm.write { r in
            let rex = try r.create(MixedBagPet.self, value: ["id": 1, "name": "Rex"])
            let bags: [(items: [AnyValue], fields: [String: AnyValue], members: [AnyValue])] = [
                ([1, "a"], ["theme": "dark", "n": 3], [true]),
                ([2.5, nil, ["x": 1]], ["theme": "light"], ["a", 3]),
                ([], [:], []),
                ([try .object(rex), 3], ["pet": try .object(rex), "n": 3.0], [try .object(rex)]),
            ]
            for (id, bag) in bags.enumerated() {
                let b = try r.create(MixedBag.self, value: ["id": id])
                b.items.append(objectsIn: bag.items)
                for (k, v) in bag.fields { b.fields[k] = v }
                b.members.insert(objectsIn: bag.members)
            }
        }
        let cases: [(String, [Int])] = [
            ("ANY items == 1", [0]),
            ("ANY items == 3", [3]),
            ("ANY items == 'a'", [0]),
            ("items.@count == 0", [2]),
            ("items.@count >= 2", [0, 1, 3]),
            ("ANY items.@type == 'string'", [0]),
            ("ANY items.@type == 'null'", [1]),
            ("ANY items.@type == 'object'", [3]),
            ("fields['theme'] == 'dark'", [0]),
            ("fields['n'] == 3", [0, 3]),
            ("fields.@count == 2", [0, 3]),
            ("ANY fields.@keys == 'pet'", [3]),
            ("ANY fields.@values == 'light'", [1]),
            ("ANY members == 'a'", [1]),
            ("ANY members == true", [0]),
            ("members.@count == 2", [1]),
            ("ANY members.@type == 'bool'", [0]),
            ("ANY fields.@values.@type == 'object'", [3]),
            ("fields['theme'].@type == 'string'", [0, 1]),
            ("fields['n'].@type == 'double'", [3]),
            ("fields['missing'].@type == 'null'", [0, 1, 2, 3]),
            ("ALL items.@type == 'int'", [2]),
            ("NONE items == nil", [0, 2, 3]),
        ]
        let refused = ["items[0] == 1", "items[*] == 1", "fields.@keys.@type == 'string'", "fields['n'][0] == 1"]
        try await realm.read { r in
            for (query, expected) in cases {
                let found = try r.objects(MixedBag.self).filter(query).map(\.id).sorted()
                #expect(found == expected, "\(query)")
            }
            for query in refused {
                #expect(throws: LiveObjectsError.self, "\(query)") { try r.objects(MixedBag.self).filter(query) }
            }
        }
    }

    @Test func createCopyAndCodableTakeCollectionsOfAnyValues() async throws {
        let realm = try await openFreshRealm(objectTypes: bagTypes)
        let items: [AnyValue] = [1, "a", ["x": 1], [nil, 2.5], .decimal(Decimal(string: "9.99")!)]
        try await realm.write { r in
            let bag = try r.create(
                MixedBag.self,
                value: [
                    "id": 1, "items": items, "fields": ["k": AnyValue.int(2), "d": ["z": true]],
                    "members": [AnyValue.int(1), 1, "1"],
                ] as [String: Any])
            #expect(Array(bag.items) == items)
            #expect(bag.fields["k"] == 2 && bag.fields["d"] == ["z": true] && bag.fields.count == 2)
            #expect(Array(bag.members) == [1, "1"])
            let copy = try MixedBag(value: ["id": 2, "items": [AnyValue.string("s")], "fields": ["a": AnyValue.null]])
            #expect(Array(copy.items) == ["s"] && copy.fields["a"] == .null)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bag = MixedBag()
        bag.id = 3
        bag.items.append(objectsIn: items)
        bag.fields["n"] = [1, "x"]
        bag.members.insert(objectsIn: [true, .date(Date(timeIntervalSince1970: 0))])
        let data = try encoder.encode(bag)
        let back = try JSONDecoder().decode(MixedBag.self, from: data)
        let text = String(decoding: data, as: UTF8.self)
        #expect(Array(back.items) == items, "\(text)")
        #expect(back.fields["n"] == [1, "x"] && back.fields.count == 1, "\(text)")
        #expect(Array(back.members) == Array(bag.members), "\(text)")
    }

    @Test func aDeleteNullingAMapValueIsReportedAsThatKeysChange() async throws {
        let realm = try await openFreshRealm(objectTypes: bagTypes)
        try await realm.write { r in
            let rex = try r.create(MixedBagPet.self, value: ["id": 1, "name": "Rex"])
            let bag = try r.create(MixedBag.self, value: ["id": 1])
            bag.fields["pet"] = try .object(rex)
            bag.fields["n"] = 1
            bag.items.append(try .object(rex))
        }
        let (fieldChanges, objectChanges) = try await realm.read { r in
            let bag = r.object(ofType: MixedBag.self, forPrimaryKey: 1)!
            return (bag.fields.changes(), bag.changes())
        }
        var fields = fieldChanges.makeAsyncIterator()
        var object = objectChanges.makeAsyncIterator()
        #expect(await fields.next() == .initial(keys: ["n", "pet"]))
        _ = await object.next()
        try await realm.write { r in try r.delete(r.objects(MixedBagPet.self)) }
        #expect(await fields.next() == .changed(MapChange(modifications: ["pet"])))
        let change = await object.next()
        #expect("\(String(describing: change))".contains("items") && "\(String(describing: change))".contains("fields"))
    }
}
