import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import Testing

@testable import LiveObjectsSyncServer

extension SyncServerTests {
    /// A space declared with its types only (`space add NAME --types …`) has no schema to check
    /// a change against, so it stores whatever shape a writer sends. Its devices must still pull:
    /// what their model cannot read is reported, never thrown, and the rest arrives.
    @Test func aSpaceWithoutASchemaNeverBreaksAPull() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let annToken = try await server.user("ann", .writer)
        let good = try await server.transport(annToken).push([
            SyncChange(
                idempotencyKey: "h1", object: SyncObjectID(Holder.self, .string("h1")), serverID: nil, kind: .create,
                values: ["name": .value(.string("Ann"))])
        ])
        #expect(good.map(\.outcome) == [.applied])
        let path = "/v1/spaces/\(server.space)/push"
        var stored = 0
        for (index, variant) in hostileVariants.enumerated() {
            // Another object for each variant, so that no variant hides another.
            let change = variant.change.replacingOccurrences(
                of: #""id":{"string":"px"}"#, with: #""id":{"string":"p\#(index)"}"#)
            let body = #"{"changes":[{"key":"v\#(index)",\#(change)}]}"#
            let (status, answer) = try await server.raw("POST", path, token: annToken, body: Data(body.utf8))
            #expect(status == 200, "\(variant.name): \(answer)")
            if answer.contains(#""outcome":"applied""#) { stored += 1 }
        }
        // Without a schema the shape of values is not checked: most variants are stored.
        #expect(stored >= 10, "\(stored) of \(hostileVariants.count) stored")
        let fine = try await server.transport(annToken).push([
            SyncChange(
                idempotencyKey: "c9", object: SyncObjectID(Card.self, .string("c9")), serverID: nil, kind: .create,
                values: [
                    "name": .value(.string("Fuel")),
                    "owner": .reference(SyncReference(object: SyncObjectID(Holder.self, .string("h1")))),
                ])
        ])
        #expect(fine.map(\.outcome) == [.applied])

        // A new device pulls all of it: nothing thrown, what fits applied, the rest reported.
        let fresh = try await openDevice("fresh")
        let freshEngine = try await engine(fresh, server.transport(annToken))
        let report = try await freshEngine.sync()
        #expect(report.pullFailure == nil, "\(report)")
        #expect(!report.unreadable.isEmpty)
        for (id, error) in report.unreadable { #expect(error.code == .typeMismatch, "\(id): \(error)") }
        let cards = try await cards(fresh)
        #expect(cards.contains("c9 Fuel 0 h1 true"), "\(cards)")
        // An unknown property alone does not make an object unreadable: it is left out.
        #expect(cards.contains { $0.hasPrefix("p0 ") }, "\(cards)")

        // And the next sync goes on as usual.
        let again = try await freshEngine.sync()
        #expect(again.pullFailure == nil && again.unreadable.isEmpty, "\(again)")
    }
}
