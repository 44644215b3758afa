import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Objects whose creation was rolled back stay invalidated, and their keys never resolve again,
/// even when a later object takes their storage slot. (Found by the property-based harness: a
/// rolled-back insert used to give its slot back with the same generation, so the next object
/// in the slot had the same key and old handles read it.)
@Suite struct RollbackKeyTests {
    /// Creates a dog and cancels the write, then creates another one that takes the slot.
    /// Returns what the first dog's handle and key show afterwards.
    private func ghostAfterSlotReuse(_ realm: isolated Realm) throws -> (
        invalidated: Bool, keyResolves: Bool, sameKey: Bool
    ) {
        try realm.beginWrite()
        let ghost = try realm.create(Dog.self, value: ["id": 100, "name": "Ghost"])
        let ghostKey = try #require(ghost.objectKey)
        realm.cancelWrite()
        #expect(ghost.isInvalidated)
        try realm.beginWrite()
        let real = try realm.create(Dog.self, value: ["id": 200, "name": "Real"])
        try realm.commitWrite()
        #expect(real.objectKey?.row == ghostKey.row, "the new dog should reuse the slot")
        return (
            ghost.isInvalidated, try realm.dynamicObject(ofType: "Dog", key: ghostKey) != nil,
            real.objectKey == ghostKey
        )
    }

    @Test func rolledBackCreationInANewSlotStaysInvalidated() async throws {
        let realm = try await openPets()
        let ghost = try await ghostAfterSlotReuse(realm)
        #expect(ghost.invalidated)
        #expect(!ghost.keyResolves)
        #expect(!ghost.sameKey)
    }

    @Test func rolledBackCreationInAFreedSlotStaysInvalidated() async throws {
        let realm = try await openPets()
        // Free a slot in a committed write, so that the next creation reuses it.
        try await realm.write { realm in
            try realm.create(Dog.self, value: ["id": 1, "name": "Rex"])
            try realm.create(Dog.self, value: ["id": 2, "name": "Max"])
        }
        try await realm.write { try $0.delete($0.object(ofType: Dog.self, forPrimaryKey: 1)!) }
        let ghost = try await ghostAfterSlotReuse(realm)
        #expect(ghost.invalidated)
        #expect(!ghost.keyResolves)
        #expect(!ghost.sameKey)
        let names = try await realm.read { realm in realm.objects(Dog.self).map(\.name).sorted() }
        #expect(names == ["Max", "Real"])
    }

    @Test func rolledBackWriteLeavesCommittedKeysAlone() async throws {
        let realm = try await openPets()
        let key = try await realm.write { realm in
            try realm.create(Dog.self, value: ["id": 1, "name": "Rex"]).objectKey!
        }
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { realm in
                try realm.delete(realm.object(ofType: Dog.self, forPrimaryKey: 1)!)
                try realm.create(Dog.self, value: ["id": 2])
                try realm.create(Dog.self, value: ["id": 2])  // duplicatePrimaryKey: rolls back
            }
        }
        // The deletion was rolled back too: the dog is back under its old key.
        let name = try await realm.read { try $0.dynamicObject(ofType: "Dog", key: key)?["name"] }
        #expect(name == "Rex")
    }
}
