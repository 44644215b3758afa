import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import Testing

/// The sync server against a real PostgreSQL, driven by the real engine and HTTP transport.
@Suite("Sync server", .serialized)
struct SyncServerTests {
    @Test func twoDevicesSyncThroughTheServer() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let annToken = try await server.user("ann", .writer)
        let bobToken = try await server.user("bob", .admin)
        let ann = try await openDevice("ann")
        let bob = try await openDevice("bob")
        let annEngine = try await engine(ann, server.transport(annToken))
        let bobEngine = try await engine(bob, server.transport(bobToken))

        try await ann.write { r in
            let holder = try r.create(Holder.self, value: ["id": "h1", "name": "Ann"])
            _ = try r.create(Card.self, value: ["id": "c1", "name": "Bakery", "discount": 5, "owner": holder])
            _ = try r.create(Card.self, value: ["id": "c2", "name": "Fuel", "discount": 3])
        }
        let pushed = try await annEngine.sync()
        #expect(pushed.pushed == 3)
        #expect(pushed.failed.isEmpty)

        let pulled = try await bobEngine.sync()
        #expect(pulled.pulled == 3)
        #expect(try await cards(bob) == ["c1 Bakery 5 h1 true", "c2 Fuel 3 - true"])

        // Bob (an admin) edits Ann's card and deletes the other; Ann hears of both.
        try await bob.write { r in
            r.object(ofType: Card.self, forPrimaryKey: "c1")!.discount = 15
            try r.delete(r.object(ofType: Card.self, forPrimaryKey: "c2")!)
        }
        #expect(try await bobEngine.sync().pushed == 2)
        _ = try await annEngine.sync()
        #expect(try await cards(ann) == ["c1 Bakery 15 h1 true"])
        #expect(try await cards(ann) == cards(bob))

        let state = try await server.databaseState()
        #expect(state.contains(#"Card {"string": "c1"} false {"name": {"string": "Bakery"}, "owner": {"ref": "#))
        #expect(state.contains(#""discount": {"int": 15}"#))
        #expect(state.contains(#"Card {"string": "c2"} true {}"#))
        #expect(state.hasSuffix("version 5\nkeys 5"), "\(state)")
    }

    @Test func aLongPollWakesWhenAnotherDevicePushes() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let annToken = try await server.user("ann", .writer)
        let bobToken = try await server.user("bob", .reader)
        let listener = server.transport(bobToken, wait: .seconds(50))
        let start = try await listener.pull(after: nil)
        #expect(start.changes.isEmpty)

        // The wait is open before the push; it returns true only if the server says something
        // changed (an empty answer at the end of the wait would be false).
        let woken = Task { try await listener.waitForChanges(after: start.cursor) }
        try await Task.sleep(for: .milliseconds(300))
        let ann = try await openDevice("ann")
        let annEngine = try await engine(ann, server.transport(annToken))
        try await ann.write { r in _ = try r.create(Card.self, value: ["id": "c1", "name": "Bakery"]) }
        _ = try await annEngine.sync()
        #expect(try await woken.value)

        // A device in live mode receives the next change without calling sync().
        let bob = try await openDevice("bob")
        let bobEngine = try await engine(bob, server.transport(bobToken, wait: .seconds(50)))
        let live = Task { await bobEngine.syncContinuously() }
        defer { live.cancel() }
        #expect(try await eventually { try await cards(bob).count == 1 })
        try await ann.write { r in r.object(ofType: Card.self, forPrimaryKey: "c1")!.name = "Bakery & Co" }
        _ = try await annEngine.sync()
        #expect(try await eventually { try await cards(bob) == ["c1 Bakery & Co 0 - true"] })
        // The live loop ends before the server stops: a request it would open while the server
        // shuts down can crash swift-nio (an NIOAsyncWriter dropped unfinished when a connection
        // becomes active after the server stopped taking them).
        live.cancel()
        await live.value
    }

    @Test func aRepeatedPushIsAppliedOnce() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let transport = server.transport(try await server.user("ann", .writer))
        let change = SyncChange(
            idempotencyKey: "Card[c1]@1", object: SyncObjectID(typeName: "Card", primaryKey: .string("c1")),
            serverID: nil, kind: .create, values: ["name": .value(.string("Bakery")), "discount": .value(.int(5))])
        let first = try await transport.push([change])
        let after = try await server.databaseState()
        let again = try await transport.push([change])
        #expect(first == again)
        #expect(first.first?.outcome == .applied)
        #expect(try await server.databaseState() == after)
        #expect(after.hasSuffix("version 1\nkeys 1"), "\(after)")

        // The same key for another object is a conflict, and changes nothing.
        var other = change
        other.object = SyncObjectID(typeName: "Card", primaryKey: .string("c2"))
        let error = await #expect(throws: SyncHTTPError.self) { try await transport.push([other]) }
        #expect(error?.code == .conflict)
        #expect(error?.status == 409)
        #expect(try await server.databaseState() == after)
    }

    @Test func refusalsChangeNothing() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let annToken = try await server.user("ann", .writer)
        let readerToken = try await server.user("rita", .reader)
        let writerToken = try await server.user("walt", .writer)
        let ann = try await openDevice("ann")
        let annEngine = try await engine(ann, server.transport(annToken))
        try await ann.write { r in _ = try r.create(Card.self, value: ["id": "c1", "name": "Bakery"]) }
        _ = try await annEngine.sync()
        let before = try await server.databaseState()
        let push = Data(
            #"{"changes":[{"key":"k","object":{"type":"Card","id":{"string":"x"}},"kind":"create","values":{}}]}"#.utf8)
        let path = "/v1/spaces/\(server.space)/push"

        // No token, an unknown token: 401.
        let (missing, missingBody) = try await server.raw("POST", path, token: nil, body: push)
        #expect(missing == 401)
        #expect(missingBody.contains(#""code":"unauthorized""#))
        let wrong = await #expect(throws: SyncHTTPError.self) {
            try await server.transport("lo_not-a-token").pull(after: nil)
        }
        #expect(wrong?.code == .unauthorized)
        #expect(wrong?.status == 401)

        // A revoked token: 401.
        let revoked = try await server.user("rev", .writer)
        let revokedUser = "rev-\(server.space)"
        let revokedCount = try await server.withStore { try await $0.revokeTokens(of: revokedUser) }
        #expect(revokedCount == 1)
        let (revokedStatus, _) = try await server.raw("POST", path, token: revoked, body: push)
        #expect(revokedStatus == 401)

        // A reader pushing: 403.
        let reader = try await openDevice("rita")
        let readerEngine = try await engine(reader, server.transport(readerToken))
        _ = try await readerEngine.pull()
        try await reader.write { r in r.object(ofType: Card.self, forPrimaryKey: "c1")!.name = "Mine now" }
        let readerError = await #expect(throws: SyncHTTPError.self) {
            try await server.transport(readerToken).push([
                SyncChange(
                    idempotencyKey: "r1", object: SyncObjectID(typeName: "Card", primaryKey: .string("c1")),
                    serverID: nil, kind: .update, values: ["name": .value(.string("Mine now"))])
            ])
        }
        #expect(readerError?.code == .forbidden)
        #expect(readerError?.status == 403)
        let readerReport = try await readerEngine.sync()
        #expect(readerReport.failed == [SyncObjectID(Card.self, .string("c1"))])

        // Another writer changing Ann's object: refused for that change, kept locally; its own
        // new card goes through.
        let walt = try await openDevice("walt")
        let waltEngine = try await engine(walt, server.transport(writerToken))
        _ = try await waltEngine.pull()
        try await walt.write { r in
            r.object(ofType: Card.self, forPrimaryKey: "c1")!.discount = 99
            _ = try r.create(Card.self, value: ["id": "w1", "name": "Walt's"])
        }
        let waltReport = try await waltEngine.sync()
        #expect(waltReport.pushed == 1)
        #expect(waltReport.rejections[SyncObjectID(Card.self, .string("c1"))]?.code == .forbidden)
        #expect(await waltEngine.status(of: SyncObjectID(Card.self, .string("c1"))) == .failed)
        #expect(try await cards(walt).contains("c1 Bakery 99 - true"))
        let afterWalt = try await server.databaseState()
        #expect(!afterWalt.contains("99"))
        #expect(afterWalt.contains(#"Card {"string": "w1"}"#))

        let settled = try await server.databaseState()
        // Another version, another space, a bad cursor.
        let (version, versionBody) = try await server.raw("GET", "/v2/spaces/\(server.space)/pull", token: annToken)
        #expect(version == 404)
        #expect(versionBody.contains("versionNotSupported"))
        try await server.withStore { try await $0.addSpace("other-\(server.space)", types: ["Card"]) }
        let (otherSpace, _) = try await server.raw(
            "POST", "/v1/spaces/other-\(server.space)/push", token: annToken, body: push)
        #expect(otherSpace == 403)
        let (otherPull, otherPullBody) = try await server.raw(
            "GET", "/v1/spaces/other-\(server.space)/pull", token: annToken)
        #expect(otherPull == 403)
        #expect(otherPullBody.contains(#""code":"forbidden""#))
        let (cursor, _) = try await server.raw("GET", "/v1/spaces/\(server.space)/pull?after=7", token: annToken)
        #expect(cursor == 400)

        #expect(try await server.databaseState() == settled)
        #expect(before != settled)
    }
}
