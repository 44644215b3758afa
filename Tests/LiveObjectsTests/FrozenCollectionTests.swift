import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Frozen objects read sets and maps as they were at the frozen version, after the live ones
/// changed.
@Suite struct FrozenCollectionTests {
    @Test func setsAndMapsReadAsTheyWere() async throws {
        let realm = try await openFreshRealm(objectTypes: mapOfObjectsTypes + [SetTag.self, SetHolder.self])
        try await realm.write { r in
            let rex = try r.create(MapDog.self, value: ["id": 1, "name": "Rex"])
            let owner = try r.create(MapOwner.self, value: ["id": 1])
            owner.friends["best"] = rex
            owner.friends["none"] = .some(nil)
            let tag = try r.create(SetTag.self, value: ["id": 7, "name": "seven"])
            let holder = try r.create(SetHolder.self, value: ["id": 1, "tags": ["a", "b"]])
            holder.labels.insert(tag)
        }
        let frozen = await realm.freeze()
        let owner = try #require(frozen.object(ofType: MapOwner.self, forPrimaryKey: 1))
        let holder = try #require(frozen.object(ofType: SetHolder.self, forPrimaryKey: 1))
        try await realm.write { r in
            r.object(ofType: MapOwner.self, forPrimaryKey: 1)!.friends["best"] = nil
            let live = r.object(ofType: SetHolder.self, forPrimaryKey: 1)!
            live.tags.insert("c")
            live.labels.removeAll()
        }
        let friends = owner.friends
        #expect(Set(friends.keys) == ["best", "none"])
        #expect(friends["best"]??.name == "Rex")
        #expect(friends["none"].map { $0 == nil } == true, "a key with no object")
        #expect(holder.tags == ["a", "b"])
        #expect(holder.labels.map(\.name) == ["seven"])
    }
}
