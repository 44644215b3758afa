import Foundation
import LiveObjects
import LiveObjectsSync

/// `offline`: discount cards made on a phone with no network, each named by a local id, synced
/// later through a small in-process server that gives server ids; server edits merge
/// last-writer-wins, and a card deleted on the server but edited on the phone is a conflict the
/// app resolves.
enum OfflineWalkthrough: Walkthrough {
    static let name = "offline"
    static let summary =
        "discount cards created offline with a local id, synced later through a fake server or a real one (server ids, last-writer-wins)"

    // MARK: The model

    /// A shop: the parent of its cards, so it reaches the server before them.
    final class Shop: Object, SyncableObject {
        @Persisted(primaryKey: true) var id = ""
        @Persisted var serverID: String?
        @Persisted var name = ""
    }

    /// A discount card. `id` is the local id made on the phone; `serverID` arrives after sync.
    final class DiscountCard: Object, SyncableObject {
        @Persisted(primaryKey: true) var id = ""
        @Persisted var serverID: String?
        @Persisted var shop: Shop?
        @Persisted var number = ""
        @Persisted var label = ""
        @Persisted var discount = 0
        /// A photo of the card: large, so it is sent after every other change.
        @Persisted var image = Data()

        static var largePayloadProperties: Set<String> { ["image"] }
    }

    static func shopID(_ id: String) -> SyncObjectID { SyncObjectID(Shop.self, .string(id)) }
    static func cardID(_ id: String) -> SyncObjectID { SyncObjectID(DiscountCard.self, .string(id)) }

    /// A deterministic stand-in for a photo of `count` bytes.
    static func photo(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed })
    }

    // MARK: The fake server

    /// An in-process server: one record per object id, server ids `srv-1`, `srv-2`, … given at
    /// creation, a version per change, and a receipt per idempotency key so that a repeated key
    /// is answered without being applied again. While unreachable, every request fails before
    /// it reaches the server.
    actor CardServer: SyncTransport {
        struct Record: Sendable {
            var serverID: String
            var version: UInt64
            var values: [String: SyncValue]
            var isDeleted = false
        }

        struct Unreachable: Error, CustomStringConvertible {
            var description: String { "no network: the server cannot be reached" }
        }

        private(set) var isReachable = false
        private(set) var records: [SyncObjectID: Record] = [:]
        private var receipts: [String: SyncReceipt] = [:]
        /// How many push requests carried each idempotency key.
        private(set) var requestsPerKey: [String: Int] = [:]
        /// How many times each idempotency key was applied.
        private(set) var applicationsPerKey: [String: Int] = [:]
        /// Every push request that reached the server, one line per change.
        private(set) var pushLog: [[String]] = []
        private var version: UInt64 = 0
        private var nextID = 1

        func setReachable(_ reachable: Bool) { isReachable = reachable }

        func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
            guard isReachable else { throw Unreachable() }
            pushLog.append(changes.map(Self.describe))
            return changes.map { change in
                requestsPerKey[change.idempotencyKey, default: 0] += 1
                if let receipt = receipts[change.idempotencyKey] { return receipt }
                applicationsPerKey[change.idempotencyKey, default: 0] += 1
                let receipt = apply(change)
                receipts[change.idempotencyKey] = receipt
                return receipt
            }
        }

        func pull(after cursor: String?) async throws -> SyncPull {
            guard isReachable else { throw Unreachable() }
            let since = cursor.flatMap { UInt64($0) } ?? 0
            let changes = records.filter { $0.value.version > since }
                .sorted { $0.value.version < $1.value.version }
                .map { id, record in
                    ServerChange(
                        object: id, serverID: record.serverID, serverVersion: record.version,
                        isDeleted: record.isDeleted, values: record.values)
                }
            return SyncPull(changes: changes, cursor: String(version))
        }

        /// Creates and updates are upserts; an update of a deleted object is refused as
        /// `deletedOnServer`; a creation after a deletion gets a new server id.
        private func apply(_ change: SyncChange) -> SyncReceipt {
            let key = change.idempotencyKey
            let existing = records[change.object]
            if change.kind == .update, let existing, existing.isDeleted {
                return SyncReceipt(
                    idempotencyKey: key, serverID: existing.serverID, serverVersion: existing.version,
                    outcome: .deletedOnServer)
            }
            version += 1
            var record = existing ?? Record(serverID: newServerID(), version: version, values: [:])
            switch change.kind {
            case .create, .update:
                if record.isDeleted { record = Record(serverID: newServerID(), version: version, values: [:]) }
                record.values.merge(change.values) { _, new in new }
            case .delete:
                record.isDeleted = true
                record.values = [:]
            }
            record.version = version
            records[change.object] = record
            return SyncReceipt(idempotencyKey: key, serverID: record.serverID, serverVersion: version)
        }

        private func newServerID() -> String {
            defer { nextID += 1 }
            return "srv-\(nextID)"
        }

        /// Another device changes an object.
        func editFromAnotherDevice(_ id: SyncObjectID, _ values: [String: PropertyValue]) {
            guard var record = records[id], !record.isDeleted else { return }
            version += 1
            record.values.merge(values.mapValues { .value($0) }) { _, new in new }
            record.version = version
            records[id] = record
        }

        /// Another device deletes an object.
        func deleteFromAnotherDevice(_ id: SyncObjectID) {
            guard var record = records[id], !record.isDeleted else { return }
            version += 1
            record.isDeleted = true
            record.values = [:]
            record.version = version
            records[id] = record
        }

        /// The objects the server holds, links as the target's local id, plus the server id.
        func liveState() -> [SyncObjectID: [String: PropertyValue]] {
            var result: [SyncObjectID: [String: PropertyValue]] = [:]
            for (id, record) in records where !record.isDeleted {
                var row: [String: PropertyValue] = ["serverID": .string(record.serverID)]
                for (name, value) in record.values {
                    switch value {
                    case .value(let plain): row[name] = plain
                    case .reference(let target): row[name] = target?.object.primaryKey ?? .null
                    case .references(let targets): row[name] = .list(targets.map(\.object.primaryKey))
                    case .map(let entries):
                        row[name] = .list(
                            entries.sorted { $0.key < $1.key }.map { .list([.string($0.key), $0.value]) })
                    case .referenceMap(let entries):
                        row[name] = .list(
                            entries.sorted { $0.key < $1.key }.map {
                                .list([.string($0.key), $0.value?.object.primaryKey ?? .null])
                            })
                    // This walkthrough's AnyValues hold no links: each is the AnyValue it stores.
                    case .mixed(let mixed): row[name] = mixed.anyValue?.propertyValue ?? .null
                    case .mixedList(let elements):
                        row[name] = .list(elements.map { $0.anyValue?.propertyValue ?? .null })
                    case .mixedMap(let entries):
                        row[name] = .list(
                            entries.sorted { $0.key < $1.key }.map {
                                .list([.string($0.key), $0.value.anyValue?.propertyValue ?? .null])
                            })
                    }
                }
                result[id] = row
            }
            return result
        }

        /// One change as a line of the push log.
        static func describe(_ change: SyncChange) -> String {
            let values = change.values.sorted { $0.key < $1.key }.map { name, value in
                switch value {
                case .value(let plain):
                    return "\(name) \(plain)"
                case .reference(let target):
                    guard let target else { return "\(name) nil" }
                    return "\(name) \(target.object.primaryKey) (\(target.serverID ?? "no server id yet"))"
                case .references(let targets):
                    return "\(name) [\(targets.map { "\($0.object.primaryKey)" }.joined(separator: ", "))]"
                case .map(let entries):
                    return
                        "\(name) [\(entries.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))]"
                case .referenceMap(let entries):
                    let pairs = entries.sorted { $0.key < $1.key }.map {
                        "\($0.key): \($0.value.map { "\($0.object.primaryKey)" } ?? "nil")"
                    }
                    return "\(name) [\(pairs.joined(separator: ", "))]"
                case .mixed(let mixed):
                    return "\(name) \(mixed)"
                case .mixedList(let elements):
                    return "\(name) \(elements)"
                case .mixedMap(let entries):
                    return
                        "\(name) [\(entries.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))]"
                }
            }
            let object = "\(change.object.typeName) \(change.object.primaryKey)"
            return "\(change.kind) \(object)" + (values.isEmpty ? "" : ": " + values.joined(separator: ", "))
        }
    }

    /// Records the engine's waits between retries instead of waiting.
    actor Waits {
        private(set) var recorded: [Duration] = []
        func record(_ duration: Duration) { recorded.append(duration) }
        nonisolated var sleep: @Sendable (Duration) async throws -> Void { { await self.record($0) } }
    }

    // MARK: Reading the phone's side

    struct CardRow: Sendable {
        var id: String
        var shop: String
        var number: String
        var label: String
        var discount: Int
        var serverID: String?
        var imageBytes: Int
    }

    static func cards(_ realm: Realm) async throws -> [CardRow] {
        try await realm.read { realm in
            realm.objects(DiscountCard.self).sorted(by: \.id).map { card in
                CardRow(
                    id: card.id, shop: card.shop?.name ?? "-", number: card.number, label: card.label,
                    discount: card.discount, serverID: card.serverID, imageBytes: card.image.count)
            }
        }
    }

    static func card(_ realm: Realm, _ id: String) async throws -> CardRow? {
        try await cards(realm).first { $0.id == id }
    }

    /// Prints the phone's cards with their sync status.
    static func showCards(_ realm: Realm, _ engine: SyncEngine, _ narrator: Narrator) async throws {
        for card in try await cards(realm) {
            let status = await engine.status(of: cardID(card.id))
            narrator.say(
                "  \(card.id)  \(card.shop.padding(toLength: 9, withPad: " ", startingAt: 0))  \(card.number)  "
                    + "\"\(card.label)\" \(card.discount)%  image \(card.imageBytes) bytes  "
                    + "server id: \(card.serverID ?? "-")  \(status)")
        }
    }

    /// The phone's objects in the form of ``CardServer/liveState()``.
    static func localState(_ realm: Realm) async throws -> [SyncObjectID: [String: PropertyValue]] {
        try await realm.read { realm in
            var result: [SyncObjectID: [String: PropertyValue]] = [:]
            for shop in realm.objects(Shop.self) {
                result[shopID(shop.id)] = [
                    "serverID": shop.serverID.map { .string($0) } ?? .null, "name": .string(shop.name),
                ]
            }
            for card in realm.objects(DiscountCard.self) {
                result[cardID(card.id)] = [
                    "serverID": card.serverID.map { .string($0) } ?? .null,
                    "shop": card.shop.map { .string($0.id) } ?? .null,
                    "number": .string(card.number), "label": .string(card.label),
                    "discount": .int(Int64(card.discount)), "image": .data(card.image),
                ]
            }
            return result
        }
    }

    // MARK: The walkthrough

    static let groceriesPhoto = photo(196_608, seed: 0x5A)
    static let weekendPhoto = photo(131_072, seed: 0xA5)

    static func run(_ narrator: Narrator) async throws {
        narrator.step("Model discount cards for sync; open a realm that keeps history; start a sync engine.")
        narrator.code(
            """
            final class DiscountCard: Object, SyncableObject {
                @Persisted(primaryKey: true) var id = ""     // the local id, made on the phone
                @Persisted var serverID: String?             // filled in by the engine after sync
                @Persisted var shop: Shop?                   // the parent: sent before its cards
                @Persisted var number = "", label = "", discount = 0
                @Persisted var image = Data()                // a photo of the card
                static var largePayloadProperties: Set<String> { ["image"] }   // sent last
            }
            var configuration = Realm.Configuration(identifier: "cards", objectTypes: [Shop.self, DiscountCard.self])
            configuration.keepsHistory = true                // the engine reads the change history
            let engine = try await SyncEngine(realm: realm, transport: server, types: [Shop.self, DiscountCard.self])
            """)
        var configuration = Realm.Configuration(
            identifier: "playground.offline", objectTypes: [Shop.self, DiscountCard.self])
        configuration.keepsHistory = true
        let realm = try await Realm.open(configuration)
        let server = CardServer()
        let waits = Waits()
        let engine = try await SyncEngine(
            realm: realm, transport: server, types: [Shop.self, DiscountCard.self],
            configuration: .init(maxAttempts: 3, initialBackoff: .seconds(1), sleep: waits.sleep))
        narrator.say(
            """
            The server is a small actor in this process (a real app would talk HTTP). It is
            unreachable for now: the phone has no network. The engine retries a failed request 3
            times, waiting 1 s, then 2 s; here the waits are recorded instead of slept.
            A real app makes local ids with UUID().uuidString; fixed ones keep this output the same.
            """)
        try narrator.check(realm.configuration.keepsHistory, "the realm keeps history")
        try narrator.check(!(await server.isReachable), "the server is unreachable")
        let scene = Scene(realm: realm, server: server, waits: waits, engine: engine)
        let start = try await createOffline(narrator, scene)
        try await editOffline(narrator, scene, since: start)
        try await syncWhileOffline(narrator, scene)
        try await syncOnline(narrator, scene)
        try await lastWriterWins(narrator, scene)
        try await conflict(narrator, scene)
        try await agreement(narrator, scene)
    }

    /// Offline: two shops and three cards; returns the history token from before them.
    static func createOffline(_ narrator: Narrator, _ scene: Scene) async throws -> HistoryToken {
        let realm = scene.realm
        let engine = scene.engine

        narrator.step("Offline: add two shops and three cards, each saved as the user taps Save.")
        narrator.code(
            """
            try await realm.write { realm in
                let shop = try realm.create(Shop.self, value: ["id": "shop-1", "name": "Пятёрочка"])
                let card = try realm.create(DiscountCard.self, value: ["id": "card-1", "shop": shop, …])
                card.image = photo                           // 196,608 bytes
            }
            """)
        let start = await realm.currentHistoryToken
        try await realm.write { _ = try $0.create(Shop.self, value: ["id": "shop-1", "name": "Пятёрочка"]) }
        try await realm.write { _ = try $0.create(Shop.self, value: ["id": "shop-2", "name": "Лента"]) }
        let groceriesPhoto = groceriesPhoto
        let weekendPhoto = weekendPhoto
        try await realm.write { realm in
            let card = try realm.create(
                DiscountCard.self,
                value: [
                    "id": "card-1", "shop": realm.object(ofType: Shop.self, forPrimaryKey: "shop-1") as Any,
                    "number": "7700 1234 5678", "label": "Groceries", "discount": 5,
                ])
            card.image = groceriesPhoto
        }
        try await realm.write { realm in
            let card = try realm.create(
                DiscountCard.self,
                value: [
                    "id": "card-2", "shop": realm.object(ofType: Shop.self, forPrimaryKey: "shop-2") as Any,
                    "number": "2000 9876", "label": "Weekend", "discount": 3,
                ])
            card.image = weekendPhoto
        }
        try await realm.write { realm in
            _ = try realm.create(
                DiscountCard.self,
                value: [
                    "id": "card-3", "shop": realm.object(ofType: Shop.self, forPrimaryKey: "shop-1") as Any,
                    "number": "0000", "label": "Added by mistake",
                ])
        }
        try await showCards(realm, engine, narrator)
        for id in ["card-1", "card-2", "card-3"] {
            try narrator.expect(await engine.status(of: cardID(id)), .pending, "\(id) is pending")
        }
        try narrator.expect(await engine.status(of: shopID("shop-1")), .pending, "shop-1 (Пятёрочка) is pending")
        try narrator.check(try await cards(realm).allSatisfy { $0.serverID == nil }, "no card has a server id yet")
        return start
    }

    /// Offline: an edit and a deletion, seen in the history since `start`.
    static func editOffline(_ narrator: Narrator, _ scene: Scene, since start: HistoryToken) async throws {
        let realm = scene.realm
        let engine = scene.engine

        narrator.step("Still offline: fix card-2's number, and delete card-3.")
        try await realm.write { $0.object(ofType: DiscountCard.self, forPrimaryKey: "card-2")?.number = "2000 9877" }
        try await realm.write { realm in
            if let card = realm.object(ofType: DiscountCard.self, forPrimaryKey: "card-3") { try realm.delete(card) }
        }
        try await showCards(realm, engine, narrator)
        let history = try await realm.read { try $0.changes(since: start) }
        let inserted = history[DiscountCard.self].inserted.compactMap(\.stringValue).sorted()
        narrator.say(
            """
            The history coalesces each object's changes: card-2's create and edit are one
            insertion, and card-3's create and delete cancel out.
              inserted cards: \(inserted.joined(separator: ", ")); updated: \(history[DiscountCard.self].updated.count); deleted: \(history[DiscountCard.self].deleted.count)
            """)
        try narrator.expect(inserted, ["card-1", "card-2"], "the history holds two new cards, card-3 is not in it")
        try narrator.expect(await engine.status(of: cardID("card-2")), .pending, "card-2 is pending")
    }

    /// Offline: a sync attempt that retries, reports, and loses nothing.
    static func syncWhileOffline(_ narrator: Narrator, _ scene: Scene) async throws {
        let realm = scene.realm
        let server = scene.server
        let waits = scene.waits
        let engine = scene.engine

        narrator.step("Try to sync while still offline: retries, then a clear report, and nothing lost.")
        let offline = try await engine.sync()
        guard let failure = offline.pullFailure else {
            throw CheckFailure(message: "sync should report a failed pull while the server is unreachable")
        }
        narrator.say("engine.sync() reported: pull failed (\(failure)); \(offline.failed.count) objects failed to push")
        let waited = await waits.recorded
        narrator.say(
            "Waits between attempts (push, then pull): \(waited.map { "\($0.components.seconds) s" }.joined(separator: ", "))"
        )
        try narrator.expect(
            waited, [.seconds(1), .seconds(2), .seconds(1), .seconds(2)], "each request was tried 3 times, with backoff"
        )
        try narrator.expect(
            await engine.status(of: shopID("shop-1")), .failed, "the shops' batch failed: they are marked failed")
        try narrator.expect(
            await engine.status(of: cardID("card-1")), .pending,
            "the cards, which wait for their shops, are still pending")
        try narrator.expect(try await cards(realm).count, 2, "both cards are still on the phone")
        try narrator.check(await server.requestsPerKey.isEmpty, "nothing reached the server")
    }

    /// Online: the sync, parents before children, large payloads last.
    static func syncOnline(_ narrator: Narrator, _ scene: Scene) async throws {
        let realm = scene.realm
        let server = scene.server
        let engine = scene.engine

        narrator.step("The network is back: sync.")
        narrator.code("let report = try await engine.sync()")
        await server.setReachable(true)
        let report = try await engine.sync()
        narrator.say(
            "pushed \(report.pushed), pulled \(report.pulled), conflicts \(report.conflicts), failed \(report.failed.count)"
        )
        narrator.say("(The pull brings back the 4 objects just pushed: the phone already holds those values.)")
        let log = await server.pushLog
        narrator.say("The push requests the server got, in order:")
        for (index, request) in log.enumerated() {
            narrator.say("  request \(index + 1):")
            for line in request { narrator.say("    \(line)") }
        }
        try narrator.expect(report.pushed, 6, "6 changes pushed: 2 shops, 2 cards, 2 images")
        try narrator.check(report.failed.isEmpty, "nothing failed")
        try narrator.expect(log.count, 3, "3 requests: shops, then cards, then images")
        try narrator.check(
            log.count == 3 && log[0].allSatisfy { $0.hasPrefix("create Shop") }
                && log[1].allSatisfy { $0.hasPrefix("create DiscountCard") }
                && log[2].allSatisfy { $0.hasPrefix("update DiscountCard") && $0.contains("image <") },
            "the shops went before the cards that link to them, and the images went last")
        try narrator.check(
            log.count == 3 && log[1].allSatisfy { $0.contains("(srv-") } && !log[1].joined().contains("image"),
            "each card's create names its shop with the server id the shop just got, and carries no image")
        try await showCards(realm, engine, narrator)
        let afterSync = try await cards(realm)
        try narrator.expect(
            afterSync.map { $0.serverID ?? "-" }, ["srv-3", "srv-4"], "the server ids came back into the cards")
        for id in ["card-1", "card-2"] {
            try narrator.expect(await engine.status(of: cardID(id)), .synced, "\(id) is synced")
        }
        try narrator.expect(await engine.status(of: shopID("shop-1")), .synced, "shop-1, failed before, is synced")
        let serverCard1 = await server.records[cardID("card-1")]
        try narrator.check(
            serverCard1?.values["image"] == .value(.data(groceriesPhoto)),
            "the server has card-1's image, byte for byte")
        try narrator.check(
            await server.records[cardID("card-2")]?.values["number"] == .value(.string("2000 9877")),
            "card-2 reached the server once, as a create with the fixed number")
        try narrator.check(await server.records[cardID("card-3")] == nil, "card-3 never reached the server")
    }

    /// Last writer wins: a change on the server and one on the phone, per property.
    static func lastWriterWins(_ narrator: Narrator, _ scene: Scene) async throws {
        let realm = scene.realm
        let server = scene.server
        let engine = scene.engine

        narrator.step("Another device relabels card-1 on the server; the phone, offline, changes its number.")
        await server.editFromAnotherDevice(cardID("card-1"), ["label": .string("Семейная"), "discount": .int(7)])
        await server.setReachable(false)
        try await realm.write {
            $0.object(ofType: DiscountCard.self, forPrimaryKey: "card-1")?.number = "7700 1234 5679"
        }
        try narrator.expect(
            await engine.status(of: cardID("card-1")), .pending, "card-1 is pending: its new number is not sent")
        narrator.say("Back online, the app refreshes first: it pulls without pushing.")
        narrator.code("try await engine.pull()")
        await server.setReachable(true)
        let pulled = try await engine.pull()
        let merged = try narrator.unwrap(try await card(realm, "card-1"), "card-1 is on the phone")
        narrator.say("card-1 now: number \(merged.number), label \"\(merged.label)\", discount \(merged.discount)%")
        try narrator.expect(pulled.pulled, 1, "one server state pulled: card-1's")
        try narrator.expect(merged.label, "Семейная", "the server's label is merged in")
        try narrator.expect(merged.discount, 7, "the server's discount is merged in")
        try narrator.expect(merged.number, "7700 1234 5679", "the unsent local number is kept: it is the later write")
        try narrator.expect(await engine.status(of: cardID("card-1")), .pending, "card-1 is still pending")
        let before = await server.pushLog.count
        try await engine.sync()
        let sent = await server.pushLog[before...].flatMap { $0 }
        narrator.say("sync sent: \(sent.joined(separator: "; "))")
        try narrator.expect(
            sent, ["update DiscountCard \"card-1\": number \"7700 1234 5679\""], "only the changed number was sent")
        try narrator.check(
            await server.records[cardID("card-1")]?.values["label"] == .value(.string("Семейная")),
            "the server keeps the other device's label")
        try narrator.expect(await engine.status(of: cardID("card-1")), .synced, "card-1 is synced")

        narrator.step("Another device changes card-1's number after the phone's number reached the server.")
        await server.editFromAnotherDevice(cardID("card-1"), ["number": .string("7700 1234 5680")])
        try await engine.sync()
        let latest = try await card(realm, "card-1")?.number
        narrator.say("card-1's number on the phone: \(latest ?? "-")")
        try narrator.expect(latest, "7700 1234 5680", "the later write, from the other device, wins")
    }

    /// Conflict: a card deleted on the server and relabelled on the phone, kept by the app.
    static func conflict(_ narrator: Narrator, _ scene: Scene) async throws {
        let realm = scene.realm
        let server = scene.server
        let engine = scene.engine

        narrator.step("Conflict: another device deletes card-2, while the phone, offline, relabels it.")
        let card2ServerID = try await card(realm, "card-2")?.serverID
        await server.deleteFromAnotherDevice(cardID("card-2"))
        await server.setReachable(false)
        try await realm.write {
            $0.object(ofType: DiscountCard.self, forPrimaryKey: "card-2")?.label = "Weekend + fuel"
        }
        await server.setReachable(true)
        let conflicts = await engine.conflicts()
        narrator.code(
            """
            for await conflict in await engine.conflicts() {      // the app listens
                try await engine.resolve(conflict.object, with: .keepLocal)   // or .acceptDeletion
            }
            """)
        let conflictReport = try await engine.sync()
        var iterator = conflicts.makeAsyncIterator()
        let conflict = try narrator.unwrap(await iterator.next(), "a conflict is reported")
        narrator.say(
            "conflict: \(conflict.object), server id \(conflict.serverID ?? "-"), changed here: \(conflict.localChanges.sorted().joined(separator: ", "))"
        )
        try narrator.expect(conflictReport.conflicts, 1, "sync counts one conflict")
        try narrator.expect(conflict.object, cardID("card-2"), "it is card-2")
        try narrator.expect(conflict.localChanges, ["label"], "its unsent change is the label")
        try narrator.expect(await engine.status(of: cardID("card-2")), .conflict, "card-2's status is conflict")
        try await engine.sync()
        try narrator.expect(
            try await card(realm, "card-2")?.label, "Weekend + fuel", "not resolved silently: the phone keeps the card")
        try narrator.check(await server.liveState()[cardID("card-2")] == nil, "and the server keeps it deleted")

        narrator.step("The app resolves it: the user wants the card, so keep the local one.")
        narrator.code("try await engine.resolve(conflict.object, with: .keepLocal)\ntry await engine.sync()")
        try await engine.resolve(conflict.object, with: .keepLocal)
        let before2 = await server.pushLog.count
        try await engine.sync()
        let resent = await server.pushLog[before2...].flatMap { $0 }
        for line in resent { narrator.say("sent: " + line) }
        let kept = try narrator.unwrap(try await card(realm, "card-2"), "card-2 is on the phone")
        narrator.say("card-2's server id: \(card2ServerID ?? "-") before, \(kept.serverID ?? "-") now")
        try narrator.check(
            resent.first?.hasPrefix("create DiscountCard \"card-2\"") == true, "card-2 was sent again as a new card")
        try narrator.check(kept.serverID != nil && kept.serverID != card2ServerID, "the server gave it a new server id")
        try narrator.check(
            await server.records[cardID("card-2")]?.values["label"] == .value(.string("Weekend + fuel")),
            "the server has the phone's label")
        try narrator.expect(await engine.status(of: cardID("card-2")), .synced, "card-2 is synced")
    }

    /// Agreement: the phone and the server hold the same, and nothing was sent twice.
    static func agreement(_ narrator: Narrator, _ scene: Scene) async throws {
        let realm = scene.realm
        let server = scene.server
        let engine = scene.engine

        narrator.step("Check that the phone and the server agree, and that nothing was sent twice.")
        try await showCards(realm, engine, narrator)
        let local = try await localState(realm)
        let remote = await server.liveState()
        try narrator.expect(local.count, 4, "the phone holds 2 shops and 2 cards")
        for id in Set(local.keys).union(remote.keys).sorted(by: { $0.description < $1.description }) {
            try narrator.check(
                local[id] == remote[id], "\(id) is the same on both sides",
                detail:
                    "phone \(local[id].map { "\($0)" } ?? "missing"), server \(remote[id].map { "\($0)" } ?? "missing")"
            )
        }
        let requests = await server.requestsPerKey
        let applications = await server.applicationsPerKey
        narrator.say(
            "\(requests.count) idempotency keys reached the server; requests per key: \(Set(requests.values).sorted())")
        try narrator.check(requests.values.allSatisfy { $0 == 1 }, "no change was sent twice")
        try narrator.check(applications.values.allSatisfy { $0 == 1 }, "no change was applied twice")
        let pushes = await server.pushLog.count
        let last = try await engine.sync()
        let pushesAfter = await server.pushLog.count
        try narrator.check(last.pushed == 0 && pushesAfter == pushes, "one more sync sends nothing")
    }

    /// What the steps share: the phone's realm and sync engine, the server, the recorded waits.
    struct Scene {
        let realm: Realm
        let server: CardServer
        let waits: Waits
        let engine: SyncEngine
    }
}
