import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import Testing

@testable import LiveObjectsSyncServer

extension ServerHarness {
    /// The schema of the harness's models, as an app writes it.
    static func appSchema(_ types: [any SyncableObject.Type] = [Holder.self, Card.self]) async throws -> SpaceSchema {
        var configuration = Realm.Configuration(identifier: "schema-\(UUID())", objectTypes: types)
        configuration.keepsHistory = true
        let realm = try await Realm.open(configuration)
        return try SpaceSchema.parse(SyncSchema(realm.schema, types: types).jsonData())
    }

    /// Declares the schema of the harness's models (or of the types given) in the test's space.
    func declareSchema(_ types: [any SyncableObject.Type] = [Holder.self, Card.self]) async throws {
        let schema = try await Self.appSchema(types)
        let space = space
        let upload = try await withStore { try await $0.setSchema(of: space, to: schema) }
        #expect(upload == SchemaUpload(version: 1, isNew: true))
    }
}

/// The push bodies of the hostile variants: a change that is well formed but does not fit the
/// model (Card: id String, name String, discount Int, owner Holder?; Holder: id String, name
/// String), with the code it is refused with.
let hostileVariants: [(name: String, change: String, code: String)] = {
    let card = #""object":{"type":"Card","id":{"string":"px"}}"#
    func create(_ values: String, object: String = card) -> String {
        #"\#(object),"kind":"create","values":{\#(values)}"#
    }
    let holder = #"{"type":"Holder","id":{"string":"h1"}}"#
    return [
        ("an unknown property", create(#""nosuch":{"string":"v"}"#), "unknownProperty"),
        ("the server id property", create(#""serverID":{"string":"9"}"#), "unknownProperty"),
        ("the primary key as a property", create(#""id":{"string":"px"}"#), "unknownProperty"),
        ("an int for a String", create(#""name":{"int":1}"#), "invalidValue"),
        ("null for a String", create(#""name":{"null":true}"#), "invalidValue"),
        ("a string for an Int", create(#""discount":{"string":"5"}"#), "invalidValue"),
        ("a double for an Int", create(#""discount":{"double":5}"#), "invalidValue"),
        ("a decimal for an Int", create(#""discount":{"decimal":"5"}"#), "invalidValue"),
        ("an object id for a String", create(#""name":{"objectID":"507f1f77bcf86cd799439011"}"#), "invalidValue"),
        ("a list for a String", create(#""name":{"list":[{"string":"a"}]}"#), "invalidValue"),
        ("a ref for a String", create(#""name":{"ref":\#(holder)}"#), "invalidValue"),
        ("a string where a link goes", create(#""owner":{"string":"h1"}"#), "invalidValue"),
        ("null where a link goes", create(#""owner":{"null":true}"#), "invalidValue"),
        ("refs for a to-one link", create(#""owner":{"refs":[\#(holder)]}"#), "invalidValue"),
        ("a link to another type", create(#""owner":{"ref":{"type":"Card","id":{"string":"c1"}}}"#), "invalidValue"),
        ("a link to an unknown type", create(#""owner":{"ref":{"type":"Coupon","id":{"int":1}}}"#), "invalidValue"),
        ("a link by an int id", create(#""owner":{"ref":{"type":"Holder","id":{"int":1}}}"#), "invalidValue"),
        ("a link by a list id", create(#""owner":{"ref":{"type":"Holder","id":{"list":[]}}}"#), "invalidValue"),
        (
            "an int id", create(#""name":{"string":"a"}"#, object: #""object":{"type":"Card","id":{"int":7}}"#),
            "invalidValue"
        ),
        (
            "a list id", create(#""name":{"string":"a"}"#, object: #""object":{"type":"Card","id":{"list":[]}}"#),
            "invalidValue"
        ),
        (
            "a uuid id",
            create(
                #""name":{"string":"a"}"#,
                object: #""object":{"type":"Card","id":{"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}}"#),
            "invalidValue"
        ),
        (
            "an object id id",
            create(
                #""name":{"string":"a"}"#,
                object: #""object":{"type":"Card","id":{"objectID":"507f1f77bcf86cd799439011"}}"#),
            "invalidValue"
        ),
        ("a delete by an int id", #""object":{"type":"Card","id":{"int":7}},"kind":"delete""#, "invalidValue"),
        ("an update with an int name", #"\#(card),"kind":"update","values":{"name":{"int":2}}"#, "invalidValue"),
        (
            "an unknown type", create(#""name":{"string":"a"}"#, object: #""object":{"type":"Coupon","id":{"int":1}}"#),
            "unknownType"
        ),
        ("NUL in a string", create(#""name":{"string":"a\u0000b"}"#), "invalidText"),
        ("NUL in an id", create("", object: #""object":{"type":"Card","id":{"string":"p\u0000"}}"#), "invalidText"),
        ("NUL in a property name", create(#""na\u0000me":{"string":"a"}"#), "invalidText"),
        (
            "NUL in a type name", create("", object: #""object":{"type":"Ca\u0000rd","id":{"string":"p"}}"#),
            "invalidText"
        ),
        ("NUL in a link's id", create(#""owner":{"ref":{"type":"Holder","id":{"string":"\u0000"}}}"#), "invalidText"),
    ]
}()

extension SyncServerTests {
    @Test func changesThatDoNotFitTheSchemaAreRefusedAndNeverBreakAPull() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        try await server.declareSchema()
        let annToken = try await server.user("ann", .writer)
        let adminToken = try await server.user("olga", .admin)
        // Things to link to and update.
        let seed = try await server.transport(annToken).push([
            SyncChange(
                idempotencyKey: "h1", object: SyncObjectID(Holder.self, .string("h1")), serverID: nil, kind: .create,
                values: ["name": .value(.string("Ann"))]),
            SyncChange(
                idempotencyKey: "px", object: SyncObjectID(Card.self, .string("px")), serverID: nil, kind: .create,
                values: ["name": .value(.string("Bakery")), "discount": .value(.int(5))]),
        ])
        #expect(seed.map(\.outcome) == [.applied, .applied])
        let state = try await server.databaseState()
        let path = "/v1/spaces/\(server.space)/push"

        // Each variant alone, by a writer and by an admin, then all of them in one push with a
        // change that fits: refused change by change, with a named reason; only the good change
        // is stored.
        for token in [annToken, adminToken] {
            for (index, variant) in hostileVariants.enumerated() {
                let body = #"{"changes":[{"key":"v\#(index)",\#(variant.change)}]}"#
                let (status, answer) = try await server.raw("POST", path, token: token, body: Data(body.utf8))
                #expect(status == 200, "\(variant.name): \(answer)")
                #expect(answer.contains(#""outcome":"rejected""#), "\(variant.name): \(answer)")
                #expect(answer.contains(#""code":"\#(variant.code)""#), "\(variant.name): \(answer)")
            }
        }
        #expect(try await server.databaseState() == state)
        let all = hostileVariants.enumerated().map { #"{"key":"all\#($0.offset)",\#($0.element.change)}"# }
        let good =
            #"{"key":"good","object":{"type":"Card","id":{"string":"c9"}},"kind":"create","values":{"name":{"string":"Fuel"},"owner":{"ref":{"type":"Holder","id":{"string":"h1"}}}}}"#
        let (status, answer) = try await server.raw(
            "POST", path, token: annToken,
            body: Data(#"{"changes":[\#((all + [good]).joined(separator: ","))]}"#.utf8))
        #expect(status == 200, "\(answer)")
        struct Answer: Decodable {
            struct Receipt: Decodable { var outcome: String }
            var receipts: [Receipt]
        }
        let receipts = try JSONDecoder().decode(Answer.self, from: Data(answer.utf8)).receipts
        #expect(receipts.count == hostileVariants.count + 1)
        #expect(receipts.filter { $0.outcome == "rejected" }.count == hostileVariants.count, "\(answer)")
        #expect(receipts.last?.outcome == "applied", "\(answer)")
        let after = try await server.databaseState()
        #expect(after.hasSuffix("version 3\nkeys 3"), "\(after)")

        // A new device pulls everything the server accepted.
        let fresh = try await openDevice("fresh")
        let freshEngine = try await engine(fresh, server.transport(annToken))
        let report = try await freshEngine.sync()
        #expect(report.failed.isEmpty)
        #expect(try await cards(fresh) == ["c9 Fuel 0 h1 true", "px Bakery 5 - true"])
    }

    @Test func schemaVersionsAddAndNeverBreak() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let space = server.space
        var schema = try await ServerHarness.appSchema()
        #expect(try await server.withStore { try await $0.schema(of: space) } == nil)
        try await server.declareSchema()
        // The same again: no new version.
        let first = schema
        #expect(try await server.withStore { try await $0.setSchema(of: space, to: first) }.isNew == false)
        // Adding a type and an optional property: version 2; the space's types follow.
        schema.types.append(
            .init(name: "Coupon", primaryKey: .init(name: "code", type: "int32"), properties: []))
        schema.types[0].properties.append(.init(name: "note", type: "string", isOptional: true))
        schema.types[0].properties.append(.init(name: "tags", type: "string", isList: true))
        let added = schema
        let second = try await server.withStore { try await $0.setSchema(of: space, to: added) }
        #expect(second == SchemaUpload(version: 2, isNew: true))
        #expect(try await server.withStore { try await $0.types(of: space) } == ["Card", "Coupon", "Holder"])
        #expect(try await server.withStore { try await $0.schema(of: space) }?.version == 2)

        // Breaking changes: refused, each named.
        func breaking(_ change: (inout SpaceSchema) -> Void, _ expected: String) async {
            var changed = added
            change(&changed)
            let broken = changed
            let error = await #expect(throws: SyncServerError.self, "\(expected)") {
                _ = try await server.withStore { try await $0.setSchema(of: space, to: broken) }
            }
            #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
        }
        let card = added.types.firstIndex { $0.name == "Card" }!
        let name = added.types[card].properties.firstIndex { $0.name == "name" }!
        await breaking({ $0.types.removeAll { $0.name == "Coupon" } }, "type Coupon is removed")
        await breaking({ $0.types[card].properties.remove(at: name) }, "property Card.name is removed")
        await breaking({ $0.types[card].properties[name].type = "int" }, "changes from name: string to name: int")
        await breaking({ $0.types[card].properties[name].isOptional = true }, "to name: string?")
        await breaking({ $0.types[card].primaryKey.type = "uuid" }, "primary key of Card changes from string to uuid")
        await breaking(
            { $0.types[card].properties.append(.init(name: "code", type: "int")) }, "Card.code is added as required")
        // Malformed schemas.
        for bad in [
            #"{"types":[]}"#, #"{"types":[{"name":"A","primaryKey":{"name":"id","type":"double"},"properties":[]}]}"#,
            #"{"types":[{"name":"A","primaryKey":{"name":"id","type":"int"},"properties":[{"name":"b","type":"link","target":"B","optional":true}]}]}"#,
            #"{"types":[{"name":"A","primaryKey":{"name":"id","type":"int"},"properties":[{"name":"b","type":"link","target":"A"}]}]}"#,
            #"{"types":[{"name":"A","primaryKey":{"name":"id","type":"int"},"properties":[{"name":"id","type":"int"}]}]}"#,
            #"{"types":[{"name":"A","primaryKey":{"name":"id","type":"int"},"properties":[{"name":"n","type":"decimal256"}]}]}"#,
            #"{"types":[{"name":"A\u0000","primaryKey":{"name":"id","type":"int"},"properties":[]}]}"#, "[]",
        ] {
            #expect(throws: SyncServerError.self, "\(bad)") { try SpaceSchema.parse(Data(bad.utf8)) }
        }
        // A space with a schema takes its types from it.
        await #expect(throws: SyncServerError.self) {
            try await server.withStore { try await $0.setTypes(of: space, to: ["Card"]) }
        }
        await #expect(throws: SyncServerError.self) {
            try await server.withStore { try await $0.addSpace(space, types: ["Card"]) }
        }
        #expect(try await server.withStore { try await $0.types(of: space) } == ["Card", "Coupon", "Holder"])
    }

    @Test func listsAndIntegerWidthsAreChecked() throws {
        let schema = try SpaceSchema.parse(
            Data(
                #"""
                {"types":[{"name":"Bag","primaryKey":{"name":"id","type":"int8"},"properties":[
                  {"name":"tags","type":"string","list":true},
                  {"name":"scores","type":"int16","list":true,"optional":true},
                  {"name":"items","type":"link","target":"Bag","list":true},
                  {"name":"small","type":"int32","optional":true}]}]}
                """#.utf8))
        func refusal(_ id: String, _ values: String) throws -> String? {
            let body =
                #"{"changes":[{"key":"k","object":{"type":"Bag","id":\#(id)},"kind":"create","values":\#(values)}]}"#
            let change = try PushRequest(bytes: Array(body.utf8)).changes[0]
            return schema.refusal(of: change)?.code.rawValue
        }
        #expect(
            try refusal(
                #"{"int":1}"#, #"{"tags":{"list":[{"string":"a"}]},"scores":{"list":[{"null":true},{"int":-32768}]}}"#)
                == nil)
        #expect(
            try refusal(#"{"int":1}"#, #"{"items":{"refs":[{"type":"Bag","id":{"int":127}}]},"small":{"null":true}}"#)
                == nil)
        #expect(try refusal(#"{"int":128}"#, "{}") == "invalidValue")
        #expect(try refusal(#"{"int":1}"#, #"{"tags":{"list":[{"int":1}]}}"#) == "invalidValue")
        #expect(try refusal(#"{"int":1}"#, #"{"tags":{"list":[{"null":true}]}}"#) == "invalidValue")
        #expect(try refusal(#"{"int":1}"#, #"{"tags":{"string":"a"}}"#) == "invalidValue")
        #expect(try refusal(#"{"int":1}"#, #"{"scores":{"list":[{"int":32768}]}}"#) == "invalidValue")
        #expect(try refusal(#"{"int":1}"#, #"{"items":{"refs":[{"type":"Bag","id":{"int":-129}}]}}"#) == "invalidValue")
        #expect(try refusal(#"{"int":1}"#, #"{"items":{"ref":null}}"#) == "invalidValue")
        #expect(try refusal(#"{"int":1}"#, #"{"small":{"int":2147483648}}"#) == "invalidValue")
        #expect(try refusal(#"{"int":1}"#, #"{"large":{"int":1}}"#) == "unknownProperty")
    }

    @Test func aSpaceMadeBeforeItsSchemaIsChecked() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        let space = server.space
        let token = try await server.user("ann", .writer)
        // Without a schema the space checks type names only: these are stored.
        let (status, answer) = try await server.raw(
            "POST", "/v1/spaces/\(space)/push", token: token,
            body: Data(
                #"""
                {"changes":[
                 {"key":"a","object":{"type":"Card","id":{"string":"ok"}},"kind":"create","values":{"name":{"string":"Fine"}}},
                 {"key":"b","object":{"type":"Card","id":{"string":"p1"}},"kind":"create","values":{"nosuch":{"string":"v"}}},
                 {"key":"c","object":{"type":"Card","id":{"int":7}},"kind":"create","values":{}},
                 {"key":"e","object":{"type":"Card","id":{"list":[]}},"kind":"delete"},
                 {"key":"d","object":{"type":"Holder","id":{"string":"cafe\u0301"}},"kind":"create","values":{"name":{"int":1}}}]}
                """#.utf8))
        #expect(status == 200 && !answer.contains("rejected"), "\(answer)")
        await #expect(throws: SyncServerError.self) {
            _ = try await server.withStore { try await $0.check(space: space) }
        }
        try await server.declareSchema()
        let problems = try await server.withStore { try await $0.check(space: space) }
        #expect(problems.count == 4, "\(problems)")
        #expect(problems.contains { $0.hasPrefix(#"Card {"list": []} (deleted): invalidValue"#) }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix(#"Card {"int": 7}: invalidValue"#) }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix(#"Card {"string": "p1"}: unknownProperty"#) }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("Holder") && $0.contains("invalidValue") }, "\(problems)")
        #expect(!problems.contains { $0.contains(#""ok""#) }, "\(problems)")

        // Removed: what remains fits, and a new device pulls it.
        let removed = try await server.withStore { try await $0.check(space: space, removing: true) }
        #expect(removed == problems)
        #expect(try await server.withStore { try await $0.check(space: space) } == [])
        let fresh = try await openDevice("fresh")
        let report = try await engine(fresh, server.transport(token)).sync()
        #expect(report.failed.isEmpty)
        #expect(try await cards(fresh) == ["ok Fine 0 - true"])
    }

    @Test func idsInAnyNormalizationFormNameOneObject() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        try await server.declareSchema()
        let token = try await server.user("ann", .writer)
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)  // one object on a device
        let ann = try await openDevice("ann")
        let annEngine = try await engine(ann, server.transport(token))
        try await ann.write { r in _ = try r.create(Card.self, value: ["id": decomposed, "name": "NFD"]) }
        #expect(try await annEngine.sync().pushed == 1)
        let bob = try await openDevice("bob")
        let bobEngine = try await engine(bob, server.transport(token))
        try await bob.write { r in _ = try r.create(Card.self, value: ["id": composed, "name": "NFC"]) }
        #expect(try await bobEngine.sync().pushed == 1)
        // One object on the server, its id in NFC, holding the last write.
        let state = try await server.databaseState()
        #expect(state.components(separatedBy: "Card ").count == 2, "\(state)")
        #expect(state.contains(#"{"string": "\#(composed)"}"#) && state.contains("NFC"), "\(state)")
        #expect(!state.unicodeScalars.contains("\u{301}"), "\(state)")
        _ = try await annEngine.sync()
        #expect(try await cards(ann).count == 1)
        let fresh = try await openDevice("fresh")
        _ = try await engine(fresh, server.transport(token)).sync()
        #expect(
            try await cards(fresh).map { $0.split(separator: " ").dropFirst().joined(separator: " ") } == [
                "NFC 0 - true"
            ])
    }

    @Test func aValueOverTheServersLimitIsRefusedOnTheDeviceAndHoldsNothingBack() async throws {
        let server = try await ServerHarness.start()
        defer { Task { await server.stop() } }
        try await server.declareSchema()
        let token = try await server.user("ann", .writer)
        let (status, limits) = try await server.raw("GET", "/v1/limits", token: nil)
        #expect(status == 200)
        #expect(limits.contains(#""maximumBodyBytes":8388608"#), "\(limits)")
        #expect(limits.contains(#""maximumChanges":1000"#), "\(limits)")
        #expect(limits.contains(#""maximumIDBytes":1024"#), "\(limits)")
        let ann = try await openDevice("ann")
        let annEngine = try await engine(ann, server.transport(token))
        // A 9 MB name (the realm takes up to 16 MiB), a NUL, and small cards, in one write.
        try await ann.write { r in
            _ = try r.create(Card.self, value: ["id": "big", "name": String(repeating: "x", count: 9_000_000)])
            _ = try r.create(Card.self, value: ["id": "nul", "name": "a\u{0}b"])
            _ = try r.create(Card.self, value: ["id": "small", "name": "Fuel"])
        }
        let report = try await annEngine.sync()
        #expect(report.pushed == 1)
        #expect(report.rejections[SyncObjectID(Card.self, .string("big"))]?.code == .tooLarge)
        #expect(report.rejections[SyncObjectID(Card.self, .string("big"))]?.message.contains(#"Card["big"]"#) == true)
        #expect(report.rejections[SyncObjectID(Card.self, .string("nul"))]?.code == .invalidText)
        #expect(await annEngine.status(of: SyncObjectID(Card.self, .string("big"))) == .failed)
        #expect(await annEngine.status(of: SyncObjectID(Card.self, .string("small"))) == .synced)
        // Held for the app, not sent again unedited.
        #expect(try await annEngine.rejectedChanges().count == 2)
        #expect(try await annEngine.sync().pushed == 0)
        // Made to fit: an edit of a change refused on the device is its retry, sent at the next sync.
        try await ann.write { r in
            r.object(ofType: Card.self, forPrimaryKey: "big")!.name = "Bakery"
            r.object(ofType: Card.self, forPrimaryKey: "nul")!.name = "ab"
        }
        let second = try await annEngine.sync()
        #expect(second.pushed == 2)
        #expect(second.rejections.isEmpty)
        #expect(try await annEngine.rejectedChanges().isEmpty)
        let fresh = try await openDevice("fresh")
        _ = try await engine(fresh, server.transport(token)).sync()
        #expect(try await cards(fresh) == ["big Bakery 0 - true", "nul ab 0 - true", "small Fuel 0 - true"])
    }
}
