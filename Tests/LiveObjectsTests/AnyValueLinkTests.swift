import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class LinkedDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var tag: LinkedTag?
}

final class LinkedTag: EmbeddedObject {
    @Persisted var text = ""
}

final class LinkedNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var payload: AnyValue
    @Persisted var text = ""
}

private let linkTypes: [Object.Type] = [LinkedDog.self, LinkedTag.self, LinkedNote.self]

/// Links to objects inside `AnyValue`: set and read through the typed, dynamic and input APIs,
/// made null when their object is deleted (undone by a rollback, reported as a change of the
/// holder), refused when they name no object, and queried by `@type` and by value.
@Suite struct AnyValueLinkTests {
    @Test func aLinkIsSetReadAndResolvedAtTheTopAndNested() async throws {
        let realm = try await openFreshRealm(objectTypes: linkTypes)
        try await realm.write { r in
            let rex = try r.create(LinkedDog.self, value: ["id": 1, "name": "Rex"])
            _ = try r.create(LinkedNote.self, value: ["id": 1, "payload": try AnyValue.object(rex)])
            let nested = LinkedNote()
            nested.id = 2
            nested.payload = ["pet": try .object(rex), "others": [1, try .object(rex)]]
            try r.add(nested)
            // Object(value:) input: a managed object for an AnyValue is a link to it.
            _ = try r.create(LinkedNote.self, value: ["id": 3, "payload": rex] as [String: Any])
        }
        try await realm.read { r in
            let notes = r.objects(LinkedNote.self).sorted { $0.id < $1.id }
            let link = try #require(notes[0].payload.link)
            #expect(link.objectType == "LinkedDog" && notes[0].payload.kindName == "object")
            #expect(r.object(ofType: LinkedDog.self, for: link)?.name == "Rex")
            #expect(r.object(ofType: LinkedNote.self, for: link) == nil, "another type")
            #expect(notes[1].payload["pet"]?.link == link && notes[1].payload["others"]?[1]?.link == link)
            #expect(notes[2].payload == notes[0].payload)
            let dynamic = try #require(try r.dynamicObject(ofType: "LinkedNote", forPrimaryKey: .int(1)))
            #expect(AnyValue(dynamic["payload"]) == .link(link))
            let target = try r.dynamicObject(ofType: link.objectType, key: link.key)
            #expect(target?["name"] == .string("Rex"))
            #expect(r.freeze().object(ofType: LinkedDog.self, for: link)?.name == "Rex")
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func deletingTheObjectMakesTheValueNullAndARollbackRestoresIt() async throws {
        let realm = try await openFreshRealm(objectTypes: linkTypes)
        try await realm.write { r in
            let rex = try r.create(LinkedDog.self, value: ["id": 1, "name": "Rex"])
            let fido = try r.create(LinkedDog.self, value: ["id": 2, "name": "Fido"])
            _ = try r.create(LinkedNote.self, value: ["id": 1, "payload": try AnyValue.object(rex)])
            _ = try r.create(
                LinkedNote.self, value: ["id": 2, "payload": ["a": try AnyValue.object(rex), "b": try .object(fido)]])
            _ = try r.create(LinkedNote.self, value: ["id": 3, "payload": try AnyValue.object(fido)])
        }
        let before = try await realm.read { r in r.objects(LinkedNote.self).sorted { $0.id < $1.id }.map(\.payload) }
        // A write that deletes Rex and then fails changes nothing.
        struct Failure: Error {}
        await #expect(throws: Failure.self) {
            try await realm.write { r in
                try r.delete(r.object(ofType: LinkedDog.self, forPrimaryKey: 1)!)
                #expect(r.object(ofType: LinkedNote.self, forPrimaryKey: 1)?.payload == .null)
                throw Failure()
            }
        }
        let rolledBack = try await realm.read { r in
            r.objects(LinkedNote.self).sorted { $0.id < $1.id }.map(\.payload)
        }
        #expect(rolledBack == before)
        let changes = try await realm.read { r in
            r.object(ofType: LinkedNote.self, forPrimaryKey: 2)!.changes(keyPaths: [\.payload, \.text])
        }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        try await realm.write { r in try r.delete(r.object(ofType: LinkedDog.self, forPrimaryKey: 1)!) }
        // A change of another property after it: what comes first if the delete reported none.
        try await realm.write { r in r.object(ofType: LinkedNote.self, forPrimaryKey: 2)!.text = "after" }
        guard case .changed(_, let properties) = try #require(await iterator.next()) else {
            Issue.record("expected a change of the holder")
            return
        }
        #expect(properties.map(\.name) == ["payload"])
        try await realm.read { r in
            let notes = r.objects(LinkedNote.self).sorted { $0.id < $1.id }
            #expect(notes[0].payload == .null)
            #expect(notes[1].payload["a"] == .null && notes[1].payload["b"]?.link != nil)
            #expect(notes[2].payload.link != nil)
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
    }

    @Test func aLinkToNoObjectIsRefusedAndChangesNothing() async throws {
        let realm = try await openFreshRealm(objectTypes: linkTypes)
        try await realm.write { r in
            let rex = try r.create(LinkedDog.self, value: ["id": 1, "name": "Rex", "tag": ["text": "t"]])
            _ = try r.create(LinkedNote.self, value: ["id": 1, "payload": "kept"])
            _ = rex
        }
        let tagKey = try await realm.read { r in r.object(ofType: LinkedDog.self, forPrimaryKey: 1)!.tag!.objectKey! }
        let bad: [AnyValue] = [
            .link(.init(objectType: "LinkedDog", key: ObjectKey(row: 7, generation: 0))),
            .link(.init(objectType: "LinkedDog", key: ObjectKey(row: 0, generation: 1))),
            .link(.init(objectType: "Cat", key: ObjectKey(row: 0, generation: 0))),
            .link(.init(objectType: "LinkedTag", key: tagKey)),
            ["deep": [.link(.init(objectType: "Cat", key: ObjectKey(row: 0, generation: 0)))]],
        ]
        for value in bad {
            await #expect("\(value)") {
                try await realm.write { r in r.object(ofType: LinkedNote.self, forPrimaryKey: 1)!.payload = value }
            } throws: { error in
                (error as? LiveObjectsError)?.code == .typeMismatch
            }
        }
        await #expect {
            try await realm.write { r in
                _ = try r.create(LinkedNote.self, value: ["id": 2, "payload": LinkedDog()] as [String: Any])
            }
        } throws: { error in
            (error as? LiveObjectsError)?.code == .typeMismatch
        }
        #expect(throws: LiveObjectsError.self) { _ = try AnyValue.object(LinkedDog()) }
        let kept = try await realm.read { r in r.objects(LinkedNote.self).map(\.payload) }
        #expect(kept == ["kept"])
    }

    @Test func queriesReadTheKindAndCompareLinks() async throws {
        let realm = try await openFreshRealm(objectTypes: linkTypes)
        try await realm.write { r in
            let rex = try r.create(LinkedDog.self, value: ["id": 1, "name": "Rex"])
            let fido = try r.create(LinkedDog.self, value: ["id": 2, "name": "Fido"])
            _ = try r.create(LinkedNote.self, value: ["id": 1, "payload": try AnyValue.object(rex)])
            _ = try r.create(LinkedNote.self, value: ["id": 2, "payload": try AnyValue.object(fido)])
            _ = try r.create(LinkedNote.self, value: ["id": 3, "payload": 1])
            _ = try r.create(LinkedNote.self, value: ["id": 4, "payload": [try AnyValue.object(rex)]])
        }
        try await realm.read { r throws in
            let notes = r.objects(LinkedNote.self)
            let rex = r.object(ofType: LinkedDog.self, forPrimaryKey: 1)!
            func ids(_ results: Results<LinkedNote>) -> [Int] { results.map(\.id).sorted() }
            #expect(ids(try notes.filter("payload.@type == 'object'")) == [1, 2])
            #expect(ids(try notes.filter("payload.@type == 'link'")) == [1, 2])
            #expect(ids(try notes.filter("payload[0].@type == 'object'")) == [4])
            #expect(ids(try notes.filter("payload == $0", try AnyValue.object(rex))) == [1])
            #expect(ids(try notes.filter("payload != $0", try AnyValue.object(rex))) == [2, 3, 4])
            #expect(ids(try notes.filter("payload[0] == $0", try AnyValue.object(rex))) == [4])
            // A bare object has no type in a query: refused, naming the way that works.
            #expect(throws: LiveObjectsError.self) { try notes.filter("payload == $0", rex).count }
            #expect(ids(notes.where { $0.payload.kind == "object" }) == [1, 2])
            #expect(throws: LiveObjectsError.self) { try notes.filter("payload.name == 'Rex'").count }
            #expect(try notes.sorted(byKeyPath: "payload").count == 4)
        }
    }
}
