import Foundation
import LiveObjects
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Testing

@testable import LiveObjectsSync

/// The HTTP/1.1 client over sockets against a scripted loopback server: bodies by length,
/// chunked and to the end of the connection; slow servers, cut answers, oversize answers,
/// cancellation; the transport's requests through it; and its parser fed mutated bytes.
@Suite("Socket HTTP client")
struct SocketHTTPClientTests {
    static func request(_ server: ScriptedHTTPServer, _ path: String = "/x", timeout: Duration = .seconds(20))
        -> SocketHTTPClient.Request
    {
        SocketHTTPClient.Request(
            method: "GET", url: URL(string: "http://127.0.0.1:\(server.port)\(path)")!,
            headers: [("Accept", "application/json")], body: nil, timeout: timeout)
    }

    static func sendExpectingError(
        _ request: SocketHTTPClient.Request, client: SocketHTTPClient = SocketHTTPClient()
    ) async -> SyncHTTPError? {
        do {
            let response = try await client.send(request, name: "GET test")
            Issue.record("expected an error, got status \(response.status) with \(response.body.count) bytes")
            return nil
        } catch let error as SyncHTTPError {
            return error
        } catch {
            Issue.record("expected a SyncHTTPError, got \(error)")
            return nil
        }
    }

    @Test func aBodyByContentLengthWithItsHeaders() async throws {
        let server = try ScriptedHTTPServer { _ in
            [.send(ScriptedHTTPServer.answer(status: 201, #"{"ok":true}"#, headers: ["X-Thing:  a b "]))]
        }
        defer { server.stop() }
        var request = Self.request(server, "/a/b%20c?d=1&e=%26")
        request.method = "POST"
        request.body = Data("hello".utf8)
        let response = try await SocketHTTPClient().send(request, name: "POST test")
        #expect(response.status == 201)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"ok":true}"#)
        #expect(response.header("x-thing") == "a b")
        #expect(response.header("Content-Type") == "application/json")
        var injected = Self.request(server)
        injected.headers.append(("Authorization", "Bearer t\r\nX-Admin: yes"))
        let refused = await Self.sendExpectingError(injected)
        #expect(refused?.code == .badRequest)
        #expect(server.requests.count == 1)
        let seen = try #require(server.requests.first)
        #expect(seen.method == "POST")
        #expect(seen.target == "/a/b%20c?d=1&e=%26")
        #expect(seen.headers["host"] == "127.0.0.1:\(server.port)")
        #expect(seen.headers["accept"] == "application/json")
        #expect(seen.body == Array("hello".utf8))
    }

    @Test func aChunkedBodyInPiecesAndABodyToTheEnd() async throws {
        let chunked = try ScriptedHTTPServer { _ in
            [
                .send(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n".utf8)),
                .pause(.milliseconds(20)),
                .send(Array("7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n".utf8)),
                .pause(.seconds(30)),  // the client has the whole answer: it does not wait for the close
            ]
        }
        defer { chunked.stop() }
        let response = try await SocketHTTPClient().send(Self.request(chunked), name: "GET test")
        #expect(String(decoding: response.body, as: UTF8.self) == "hello, world")

        let untilClose = try ScriptedHTTPServer { _ in
            [
                .send(Array("HTTP/1.0 404 Not Found\r\n\r\nno such".utf8)), .pause(.milliseconds(10)),
                .send(Array(" thing".utf8)),
            ]
        }
        defer { untilClose.stop() }
        let ended = try await SocketHTTPClient().send(Self.request(untilClose), name: "GET test")
        #expect(ended.status == 404)
        #expect(String(decoding: ended.body, as: UTF8.self) == "no such thing")
    }

    @Test func aSlowServerTimesOut() async throws {
        let server = try ScriptedHTTPServer { _ in [.awaitClientClose] }
        defer { server.stop() }
        let error = await Self.sendExpectingError(Self.request(server, timeout: .milliseconds(200)))
        #expect(error?.code == .network)
        #expect(error?.message.contains("timed out") == true)

        // Silence past the idle timeout fails before the request's own.
        var client = SocketHTTPClient()
        client.idleTimeout = .milliseconds(200)
        let idle = await Self.sendExpectingError(Self.request(server), client: client)
        #expect(idle?.code == .network)
        #expect(idle?.message.contains("sent nothing") == true)
    }

    @Test func aConnectionCutInTheBodyIsANetworkError() async throws {
        for cut in [
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"changes\":",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n{\"chan",
            "HTTP/1.1 200 OK\r\nContent-Le", "",
        ] {
            let server = try ScriptedHTTPServer { _ in [.send(Array(cut.utf8)), .close] }
            defer { server.stop() }
            let error = await Self.sendExpectingError(Self.request(server))
            #expect(error?.code == .network, "\(cut.debugDescription): \(String(describing: error))")
        }
    }

    @Test func aCutPushAnswerAppliesNothing() async throws {
        let server = try ScriptedHTTPServer { request in
            if request.target.contains("/push") {
                return [.send(Array("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"receipts\":[{".utf8)), .close]
            }
            return [.send(ScriptedHTTPServer.answer(#"{"changes":[],"cursor":null,"hasMore":false}"#))]
        }
        defer { server.stop() }
        let realm = try await openSyncRealm("cut-push")
        let transport = HTTPSyncTransport(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, space: "s", client: .sockets
            ) { _ in "t" })
        let sleeps = SleepRecorder()
        let engine = try await SyncEngine(
            realm: realm, transport: transport, types: [Holder.self, Card.self],
            configuration: .init(maxAttempts: 2, sleep: sleeps.sleep))
        try await realm.write { r in _ = try r.create(Card.self, value: ["id": "c1", "name": "Mine"]) }
        _ = try? await engine.push()
        #expect(server.requests.contains { $0.target.hasSuffix("/push") })
        #expect(await engine.status(of: card("c1")) != .synced)
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c1")?.name } == "Mine")
    }

    @Test func anOversizeAnswerIsRefused() async throws {
        var client = SocketHTTPClient()
        client.maxResponseBytes = 1000
        let big = String(repeating: "x", count: 5000)
        for answer in [
            ScriptedHTTPServer.answer(big),
            Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1388\r\n\(big)\r\n0\r\n\r\n".utf8),
            Array("HTTP/1.1 200 OK\r\n\r\n\(big)".utf8),
        ] {
            let server = try ScriptedHTTPServer { _ in [.send(answer)] }
            defer { server.stop() }
            let error = await Self.sendExpectingError(Self.request(server), client: client)
            #expect(error?.code == .invalidResponse)
            #expect(error?.message.contains("larger than 1000 bytes") == true, "\(String(describing: error))")
        }
        let server = try ScriptedHTTPServer { _ in [.send(ScriptedHTTPServer.answer(String(big.prefix(1000))))] }
        defer { server.stop() }
        #expect(try await client.send(Self.request(server), name: "GET test").body.count == 1000)
    }

    @Test func cancellingTheTaskEndsTheRequest() async throws {
        // The server answers nothing until the client closes the connection, so only the
        // cancellation can end the request (no race with a pause however slow the machine is;
        // without it the request would end by its timeout, a different error).
        let server = try ScriptedHTTPServer { _ in [.awaitClientClose] }
        defer { server.stop() }
        let request = Self.request(server, timeout: .seconds(600))
        let task = Task { try await SocketHTTPClient().send(request, name: "GET test") }
        #expect(await eventually { server.requests.count == 1 })
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(await eventually { server.closesSeen == 1 })
    }

    @Test(arguments: [HTTPSyncTransport.Configuration.Client.sockets, .urlSession])
    func theTransportSpeaksTheProtocol(client: HTTPSyncTransport.Configuration.Client) async throws {
        let pull =
            #"{"changes":[{"object":{"type":"Card","id":{"string":"c1"}},"serverID":"7","serverVersion":3,"#
            + #""deleted":false,"values":{"name":{"string":"Remote"}}}],"cursor":"v1.3","hasMore":false}"#
        let server = try ScriptedHTTPServer { request in
            switch (request.method, request.headers["authorization"]) {
            case (_, "Bearer stale"):
                return [
                    .send(ScriptedHTTPServer.answer(status: 401, #"{"error":{"code":"unauthorized","message":"x"}}"#))
                ]
            case ("POST", _):
                return [
                    .send(
                        ScriptedHTTPServer.answer(
                            status: 403, #"{"error":{"code":"forbidden","message":"user ann may only read"}}"#))
                ]
            default:
                return [.pause(.milliseconds(50)), .send(ScriptedHTTPServer.answer(pull))]
            }
        }
        defer { server.stop() }
        let tokens = TokenSequence()
        let transport = HTTPSyncTransport(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(server.port)/base/")!, space: "team a", client: client
            ) { refresh in await tokens.next(refresh) })
        #expect(transport.configuration.usesSockets == (client == .sockets))

        let page = try await transport.pull(after: "v1.1")
        #expect(page.cursor == "v1.3")
        #expect(page.changes.map(\.object) == [card("c1")])
        #expect(page.changes.first?.values["name"] == .value(.string("Remote")))
        #expect(await tokens.refreshes == 1)
        #expect(try await transport.waitForChanges(after: "v1.1"))
        let targets = server.requests.map(\.target)
        #expect(targets.contains("/base/v1/spaces/team%20a/pull?limit=500&after=v1.1"))
        #expect(targets.contains("/base/v1/spaces/team%20a/pull?limit=1&after=v1.1&wait=25"))

        let error = await #expect(throws: SyncHTTPError.self) { try await transport.push([]) }
        #expect(error?.code == .forbidden)
        #expect(error?.status == 403)
        #expect(server.requests.last?.headers["content-type"] == "application/json")
    }

    @Test(arguments: [HTTPSyncTransport.Configuration.Client.sockets, .urlSession])
    func anUnreachableServerIsANetworkError(client: HTTPSyncTransport.Configuration.Client) async throws {
        // Port 9 on loopback (discard) refuses connections on a machine that runs no such service.
        let transport = HTTPSyncTransport(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:9")!, space: "s", requestTimeout: .seconds(5), client: client
            ) { _ in "t" })
        let error = await #expect(throws: SyncHTTPError.self) { try await transport.pull(after: nil) }
        #expect(error?.code == .network)
    }

    @Test func httpsStaysOnURLSession() {
        let configuration = HTTPSyncTransport.Configuration(
            baseURL: URL(string: "https://sync.example.com")!, space: "s", client: .sockets
        ) { _ in "t" }
        #expect(!configuration.usesSockets)
        let automatic = HTTPSyncTransport.Configuration(baseURL: URL(string: "http://h")!, space: "s") { _ in "t" }
        #if os(Linux)
            #expect(automatic.usesSockets)
        #else
            #expect(!automatic.usesSockets)
        #endif
    }

    /// Valid answers split at random points parse to the same answer; mutated ones (bytes
    /// flipped, dropped, inserted, cut) never trap and give an answer or a typed failure.
    @Test func theParserSurvivesMutatedAnswers() throws {
        let seed = TestEnvironment.seed("SYNC_SEED") ?? 0x5EED_0027
        print("HTTP parser mutations: seed \(seed) (SYNC_SEED replays it)")
        var rng = SeededRandomNumberGenerator(seed: seed)
        let bodies = ["", #"{"changes":[],"cursor":null,"hasMore":false}"#, String(repeating: "é", count: 300)]
        var parsed = 0
        var refused = 0
        for round in 0..<600 {
            let body = bodies[Int(rng.next() % UInt64(bodies.count))]
            let chunked = rng.next() % 2 == 0
            var bytes = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n".utf8)
            let bodyBytes = Array(body.utf8)
            if chunked {
                bytes += Array("Transfer-Encoding: chunked\r\n\r\n".utf8)
                var offset = 0
                while offset < bodyBytes.count {
                    let piece = bodyBytes[offset..<min(bodyBytes.count, offset + Int(rng.next() % 100) + 1)]
                    bytes += Array((String(piece.count, radix: 16) + "\r\n").utf8) + piece + [13, 10]
                    offset += piece.count
                }
                bytes += Array("0\r\n\r\n".utf8)
            } else {
                bytes += Array("Content-Length: \(bodyBytes.count)\r\n\r\n".utf8) + bodyBytes
            }
            let mutated = round % 3 != 0
            var operations: [String] = []
            if mutated {
                for _ in 0..<(Int(rng.next() % 4) + 1) where !bytes.isEmpty {
                    let at = Int(rng.next() % UInt64(bytes.count))
                    switch rng.next() % 4 {
                    case 0:
                        bytes[at] ^= UInt8(1 << (rng.next() % 8))
                        operations.append("flip \(at)")
                    case 1:
                        bytes.remove(at: at)
                        operations.append("drop \(at)")
                    case 2:
                        let byte = [UInt8(13), 10, 48, 58, 59, 0xFF][Int(rng.next() % 6)]
                        bytes.insert(byte, at: at)
                        operations.append("insert \(byte) at \(at)")
                    default:
                        bytes.removeSubrange(at...)
                        operations.append("cut at \(at)")
                    }
                }
            }
            var parser = HTTPResponseParser(maxBodyBytes: 4096)
            var response: SocketHTTPClient.Response?
            var failure: HTTPResponseParser.Failure?
            var offset = 0
            do {
                while offset < bytes.count, response == nil {
                    let size = Int(rng.next() % 64) + 1
                    response = try parser.feed(bytes[offset..<min(bytes.count, offset + size)])
                    offset += size
                }
                if response == nil { response = try parser.finish() }
            } catch let error as HTTPResponseParser.Failure {
                failure = error
            }
            let context =
                "seed \(seed), round \(round), operations \(operations): \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)"
            #expect((response == nil) != (failure == nil), "\(context)")
            if let failure { #expect(!failure.message.isEmpty, "\(context)") }
            if !mutated {
                #expect(response?.status == 200, "\(context)")
                #expect(response?.body == Array(body.utf8), "\(context)")
            }
            if response != nil { parsed += 1 } else { refused += 1 }
        }
        #expect(parsed > 0 && refused > 0)
    }
}

/// Gives `stale` first, then `fresh` once asked to refresh.
actor TokenSequence {
    private(set) var refreshes = 0
    func next(_ refresh: Bool) -> String {
        if refresh { refreshes += 1 }
        return refreshes == 0 ? "stale" : "fresh"
    }
}
