import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import PostgresNIO
import Testing

@testable import LiveObjectsSyncServer

extension SyncTestDevice where Root == Panel {
    /// The panel's keepers, each as its holder's id (nil for a key with no holder).
    var keepers: [String: String?] {
        get async throws { try await read { $0?.keepers.dictionary.mapValues { $0?.id } ?? [:] } }
    }
}

/// Maps of objects (`Map<String, Holder?>`) through the real server (docs/SYNC-PROTOCOL.md,
/// "Maps"): merged per key, checked per change, a deleted target's key set to nil.
@Suite("Sync server maps of objects", .serialized)
struct ObjectMapTests {
    static let none: String? = nil

    /// A server whose space declares the panel's schema, and two devices with the holders h0,
    /// h1 and h2 and the panel p1 synced.
    func start(_ name: String = #function) async throws -> (ServerHarness, [PanelDevice], String) {
        let server = try await ServerHarness.start(name, types: ["Holder", "Panel"])
        try await server.declareSchema([Holder.self, Panel.self])
        var devices: [PanelDevice] = []
        for name in ["ann", "bob"] {
            devices.append(try await PanelDevice(name, server, token: try await server.user(name, .admin)))
        }
        try await devices[0].realm.write { r in
            for i in 0..<3 { _ = try r.create(Holder.self, value: ["id": "h\(i)", "name": "Holder \(i)"]) }
            _ = try r.create(Panel.self, value: ["id": "p1"])
        }
        for device in devices { try await device.checkedSync() }
        return (server, devices, try await server.user("raw", .admin))
    }

    /// The panel's keepers as the database holds them.
    func storedKeepers(_ server: ServerHarness) async throws -> String {
        let rows = try await server.client.query(
            """
            SELECT ("values" -> 'keepers')::text FROM objects
            WHERE type = 'Panel' AND space_id = (SELECT id FROM spaces WHERE name = \(server.space))
            """)
        for try await (text) in rows.decode(String.self) { return text }
        return ""
    }

    /// Pushes hand-made changes; returns the status and the answer.
    func push(_ server: ServerHarness, _ token: String, _ changes: [String]) async throws -> (Int, String) {
        let body = Data(#"{"changes": [\#(changes.joined(separator: ", "))]}"#.utf8)
        return try await server.raw("POST", "/v1/spaces/\(server.space)/push", token: token, body: body)
    }

    static func panelUpdate(_ key: String, _ keepers: String) -> String {
        #"{"key": "\#(key)", "object": {"type": "Panel", "id": {"string": "p1"}}, "kind": "update", "values": {"keepers": {"map": \#(keepers)}}}"#
    }

    static func ref(_ id: String, type: String = "Holder") -> String {
        #"{"ref": {"type": "\#(type)", "id": {"string": "\#(id)"}}}"#
    }

    @Test func twoDevicesSettingDifferentKeysBothKeepTheirs() async throws {
        let (server, devices, _) = try await start()
        defer { Task { await server.stop() } }
        let schema = try await server.withStore { try await $0.schema(of: server.space) }?.schema
        let keepers = schema?["Panel"]?.properties.first { $0.name == "keepers" }
        #expect(keepers?.type == "link" && keepers?.target == "Holder" && keepers?.isMap == true)
        try await devices[0].edit { panel, holder in panel.keepers["lead"] = holder("h0") }
        try await devices[1].edit { panel, holder in
            panel.keepers["spare"] = holder("h1")
            panel.keepers["none"] = .some(nil)
        }
        for _ in 0..<2 {
            for device in devices { try await device.checkedSync() }
        }
        let stored = try await storedKeepers(server)
        #expect(stored.hasPrefix(#"{"map": [["lead", {"ref": {"id": {"string": "h0"}"#), "\(stored)")
        #expect(stored.contains(#"["none", {"null": true}]"#) && stored.contains(#"["spare", {"ref": "#), "\(stored)")
        for device in devices {
            #expect(try await device.keepers == ["lead": "h0", "spare": "h1", "none": Self.none])
        }
        // One key both change: the later push wins.
        try await devices[0].edit { panel, holder in panel.keepers["lead"] = holder("h1") }
        try await devices[1].edit { panel, holder in panel.keepers["lead"] = holder("h2") }
        try await devices[0].checkedSync()
        try await devices[1].checkedSync()
        for device in devices { try await device.checkedSync() }
        for device in devices { #expect(try await device.keepers["lead"] == "h2") }
    }

    @Test func aDeletedTargetReachesTheOtherDeviceAsNil() async throws {
        let (server, devices, token) = try await start()
        defer { Task { await server.stop() } }
        try await devices[0].edit { panel, holder in
            panel.keepers["lead"] = holder("h0")
            panel.keepers["spare"] = holder("h1")
            panel.keepers["third"] = holder("h2")
        }
        for device in devices { try await device.checkedSync() }
        // Deleted on a device: its own map changes too.
        try await devices[0].realm.write { r in try r.delete(r.object(ofType: Holder.self, forPrimaryKey: "h0")!) }
        // Deleted by a push that does not touch the map: the server sets the key to nil.
        let delete = #"{"key": "gone", "object": {"type": "Holder", "id": {"string": "h1"}}, "kind": "delete"}"#
        let (status, answer) = try await push(server, token, [delete])
        #expect(status == 200 && answer.contains("applied"), "\(answer)")
        for _ in 0..<2 {
            for device in devices { try await device.checkedSync() }
        }
        let expected: [String: String?] = ["lead": Self.none, "spare": Self.none, "third": "h2"]
        for device in devices { #expect(try await device.keepers == expected) }
        let stored = try await storedKeepers(server)
        #expect(
            stored.hasPrefix(#"{"map": [["lead", {"null": true}], ["spare", {"null": true}], ["third", {"ref": "#),
            "\(stored)")
        // A map pushed afterwards naming the deleted holder keeps the key with nil.
        let (again, receipt) = try await push(
            server, token, [Self.panelUpdate("again", #"[["x", \#(Self.ref("h1"))]]"#)])
        #expect(again == 200 && receipt.contains("applied"), "\(receipt)")
        #expect(try await storedKeepers(server) == #"{"map": [["x", {"null": true}]]}"#)
    }

    @Test func aKeyWhoseTargetIsPushedAfterTheMapWaitsForIt() async throws {
        let (server, devices, token) = try await start()
        defer { Task { await server.stop() } }
        // A ref to an object the server does not have is stored, as for a plain link.
        let (status, answer) = try await push(
            server, token,
            [Self.panelUpdate("early", #"[["lead", \#(Self.ref("h9"))], ["spare", \#(Self.ref("h0"))]]"#)])
        #expect(status == 200 && answer.contains("applied"), "\(answer)")
        try await devices[1].checkedSync()
        #expect(try await devices[1].keepers == ["lead": Self.none, "spare": "h0"])
        let create =
            #"{"key": "h9", "object": {"type": "Holder", "id": {"string": "h9"}}, "kind": "create", "values": {"name": {"string": "Nine"}}}"#
        _ = try await push(server, token, [create])
        try await devices[1].checkedSync()
        #expect(try await devices[1].keepers == ["lead": "h9", "spare": "h0"])
    }

    @Test func aWaitingKeyOutlivesARestartOfTheEngine() async throws {
        let (server, _, token) = try await start()
        defer { Task { await server.stop() } }
        _ = try await push(server, token, [Self.panelUpdate("early", #"[["lead", \#(Self.ref("h9"))]]"#)])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("object-maps-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Realm.Configuration(
            file: directory.appendingPathComponent("panels.json"), objectTypes: [Holder.self, Panel.self])
        configuration.keepsHistory = true
        let deviceToken = try await server.user("cal", .admin)
        func engine(_ realm: Realm) async throws -> SyncEngine {
            try await SyncEngine(
                realm: realm, transport: server.transport(deviceToken), types: [Holder.self, Panel.self],
                configuration: .init(maxAttempts: 2, initialBackoff: .milliseconds(10)))
        }
        func keepers(_ realm: Realm) async throws -> [String: String?] {
            try await realm.read {
                $0.object(ofType: Panel.self, forPrimaryKey: "p1")?.keepers.dictionary.mapValues { $0?.id } ?? [:]
            }
        }
        var realm = try await Realm.open(configuration)
        var report = try await engine(realm).sync()
        #expect(report.pullFailure == nil && report.unreadable.isEmpty, "\(report)")
        #expect(try await keepers(realm) == ["lead": Self.none])
        try await realm.close()

        let create =
            #"{"key": "h9", "object": {"type": "Holder", "id": {"string": "h9"}}, "kind": "create", "values": {"name": {"string": "Nine"}}}"#
        _ = try await push(server, token, [create])
        realm = try await Realm.open(configuration)
        report = try await engine(realm).sync()
        #expect(report.pullFailure == nil && report.unreadable.isEmpty, "\(report)")
        #expect(try await keepers(realm) == ["lead": "h9"])
        try await realm.close()
    }

    @Test func aBadMapOfObjectsIsRefusedPerChangeAndTheRestOfThePushApplied() async throws {
        let (server, devices, token) = try await start()
        defer { Task { await server.stop() } }
        let cases: [(change: String, code: String, reason: String)] = [
            (
                Self.panelUpdate("other-type", #"[["a", \#(Self.ref("p1", type: "Panel"))]]"#), "invalidValue",
                "links to Panel, not Holder"
            ),
            (
                Self.panelUpdate("unknown-type", #"[["a", \#(Self.ref("g1", type: "Ghost"))]]"#), "invalidValue",
                "links to Ghost, not Holder"
            ),
            (
                Self.panelUpdate("twice", #"[["a", \#(Self.ref("h0"))], ["a", \#(Self.ref("h1"))]]"#), "invalidValue",
                "twice"
            ),
            (
                Self.panelUpdate("plain", #"[["a", {"string": "h0"}]]"#), "invalidValue",
                "not {\"ref\": …} or {\"null\": true}"
            ),
            (
                Self.panelUpdate("ref-null", #"[["a", {"ref": null}]]"#), "invalidValue",
                "not {\"ref\": …} or {\"null\": true}"
            ),
            (Self.panelUpdate("bad-key", #"[["a.b", \#(Self.ref("h0"))]]"#), "invalidValue", "holds a"),
            (
                Self.panelUpdate("bad-id", #"[["a", {"ref": {"type": "Holder", "id": {"int": 3}}}]]"#), "invalidValue",
                "the id linked to"
            ),
            (
                #"{"key": "into-settings", "object": {"type": "Panel", "id": {"string": "p1"}}, "kind": "update", "values": {"settings": {"map": [["a", \#(Self.ref("h0"))]]}}}"#,
                "invalidValue", "where the schema has string"
            ),
        ]
        let good = Self.panelUpdate("good", #"[["lead", \#(Self.ref("h2"))]]"#)
        let (status, answer) = try await push(server, token, cases.map(\.change) + [good])
        #expect(status == 200, "\(answer)")
        let receipts =
            try #require(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])["receipts"]
            as? [[String: Any]]
        #expect(receipts?.count == cases.count + 1, "\(answer)")
        for (receipt, expected) in zip(receipts ?? [], cases) {
            let error = receipt["error"] as? [String: Any]
            #expect(receipt["outcome"] as? String == "rejected", "\(expected.change): \(receipt)")
            #expect(error?["code"] as? String == expected.code, "\(expected.change): \(receipt)")
            #expect((error?["message"] as? String)?.contains(expected.reason) == true, "\(expected.change): \(receipt)")
        }
        #expect(receipts?.last?["outcome"] as? String == "applied", "\(answer)")
        try await devices[1].checkedSync()
        #expect(try await devices[1].keepers == ["lead": "h2"])
        // A pair that is not [key, value] is no value of the protocol: the whole push is refused.
        let (malformed, _) = try await push(server, token, [Self.panelUpdate("pair", #"[["a"]]"#)])
        #expect(malformed == 400)
        let (badRef, _) = try await push(
            server, token, [Self.panelUpdate("bad-ref", #"[["a", {"ref": {"type": "Holder"}}]]"#)])
        #expect(badRef == 400)
    }

    @Test func aSubscriptionKeepsTheObjectsItsMapsOfObjectsLinkTo() async throws {
        let (server, devices, _) = try await start()
        defer { Task { await server.stop() } }
        try await devices[0].edit { panel, holder in panel.keepers["lead"] = holder("h0") }
        try await devices[0].checkedSync()
        let reader = try await PanelDevice("cal", server, token: try await server.user("cal", .admin))
        try await reader.checkedSync()
        try await reader.engine.setSubscriptions([SyncSubscription(name: "panels", typeName: "Panel")])
        for _ in 0..<2 { try await reader.checkedSync() }
        let holders = try await reader.realm.read { $0.objects(Holder.self).map(\.id).sorted() }
        #expect(holders == ["h0"])
        #expect(try await reader.keepers == ["lead": "h0"])
    }

    @Test func aStringIDInAMapOfObjectsIsStoredInNFC() async throws {
        let (server, devices, token) = try await start()
        defer { Task { await server.stop() } }
        try await devices[0].realm.write { r in
            _ = try r.create(Holder.self, value: ["id": "caf\u{e9}", "name": "NFC"])
        }
        try await devices[0].checkedSync()
        let decomposed = #"[["a", {"ref": {"type": "Holder", "id": {"string": "cafe\u0301"}}}]]"#
        let (status, answer) = try await push(server, token, [Self.panelUpdate("nfd", decomposed)])
        #expect(status == 200 && answer.contains("applied"), "\(answer)")
        let stored = try await storedKeepers(server)
        #expect(!stored.unicodeScalars.contains("\u{301}") && stored.contains("caf\u{e9}"), "\(stored)")
        try await devices[1].checkedSync()
        #expect(try await devices[1].keepers == ["a": "caf\u{e9}"])
    }
}
