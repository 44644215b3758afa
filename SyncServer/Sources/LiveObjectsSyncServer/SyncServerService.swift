import Dispatch
import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO

/// A whole server: the database client, the schema brought up to date, the notification
/// listener and the HTTP application, run until the task is cancelled.
public struct SyncServerService: Sendable {
    /// Where the database is.
    public var database: DatabaseConfiguration
    /// The address to listen on.
    public var host: String
    /// The port to listen on; 0 picks a free one (reported to `onListening`).
    public var port: Int
    /// Limits and timing of the HTTP side.
    public var http: SyncHTTPServer.Configuration
    /// The logger.
    public var logger: Logger
    /// The process's counters, served at `GET /metrics`.
    public var metrics: SyncMetrics
    /// Whether SIGTERM and SIGINT shut the server down gracefully: it stops accepting
    /// connections, answers the open long polls at once, lets requests in flight (pushes)
    /// finish, logs each step, and ``run(onListening:)`` returns. Off by default (a test or an
    /// embedding app stops the server by cancelling its task); the command line's `serve` sets it.
    public var stopsOnSignals = false

    /// Creates a server description.
    public init(
        database: DatabaseConfiguration, host: String = "127.0.0.1", port: Int = 8080,
        http: SyncHTTPServer.Configuration = .init(), logger: Logger = Logger(label: "liveobjects-sync-server"),
        metrics: SyncMetrics = SyncMetrics()
    ) {
        self.database = database
        self.host = host
        self.port = port
        self.http = http
        self.logger = logger
        self.metrics = metrics
    }

    /// Runs the server until the task is cancelled.
    ///
    /// - Parameter onListening: Called with the port once the server accepts connections.
    /// - Throws: A database error when the database cannot be reached or migrated.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let client = PostgresClient(configuration: database.clientConfiguration, backgroundLogger: logger)
        let notifier = ChangeNotifier()
        let logger = logger
        try await withThrowingTaskGroup(of: Void.self) { group in
            await Self.start(client, in: &group)
            group.addTask { await notifier.run(database, logger: logger) }
            let store = SyncStore(client: client, logger: logger)
            do {
                try await store.migrate()
            } catch {
                group.cancelAll()
                throw SyncServerError(
                    .internal, "the database \(database) cannot be used: \(String(reflecting: error))")
            }
            let server = SyncHTTPServer(store: store, notifier: notifier, configuration: http, metrics: metrics)
            // A long backlog: a burst of connections waits in the kernel's queue (which caps it,
            // `somaxconn`) until accepted, then each is served or refused with an answer.
            let application = Application(
                responder: server.responder, server: server.httpServer,
                configuration: .init(
                    address: .hostname(host, port: port), serverName: "liveobjects-sync-server", backlog: 4_096),
                onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
                logger: logger)
            if stopsOnSignals {
                let signals = Self.onTermination { signal in
                    let polls = notifier.shutDown()
                    logger.notice(
                        "shutting down on \(signal): no new connections, \(polls) open long poll(s) answered, requests in flight finish"
                    )
                }
                group.addTask {
                    defer { signals.forEach { $0.cancel() } }
                    try await application.runService()
                    logger.notice("stopped")
                }
            } else {
                group.addTask { try await application.run() }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Calls `handler` on SIGTERM and SIGINT (the application's own handlers, which start the
    /// graceful shutdown of the HTTP server, hear them too).
    private static func onTermination(_ handler: @escaping @Sendable (String) -> Void) -> [any DispatchSourceSignal] {
        [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")].map { number, name in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { handler(name) }
            source.resume()
            return source
        }
    }

    /// Runs one command against the database (the account commands of the command line).
    public func withStore<Result: Sendable>(_ body: @Sendable (SyncStore) async throws -> Result) async throws -> Result
    {
        let client = PostgresClient(configuration: database.clientConfiguration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            await Self.start(client, in: &group)
            defer { group.cancelAll() }
            let store = SyncStore(client: client, logger: logger)
            try await store.migrate()
            return try await body(store)
        }
    }

    /// Starts the client's connection pool in the group, and returns once its task is about to
    /// call `run()`: a query issued before `run()` waits for it all the same, but logs a
    /// warning that every command of the command line would print.
    private static func start(_ client: PostgresClient, in group: inout ThrowingTaskGroup<Void, any Error>) async {
        let (started, signal) = AsyncStream<Void>.makeStream()
        group.addTask {
            signal.finish()
            await client.run()
        }
        for await _ in started {}
    }
}
