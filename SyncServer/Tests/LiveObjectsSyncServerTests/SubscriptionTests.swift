import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import Persistence
import Testing

@testable import LiveObjectsSyncServer

/// A project of a team, read by its owner and members.
final class Project: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var serverID: String?
    @Persisted var name = ""
    @Persisted var owner = ""
    @Persisted var members: List<String>
}

/// A chore on a project, read by its owner and the project's members.
final class Chore: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var serverID: String?
    @Persisted var title = ""
    @Persisted var owner = ""
    @Persisted var done = false
    @Persisted var project: Project?
}

/// Sync by query under rules (docs/SYNC-PROTOCOL.md, "Subscriptions"): devices of several users
/// subscribe to overlapping queries, and after every step each device holds exactly the objects
/// that its subscriptions match and its user may read, with the projects they link to (that
/// the user may read), as a plain evaluation over an admin's copy of the space says.
@Suite("Sync server subscriptions", .serialized)
struct SubscriptionTests {
    static let schema = SpaceSchema(types: [
        .init(
            name: "Chore", primaryKey: .init(name: "id", type: "string"),
            properties: [
                .init(name: "done", type: "bool"), .init(name: "owner", type: "string"),
                .init(name: "project", type: "link", isOptional: true, target: "Project"),
                .init(name: "title", type: "string"),
            ]),
        .init(
            name: "Project", primaryKey: .init(name: "id", type: "string"),
            properties: [
                .init(name: "members", type: "string", isList: true), .init(name: "name", type: "string"),
                .init(name: "owner", type: "string"),
            ]),
    ])

    static let rules = """
        {"Project": {"read": "owner == $user OR $user IN members", "write": "owner == $user"},
         "Chore": {"read": "owner == $user OR ANY project.members == $user",
                   "write": "owner == $user OR ANY project.members == $user"}}
        """

    /// A plain copy of the space, read from an admin's device.
    struct Space {
        var projects: [String: (owner: String, members: [String], name: String)] = [:]
        var chores: [String: (owner: String, done: Bool, project: String?)] = [:]

        func mayRead(project id: String, _ user: String) -> Bool {
            guard let project = projects[id] else { return false }
            return project.owner == user || project.members.contains(user)
        }

        func mayRead(chore id: String, _ user: String) -> Bool {
            guard let chore = chores[id] else { return false }
            return chore.owner == user || (chore.project.flatMap { projects[$0] }?.members.contains(user) ?? false)
        }
    }

    /// A subscription with the same query in plain Swift.
    struct Query {
        var subscription: SyncSubscription
        var projects: (@Sendable (Space, String, String) -> Bool)?
        var chores: (@Sendable (Space, String, String) -> Bool)?
    }

    /// What a user's device holds under its queries: `Type/id`.
    static func expected(_ space: Space, user: String, _ queries: [Query]?) -> Set<String> {
        var kept = Set<String>()
        for id in space.projects.keys where space.mayRead(project: id, user) {
            if queries?.contains(where: { $0.projects?(space, id, user) == true }) ?? true {
                kept.insert("Project/\(id)")
            }
        }
        for (id, chore) in space.chores where space.mayRead(chore: id, user) {
            guard queries?.contains(where: { $0.chores?(space, id, user) == true }) ?? true else { continue }
            kept.insert("Chore/\(id)")
            if let project = chore.project, space.mayRead(project: project, user) { kept.insert("Project/\(project)") }
        }
        return kept
    }

    /// One user's device: a realm in a file, its engine, and the queries it syncs by.
    final class Device: @unchecked Sendable {
        let user: String
        let url: URL
        let transport: HTTPSyncTransport
        var realm: Realm
        var engine: SyncEngine
        var queries: [Query]?

        init(user: String, url: URL, transport: HTTPSyncTransport) async throws {
            self.user = user
            self.url = url
            self.transport = transport
            (realm, engine) = try await Self.open(url, transport)
        }

        static func open(_ url: URL, _ transport: HTTPSyncTransport) async throws -> (Realm, SyncEngine) {
            var configuration = Realm.Configuration(file: url, objectTypes: [Project.self, Chore.self])
            configuration.keepsHistory = true
            let realm = try await Realm.open(configuration)
            let engine = try await SyncEngine(realm: realm, transport: transport, types: [Project.self, Chore.self])
            return (realm, engine)
        }

        /// Closes the realm and opens it again with a new engine, as an app started again.
        func reopen() async throws {
            try await realm.close()
            (realm, engine) = try await Self.open(url, transport)
        }

        func subscribe(_ queries: [Query]?) async throws {
            self.queries = queries
            try await engine.setSubscriptions(queries?.map(\.subscription))
        }

        func contents() async throws -> Set<String> {
            try await realm.read { realm in
                Set(realm.objects(Project.self).map { "Project/\($0.id)" })
                    .union(realm.objects(Chore.self).map { "Chore/\($0.id)" })
            }
        }

        func space() async throws -> Space {
            try await realm.read { realm in
                var space = Space()
                for project in realm.objects(Project.self) {
                    space.projects[project.id] = (project.owner, Array(project.members), project.name)
                }
                for chore in realm.objects(Chore.self) {
                    space.chores[chore.id] = (chore.owner, chore.done, chore.project?.id)
                }
                return space
            }
        }

        func write(_ body: @escaping @Sendable (isolated Realm) throws -> Void) async throws {
            try await realm.write { try body($0) }
        }
    }

    static let openChores = Query(
        subscription: SyncSubscription(
            name: "open chores", Chore.self, where: "done == false AND ANY project.members == $user"),
        chores: { space, id, user in
            let chore = space.chores[id]!
            return !chore.done && (chore.project.flatMap { space.projects[$0] }?.members.contains(user) ?? false)
        })
    static let myChores = Query(
        subscription: SyncSubscription(name: "my chores", Chore.self, where: "owner == $user"),
        chores: { space, id, user in space.chores[id]!.owner == user })
    static let myProjects = Query(
        subscription: SyncSubscription(name: "my projects", Project.self, where: "owner == $user"),
        projects: { space, id, user in space.projects[id]!.owner == user })
    /// Through a link no rule reads: a rename of a project moves its chores in or out.
    static let choresOfA = Query(
        subscription: SyncSubscription(name: "chores of a", Chore.self, where: "project.name == 'a'"),
        chores: { space, id, _ in space.chores[id]!.project.flatMap { space.projects[$0] }?.name == "a" })
    static let memberProjects = Query(
        subscription: SyncSubscription(name: "member projects", Project.self, where: "$user IN members"),
        projects: { space, id, user in space.projects[id]!.members.contains(user) })

    /// A space with the schema and rules, and the devices of ann, bob and cat (writers) and eve
    /// (an admin), each with a realm in a file of `directory`.
    static func team(_ server: ServerHarness, _ directory: URL) async throws -> [Device] {
        let space = server.space
        try await server.withStore { store in
            _ = try await store.setSchema(of: space, to: Self.schema)
            try await store.setRules(of: space, to: try SpaceRules.parse(Data(Self.rules.utf8)))
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var devices: [Device] = []
        for (name, role) in [("ann", Role.writer), ("bob", .writer), ("cat", .writer), ("eve", .admin)] {
            let token = try await server.user(name, role)
            devices.append(
                try await Device(
                    user: "\(name)-\(space)", url: directory.appendingPathComponent("\(name).json"),
                    transport: server.transport(token)))
        }
        return devices
    }

    /// Syncs every device twice over, then checks that each holds exactly what it should (the
    /// admin, the last device, everything).
    static func check(_ devices: [Device], _ step: @autoclosure () -> String) async throws {
        for _ in 0..<2 {
            for device in devices {
                let report = try await device.engine.sync()
                #expect(report.pullFailure == nil, "\(step()): \(device.user): \(report)")
            }
        }
        let eve = devices.last!
        let whole = try await eve.space()
        for device in devices {
            let expected =
                device === eve
                ? Set(whole.projects.keys.map { "Project/\($0)" } + whole.chores.keys.map { "Chore/\($0)" })
                : Self.expected(whole, user: device.user, device.queries)
            #expect(try await device.contents() == expected, "\(step()): \(device.user)")
        }
    }

    @Test func devicesHoldExactlyWhatTheirSubscriptionsAndRulesAllow() async throws {
        let server = try await ServerHarness.start(types: ["Chore", "Project"])
        defer { Task { await server.stop() } }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subscriptions-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let devices = try await Self.team(server, directory)
        let (ann, bob, cat, eve) = (devices[0], devices[1], devices[2], devices[3])
        func check(_ step: String) async throws { try await Self.check(devices, step) }
        let (a, b, c) = (ann.user, bob.user, cat.user)
        try await ann.write { realm in
            let p1 = try realm.create(
                Project.self, value: ["id": "p1", "name": "garden", "owner": a, "members": [a, b]])
            let p2 = try realm.create(Project.self, value: ["id": "p2", "name": "attic", "owner": a, "members": [a]])
            try realm.create(Chore.self, value: ["id": "c1", "title": "weed", "owner": a, "project": p1])
            try realm.create(Chore.self, value: ["id": "c2", "title": "mow", "owner": a, "done": true, "project": p1])
            try realm.create(Chore.self, value: ["id": "c3", "title": "sort", "owner": a, "project": p2])
        }
        _ = try await ann.engine.sync()
        try await check("ann's projects, everyone syncing the whole space")
        try await bob.write { realm in
            let p3 = try realm.create(
                Project.self, value: ["id": "p3", "name": "garage", "owner": b, "members": [b, c]])
            try realm.create(Chore.self, value: ["id": "c4", "title": "paint", "owner": b, "project": p3])
            let p1 = realm.object(ofType: Project.self, forPrimaryKey: "p1")!
            try realm.create(Chore.self, value: ["id": "c5", "title": "water", "owner": b, "project": p1])
        }
        _ = try await bob.engine.sync()
        try await check("bob's project")

        // Subscriptions: the chores that leave a device take no project they alone linked to.
        try await ann.subscribe([Self.openChores])
        try await bob.subscribe([Self.myChores])
        try await cat.subscribe([Self.memberProjects])
        try await check("subscribed")
        #expect(try await ann.contents() == ["Chore/c1", "Chore/c3", "Chore/c5", "Project/p1", "Project/p2"])
        #expect(try await bob.contents() == ["Chore/c4", "Chore/c5", "Project/p1", "Project/p3"])
        #expect(try await cat.contents() == ["Project/p3"])
        let progress = await ann.engine.downloadProgress
        #expect(progress?.isComplete == true && progress?.fractionCompleted == 1)

        // Bob may not rename Ann's project p1 (on his device for c5's link); he discards the
        // refused change, and his engine pulls from the beginning for p1's current state (a walk,
        // which sends no removals). Then he leaves p1: he keeps his chore c5, without p1.
        try await bob.write { realm in realm.object(ofType: Project.self, forPrimaryKey: "p1")!.name = "mine" }
        let refused = try await bob.engine.sync()
        #expect(refused.rejections.values.map(\.code) == [.forbidden])
        try await bob.engine.discard(SyncObjectID(typeName: "Project", primaryKey: .string("p1")))
        try await eve.write { realm in
            let members = realm.object(ofType: Project.self, forPrimaryKey: "p1")!.members
            members.removeAll()
            members.append(a)
        }
        _ = try await eve.engine.sync()
        try await check("bob off p1")
        #expect(try await bob.contents() == ["Chore/c4", "Chore/c5", "Project/p3"])

        // A chore done leaves the open chores; one moved to a project Ann is not in leaves too,
        // and with it the project no chore of hers links to any more.
        try await ann.write { realm in realm.object(ofType: Chore.self, forPrimaryKey: "c1")!.done = true }
        try await check("c1 done")
        try await bob.write { realm in
            realm.object(ofType: Chore.self, forPrimaryKey: "c5")!.project =
                realm.object(ofType: Project.self, forPrimaryKey: "p3")
        }
        try await check("c5 moved to p3")
        #expect(try await ann.contents() == ["Chore/c3", "Project/p2"])

        // A project's members change what the rules let read: Cat joins p1 and sees it; Bob
        // leaves it, and his own chores stay. (Ann's device no longer has p1: the admin edits.)
        try await eve.write { realm in
            let members = realm.object(ofType: Project.self, forPrimaryKey: "p1")!.members
            members.removeAll()
            members.append(objectsIn: [a, c])
        }
        try await check("p1's members changed")
        #expect(try await cat.contents() == ["Project/p1", "Project/p3"])

        // Subscriptions changed at run time, then kept across a restart.
        try await ann.subscribe([Self.myProjects])
        try await check("ann's projects only")
        #expect(try await ann.contents() == ["Project/p1", "Project/p2"])
        try await ann.reopen()
        #expect(await ann.engine.subscriptions == [Self.myProjects.subscription])
        try await ann.subscribe([Self.myProjects, Self.memberProjects])
        try await bob.write { realm in
            realm.object(ofType: Project.self, forPrimaryKey: "p3")!.members.append(a)
        }
        try await check("after a restart, member projects too")
        #expect(try await ann.contents() == ["Project/p1", "Project/p2", "Project/p3"])

        // A query through a link no rule reads: renaming the project moves its chores.
        try await bob.subscribe([Self.myChores, Self.choresOfA])
        try await check("bob's chores of a")
        #expect(try await bob.contents() == ["Chore/c4", "Chore/c5", "Project/p3"])
        try await bob.write { realm in realm.object(ofType: Project.self, forPrimaryKey: "p1")?.name = "a" }
        try await eve.write { realm in realm.object(ofType: Project.self, forPrimaryKey: "p3")!.name = "a" }
        try await check("p3 renamed a")
        #expect(try await bob.contents() == ["Chore/c4", "Chore/c5", "Project/p3"])
        try await eve.write { realm in realm.object(ofType: Project.self, forPrimaryKey: "p2")!.name = "a" }
        try await eve.write { realm in
            let chore = try realm.create(Chore.self, value: ["id": "c6", "title": "fix", "owner": a])
            chore.project = realm.object(ofType: Project.self, forPrimaryKey: "p3")
        }
        try await check("c6 on p3")
        #expect(try await bob.contents() == ["Chore/c4", "Chore/c5", "Chore/c6", "Project/p3"])
        try await eve.write { realm in realm.object(ofType: Project.self, forPrimaryKey: "p3")!.name = "b" }
        try await check("p3 renamed b")
        #expect(try await bob.contents() == ["Chore/c4", "Chore/c5", "Project/p3"])

        // Back to the whole space.
        try await cat.subscribe(nil)
        try await check("cat syncs the whole space again")
    }

    @Test func aSubscriptionThatDoesNotFitTheSchemaFailsThePull() async throws {
        let server = try await ServerHarness.start(types: ["Chore", "Project"])
        defer { Task { await server.stop() } }
        let space = server.space
        try await server.withStore { store in _ = try await store.setSchema(of: space, to: Self.schema) }
        let transport = server.transport(try await server.user("ann", .writer))
        for (query, message) in [
            ("colour == 'red'", "Chore has no property colour"),
            ("project.members == $user", "write ANY"),
            ("done == ", "column"),
        ] {
            await #expect {
                _ = try await transport.pull(
                    after: nil, subscriptions: [SyncSubscription(name: "q", typeName: "Chore", where: query)])
            } throws: { error in
                guard let error = error as? SyncHTTPError else { return false }
                return error.code == .badRequest && error.message.contains(message)
            }
        }
        await #expect(throws: SyncHTTPError.self) {
            _ = try await transport.pull(after: nil, subscriptions: [SyncSubscription(name: "q", typeName: "Nothing")])
        }
        // A query with every character a query string would misread arrives whole.
        let page = try await transport.pull(
            after: nil,
            subscriptions: [
                SyncSubscription(name: "q", Chore.self, where: "title == 'a&b=c+d %20 \"e\"' OR done == true")
            ])
        #expect(page.changes.isEmpty)
    }

    /// Seeded random edits by three writers and random changes of their subscriptions, checked
    /// after every step. `SYNC_SUBSCRIPTIONS_SEED` replays a run; a failure prints the seed and
    /// the steps.
    @Test func randomEditsAndSubscriptionChangesKeepEveryDeviceExact() async throws {
        let seed =
            ProcessInfo.processInfo.environment["SYNC_SUBSCRIPTIONS_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...999_999)
        var random = SyncSeededGenerator(seed: seed)
        let server = try await ServerHarness.start(types: ["Chore", "Project"])
        defer { Task { await server.stop() } }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subscriptions-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let devices = try await Self.team(server, directory)
        let writers = Array(devices.prefix(3))
        let names = writers.map(\.user)
        let queries = [Self.openChores, Self.myChores, Self.myProjects, Self.memberProjects, Self.choresOfA]
        var log: [String] = []
        for step in 0..<40 {
            let writer = Int.random(in: 0..<3, using: &random)
            let device = writers[writer]
            let user = device.user
            let who = String(user.prefix(3))
            let roll = Int.random(in: 0..<10, using: &random)
            // Ids of the writer's own (a project or chore of another's it cannot change), but a
            // chore may go on anyone's project the device has.
            let projectID = "p\(Int.random(in: 0..<3, using: &random))\(Int.random(in: 0..<2, using: &random))"
            let ownProject = "p\(writer)\(Int.random(in: 0..<2, using: &random))"
            let choreID = "c\(writer)\(Int.random(in: 0..<3, using: &random))"
            let members = names.filter { _ in Bool.random(using: &random) }
            let projectName = Bool.random(using: &random) ? "a" : "b"
            let done = Bool.random(using: &random)
            if roll < 2 {
                let chosen = queries.filter { _ in Bool.random(using: &random) }
                let whole = Int.random(in: 0..<5, using: &random) == 0
                log.append(
                    "\(step): \(who) subscribes to \(whole ? "the whole space" : "\(chosen.map(\.subscription.name))")")
                try await device.subscribe(whole ? nil : chosen)
            } else if roll < 4 {
                // A project of its own: made, or its members changed.
                log.append(
                    "\(step): \(who) sets \(ownProject) to \(projectName), members \(members.map { $0.prefix(3) })")
                try await device.write { realm in
                    if let project = realm.object(ofType: Project.self, forPrimaryKey: ownProject) {
                        project.name = projectName
                        project.members.removeAll()
                        project.members.append(objectsIn: members)
                    } else {
                        try realm.create(
                            Project.self,
                            value: ["id": ownProject, "name": projectName, "owner": user, "members": members])
                    }
                }
            } else if roll < 9 {
                // A chore of its own: made, done or not, moved to a project the device has.
                log.append("\(step): \(who) sets \(choreID) done \(done), on \(projectID)")
                try await device.write { realm in
                    let project = realm.object(ofType: Project.self, forPrimaryKey: projectID)
                    if let chore = realm.object(ofType: Chore.self, forPrimaryKey: choreID) {
                        chore.done = done
                        chore.project = project
                    } else {
                        let chore = try realm.create(
                            Chore.self, value: ["id": choreID, "title": choreID, "owner": user, "done": done])
                        chore.project = project
                    }
                }
            } else {
                log.append("\(step): \(who) deletes \(choreID)")
                try await device.write { realm in
                    if let chore = realm.object(ofType: Chore.self, forPrimaryKey: choreID) {
                        try realm.delete(chore)
                    }
                }
            }
            try await Self.check(
                devices,
                "seed \(seed) (replay: SYNC_SUBSCRIPTIONS_SEED=\(seed)); steps:\n" + log.joined(separator: "\n"))
        }
    }
}
