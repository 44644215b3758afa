import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import PostgresNIO
import Synchronization
import Testing

extension SyncServerTests {
    /// One push of the plan: the server process it goes through and its changes (a new object,
    /// or an update of one this writer created in an earlier push).
    struct PlannedPush: CustomStringConvertible {
        var process: Int
        var changes: [(key: String, id: String, create: Bool, name: String)]
        var description: String {
            "via \(process): "
                + changes.map { "\($0.create ? "create" : "update") \($0.id)=\($0.name)" }.joined(separator: ", ")
        }
    }

    /// Writers push concurrently through two `liveobjects-sync-server` processes behind one
    /// database while a reader on each process long-polls and pulls page by page: every reader
    /// sees versions strictly increasing, every acknowledged change (or a later state of its
    /// object), and ends with what the database holds; the database's versions have no gap.
    @Test func twoServerProcessesBehindOneDatabaseLoseNoChange() async throws {
        let seed =
            ProcessInfo.processInfo.environment["LIVEOBJECTS_SYNC_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64(UInt32.max))
        var random = SyncSeededGenerator(seed: seed)
        let writers = 8
        let plans: [[PlannedPush]] = (0..<writers).map { writer in
            var created: [String] = []
            return (0..<12).map { push in
                let changes = (0..<Int.random(in: 1...8, using: &random)).map { index in
                    let name = "w\(writer)p\(push)c\(index)"
                    if !created.isEmpty, Int.random(in: 0..<10, using: &random) < 3 {
                        let id = created.randomElement(using: &random)!
                        return (key: "\(name)-update", id: id, create: false, name: name)
                    }
                    return (key: "\(name)-create", id: name, create: true, name: name)
                }
                // Only objects acknowledged in an earlier push are updated.
                let ids = Set(changes.map(\.id))
                var unique: [(key: String, id: String, create: Bool, name: String)] = []
                var taken = Set<String>()
                for change in changes where taken.insert(change.id).inserted { unique.append(change) }
                created += ids.filter { id in changes.contains { $0.id == id && $0.create } }.sorted()
                return PlannedPush(process: Int.random(in: 0...1, using: &random), changes: unique)
            }
        }
        let pageSize = Int.random(in: 3...40, using: &random)
        let replay =
            "seed \(seed) (LIVEOBJECTS_SYNC_SEED=\(seed) replays the plan), page size \(pageSize), plan:\n"
            + plans.enumerated().map {
                "writer \($0.offset): " + $0.element.map(\.description).joined(separator: "\n  ")
            }
            .joined(separator: "\n")

        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let processes = try await [ServerProcess.start(), ServerProcess.start()]
        defer { processes.forEach { $0.stop() } }
        var tokens: [String] = []
        for user in 0..<4 { tokens.append(try await server.user("writer\(user)", .writer)) }
        let readerToken = try await server.user("reader", .reader)
        let space = server.space
        func transport(_ process: Int, _ token: String) -> HTTPSyncTransport {
            HTTPSyncTransport(
                configuration: .init(
                    baseURL: processes[process].baseURL, space: space, longPollWait: .seconds(1), pageSize: pageSize
                ) { _ in token })
        }

        // Acknowledged changes: the object's server id and the version the receipt gave.
        let acknowledged = Locked<[(serverID: String, version: UInt64, name: String)]>([])
        let finalVersion = Locked<UInt64?>(nil)
        struct Reading: Sendable {
            var states: [String: String] = [:]
            var versions: [UInt64] = []
            var problems: [String] = []
        }

        let readings = try await withThrowingTaskGroup(of: Reading?.self) { group in
            for process in 0..<2 {
                let reader = transport(process, readerToken)
                group.addTask {
                    var reading = Reading()
                    var cursor: String?
                    for _ in 0..<20_000 {
                        let page = try await reader.pull(after: cursor)
                        for change in page.changes {
                            if let last = reading.versions.last, change.serverVersion <= last {
                                reading.problems.append("version \(change.serverVersion) after \(last)")
                            }
                            reading.versions.append(change.serverVersion)
                            guard case .value(.string(let name))? = change.values["name"] else {
                                reading.problems.append("\(change.serverID) has no name: \(change.values)")
                                continue
                            }
                            reading.states[change.serverID] = "v\(change.serverVersion) \(name)"
                        }
                        cursor = page.cursor
                        if page.hasMore { continue }
                        if let target = finalVersion.value.withLock({ $0 }), (reading.versions.last ?? 0) >= target {
                            return reading
                        }
                        _ = try await reader.waitForChanges(after: cursor)
                    }
                    reading.problems.append("did not catch up with the writers")
                    return reading
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { writerGroup in
                for (writer, plan) in plans.enumerated() {
                    let through = [transport(0, tokens[writer % 4]), transport(1, tokens[writer % 4])]
                    writerGroup.addTask {
                        for push in plan {
                            let changes = push.changes.map {
                                SyncChange(
                                    idempotencyKey: $0.key,
                                    object: SyncObjectID(typeName: "Card", primaryKey: .string($0.id)),
                                    serverID: nil, kind: $0.create ? .create : .update,
                                    values: ["name": .value(.string($0.name))])
                            }
                            let receipts = try await through[push.process].push(changes)
                            acknowledged.value.withLock { list in
                                for (receipt, change) in zip(receipts, push.changes) where receipt.outcome == .applied {
                                    list.append((receipt.serverID, receipt.serverVersion, change.name))
                                }
                            }
                            #expect(receipts.count == changes.count, "\(replay)")
                            #expect(receipts.allSatisfy { $0.outcome == .applied }, "\(receipts)\n\(replay)")
                        }
                    }
                }
                try await writerGroup.waitForAll()
            }
            let version = try await server.spaceVersion()
            finalVersion.value.withLock { $0 = UInt64(version) }
            var readings: [Reading] = []
            for try await reading in group { readings.append(reading!) }
            return readings
        }

        // The database: one version per applied change, 1 … N without a gap; its objects' states.
        let planned = plans.joined().map(\.changes.count).reduce(0, +)
        let appliedVersions = try await server.appliedVersions()
        #expect(appliedVersions == Array(1...Int64(planned)), "\(replay)")
        let database = try await server.objectStates()
        let acks = acknowledged.value.withLock { $0 }
        #expect(acks.count == planned, "\(replay)")
        for (index, reading) in readings.enumerated() {
            #expect(reading.problems.isEmpty, "reader \(index): \(reading.problems)\n\(replay)")
            #expect(reading.states == database, "reader \(index)\n\(replay)")
            // Every acknowledged change was pulled, or a later state of its object was.
            let missed = acks.filter { ack in
                guard let state = reading.states[ack.serverID],
                    let version = UInt64(state.dropFirst().prefix { $0 != " " })
                else { return true }
                return version < ack.version
            }
            #expect(missed.isEmpty, "reader \(index) missed \(missed)\n\(replay)")
        }
    }
}

/// A value behind a lock, shared by tasks.
final class Locked<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}

extension ServerHarness {
    /// The space's version counter.
    func spaceVersion() async throws -> Int64 {
        let rows = try await client.query("SELECT version FROM spaces WHERE name = \(space)")
        for try await (version) in rows.decode(Int64.self) { return version }
        return -1
    }

    /// The versions of the space's applied changes, ascending.
    func appliedVersions() async throws -> [Int64] {
        let rows = try await client.query(
            """
            SELECT applied_changes.version FROM applied_changes JOIN spaces ON spaces.id = applied_changes.space_id
            WHERE spaces.name = \(space) ORDER BY applied_changes.version
            """)
        var versions: [Int64] = []
        for try await (version) in rows.decode(Int64.self) { versions.append(version) }
        return versions
    }

    /// Each object of the space as `server id → "vVERSION NAME"`.
    func objectStates() async throws -> [String: String] {
        let rows = try await client.query(
            """
            SELECT objects.id::text, objects.version, objects."values"->'name'->>'string'
            FROM objects JOIN spaces ON spaces.id = objects.space_id WHERE spaces.name = \(space)
            """)
        var states: [String: String] = [:]
        for try await (id, version, name) in rows.decode((String, Int64, String).self) {
            states[id] = "v\(version) \(name)"
        }
        return states
    }
}
