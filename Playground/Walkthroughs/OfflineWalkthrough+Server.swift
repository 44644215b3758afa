import Foundation
import LiveObjects
import LiveObjectsSync
import Persistence

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `offline --server URL --token T [--space S]`: the same cards, through a real sync server
/// (`liveobjects-sync-server`, see the README's "Running a sync server"): a phone whose realm is
/// kept in a file works offline, syncs when the network is back, is restarted and sends nothing
/// again; a tablet pulls the cards and edits one; the phone pulls the edit.
extension OfflineWalkthrough {
    static var options: String? {
        "--server URL --token TOKEN [--space NAME]   (against a real sync server)\n"
            + "  offline --write-schema FILE   (writes the cards' schema, for the server's --schema)\n"
            + "  offline --server URL --user NAME:TOKEN --user NAME:TOKEN [--space NAME]   (a team under rules)\n"
            + "  offline --write-team FOLDER   (writes the team's schema.json and rules.json)"
    }

    static func run(_ narrator: Narrator, options: [String]) async throws {
        var values: [String: String] = [:]
        var users: [(name: String, token: String)] = []
        var rest = options[...]
        while let option = rest.popFirst() {
            guard ["--server", "--token", "--space", "--write-schema", "--user", "--write-team"].contains(option) else {
                throw UsageError(message: "unknown option '\(option)' of offline; it takes \(Self.options!)")
            }
            guard let value = rest.popFirst() else { throw UsageError(message: "\(option) needs a value") }
            if option == "--user" {
                guard let colon = value.firstIndex(of: ":") else {
                    throw UsageError(message: "--user takes NAME:TOKEN")
                }
                users.append((String(value[..<colon]), String(value[value.index(after: colon)...])))
            } else {
                values[option] = value
            }
        }
        if let folder = values["--write-team"] {
            guard values.count == 1, users.isEmpty else {
                throw UsageError(message: "--write-team takes no other option")
            }
            try await writeTeam(to: URL(fileURLWithPath: folder))
            narrator.say("Wrote schema.json and rules.json of TeamBoard and TeamTask to \(folder).")
            return
        }
        if let file = values["--write-schema"] {
            guard values.count == 1 else { throw UsageError(message: "--write-schema takes no other option") }
            try await writeSchema(to: URL(fileURLWithPath: file))
            narrator.say("Wrote the schema of Shop and DiscountCard to \(file).")
            return
        }
        guard let server = values["--server"].flatMap(URL.init(string:)), server.scheme != nil else {
            throw UsageError(message: "offline needs --server URL (such as http://127.0.0.1:8080)")
        }
        if !users.isEmpty {
            try await runTeam(narrator, server: server, space: values["--space"] ?? "team", users: users)
            return
        }
        guard let token = values["--token"] else { throw UsageError(message: "offline needs --token TOKEN") }
        try await runAgainstServer(narrator, server: server, token: token, space: values["--space"] ?? "team")
    }

    /// Writes the schema of the cards' model, as an app does for its server's space
    /// (`run-local-server.sh --schema FILE`, or `liveobjects-sync-server space schema`).
    static func writeSchema(to file: URL) async throws {
        let types: [any SyncableObject.Type] = [Shop.self, DiscountCard.self]
        let realm = try await Realm.open(Realm.Configuration(identifier: "schema-\(UUID())", objectTypes: types))
        try SyncSchema(realm.schema, types: types).jsonData().write(to: file, options: .atomic)
    }

    /// A transport that can be cut off, as a phone without network.
    actor Network: SyncTransport {
        let transport: HTTPSyncTransport
        var isUp = false

        init(_ transport: HTTPSyncTransport) { self.transport = transport }

        func setUp(_ up: Bool) { isUp = up }

        func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
            guard isUp else { throw CardServer.Unreachable() }
            return try await transport.push(changes)
        }

        func pull(after cursor: String?) async throws -> SyncPull {
            guard isUp else { throw CardServer.Unreachable() }
            return try await transport.pull(after: cursor)
        }
    }

    static func runAgainstServer(_ narrator: Narrator, server: URL, token: String, space: String) async throws {
        narrator.step("Open the phone's realm in a file, and a sync engine talking HTTP to \(server.absoluteString).")
        narrator.code(
            """
            var configuration = Realm.Configuration(file: url, objectTypes: [Shop.self, DiscountCard.self])
            configuration.keepsHistory = true
            let transport = HTTPSyncTransport(baseURL: server, space: "\(space)", token: token)
            let engine = try await SyncEngine(realm: realm, transport: transport, types: [Shop.self, DiscountCard.self])
            """)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("playground-offline-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("phone.liveobjects")
        var configuration = Realm.Configuration(file: file, objectTypes: [Shop.self, DiscountCard.self])
        configuration.keepsHistory = true
        let http = HTTPSyncTransport(baseURL: server, space: space, token: token)
        let types: [any SyncableObject.Type] = [Shop.self, DiscountCard.self]
        let quick = SyncEngine.Configuration(maxAttempts: 2, initialBackoff: .milliseconds(200))
        var phone: Realm? = try await Realm.open(configuration)
        let network = Network(http)
        var engine = try await SyncEngine(realm: phone!, transport: network, types: types, configuration: quick)
        // The server keeps what earlier runs sent: this run's ids are its own.
        let run = String(UUID().uuidString.prefix(8)).lowercased()
        narrator.say("This run's local ids end with \(run), so that runs do not meet on the server.")

        narrator.step("Offline: add a shop and two cards; a sync attempt fails and loses nothing.")
        try await phone!.write { realm in
            let shop = try realm.create(Shop.self, value: ["id": "shop-\(run)", "name": "Пятёрочка"])
            _ = try realm.create(
                DiscountCard.self,
                value: [
                    "id": "card-1-\(run)", "shop": shop, "number": "7700 1234", "label": "Groceries", "discount": 5,
                ])
            _ = try realm.create(
                DiscountCard.self,
                value: ["id": "card-2-\(run)", "shop": shop, "number": "2000 9876", "label": "Weekend", "discount": 3])
        }
        guard try await engine.sync().pullFailure != nil else {
            throw CheckFailure(message: "sync should report a failed pull while the phone is offline")
        }
        narrator.say("engine.sync() reported a failed pull: no network")
        try narrator.expect(
            await engine.status(of: cardID("card-1-\(run)")), .pending, "card-1 is pending")

        narrator.step("The network is back: sync through the server.")
        await network.setUp(true)
        let report = try await engine.sync()
        narrator.say("pushed \(report.pushed), pulled \(report.pulled), failed \(report.failed.count)")
        try narrator.expect(report.pushed, 3, "the shop and both cards were pushed")
        try narrator.check(report.failed.isEmpty, "nothing failed", detail: "\(report.rejections)")
        let afterSync = try await cards(phone!)
        for card in afterSync { narrator.say("  \(card.id)  \(card.label)  server id \(card.serverID ?? "-")") }
        try narrator.check(afterSync.allSatisfy { $0.serverID != nil }, "every card has its server id")

        narrator.step("Restart the phone: close the realm and open it again with a new engine.")
        narrator.say(
            """
            The engine keeps its state in \(file.lastPathComponent).sync beside the realm: the pull
            cursor and what the server acknowledged. A restarted app sends nothing again.
            """)
        try await phone!.close()
        phone = nil
        phone = try await Realm.open(configuration)
        engine = try await SyncEngine(realm: phone!, transport: http, types: types, configuration: quick)
        let again = try await engine.sync()
        narrator.say("after the restart: pushed \(again.pushed), pulled \(again.pulled)")
        try narrator.expect(again.pushed, 0, "nothing was sent again")

        narrator.step("A tablet of the same user pulls the cards, and raises card-1's discount.")
        var tabletConfiguration = Realm.Configuration(
            identifier: "playground.offline.tablet.\(run)", objectTypes: [Shop.self, DiscountCard.self])
        tabletConfiguration.keepsHistory = true
        let tablet = try await Realm.open(tabletConfiguration)
        let tabletEngine = try await SyncEngine(realm: tablet, transport: http, types: types, configuration: quick)
        try await tabletEngine.sync()
        let onTablet = try await cards(tablet).filter { $0.id.hasSuffix(run) }
        try narrator.expect(onTablet.map(\.id), ["card-1-\(run)", "card-2-\(run)"], "the tablet has both cards")
        try await tablet.write { realm in
            realm.object(ofType: DiscountCard.self, forPrimaryKey: "card-1-\(run)")?.discount = 15
        }
        try narrator.expect(try await tabletEngine.sync().pushed, 1, "the tablet pushed its change")

        narrator.step("The phone pulls the tablet's change.")
        try await engine.sync()
        let card1 = try await card(phone!, "card-1-\(run)")
        narrator.say("card-1 on the phone: \(card1?.label ?? "-"), discount \(card1?.discount ?? 0)%")
        try narrator.expect(card1?.discount, 15, "the phone has the tablet's discount")
        let phoneCards = try await cards(phone!).filter { $0.id.hasSuffix(run) }.map {
            "\($0.id) \($0.label) \($0.discount) \($0.serverID ?? "-")"
        }
        let tabletCards = try await cards(tablet).filter { $0.id.hasSuffix(run) }
            .map { "\($0.id) \($0.label) \($0.discount) \($0.serverID ?? "-")" }
        try narrator.expect(phoneCards, tabletCards, "the phone and the tablet agree, server ids included")
        try await phone!.close()
    }
}
