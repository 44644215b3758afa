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
}
