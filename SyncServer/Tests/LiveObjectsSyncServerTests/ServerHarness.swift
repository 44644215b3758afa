import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The models (Holder, Card) are LiveObjectsSyncTestSupport's, shared with the device program
// and the root package's sync tests.

/// A real server on a free loopback port, over the database the environment names
/// (SyncServer/scripts/with-postgres.sh gives one), with a space and users of its own.
///
/// Without a database the test fails: it never skips.
final class ServerHarness: Sendable {
    let database: DatabaseConfiguration
    let baseURL: URL
    let space: String
    let client: PostgresClient
    /// The server's counters.
    let metrics: SyncMetrics
    private let serverTask: Task<Void, any Error>
    private let clientTask: Task<Void, Never>

    static let logger: Logger = {
        var logger = Logger(label: "sync-server-tests")
        logger.logLevel = .warning
        return logger
    }()

    /// Starts a server and makes a space (named after the test, made unique) that accepts the
    /// given types.
    static func start(
        _ name: String = #function, types: [String] = ["Holder", "Card"],
        http: SyncHTTPServer.Configuration = .init()
    ) async throws -> ServerHarness {
        let database: DatabaseConfiguration
        do {
            database = try DatabaseConfiguration.fromEnvironment()
        } catch {
            Issue.record(
                "These tests need PostgreSQL: run them as SyncServer/scripts/with-postgres.sh swift test --package-path SyncServer (\(error))"
            )
            throw error
        }
        let port = PortBox()
        let metrics = SyncMetrics()
        let service = SyncServerService(database: database, port: 0, http: http, logger: logger, metrics: metrics)
        let task = Task { try await service.run { bound in port.value.withLock { $0 = bound } } }
        for _ in 0..<600 {
            if port.value.withLock({ $0 }) != nil { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard let bound = port.value.withLock({ $0 }) else {
            task.cancel()
            _ = try await task.value
            throw SyncServerError(.internal, "the server did not start")
        }
        let client = PostgresClient(configuration: database.clientConfiguration, backgroundLogger: logger)
        // The first query waits until the pool's task is about to call run(): one issued
        // before it logs PostgresNIO's warning that run() has not been called.
        let (started, signal) = AsyncStream<Void>.makeStream()
        let clientTask = Task {
            signal.finish()
            await client.run()
        }
        for await _ in started {}
        let space = "\(name.prefix(while: { $0 != "(" }))-\(UUID().uuidString.prefix(8))"
        let harness = ServerHarness(
            database: database, baseURL: URL(string: "http://127.0.0.1:\(bound)")!, space: space, client: client,
            metrics: metrics, serverTask: task, clientTask: clientTask)
        try await harness.withStore { try await $0.addSpace(space, types: types) }
        return harness
    }

    private init(
        database: DatabaseConfiguration, baseURL: URL, space: String, client: PostgresClient,
        metrics: SyncMetrics, serverTask: Task<Void, any Error>, clientTask: Task<Void, Never>
    ) {
        self.metrics = metrics
        self.database = database
        self.baseURL = baseURL
        self.space = space
        self.client = client
        self.serverTask = serverTask
        self.clientTask = clientTask
    }

    func stop() async {
        serverTask.cancel()
        _ = try? await serverTask.value
        clientTask.cancel()
    }

    func withStore<T: Sendable>(_ body: @Sendable (SyncStore) async throws -> T) async throws -> T {
        try await body(SyncStore(client: client, logger: Self.logger))
    }

    /// A user of this test with a role in its space; returns the token.
    func user(_ name: String, _ role: Role) async throws -> String {
        let unique = "\(name)-\(space)"
        let space = space
        return try await withStore { store in
            let token = try await store.addUser(unique)
            try await store.grant(user: unique, space: space, role: role)
            return token
        }
    }

    func transport(_ token: String, wait: Duration = .seconds(25)) -> HTTPSyncTransport {
        HTTPSyncTransport(
            configuration: .init(baseURL: baseURL, space: space, longPollWait: wait) { _ in token },
            session: Self.session())
    }

    /// A session without a URL cache: on Linux, cancelling a request of a session with a cache
    /// (as cancelling `syncContinuously()` does) can trap in FoundationNetworking, a race in its
    /// task registry, which would end the whole test run.
    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }

    /// What the database holds for this space: each object's type, local id, deleted flag and
    /// values, the space's version and the applied keys.
    func databaseState() async throws -> String {
        let rows = try await client.query(
            """
            SELECT coalesce((SELECT string_agg(type || ' ' || local_id::text || ' ' || deleted::text || ' '
                                   || "values"::text || ' v' || objects.version::text, E'\\n' ORDER BY objects.id)
                             FROM objects WHERE space_id = spaces.id), '')
                   || E'\\nversion ' || spaces.version::text
                   || E'\\nkeys ' || (SELECT count(*) FROM applied_changes WHERE space_id = spaces.id)::text
            FROM spaces WHERE name = \(space)
            """)
        for try await (text) in rows.decode(String.self) { return text }
        return "no space"
    }

    /// Row counts and version totals of every space and user of this test (named with its
    /// space's unique name: the space itself, others it makes, their users and tokens), to show
    /// that a refused request changed nothing of them.
    func databaseTotals() async throws -> String {
        // Only this test's rows: every space and user it makes is named with its space's unique
        // name, and the suites running beside it change the rest of the database meanwhile.
        let mine = space
        let rows = try await client.query(
            """
            WITH my_spaces AS (SELECT id, version FROM spaces WHERE strpos(name, \(mine)) > 0),
                my_users AS (SELECT id FROM users WHERE strpos(name, \(mine)) > 0)
            SELECT 'spaces ' || (SELECT count(*) FROM my_spaces)::text
                || ' versions ' || (SELECT coalesce(sum(version), 0) FROM my_spaces)::text
                || ' objects ' || (SELECT count(*) FROM objects WHERE space_id IN (SELECT id FROM my_spaces))::text
                || ' object versions '
                || (SELECT coalesce(sum(version), 0) FROM objects WHERE space_id IN (SELECT id FROM my_spaces))::text
                || ' keys ' || (SELECT count(*) FROM applied_changes WHERE space_id IN (SELECT id FROM my_spaces))::text
                || ' users ' || (SELECT count(*) FROM my_users)::text
                || ' tokens ' || (SELECT count(*) FROM tokens WHERE user_id IN (SELECT id FROM my_users))::text
            """)
        for try await (text) in rows.decode(String.self) { return text }
        return "nothing"
    }

    /// A request as is, for the refusals the transport would not send.
    func raw(_ method: String, _ path: String, token: String?, body: Data? = nil) async throws -> (Int, String) {
        try await raw(method, path, authorization: token.map { "Bearer \($0)" }, body: body)
    }

    /// A request with an `Authorization` header as given (nil: none).
    func raw(_ method: String, _ path: String, authorization: String?, body: Data? = nil) async throws -> (Int, String)
    {
        var request = URLRequest(url: URL(string: baseURL.absoluteString + path)!)
        request.httpMethod = method
        request.httpBody = body
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}

final class PortBox: Sendable {
    let value = Mutex<Int?>(nil)
}

/// A realm that keeps history, for one device.
func openDevice(_ name: String) async throws -> Realm {
    var configuration = Realm.Configuration(
        identifier: "\(name)-\(UUID())", objectTypes: [Holder.self, Card.self])
    configuration.keepsHistory = true
    return try await Realm.open(configuration)
}

func engine(_ realm: Realm, _ transport: HTTPSyncTransport) async throws -> SyncEngine {
    try await SyncEngine(
        realm: realm, transport: transport, types: [Holder.self, Card.self],
        configuration: .init(maxAttempts: 2, initialBackoff: .milliseconds(10)))
}

/// The cards of a device, as `id name discount owner serverID?` lines.
func cards(_ realm: Realm) async throws -> [String] {
    try await realm.read { realm in
        realm.objects(Card.self).map {
            "\($0.id) \($0.name) \($0.discount) \($0.owner?.id ?? "-") \($0.serverID != nil)"
        }
        .sorted()
    }
}

/// Waits for a condition, for a bounded number of tries (no test asserts on time: the bound
/// only keeps a failing test from hanging).
func eventually(_ condition: () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<400 {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(25))
    }
    return try await condition()
}
