import Synchronization

/// Counters of one server process, served as Prometheus text at `GET /metrics`.
///
/// Counters only go up; a scraper takes their rates. They count requests and work, never what
/// a request carried (no user, space or object names).
public final class SyncMetrics: Sendable {
    /// What is counted.
    public enum Counter: String, CaseIterable, Sendable {
        /// HTTP requests answered, whatever their outcome.
        case requests = "liveobjects_sync_requests_total"
        /// Requests answered with an error status (4xx or 5xx).
        case errors = "liveobjects_sync_request_errors_total"
        /// Push requests answered.
        case pushes = "liveobjects_sync_pushes_total"
        /// Changes received in push requests.
        case changes = "liveobjects_sync_changes_total"
        /// Pull requests answered (long polls included).
        case pulls = "liveobjects_sync_pulls_total"
        /// Reads of the database made for pulls: one per pull, and one more each time a long
        /// poll wakes (a change in its space, or the listener reconnecting).
        case pullReads = "liveobjects_sync_pull_reads_total"
        /// Microseconds spent waiting for the database in pushes and pulls.
        case databaseMicroseconds = "liveobjects_sync_database_microseconds_total"
        /// Connections answered 503 because the server had as many as it serves.
        case refusedConnections = "liveobjects_sync_refused_connections_total"
        /// Connections closed for being too slow: no request head in time, a body that
        /// stalled, or idle too long between requests.
        case timedOutConnections = "liveobjects_sync_timed_out_connections_total"

        var index: Int { Self.allCases.firstIndex(of: self)! }

        var help: String {
            switch self {
            case .requests: "HTTP requests answered."
            case .errors: "HTTP requests answered with an error status."
            case .pushes: "Push requests answered."
            case .changes: "Changes received in push requests."
            case .pulls: "Pull requests answered, long polls included."
            case .pullReads: "Database reads made for pulls."
            case .databaseMicroseconds: "Microseconds spent in the database for pushes and pulls."
            case .refusedConnections: "Connections refused with 503 at the connection bound."
            case .timedOutConnections: "Connections closed for a request head, body or next request too slow."
            }
        }
    }

    private let counters = Mutex([Int](repeating: 0, count: Counter.allCases.count))
    private let openPolls = Atomic<Int>(0)
    private let connections = Atomic<Int>(0)

    /// Creates counters at zero.
    public init() {}

    /// The value of a counter.
    public func value(_ counter: Counter) -> Int {
        counters.withLock { $0[counter.index] }
    }

    /// The long polls waiting now.
    public var waitingPolls: Int { openPolls.load(ordering: .relaxed) }

    /// The connections served now (not those being refused).
    public var openConnections: Int { connections.load(ordering: .relaxed) }

    /// Counts one more connection served if there are fewer than `maximum`.
    func admitConnection(maximum: Int) -> Bool {
        var current = connections.load(ordering: .relaxed)
        while current < maximum {
            let (exchanged, original) = connections.compareExchange(
                expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Counts a connection served as closed.
    func releaseConnection() { connections.subtract(1, ordering: .relaxed) }

    func add(_ counter: Counter, _ amount: Int = 1) {
        counters.withLock { $0[counter.index] &+= amount }
    }

    /// Counts a long poll as waiting while `body` runs.
    func waiting<T>(_ body: () async throws -> T) async rethrows -> T {
        openPolls.wrappingAdd(1, ordering: .relaxed)
        defer { openPolls.wrappingSubtract(1, ordering: .relaxed) }
        return try await body()
    }

    /// Measures the database time of `body`.
    func timingDatabase<T>(_ body: () async throws -> T) async rethrows -> T {
        let clock = ContinuousClock()
        let start = clock.now
        defer {
            let elapsed = clock.now - start
            let (seconds, attoseconds) = elapsed.components
            add(.databaseMicroseconds, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
        }
        return try await body()
    }

    /// The counters in Prometheus's text format (version 0.0.4).
    public func prometheusText(listening: Bool) -> String {
        var text = ""
        for counter in Counter.allCases {
            text += "# HELP \(counter.rawValue) \(counter.help)\n"
            text += "# TYPE \(counter.rawValue) counter\n"
            text += "\(counter.rawValue) \(value(counter))\n"
        }
        text += "# HELP liveobjects_sync_waiting_polls Long polls waiting for a change.\n"
        text += "# TYPE liveobjects_sync_waiting_polls gauge\n"
        text += "liveobjects_sync_waiting_polls \(waitingPolls)\n"
        text += "# HELP liveobjects_sync_open_connections Connections served now.\n"
        text += "# TYPE liveobjects_sync_open_connections gauge\n"
        text += "liveobjects_sync_open_connections \(openConnections)\n"
        text +=
            "# HELP liveobjects_sync_listening Whether the process listens for changes (1) or rechecks by time (0).\n"
        text += "# TYPE liveobjects_sync_listening gauge\n"
        text += "liveobjects_sync_listening \(listening ? 1 : 0)\n"
        return text
    }
}
