import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The sync server's figure: devices (each a realm, a SyncEngine and an HTTPSyncTransport, all in
// this process) each write cards one by one while every device syncs continuously (a long poll
// open), through one or more `liveobjects-sync-server` processes behind one database. Reported:
// changes per second until every device holds every card, and the time from a push's
// acknowledgement to another device's subscription seeing the card. With --batch N, the server
// alone: each device pushes its cards over HTTP in requests of N changes, one after the other,
// with no realm and no engine; reported: changes per second until every push is answered.
//
//   swift build -c release --package-path SyncServer
//   SyncServer/scripts/with-postgres.sh SyncServer/.build/release/liveobjects-sync-bench --processes 1,2 --runs 3
//   SyncServer/scripts/with-postgres.sh SyncServer/.build/release/liveobjects-sync-bench --processes 1 --batch 100

let usage = """
    USAGE: liveobjects-sync-bench [--devices N] [--changes N] [--interval MS] [--processes LIST] [--runs N]
                                  [--client automatic|urlSession|sockets] [--batch N [--spaces N]]

      --devices N        devices (default 10)
      --changes N        cards each device writes and pushes (default 1000)
      --interval MS      each device waits MS milliseconds after each write (default 0: writes
                         as fast as it can, which saturates the machine; a pause measures the
                         time to another device without the backlog)
      --processes LIST   server processes of each configuration, comma-separated (default 1,2)
      --runs N           runs of each configuration; the summary gives their medians (default 3)
      --client NAME      what the devices' transports send through (default automatic: on
                         Linux the socket client, elsewhere URLSession)
      --batch N          pushes only: each device sends its cards in pushes of N changes (at most
                         1000), one push after the other, over HTTP (no realm, no engine, no
                         pull); the figure is the server's push throughput
      --spaces N         with --batch, the devices are spread over N spaces (default 1: every
                         push waits for the space's lock; more spaces push in parallel)

    The database comes from the environment, as for liveobjects-sync-server (under
    SyncServer/scripts/with-postgres.sh, a throwaway one); the server is the
    liveobjects-sync-server built next to this program.
    """

final class Card: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var serverID: String?
    @Persisted var name = ""
    @Persisted var device = 0
}

/// A value behind a lock.
final class Locked<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}

let clock = ContinuousClock()

/// The HTTP transport, noting when each pushed card was acknowledged.
struct TimingTransport: LiveSyncTransport {
    let base: HTTPSyncTransport
    let acknowledged: Locked<[String: ContinuousClock.Instant]>

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
        let receipts = try await base.push(changes)
        let now = clock.now
        acknowledged.value.withLock { times in
            for (change, receipt) in zip(changes, receipts) where receipt.outcome == .applied {
                if case .string(let id) = change.object.primaryKey, times[id] == nil { times[id] = now }
            }
        }
        return receipts
    }

    func pull(after cursor: String?) async throws -> SyncPull { try await base.pull(after: cursor) }
    func waitForChanges(after cursor: String?) async throws -> Bool { try await base.waitForChanges(after: cursor) }
}

/// `liveobjects-sync-server serve --port 0`, started next to this program.
final class ServerProcess: Sendable {
    let baseURL: URL
    let process: Process

    init() throws {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let process = Process()
        process.executableURL = directory.appendingPathComponent("liveobjects-sync-server")
        process.arguments = ["serve", "--port", "0"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let text = Locked("")
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            text.value.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        var port: Int?
        for _ in 0..<1200 where port == nil && process.isRunning {
            let output = text.value.withLock { $0 }
            if let range = output.range(of: "listening on http://127.0.0.1:") {
                port = Int(output[range.upperBound...].prefix(while: \.isNumber))
            } else {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        guard let port else {
            if process.isRunning { process.terminate() }
            throw SyncServerError(.internal, "the server did not start: \(text.value.withLock { $0 })")
        }
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!
        self.process = process
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

struct RunResult {
    var processes: Int
    var seconds: Double
    var changesPerSecond: Double
    var medianMilliseconds: Double
    var p99Milliseconds: Double
    var samples: Int
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// New spaces that accept cards, and a writer for each device, in space `device % spaces`.
func setUp(devices: Int, spaces count: Int, database: DatabaseConfiguration) async throws -> (
    spaces: [String], tokens: [String]
) {
    let service = SyncServerService(database: database)
    let run = "bench-\(UUID().uuidString.prefix(8))"
    let spaces = (0..<count).map { "\(run)-\($0)" }
    let tokens = try await service.withStore { store in
        for space in spaces { try await store.addSpace(space, types: ["Card"]) }
        var tokens: [String] = []
        for device in 0..<devices {
            let user = "\(run)-device\(device)"
            tokens.append(try await store.addUser(user))
            try await store.grant(user: user, space: spaces[device % count], role: .writer)
        }
        return tokens
    }
    return (spaces, tokens)
}

/// The server's push throughput: each device pushes its cards in requests of `batch` changes,
/// one request after the other, all devices at once.
func runPushes(
    devices: Int, changes: Int, batch: Int, spaces spaceCount: Int, processes: Int,
    client: HTTPSyncTransport.Configuration.Client, database: DatabaseConfiguration
) async throws -> RunResult {
    let (spaces, tokens) = try await setUp(devices: devices, spaces: spaceCount, database: database)
    let servers = try (0..<processes).map { _ in try ServerProcess() }
    defer { servers.forEach { $0.stop() } }
    let transports = (0..<devices).map { device in
        HTTPSyncTransport(
            configuration: .init(
                baseURL: servers[device % processes].baseURL, space: spaces[device % spaceCount], client: client
            ) { [token = tokens[device]] _ in token })
    }
    let start = clock.now
    // Each push's time, from sending to its receipts.
    let pushTimes = try await withThrowingTaskGroup(of: [Double].self) { group in
        for (device, transport) in transports.enumerated() {
            group.addTask {
                var times: [Double] = []
                for first in stride(from: 0, to: changes, by: batch) {
                    let cards = (first..<min(first + batch, changes)).map { index in
                        SyncChange(
                            idempotencyKey: "d\(device)-\(index)",
                            object: SyncObjectID(typeName: "Card", primaryKey: .string("d\(device)-\(index)")),
                            serverID: nil, kind: .create,
                            values: ["name": .value(.string("card \(index)")), "device": .value(.int(Int64(device)))])
                    }
                    let sent = clock.now
                    let receipts = try await transport.push(cards)
                    times.append(milliseconds(clock.now - sent))
                    guard receipts.count == cards.count, receipts.allSatisfy({ $0.outcome == .applied }) else {
                        throw SyncServerError(.internal, "a push was not applied whole: \(receipts)")
                    }
                }
                return times
            }
        }
        return try await group.reduce(into: []) { $0 += $1 }
    }
    let seconds = milliseconds(clock.now - start) / 1000
    let sorted = pushTimes.sorted()
    return RunResult(
        processes: processes, seconds: seconds, changesPerSecond: Double(devices * changes) / seconds,
        medianMilliseconds: percentile(sorted, 0.5), p99Milliseconds: percentile(sorted, 0.99), samples: sorted.count)
}

/// Devices syncing continuously: each writes its cards, and every device waits for every card.
func runDevices(
    devices: Int, changes: Int, interval: Int, processes: Int, client: HTTPSyncTransport.Configuration.Client,
    database: DatabaseConfiguration
) async throws
    -> RunResult
{
    let (spaces, tokens) = try await setUp(devices: devices, spaces: 1, database: database)
    let space = spaces[0]
    let servers = try (0..<processes).map { _ in try ServerProcess() }
    defer { servers.forEach { $0.stop() } }

    let acknowledged = Locked<[String: ContinuousClock.Instant]>([:])
    // For each card, when each other device's subscription saw it.
    let seen = Locked<[(card: String, at: ContinuousClock.Instant)]>([])
    let complete = Locked(0)
    let everyoneHasEverything = AsyncStream<Void>.makeStream()
    var realms: [Realm] = []
    var engines: [SyncEngine] = []
    var tasks: [Task<Void, Never>] = []
    for device in 0..<devices {
        var configuration = Realm.Configuration(identifier: "\(space)-\(device)", objectTypes: [Card.self])
        configuration.keepsHistory = true
        let realm = try await Realm.open(configuration)
        // No URL cache: on Linux, cancelling a request (as ending syncContinuously does) of a
        // session with a cache can trap in FoundationNetworking (a race in its task registry).
        let session = URLSessionConfiguration.ephemeral
        session.urlCache = nil
        session.requestCachePolicy = .reloadIgnoringLocalCacheData
        let transport = TimingTransport(
            base: HTTPSyncTransport(
                configuration: .init(
                    baseURL: servers[device % processes].baseURL, space: space, longPollWait: .seconds(25),
                    client: client
                ) { [token = tokens[device]] _ in token },
                session: URLSession(configuration: session)),
            acknowledged: acknowledged)
        let engine = try await SyncEngine(
            realm: realm, transport: transport, types: [Card.self],
            configuration: .init(maxAttempts: 5, initialBackoff: .milliseconds(20)))
        let cards = try await realm.read { $0.objects(Card.self).changes() }
        let expected = (devices - 1) * changes
        tasks.append(
            Task {
                var others = 0
                for await change in cards {
                    let now = clock.now
                    var found: [(String, ContinuousClock.Instant)] = []
                    for index in change.insertions {
                        let card = change.snapshot[index]
                        if card.device != device { found.append((card.id, now)) }
                    }
                    others += found.count
                    seen.value.withLock { $0 += found.map { (card: $0.0, at: $0.1) } }
                    if others >= expected {
                        let done = complete.value.withLock { count in
                            count += 1
                            return count
                        }
                        if done == devices { everyoneHasEverything.continuation.finish() }
                        return
                    }
                }
            })
        tasks.append(Task { await engine.syncContinuously() })
        realms.append(realm)
        engines.append(engine)
    }
    // Let every device's first sync and long poll start.
    try await Task.sleep(for: .milliseconds(500))

    let start = clock.now
    await withTaskGroup(of: Void.self) { group in
        for (device, realm) in realms.enumerated() {
            group.addTask {
                for index in 0..<changes {
                    try? await realm.write { r in
                        _ = try r.create(
                            Card.self, value: ["id": "d\(device)-\(index)", "name": "card \(index)", "device": device])
                    }
                    if interval > 0 { try? await Task.sleep(for: .milliseconds(interval)) }
                }
            }
        }
    }
    for await _ in everyoneHasEverything.stream {}
    let elapsed = clock.now - start
    for task in tasks { task.cancel() }

    let acks = acknowledged.value.withLock { $0 }
    let latencies = seen.value.withLock { $0 }.compactMap { sample -> Double? in
        guard let ack = acks[sample.card] else { return nil }
        return milliseconds(sample.at - ack)
    }
    .sorted()
    let seconds = milliseconds(elapsed) / 1000
    return RunResult(
        processes: processes, seconds: seconds, changesPerSecond: Double(devices * changes) / seconds,
        medianMilliseconds: percentile(latencies, 0.5), p99Milliseconds: percentile(latencies, 0.99),
        samples: latencies.count)
}

/// The command line's options.
struct Options {
    var devices = 10
    var changes = 1000
    var processCounts = [1, 2]
    var runs = 3
    var interval = 0
    var client = HTTPSyncTransport.Configuration.Client.automatic
    /// Pushes only, in requests of this many changes; 0, devices syncing.
    var batch = 0
    var spaces = 1

    /// The options of the command line; nil after printing the usage.
    static func parse(_ list: [String]) throws -> Options? {
        var arguments = ArraySlice(list)
        var options = Options()
        while let option = arguments.popFirst() {
            if option == "-h" || option == "--help" {
                print(usage)
                return nil
            }
            guard let value = arguments.popFirst() else {
                throw SyncServerError(.badRequest, "\(option) needs a value")
            }
            switch option {
            case "--devices": options.devices = Int(value) ?? 0
            case "--changes": options.changes = Int(value) ?? 0
            case "--runs": options.runs = Int(value) ?? 0
            case "--interval": options.interval = Int(value) ?? -1
            case "--processes": options.processCounts = value.split(separator: ",").map { Int($0) ?? 0 }
            case "--batch": options.batch = Int(value) ?? -1
            case "--spaces": options.spaces = Int(value) ?? 0
            case "--client":
                switch value {
                case "automatic": options.client = .automatic
                case "urlSession": options.client = .urlSession
                case "sockets": options.client = .sockets
                default: throw SyncServerError(.badRequest, "--client is automatic, urlSession or sockets")
                }
            default: throw SyncServerError(.badRequest, "unknown option \(option)\n\n\(usage)")
            }
        }
        guard options.devices >= 2, options.changes >= 1, options.runs >= 1, options.interval >= 0,
            !options.processCounts.isEmpty, options.processCounts.allSatisfy({ $0 >= 1 }),
            (0...SyncStore.maximumBatch).contains(options.batch), options.spaces >= 1
        else {
            throw SyncServerError(
                .badRequest,
                "--devices is at least 2, --changes, --runs, --processes and --spaces at least 1, --interval at least 0, "
                    + "--batch 1 to \(SyncStore.maximumBatch)")
        }
        return options
    }

    /// What a run measures, printed first.
    var title: String {
        if batch > 0 {
            return "\(devices) devices × \(changes) changes, pushed in requests of \(batch) into \(spaces) space(s), "
                + "no pull"
        }
        return "\(devices) devices × \(changes) changes"
            + (interval > 0 ? ", a write every \(interval) ms per device" : ", written as fast as possible")
            + ", each device syncing continuously"
    }

    func run(processes: Int, database: DatabaseConfiguration) async throws -> RunResult {
        if batch > 0 {
            return try await runPushes(
                devices: devices, changes: changes, batch: batch, spaces: spaces, processes: processes, client: client,
                database: database)
        }
        return try await runDevices(
            devices: devices, changes: changes, interval: interval, processes: processes, client: client,
            database: database)
    }
}

func main() async throws {
    guard let options = try Options.parse(Array(CommandLine.arguments.dropFirst())) else { return }
    let database = try DatabaseConfiguration.fromEnvironment()
    print(options.title)
    fflush(nil)
    // The time reported beside the throughput: of each push (--batch), or from a card's
    // acknowledgement to another device seeing it.
    let latency = options.batch > 0 ? "push" : "ack → seen"
    var summary: [String] = []
    for processes in options.processCounts {
        var results: [RunResult] = []
        for index in 1...options.runs {
            let result = try await options.run(processes: processes, database: database)
            results.append(result)
            print(
                String(
                    format:
                        "%d process(es), run %d: %.2f s, %.0f changes/s, \(latency) median %.1f ms, p99 %.1f ms (%d samples)",
                    processes, index, result.seconds, result.changesPerSecond, result.medianMilliseconds,
                    result.p99Milliseconds, result.samples))
            fflush(nil)
        }
        func median(_ values: [Double]) -> Double { percentile(values.sorted(), 0.5) }
        summary.append(
            String(
                format: "%d process(es), median of %d runs: %.0f changes/s, \(latency) median %.1f ms, p99 %.1f ms",
                processes, options.runs, median(results.map(\.changesPerSecond)),
                median(results.map(\.medianMilliseconds)), median(results.map(\.p99Milliseconds))))
    }
    print(summary.joined(separator: "\n"))
}

do {
    try await main()
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}
