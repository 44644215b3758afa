import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSyncProtocol

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``SyncTransport`` that talks to a sync server over HTTP, with the protocol of
/// docs/SYNC-PROTOCOL.md (`liveobjects-sync-server` speaks it): on Foundation's `URLSession`, or
/// on Linux for `http://` servers on a small HTTP/1.1 client over sockets that waits without
/// using the processor (``Configuration/client``).
///
/// ```swift
/// let transport = HTTPSyncTransport(
///     configuration: .init(baseURL: URL(string: "https://sync.example.com")!, space: "team") { refresh in
///         try await session.token(refreshing: refresh)     // the app's sign-in
///     })
/// let engine = try await SyncEngine(realm: realm, transport: transport, types: [Holder.self, Card.self])
/// let live = Task { await engine.syncContinuously() }    // a long poll hears other devices
/// ```
///
/// Every refusal and failure is a ``SyncHTTPError``; the engine retries with its backoff. A 401
/// asks the token provider for a fresh token (`refresh` true) and tries the request once more.
/// A pull asks for one page at a time (``Configuration/pageSize``); the engine pulls again
/// while the server says it has more.
public struct HTTPSyncTransport: LiveSyncTransport {
    /// Gives the bearer token of a request: `refresh` is true after the server refused the last
    /// one (HTTP 401), when a new one should be fetched rather than a cached one returned.
    public typealias TokenProvider = @Sendable (_ refresh: Bool) async throws -> String

    /// Where the server is and how long to wait for it.
    public struct Configuration: Sendable {
        /// The server's base URL: requests go to `baseURL/v1/spaces/{space}/…`.
        public var baseURL: URL
        /// The space this device syncs.
        public var space: String
        /// The bearer token of each request.
        public var token: TokenProvider
        /// How long a request may take (a long poll gets ``longPollWait`` more). Default: 30 s.
        public var requestTimeout: Duration
        /// How long the server holds a long poll open when nothing changes. Default: 25 s; the
        /// server caps it at 60 s.
        public var longPollWait: Duration
        /// The most objects asked for in one pull. Default: 500; the server caps it at 1,000.
        public var pageSize: Int
        /// What sends the requests. Default: ``Client/automatic``.
        public var client: Client

        /// What sends the requests of a transport.
        public enum Client: Sendable, Hashable {
            /// ``sockets`` on Linux for an `http://` base URL, ``urlSession`` otherwise:
            /// FoundationNetworking's `URLSession` keeps a core busy while it waits for an answer
            /// on Linux, a long poll included.
            case automatic
            /// Foundation's `URLSession` (the only one for `https://`).
            case urlSession
            /// The package's HTTP/1.1 client over POSIX sockets: `http://` only, one connection
            /// per request, sleeping in `poll()` while it waits. An `https://` base URL falls back
            /// to `URLSession`.
            case sockets
        }

        /// Creates a configuration; every argument has the default documented on its property.
        public init(
            baseURL: URL, space: String, requestTimeout: Duration = .seconds(30), longPollWait: Duration = .seconds(25),
            pageSize: Int = 500, client: Client = .automatic, token: @escaping TokenProvider
        ) {
            self.baseURL = baseURL
            self.space = space
            self.token = token
            self.requestTimeout = requestTimeout
            self.longPollWait = longPollWait
            self.pageSize = max(1, pageSize)
            self.client = client
        }

        /// Whether requests go through the socket client rather than `URLSession`.
        var usesSockets: Bool {
            guard baseURL.scheme?.lowercased() == "http" else { return false }
            switch client {
            case .sockets: return true
            case .urlSession: return false
            case .automatic:
                #if os(Linux)
                    return true
                #else
                    return false
                #endif
            }
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private let session: URLSession
    private let limitsBox = LimitsBox()

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - configuration: The server, the space, the token and the timeouts.
    ///   - session: The URL session requests go through when ``Configuration/client`` picks
    ///     `URLSession`. Default: a new ephemeral session
    ///     without a URL cache.
    public init(configuration: Configuration, session: URLSession? = nil) {
        self.configuration = configuration
        self.session = session ?? Self.defaultSession()
    }

    /// An ephemeral session without a URL cache: nothing of the protocol is cacheable, and on
    /// Linux a cancelled request of a session with a cache can stop the process inside
    /// FoundationNetworking (a race in its task registry).
    static func defaultSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }

    /// Creates a transport with a token that never changes.
    public init(baseURL: URL, space: String, token: String) {
        self.init(configuration: Configuration(baseURL: baseURL, space: space) { _ in token })
    }

    // MARK: SyncTransport

    /// Sends changes (`POST /v1/spaces/{space}/push`).
    ///
    /// - Returns: One receipt per change.
    /// - Throws: ``SyncHTTPError``.
    public func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
        let body: Data
        do {
            body = Data(try WirePushRequest(changes: changes.map(WireChange.init)).jsonBytes())
        } catch {
            throw SyncHTTPError(.badRequest, "a change cannot be encoded: \(error)")
        }
        let response: SyncWirePushResponse = try await send("POST", "push", query: [], body: body)
        var receipts: [SyncReceipt] = []
        for receipt in response.receipts { receipts.append(try receipt.receipt()) }
        return receipts
    }

    /// Fetches one page of the changes after a cursor (`GET /v1/spaces/{space}/pull`).
    ///
    /// - Throws: ``SyncHTTPError``.
    public func pull(after cursor: String?) async throws -> SyncPull {
        try await pull(after: cursor, limit: configuration.pageSize, wait: nil).pull
    }

    /// Fetches one page of the changes after a cursor that match subscriptions (the parameter
    /// `subscriptions` of `GET /v1/spaces/{space}/pull`); nil: the whole space.
    ///
    /// - Throws: ``SyncHTTPError``.
    public func pull(after cursor: String?, subscriptions: [SyncSubscription]?) async throws -> SyncPull {
        try await pull(after: cursor, limit: configuration.pageSize, wait: nil, subscriptions: subscriptions).pull
    }

    /// Fetches the current states of objects (`POST /v1/spaces/{space}/objects`), at most a
    /// page's worth per request.
    ///
    /// - Throws: ``SyncHTTPError``.
    public func objects(_ ids: [SyncObjectID]) async throws -> [ServerChange] {
        var found: [ServerChange] = []
        var start = 0
        while start < ids.count {
            let part = ids[start..<min(ids.count, start + configuration.pageSize)]
            start += part.count
            let names: [JSONValue]
            do {
                names = try part.map { (id) throws(SyncWireFormatError) in
                    .object([
                        (key: "id", value: try WireValue(id.primaryKey).json()),
                        (key: "type", value: .string(id.typeName)),
                    ])
                }
            } catch {
                throw SyncHTTPError(.badRequest, "an object id cannot be encoded: \(error)")
            }
            let body = Data(JSONValue.object([(key: "objects", value: .array(names))]).jsonBytes())
            let answer: WireObjectsResponse = try await send("POST", "objects", query: [], body: body)
            found += answer.changes.map(\.change)
        }
        return found
    }

    /// Holds a long poll open until the server has changes after the cursor or the wait ends.
    ///
    /// - Returns: Whether the server has changes after the cursor.
    /// - Throws: ``SyncHTTPError``; `CancellationError` when the task is cancelled.
    public func waitForChanges(after cursor: String?) async throws -> Bool {
        try await !pull(after: cursor, limit: 1, wait: configuration.longPollWait).changes.isEmpty
    }

    private func pull(
        after cursor: String?, limit: Int, wait: Duration?, subscriptions: [SyncSubscription]? = nil
    ) async throws -> WirePullResponse {
        var query = [URLQueryItem(name: "limit", value: String(limit))]
        if let cursor { query.append(URLQueryItem(name: "after", value: cursor)) }
        if let wait { query.append(URLQueryItem(name: "wait", value: String(wait.components.seconds))) }
        if let subscriptions {
            query.append(URLQueryItem(name: "subscriptions", value: SyncSubscription.wireText(subscriptions)))
        }
        return try await send("GET", "pull", query: query, body: nil, extraTime: wait ?? .zero)
    }

    // MARK: Requests

    /// The URL of a request of this space (the space's name percent-encoded, `/` included).
    func url(_ endpoint: String, query: [URLQueryItem]) -> URL {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/")
        let space = configuration.space.addingPercentEncoding(withAllowedCharacters: allowed) ?? configuration.space
        guard var components = URLComponents(url: configuration.baseURL, resolvingAgainstBaseURL: false) else {
            return configuration.baseURL
        }
        var base = components.percentEncodedPath
        while base.hasSuffix("/") { base.removeLast() }
        components.percentEncodedPath = base + "/v1/spaces/" + space + "/" + endpoint
        // Every character but the unreserved ones percent-encoded (a subscription's text holds
        // `&`, `=`, `+` and quotes, which a query string would read otherwise).
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        components.percentEncodedQueryItems =
            query.isEmpty
            ? nil
            : query.map {
                URLQueryItem(
                    name: $0.name, value: $0.value?.addingPercentEncoding(withAllowedCharacters: unreserved))
            }
        return components.url ?? configuration.baseURL
    }

    /// The server's limits (`GET /v1/limits`), asked once per transport and its copies; none
    /// from a server that does not advertise them (404).
    ///
    /// - Throws: ``SyncHTTPError`` when the server cannot be asked (asked again next time).
    public func limits() async throws -> SyncLimits {
        if let known = limitsBox.value.withLock({ $0 }) { return known }
        var components = URLComponents(url: configuration.baseURL, resolvingAgainstBaseURL: false)
        var base = components?.percentEncodedPath ?? ""
        while base.hasSuffix("/") { base.removeLast() }
        components?.percentEncodedPath = base + "/v1/limits"
        let limits: SyncLimits
        do {
            let answer: SyncWireLimits = try await send("GET", url: components?.url ?? configuration.baseURL, body: nil)
            limits = answer.limits
        } catch let error as SyncHTTPError where error.status == 404 {
            limits = SyncLimits()
        }
        limitsBox.value.withLock { $0 = limits }
        return limits
    }

    private func send<Answer: WireAnswer>(
        _ method: String, _ endpoint: String, query: [URLQueryItem], body: Data?, extraTime: Duration = .zero
    ) async throws -> Answer {
        try await send(method, url: url(endpoint, query: query), body: body, extraTime: extraTime)
    }

    private func send<Answer: WireAnswer>(
        _ method: String, url: URL, body: Data?, extraTime: Duration = .zero
    ) async throws -> Answer {
        let name = "\(method) \(url.path)"
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = Self.seconds(configuration.requestTimeout + extraTime)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        var refreshed = false
        while true {
            let token: String
            do {
                token = try await configuration.token(refreshed)
            } catch {
                throw SyncHTTPError(.unauthorized, "the token provider failed: \(error)", request: name)
            }
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (data, status) =
                configuration.usesSockets
                ? try await performOverSockets(request, name) : try await perform(request, name)
            if status == 401 && !refreshed {
                refreshed = true
                continue
            }
            guard status == 200 else { throw Self.error(status: status, body: data, request: name) }
            do {
                return try Answer(json: JSONValue(wire: data))
            } catch {
                throw SyncHTTPError(
                    .invalidResponse, "the answer is not the protocol's: \(error)", status: status, request: name)
            }
        }
    }

    /// The error of a refused request, from its body when the body has the protocol's form.
    static func error(status: Int, body: Data, request: String?) -> SyncHTTPError {
        if let json = try? JSONValue(wire: body), let answer = try? SyncWireErrorResponse(json: json) {
            return SyncHTTPError(
                SyncHTTPError.Code(rawValue: answer.error.code), answer.error.message, status: status, request: request)
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        return SyncHTTPError(
            SyncErrorCode(forStatus: status), text.isEmpty ? "HTTP status \(status)" : text, status: status,
            request: request)
    }

    /// Runs a request with the socket client; cancelling the task closes its connection.
    private func performOverSockets(_ request: URLRequest, _ name: String) async throws -> (Data, Int) {
        let timeout = request.timeoutInterval
        let socketRequest = SocketHTTPClient.Request(
            method: request.httpMethod ?? "GET", url: request.url ?? configuration.baseURL,
            headers: (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
            body: request.httpBody, timeout: .milliseconds(Int64(timeout * 1000)))
        var client = SocketHTTPClient()
        client.connectTimeout = min(client.connectTimeout, configuration.requestTimeout)
        let response = try await client.send(socketRequest, name: name)
        return (Data(response.body), response.status)
    }

    /// Runs a request; cancelling the task cancels it.
    private func perform(_ request: URLRequest, _ name: String) async throws -> (Data, Int) {
        let box = RequestBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, Int), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        if (error as? URLError)?.code == .cancelled {
                            continuation.resume(throwing: CancellationError())
                        } else {
                            continuation.resume(
                                throwing: SyncHTTPError(.network, error.localizedDescription, request: name))
                        }
                        return
                    }
                    guard let http = response as? HTTPURLResponse else {
                        continuation.resume(
                            throwing: SyncHTTPError(.invalidResponse, "not an HTTP response", request: name))
                        return
                    }
                    continuation.resume(returning: (data ?? Data(), http.statusCode))
                }
                if box.start(task) {
                    task.resume()
                } else {
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            box.cancel()
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// The limits a server advertised, shared by the copies of a transport.
private final class LimitsBox: Sendable {
    let value = Locked<SyncLimits?>(nil)
}

/// The task of one request, so that a cancellation from another thread can reach it.
private final class RequestBox: Sendable {
    private struct State {
        // URLSessionDataTask is not Sendable: it is only resumed and cancelled, under the lock.
        nonisolated(unsafe) var task: URLSessionDataTask?
        var isCancelled = false
    }

    private let state = Locked(State())

    /// Keeps the task; false when the request was cancelled before it started (the task is
    /// then never resumed, so its handler never runs).
    func start(_ task: URLSessionDataTask) -> Bool {
        state.withLock { state in
            if state.isCancelled { return false }
            state.task = task
            return true
        }
    }

    func cancel() {
        state.withLock { state in
            state.isCancelled = true
            state.task?.cancel()
        }
    }
}

/// An answer of the server, read from its JSON.
private protocol WireAnswer {
    init(json: JSONValue) throws(SyncWireFormatError)
}

extension SyncWirePushResponse: WireAnswer {}
extension SyncWireLimits: WireAnswer {}
extension WirePullResponse: WireAnswer {}
extension WireObjectsResponse: WireAnswer {}
