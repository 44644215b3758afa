import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import PostgresNIO
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Devices in processes of their own against a real server and database: killed in the middle
/// of a sync, and three of them editing offline and syncing in random orders while responses
/// are lost and the server restarts. Inside the serialized suite: other tests count every row of
/// the database before and after a refusal.
extension SyncServerTests {
    @Suite struct DeviceProcessTests {
        let directory: URL

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "sync-devices-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        func device(
            _ name: String, _ harness: ServerHarness, server: URL, token: String, extra: [String] = []
        ) async throws -> DeviceProcess {
            try await DeviceProcess(
                name: name, realm: directory.appendingPathComponent("\(name).json"), server: server,
                space: harness.space, token: token, log: directory.appendingPathComponent("\(name).log"), extra: extra)
        }

        func log(_ name: String) -> URL { directory.appendingPathComponent("\(name).log") }

        @Test func aDeviceKilledInThePushNeitherResendsAcknowledgedChangesNorPullsFromTheBeginning() async throws {
            let harness = try await ServerHarness.start()
            defer { Task { await harness.stop() } }
            let token = try await harness.user("phone", .admin)

            // Killed right after the third push response arrives, before the engine reads it.
            var phone = try await device(
                "phone", harness, server: harness.baseURL, token: token, extra: ["--kill-after-push-responses", "3"])
            try await phone.send("edit 11 60")
            let death = try await phone.sendAndExpectDeath("sync")
            #expect(death.signal == SIGKILL, "the device was not killed: \(death.lines)")
            let before = try DeviceEvents(log("phone"))
            let batches = before.acknowledgedBatches
            try #require(batches.count == 3, "\(before.events)")
            // The engine had read the first two answers (and saved what they said); the third was
            // in flight.
            let processed = Set(batches[0] + batches[1])
            let offset = DeviceEvents.lineCount(log("phone"))

            phone = try await device("phone", harness, server: harness.baseURL, token: token)
            let answer = try await phone.send("sync")
            #expect(answer.first?.hasPrefix("ok") == true, "\(answer)")
            let after = try DeviceEvents(log("phone"), from: offset)
            let resent = processed.intersection(after.pushedKeys)
            #expect(resent.isEmpty, "acknowledged changes sent again: \(resent.sorted())")
            // The round went on where it stopped: the in-flight batch at most, then the rest.
            #expect(!after.pushedKeys.isEmpty)
            let phoneState = try await phone.send("dump")
            try await phone.quit()

            // A second device pulls everything in pages of 7 and is killed when the second page
            // arrives: after a restart it goes on from the first page's cursor.
            let tabletToken = try await harness.user("tablet", .admin)
            var tablet = try await device(
                "tablet", harness, server: harness.baseURL, token: tabletToken, extra: ["--kill-after-pulls", "2"])
            let tabletDeath = try await tablet.sendAndExpectDeath("sync")
            #expect(tabletDeath.signal == SIGKILL)
            let pullsBefore = try DeviceEvents(log("tablet")).pullCursors
            try #require(pullsBefore.count == 2, "\(pullsBefore)")
            #expect(pullsBefore[0] == nil)
            let tabletOffset = DeviceEvents.lineCount(log("tablet"))
            tablet = try await device("tablet", harness, server: harness.baseURL, token: tabletToken)
            #expect(try await tablet.send("sync").first?.hasPrefix("ok") == true)
            let pullsAfter = try DeviceEvents(log("tablet"), from: tabletOffset).pullCursors
            #expect(pullsAfter.first == pullsBefore[1], "pulled from \(String(describing: pullsAfter.first))")
            #expect(try await tablet.send("dump") == phoneState)
            try await tablet.quit()

            #expect(try await databaseCards(harness) == phoneState.filter { $0.hasPrefix("card ") })
        }

        /// Three runs, each with its own seed (`SYNC_E2E_SEED` replays one: it is the seed of the
        /// first run, and the others follow from it). The space declares the devices' schema; a
        /// hostile writer pushes, by raw HTTP, changes that do not fit it beside one that does;
        /// one device pulls in pages of 1 to 3 changes (cards before the holders they link to),
        /// and a fourth device joins at the end with pages of 2. The devices edit the lists of
        /// one shared board concurrently (appends, removals, moves of tags and of links to
        /// cards): at the end every device holds the server's lists in the server's order, and
        /// every element whose append was acknowledged is there as often as it was appended,
        /// less the removals of it that were ever sent (a card deleted aside).
        @Test(arguments: 0..<3)
        func threeDevicesInTheirOwnProcessesAgreeAfterLostResponsesKillsAndServerRestarts(run: Int) async throws {
            let base =
                ProcessInfo.processInfo.environment["SYNC_E2E_SEED"].flatMap { UInt64($0) }
                ?? UInt64.random(in: 1...999_999)
            let seed = base + UInt64(run)
            var random = SyncSeededGenerator(seed: seed)
            var operations: [String] = []
            func context() -> String {
                "seed \(seed) (replay: SYNC_E2E_SEED=\(seed)); operations:\n" + operations.joined(separator: "\n")
            }
            let harness = try await ServerHarness.start(types: ["Holder", "Card", "Board"])
            let server = RestartableServer(database: harness.database)
            try await server.start()
            let url = await server.url
            let names = ["ann", "bob", "eve"]
            let extras = [[], [], ["--page-size", "\(1 + random.next() % 3)"]]
            var tokens: [String] = []
            var devices: [DeviceProcess] = []
            var hostilePushes = 0
            do {
                try await harness.declareSchema([Holder.self, Card.self, Board.self])
                let hostileToken = try await harness.user("mallory", .writer)
                for (name, extra) in zip(names, extras) {
                    tokens.append(try await harness.user(name, .admin))
                    devices.append(try await device(name, harness, server: url, token: tokens.last!, extra: extra))
                }
                // The board is made once and pulled by everyone before the edits: a list's base
                // is what the server sent, and two creates would replace each other's lists.
                operations.append("ann: board")
                try await devices[0].send("board")
                for device in devices {
                    let answer = try await device.send("sync").joined()
                    operations.append("\(device.name): sync -> \(answer)")
                    try #require(answer.hasPrefix("ok"), "\(context())")
                }
                for device in devices { try await device.send("drops 0.25 \(random.next() % 1000)") }
                for _ in 0..<40 {
                    let index = Int(random.next() % 3)
                    let device = devices[index]
                    let roll = random.next() % 100
                    if roll < 45 {
                        let command = "edit \(random.next() % 100_000) \(1 + random.next() % 6)"
                        operations.append("\(device.name): \(command)")
                        _ = try await device.send(command)
                    } else if roll < 90 {
                        operations.append("\(device.name): sync")
                        let answer = try await device.send("sync")
                        operations[operations.count - 1] += " -> \(answer.joined())"
                    } else if roll < 93 {
                        // Killed somewhere in a sync (wherever the kill lands), then started again.
                        operations.append("\(device.name): sync, killed")
                        device.start("sync")
                        device.terminate()
                        devices[index] = try await self.device(
                            device.name, harness, server: url, token: tokens[index], extra: extras[index])
                        try await devices[index].send("drops 0.25 \(random.next() % 1000)")
                    } else if roll < 97 {
                        // A change that does not fit the schema, beside a card that does: refused
                        // alone, by a receipt.
                        let variant = hostileVariants[Int(random.next() % UInt64(hostileVariants.count))]
                        hostilePushes += 1
                        let good =
                            #"{"key":"mallory-\#(seed)-\#(hostilePushes)","object":{"type":"Card","id":"#
                            + #"{"string":"mallory-\#(hostilePushes)"}},"kind":"create","values":"#
                            + #"{"name":{"string":"hostile"},"discount":{"int":1},"owner":{"ref":null}}}"#
                        let bad = #"{"key":"bad-\#(seed)-\#(hostilePushes)",\#(variant.change)}"#
                        let body = #"{"changes":[\#(bad),\#(good)]}"#
                        operations.append("mallory: push \(variant.name)")
                        let (status, answer) = try await harness.raw(
                            "POST", "/v1/spaces/\(harness.space)/push", token: hostileToken, body: Data(body.utf8))
                        #expect(status == 200, "\(variant.name): \(answer); \(context())")
                        #expect(
                            answer.components(separatedBy: #""outcome":"rejected""#).count == 2
                                && answer.contains(#""code":"\#(variant.code)""#)
                                && answer.contains(#""outcome":"applied""#),
                            "\(variant.name): \(answer); \(context())")
                    } else {
                        operations.append("server restart")
                        try await server.restart()
                    }
                }
                // Everyone back online: sync until a whole round changes nothing.
                var quiet = false
                for _ in 0..<8 where !quiet {
                    quiet = true
                    for device in devices {
                        try await device.send("drops 0 0")
                        let answer = try await device.send("sync").joined()
                        operations.append("\(device.name): sync -> \(answer)")
                        if answer != "ok pushed 0 pulled 0 conflicts 0 failed 0" { quiet = false }
                    }
                }
                #expect(quiet, "the devices did not settle; \(context())")
                let states = try await devices.asyncMap { try await $0.send("dump") }
                for (device, state) in zip(devices, states).dropFirst() {
                    #expect(state == states[0], "\(device.name) differs from ann; \(context())")
                }
                // A device that joins now pulls everything, two changes a page, and agrees.
                let late = try await device(
                    "fay", harness, server: url, token: try await harness.user("fay", .admin),
                    extra: ["--page-size", "2"])
                var lateAnswer = try await late.send("sync").joined()
                for _ in 0..<3 where !lateAnswer.hasPrefix("ok") { lateAnswer = try await late.send("sync").joined() }
                operations.append("fay: sync -> \(lateAnswer)")
                #expect(lateAnswer.hasPrefix("ok"), "\(context())")
                #expect(try await late.send("dump") == states[0], "fay differs from ann; \(context())")
                try await late.quit()
                #expect(try await databaseCards(harness) == states[0].filter { $0.hasPrefix("card ") }, "\(context())")
                let boards = try await databaseBoards(harness)
                #expect(boards == states[0].filter { $0.hasPrefix("board ") }, "\(context())")
                // No acknowledged list element is lost.
                let lost = lostListElements(
                    boards: boards, logs: devices.map { log($0.name) }, deletedCards: try await deletedCards(harness))
                #expect(lost.isEmpty, "acknowledged list elements lost: \(lost); \(context())")
                // Every change a device saw acknowledged is applied in the database.
                let applied = try await appliedKeys(harness)
                // The hostile writer's good cards are applied, its bad changes never.
                #expect(applied.filter { $0.hasPrefix("mallory-") }.count == hostilePushes, "\(context())")
                #expect(!applied.contains { $0.hasPrefix("bad-") }, "\(context())")
                for device in devices {
                    let acknowledged = Set(try DeviceEvents(log(device.name)).acknowledgedBatches.joined())
                    let missing = acknowledged.subtracting(applied)
                    #expect(
                        missing.isEmpty,
                        "\(device.name): acknowledged but not applied: \(missing.sorted()); \(context())")
                }
                if ProcessInfo.processInfo.environment["SYNC_E2E_VERBOSE"] != nil { print(context()) }
                for device in devices { try await device.quit() }
            } catch {
                for device in devices { device.terminate() }
                Issue.record("\(context())")
                await server.stop()
                await harness.stop()
                throw error
            }
            await server.stop()
            await harness.stop()
        }

        /// The live cards in the database, as a device's `dump` lists them.
        func databaseCards(_ harness: ServerHarness) async throws -> [String] {
            let rows = try await harness.client.query(
                """
                SELECT 'card ' || (local_id->>'string') || ' ' || replace("values"->'name'->>'string', ' ', '_') || ' '
                       || ("values"->'discount'->>'int') || ' '
                       || coalesce("values"->'owner'->'ref'->'id'->>'string', '-')
                FROM objects JOIN spaces ON spaces.id = objects.space_id
                WHERE spaces.name = \(harness.space) AND objects.type = 'Card' AND NOT objects.deleted
                """)
            var cards: [String] = []
            for try await line in rows.decode(String.self) { cards.append(line) }
            return cards.sorted()
        }

        /// The boards in the database, as a device's `dump` lists them: the lists in the stored
        /// order.
        func databaseBoards(_ harness: ServerHarness) async throws -> [String] {
            let rows = try await harness.client.query(
                """
                SELECT 'board ' || (local_id->>'string')
                       || ' tags ' || coalesce((SELECT string_agg(element->>'string', ',' ORDER BY position)
                                                FROM jsonb_array_elements("values"->'tags'->'list')
                                                     WITH ORDINALITY AS tags(element, position)), '')
                       || ' cards ' || coalesce((SELECT string_agg(element->'id'->>'string', ',' ORDER BY position)
                                                 FROM jsonb_array_elements("values"->'cards'->'refs')
                                                      WITH ORDINALITY AS cards(element, position)), '')
                FROM objects JOIN spaces ON spaces.id = objects.space_id
                WHERE spaces.name = \(harness.space) AND objects.type = 'Board' AND NOT objects.deleted
                """)
            var boards: [String] = []
            for try await line in rows.decode(String.self) { boards.append(line) }
            return boards.sorted()
        }

        /// The ids of the cards deleted in the database (a deleted card leaves every list).
        func deletedCards(_ harness: ServerHarness) async throws -> Set<String> {
            let rows = try await harness.client.query(
                """
                SELECT local_id->>'string' FROM objects JOIN spaces ON spaces.id = objects.space_id
                WHERE spaces.name = \(harness.space) AND objects.type = 'Card' AND objects.deleted
                """)
            var ids = Set<String>()
            for try await id in rows.decode(String.self) { ids.insert(id) }
            return ids
        }

        /// The list elements that should be on the board and are not: per list, each element
        /// added by an acknowledged change, as often as it was added, less every removal of it
        /// that any device sent (acknowledged or not: a device killed after the server applied
        /// its push never logged the answer). A card some device deleted is left out: the
        /// server takes a deleted object out of every list, and a conflict may bring it back.
        func lostListElements(boards: [String], logs: [URL], deletedCards: Set<String>) -> [String] {
            var expected: [String: Int] = [:]
            var deletedEver = deletedCards
            for url in logs {
                guard let events = try? DeviceEvents(url) else { continue }
                let acknowledged = Set(events.acknowledgedBatches.joined())
                deletedEver.formUnion(events.deletedCards)
                var seen = Set<String>()
                for edit in events.listEdits where seen.insert(edit.key + " " + edit.property).inserted {
                    for element in edit.added where acknowledged.contains(edit.key) {
                        expected[edit.property + " " + element, default: 0] += 1
                    }
                    for element in edit.removed { expected[edit.property + " " + element, default: 0] -= 1 }
                }
            }
            var present: [String: Int] = [:]
            for board in boards {
                let words = board.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                guard words.count == 6 else { continue }
                for element in words[3].split(separator: ",") { present["tags \(element)", default: 0] += 1 }
                for element in words[5].split(separator: ",") { present["cards \(element)", default: 0] += 1 }
            }
            return expected.compactMap { element, count in
                if element.hasPrefix("cards "), deletedEver.contains(String(element.dropFirst(6))) { return nil }
                let found = present[element, default: 0]
                return found < count ? "\(element) (\(found) of \(count))" : nil
            }
            .sorted()
        }

        func appliedKeys(_ harness: ServerHarness) async throws -> Set<String> {
            let rows = try await harness.client.query(
                """
                SELECT key FROM applied_changes JOIN spaces ON spaces.id = applied_changes.space_id
                WHERE spaces.name = \(harness.space)
                """)
            var keys = Set<String>()
            for try await key in rows.decode(String.self) { keys.insert(key) }
            return keys
        }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
