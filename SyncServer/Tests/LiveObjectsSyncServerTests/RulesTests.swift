import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import Testing

@testable import LiveObjectsSyncServer

/// A team's boards under read and write rules (docs/SYNC-PROTOCOL.md, "Rules"): a board is read
/// by its owner and members and changed by its owner; a task is read by its owner and its
/// board's members, and changed by its board's members. Every device's state must be exactly
/// what the rules let its user read, as a plain evaluation over the server's objects says.
@Suite("Sync server rules", .serialized)
struct RulesTests {
    static let schema = SpaceSchema(types: [
        .init(
            name: "Board", primaryKey: .init(name: "id", type: "string"),
            properties: [
                .init(name: "members", type: "string", isList: true), .init(name: "name", type: "string"),
                .init(name: "owner", type: "string"),
            ]),
        .init(
            name: "TaskItem", primaryKey: .init(name: "id", type: "string"),
            properties: [
                .init(name: "board", type: "link", isOptional: true, target: "Board"),
                .init(name: "owner", type: "string"), .init(name: "title", type: "string"),
            ]),
    ])

    static let rules = """
        {"Board": {"read": "owner == $user OR $user IN members", "write": "owner == $user"},
         "TaskItem": {"read": "owner == $user OR ANY board.members == $user",
                      "write": "ANY board.members == $user"}}
        """

    /// A team space with the schema and rules, and users with the roles given; returns the
    /// users' names (as `$user` sees them) and tokens.
    static func team(_ server: ServerHarness, _ roles: [(String, Role)]) async throws -> [(
        name: String, token: String
    )] {
        let space = server.space
        try await server.withStore { store in
            _ = try await store.setSchema(of: space, to: schema)
            try await store.setRules(of: space, to: try SpaceRules.parse(Data(rules.utf8)))
        }
        var users: [(name: String, token: String)] = []
        for (name, role) in roles {
            users.append(("\(name)-\(space)", try await server.user(name, role)))
        }
        return users
    }

    static func board(_ key: String, _ id: String, owner: String, members: [String], kind: SyncChange.Kind = .create)
        -> SyncChange
    {
        SyncChange(
            idempotencyKey: key, object: SyncObjectID(typeName: "Board", primaryKey: .string(id)), serverID: nil,
            kind: kind,
            values: [
                "name": .value(.string(id)), "owner": .value(.string(owner)),
                "members": .value(.list(members.map { .string($0) })),
            ])
    }

    static func task(_ key: String, _ id: String, owner: String?, board: String?, kind: SyncChange.Kind = .create)
        -> SyncChange
    {
        var values: [String: SyncValue] = [
            "title": .value(.string("\(id) \(key)")),
            "board": .reference(
                board.map { SyncReference(object: SyncObjectID(typeName: "Board", primaryKey: .string($0))) }),
        ]
        if let owner { values["owner"] = .value(.string(owner)) }
        return SyncChange(
            idempotencyKey: key, object: SyncObjectID(typeName: "TaskItem", primaryKey: .string(id)), serverID: nil,
            kind: kind, values: kind == .delete ? [:] : values)
    }

    static func outcomes(_ receipts: [SyncReceipt]) -> [String] {
        receipts.map {
            if case .rejected(let rejection) = $0.outcome { return "rejected \(rejection.code)" }
            return "\($0.outcome)"
        }
    }

    // MARK: What a device holds, and what it should

    /// A device of one user: what its pulls left it, by `Type/id`, with the server version.
    struct Device {
        var transport: HTTPSyncTransport
        var cursor: String?
        var objects: [String: UInt64] = [:]

        mutating func sync() async throws {
            while true {
                let page = try await transport.pull(after: cursor)
                for change in page.changes {
                    let key = "\(change.object.typeName)/\(change.object.primaryKey.stringValue ?? "?")"
                    objects[key] = change.isDeleted ? nil : change.serverVersion
                }
                cursor = page.cursor ?? cursor
                if !page.hasMore { return }
            }
        }
    }

    /// What a user may read, by the rules evaluated here in plain Swift over the server's live
    /// objects: `Type/id` with the object's version.
    static func readable(by user: String, _ server: ServerHarness) async throws -> [String: UInt64] {
        let rows = try await server.client.query(
            """
            SELECT type, local_id->>'string', "values"::text, version FROM objects
            WHERE space_id = (SELECT id FROM spaces WHERE name = \(server.space)) AND NOT deleted
            """)
        var objects: [(type: String, id: String, values: [String: Any], version: Int64)] = []
        for try await (type, id, values, version) in rows.decode((String, String, String, Int64).self) {
            let parsed = try JSONSerialization.jsonObject(with: Data(values.utf8)) as? [String: Any] ?? [:]
            objects.append((type, id, parsed, version))
        }
        func string(_ values: [String: Any], _ name: String) -> String? {
            (values[name] as? [String: Any])?["string"] as? String
        }
        func members(_ values: [String: Any]) -> [String] {
            ((values["members"] as? [String: Any])?["list"] as? [[String: Any]] ?? []).compactMap {
                $0["string"] as? String
            }
        }
        let boards = Dictionary(
            objects.filter { $0.type == "Board" }.map { ($0.id, $0.values) }, uniquingKeysWith: { first, _ in first })
        var readable: [String: UInt64] = [:]
        for object in objects {
            let allowed: Bool
            if object.type == "Board" {
                allowed = string(object.values, "owner") == user || members(object.values).contains(user)
            } else {
                let reference = (object.values["board"] as? [String: Any])?["ref"] as? [String: Any]
                let boardID = (reference?["id"] as? [String: Any])?["string"] as? String
                let board = boardID.flatMap { boards[$0] }
                allowed = string(object.values, "owner") == user || (board.map(members) ?? []).contains(user)
            }
            if allowed { readable["\(object.type)/\(object.id)"] = UInt64(object.version) }
        }
        return readable
    }

    // MARK: Tests

    @Test func rulesDecideWhatEachUserPullsAndPushes() async throws {
        let server = try await ServerHarness.start(types: ["Board", "TaskItem"])
        defer { Task { await server.stop() } }
        let users = try await Self.team(
            server, [("ann", .writer), ("bob", .writer), ("cat", .writer), ("dan", .reader)])
        let (ann, bob, cat, dan) = (users[0].name, users[1].name, users[2].name, users[3].name)
        let push = { (user: Int, changes: [SyncChange]) in
            Self.outcomes(try await server.transport(users[user].token).push(changes))
        }
        var devices = users.map { Device(transport: server.transport($0.token)) }
        func check(_ step: String) async throws {
            for index in devices.indices {
                try await devices[index].sync()
                let expected = try await Self.readable(by: users[index].name, server)
                #expect(devices[index].objects == expected, "\(step): \(users[index].name)")
            }
        }

        // Ann's board with Bob; tasks on it by both; Cat is no member and may not add one.
        #expect(try await push(0, [Self.board("a1", "b1", owner: ann, members: [ann, bob])]) == ["applied"])
        #expect(
            try await push(0, [Self.task("a2", "t1", owner: ann, board: "b1")]) == ["applied"])
        #expect(
            try await push(
                2,
                [
                    Self.task("c1", "t3", owner: cat, board: "b1"), Self.board("c2", "b3", owner: cat, members: [cat]),
                    Self.task("c3", "t4", owner: cat, board: "b3"), Self.task("c4", "t5", owner: cat, board: nil),
                ]) == ["rejected forbidden", "applied", "applied", "rejected forbidden"])
        #expect(try await push(1, [Self.task("b1", "t2", owner: bob, board: "b1")]) == ["applied"])
        try await check("boards and tasks")
        #expect(devices[0].objects.keys.sorted() == ["Board/b1", "TaskItem/t1", "TaskItem/t2"])
        #expect(devices[2].objects.keys.sorted() == ["Board/b3", "TaskItem/t4"])
        #expect(devices[3].objects.isEmpty, "dan is in no board")

        // Bob edits Ann's task (a writer, without rules, could not); he may not change her board,
        // nor give his task to a board he is not in.
        #expect(try await push(1, [Self.task("b2", "t1", owner: ann, board: "b1", kind: .update)]) == ["applied"])
        #expect(
            try await push(
                1,
                [
                    Self.board("b3", "b1", owner: bob, members: [bob], kind: .update),
                    Self.task("b4", "t2", owner: bob, board: "b3", kind: .update),
                ]) == ["rejected forbidden", "rejected forbidden"])
        // Dan is a reader: the role still refuses his pushes whole.
        await #expect(throws: SyncHTTPError.self) {
            _ = try await push(3, [Self.board("d1", "b4", owner: dan, members: [dan])])
        }
        try await check("edits")

        // Renaming the board changes nothing the rules read: its tasks keep their versions.
        let tasksBefore = try await Self.readable(by: ann, server).filter { $0.key.hasPrefix("TaskItem") }
        let rename = SyncChange(
            idempotencyKey: "a5", object: SyncObjectID(typeName: "Board", primaryKey: .string("b1")), serverID: nil,
            kind: .update, values: ["name": .value(.string("plans"))])
        #expect(try await push(0, [rename]) == ["applied"])
        #expect(try await Self.readable(by: ann, server).filter { $0.key.hasPrefix("TaskItem") } == tasksBefore)
        try await check("renamed")

        // Ann takes Bob off her board: the board and Ann's task leave his device (his own task
        // stays: he owns it); she adds Dan: the board and its tasks reach his.
        #expect(
            try await push(0, [Self.board("a3", "b1", owner: ann, members: [ann, dan], kind: .update)]) == ["applied"])
        try await check("members changed")
        #expect(devices[1].objects.keys.sorted() == ["TaskItem/t2"])
        #expect(devices[3].objects.keys.sorted() == ["Board/b1", "TaskItem/t1", "TaskItem/t2"])

        // Deleting the board: every task on it leaves the devices that read them through it.
        #expect(try await push(0, [Self.board("a4", "b1", owner: ann, members: [], kind: .delete)]) == ["applied"])
        try await check("board deleted")
        #expect(devices[3].objects.isEmpty)
        #expect(devices[1].objects.keys.sorted() == ["TaskItem/t2"])
    }

    @Test func anAdminBypassesTheRulesAndRulesCanBeRemoved() async throws {
        let server = try await ServerHarness.start(types: ["Board", "TaskItem"])
        defer { Task { await server.stop() } }
        let users = try await Self.team(server, [("ann", .writer), ("eve", .admin)])
        let ann = users[0].name
        let annPushes = server.transport(users[0].token)
        #expect(
            Self.outcomes(try await annPushes.push([Self.board("a1", "b1", owner: ann, members: [])])) == ["applied"])
        let eve = server.transport(users[1].token)
        #expect(
            Self.outcomes(try await eve.push([Self.board("e1", "b1", owner: "someone", members: [], kind: .update)]))
                == ["applied"])
        #expect(try await eve.pull(after: nil).changes.count == 1)
        #expect(try await annPushes.pull(after: nil).changes.isEmpty, "b1 is someone's now")

        // No rules: the roles alone decide again (a writer pulls everything).
        let space = server.space
        try await server.withStore { try await $0.setRules(of: space, to: try SpaceRules.parse(Data("{}".utf8))) }
        #expect(try await server.withStore { try await $0.rules(of: space) }.isEmpty)
        #expect(try await annPushes.pull(after: nil).changes.count == 1)
    }

    /// A walk from the beginning, page by page, meets each object the rules refuse once, as it
    /// is: none is sent, not even as a removal. One readable when sent and refused later, while
    /// the walk goes on, comes again as a removal.
    @Test func aWalkFromTheBeginningSendsNoRemovalsItNeedsNot() async throws {
        let server = try await ServerHarness.start(types: ["Board", "TaskItem"])
        defer { Task { await server.stop() } }
        let users = try await Self.team(server, [("ann", .writer), ("eve", .admin)])
        let ann = users[0].name
        let eve = server.transport(users[1].token)
        var boards = [Self.board("e0", "b0", owner: ann, members: [])]
        boards += (1...5).map { Self.board("e\($0)", "b\($0)", owner: "someone", members: []) }
        #expect(Set(Self.outcomes(try await eve.push(boards))) == ["applied"])
        func page(_ cursor: String?, wait: Int = 0) async throws -> (
            changes: [[String: Any]], cursor: String, hasMore: Bool
        ) {
            let query = "limit=1&wait=\(wait)" + (cursor.map { "&after=\($0)" } ?? "")
            let (status, body) = try await server.raw(
                "GET", "/v1/spaces/\(server.space)/pull?\(query)", token: users[0].token)
            #expect(status == 200, "\(body)")
            let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] ?? [:]
            return (
                json["changes"] as? [[String: Any]] ?? [], json["cursor"] as? String ?? "",
                json["hasMore"] as? Bool ?? false
            )
        }
        var (changes, cursor, hasMore) = try await page(nil)
        #expect(changes.count == 1 && changes[0]["deleted"] as? Bool == false && hasMore)
        // b0 stops being Ann's while her walk goes on.
        let update = Self.board("e6", "b0", owner: "someone", members: [], kind: .update)
        #expect(Self.outcomes(try await eve.push([update])) == ["applied"])
        // A long poll from the walk's cursor reads past what the rules leave out, and answers
        // with b0's removal.
        let polled = try await page(cursor, wait: 5)
        #expect(polled.changes.count == 1 && polled.changes.first?["deleted"] as? Bool == true, "\(polled)")
        var later: [[String: Any]] = []
        while hasMore {
            (changes, cursor, hasMore) = try await page(cursor)
            later += changes
        }
        let ids = later.map { (($0["object"] as? [String: Any])?["id"] as? [String: Any])?["string"] as? String }
        #expect(ids == ["b0"], "only b0 again: \(later)")
        #expect(later.first?["deleted"] as? Bool == true)
        #expect(cursor.hasPrefix("v1.7"), "\(cursor)")
    }

    @Test func rulesAreCheckedWhenSet() async throws {
        let server = try await ServerHarness.start(types: ["Board", "TaskItem"])
        defer { Task { await server.stop() } }
        let space = server.space
        func problem(_ json: String) async -> String {
            do {
                try await server.withStore {
                    try await $0.setRules(of: space, to: try SpaceRules.parse(Data(json.utf8)))
                }
                return "accepted"
            } catch let error as SyncServerError {
                return "\(error.code): \(error.message)"
            } catch {
                return "\(error)"
            }
        }
        #expect(await problem(#"{"Board": {"read": "owner == $user"}}"#).contains("has no schema"))
        _ = try await server.withStore { try await $0.setSchema(of: space, to: Self.schema) }
        let cases: [(String, String)] = [
            (#"{"Board": {"read": "ownr == $user"}}"#, "Board's read rule: ownr == $user: Board has no property ownr"),
            (
                #"{"Card": {"read": "TRUEPREDICATE"}}"#,
                "the rules name type Card, which the space's schema does not have"
            ),
            (#"{"TaskItem": {"read": "board.members == $user"}}"#, "goes through a list: write ANY"),
            (#"{"TaskItem": {"read": "ANY owner == $user"}}"#, "ANY needs a key path through a list"),
            (#"{"TaskItem": {"read": "owner.name == $user"}}"#, "TaskItem.owner is not a link"),
            (#"{"TaskItem": {"write": "board == $user"}}"#, "board is link: a rule compares"),
            (#"{"TaskItem": {"read": "owner == $me"}}"#, "column 10: a rule knows one variable, $user"),
            (#"{"TaskItem": {"read": "owner > 3"}}"#, "column 7: \">\" is not part of a rule"),
            (#"{"TaskItem": {"read": "owner == $user AND"}}"#, "expected a property name"),
            (#"{"TaskItem": {"read": "(owner == $user"}}"#, "expected ')'"),
            (#"{"TaskItem": {"reads": "owner == $user"}}"#, "unknown member \"reads\""),
            (#"{"TaskItem": {"read": 1}}"#, "TaskItem.read: expected a string"),
            (#"["TaskItem"]"#, "expected an object of types"),
            (#"{"TaskItem": "#, "not JSON"),
        ]
        for (json, expected) in cases {
            let found = await problem(json)
            #expect(found.hasPrefix("badRequest") && found.contains(expected), "\(json): \(found)")
        }
        #expect(try await server.withStore { try await $0.rules(of: space) }.isEmpty, "nothing was set")
        #expect(await problem(Self.rules) == "accepted")
        let shown = try await server.withStore { try await $0.rules(of: space) }
        #expect(shown.json() == (try SpaceRules.parse(Data(Self.rules.utf8))).json())
        #expect(shown.types["TaskItem"]?.write == "ANY board.members == $user")
        // An unknown space.
        let missing = try await server.withStore { store in
            await #expect(throws: SyncServerError.self) { try await store.rules(of: "nowhere-\(space)") }
        }
        _ = missing
    }
}

// With the suite's other tests that run the executable: each blocks a thread of the shared pool
// while its command runs, so they run one at a time.
extension SyncServerTests {
    @Test func theCommandLineSetsAndShowsRules() async throws {
        let server = try await ServerHarness.start(types: ["Board", "TaskItem"])
        defer { Task { await server.stop() } }
        let space = server.space
        _ = try await server.withStore { try await $0.setSchema(of: space, to: RulesTests.schema) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(RulesTests.rules.utf8).write(to: file)
        let set = try await ServerProcess.command(["rules", "set", space, file.path])
        #expect(set.status == 0 && set.output == "space \(space): rules for Board, TaskItem\n", "\(set)")
        let shown = try await ServerProcess.command(["rules", "show", space])
        #expect(shown.status == 0 && shown.output.contains(#""write": "ANY board.members == $user""#), "\(shown)")
        try Data(#"{"Board": {"read": "nosuch == 1"}}"#.utf8).write(to: file)
        let refused = try await ServerProcess.command(["rules", "set", space, file.path])
        #expect(refused.status == 1 && refused.error.contains("Board has no property nosuch"), "\(refused)")
        try Data("{}".utf8).write(to: file)
        let removed = try await ServerProcess.command(["rules", "set", space, file.path])
        #expect(removed.output == "space \(space) has no rules: the roles alone decide\n", "\(removed)")
        #expect(try await ServerProcess.command(["rules", "show", space]).output == "space \(space) has no rules\n")
    }
}
