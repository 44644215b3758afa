import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import Testing

extension SyncServerTests {
    @Test func aSpaceRefusesTypesItDoesNotDeclare() async throws {
        // The space accepts cards only.
        let server = try await ServerHarness.start(types: ["Card"])
        defer { Task { await server.stop() } }
        let space = server.space
        let declared = try await server.withStore { try await $0.types(of: space) }
        #expect(declared == ["Card"])
        let annToken = try await server.user("ann", .writer)
        let transport = server.transport(annToken)
        let before = try await server.databaseState()
        let totals = try await server.databaseTotals()

        // A change of an undeclared type, and a card linking to one: each refused with
        // unknownType, nothing applied, no key recorded.
        let holder = SyncObjectID(typeName: "Holder", primaryKey: .string("h1"))
        let receipts = try await transport.push([
            SyncChange(
                idempotencyKey: "h", object: holder, serverID: nil, kind: .create,
                values: ["name": .value(.string("Ann"))]),
            SyncChange(
                idempotencyKey: "c", object: SyncObjectID(typeName: "Card", primaryKey: .string("c1")), serverID: nil,
                kind: .create, values: ["owner": .reference(SyncReference(object: holder))]),
            SyncChange(
                idempotencyKey: "d", object: SyncObjectID(typeName: "Coupon", primaryKey: .int(1)), serverID: nil,
                kind: .delete, values: [:]),
        ])
        #expect(receipts.count == 3)
        for receipt in receipts {
            guard case .rejected(let rejection) = receipt.outcome else {
                Issue.record("\(receipt.idempotencyKey) was not rejected: \(receipt)")
                continue
            }
            #expect(rejection.code.rawValue == "unknownType", "\(receipt)")
            #expect(rejection.message.contains("it declares the types Card"), "\(rejection)")
        }
        #expect(try await server.databaseState() == before)
        #expect(try await server.databaseTotals() == totals)

        // Through the engine: the holder and the card linking to it stay on the device, failed;
        // the other card goes through.
        let ann = try await openDevice("ann")
        let annEngine = try await engine(ann, transport)
        try await ann.write { r in
            let holder = try r.create(Holder.self, value: ["id": "h1", "name": "Ann"])
            _ = try r.create(Card.self, value: ["id": "c1", "name": "Bakery", "owner": holder])
            _ = try r.create(Card.self, value: ["id": "c2", "name": "Fuel"])
        }
        let report = try await annEngine.sync()
        #expect(report.pushed == 1)
        #expect(report.rejections[SyncObjectID(Holder.self, .string("h1"))]?.code.rawValue == "unknownType")
        #expect(await annEngine.status(of: SyncObjectID(Holder.self, .string("h1"))) == .failed)
        #expect(await annEngine.status(of: SyncObjectID(Card.self, .string("c1"))) != .synced)
        let partial = try await server.databaseState()
        #expect(partial.contains(#"Card {"string": "c2"}"#), "\(partial)")
        #expect(!partial.contains("Holder"), "\(partial)")
        #expect(!partial.contains(#"{"string": "c1"}"#), "\(partial)")

        // Once the space declares holders, the app retries what was refused.
        try await server.withStore { try await $0.setTypes(of: space, to: ["Holder", "Card", "Card"]) }
        let redeclared = try await server.withStore { try await $0.types(of: space) }
        #expect(redeclared == ["Card", "Holder"])
        let refused = try await annEngine.rejectedChanges()
        #expect(Set(refused.map(\.object)).contains(SyncObjectID(Holder.self, .string("h1"))))
        for change in refused { try await annEngine.retry(change.object) }
        _ = try await annEngine.sync()
        #expect(await annEngine.status(of: SyncObjectID(Holder.self, .string("h1"))) == .synced)
        #expect(await annEngine.status(of: SyncObjectID(Card.self, .string("c1"))) == .synced)
        let all = try await server.databaseState()
        #expect(all.contains(#"Holder {"string": "h1"}"#), "\(all)")
        #expect(all.contains(#"Card {"string": "c1"} false {"name": {"string": "Bakery"}, "owner": {"ref""#), "\(all)")

        // Type names are checked.
        for bad in [[""], ["Card,Holder"], ["Two words"], [String(repeating: "T", count: 513)]] {
            await #expect(throws: SyncServerError.self, "\(bad)") {
                try await server.withStore { try await $0.setTypes(of: space, to: bad) }
            }
        }
        await #expect(throws: SyncServerError.self) {
            try await server.withStore { try await $0.setTypes(of: "no-such-space-\(UUID())", to: ["Card"]) }
        }
    }
}
