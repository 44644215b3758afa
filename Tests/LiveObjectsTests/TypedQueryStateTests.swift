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
    /// An expression kept past its `where(_:)` holds no reference to the store (typed
    /// conditions build without retaining it): used again, alone or in another condition, it
    /// builds nothing, and a condition that ends with it, or mixes it with its own
    /// expressions, gives no results and `invalidQuery`.
    @Test func anExpressionKeptPastItsConditionIsAnErrorInTheNextOne() async throws {
        let realm = try await openFoundationRealm()
        let kept = KeptQuery()
        let all = try await realm.read { r in
            r.objects(QPItem.self).where { item in
                kept.item = item
                return item.int > -1000
            }.count
        }
        #expect(all > 0)
        let conditions: [(String, @Sendable (Query<QPItem>) -> Query<Bool>)] = [
            ("alone", { _ in kept.item!.int > -1000 }),
            ("and", { $0.int > -1000 && kept.item!.int > -1000 }),
            ("or", { kept.item!.int > -1000 || $0.int > -1000 }),
            ("compared", { $0.int == kept.item!.int }),
            ("equality", { _ in kept.item!.string == "apple" }),
            ("negated", { _ in !(kept.item!.int > 1000) }),
        ]
        for (name, condition) in conditions {
            let error = await #expect(throws: LiveObjectsError.self, "\(name)") {
                try await realm.read { r in r.objects(QPItem.self).where(condition).count }
            }
            #expect(error?.code == .invalidQuery, "\(name): \(String(describing: error))")
            #expect(error?.message.contains("inside the where(_:)") == true, "\(name): \(String(describing: error))")
        }
        // A subquery's element kept past its condition, used in the next one's subquery.
        _ = try await realm.read { r in
            r.objects(QPItem.self).where {
                $0.tags.where { tag in
                    kept.tag = tag
                    return tag.weight > 1
                }.count > 0
            }.count
        }
        let error = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in
                r.objects(QPItem.self).where { $0.tags.where { _ in kept.tag!.weight > 1 }.count > 0 }.count
            }
        }
        #expect(error?.code == .invalidQuery, "\(String(describing: error))")
        // An expression of the outer condition made inside an inner condition's closure (the
        // outer one is not the one being built then) and returned to the outer one.
        let nested = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in
                r.objects(QPItem.self).where { item in
                    var made: Query<Bool>?
                    _ =
                        r.objects(QPTag.self).where { tag in
                            made = item.int > -1000
                            return tag.weight > 1
                        }.count
                    return made!
                }.count
            }
        }
        #expect(nested?.code == .invalidQuery, "\(String(describing: nested))")
        #expect(nested?.message.contains("inside the where(_:)") == true, "\(String(describing: nested))")
        // The next condition is clean, and gives what it gave before.
        let again = try await realm.read { r in r.objects(QPItem.self).where { $0.int > -1000 }.count }
        #expect(again == all)
    }

    /// An expression kept past its realm's life is used without reaching the store it was
    /// made on, which is gone.
    @Test func anExpressionKeptPastItsRealmIsAnErrorNotACrash() async throws {
        let kept = KeptQuery()
        do {
            let gone = try await openFoundationRealm()
            _ = try await gone.read { r in
                r.objects(QPItem.self).where {
                    kept.item = $0
                    return $0.int > 0
                }.count
            }
            try await gone.close()
        }
        let realm = try await openFoundationRealm()
        let error = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in
                r.objects(QPItem.self).where { $0.int > 0 && kept.item!.owner.name == "Ann" }.count
            }
        }
        #expect(error?.code == .invalidQuery, "\(String(describing: error))")
    }
}

/// Holds expressions of a typed condition past it, for the tests that use them later (what a
/// caller keeping one in a variable outside the closure does).
private final class KeptQuery: @unchecked Sendable {  // Set and read by one test at a time, one await after another.
    var item: Query<QPItem>?
    var tag: Query<QPTag>?
}
