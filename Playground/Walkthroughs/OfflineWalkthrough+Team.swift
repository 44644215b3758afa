import Foundation
import LiveObjects
import LiveObjectsSync

/// A board shared by its members (the team scenario of `offline`).
final class TeamBoard: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var serverID: String?
    @Persisted var name = ""
    @Persisted var owner = ""
    @Persisted var members: List<String>
}

/// A task on a board.
final class TeamTask: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var serverID: String?
    @Persisted var title = ""
    @Persisted var owner = ""
    @Persisted var done = false
    @Persisted var board: TeamBoard?
}

/// `offline --server URL --user ann:TOKEN --user bob:TOKEN`: two users of a team space with read
/// and write rules, each device syncing by its own subscriptions (README, "Running a sync
/// server"). The space's schema and rules come from `offline --write-team FOLDER`.
extension OfflineWalkthrough {
    static let teamTypes: [any SyncableObject.Type] = [TeamBoard.self, TeamTask.self]

    /// Who reads and changes what: a board its owner and members, a task its owner and the
    /// members of its board.
    static let teamRules = """
        {"TeamBoard": {"read": "owner == $user OR $user IN members", "write": "owner == $user"},
         "TeamTask": {"read": "owner == $user OR ANY board.members == $user",
                      "write": "owner == $user OR ANY board.members == $user"}}
        """

    /// Writes `schema.json` and `rules.json` of the team space into a folder.
    static func writeTeam(to folder: URL) async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let realm = try await Realm.open(
            Realm.Configuration(identifier: "team-schema-\(UUID())", objectTypes: teamTypes.map { $0 as Object.Type }))
        try SyncSchema(realm.schema, types: teamTypes).jsonData().write(
            to: folder.appendingPathComponent("schema.json"), options: .atomic)
        try Data(teamRules.utf8).write(to: folder.appendingPathComponent("rules.json"), options: .atomic)
    }

    /// A user's device: a realm in memory and its engine.
    struct TeamDevice {
        let name: String
        let realm: Realm
        let engine: SyncEngine

        init(_ name: String, token: String, server: URL, space: String) async throws {
            self.name = name
            var configuration = Realm.Configuration(
                identifier: "playground.team.\(name).\(UUID())", objectTypes: teamTypes.map { $0 as Object.Type })
            configuration.keepsHistory = true
            realm = try await Realm.open(configuration)
            engine = try await SyncEngine(
                realm: realm, transport: HTTPSyncTransport(baseURL: server, space: space, token: token),
                types: teamTypes)
        }

        /// The titles of the tasks and the names of the boards on the device, sorted.
        func contents(_ run: String) async throws -> [String] {
            try await realm.read { realm in
                (realm.objects(TeamBoard.self).map { "board \($0.name)" }
                    + realm.objects(TeamTask.self).map { "task \($0.title)" })
                    .filter { $0.hasSuffix(run) }.map { String($0.dropLast(run.count + 1)) }.sorted()
            }
        }
    }

    static func runTeam(
        _ narrator: Narrator, server: URL, space: String, users: [(name: String, token: String)]
    ) async throws {
        guard users.count == 2 else { throw UsageError(message: "the team scenario takes two --user NAME:TOKEN") }
        let run = String(UUID().uuidString.prefix(6)).lowercased()
        let (annName, bobName) = (users[0].name, users[1].name)
        narrator.step("Two users' devices, \(annName)'s and \(bobName)'s, each syncing by its own queries.")
        narrator.code(
            """
            try await ann.engine.subscribe(SyncSubscription(
                name: "open tasks", TeamTask.self, where: "done == false AND ANY board.members == $user"))
            try await bob.engine.subscribe(SyncSubscription(name: "my tasks", TeamTask.self, where: "owner == $user"))
            """)
        let ann = try await TeamDevice(annName, token: users[0].token, server: server, space: space)
        let bob = try await TeamDevice(bobName, token: users[1].token, server: server, space: space)
        try await ann.engine.subscribe(
            SyncSubscription(name: "open tasks", TeamTask.self, where: "done == false AND ANY board.members == $user"))
        try await bob.engine.subscribe(SyncSubscription(name: "my tasks", TeamTask.self, where: "owner == $user"))
        narrator.say("This run's names end with \(run), so that runs do not meet on the server.")

        narrator.step("\(annName) makes a board for both, with a task for each and one done.")
        try await ann.realm.write { realm in
            let board = try realm.create(
                TeamBoard.self,
                value: [
                    "id": "kitchen-\(run)", "name": "kitchen \(run)", "owner": annName, "members": [annName, bobName],
                ])
            for (id, owner, done) in [("paint", annName, false), ("tap", bobName, false), ("bin", annName, true)] {
                let task = try realm.create(
                    TeamTask.self,
                    value: ["id": "\(id)-\(run)", "title": "\(id) \(run)", "owner": owner, "done": done])
                task.board = board
            }
        }
        try await syncBoth(ann, bob, narrator)
        try narrator.expect(
            try await ann.contents(run), ["board kitchen", "task paint", "task tap"],
            "\(annName)'s open tasks, with their board (the task done left her device)")
        try narrator.expect(
            try await bob.contents(run), ["board kitchen", "task tap"], "\(bobName)'s own task, with its board")

        narrator.step("\(bobName) fixes the tap: it leaves \(annName)'s open tasks, not his own.")
        try await bob.realm.write { realm in
            realm.object(ofType: TeamTask.self, forPrimaryKey: "tap-\(run)")?.done = true
        }
        try await syncBoth(ann, bob, narrator)
        try narrator.expect(
            try await ann.contents(run), ["board kitchen", "task paint"], "\(annName) has one open task")
        try narrator.expect(try await bob.contents(run), ["board kitchen", "task tap"], "\(bobName) still has his")

        narrator.step("\(bobName) may not rename \(annName)'s board: the rules refuse that change alone.")
        try await bob.realm.write { realm in
            realm.object(ofType: TeamBoard.self, forPrimaryKey: "kitchen-\(run)")?.name = "mine \(run)"
        }
        let refused = try await bob.engine.sync()
        let rejection = refused.rejections.values.first
        narrator.say("the server answered: \(rejection.map { "\($0.code): \($0.message)" } ?? "nothing")")
        try narrator.check(rejection?.code == .forbidden, "the rename was refused as forbidden")
        try await bob.engine.discard(SyncObjectID(typeName: "TeamBoard", primaryKey: .string("kitchen-\(run)")))

        narrator.step("\(annName) takes \(bobName) off the board: the rules no longer let him read it.")
        try await ann.realm.write { realm in
            let members = realm.object(ofType: TeamBoard.self, forPrimaryKey: "kitchen-\(run)")!.members
            members.removeAll()
            members.append(annName)
        }
        try await syncBoth(ann, bob, narrator)
        try narrator.expect(
            try await bob.contents(run), ["task tap"], "\(bobName) keeps his task (his own), without the board")

        narrator.step("\(annName) changes her subscriptions at run time: her boards instead of her tasks.")
        try await ann.engine.setSubscriptions([
            SyncSubscription(name: "my boards", TeamBoard.self, where: "owner == $user")
        ])
        let progress = await ann.engine.progressUpdates()
        let report = try await ann.engine.sync()
        narrator.say("removed from the device: \(report.removedFromView); the server keeps them")
        try narrator.expect(try await ann.contents(run), ["board kitchen"], "\(annName) has her board only")
        var last: SyncProgress?
        for await value in progress {
            last = value
            if value.isComplete { break }
        }
        narrator.say("download: \(Int((last?.fractionCompleted ?? 0) * 100)) %, \(last?.pulledObjects ?? 0) objects")
        try narrator.check(last?.isComplete == true, "the download completed")
    }

    private static func syncBoth(_ ann: TeamDevice, _ bob: TeamDevice, _ narrator: Narrator) async throws {
        for device in [ann, bob, ann] {
            let report = try await device.engine.sync()
            try narrator.check(
                report.pullFailure == nil && report.failed.isEmpty, "\(device.name)'s sync went through",
                detail: "\(report)")
        }
    }
}
