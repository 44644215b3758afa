import Foundation
import LiveObjectsSync
import LiveObjectsSyncServer
import Testing

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
