import LiveObjects
import LiveObjectsTestSupport
import Testing

final class FullTextOnInt: Object {
    @Persisted(indexed: .fullText) var count = 0
}

final class FullTextOnList: Object {
    @Persisted(indexed: .fullText) var words: List<String>
}

final class ValueIndexedByKind: Object {
    @Persisted(indexed: .value) var name = ""
}

/// `@Persisted(indexed: .fullText)`: what the schema says, what it refuses, and the index's
/// answers across writes.
@Suite struct FullTextIndexTests {
    @Test func theSchemaSaysFullText() async throws {
        let schema = try await openFreshRealm(objectTypes: [FullTextIndexedNote.self, ValueIndexedByKind.self]).schema
        let body = schema["FullTextIndexedNote"]?.properties.first { $0.name == "body" }
        #expect(body?.isFullTextIndexed == true && body?.isIndexed == false)
        #expect(body?.description == "body: String fulltext")
        let title = schema["FullTextIndexedNote"]?.properties.first { $0.name == "title" }
        #expect(title?.description == "title: String? fulltext")
        let name = schema["ValueIndexedByKind"]?.properties.first { $0.name == "name" }
        #expect(name?.isIndexed == true && name?.isFullTextIndexed == false)
    }

    @Test(arguments: ["FullTextOnInt", "FullTextOnList"])
    func onlyStringsHaveAFullTextIndex(_ type: String) async {
        let types: [Object.Type] = type == "FullTextOnInt" ? [FullTextOnInt.self] : [FullTextOnList.self]
        do {
            _ = try await openFreshRealm("invalid", objectTypes: types)
            Issue.record("\(type) opened")
        } catch {
            #expect(error.code == .invalidSchema && error.objectType == type)
            #expect(error.message.contains("only a String or String? property can have a full-text index"))
        }
    }

    @Test func laterWritesKeepTheIndexInStep() async throws {
        let realm = try await openFreshRealm(objectTypes: [FullTextIndexedNote.self])
        try await realm.write { r in
            _ = try r.create(FullTextIndexedNote.self, value: ["id": 1, "body": "Crème brûlée", "title": "Десерт"])
            _ = try r.create(FullTextIndexedNote.self, value: ["id": 2, "body": "brûlée coffee"])
        }
        let before = try await realm.read { r in
            try r.objects(FullTextIndexedNote.self).filter("body TEXT 'brulee'").map(\.id).sorted()
        }
        #expect(before == [1, 2])
        try await realm.write { r in
            r.object(ofType: FullTextIndexedNote.self, forPrimaryKey: 2)?.body = "tea"
            _ = try r.create(FullTextIndexedNote.self, value: ["id": 3, "body": "BRULEE"])
        }
        let after = try await realm.read { r in
            try r.objects(FullTextIndexedNote.self).filter("body TEXT 'brulee'").map(\.id).sorted()
        }
        #expect(after == [1, 3])
        let titled = try await realm.read { r in
            r.objects(FullTextIndexedNote.self).where { $0.title.matches("десерт") }.map(\.id)
        }
        #expect(titled == [1])
        let violations = try await realm.read { StoreInvariants.violations(in: $0.store) }
        #expect(violations.isEmpty, "\(violations)")
    }
}
