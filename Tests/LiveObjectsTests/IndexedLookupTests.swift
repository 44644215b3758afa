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
            let first = results.count
            _ = try r.create(Dog.self, value: ["id": 9, "name": "Odd"])
            return (first, results.count)
        }
        #expect(live.0 == 3)
        #expect(live.1 == 4)
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
}
