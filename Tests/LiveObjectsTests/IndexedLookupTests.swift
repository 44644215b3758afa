import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Equality on an indexed property or the primary key takes a short cut past the general
/// query compiler; these tests hold it to the same answers and errors as the general path.
@Suite struct IndexedLookupTests {
    func dogIDs(_ realm: Realm, _ predicate: String, _ args: [PropertyValue] = []) async throws -> [Int] {
        try await realm.read { r in try r.objects(Dog.self).filter(predicate, arguments: args).map(\.id) }
    }

    @Test func equalityOnIndexedPropertyMatchesAScan() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            for (id, name) in [(1, "Rex"), (2, "Fido"), (3, "Rex"), (4, "rex"), (5, "Rex")] {
                _ = try r.create(Dog.self, value: ["id": id, "name": name])
            }
        }
        #expect(try await dogIDs(realm, "name == 'Rex'") == [1, 3, 5])
        #expect(try await dogIDs(realm, "'Rex' == name") == [1, 3, 5])
        #expect(try await dogIDs(realm, "name == %@", [.string("rex")]) == [4])
        #expect(try await dogIDs(realm, "name == 'Nobody'").isEmpty)
        // The same answer from a form that the short cut does not take.
        #expect(try await dogIDs(realm, "name == 'Rex' OR FALSEPREDICATE") == [1, 3, 5])
        #expect(try await dogIDs(realm, "name ==[c] 'rex'") == [1, 3, 4, 5])
        let typed = try await realm.read { r in r.objects(Dog.self).where { $0.name == "Rex" }.map(\.id) }
        #expect(typed == [1, 3, 5])
        let chained = try await realm.read { r in
            r.objects(Dog.self).where { $0.name == "Rex" }.where { $0.id > 1 }.map(\.id)
        }
        #expect(chained == [3, 5])
    }

    @Test func equalityOnPrimaryKey() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            for id in 1...5 { _ = try r.create(Dog.self, value: ["id": id, "name": "d\(id)"]) }
        }
        #expect(try await dogIDs(realm, "id == 3") == [3])
        #expect(try await dogIDs(realm, "id == 99").isEmpty)
        let typed = try await realm.read { r in r.objects(Dog.self).where { $0.id == 4 }.map(\.name) }
        #expect(typed == ["d4"])
    }

    @Test func resultsStayLiveAndOrderedAfterDeletesAndReusedRows() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            for id in 1...6 { _ = try r.create(Dog.self, value: ["id": id, "name": id % 2 == 0 ? "Even" : "Odd"]) }
        }
        let before = try await realm.read { r in r.objects(Dog.self).where { $0.name == "Even" }.count }
        #expect(before == 3)
        // Delete a dog, then add one that reuses its slot: the index's rows are then out of
        // storage order, and the results must still be in storage order without duplicates.
        try await realm.write { r in
            try r.delete(r.objects(Dog.self).where { $0.id == 2 })
        }
        try await realm.write { r in
            _ = try r.create(Dog.self, value: ["id": 7, "name": "Even"])
        }
        let (ids, all) = try await realm.read { r in
            (r.objects(Dog.self).where { $0.name == "Even" }.map(\.id), r.objects(Dog.self).map(\.id))
        }
        #expect(Set(ids) == [4, 6, 7])
        #expect(ids == all.filter { [4, 6, 7].contains($0) })
        let live = try await realm.write { r in
            let results = r.objects(Dog.self).where { $0.name == "Odd" }
            let strings = try r.objects(Dog.self).filter("name == %@", "Odd")
            let first = (results.count, results.map(\.id), strings.map(\.id))
            _ = try r.create(Dog.self, value: ["id": 9, "name": "Odd"])
            r.objects(Dog.self).where { $0.id == 1 }.first!.name = "Even"
            return (first, (results.count, results.map(\.id), strings.map(\.id)))
        }
        #expect(live.0 == (3, [1, 3, 5], [1, 3, 5]))
        #expect(live.1 == (3, [3, 5, 9], [3, 5, 9]))
    }

    @Test func mismatchedTypeIsStillAnError() async throws {
        let realm = try await openPets()
        await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in _ = try r.objects(Dog.self).filter("name == 3") }
        }
        await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in _ = try r.objects(Dog.self).filter("id == 'x'") }
        }
    }

    /// Every way of counting a lookup gives the number of matching dogs.
    static func check(_ r: isolated Realm, _ step: String) throws {
        let dogs = r.objects(Dog.self)
        for name in ["Tri", "Other", "Nobody"] {
            let lookups = [dogs.where { $0.name == name }, try dogs.filter("name == %@", name)]
            for results in lookups {
                let ids = dogs.filter { $0.name == name }.map(\.id)
                #expect(results.count == ids.count, "\(step): \(name)")
                #expect(results.map(\.id) == ids, "\(step): \(name)")
                #expect(try results.sorted(byKeyPath: "id", ascending: false).count == ids.count)
                #expect(results.limit(1).count == min(1, ids.count))
                #expect(results.offset(1).count == max(0, ids.count - 1))
                #expect(try results.distinct(byKeyPaths: ["name"]).count == min(1, ids.count))
            }
        }
        for id in [3, 4, 99] {
            #expect(dogs.where { $0.id == id }.count == dogs.filter { $0.id == id }.count, "\(step): id \(id)")
        }
    }

    /// `count` of a lookup comes from the index without collecting rows; it must agree with
    /// the rows themselves through writes, deletes, renames and rollbacks, and with the
    /// refinements that change the number of results.
    @Test func countFromTheIndexAgreesWithTheRows() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            for id in 1...8 { _ = try r.create(Dog.self, value: ["id": id, "name": id % 3 == 0 ? "Tri" : "Other"]) }
        }
        try await realm.read { r in try Self.check(r, "start") }
        try await realm.write { r in
            let tri = r.objects(Dog.self).where { $0.name == "Tri" }
            let before = tri.count
            try r.delete(r.objects(Dog.self).where { $0.id == 3 })
            #expect(tri.count == before - 1)
            r.objects(Dog.self).where { $0.id == 4 }.first!.name = "Tri"
            #expect(tri.count == before)
            _ = try r.create(Dog.self, value: ["id": 9, "name": "Tri"])
            #expect(tri.count == before + 1)
            try Self.check(r, "in the write")
        }
        try await realm.read { r in try Self.check(r, "after the write") }
        struct Abandon: Error {}
        await #expect(throws: Abandon.self) {
            try await realm.write { r in
                _ = try r.create(Dog.self, value: ["id": 10, "name": "Tri"])
                #expect(r.objects(Dog.self).where { $0.name == "Tri" }.count == 4)
                throw Abandon()
            }
        }
        try await realm.read { r in try Self.check(r, "after a rollback") }
        // A frozen copy rebuilds its indexes on first use; the lookup through it agrees.
        let frozen = await realm.freeze()
        #expect(try frozen.objects(Dog.self, where: "name == %@", arguments: [.string("Tri")]).count == 3)
        #expect(try frozen.objects(Dog.self, where: "name == %@", arguments: [.string("Other")]).count == 5)
    }

    /// A typed equality on a property of the object itself is bound from what building it
    /// found; other shapes are bound from the predicate. Both must answer as the string form.
    @Test func typedEqualityShapesAnswerAsTheStringForm() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            let ann = try r.create(Person.self, value: ["id": 1, "name": "Ann"])
            for (id, name) in [(1, "Rex"), (2, "Fido"), (3, "Rex")] {
                let dog = try r.create(Dog.self, value: ["id": id, "name": name, "age": id])
                if id != 2 { dog.owner = ann }
            }
        }
        let (typed, strings) = try await realm.read { r -> ([[Int]], [[Int]]) in
            let dogs = r.objects(Dog.self)
            let typed = [
                dogs.where { $0.name == "Rex" }, dogs.where { $0.id == 2 }, dogs.where { $0.age == 3 },
                dogs.where { $0.owner.name == "Ann" }, dogs.where { $0.name == "Rex" && $0.id > 1 },
                dogs.where { !($0.name == "Rex") }, dogs.where { $0.name == "Rex" }.where { $0.age == 1 },
                dogs.where { $0.age > 1 }.where { $0.name == "Rex" },
                try dogs.where { $0.name == "Rex" }.sorted(byKeyPath: "age", ascending: false),
            ].map { $0.map(\.id) }
            let strings = try [
                "name == 'Rex'", "id == 2", "age == 3", "owner.name == 'Ann'", "name == 'Rex' AND id > 1",
                "NOT (name == 'Rex')", "name == 'Rex' AND age == 1", "age > 1 AND name == 'Rex'",
            ].map { try dogs.filter($0).map(\.id) }
            let sorted = try dogs.filter("name == 'Rex'").sorted(byKeyPath: "age", ascending: false).map(\.id)
            let counts = [
                dogs.where { $0.name == "Rex" }.count, dogs.where { $0.name == "Max" }.count,
                try dogs.filter("name == %@", "Rex").count,
            ]
            #expect(counts == [2, 0, 2])
            return (typed, strings + [sorted])
        }
        #expect(typed == strings)
        #expect(typed == [[1, 3], [2], [3], [1, 3], [3], [2], [1], [3], [3, 1]])
        // A value of the wrong type is still refused, as in the string form.
        await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in _ = r.objects(Dog.self).where { $0.name == 3 }.count }
        }
    }

    /// A string lookup run again with other arguments is answered from its cached shape
    /// (`property == %@`) without making its tree: the same answers and errors as the first
    /// run, which parses it.
    @Test func repeatedStringLookupsAnswerAsTheirFirstParse() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            for (id, name) in [(1, "Rex"), (2, "Fido"), (3, "Rex")] {
                _ = try r.create(Dog.self, value: ["id": id, "name": name, "age": id])
            }
        }
        try await realm.read { r throws in
            let dogs = r.objects(Dog.self)
            for text in ["name == %@", "%@ == name"] {
                for run in 0..<3 {
                    #expect(try dogs.filter(text, "Rex").map(\.id) == [1, 3], "\(text), run \(run)")
                    #expect(try dogs.filter(text, "Rex").count == 2, "\(text), run \(run)")
                    #expect(try dogs.filter(text, "Nobody").count == 0, "\(text), run \(run)")
                    #expect(try dogs.filter("age > 1").filter(text, "Rex").map(\.id) == [3], "\(text), run \(run)")
                    #expect(throws: LiveObjectsError.self) { try dogs.filter(text, 3) }
                }
            }
            for run in 0..<3 {
                // The same shape on the primary key and on a property without an index.
                #expect(try dogs.filter("id == %@", 2).map(\.name) == ["Fido"], "run \(run)")
                #expect(try dogs.filter("age == %@", 3).map(\.id) == [3], "run \(run)")
                #expect(try dogs.filter("age == %@", 3).count == 1, "run \(run)")
            }
        }
    }

    /// One text run on two types whose property of that name sits at different positions (where
    /// the other type has another indexed property): each lookup uses its own type's position.
    @Test func oneTextOnTwoTypesLooksUpEachTypesProperty() async throws {
        let realm = try await Realm.open(
            .init(identifier: "lookup-two-types-\(UUID())", objectTypes: [LookupFirst.self, LookupLater.self]))
        try await realm.write { r in
            for (id, name) in [(1, "a"), (2, "b"), (3, "a")] {
                _ = try r.create(LookupFirst.self, value: ["id": id, "name": name])
                _ = try r.create(LookupLater.self, value: ["id": id, "note": "a", "name": name == "a" ? "b" : "a"])
            }
        }
        try await realm.read { r throws in
            for run in 0..<3 {
                #expect(try r.objects(LookupFirst.self).filter("name == %@", "a").map(\.id) == [1, 3], "run \(run)")
                #expect(try r.objects(LookupLater.self).filter("name == %@", "a").map(\.id) == [2], "run \(run)")
                #expect(try r.objects(LookupLater.self).filter("name == %@", "b").count == 2, "run \(run)")
                #expect(try r.objects(LookupFirst.self).filter("name == %@", "b").count == 1, "run \(run)")
            }
        }
    }
}

final class LookupFirst: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
}

final class LookupLater: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var note = ""
    @Persisted(indexed: true) var name = ""
}
