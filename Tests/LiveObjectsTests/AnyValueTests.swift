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
            Property(name: "v", type: .mixed, isOptional: true), Property(name: "v", type: .mixed, isList: true),
            Property(name: "v", type: .mixed, isIndexed: true), Property(name: "v", type: .mixed, isPrimaryKey: true),
            Property(name: "v", type: .mixed, isMap: true),
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

    @Test func linksAndListsInAnAnyValueAreRefusedAndChangeNothing() async throws {
        let realm = try await openFreshRealm(objectTypes: payloadTypes)
        try await realm.write { r in _ = try r.create(Payload.self, value: ["id": 1, "value": "kept"]) }
        for bad: PropertyValue in [.list([.int(1)]), .object(ObjectKey(row: 0, generation: 0))] {
            do {
                try await realm.write { r in
                    let object = try r.dynamicObject(ofType: "Payload", forPrimaryKey: .int(1))
                    try #require(object).set("value", to: bad)
                }
                Issue.record("\(bad) was accepted")
            } catch let error as LiveObjectsError {
                #expect(
                    error.code == .typeMismatch && error.property == "value" && error.message.contains("not supported"))
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
        for bad in [#"{"id":1,"value":[1]}"#, #"{"id":1,"value":{"when":1}}"#, #"{"id":1,"value":{"decimal":"x"}}"#] {
            #expect(throws: (any Error).self, "\(bad)") { try JSONDecoder().decode(Payload.self, from: Data(bad.utf8)) }
        }
    }
}
