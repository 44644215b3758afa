import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncServer
import LiveObjectsSyncTestSupport
import Testing

extension SyncServerTests {
    @Test func hostileBodiesAreRefusedAndChangeNothing() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let annToken = try await server.user("ann", .writer)
        let stored = try await server.transport(annToken).push([
            SyncChange(
                idempotencyKey: "seed", object: SyncObjectID(typeName: "Card", primaryKey: .string("c1")),
                serverID: nil, kind: .create, values: ["name": .value(.string("Bakery"))])
        ])
        #expect(stored.map(\.outcome) == [.applied])
        let state = try await server.databaseState()
        let totals = try await server.databaseTotals()
        #expect(state.hasSuffix("version 1\nkeys 1"), "\(state)")
        let path = "/v1/spaces/\(server.space)/push"

        /// A push of one change with the given members after `"key":"k",`.
        func one(_ members: String) -> String { #"{"changes":[{"key":"k",\#(members)}]}"# }
        let card = #""object":{"type":"Card","id":{"string":"x"}}"#
        func value(_ json: String) -> String { one(#"\#(card),"kind":"create","values":{"name":\#(json)}"#) }
        let deep = String(repeating: #"{"list":["#, count: 5000) + String(repeating: "]}", count: 5000)
        let cases: [(name: String, body: Data, status: Int)] = [
            ("an empty body", Data(), 400),
            ("malformed JSON", Data(#"{"changes":["#.utf8), 400),
            ("not JSON", Data("changes=all".utf8), 400),
            ("not UTF-8", Data([0x7B, 0xFF, 0xFE, 0x7D]), 400),
            ("an array", Data("[]".utf8), 400),
            ("null", Data("null".utf8), 400),
            ("no changes member", Data(#"{"change":[]}"#.utf8), 400),
            ("changes a string", Data(#"{"changes":"all"}"#.utf8), 400),
            ("changes null", Data(#"{"changes":null}"#.utf8), 400),
            ("a change that is a number", Data(#"{"changes":[1]}"#.utf8), 400),
            ("a key that is a number", Data(#"{"changes":[{"key":1,\#(card),"kind":"create"}]}"#.utf8), 400),
            ("an empty key", Data(#"{"changes":[{"key":"",\#(card),"kind":"create"}]}"#.utf8), 400),
            (
                "a key over 512 bytes",
                Data(#"{"changes":[{"key":"\#(String(repeating: "k", count: 513))",\#(card),"kind":"create"}]}"#.utf8),
                400
            ),
            ("a kind that is a bool", Data(one(#"\#(card),"kind":true"#).utf8), 400),
            ("an unknown kind", Data(one(#"\#(card),"kind":"upsert""#).utf8), 400),
            ("object null", Data(one(#""object":null,"kind":"create""#).utf8), 400),
            ("a type that is a number", Data(one(#""object":{"type":7,"id":{"int":1}},"kind":"create""#).utf8), 400),
            ("an empty type", Data(one(#""object":{"type":"","id":{"int":1}},"kind":"create""#).utf8), 400),
            ("an id that is a bare string", Data(one(#""object":{"type":"Card","id":"x"},"kind":"create""#).utf8), 400),
            (
                "an id of no value type",
                Data(one(#""object":{"type":"Card","id":{"decimal":1}},"kind":"create""#).utf8), 400
            ),
            ("a serverID that is a number", Data(one(#"\#(card),"serverID":17,"kind":"create""#).utf8), 400),
            ("values that are an array", Data(one(#"\#(card),"kind":"create","values":[]"#).utf8), 400),
            ("a value of two members", Data(value(#"{"int":1,"bool":true}"#).utf8), 400),
            ("an int that is a string", Data(value(#"{"int":"1"}"#).utf8), 400),
            ("an int that is a fraction", Data(value(#"{"int":1.5}"#).utf8), 400),
            ("an int over 64 bits", Data(value(#"{"int":18446744073709551616}"#).utf8), 400),
            ("a string that is a number", Data(value(#"{"string":5}"#).utf8), 400),
            ("a double that is a word", Data(value(#"{"double":"many"}"#).utf8), 400),
            ("data that is not base64", Data(value(#"{"data":"%%%"}"#).utf8), 400),
            ("a uuid that is not one", Data(value(#"{"uuid":"E621"}"#).utf8), 400),
            ("a list that is not an array", Data(value(#"{"list":{"int":1}}"#).utf8), 400),
            ("a ref without an id", Data(value(#"{"ref":{"type":"Card"}}"#).utf8), 400),
            ("a ref with another member", Data(value(#"{"ref":{"type":"Card","id":{"int":1},"x":1}}"#).utf8), 400),
            ("refs that are not an array", Data(value(#"{"refs":{"type":"Card","id":{"int":1}}}"#).utf8), 400),
            ("lists nested 5,000 deep", Data(value(deep).utf8), 400),
            (
                "a key twice in one push",
                Data(#"{"changes":[{"key":"k",\#(card),"kind":"create"},{"key":"k",\#(card),"kind":"delete"}]}"#.utf8),
                400
            ),
            ("a 10 MB string", Data(value(#"{"string":"\#(String(repeating: "x", count: 10_000_000))"}"#).utf8), 413),
            (
                "1,001 changes",
                Data(
                    #"{"changes":[\#((0..<1001).map { #"{"key":"k\#($0)","object":{"type":"Card","id":{"int":\#($0)}},"kind":"create"}"# }.joined(separator: ","))]}"#
                        .utf8),
                413
            ),
        ]
        for test in cases {
            let (status, answer) = try await server.raw("POST", path, token: annToken, body: test.body)
            #expect(status == test.status, "\(test.name): \(answer.prefix(300))")
            // A typed JSON error, whatever the refusal.
            let error = try? JSONDecoder().decode([String: [String: String]].self, from: Data(answer.utf8))["error"]
            #expect(error?["code"] == "badRequest", "\(test.name): \(answer.prefix(300))")
            #expect(error?["message"]?.isEmpty == false, "\(test.name): \(answer.prefix(300))")
        }
        #expect(try await server.databaseState() == state)
        #expect(try await server.databaseTotals() == totals)

        // The limits are not off by one: 1,000 changes, and a body just under the size limit, go
        // through.
        let thousand = (0..<1000).map {
            SyncChange(
                idempotencyKey: "b\($0)", object: SyncObjectID(typeName: "Card", primaryKey: .int($0)),
                serverID: nil, kind: .create, values: [:])
        }
        let receipts = try await server.transport(annToken).push(thousand)
        #expect(receipts.count == 1000)
        #expect(receipts.allSatisfy { $0.outcome == .applied })
        let big = try await server.transport(annToken).push([
            SyncChange(
                idempotencyKey: "big", object: SyncObjectID(typeName: "Card", primaryKey: .string("big")),
                serverID: nil, kind: .create,
                values: ["name": .value(.string(String(repeating: "y", count: 8_000_000)))])
        ])
        #expect(big.map(\.outcome) == [.applied])
        #expect(try await server.databaseState().hasSuffix("version 1002\nkeys 1002"))
    }

    @Test func anotherUsersSpaceAndObjectsAreRefused() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let annToken = try await server.user("ann", .writer)
        let waltToken = try await server.user("walt", .writer)
        // Olga's space, where Ann has no grant.
        let olgaSpace = "olga-\(server.space)"
        let olgaToken = try await server.withStore { store in
            try await store.addSpace(olgaSpace, types: ["Card"])
            let token = try await store.addUser("olga-\(server.space)")
            try await store.grant(user: "olga-\(server.space)", space: olgaSpace, role: .admin)
            return token
        }
        let olga = HTTPSyncTransport(
            configuration: .init(baseURL: server.baseURL, space: olgaSpace) { _ in olgaToken })
        let olgaCard = SyncChange(
            idempotencyKey: "o1", object: SyncObjectID(typeName: "Card", primaryKey: .string("o1")), serverID: nil,
            kind: .create, values: ["name": .value(.string("Olga's"))])
        #expect(try await olga.push([olgaCard]).map(\.outcome) == [.applied])

        let ann = try await openDevice("ann")
        let annEngine = try await engine(ann, server.transport(annToken))
        try await ann.write { r in
            _ = try r.create(Card.self, value: ["id": "c1", "name": "Bakery", "discount": 5])
            _ = try r.create(Card.self, value: ["id": "c2", "name": "Fuel", "discount": 3])
        }
        #expect(try await annEngine.sync().pushed == 2)
        let state = try await server.databaseState()
        let totals = try await server.databaseTotals()

        // Reading or writing Olga's space: 403, through the transport and as is.
        let intruder = HTTPSyncTransport(
            configuration: .init(baseURL: server.baseURL, space: olgaSpace) { _ in annToken })
        let readError = await #expect(throws: SyncHTTPError.self) { try await intruder.pull(after: nil) }
        #expect(readError?.code == .forbidden)
        #expect(readError?.status == 403)
        var stolen = olgaCard
        stolen.idempotencyKey = "a1"
        stolen.values = ["name": .value(.string("Ann's now"))]
        stolen.kind = .update
        let writeError = await #expect(throws: SyncHTTPError.self) { try await intruder.push([stolen]) }
        #expect(writeError?.code == .forbidden)
        #expect(writeError?.status == 403)
        let (waitStatus, waitBody) = try await server.raw(
            "GET", "/v1/spaces/\(olgaSpace)/pull?wait=5", token: annToken)
        #expect(waitStatus == 403)
        #expect(waitBody.contains(#""code":"forbidden""#))

        // Walt, a writer of Ann's space, updating and deleting Ann's cards: refused change by
        // change, and kept on Walt's device; the cards stay as Ann left them.
        let walt = try await openDevice("walt")
        let waltEngine = try await engine(walt, server.transport(waltToken))
        _ = try await waltEngine.pull()
        try await walt.write { r in
            r.object(ofType: Card.self, forPrimaryKey: "c1")!.name = "Walt's Bakery"
            try r.delete(r.object(ofType: Card.self, forPrimaryKey: "c2")!)
        }
        let report = try await waltEngine.sync()
        #expect(report.pushed == 0)
        #expect(report.rejections[SyncObjectID(Card.self, .string("c1"))]?.code == .forbidden)
        #expect(report.rejections[SyncObjectID(Card.self, .string("c2"))]?.code == .forbidden)
        #expect(try await cards(walt) == ["c1 Walt's Bakery 5 - true"])
        // As is: a receipt per change, rejected, with the protocol's error.
        let (status, answer) = try await server.raw(
            "POST", "/v1/spaces/\(server.space)/push", token: waltToken,
            body: Data(
                #"{"changes":[{"key":"w9","object":{"type":"Card","id":{"string":"c2"}},"kind":"delete"}]}"#.utf8))
        #expect(status == 200)
        #expect(answer.contains(#""outcome":"rejected""#), "\(answer)")
        #expect(answer.contains(#""code":"forbidden""#), "\(answer)")

        #expect(try await server.databaseState() == state)
        #expect(try await server.databaseTotals() == totals)
        #expect(try await olga.pull(after: nil).changes.map(\.values) == [["name": .value(.string("Olga's"))]])
    }
}

extension SyncServerTests {
    @Test func noClientInputGetsA500() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let token = try await server.user("ann", .writer)
        let state = try await server.databaseState()
        let space = "/v1/spaces/\(server.space)"
        func push(_ change: String) -> Data { Data(#"{"changes":[\#(change)]}"#.utf8) }
        let card = #""object":{"type":"Card","id":{"string":"x"}}"#
        // Requests, with the status each gets; none is a 500.
        let cases: [(name: String, method: String, path: String, body: Data?, status: Int)] = [
            ("NUL in a space name", "GET", "/v1/spaces/a%00b/pull", nil, 404),
            ("NUL in a space name, push", "POST", "/v1/spaces/%00/push", push(""), 404),
            ("a space name that is not percent-encoded", "GET", "/v1/spaces/%ZZ/pull", nil, 404),
            (
                "a space name of 10,000 bytes", "GET", "/v1/spaces/\(String(repeating: "s", count: 10_000))/pull", nil,
                404
            ),
            ("a limit over 64 bits", "GET", "\(space)/pull?limit=99999999999999999999", nil, 400),
            ("a cursor over 64 bits", "GET", "\(space)/pull?after=v1.99999999999999999999", nil, 400),
            ("a negative wait", "GET", "\(space)/pull?wait=-1", nil, 400),
            (
                "a lone surrogate", "POST", "\(space)/push",
                push(#"{"key":"k",\#(card),"kind":"create","values":{"name":{"string":"\ud800"}}}"#), 400
            ),
            (
                "a number over a double", "POST", "\(space)/push",
                push(#"{"key":"k",\#(card),"kind":"create","values":{"d":{"double":1e400}}}"#), 400
            ),
            (
                "an int in exponent form", "POST", "\(space)/push",
                push(#"{"key":"k",\#(card),"kind":"create","values":{"n":{"int":1e30}}}"#), 400
            ),
            (
                "objects nested 100,000 deep", "POST", "\(space)/push",
                Data(
                    (String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000)).utf8),
                400
            ),
            ("the limits by POST", "POST", "/v1/limits", Data(), 404),
        ]
        for test in cases {
            let (status, answer) = try await server.raw(test.method, test.path, token: token, body: test.body)
            #expect(status == test.status, "\(test.name): \(answer.prefix(300))")
            #expect(answer.contains(#""error":{"#), "\(test.name): \(answer.prefix(300))")
        }
        // NUL in a key, a type, an id, a name or a value, in a space without a schema: refused
        // change by change, the other change of the push applied.
        let nuls = [
            #"{"key":"k\u0000",\#(card),"kind":"create"}"#,
            #"{"key":"k1","object":{"type":"Card\u0000","id":{"string":"x"}},"kind":"create"}"#,
            #"{"key":"k2","object":{"type":"Card","id":{"string":"\u0000"}},"kind":"delete"}"#,
            #"{"key":"k3",\#(card),"kind":"create","values":{"\u0000":{"string":"a"}}}"#,
            #"{"key":"k4",\#(card),"kind":"update","values":{"name":{"list":[{"string":"\u0000"}]}}}"#,
            #"{"key":"k5",\#(card),"kind":"create","values":{"owner":{"ref":{"type":"Holder","id":{"string":"h"},"serverID":"\u0000"}}}}"#,
            #"{"key":"k6","object":{"type":"Card","id":{"string":"fine"}},"kind":"create","values":{"name":{"string":"Fine"}}}"#,
        ]
        let (status, answer) = try await server.raw(
            "POST", "\(space)/push", token: token, body: Data(#"{"changes":[\#(nuls.joined(separator: ","))]}"#.utf8))
        #expect(status == 200, "\(answer)")
        #expect(answer.components(separatedBy: #""code":"invalidText""#).count == nuls.count, "\(answer)")
        #expect(answer.components(separatedBy: #""outcome":"applied""#).count == 2, "\(answer)")
        let after = try await server.databaseState()
        #expect(after.hasPrefix(#"Card {"string": "fine"}"#) && after.hasSuffix("version 1\nkeys 1"), "\(after)")
        #expect(state.hasSuffix("version 0\nkeys 0"))

        // An id the database could not index (over 2 kB, not compressible): refused with
        // tooLarge; one of 1,024 bytes is stored.
        let long = (0..<140).map { _ in UUID().uuidString }.joined()
        let limit = String(long.prefix(1024))
        let (idStatus, idAnswer) = try await server.raw(
            "POST", "\(space)/push", token: token,
            body: push(
                #"{"key":"long","object":{"type":"Card","id":{"string":"\#(long)"}},"kind":"create"},"#
                    + #"{"key":"limit","object":{"type":"Card","id":{"string":"\#(limit)"}},"kind":"create"}"#))
        #expect(idStatus == 200, "\(idAnswer.prefix(300))")
        #expect(idAnswer.contains(#""code":"tooLarge""#), "\(idAnswer.prefix(300))")
        #expect(idAnswer.components(separatedBy: #""outcome":"applied""#).count == 2, "\(idAnswer.prefix(300))")
    }
}
