import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import Testing

@testable import LiveObjectsSyncServer

/// A team board of the rules' example, as an app declares it.
final class TeamBoard: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var serverID: String?
    @Persisted var owner = ""
    @Persisted var members: List<String>
}

/// A task on a team board.
final class TeamTask: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var serverID: String?
    @Persisted var owner = ""
    @Persisted var title = ""
    @Persisted var board: TeamBoard?
}

/// Rules through real devices: realms with engines over the HTTP transport. What a device holds
/// follows its user's rules as they change, and a change a rule refuses waits on the device.
@Suite("Sync server rules on devices", .serialized)
struct RulesEngineTests {
    static let types: [any SyncableObject.Type] = [TeamBoard.self, TeamTask.self]

    func device(_ server: ServerHarness, _ token: String) async throws -> (Realm, SyncEngine) {
        var configuration = Realm.Configuration(identifier: "rules-\(UUID())", objectTypes: Self.types)
        configuration.keepsHistory = true
        let realm = try await Realm.open(configuration)
        let engine = try await SyncEngine(
            realm: realm, transport: server.transport(token), types: Self.types,
            configuration: .init(maxAttempts: 2, initialBackoff: .milliseconds(10)))
        return (realm, engine)
    }

    func contents(_ realm: Realm) async throws -> [String] {
        try await realm.read { realm in
            (realm.objects(TeamBoard.self).map { "board \($0.id) \($0.members.count)" }
                + realm.objects(TeamTask.self).map { "task \($0.id) \($0.title)" }).sorted()
        }
    }

    /// The objects of a device, as `Type/id`.
    func ids(_ realm: Realm) async throws -> [String] {
        try await realm.read { realm in
            (realm.objects(TeamBoard.self).map { "TeamBoard/\($0.id)" }
                + realm.objects(TeamTask.self).map { "TeamTask/\($0.id)" }).sorted()
        }
    }

    /// What the read rules allow a user, by the client's own query engine: each rule run as a
    /// query (`$user` as an argument) over a device that holds everything (an admin's).
    func readableByQuery(_ realm: Realm, _ rules: [String: String], user: String) async throws -> [String] {
        try await realm.read { realm in
            var found: [String] = []
            for (type, rule) in rules {
                let text = rule.replacingOccurrences(of: "$user", with: "%@")
                let arguments = Array(
                    repeating: PropertyValue.string(user), count: rule.components(separatedBy: "$user").count - 1)
                found += try
                    (type == "TeamBoard"
                    ? realm.objects(TeamBoard.self).filter(text, arguments: arguments).map(\.id)
                    : realm.objects(TeamTask.self).filter(text, arguments: arguments).map(\.id)).map { "\(type)/\($0)" }
            }
            return found.sorted()
        }
    }

    @Test func devicesHoldWhatTheirRulesAllow() async throws {
        let server = try await ServerHarness.start(types: ["TeamBoard", "TeamTask"])
        defer { Task { await server.stop() } }
        let space = server.space
        let schema = try await ServerHarness.appSchema(Self.types)
        let rules = """
            {"TeamBoard": {"read": "owner == $user OR $user IN members", "write": "owner == $user"},
             "TeamTask": {"read": "ANY board.members == $user", "write": "ANY board.members == $user"}}
            """
        try await server.withStore { store in
            _ = try await store.setSchema(of: space, to: schema)
            try await store.setRules(of: space, to: try SpaceRules.parse(Data(rules.utf8)))
        }
        let (ann, bob) = ("ann-\(space)", "bob-\(space)")
        let (annRealm, annEngine) = try await device(server, try await server.user("ann", .writer))
        let (bobRealm, bobEngine) = try await device(server, try await server.user("bob", .writer))
        let (eveRealm, eveEngine) = try await device(server, try await server.user("eve", .admin))
        let readRules = [
            "TeamBoard": "owner == $user OR $user IN members", "TeamTask": "ANY board.members == $user",
        ]
        /// Every device against the client's query engine over the admin's device.
        func agree(_ step: String) async throws {
            _ = try await eveEngine.sync()
            for (user, realm) in [(ann, annRealm), (bob, bobRealm)] {
                _ = try await (user == ann ? annEngine : bobEngine).sync()
                let expected = try await readableByQuery(eveRealm, readRules, user: user)
                #expect(try await ids(realm) == expected, "\(step): \(user)")
            }
        }

        // Ann's board with Bob, a task on it: both devices have them; Bob edits her task.
        try await annRealm.write { realm in
            let board = try realm.create(TeamBoard.self, value: ["id": "b1", "owner": ann, "members": [ann, bob]])
            try realm.create(TeamTask.self, value: ["id": "t1", "owner": ann, "title": "plan", "board": board])
        }
        #expect(try await annEngine.sync().pushed == 2)
        _ = try await bobEngine.sync()
        #expect(try await contents(bobRealm) == ["board b1 2", "task t1 plan"])
        try await agree("shared")
        try await bobRealm.write { realm in realm.object(ofType: TeamTask.self, forPrimaryKey: "t1")!.title = "ship" }
        #expect(try await bobEngine.sync().pushed == 1)
        _ = try await annEngine.sync()
        #expect(try await contents(annRealm) == ["board b1 2", "task t1 ship"])

        // Bob may not change Ann's board: refused, kept on his device.
        try await bobRealm.write { realm in
            realm.object(ofType: TeamBoard.self, forPrimaryKey: "b1")!.owner = bob
        }
        let refused = try await bobEngine.sync()
        #expect(refused.rejections.values.map(\.code) == [.forbidden], "\(refused)")
        let waiting = try await bobEngine.rejectedChanges()
        #expect(waiting.count == 1)
        _ = try await annEngine.sync()
        #expect(try await annRealm.read { $0.object(ofType: TeamBoard.self, forPrimaryKey: "b1")!.owner } == ann)
        // Discarded, the server's board comes back to Bob's device.
        for change in waiting { try await bobEngine.discard(change.object) }
        _ = try await bobEngine.sync()
        #expect(try await bobRealm.read { $0.object(ofType: TeamBoard.self, forPrimaryKey: "b1")!.owner } == ann)

        // Ann takes Bob off the board: the board and its task leave his device.
        try await annRealm.write { realm in
            let board = realm.object(ofType: TeamBoard.self, forPrimaryKey: "b1")!
            board.members.removeAll()
            board.members.append(ann)
        }
        #expect(try await annEngine.sync().pushed == 1)
        _ = try await bobEngine.sync()
        #expect(try await contents(bobRealm) == [], "Bob reads nothing of Ann's any more")
        #expect(try await contents(annRealm) == ["board b1 1", "task t1 ship"])
        try await agree("Bob taken off")
    }
}
