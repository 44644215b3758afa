import Foundation
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import Testing

extension SyncServerTests {
    @Test func missingWrongExpiredAndRevokedTokensAre401AndChangeNothing() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let annToken = try await server.user("ann", .writer)
        let ann = try await openDevice("ann")
        let annEngine = try await engine(ann, server.transport(annToken))
        try await ann.write { r in _ = try r.create(Card.self, value: ["id": "c1", "name": "Bakery"]) }
        #expect(try await annEngine.sync().pushed == 1)

        // An expired token: made with a moment in the past (what the passing of time does to a
        // token made with --expires-in); a revoked one; a token that expires next year works.
        let expiredUser = "eve-\(server.space)"
        let expired = try await server.withStore { store in
            try await store.addUser(expiredUser, expiry: .at(Date(timeIntervalSinceNow: -60)))
        }
        try await server.withStore { [space = server.space] in
            try await $0.grant(user: expiredUser, space: space, role: .admin)
        }
        let revoked = try await server.user("rev", .admin)
        let revokedCount = try await server.withStore { [space = server.space] in
            try await $0.revokeTokens(of: "rev-\(space)")
        }
        #expect(revokedCount == 1)
        let lasting = try await server.withStore { store in
            try await store.addUser("liv-\(server.space)", expiry: .after(seconds: 366 * 86_400))
        }
        try await server.withStore { [space = server.space] in
            try await $0.grant(user: "liv-\(space)", space: space, role: .reader)
        }
        #expect(try await server.transport(lasting).pull(after: nil).changes.count == 1)

        let state = try await server.databaseState()
        let totals = try await server.databaseTotals()
        let push = Data(
            #"{"changes":[{"key":"k","object":{"type":"Card","id":{"string":"c1"}},"kind":"update","values":{"name":{"string":"Taken"}}}]}"#
                .utf8)
        let pushPath = "/v1/spaces/\(server.space)/push"
        let pullPath = "/v1/spaces/\(server.space)/pull"
        let cases: [(name: String, authorization: String?, message: String)] = [
            ("missing", nil, "no bearer token"),
            ("not bearer", "Basic YW5uOnNlY3JldA==", "no bearer token"),
            ("empty", "Bearer ", "no bearer token"),
            ("wrong", "Bearer lo_not-a-token", "the token is unknown"),
            (
                "a known token with its last byte changed",
                "Bearer " + annToken.dropLast() + (annToken.hasSuffix("A") ? "B" : "A"), "the token is unknown"
            ),
            ("expired", "Bearer \(expired)", "the token has expired"),
            ("revoked", "Bearer \(revoked)", "the token was revoked"),
        ]
        for test in cases {
            for (method, path, body) in [("POST", pushPath, Optional(push)), ("GET", pullPath, nil)] {
                let (status, answer) = try await server.raw(method, path, authorization: test.authorization, body: body)
                #expect(status == 401, "\(test.name) \(method): \(answer)")
                #expect(answer.contains(#""code":"unauthorized""#), "\(test.name) \(method): \(answer)")
                #expect(answer.contains(test.message), "\(test.name) \(method): \(answer)")
            }
        }
        // Through the transport too (which asks its token provider again after a 401).
        for token in [expired, revoked] {
            let error = await #expect(throws: SyncHTTPError.self) {
                _ = try await server.transport(token).push([
                    SyncChange(
                        idempotencyKey: "t1", object: SyncObjectID(typeName: "Card", primaryKey: .string("c1")),
                        serverID: nil, kind: .delete, values: [:])
                ])
            }
            #expect(error?.code == .unauthorized)
            #expect(error?.status == 401)
        }
        #expect(try await server.databaseState() == state)
        #expect(try await server.databaseTotals() == totals)
        #expect(state.contains(#""name": {"string": "Bakery"}"#))
    }

    @Test func tokenExpiryOptionsParse() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try TokenExpiry.parse(option: "--expires-in", value: "3600") == .after(seconds: 3600))
        #expect(try TokenExpiry.parse(option: "--expires-in", value: "90s") == .after(seconds: 90))
        #expect(try TokenExpiry.parse(option: "--expires-in", value: "45m") == .after(seconds: 2700))
        #expect(try TokenExpiry.parse(option: "--expires-in", value: "12h") == .after(seconds: 43_200))
        #expect(try TokenExpiry.parse(option: "--expires-in", value: "30d") == .after(seconds: 2_592_000))
        #expect(try TokenExpiry.parse(option: "--expires-in", value: "2w") == .after(seconds: 1_209_600))
        #expect(
            try TokenExpiry.parse(option: "--expires", value: "2027-01-31", now: now)
                == .at(Date(timeIntervalSince1970: 1_801_353_600)))
        #expect(
            try TokenExpiry.parse(option: "--expires", value: "2027-01-31T12:00:00Z", now: now)
                == .at(Date(timeIntervalSince1970: 1_801_396_800)))
        for (option, value) in [
            ("--expires-in", "0"), ("--expires-in", "-5"), ("--expires-in", "1y"), ("--expires-in", "h"),
            ("--expires-in", "99999999999999d"), ("--expires-in", "١٢"), ("--expires", "2020-01-01"),
            ("--expires", "tomorrow"), ("--expiry", "1d"),
        ] {
            #expect(throws: SyncServerError.self, "\(option) \(value)") {
                try TokenExpiry.parse(option: option, value: value, now: now)
            }
        }
    }
}
