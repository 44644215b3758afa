import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class Payload: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value: AnyValue
    @Persisted var note = ""
}

private let payloadTypes: [Object.Type] = [Payload.self]

/// One value of every kind, with numbers equal across kinds and values that only look alike.
let everyKind: [AnyValue] = [
    .null, .bool(true), .bool(false), .int(3), .int(-7), .float(2.5), .double(3), .double(0.1), .double(.nan),
    .decimal(Decimal(string: "3")!), .decimal(Decimal(string: "0.1")!), .string("3"), .string("abc"),
    .string("2024-01-01T00:00:00Z"), .date(Date(timeIntervalSinceReferenceDate: 1.25)), .data(Data([0, 1, 2])),
    .uuid(UUID(uuidString: "8D9E7A54-1C3B-4C45-8B2B-6C0F6D1B9E01")!),
    .objectID(ObjectID(hex: "507f1f77bcf86cd799439011")!),
]

@Suite struct AnyValueTests {
    @Test func theSchemaSaysAnyValueAndRefusesWhatIsNotSupported() async throws {
        let realm = try await openFreshRealm(objectTypes: payloadTypes)
        let property = try #require(realm.schema["Payload"]?["value"])
        #expect(property.type == .mixed && !property.isOptional && property.description == "value: AnyValue")
        for bad in [
            Property(name: "v", type: .mixed, isOptional: true),
            Property(name: "v", type: .mixed, isOptional: true, isList: true),
            Property(name: "v", type: .mixed, isIndexed: true), Property(name: "v", type: .mixed, isPrimaryKey: true),
            Property(name: "v", type: .mixed, isOptional: true, isMap: true),
            Property(name: "v", type: .mixed, isList: true, isIndexed: true),
        ] {
            #expect(throws: LiveObjectsError.self, "\(bad)") {
                try Schema([ObjectSchema(name: "T", properties: [bad])]).validate()
            }
        }
    }

    @Test func everyKindIsStoredAsItIsAndReadLive() async throws {
        let realm = try await openFreshRealm(objectTypes: payloadTypes)
        try await realm.write { r in
            for (id, value) in everyKind.enumerated() {
                let p = Payload()
                p.id = id
                p.value = value
                try r.add(p)
            }
        }
        let stored = try await realm.read { r in r.objects(Payload.self).map(\.value) }
        #expect(stored.count == everyKind.count)
        for (a, b) in zip(stored, everyKind) {
            // NaN is not equal to itself; compare its kind and bits.
            if case .double(let x) = a, case .double(let y) = b, x.isNaN { #expect(y.isNaN) } else { #expect(a == b) }
        }
        #expect(stored.map(\.kindName) == everyKind.map(\.kindName))
        try await realm.read { r in #expect(StoreInvariants.violations(in: r.store).isEmpty) }
        // The dynamic API reads and writes the stored form.
        try await realm.write { r in
            let found = try r.dynamicObject(ofType: "Payload", forPrimaryKey: .int(1))
            let object = try #require(found)
            #expect(object["value"] == .bool(true))
            try object.set("value", to: .decimal(Decimal(string: "1.5")!))
        }
        let changed = try await realm.read { r in r.object(ofType: Payload.self, forPrimaryKey: 1)?.value }
        #expect(changed == .decimal(Decimal(string: "1.5")!))
    }

    /// A bare link (a key without its type), a link's marker without its type and key, and a
    /// list that is not the stored form of a nested list or dictionary (no marker, an unknown
    /// marker, a dictionary whose key is no string or lacks its value).
    @Test func linksAndRawListsInAnAnyValueAreRefusedAndChangeNothing() async throws {
        let realm = try await openFreshRealm(objectTypes: payloadTypes)
        try await realm.write { r in _ = try r.create(Payload.self, value: ["id": 1, "value": "kept"]) }
        let marker = { (kind: UInt32) in PropertyValue.object(ObjectKey(row: .max, generation: kind)) }
        for bad: PropertyValue in [
            .list([.int(1)]), .list([]), .list([marker(7)]), .list([marker(1), .int(1), .int(2)]),
            .list([marker(1), .string("a")]), .list([marker(0), .list([.int(0)])]),
            .object(ObjectKey(row: 0, generation: 0)), .list([marker(2)]), .list([marker(2), .string("Payload")]),
            .list([marker(2), .int(0), .object(ObjectKey(row: 0, generation: 0))]),
        ] {
            do {
                try await realm.write { r in
                    let object = try r.dynamicObject(ofType: "Payload", forPrimaryKey: .int(1))
                    try #require(object).set("value", to: bad)
                }
                Issue.record("\(bad) was accepted")
            } catch let error as LiveObjectsError {
                #expect(
                    error.code == .typeMismatch && error.property == "value"
                        && (error.message.contains("link") || error.message.contains("stored form")),
                    "\(error)")
            }
        }
        let value = try await realm.read { r in r.object(ofType: Payload.self, forPrimaryKey: 1)?.value }
        #expect(value == "kept")
        let long = String(repeating: "x", count: Realm.Limits.maximumStringLength + 1)
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { r in _ = try r.create(Payload.self, value: ["id": 2, "value": long]) }
        }
    }

    @Test func anObjectsChangeNamesTheProperty() async throws {
        let realm = try await openFreshRealm(objectTypes: payloadTypes)
        try await realm.write { r in _ = try r.create(Payload.self, value: ["id": 1, "value": 1]) }
        let changes = try await realm.read { r in
            r.object(ofType: Payload.self, forPrimaryKey: 1)!.changes(keyPaths: [\.value])
        }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        try await realm.write { r in r.object(ofType: Payload.self, forPrimaryKey: 1)!.note = "not watched" }
        // From an int to a double of the same number is a change: the kind is part of the value.
        try await realm.write { r in r.object(ofType: Payload.self, forPrimaryKey: 1)!.value = .double(1) }
        guard case .changed(_, let properties) = try #require(await iterator.next()) else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.name) == ["value"])
    }

    @Test func createObjectValueAndCodableTakeAnyKind() async throws {
        let realm = try await openFreshRealm(objectTypes: payloadTypes)
        try await realm.write { r in
            #expect(
                try r.create(Payload.self, value: ["id": 1 as Int, "value": Decimal(string: "9.99")!] as [String: Any])
                    .value == .decimal(9.99))
            #expect(try r.create(Payload.self, value: ["id": 2, "value": AnyValue.float(1.5)]).value == .float(1.5))
            #expect(try r.create(Payload.self, value: ["id": 3]).value == .null)
            let copy = try Payload(value: ["id": 4, "value": "x"])
            #expect(copy.value == "x")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for value in everyKind where value.propertyValue.doubleValue?.isNaN != true {
            let p = Payload()
            p.value = value
            let data = try encoder.encode(p)
            let back = try JSONDecoder().decode(Payload.self, from: data)
            #expect(back.value == value, "\(String(decoding: data, as: UTF8.self))")
        }
        let nan = try JSONDecoder().decode(AnyValue.self, from: try encoder.encode(AnyValue.double(.nan)))
        #expect(nan.kindName == "double" && nan.propertyValue.doubleValue?.isNaN == true)
        let text = String(decoding: try encoder.encode([AnyValue.double(2), .int(2), .double(2.5)]), as: UTF8.self)
        #expect(text == #"[{"double":2},2,2.5]"#)
        let date = try JSONDecoder().decode(Payload.self, from: Data(#"{"id":1,"value":"2024-01-01"}"#.utf8))
        #expect(date.value == "2024-01-01", "a string that looks like a date stays a string")
        for bad in [
            #"{"id":1,"value":{"list":1}}"#, #"{"id":1,"value":{"dictionary":[1]}}"#,
            #"{"id":1,"value":{"decimal":"x"}}"#, #"{"id":1,"value":[{"uuid":"x"}]}"#,
        ] {
            #expect(throws: (any Error).self, "\(bad)") { try JSONDecoder().decode(Payload.self, from: Data(bad.utf8)) }
        }
    }

    @Test func queriesCompareByValueAndByKind() async throws {
        let realm = try await openFreshRealm(objectTypes: payloadTypes)
        try await realm.write { r in
            for (id, value) in everyKind.enumerated() {
                _ = try r.create(Payload.self, value: ["id": id, "value": value])
            }
        }
        @Sendable func ids(_ keep: (AnyValue) -> Bool) -> [Int] { everyKind.indices.filter { keep(everyKind[$0]) } }
        @Sendable func isNumber(_ v: AnyValue) -> Bool { ["int", "float", "double", "decimal"].contains(v.kindName) }
        try await realm.read { r in
            let results = r.objects(Payload.self)
            let cases: [(String, [Int])] = [
                // 3 as an int, a double and a decimal; never the string "3".
                ("value == 3", [3, 6, 9]), ("value == 3.0", [3, 6, 9]), ("value == '3'", [11]),
                ("value == 0.1", [7, 10]), ("value > 2", [3, 5, 6, 9]), ("value == nil", [0]),
                ("value != nil", Array(1..<18)),
                ("value == TRUE", [1]), ("value BEGINSWITH 'ab'", [12]),
                ("value IN {3, 'abc', FALSE}", [2, 3, 6, 9, 12]),
                ("value.@type == 'string'", ids { $0.kindName == "string" }),
                ("value.@type == 'numeric'", ids(isNumber)), ("value.@type != 'numeric'", ids { !isNumber($0) }),
                ("value.@type IN {'bool', 'NULL'}", [0, 1, 2]), ("value.@type == 'binary'", [15]),
                ("value.@type == 'timestamp'", [14]), ("value.@type == 'objectid'", [17]),
                ("value.@type == 'uuid'", [16]),
                ("value.@type == 'decimal' AND value < 1", [10]),
            ]
            for (predicate, expected) in cases {
                #expect(try results.filter(predicate).map(\.id) == expected, "\(predicate)")
            }
            #expect(results.where { $0.value == AnyValue.string("abc") }.map(\.id) == [12])
            #expect(results.where { $0.value == 3 }.map(\.id) == [3, 6, 9])
            #expect(results.where { $0.value.kind == "numeric" }.map(\.id) == ids(isNumber))
            #expect(results.where { $0.value.kind.in(["date", "uuid"]) }.map(\.id) == [14, 16])
            #expect(results.where { $0.value.starts(with: "A", options: .caseInsensitive) }.map(\.id) == [12])
            for bad in ["value.@type == 'text'", "value.@type > 'int'", "note.@type == 'string'", "value.@type.x == 1"]
            {
                #expect(throws: LiveObjectsError.self, "\(bad)") { try results.filter(bad).count }
            }
            let parsed = try PredicateParser.parse("value.@type == 'string'")
            #expect(try PredicateParser.parse(parsed.description) == parsed)
        }
    }

    @Test func sortsOrderKindsThenValues() async throws {
        let realm = try await openFreshRealm(objectTypes: payloadTypes)
        try await realm.write { r in
            for (id, value) in everyKind.enumerated() {
                _ = try r.create(Payload.self, value: ["id": id, "value": value])
            }
        }
        let sorted = try await realm.read { r in
            try r.objects(Payload.self).sorted(byKeyPath: "value").map(\.value.kindName)
        }
        // null, bools, numbers (by value), strings, data, dates, object ids, UUIDs.
        let kinds = ["null", "bool", "numbers", "string", "data", "date", "objectId", "uuid"]
        let ranks = sorted.map {
            kinds.firstIndex(of: ["int", "float", "double", "decimal"].contains($0) ? "numbers" : $0)!
        }
        #expect(ranks == ranks.sorted(), "\(sorted)")
        let numbers = try await realm.read { r in
            try r.objects(Payload.self).filter("value.@type == 'numeric' AND value != 3").sorted(byKeyPath: "value")
                .map(\.id)
        }
        // NaN first, then -7, 0.1 (double and decimal, equal: kept in their order), 2.5.
        #expect(numbers == [8, 4, 7, 10, 5])
    }
}
