import Foundation
import LiveObjects
import LiveObjectsJSON
import LiveObjectsSyncProtocol
import LiveObjectsSyncTestSupport
import LiveObjectsTestSupport
import Synchronization
import Testing

@testable import LiveObjectsSync

/// The HTTP transport without a server (SocketHTTPClientTests has it against one): the wire format's round trips and exact shape, the
/// mapping of refusals to errors, the URLs; and the engine's handling of the protocol's
/// additions (refused changes, paged pulls, the live loop) through the in-process fake.
@Suite("HTTP sync transport")
struct HTTPSyncTransportTests {
    static func randomValue(_ rng: inout SeededRandomNumberGenerator, depth: Int = 0) -> PropertyValue {
        switch rng.next() % (depth == 0 ? 12 : 11) {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: rng.next()))
        case 3: return .float(Float(Int32(truncatingIfNeeded: rng.next())) / 7)
        case 4: return .double(Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF) * (rng.next() % 2 == 0 ? 1 : -1))
        case 5:
            let scalars = (0..<Int(rng.next() % 12)).map { _ in
                Unicode.Scalar(UInt32(rng.next() % 0xD7FF)).map(Character.init) ?? "x"
            }
            return .string(String(scalars))
        case 6:
            return .date(
                Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: rng.next()) % 10_000_000_000) / 1000))
        case 7: return .data(Data((0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
        case 8: return .uuid(UUID(uuid: withUnsafeBytes(of: (rng.next(), rng.next())) { $0.load(as: uuid_t.self) }))
        case 9:
            // Up to 37 digits, so that a Double would not keep them.
            let digits = (0..<Int(1 + rng.next() % 37)).map { _ in String(rng.next() % 10) }.joined()
            let point = Int(rng.next() % UInt64(digits.count + 1))
            let text =
                (rng.next() % 2 == 0 ? "-" : "") + (point == 0 ? "0" : String(digits.prefix(point)))
                + (point == digits.count ? "" : "." + digits.dropFirst(point))
            return .decimal(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))!)
        case 10: return .objectID(ObjectID(bytes: (0..<12).map { _ in UInt8(truncatingIfNeeded: rng.next()) })!)
        default: return .list((0..<Int(rng.next() % 5)).map { _ in randomValue(&rng, depth: depth + 1) })
        }
    }

    static func randomChange(_ rng: inout SeededRandomNumberGenerator, _ n: Int) -> SyncChange {
        let kinds: [SyncChange.Kind] = [.create, .update, .delete]
        let kind = kinds[Int(rng.next() % 3)]
        var values: [String: SyncValue] = [:]
        if kind != .delete {
            for p in 0..<Int(rng.next() % 6) {
                let target = SyncReference(
                    object: SyncObjectID(typeName: "Holder", primaryKey: .string("h\(rng.next() % 9)")),
                    serverID: rng.next() % 2 == 0 ? nil : "S\(rng.next() % 100)")
                switch rng.next() % 4 {
                case 0: values["p\(p)"] = .reference(target)
                case 1: values["p\(p)"] = .reference(nil)
                case 2: values["p\(p)"] = .references([target, target])
                default: values["p\(p)"] = .value(randomValue(&rng))
                }
            }
        }
        let key: PropertyValue = rng.next() % 2 == 0 ? .string("id\(n)") : .int(Int64(n))
        return SyncChange(
            idempotencyKey: "k\(n)@\(rng.next() % 1000)", object: SyncObjectID(typeName: "Card", primaryKey: key),
            serverID: rng.next() % 2 == 0 ? nil : "S\(n)", kind: kind, values: values)
    }

    @Test func changesAndPullsSurviveTheWireUnchanged() throws {
        let seed = TestEnvironment.seed("SYNC_SEED") ?? 0x5EED_0021
        print("HTTP wire round trip: seed \(seed) (SYNC_SEED replays it)")
        var rng = SeededRandomNumberGenerator(seed: seed)
        for round in 0..<200 {
            let changes = (0..<Int(rng.next() % 8)).map { Self.randomChange(&rng, round * 10 + $0) }
            let body = try WirePushRequest(changes: changes.map(WireChange.init)).jsonBytes()
            let decoded = try WirePushRequest(jsonBytes: body).changes.map { try $0.change() }
            #expect(decoded == changes, "seed \(seed), round \(round): \(String(decoding: body, as: UTF8.self))")

            let pull = SyncPull(
                changes: changes.enumerated().map { i, change in
                    ServerChange(
                        object: change.object, serverID: "S\(i)", serverVersion: rng.next() >> 1,
                        isDeleted: change.kind == .delete, values: change.values)
                }, cursor: rng.next() % 3 == 0 ? nil : "v1.\(rng.next() % 1000)", hasMore: rng.next() % 2 == 0)
            let pulled = try WirePullResponse(jsonBytes: try WirePullResponse(pull).jsonBytes()).pull
            #expect(pulled == pull, "seed \(seed), round \(round)")
        }
    }

    /// Written as the snapshot spells them; read in that spelling and in the earlier one of the
    /// wire (`"nan"`, `"inf"`, `"-inf"`), which older devices sent and servers stored.
    @Test func nonFiniteNumbersTravelAsStrings() throws {
        let spellings: [(Double, String, String)] = [
            (.nan, "NaN", "nan"), (.infinity, "Infinity", "inf"), (-.infinity, "-Infinity", "-inf"),
        ]
        for (value, current, old) in spellings {
            let text = String(decoding: try WireValue(.double(value)).jsonBytes(), as: UTF8.self)
            #expect(text == #"{"double":"\#(current)"}"#)
            let floatText = String(decoding: try WireValue(.float(Float(value))).jsonBytes(), as: UTF8.self)
            #expect(floatText == #"{"float":"\#(current)"}"#)
            for spelling in [current, old] {
                for member in ["double", "float"] {
                    let json = #"{"\#(member)":"\#(spelling)"}"#
                    let back = try WireValue(jsonBytes: Array(json.utf8)).value
                    let number: Double? =
                        switch back {
                        case .double(let number): member == "double" ? number : nil
                        case .float(let number): member == "float" ? Double(number) : nil
                        default: nil
                        }
                    #expect(
                        number.map { $0.isNaN == value.isNaN && (value.isNaN || $0 == value) } == true,
                        "\(json) came back as \(back)")
                }
            }
        }
        for other in ["NAN", "infinity", "+inf", "NaN:0x7ff8000000000000", ""] {
            #expect(throws: SyncWireFormatError.self, "\(other)") {
                try WireValue(jsonBytes: Array(#"{"double":"\#(other)"}"#.utf8))
            }
        }
    }

    /// One table of codes for the device and the server: a status the server answers a code
    /// with maps back to that code (413 aside: a `badRequest` too large).
    @Test func theErrorCodesAndTheirStatusesAgree() {
        let codes: [SyncErrorCode] = [
            .unauthorized, .forbidden, .versionNotSupported, .badRequest, .conflict, .notFound, .internal,
        ]
        let statuses = codes.map(\.httpStatus)
        #expect(statuses == [401, 403, 404, 400, 409, 404, 500])
        for code in codes where code != .versionNotSupported {
            #expect(SyncErrorCode(forStatus: code.httpStatus) == code, "\(code)")
        }
        #expect(SyncErrorCode(forStatus: 413) == .badRequest)
        #expect(SyncHTTPError.Code.tooLarge == SyncErrorCode(rawValue: "tooLarge"))
        #expect(SyncChange.Kind.allCases.map(\.rawValue) == ["create", "update", "delete"])
        #expect(SyncReceiptOutcomeKind.allCases.map(\.rawValue) == ["applied", "deletedOnServer", "rejected"])
    }

    @Test func aChangeHasTheDocumentedShape() throws {
        let change = SyncChange(
            idempotencyKey: "Card[\"c1\"]@4", object: SyncObjectID(typeName: "Card", primaryKey: .string("c1")),
            serverID: nil, kind: .create,
            values: [
                "discount": .value(.int(10)),
                "owner": .reference(
                    SyncReference(object: SyncObjectID(typeName: "Holder", primaryKey: .string("h1")), serverID: "7")),
            ])
        let text = String(decoding: try WireChange(change).jsonBytes(), as: UTF8.self)
        #expect(
            text
                == #"{"key":"Card[\"c1\"]@4","kind":"create","object":{"id":{"string":"c1"},"type":"Card"},"#
                + #""values":{"discount":{"int":10},"owner":{"ref":{"id":{"string":"h1"},"serverID":"7","type":"Holder"}}}}"#
        )
    }

    /// A server and devices of the previous version wrote with Foundation's encoder: escaped
    /// slashes, whole doubles without a fraction, `null` members, members in any order. This
    /// version reads it as before.
    @Test func theEarlierEncodersSpellingIsRead() throws {
        let page = #"""
            {"changes":[{"serverID":"7","object":{"type":"Card","id":{"string":"c\/1"}},"serverVersion":12,
            "deleted":false,"values":{"price":{"double":3},"seen":{"date":86400},"ratio":{"float":0.5},
            "owner":{"ref":null},"tags":{"list":[{"string":"a\/b"},{"int":-4}]},
            "holders":{"refs":[{"type":"Holder","id":{"int":2},"serverID":null}]}}}],"cursor":null,"hasMore":false}
            """#
        let pull = try WirePullResponse(jsonBytes: Array(page.utf8)).pull
        let expected = ServerChange(
            object: SyncObjectID(typeName: "Card", primaryKey: .string("c/1")), serverID: "7", serverVersion: 12,
            isDeleted: false,
            values: [
                "price": .value(.double(3)), "seen": .value(.date(Date(timeIntervalSinceReferenceDate: 86400))),
                "ratio": .value(.float(0.5)), "owner": .reference(nil),
                "tags": .value(.list([.string("a/b"), .int(-4)])),
                "holders": .references([SyncReference(object: SyncObjectID(typeName: "Holder", primaryKey: .int(2)))]),
            ])
        #expect(pull == SyncPull(changes: [expected], cursor: nil, hasMore: false))
        let limits = try SyncWireLimits(json: JSONValue(parsing: #"{"maximumChanges":1000,"maximumBodyBytes":null}"#))
        #expect(limits == SyncWireLimits(maximumChanges: 1000))
        // Written again by this version, it reads back the same; a page cut short or without
        // a member is refused.
        #expect(try WirePullResponse(jsonBytes: try WirePullResponse(pull).jsonBytes()).pull == pull)
        #expect(throws: SyncWireFormatError.self) { try WirePullResponse(jsonBytes: Array(#"{"changes":[]}"#.utf8)) }
        #expect(throws: SyncWireFormatError.self) { try WirePullResponse(jsonBytes: Array("{\"changes\":".utf8)) }
    }

    @Test func malformedValuesAreRefused() {
        for bad in [
            #"{}"#, #"{"int":1,"bool":true}"#, #"{"int":1.5}"#, #"{"data":"*not base64*"}"#, #"{"uuid":"nope"}"#,
            #"{"colour":"red"}"#, #"{"double":"big"}"#, #"{"decimal":1.5}"#, #"{"decimal":"1.5.1"}"#,
            #"{"objectID":"507f1f77bcf86cd79943901"}"#, #"{"objectID":"xyz"}"#,
        ] {
            #expect(throws: SyncWireFormatError.self, "\(bad)") {
                try WireValue(jsonBytes: Array(bad.utf8))
            }
        }
        let unknownKind = WireChange(
            SyncChange(
                idempotencyKey: "k", object: SyncObjectID(typeName: "T", primaryKey: .int(1)), serverID: nil,
                kind: .create, values: [:]))
        var renamed = unknownKind
        renamed.kind = "upsert"
        #expect(throws: SyncHTTPError.self) { try renamed.change() }
        #expect(throws: SyncWireFormatError.self) {
            try WireValue(.object(ObjectKey(row: 1, generation: 0))).json()
        }
    }

    @Test func receiptsMapToOutcomes() throws {
        let json = #"""
            {"receipts":[
              {"key":"a","outcome":"applied","serverID":"1","serverVersion":5},
              {"key":"b","outcome":"deletedOnServer","serverID":"2","serverVersion":6},
              {"key":"c","outcome":"rejected","error":{"code":"forbidden","message":"not yours"}}
            ]}
            """#
        let receipts = try SyncWirePushResponse(json: JSONValue(parsing: json)).receipts.map {
            try $0.receipt()
        }
        #expect(
            receipts.map(\.outcome) == [
                .applied, .deletedOnServer, .rejected(SyncRejection(code: .forbidden, message: "not yours")),
            ])
        #expect(receipts.map(\.serverVersion) == [5, 6, 0])
        let broken = try SyncWireReceipt(json: JSONValue(parsing: #"{"key":"d","outcome":"applied"}"#))
        #expect(throws: SyncHTTPError.self) { try broken.receipt() }
    }

    @Test func refusalsBecomeTypedErrors() {
        let body = Data(#"{"error":{"code":"forbidden","message":"user ann may only read space team"}}"#.utf8)
        let forbidden = HTTPSyncTransport.error(status: 403, body: body, request: "POST /v1/spaces/team/push")
        #expect(forbidden.code == .forbidden)
        #expect(forbidden.status == 403)
        #expect(!forbidden.isTransient)
        #expect(
            forbidden.description
                == "sync HTTP error forbidden (403): user ann may only read space team (POST /v1/spaces/team/push)")
        let cases: [(Int, SyncHTTPError.Code)] = [
            (400, .badRequest), (401, .unauthorized), (403, .forbidden), (404, .notFound), (409, .conflict),
            (413, .badRequest), (500, .internal), (502, .internal),
        ]
        for (status, code) in cases {
            let error = HTTPSyncTransport.error(status: status, body: Data("<html>proxy</html>".utf8), request: nil)
            #expect(error.code == code, "status \(status)")
            #expect(error.message == "<html>proxy</html>")
        }
        let version = HTTPSyncTransport.error(
            status: 404, body: Data(#"{"error":{"code":"versionNotSupported","message":"v9"}}"#.utf8), request: nil)
        #expect(version.code == .versionNotSupported)
        #expect(HTTPSyncTransport.error(status: 503, body: Data(), request: nil).isTransient)
    }

    @Test func requestsGoUnderTheVersionAndSpace() throws {
        let transport = HTTPSyncTransport(
            baseURL: URL(string: "http://127.0.0.1:8080/sync")!, space: "team a/b", token: "t")
        let url = transport.url("pull", query: [URLQueryItem(name: "after", value: "v1.7&x")])
        #expect(url.absoluteString == "http://127.0.0.1:8080/sync/v1/spaces/team%20a%2Fb/pull?after=v1.7%26x")
        #expect(
            transport.url("push", query: []).absoluteString == "http://127.0.0.1:8080/sync/v1/spaces/team%20a%2Fb/push")
    }
}

/// Refuses the changes of some objects, as a server refuses a writer's change to another
/// user's object; passes the rest to the fake server.
actor RefusingTransport: SyncTransport {
    let server: FakeServer
    var refused: Set<SyncObjectID>
    private(set) var refusals = 0

    init(server: FakeServer, refused: Set<SyncObjectID>) {
        self.server = server
        self.refused = refused
    }

    func allow(_ object: SyncObjectID) { refused.remove(object) }

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
        var receipts = try await server.push(changes.filter { !refused.contains($0.object) })
        for change in changes where refused.contains(change.object) {
            refusals += 1
            receipts.append(
                SyncReceipt(
                    idempotencyKey: change.idempotencyKey, serverID: "", serverVersion: 0,
                    outcome: .rejected(SyncRejection(code: .forbidden, message: "not yours"))))
        }
        return receipts
    }

    func pull(after cursor: String?) async throws -> SyncPull { try await server.pull(after: cursor) }
}

/// Answers pulls a few objects at a time, with `hasMore`.
struct PagingTransport: SyncTransport {
    let server: FakeServer
    let pageSize: Int
    let pulls = Counter()

    final class Counter: Sendable {
        let count = Mutex(0)
    }

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] { try await server.push(changes) }

    func pull(after cursor: String?) async throws -> SyncPull {
        pulls.count.withLock { $0 += 1 }
        let all = try await server.pull(after: cursor)
        let page = Array(all.changes.prefix(pageSize))
        guard all.changes.count > pageSize, let last = page.last else { return all }
        return SyncPull(changes: page, cursor: String(last.serverVersion), hasMore: true)
    }
}

/// A live transport whose waits end when the test says the server changed.
actor SignallingTransport: LiveSyncTransport {
    let server: FakeServer
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private(set) var waits = 0

    init(server: FakeServer) { self.server = server }

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] { try await server.push(changes) }
    func pull(after cursor: String?) async throws -> SyncPull { try await server.pull(after: cursor) }

    func waitForChanges(after cursor: String?) async throws -> Bool {
        waits += 1
        await withCheckedContinuation { waiting.append($0) }
        return true
    }

    func signal() {
        for waiter in waiting { waiter.resume() }
        waiting = []
    }

    var waiterCount: Int { waiting.count }
}

@Suite("Sync engine with the protocol's additions")
struct SyncProtocolAdditionsTests {
    @Test func aRefusedChangeIsKeptLocallyAndSentAgainWhenTheAppRetries() async throws {
        let realm = try await openSyncRealm("refused")
        let server = FakeServer()
        let transport = RefusingTransport(server: server, refused: [card("c2")])
        let sleeps = SleepRecorder()
        let engine = try await SyncEngine(
            realm: realm, transport: transport, types: [Holder.self, Card.self],
            configuration: .init(sleep: sleeps.sleep))
        try await realm.write { r in
            _ = try r.create(Card.self, value: ["id": "c1", "name": "Mine"])
            _ = try r.create(Card.self, value: ["id": "c2", "name": "Theirs"])
        }
        let report = try await engine.sync()
        #expect(report.pushed == 1)
        #expect(report.failed == [card("c2")])
        #expect(report.rejections[card("c2")]?.code == .forbidden)
        // Refused once, not retried with backoff in the same round.
        #expect(await transport.refusals == 1)
        #expect(await sleeps.waits.isEmpty)
        #expect(await engine.status(of: card("c2")) == .failed)
        #expect(await engine.status(of: card("c1")) == .synced)
        #expect(await server.records[card("c2")] == nil)
        #expect(try await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "c2")?.name } == "Theirs")

        // Not sent again on its own: it waits for the app, with its reason and local values.
        _ = try await engine.sync()
        #expect(await transport.refusals == 1)
        let waiting = try await engine.rejectedChanges()
        #expect(waiting.map(\.object) == [card("c2")])
        #expect(waiting.first?.kind == .create)
        #expect(waiting.first?.rejection.code == .forbidden)
        #expect(waiting.first?.localValues["name"] == .value(.string("Theirs")))
        #expect(await engine.status(of: card("c2")) == .failed)
        // Retried: sent at the next sync; accepted once allowed, and c1 is not sent twice.
        await transport.allow(card("c2"))
        try await engine.retry(card("c2"))
        #expect(await engine.status(of: card("c2")) == .pending)
        let third = try await engine.sync()
        #expect(third.pushed == 1)
        #expect(third.failed.isEmpty)
        #expect(await server.records[card("c2")] != nil)
        #expect(await server.applications.values.allSatisfy { $0 == 1 })
        #expect(await engine.status(of: card("c2")) == .synced)
        #expect(try await engine.rejectedChanges().isEmpty)
        await #expect(throws: LiveObjectsError.self) { try await engine.retry(card("c2")) }
    }

    @Test func pagedPullsBringEverything() async throws {
        let realm = try await openSyncRealm("paged")
        let server = FakeServer()
        for i in 0..<23 {
            await server.edit(
                card("c\(i)"), ["name": .value(.string("card \(i)")), "discount": .value(.int(Int64(i)))])
        }
        let transport = PagingTransport(server: server, pageSize: 5)
        let engine = try await SyncEngine(realm: realm, transport: transport, types: [Holder.self, Card.self])
        let report = try await engine.pull()
        #expect(report.pulled == 23)
        #expect(transport.pulls.count.withLock { $0 } == 5)
        #expect(try await realm.read { $0.objects(Card.self).count } == 23)
    }

    @Test func theLiveLoopSyncsOnLocalWritesAndServerSignals() async throws {
        let realm = try await openSyncRealm("live")
        let server = FakeServer()
        let transport = SignallingTransport(server: server)
        let engine = try await SyncEngine(realm: realm, transport: transport, types: [Holder.self, Card.self])
        let live = Task { await engine.syncContinuously() }
        defer { live.cancel() }

        // A local write reaches the server without a call to sync().
        try await realm.write { r in _ = try r.create(Card.self, value: ["id": "mine", "name": "Local"]) }
        #expect(await eventually { await server.records[card("mine")] != nil })

        // Another device's change arrives when the transport's wait returns.
        await server.edit(card("theirs"), ["name": .value(.string("Remote"))])
        #expect(await eventually { await transport.waiterCount > 0 })
        await transport.signal()
        #expect(
            await eventually {
                (try? await realm.read { $0.object(ofType: Card.self, forPrimaryKey: "theirs")?.name }) == "Remote"
            })
    }
}

/// Waits for a condition, yielding, for at most a generous bound of tries (never asserts on
/// time: the bound only keeps a failing test from hanging).
func eventually(_ condition: () async -> Bool) async -> Bool {
    for _ in 0..<2000 {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
