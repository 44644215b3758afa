import Foundation
import Hummingbird
import HummingbirdCore
import LiveObjectsJSON
import LiveObjectsSyncProtocol
import Logging
import NIOCore
import PostgresNIO

/// The context of a request: Hummingbird's, with the body size limit of the configuration.
public struct SyncRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The largest body read; ``SyncHTTPServer`` sets its configuration's.
    public var maxUploadSize: Int

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        maxUploadSize = SyncHTTPServer.Configuration().maximumBodySize
    }
}

/// The HTTP side of the server: routes of docs/SYNC-PROTOCOL.md to ``SyncStore``, errors as
/// the protocol's JSON.
public struct SyncHTTPServer: Sendable {
    /// Limits and timing.
    public struct Configuration: Sendable {
        /// The largest request body accepted. Default: 8 MiB.
        public var maximumBodySize: Int
        /// The longest long poll. Default: 60 s.
        public var maximumWait: Duration
        /// How often a long poll re-reads the database while the process is not listening for
        /// notifications (starting, or reconnecting to the database). While it listens, an
        /// idle long poll reads the database once, then waits for a notification. Default: 2 s.
        public var recheckInterval: Duration
        /// How long a new connection has to send a whole request head before it is closed.
        /// Default: 10 s.
        public var headerTimeout: Duration
        /// How long a request's body may pause between two reads before the connection is
        /// closed. Default: 30 s.
        public var readTimeout: Duration
        /// How long a connection is kept after an answer, for its next request head.
        /// Default: 60 s.
        public var idleTimeout: Duration
        /// The most connections served at once; one more is answered 503 (`internal`, try again
        /// later) once its request is read, and closed. Default: 4,000.
        public var maximumConnections: Int

        /// Creates a configuration; every argument has the default documented on its property.
        public init(
            maximumBodySize: Int = SyncProtocolLimits.maximumBodyBytes,
            maximumWait: Duration = .seconds(SyncProtocolLimits.maximumWaitSeconds),
            recheckInterval: Duration = .seconds(2), headerTimeout: Duration = .seconds(10),
            readTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(60), maximumConnections: Int = 4_000
        ) {
            self.maximumBodySize = maximumBodySize
            self.maximumWait = maximumWait
            self.recheckInterval = recheckInterval
            self.headerTimeout = headerTimeout
            self.readTimeout = readTimeout
            self.idleTimeout = idleTimeout
            self.maximumConnections = maximumConnections
        }
    }

    let store: SyncStore
    let notifier: ChangeNotifier
    let configuration: Configuration
    let metrics: SyncMetrics

    /// Creates the HTTP side over a store and this process's notifier, counting into `metrics`.
    public init(
        store: SyncStore, notifier: ChangeNotifier, configuration: Configuration = .init(),
        metrics: SyncMetrics = SyncMetrics()
    ) {
        self.store = store
        self.notifier = notifier
        self.configuration = configuration
        self.metrics = metrics
    }

    /// The HTTP/1.1 server for Hummingbird's `Application`: each connection guarded by the
    /// configuration's timeouts and connection bound (``ConnectionGuard``).
    public var httpServer: HTTPServerBuilder {
        .http1(
            configuration: .init(additionalChannelHandlers: [
                ConnectionGuard(configuration: configuration, metrics: metrics)
            ]))
    }

    /// The responder for Hummingbird's `Application`.
    public var responder: CallbackResponder<SyncRequestContext> {
        CallbackResponder { request, context in
            var context = context
            context.maxUploadSize = configuration.maximumBodySize
            return await respond(to: request, context: context)
        }
    }

    func respond(to request: Request, context: SyncRequestContext) async -> Response {
        let response = await answer(request, context: context)
        metrics.add(.requests)
        if response.status.code >= 400 { metrics.add(.errors) }
        return response
    }

    private func answer(_ request: Request, context: SyncRequestContext) async -> Response {
        do {
            return try await route(request, context: context)
        } catch let error as SyncServerError {
            return Self.errorResponse(error)
        } catch let error as PostgresTransactionError where error.closureError is SyncServerError {
            // A refusal inside a transaction, which was rolled back.
            return Self.errorResponse(error.closureError as! SyncServerError)
        } catch {
            // The route, not the path: a space's name is the users' data, and stays out of logs.
            store.logger.error(
                "request failed",
                metadata: [
                    "method": "\(request.method)", "route": "\(Self.routeName(request.uri.path))",
                    "error": "\(error)",
                ])
            return Self.errorResponse(SyncServerError(.internal, "the server failed; try again later"))
        }
    }

    private func route(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let parts = request.uri.path.split(separator: "/", omittingEmptySubsequences: true).map {
            String($0).removingPercentEncoding ?? String($0)
        }
        guard let version = parts.first else { throw SyncServerError(.notFound, "no route \(request.uri.path)") }
        if parts.count == 1, request.method == .get {
            if version == "health" { return try await health() }
            if version == "metrics" { return metricsText() }
        }
        guard version == "v1" else {
            if version.first == "v", Int(version.dropFirst()) != nil {
                throw SyncServerError(
                    .versionNotSupported, "this server speaks version v1 of the protocol, not \(version)")
            }
            throw SyncServerError(.notFound, "no route \(request.uri.path)")
        }
        if parts.count == 2, parts[1] == "limits", request.method == .get { return try limits() }
        // A space named with NUL cannot exist (PostgreSQL's text has none).
        guard parts.count == 4, parts[1] == "spaces", !parts[2].containsNUL else {
            throw SyncServerError(.notFound, "no route \(request.uri.path)")
        }
        let space = parts[2]
        switch (request.method, parts[3]) {
        case (.post, "push"):
            return try await push(request, space: space, context: context)
        case (.get, "pull"):
            return try await pull(request, space: space)
        case (.post, "objects"):
            return try await objects(request, space: space, context: context)
        default:
            throw SyncServerError(.notFound, "no route \(request.method) \(request.uri.path)")
        }
    }

    /// The limits a client keeps to, so that it refuses a change it could never push before
    /// sending it (docs/SYNC-PROTOCOL.md, "Limits").
    private func limits() throws -> Response {
        let limits = SyncWireLimits(
            maximumBodyBytes: configuration.maximumBodySize, maximumChanges: SyncStore.maximumBatch,
            maximumNameBytes: maximumNameLength, maximumIDBytes: SyncProtocolLimits.maximumIDBytes,
            maximumPageObjects: SyncStore.maximumPage,
            maximumWaitSeconds: configuration.maximumWait.components.seconds)
        return Self.json(limits.json)
    }

    /// 200 when the database answers, 503 when it does not (for a load balancer or an
    /// orchestrator's probe); no token needed, nothing about the data in the answer.
    private func health() async throws -> Response {
        do {
            try await store.ping()
            let state = notifier.isListening ? "listening" : "rechecking"
            return Self.json(Data(#"{"database":"ok","notifications":"\#(state)","status":"ok"}"#.utf8))
        } catch {
            store.logger.warning("health check: the database did not answer: \(error)")
            return Self.json(
                Data(#"{"database":"unreachable","status":"unavailable"}"#.utf8), status: .serviceUnavailable)
        }
    }

    /// The process's counters as Prometheus text.
    private func metricsText() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.prometheusText(listening: notifier.isListening))))
    }

    private static func bearerToken(_ request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let prefix = "Bearer "
        guard header.count > prefix.count, header.lowercased().hasPrefix(prefix.lowercased()) else { return nil }
        return String(header.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
    }

    /// A request's body, at most the upload limit.
    ///
    /// - Throws: ``SyncServerError`` `tooLarge` past the limit.
    private static func body(of request: Request, _ context: SyncRequestContext) async throws -> ByteBuffer {
        do {
            return try await request.body.collect(upTo: context.maxUploadSize)
        } catch is NIOTooManyBytesError {
            throw SyncServerError.tooLarge("the body is larger than \(context.maxUploadSize) bytes")
        }
    }

    private func push(_ request: Request, space: String, context: SyncRequestContext) async throws -> Response {
        let access = try await store.access(token: Self.bearerToken(request), space: space)
        let buffer = try await Self.body(of: request, context)
        let body: PushRequest
        do {
            body = try PushRequest(bytes: Array(buffer: buffer))
        } catch {
            throw SyncServerError(.badRequest, "the body is not a push request: \(error.message)")
        }
        guard body.changes.count <= SyncStore.maximumBatch else {
            throw SyncServerError.tooLarge("a push holds at most \(SyncStore.maximumBatch) changes")
        }
        var keys = Set<String>()
        for change in body.changes {
            try change.validate()
            guard keys.insert(change.key).inserted else {
                throw SyncServerError(.badRequest, "the key \(change.key) appears twice in one push")
            }
        }
        metrics.add(.pushes)
        metrics.add(.changes, body.changes.count)
        let receipts = try await metrics.timingDatabase { try await store.push(body, access: access) }
        return Self.json(SyncWirePushResponse(receipts: receipts).json)
    }

    private func pull(_ request: Request, space: String) async throws -> Response {
        let access = try await store.access(token: Self.bearerToken(request), space: space)
        let query = request.uri.queryParameters
        let (after, floor, walkStart) = try Self.cursor(query.get("after"), access: access)
        var limit = SyncProtocolLimits.defaultPageObjects
        if let text = query.get("limit") {
            guard let value = Int(text), value >= 1 else {
                throw SyncServerError(.badRequest, "limit is a positive integer")
            }
            limit = min(value, SyncStore.maximumPage)
        }
        var wait = Duration.zero
        if let text = query.get("wait") {
            guard let value = Int(text), value >= 0 else {
                throw SyncServerError(.badRequest, "wait is a number of seconds")
            }
            wait = min(.seconds(value), configuration.maximumWait)
        }
        var subscriptions: PullSubscriptions?
        if let text = query.get("subscriptions") {
            let parsed = try PullSubscriptions.parse(text, schema: try await store.schema(for: access))
            try await store.register(parsed.linkPaths, access: access)
            subscriptions = parsed
        }
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var page: SyncStore.Page
        var from = after
        metrics.add(.pulls)
        while true {
            let subscription = wait > .zero ? notifier.subscribe(space: access.spaceID) : nil
            metrics.add(.pullReads)
            page = try await metrics.timingDatabase { [from] in
                try await store.pull(
                    access: access, after: from, limit: limit, walkStart: walkStart, subscriptions: subscriptions)
            }
            let remaining = deadline - clock.now
            if page.objects.isEmpty, page.cursor != from, subscription != nil, remaining > .zero {
                // The rules left the whole page out: a long poll reads on, and answers only with
                // something to send (a client drops an empty answer and waits again).
                subscription?.cancel()
                from = page.cursor
                continue
            }
            // Without waiting, a page the rules left out moves the cursor on: it is the answer.
            guard page.objects.isEmpty, page.cursor == from, remaining > .zero, !notifier.isShuttingDown,
                let subscription
            else {
                subscription?.cancel()
                break
            }
            // Listening, a notification (or the listener stopping) wakes the poll: it reads the
            // database again only then. Not listening, it rechecks by time.
            let listening = notifier.isListening
            let interval = listening ? remaining : min(remaining, configuration.recheckInterval)
            let woken = await metrics.waiting { await subscription.next(within: interval) }
            subscription.cancel()
            // Not woken while listening: the time is up and nothing changed; the empty page
            // read before is still the answer.
            if Task.isCancelled || notifier.isShuttingDown || (!woken && listening) { break }
        }
        // The floor, and the start of a walk from the beginning, matter only while above the cursor.
        var cursorText = "v1.\(page.cursor)"
        if floor > page.cursor || page.walkStart > page.cursor { cursorText += ".\(floor)" }
        if page.walkStart > page.cursor { cursorText += ".\(page.walkStart)" }
        let cursor = JSONValue.string(cursorText)
        var text = "{\"changes\":[" + page.objects.joined(separator: ",") + "],\"cursor\":"
        text += cursor.description + ",\"hasMore\":\(page.hasMore),\"version\":\(page.cursor),"
        text += "\"latestVersion\":\(max(page.latestVersion, page.cursor))}"
        return Self.json(Data(text.utf8))
    }

    /// `POST /v1/spaces/{space}/objects`: the current states of the objects named, those the
    /// user may read (the targets of links a device's subscriptions did not bring).
    private func objects(_ request: Request, space: String, context: SyncRequestContext) async throws -> Response {
        let access = try await store.access(token: Self.bearerToken(request), space: space)
        let buffer = try await Self.body(of: request, context)
        let names = try Self.objectNames(Array(buffer: buffer))
        metrics.add(.pullReads)
        let objects = try await metrics.timingDatabase { try await store.objects(named: names, access: access) }
        return Self.json(Data(("{\"changes\":[" + objects.joined(separator: ",") + "]}").utf8))
    }

    /// The body of an objects request: `{"objects": [{"type": "Board", "id": {"string": "b1"}}]}`,
    /// at most a page's objects.
    static func objectNames(_ bytes: [UInt8]) throws(SyncServerError) -> [SpaceObjectName] {
        func bad(_ reason: String) -> SyncServerError {
            SyncServerError(.badRequest, "the body is not an objects request: \(reason)")
        }
        let json = try JSONValue.canonical(parsing: bytes, "an objects request")
        guard case .array(let entries)? = json.fields?["objects"] else { throw bad("expected {\"objects\": [...]}") }
        guard entries.count <= SyncStore.maximumPage else {
            throw SyncServerError.tooLarge("an objects request names at most \(SyncStore.maximumPage) objects")
        }
        var names: [SpaceObjectName] = []
        for entry in entries {
            guard let name = SpaceObjectName(reference: entry) else {
                throw bad("expected objects such as {\"type\": \"Board\", \"id\": {\"string\": \"b1\"}}")
            }
            names.append(name)
        }
        return names
    }

    /// The route of a path, with the space's name left out: `/v1/spaces/{space}/push`.
    static func routeName(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 4, parts[1] == "spaces" else { return parts.count <= 2 ? path : "(another route)" }
        return "/\(parts[0])/spaces/{space}/\(parts[3])"
    }

    /// A pull's cursor: `v1.N`, the device has every change up to version N, or `v1.N.F`, it
    /// also started from the beginning when the space had compacted its deletions up to F (so
    /// none it misses can concern an object it holds). Absent: the first pull, whose floor is
    /// the space's compacted version now.
    ///
    /// - Throws: ``SyncServerError`` `badRequest` for a cursor this server never gives,
    ///   `resetRequired` (410) for one older than a deletion that compaction removed.
    private static func cursor(_ text: String?, access: SyncStore.Access) throws -> (
        after: Int64, floor: Int64, walkStart: Int64?
    ) {
        guard let text else { return (0, access.compactedVersion, nil) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (2...4).contains(parts.count), parts[0] == "v1",
            let after = Int64(parts[1]), after >= 0,
            let floor = parts.count >= 3 ? Int64(parts[2]) : 0, floor >= 0,
            let walkStart = parts.count == 4 ? Int64(parts[3]) : 0, walkStart >= 0
        else {
            throw SyncServerError(.badRequest, "the cursor \(text) is not one this server gave")
        }
        if after == 0 { return (0, access.compactedVersion, nil) }
        guard access.compactedVersion <= max(after, floor) else {
            throw SyncServerError(
                .resetRequired,
                "the cursor \(text) is older than the deletions the server keeps (from version \(access.compactedVersion)): "
                    + "pull again without a cursor")
        }
        return (after, floor, walkStart)
    }

    /// A response of JSON text.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        json(Data(value.jsonBytes()), status: status)
    }

    static func json(_ data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func errorResponse(_ error: SyncServerError) -> Response {
        let answer = SyncWireErrorResponse(error: SyncWireError(error.code, message: error.message))
        return json(answer.json, status: HTTPResponse.Status(code: error.status))
    }
}
