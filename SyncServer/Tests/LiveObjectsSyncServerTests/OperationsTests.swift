import Foundation
import LiveObjectsSync
import LiveObjectsSyncServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What an operator sees: health, metrics, and the database work of idle long polls.
@Suite struct OperationsTests {
    /// Waits until the server listens for notifications (it starts listening a moment after it
    /// accepts connections); fails after many tries, asserting nothing about time.
    func waitUntilListening(_ server: ServerHarness) async throws {
        for _ in 0..<2000 {
            let (_, text) = try await server.raw("GET", "/metrics", token: nil)
            if text.contains("liveobjects_sync_listening 1") { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the server never listened for notifications")
    }

    @Test func healthAndMetricsAnswerWithoutAToken() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let (status, health) = try await server.raw("GET", "/health", token: nil)
        #expect(status == 200 && health.contains(#""status":"ok""#), "\(health)")
        let token = try await server.user("ann", .writer)
        _ = try await server.transport(token).push([
            SyncChange(
                idempotencyKey: "m1", object: SyncObjectID(typeName: "Card", primaryKey: .string("c1")),
                serverID: nil, kind: .create, values: ["name": .value(.string("Bakery"))])
        ])
        _ = try await server.raw("GET", "/v1/spaces/\(server.space)/pull", token: "not-a-token")
        let (metricsStatus, text) = try await server.raw("GET", "/metrics", token: nil)
        #expect(metricsStatus == 200)
        for line in [
            "# TYPE liveobjects_sync_requests_total counter", "liveobjects_sync_pushes_total 1",
            "liveobjects_sync_changes_total 1", "# TYPE liveobjects_sync_waiting_polls gauge",
        ] {
            #expect(text.contains(line + "\n"), "\(line) in:\n\(text)")
        }
        #expect(server.metrics.value(.errors) == 1, "the refused pull")
        #expect(!text.contains(server.space) && !text.contains("Bakery"), "no user data in metrics")
    }

    /// An idle long poll reads the database once, then waits for a notification, however
    /// short the recheck interval; a push to its space wakes it, and it reads once more.
    @Test func anIdleLongPollReadsTheDatabaseOnce() async throws {
        let server = try await ServerHarness.start(http: .init(recheckInterval: .milliseconds(20)))
        defer { Task { await server.stop() } }
        let token = try await server.user("ann", .writer)
        try await waitUntilListening(server)
        let path = "/v1/spaces/\(server.space)/pull"

        let before = server.metrics.value(.pullReads)
        let (status, body) = try await server.raw("GET", path + "?wait=1", token: token)
        #expect(status == 200 && body.contains(#""changes":[]"#), "\(body)")
        #expect(server.metrics.value(.pullReads) - before == 1, "one read for a poll that saw no change")

        let woken = server.metrics.value(.pullReads)
        async let poll = server.raw("GET", path + "?wait=30", token: token)
        for _ in 0..<2000 where server.metrics.waitingPolls == 0 { try await Task.sleep(for: .milliseconds(10)) }
        _ = try await server.transport(token).push([
            SyncChange(
                idempotencyKey: "w1", object: SyncObjectID(typeName: "Card", primaryKey: .string("w")),
                serverID: nil, kind: .create, values: ["name": .value(.string("woken"))])
        ])
        let (_, answer) = try await poll
        #expect(answer.contains("woken"), "\(answer)")
        #expect(server.metrics.value(.pullReads) - woken == 2, "the first read, and one on the notification")
    }
}

extension OperationsTests {
    /// A request to a server process.
    func request(_ base: URL, _ path: String, token: String? = nil) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// SIGTERM to `liveobjects-sync-server serve`: the open long poll is answered (an empty page,
    /// not a cut connection), the process logs its shutdown and exits with status 0.
    @Test func sigtermAnswersOpenPollsAndStopsCleanly() async throws {
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let token = try await harness.user("ann", .reader)
        let process = try await ServerProcess.start()
        for _ in 0..<2000 {
            if try await request(process.baseURL, "/metrics").1.contains("liveobjects_sync_listening 1") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        async let poll = request(process.baseURL, "/v1/spaces/\(harness.space)/pull?wait=60", token: token)
        for _ in 0..<2000 {
            if try await request(process.baseURL, "/metrics").1.contains("liveobjects_sync_waiting_polls 1") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let (status, output) = try await process.terminate()
        let (code, body) = try await poll
        #expect(code == 200 && body.contains(#""changes":[]"#), "\(code) \(body)")
        #expect(status == 0, "\(output)")
        #expect(
            output.contains("shutting down on SIGTERM") && output.contains("1 open long poll(s) answered"), "\(output)")
        #expect(output.contains("stopped"), "\(output)")
    }
}

/// Slow and surplus connections: the timeouts and the bound of `SyncHTTPServer.Configuration`.
@Suite struct ConnectionLimitTests {
    /// A connection that never finishes its request head is closed without an answer; one that
    /// finishes it in time is answered.
    @Test func aConnectionWithoutAWholeRequestHeadIsClosed() async throws {
        let server = try await ServerHarness.start(http: .init(headerTimeout: .milliseconds(300)))
        defer { Task { await server.stop() } }
        let port = try #require(server.baseURL.port)

        let slow = try RawConnection(port: port)
        slow.send("GET /health HTTP/1.1\r\nHost: localhost\r\n")  // no empty line: the head goes on
        let answer = await slow.readUntilClosed()
        #expect(answer == "", "closed, without an answer: \(answer ?? "still open")")
        #expect(server.metrics.value(.timedOutConnections) == 1)

        let prompt = try RawConnection(port: port)
        prompt.send("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        let health = await prompt.readUntilClosed()
        #expect(health?.hasPrefix("HTTP/1.1 200") == true, "\(health ?? "still open")")
    }

    /// A request whose body stops coming is closed after the read timeout; so is a connection
    /// kept idle after its answer past the idle timeout.
    @Test func aStalledBodyAndAnIdleConnectionAreClosed() async throws {
        let server = try await ServerHarness.start(
            http: .init(readTimeout: .milliseconds(300), idleTimeout: .milliseconds(300)))
        defer { Task { await server.stop() } }
        let port = try #require(server.baseURL.port)
        let token = try await server.user("ann", .writer)

        let stalled = try RawConnection(port: port)
        stalled.send(
            "POST /v1/spaces/\(server.space)/push HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"changes\":")
        let cut = await stalled.readUntilClosed()
        #expect(cut != nil && cut?.contains("200 OK") != true, "closed without applying: \(cut ?? "still open")")

        let idle = try RawConnection(port: port)
        idle.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")  // kept alive after the answer
        let answered = await idle.readUntilClosed()
        #expect(answered?.hasPrefix("HTTP/1.1 200") == true, "answered, then closed: \(answered ?? "still open")")
        #expect(server.metrics.value(.timedOutConnections) == 2)
        #expect(try await server.databaseState().hasSuffix("keys 0"), "the cut push applied nothing")
    }

    /// Over the bound, a connection is answered 503 and closed; below it, one is served.
    @Test func overTheBoundAConnectionIsRefused() async throws {
        let server = try await ServerHarness.start(http: .init(headerTimeout: .seconds(120), maximumConnections: 2))
        defer { Task { await server.stop() } }
        let port = try #require(server.baseURL.port)
        let request = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"

        let held = try [RawConnection(port: port), RawConnection(port: port)]
        #expect(await eventually { server.metrics.openConnections == 2 }, "two connections served")
        let surplus = try RawConnection(port: port)
        surplus.send(request)
        let refusal = await surplus.readUntilClosed()
        #expect(refusal?.hasPrefix("HTTP/1.1 503") == true, "\(refusal ?? "still open")")
        #expect(refusal?.contains(#""code":"internal""#) == true, "\(refusal ?? "")")
        #expect(server.metrics.value(.refusedConnections) == 1)

        held[0].hangUp()
        #expect(await eventually { server.metrics.openConnections == 1 }, "one connection left")
        let served = try RawConnection(port: port)
        served.send(request)
        let health = await served.readUntilClosed()
        #expect(health?.hasPrefix("HTTP/1.1 200") == true, "\(health ?? "still open")")
        held[1].hangUp()
    }
}
