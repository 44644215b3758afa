import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

/// A server without a schema stores whatever a client sends; a device pulls it all. What its
/// model cannot read must not stop its pulls, nor another device's.
@Suite("Sync engine: pulled states the model cannot read")
struct SyncUnreadableStateTests {
    typealias Board = LiveObjectsSyncTestSupport.Board

    static let types: [any SyncableObject.Type] = [Holder.self, Card.self, Board.self]

    func device(_ name: String, _ server: FakeServer) async throws -> (Realm, SyncEngine) {
        var configuration = Realm.Configuration(identifier: "\(name)-\(UUID())", objectTypes: Self.types)
        configuration.keepsHistory = true
        let realm = try await Realm.open(configuration)
        let engine = try await SyncEngine(
            realm: realm, transport: server, types: Self.types, configuration: .init(maxAttempts: 2, sleep: { _ in }))
        return (realm, engine)
    }

    static func board(_ id: String) -> SyncObjectID { SyncObjectID(Board.self, .string(id)) }

    /// What a hostile or careless writer can store in a space without a schema, by object.
    static let hostile: [(SyncObjectID, [String: SyncValue])] = [
        (card("int-name"), ["name": .value(.int(5))]),
        (card("nil-name"), ["name": .value(.null)]),
        (card("string-owner"), ["owner": .value(.string("h1"))]),
        (card("list-owner"), ["owner": .references([SyncReference(object: holder("h1"))])]),
        (card("owner-of-another-type"), ["owner": .reference(SyncReference(object: card("good")))]),
        (
            card("owner-of-an-unknown-type"),
            ["owner": .reference(SyncReference(object: .init(typeName: "Nope", primaryKey: .string("x"))))]
        ),
        (
            card("owner-with-an-int-id"),
            ["owner": .reference(SyncReference(object: .init(typeName: "Holder", primaryKey: .int(1))))]
        ),
        (.init(typeName: "Card", primaryKey: .int(7)), ["name": .value(.string("an int id"))]),
        (.init(typeName: "Card", primaryKey: .list([.string("a")])), ["name": .value(.string("a list id"))]),
        (.init(typeName: "Holder", primaryKey: .uuid(UUID())), ["name": .value(.string("a UUID id"))]),
        (board("int-tags"), ["tags": .value(.list([.int(1)]))]),
        (board("nil-tag"), ["tags": .value(.list([.null]))]),
        (board("one-card"), ["cards": .reference(SyncReference(object: card("good")))]),
        (board("cards-of-another-type"), ["cards": .references([SyncReference(object: holder("h1"))])]),
        (board("tags-as-a-string"), ["tags": .value(.string("x"))]),
    ]

    @Test func aStateThatDoesNotFitIsReportedAndTheRestOfThePullIsApplied() async throws {
        let server = FakeServer()
        await server.edit(holder("h1"), ["name": .value(.string("Ann"))])
        await server.edit(
            card("good"), ["name": .value(.string("Bakery")), "owner": .reference(SyncReference(object: holder("h1")))])
        for (id, values) in Self.hostile { await server.edit(id, values) }
        // A property the model does not have (a newer app's) is left out, the rest applied.
        await server.edit(card("newer"), ["name": .value(.string("Florist")), "colour": .value(.string("red"))])
        await server.edit(
            Self.board("b1"),
            ["tags": .value(.list([.string("x")])), "cards": .references([SyncReference(object: card("good"))])])

        let (realm, engine) = try await device("unreadable", server)
        let report = try await engine.sync()
        #expect(report.pullFailure == nil)
        #expect(Set(report.unreadable.keys) == Set(Self.hostile.map(\.0)), "\(report.unreadable)")
        for (id, error) in report.unreadable {
            #expect(error.code == .typeMismatch, "\(id): \(error)")
        }
        let state = try await realm.read { realm in
            (
                realm.objects(Card.self).map(\.id).sorted(),
                realm.objects(Holder.self).map(\.id).sorted(),
                realm.objects(Board.self).map(\.id).sorted(),
                realm.object(ofType: Card.self, forPrimaryKey: "good")?.owner?.name,
                realm.object(ofType: Board.self, forPrimaryKey: "b1").map { Array($0.cards.map(\.id)) },
                realm.object(ofType: Card.self, forPrimaryKey: "newer")?.name
            )
        }
        // Nothing of an unreadable state is here: no object half made.
        #expect(state.0 == ["good", "newer"])
        #expect(state.1 == ["h1"])
        #expect(state.2 == ["b1"])
        #expect(state.3 == "Ann")
        #expect(state.4 == ["good"])
        #expect(state.5 == "Florist")

        // The next sync does not report them again; a later state that fits is applied.
        await server.edit(card("int-name"), ["name": .value(.string("Fixed"))])
        let next = try await engine.sync()
        #expect(next.unreadable.isEmpty && next.pullFailure == nil, "\(next)")
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "int-name")?.name } == "Fixed")
    }

    @Test func anUnreadableUpdateLeavesTheObjectAsItWas() async throws {
        let server = FakeServer()
        await server.edit(holder("h1"), ["name": .value(.string("Ann"))])
        await server.edit(card("c1"), ["name": .value(.string("Bakery")), "discount": .value(.int(5))])
        let (realm, engine) = try await device("unreadable-update", server)
        _ = try await engine.sync()

        // One property fits, the next does not: neither is applied.
        await server.edit(card("c1"), ["discount": .value(.int(50)), "name": .value(.double(1.5))])
        await server.edit(card("c1"), ["owner": .reference(SyncReference(object: holder("h1")))])
        let report = try await engine.sync()
        #expect(Set(report.unreadable.keys) == [card("c1")])
        let before = try await realm.read { realm in
            realm.object(ofType: Card.self, forPrimaryKey: "c1").map { ($0.name, $0.discount, $0.owner?.id) }
        }
        #expect(before?.0 == "Bakery" && before?.1 == 5 && before?.2 == nil, "\(String(describing: before))")

        // Another device (or an admin) repairs it; the device follows.
        await server.edit(card("c1"), ["name": .value(.string("Baker's"))])
        let repaired = try await engine.sync()
        #expect(repaired.unreadable.isEmpty)
        let after = try await realm.read { realm in
            realm.object(ofType: Card.self, forPrimaryKey: "c1").map { ($0.name, $0.discount, $0.owner?.id) }
        }
        #expect(after?.0 == "Baker's" && after?.1 == 50 && after?.2 == "h1", "\(String(describing: after))")
    }
}
