import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// The state of a typed condition while it is built (its first error, its subquery variables)
/// belongs to that condition alone, also when one is built inside another.
@Suite struct TypedQueryStateTests {
    @Test func anUnusableKeyPathGivesNoResultsAndAnError() async throws {
        let realm = try await openFoundationRealm()
        await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in _ = r.objects(QPItem.self).where { $0.scratch > 3 }.count }
        }
        // The next condition starts without the error.
        let count = try await realm.read { r in r.objects(QPItem.self).where { $0.int > -1000 }.count }
        #expect(count > 0)
    }

    /// The compiler lets a member of a property's value through a typed query
    /// (`$0.payload.isNull`, `$0.string.isEmpty`): a key path rooted at that value's type, which
    /// read on a model object crashed. It is an error that names the key path.
    @Test func aMemberOfAValueIsAnErrorNotACrash() async throws {
        let realm = try await openFoundationRealm()
        let errors = await [
            #expect(throws: LiveObjectsError.self) {
                try await realm.read { r in _ = r.objects(QPItem.self).where { $0.payload.isNull == false }.count }
            },
            #expect(throws: LiveObjectsError.self) {
                try await realm.read { r in _ = r.objects(QPItem.self).where { $0.string.isEmpty == true }.count }
            },
        ]
        for error in errors {
            #expect(error?.code == .invalidQuery, "\(String(describing: error))")
            #expect(error?.message.contains("does not start at a QPItem") == true, "\(String(describing: error))")
        }
        let count = try await realm.read { r in r.objects(QPItem.self).where { $0.int > -1000 }.count }
        #expect(count > 0)
    }

    @Test func aConditionBuiltInsideAnotherKeepsItsOwnState() async throws {
        let realm = try await openFoundationRealm()
        let all = try await realm.read { r in r.objects(QPItem.self).count }
        // The outer condition fails before an inner one is built and used: the failure is
        // still the outer condition's afterwards.
        let error = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r -> Int in
                r.objects(QPItem.self).where { item in
                    let unusable = item.scratch > 3
                    _ = r.objects(QPItem.self).where { $0.int > 0 }.count
                    return unusable && item.int > -1000
                }.count
            }
        }
        #expect(error?.message.contains("does not read a persisted property") == true)
        let outer = try await realm.read { r -> (Int, Int) in
            var inner = -1
            let outer = r.objects(QPItem.self).where { item in
                inner = r.objects(QPItem.self).where { $0.tags.where { $0.weight > 1 }.count > 0 }.count
                return item.tags.where { $0.weight > 4 }.count > 0 && item.int > -1000
            }.count
            return (outer, inner)
        }
        #expect(outer.0 > 0 && outer.0 < all)
        #expect(outer.1 >= outer.0)
    }

    @Test func anExpressionUsedAfterItsConditionLeavesTheNextOneClean() async throws {
        let realm = try await openFoundationRealm()
        let (all, count) = try await realm.read { r -> (Int, Int) in
            var kept: Query<QPItem>?
            _ =
                r.objects(QPItem.self).where { item in
                    kept = item
                    return item.int > -1000
                }.count
            // Outside any condition: notes an error that no condition owns.
            _ = kept!.scratch > 3
            return (r.objects(QPItem.self).count, r.objects(QPItem.self).where { $0.int > -1000 }.count)
        }
        #expect(count == all)
    }

    @Test func aConditionOnATypeOutsideTheSchemaKeepsTheTypesError() async throws {
        let realm = try await openFoundationRealm()
        let error = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in r.objects(Dog.self).where { $0.name == "Rex" }.count }
        }
        #expect(error?.code == .unknownType)
        // The next condition, on a type of the schema, starts clean.
        let (all, count) = try await realm.read { r in
            (r.objects(QPItem.self).count, r.objects(QPItem.self).where { $0.int > -1000 }.count)
        }
        #expect(count == all)
    }
}
