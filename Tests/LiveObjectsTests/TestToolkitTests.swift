import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Tests of the notification and query parts of the test toolkit: the notification checker fails
/// when an answer is wrong, the query reference follows the documented semantics, and a query
/// run depends only on its seed.
@Suite struct TestToolkitTests {
    @Test func theCollectionCheckerAcceptsARealChangeAndRejectsWrongOnes() async throws {
        let realm = try await openPets()
        try await realm.write { r in
            for id in 1...4 { _ = try r.create(Dog.self, value: ["id": id, "name": "d\(id)", "age": id]) }
        }
        let schema = try #require(realm.schema["Dog"])
        let (changes, old) = try await realm.read { r in
            let dogs = try r.objects(Dog.self).sorted(by: [SortField("age")])
            return (dogs.changes(), dogs.freeze().keys)
        }
        // Dog 2 goes, dog 3 becomes the oldest (a move) and changes, dog 5 comes.
        try await realm.write { r in
            try r.delete(r.object(ofType: Dog.self, forPrimaryKey: 2)!)
            r.object(ofType: Dog.self, forPrimaryKey: 3)!.age = 10
            _ = try r.create(Dog.self, value: ["id": 5, "name": "d5", "age": 0])
        }
        let (new, modified) = try await realm.read { r in
            (
                try r.objects(Dog.self).sorted(by: [SortField("age")]).freeze().keys,
                Set([r.object(ofType: Dog.self, forPrimaryKey: 3)!.objectKey!])
            )
        }
        let elements = await drainBuffered(changes) { CollectionObservation($0, schema: schema) }
        try #require(elements.count == 2)
        let change = elements[1]
        // The checker compares the snapshot's values too; here they are taken as they are.
        let values = Dictionary(uniqueKeysWithValues: change.values.map { (change.keys[$0.key], $0.value) })
        func problems(old: [ObjectKey], new: [ObjectKey], modified: Set<ObjectKey>) -> [String] {
            NotificationChecker.checkCollectionChange(
                change, old: old, new: new, modified: modified, values: values, unique: true)
        }
        #expect(!change.deletions.isEmpty && !change.insertions.isEmpty)
        #expect(problems(old: old, new: new, modified: modified) == [])
        #expect(!problems(old: old, new: new, modified: []).isEmpty, "dog 3 is reported modified")
        #expect(!problems(old: old, new: Array(new.reversed()), modified: modified).isEmpty)
        #expect(!problems(old: Array(old.dropFirst()), new: new, modified: modified).isEmpty)
    }

    @Test func theQueryReferenceFollowsTheDocumentedSemantics() {
        typealias R = QueryReference
        // Canonical equivalence; [c] folds ß to ss; [d] drops accents; nil equals only nil.
        #expect(R.test(.string("é"), .equal, .string("e\u{301}"), []))
        #expect(!R.test(.string("Straße"), .equal, .string("STRASSE"), []))
        #expect(R.test(.string("Straße"), .equal, .string("STRASSE"), .c))
        #expect(R.test(.string("Crème"), .beginsWith, .string("crem"), [.c, .d]))
        #expect(!R.test(.string("Crème"), .beginsWith, .string("crem"), .c))
        #expect(R.test(.null, .equal, .null, []))
        #expect(!R.test(.null, .less, .int(1), []))
        // Numbers compare by value across Int and Double; LIKE matches whole characters.
        #expect(R.test(.int(2), .equal, .double(2), []))
        #expect(R.test(.string("file10"), .like, .string("f*1?"), []))
        #expect(R.test(.int(3), .between, .list([.int(1), .double(3)]), []))
        #expect(!R.test(.int(4), .in, .list([.int(1), .null]), []))
    }

    @Test func aQueryRunDependsOnlyOnItsSeed() async throws {
        let configuration = QueryPropertyConfiguration(seed: 7, iterations: 3)
        let first = try await QueryPropertyRun.run(configuration)
        let second = try await QueryPropertyRun.run(configuration)
        #expect(first.problems == [])
        #expect(first.counts.text == 3 * 2 * configuration.queriesPerRound)
        #expect(first.counts == second.counts)
        let other = try await QueryPropertyRun.run(QueryPropertyConfiguration(seed: 8, iterations: 3))
        #expect(other.problems == [])
    }
}
