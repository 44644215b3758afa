import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

@Suite("Sync engine")
struct SyncEngineTests {
    func engine(_ realm: Realm, _ server: FakeServer, sleeps: SleepRecorder = SleepRecorder(), maxAttempts: Int = 5)
        async throws -> SyncEngine
    {
        try await SyncEngine(
            realm: realm, transport: server, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: maxAttempts, sleep: sleeps.sleep))
    }

    func expectAgreement(_ realm: Realm, _ server: FakeServer, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let diff = differences(try await localState(realm), await serverState(server))
        #expect(diff.isEmpty, "\(diff.joined(separator: "\n"))", sourceLocation: sourceLocation)
    }

    func expectAppliedOnce(_ server: FakeServer, sourceLocation: SourceLocation = #_sourceLocation) async {
        let twice = await server.applications.filter { $0.value != 1 }
        #expect(twice.isEmpty, "applied more than once: \(twice)", sourceLocation: sourceLocation)
    }

    @Test func offlineCreateEditDeleteThenSync() async throws {
        let realm = try await openSyncRealm("offline")
        let server = FakeServer()
        let engine = try await engine(realm, server)
        try await realm.write { r in
            let ann = try r.create(Holder.self, value: ["id": "h1", "name": "Ann"])
            _ = try r.create(Card.self, value: ["id": "c1", "name": "Shop", "discount": 5, "owner": ann])
            _ = try r.create(Card.self, value: ["id": "c2", "name": "Gas", "discount": 3, "owner": ann])
            _ = try r.create(Card.self, value: ["id": "c3", "name": "Tmp"])
        }
        try await realm.write { r in
            r.object(ofType: Card.self, forPrimaryKey: "c1")!.discount = 10
            try r.delete(r.object(ofType: Card.self, forPrimaryKey: "c3")!)
        }
        #expect(await engine.status(of: card("c1")) == .pending)
        let report = try await engine.sync()
        #expect(report.pushed == 3)
        #expect(report.failed.isEmpty)
        try await expectAgreement(realm, server)
        // The insert-then-delete of c3 never reached the server.
        #expect(await server.records[card("c3")] == nil)
        // Server ids came back into the objects.
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c1")!.serverID } != nil)
        #expect(await engine.status(of: card("c1")) == .synced)

        // Edit and delete offline, sync again: only those changes travel.
        try await realm.write { r in
            r.object(ofType: Card.self, forPrimaryKey: "c2")!.name = "Fuel"
            try r.delete(r.object(ofType: Card.self, forPrimaryKey: "c1")!)
        }
        let before = await server.applied.count
        let second = try await engine.sync()
        #expect(second.pushed == 2)
        let kinds = await server.applied[before...].map { "\($0.kind) \($0.object)" }
        #expect(kinds.sorted() == ["delete Card[\"c1\"]", "update Card[\"c2\"]"])
        #expect(await server.applied.last(where: { $0.kind == .update })?.values.keys.sorted() == ["name"])
        try await expectAgreement(realm, server)
        await expectAppliedOnce(server)
        // Nothing left: a third sync sends nothing.
        let pushes = await server.pushCount
        let third = try await engine.sync()
        #expect(third.pushed == 0)
        #expect(await server.pushCount == pushes)
        #expect(await server.requestsPerKey.values.allSatisfy { $0 == 1 })
    }

    @Test func parentsBeforeChildrenAndLargePayloadsLast() async throws {
        let realm = try await openSyncRealm("order")
        let server = FakeServer(seed: 7, faults: Faults(reorder: true))
        let engine = try await engine(realm, server)
        try await realm.write { r in
            // Children first in the write, and in key order.
            let ann = try r.create(Holder.self, value: ["id": "z-holder", "name": "Ann"])
            for i in 0..<5 {
                _ = try r.create(
                    Card.self, value: ["id": "a\(i)", "owner": ann, "photo": Data(repeating: UInt8(i), count: 100)])
            }
        }
        try await engine.sync()
        #expect(await server.orderViolations.isEmpty)
        let applied = await server.applied
        let holderIndex = applied.firstIndex { $0.object == holder("z-holder") }!
        let firstCard = applied.firstIndex { $0.object.typeName == "Card" }!
        #expect(holderIndex < firstCard)
        // Card creates reference the holder by its server id.
        let serverID = await server.records[holder("z-holder")]!.serverID
        for change in applied where change.object.typeName == "Card" && change.kind == .create {
            #expect(change.values["owner"] == .reference(SyncReference(object: holder("z-holder"), serverID: serverID)))
            #expect(change.values["photo"] == nil)
        }
        // Photos come last, as updates of their own.
        let photos = applied.indices.filter { applied[$0].values["photo"] != nil }
        #expect(photos.count == 5)
        #expect(photos.min()! > applied.indices.filter { applied[$0].values["photo"] == nil }.max()!)
        try await expectAgreement(realm, server)
    }

    @Test func failedPushesAreRetriedWithExponentialBackoff() async throws {
        let realm = try await openSyncRealm("retry")
        let server = FakeServer()
        let sleeps = SleepRecorder()
        let engine = try await engine(realm, server, sleeps: sleeps)
        try await realm.write { _ = try $0.create(Holder.self, value: ["id": "h", "name": "Ann"]) }
        await server.failNextRequests(3)
        let report = try await engine.sync()
        #expect(report.pushed == 1)
        #expect(await sleeps.waits == [.seconds(1), .seconds(2), .seconds(4)])
        try await expectAgreement(realm, server)
        await expectAppliedOnce(server)
    }

    @Test func pushesThatKeepFailingMarkObjectsFailedThenRecover() async throws {
        let realm = try await openSyncRealm("failed")
        let server = FakeServer()
        let sleeps = SleepRecorder()
        let engine = try await engine(realm, server, sleeps: sleeps, maxAttempts: 3)
        try await realm.write { _ = try $0.create(Holder.self, value: ["id": "h", "name": "Ann"]) }
        await server.failNextRequests(3)
        let report = try await engine.push()
        #expect(report.failed == [holder("h")])
        #expect(await engine.status(of: holder("h")) == .failed)
        #expect(await sleeps.waits == [.seconds(1), .seconds(2)])
        #expect(await server.records.isEmpty)
        try await engine.sync()
        #expect(await engine.status(of: holder("h")) == .synced)
        try await expectAgreement(realm, server)
        await expectAppliedOnce(server)
    }

    @Test func lostAnswersAndDuplicatedRequestsAreAppliedOnce() async throws {
        let realm = try await openSyncRealm("lost")
        let server = FakeServer(
            seed: 3, faults: Faults(failAfter: 0.5, duplicate: 0.5, replayOld: 0.5, reorder: true, delay: true))
        let engine = try await engine(realm, server, maxAttempts: 50)
        for round in 0..<5 {
            try await realm.write { r in
                for i in 0..<4 {
                    if let card = r.object(ofType: Card.self, forPrimaryKey: "c\(i)") {
                        card.discount = round * 10 + i
                    } else {
                        _ = try r.create(Card.self, value: ["id": "c\(i)", "discount": i])
                    }
                }
            }
            try await engine.sync()
        }
        await server.setFaults(.none)
        try await engine.sync()
        try await expectAgreement(realm, server)
        await expectAppliedOnce(server)
        #expect(await server.records[card("c3")]?.values["discount"] == .value(.int(43)))
    }

    @Test func serverChangesMergeLastWriterWinsWithoutOverwritingUnsentLocalChanges() async throws {
        let realm = try await openSyncRealm("lww")
        let server = FakeServer()
        let engine = try await engine(realm, server)
        try await realm.write { _ = try $0.create(Card.self, value: ["id": "c", "name": "Shop", "discount": 1]) }
        try await engine.sync()
        // Another device changes name and discount; here the discount changes too, offline.
        await server.edit(card("c"), ["name": .value(.string("Shop+")), "discount": .value(.int(20))])
        try await realm.write { $0.object(ofType: Card.self, forPrimaryKey: "c")!.discount = 30 }
        try await engine.pull()
        let local = try await realm.read { r in
            let c = r.object(ofType: Card.self, forPrimaryKey: "c")!
            return (c.name, c.discount)
        }
        #expect(local == ("Shop+", 30))
        #expect(await engine.status(of: card("c")) == .pending)
        // The local change is the last write: the server takes it.
        try await engine.sync()
        #expect(await server.records[card("c")]?.values["discount"] == .value(.int(30)))
        #expect(await server.records[card("c")]?.values["name"] == .value(.string("Shop+")))
        try await expectAgreement(realm, server)
        // A later server write wins over the (sent) local one.
        await server.edit(card("c"), ["discount": .value(.int(40))])
        try await engine.sync()
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c")!.discount } == 40)
        try await expectAgreement(realm, server)
    }

    @Test func pulledChangesAreNotSentBack() async throws {
        let realm = try await openSyncRealm("echo")
        let server = FakeServer(seed: 5, faults: Faults(reorder: true))
        let engine = try await engine(realm, server)
        await server.edit(holder("h"), ["name": .value(.string("Bob"))])
        await server.edit(
            card("c"),
            [
                "name": .value(.string("Far")), "discount": .value(.int(2)), "photo": .value(.data(Data())),
                "owner": .reference(SyncReference(object: holder("h"), serverID: "S1")),
            ])
        let report = try await engine.sync()
        #expect(report.pulled == 2)
        try await expectAgreement(realm, server)
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c")?.owner?.name } == "Bob")
        let pushes = await server.pushCount
        try await engine.sync()
        #expect(await server.pushCount == pushes)
        #expect(await server.applied.isEmpty)
        #expect(await engine.status(of: card("c")) == .synced)
        // A server deletion is applied when nothing local is pending.
        await server.delete(card("c"))
        try await engine.sync()
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c") == nil })
        #expect(await server.applied.isEmpty)
    }

    @Test(arguments: [true, false])
    func deletedOnServerButEditedLocallyIsReportedKeepLocal(pullFirst: Bool) async throws {
        let realm = try await openSyncRealm("conflict")
        let server = FakeServer()
        let engine = try await engine(realm, server)
        try await realm.write { _ = try $0.create(Card.self, value: ["id": "c", "name": "Shop"]) }
        try await engine.sync()
        let conflicts = await engine.conflicts()
        await server.delete(card("c"))
        try await realm.write { $0.object(ofType: Card.self, forPrimaryKey: "c")!.name = "Mine" }
        // Found by the pull, or by the push's receipt.
        let report = pullFirst ? try await engine.pull() : try await engine.sync()
        #expect(report.conflicts == 1)
        var iterator = conflicts.makeAsyncIterator()
        let conflict = await iterator.next()
        #expect(conflict?.object == card("c"))
        #expect(conflict?.localChanges == ["name"])
        #expect(await engine.status(of: card("c")) == .conflict)
        #expect(await engine.conflictsToResolve.map(\.object) == [card("c")])
        // Not resolved silently: the object stays, the server stays deleted, across syncs.
        try await engine.sync()
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c")?.name } == "Mine")
        #expect(await server.liveRecords[card("c")] == nil)
        try await engine.resolve(card("c"), with: .keepLocal)
        try await engine.sync()
        #expect(await server.liveRecords[card("c")]?.values["name"] == .value(.string("Mine")))
        #expect(await engine.status(of: card("c")) == .synced)
        try await expectAgreement(realm, server)
        await expectAppliedOnce(server)
    }

    @Test func deletedOnServerButEditedLocallyAcceptDeletion() async throws {
        let realm = try await openSyncRealm("conflict-accept")
        let server = FakeServer()
        let engine = try await engine(realm, server)
        try await realm.write { _ = try $0.create(Card.self, value: ["id": "c", "name": "Shop"]) }
        try await engine.sync()
        await server.delete(card("c"))
        try await realm.write { $0.object(ofType: Card.self, forPrimaryKey: "c")!.name = "Mine" }
        try await engine.pull()
        #expect(await engine.status(of: card("c")) == .conflict)
        try await engine.resolve(card("c"), with: .acceptDeletion)
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c") == nil })
        let before = await server.applied.count
        try await engine.sync()
        #expect(await server.applied.count == before)
        try await expectAgreement(realm, server)
        await #expect(throws: LiveObjectsError.self) { try await engine.resolve(card("c"), with: .keepLocal) }
    }

    @Test func statusUpdatesCanBeWatched() async throws {
        let realm = try await openSyncRealm("status")
        let server = FakeServer()
        let engine = try await engine(realm, server)
        let updates = await engine.statusUpdates(for: card("c"))
        try await realm.write { _ = try $0.create(Card.self, value: ["id": "c"]) }
        try await engine.sync()
        var seen: [SyncStatus] = []
        for await update in updates {
            #expect(update.object == card("c"))
            seen.append(update.status)
            if seen.count == 3 { break }
        }
        #expect(seen == [.synced, .pending, .synced])
    }

    @Test func aRealmWithoutHistoryOrAServerIDIsRefused() async throws {
        let plain = try await Realm.open(.init(identifier: "plain-\(UUID())", objectTypes: syncTypes))
        let error = await #expect(throws: LiveObjectsError.self) {
            _ = try await SyncEngine(realm: plain, transport: FakeServer(), types: [Card.self])
        }
        #expect(error?.code == .invalidOperation)
        final class NoServerID: Object, SyncableObject {
            @Persisted(primaryKey: true) var id = 0
        }
        var configuration = Realm.Configuration(identifier: "noid-\(UUID())", objectTypes: [NoServerID.self])
        configuration.keepsHistory = true
        let realm = try await Realm.open(configuration)
        let schemaError = await #expect(throws: LiveObjectsError.self) {
            _ = try await SyncEngine(realm: realm, transport: FakeServer(), types: [NoServerID.self])
        }
        #expect(schemaError?.code == .invalidSchema)
        #expect(schemaError?.property == "serverID")
    }

    @Test func aMapIsSentWholeOnCreateAndWithItsBaseOnUpdate() async throws {
        let server = FakeServer()
        let device = try await SyncTestDevice<Panel>(
            "map", transport: server, types: [Holder.self, Panel.self], rootID: "p1",
            configuration: .init(sleep: SleepRecorder().sleep))
        try await device.realm.write { r in
            try r.create(Panel.self, value: ["id": "p1", "settings": ["theme": "dark"], "limits": ["a": 1]])
        }
        try await device.sync()
        let created = try #require(await server.applied.last)
        #expect(created.kind == .create && created.bases.isEmpty)
        #expect(created.values["settings"] == .map(["theme": .string("dark")]))
        #expect(created.values["limits"] == .map(["a": .int(1)]))
        try await device.edit { panel, _ in panel.settings["font"] = "serif" }
        try await device.sync()
        let updated = try #require(await server.applied.last)
        #expect(updated.kind == .update && Set(updated.values.keys) == ["settings"])
        #expect(updated.values["settings"] == .map(["theme": .string("dark"), "font": .string("serif")]))
        #expect(updated.bases == ["settings": .map(["theme": .string("dark")])])
    }

    @Test func anObjectTheServerGotIsDeletedEvenWhenItsRoundDidNotFinish() async throws {
        let realm = try await openSyncRealm("unfinished")
        let server = FakeServer()
        let engine = try await engine(realm, server, maxAttempts: 2)
        try await realm.write { r in
            let ann = try r.create(Holder.self, value: ["id": "h", "name": "Ann"])
            _ = try r.create(Card.self, value: ["id": "c", "owner": ann])
        }
        // The holder is created on the server, the card's batch fails: the round does not finish.
        await server.refuse("Card")
        let report = try await engine.push()
        #expect(report.failed == [card("c")])
        #expect(await server.liveRecords[holder("h")] != nil)
        // Inserted and deleted since the synced token, but the server has it: it must go.
        try await realm.write { try $0.delete($0.object(ofType: Holder.self, forPrimaryKey: "h")!) }
        await server.refuse(nil)
        try await engine.sync()
        #expect(await server.liveRecords[holder("h")] == nil)
        try await expectAgreement(realm, server)
        await expectAppliedOnce(server)
    }
}
