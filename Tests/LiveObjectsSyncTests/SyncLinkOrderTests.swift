import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Synchronization
import Testing

/// A board of tasks: a list of links, and a to-one link.
final class Board: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var serverID: String?
    @Persisted var name = ""
    @Persisted var tasks: List<TaskItem>
    @Persisted var pinned: TaskItem?
}

/// A task, linking to the next one and to its board.
final class TaskItem: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var serverID: String?
    @Persisted var title = ""
    @Persisted var next: TaskItem?
    @Persisted var board: Board?
}

/// Pulls a few objects at a time, and fails every pull after a number of pages (the app is
/// killed between two pages).
final class PageLimitedTransport: SyncTransport {
    let server: FakeServer
    let pageSize: Int
    let pagesLeft: Mutex<Int>

    init(_ server: FakeServer, pageSize: Int, pages: Int) {
        self.server = server
        self.pageSize = pageSize
        pagesLeft = Mutex(pages)
    }

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] { try await server.push(changes) }

    func pull(after cursor: String?) async throws -> SyncPull {
        guard
            pagesLeft.withLock({ left in
                left -= 1
                return left >= 0
            })
        else { throw ServerUnavailable() }
        let all = try await server.pull(after: cursor)
        let page = Array(all.changes.prefix(pageSize))
        guard all.changes.count > pageSize, let last = page.last else { return all }
        return SyncPull(changes: page, cursor: String(last.serverVersion), hasMore: true)
    }
}

/// One device of the link test: a file realm and its engine's state log, reopened at every kill.
struct LinkTestDevice {
    let url: URL

    /// Opens the realm, waiting while the realm of the run before finishes closing.
    func open() async throws -> Realm {
        var configuration = Realm.Configuration(file: url, objectTypes: [Board.self, TaskItem.self])
        configuration.keepsHistory = true
        for _ in 0..<2000 {
            switch await Self.tryOpen(configuration) {
            case .success(let realm): return realm
            case .failure(let error) where error.message.contains("already open"):
                try await Task.sleep(for: .milliseconds(5))
            case .failure(let error): throw error
            }
        }
        return try await Realm.open(configuration)
    }

    /// One attempt at opening (a `do`/`catch` inside the loop above crashes the compiler).
    private static func tryOpen(_ configuration: Realm.Configuration) async -> Result<Realm, LiveObjectsError> {
        do {
            return .success(try await Realm.open(configuration))
        } catch {
            return .failure(error)
        }
    }

    /// Pulls everything, `pageSize` objects a page, the app killed after every `killEvery`
    /// pages and started again from its realm file and state log.
    func pullAll(_ server: FakeServer, pageSize: Int, killEvery: Int) async throws -> Int {
        var kills = 0
        for _ in 0..<10_000 {
            let realm = try await open()
            let engine = try await SyncEngine(
                realm: realm, transport: PageLimitedTransport(server, pageSize: pageSize, pages: killEvery),
                types: [Board.self, TaskItem.self], configuration: .init(maxAttempts: 1, sleep: { _ in }))
            let report = try await engine.pull()
            try await realm.close()
            if report.pullFailure == nil { return kills }
            kills += 1
        }
        Issue.record("the pull never finished")
        return kills
    }

    /// The objects, as `Board[b1] name=… pinned=… tasks=…` lines.
    func state() async throws -> [String: String] {
        let realm = try await open()
        let state = try await realm.read { realm in
            var result: [String: String] = [:]
            for board in realm.objects(Board.self) {
                let pinned: String = board.pinned?.id ?? "-"
                let tasks: String = board.tasks.map { $0.id }.joined(separator: ",")
                result[board.id] = "name=\(board.name) pinned=\(pinned) tasks=\(tasks)"
            }
            for task in realm.objects(TaskItem.self) {
                let next: String = task.next?.id ?? "-"
                let board: String = task.board?.id ?? "-"
                result[task.id] = "title=\(task.title) next=\(next) board=\(board)"
            }
            return result
        }
        try await realm.close()
        return state
    }
}

/// The server's live objects in the same form; links to objects it does not hold (deleted, or
/// never created) are left out, as a device cannot hold them.
func linkTestServerState(_ server: FakeServer) async -> [String: String] {
    let records = await server.liveRecords
    func key(_ id: SyncObjectID) -> String { id.primaryKey.stringValue ?? "?" }
    func one(_ value: SyncValue?) -> String {
        guard case .reference(let target?) = value, records[target.object] != nil else { return "-" }
        return key(target.object)
    }
    func text(_ value: SyncValue?) -> String {
        if case .value(.string(let text)) = value { return text }
        return ""
    }
    var result: [String: String] = [:]
    for (id, record) in records {
        if id.typeName == "Board" {
            var tasks: [String] = []
            if case .references(let list) = record.values["tasks"] {
                tasks = list.filter { records[$0.object] != nil }.map { key($0.object) }
            }
            let name: String = text(record.values["name"])
            let pinned: String = one(record.values["pinned"])
            result[key(id)] = "name=\(name) pinned=\(pinned) tasks=\(tasks.joined(separator: ","))"
        } else {
            let title: String = text(record.values["title"])
            let next: String = one(record.values["next"])
            let board: String = one(record.values["board"])
            result[key(id)] = "title=\(title) next=\(next) board=\(board)"
        }
    }
    return result
}

/// The randomized link test: other devices build random graphs on the server (links to objects
/// created later, in any order, deletions), and devices pull them in random page sizes, killed
/// between pages.
struct LinkOrderRun {
    let seed: UInt64
    let rounds: Int
    let operationsPerRound: Int

    var log: [String] = []

    init(seed: UInt64, rounds: Int, operationsPerRound: Int) {
        self.seed = seed
        self.rounds = rounds
        self.operationsPerRound = operationsPerRound
    }

    /// Runs; returns the failures (empty when every device equals the server).
    mutating func run(in directory: URL) async throws -> [String] {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let server = FakeServer()
        let devices = (0..<2).map { LinkTestDevice(url: directory.appendingPathComponent("device\($0).json")) }
        var boards = 0
        var tasks = 0
        var deleted = Set<String>()
        func board(_ i: Int) -> SyncObjectID { SyncObjectID(Board.self, .string("b\(i)")) }
        func task(_ i: Int) -> SyncObjectID { SyncObjectID(TaskItem.self, .string("t\(i)")) }
        var failures: [String] = []
        for round in 0..<rounds {
            // Links name objects created so far and a few created later; deleted ids are not
            // used again.
            for _ in 0..<operationsPerRound {
                func someTask() -> SyncReference? {
                    let i = Int(rng.next() % UInt64(tasks + 4))
                    return deleted.contains("t\(i)") ? nil : SyncReference(object: task(i))
                }
                func someBoard() -> SyncReference? {
                    let i = Int(rng.next() % UInt64(boards + 2))
                    return deleted.contains("b\(i)") ? nil : SyncReference(object: board(i))
                }
                switch rng.next() % 10 {
                case 0, 1, 2:
                    let id = "t\(tasks)"
                    tasks += 1
                    let next: SyncValue = .reference(someTask())
                    let onBoard: SyncValue = .reference(someBoard())
                    let title: SyncValue = .value(.string("task \(id)"))
                    await server.edit(task(tasks - 1), ["title": title, "next": next, "board": onBoard])
                    log.append("create \(id) next=\(describe(next)) board=\(describe(onBoard))")
                case 3, 4:
                    let id = "b\(boards)"
                    boards += 1
                    let count = Int(rng.next() % 5)
                    let list: [SyncReference] = (0..<count).compactMap { _ in someTask() }
                    let name: SyncValue = .value(.string("board \(id)"))
                    let pinned: SyncValue = .reference(someTask())
                    await server.edit(board(boards - 1), ["name": name, "tasks": .references(list), "pinned": pinned])
                    log.append("create \(id) tasks=\(describe(.references(list)))")
                case 5, 6:
                    guard boards > 0 else { continue }
                    let i = Int(rng.next() % UInt64(boards))
                    guard !deleted.contains("b\(i)") else { continue }
                    let count = Int(rng.next() % 6)
                    let list: [SyncReference] = (0..<count).compactMap { _ in someTask() }
                    let pinned: SyncReference? = someTask()
                    await server.edit(board(i), ["tasks": .references(list), "pinned": .reference(pinned)])
                    log.append("edit b\(i) tasks=\(describe(.references(list))) pinned=\(describe(.reference(pinned)))")
                case 7, 8:
                    guard tasks > 0 else { continue }
                    let i = Int(rng.next() % UInt64(tasks))
                    guard !deleted.contains("t\(i)") else { continue }
                    let next: SyncReference? = someTask()
                    let title: SyncValue = .value(.string("edited t\(i)"))
                    await server.edit(task(i), ["next": .reference(next), "title": title])
                    log.append("edit t\(i) next=\(describe(.reference(next)))")
                case 9:
                    guard tasks > 0 else { continue }
                    let i = Int(rng.next() % UInt64(tasks))
                    guard !deleted.contains("t\(i)") else { continue }
                    deleted.insert("t\(i)")
                    await server.delete(task(i))
                    log.append("delete t\(i)")
                default:
                    continue
                }
            }
            for (n, device) in devices.enumerated() {
                // Page sizes from 1 to 1,000, small ones often.
                let small: Bool = rng.next() % 2 == 0
                let draw: UInt64 = rng.next()
                let pageSize: Int = small ? Int(1 + draw % 8) : Int(1 + draw % 1_000)
                let killEvery = Int(1 + rng.next() % 6)
                let kills = try await device.pullAll(server, pageSize: pageSize, killEvery: killEvery)
                log.append("round \(round): device \(n) pulls, pages of \(pageSize), killed \(kills) times")
                let expected = await linkTestServerState(server)
                let actual = try await device.state()
                let ids: [String] = Set(expected.keys).union(actual.keys).sorted()
                for id in ids where expected[id] != actual[id] {
                    let want: String = expected[id] ?? "missing"
                    let got: String = actual[id] ?? "missing"
                    failures.append("round \(round), device \(n): \(id): server \(want) / device \(got)")
                }
                if !failures.isEmpty { return failures }
            }
        }
        return failures
    }
}

@Suite("Sync engine: links pulled in any page order")
struct SyncLinkOrderTests {
    func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("links-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The issue's case: a board linking to a task, 600 other objects, then an edit of the task,
    /// so that the task's state comes pages after the board's.
    @Test(arguments: [500, 1, 2])
    func aLinkToAnObjectOnALaterPageIsSetWhenItArrives(pageSize: Int) async throws {
        let directory = try directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = FakeServer()
        let lt1 = SyncObjectID(TaskItem.self, .string("lt1"))
        await server.edit(
            SyncObjectID(Board.self, .string("lb1")),
            ["name": .value(.string("Board")), "tasks": .references([SyncReference(object: lt1)])])
        await server.edit(lt1, ["title": .value(.string("first"))])
        for i in 0..<600 {
            await server.edit(SyncObjectID(TaskItem.self, .string("o\(i)")), ["title": .value(.string("other"))])
        }
        await server.edit(lt1, ["title": .value(.string("edited"))])
        let device = LinkTestDevice(url: directory.appendingPathComponent("fresh.json"))
        // Killed after every few pages (every page for the small sizes): the link waits in the
        // state log.
        _ = try await device.pullAll(server, pageSize: pageSize, killEvery: pageSize == 500 ? 1 : 200)
        let state = try await device.state()
        #expect(state["lb1"] == "name=Board pinned=- tasks=lt1")
        #expect(state["lt1"] == "title=edited next=- board=-")
        #expect(state.count == 602)
    }

    /// Seed 1 of the random graphs, alone: a pin moved on the server to a task this device
    /// never gets (deleted) leaves the pin empty, not on the task it had before; a pin moved
    /// to nil clears it.
    @Test func aPinMovedToADeletedTaskOrToNothingIsEmptyOnTheDevice() async throws {
        let directory = try directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = FakeServer()
        let b1 = SyncObjectID(Board.self, .string("b1"))
        let b2 = SyncObjectID(Board.self, .string("b2"))
        let t1 = SyncObjectID(TaskItem.self, .string("t1"))
        let t2 = SyncObjectID(TaskItem.self, .string("t2"))
        await server.edit(t1, ["title": .value(.string("one"))])
        for board in [b1, b2] {
            await server.edit(
                board, ["name": .value(.string("Board")), "pinned": .reference(SyncReference(object: t1))])
        }
        let device = LinkTestDevice(url: directory.appendingPathComponent("device.json"))
        _ = try await device.pullAll(server, pageSize: 10, killEvery: 10)
        #expect(try await device.state()["b1"] == "name=Board pinned=t1 tasks=")
        await server.edit(t2, ["title": .value(.string("two"))])
        await server.edit(b1, ["pinned": .reference(SyncReference(object: t2))])
        await server.delete(t2)
        await server.edit(b2, ["pinned": .reference(nil)])
        _ = try await device.pullAll(server, pageSize: 1, killEvery: 1)
        let state = try await device.state()
        #expect(state["b1"] == "name=Board pinned=- tasks=")
        #expect(state["b2"] == "name=Board pinned=- tasks=")
        #expect(state["t2"] == nil)
    }

    @Test func randomGraphsPulledInRandomPagesWithKillsEqualTheServer() async throws {
        let long = TestEnvironment.isLong
        let count: UInt64 = long ? 60 : 12
        // Seed 1 is a regression: a board's pin moved to a task the server then deleted, and
        // the device kept the pin it had before.
        var seeds: [UInt64] = Array(1...count)
        if let seed = TestEnvironment.seed("SYNC_LINK_SEED") { seeds = [seed] }
        for seed in seeds {
            let directory = try directory()
            defer { try? FileManager.default.removeItem(at: directory) }
            var run = LinkOrderRun(seed: seed, rounds: 3, operationsPerRound: long ? 120 : 40)
            let failures = try await run.run(in: directory)
            #expect(
                failures.isEmpty,
                """
                seed \(seed) (replay with SYNC_LINK_SEED=\(seed)):
                \(failures.prefix(10).joined(separator: "\n"))
                operations:
                \(run.log.joined(separator: "\n"))
                """)
            if !failures.isEmpty { break }
        }
    }
}
