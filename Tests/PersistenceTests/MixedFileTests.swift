import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// `AnyValue` properties in snapshots and journals: the schema says `"type": "mixed"`, a value is
/// written as itself (null, bool, integer, string, a double with a fraction) or as an object of
/// one member naming its kind, every kind reads back exactly, damaged values are refused, and a
/// migration adds an `AnyValue` or turns a `String` into one. Nested lists are arrays, nested
/// dictionaries `{"dictionary": {…}}` with their keys in order.
@Suite struct MixedFileTests {
    static func schema(payload type: PropertyType = .mixed, optional: Bool = false) -> Schema {
        Schema([
            ObjectSchema(
                name: "Box",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true),
                    Property(name: "payload", type: type, isOptional: optional),
                ])
        ])
    }

    /// One value of every kind, with the ones a careless format would lose: an integral double,
    /// negative zero, NaN, infinity, a float, a decimal `Double` cannot hold, a string that
    /// looks like a number or a date.
    static let values: [PropertyValue] = [
        .null, .bool(true), .int(-42), .int(Int64.max), .double(2), .double(-0.0), .double(0.1), .double(.nan),
        .double(-.infinity), .float(1.5), .float(.nan), .string("3"), .string("2024-01-01T00:00:00Z"),
        .string("{\"double\": 1}"), .date(Date(timeIntervalSinceReferenceDate: 123.456)), .data(Data([0, 255, 7])),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        .decimal(Decimal(string: "0.1000000000000000000000001")!), .decimal(.nan),
        .objectID(ObjectID(hex: "507f1f77bcf86cd799439011")!),
    ]

    /// Equal as stored: by kind and bits (NaN equals NaN of its kind, -0.0 is not 0.0).
    static func same(_ a: PropertyValue, _ b: PropertyValue) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case (.float(let x), .float(let y)): x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case (.decimal(let x), .decimal(let y)): x.isNaN ? y.isNaN : x == y && !y.isNaN
        default: a == b
        }
    }

    static func payloads(_ realm: Realm) async throws -> [PropertyValue] {
        try await realm.read { realm in
            try realm.dynamicObjects("Box").sorted { $0["id"].intValue! < $1["id"].intValue! }.map { $0["payload"] }
        }
    }

    @Test func everyKindSurvivesSnapshotAndJournalExactly() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("boxes.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: Self.schema(), options: options)
        let half = Self.values.count / 2
        try await withRealm(configuration) { realm in
            try await realm.write { r in
                for (id, value) in Self.values[..<half].enumerated() {
                    _ = try r.dynamicCreate("Box", value: ["id": .int(Int64(id)), "payload": value])
                }
            }
            try await realm.save()
            // In the journal only.
            try await realm.write { r in
                for (id, value) in Self.values.enumerated().dropFirst(half) {
                    _ = try r.dynamicCreate("Box", value: ["id": .int(Int64(id)), "payload": value])
                }
            }
            let journal = String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal")), as: UTF8.self)
            #expect(journal.contains(#"{"decimal":"0.1000000000000000000000001"}"#), "\(journal)")
            #expect(journal.contains(#""payload":"3""#), "\(journal)")
        }
        // Replayed from the journal, then from the snapshot the first open saved.
        for _ in 0..<2 {
            let read = try await withRealm(configuration) { try await Self.payloads($0) }
            #expect(read.count == Self.values.count)
            for (a, b) in zip(read, Self.values) { #expect(Self.same(a, b), "\(a) read back as \(b)") }
        }
        let snapshot = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(snapshot.contains(#"{"name": "payload", "type": "mixed"}"#), "\(snapshot)")
        #expect(snapshot.contains(#""payload": {"double": 2.0}"#), "\(snapshot)")
        #expect(snapshot.contains(#""payload": 0.1"#), "\(snapshot)")
        let reopened = try await withRealm(configuration) { realm in realm.schema["Box"]?["payload"] }
        #expect(reopened?.type == .mixed && reopened?.isOptional == false)
    }

    static func snapshot(_ objects: String) -> String {
        let schema =
            #"[{"name": "Box", "properties": [{"name": "id", "type": "int", "primaryKey": true}, {"name": "payload", "type": "mixed"}]}]"#
        return BadFileTests.file(version: 1, schema: schema, objects: objects)
    }

    @Test func badValuesAreRefused() throws {
        let good = #"{"Box": [{"$id": 0, "id": 1, "payload": {"decimal": "9.99"}}]}"#
        let loaded = try FileStorage.decode(snapshot: Array(Self.snapshot(good).utf8), journal: nil)
        #expect(try loaded.store.table(named: "Box").value(0, 1) == .decimal(Decimal(string: "9.99")!))
        let payload = #""payload": {"decimal": "9.99"}"#
        for bad in [
            #""payload": {"decimal": "x"}"#, #""payload": {"money": "9.99"}"#, #""payload": {}"#,
            #""payload": {"double": 1, "float": 1}"#, #""payload": [1, {"money": 1}]"#, #""payload": {"uuid": "nope"}"#,
            #""payload": {"objectID": "12"}"#, #""payload": {"data": "%%"}"#, #""payload": {"double": null}"#,
            #""payload": {"double": "many"}"#, #""payload": 1e400"#, #""payload": 99999999999999999999"#,
            #""payload": {"date": "yesterday"}"#,
        ] {
            let text = Self.snapshot(good.replacingOccurrences(of: payload, with: bad))
            #expect("\(bad)") {
                _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
            } throws: { error in
                let error = error as? LiveObjectsError
                return error?.code == .corruptFile && (error?.property == "payload" || error?.property == nil)
            }
        }
        // In a journal line too.
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":3,"schemaVersion":0,"base":0}"#)
        let bad = sealedLine(#"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"payload":{"kind":1}}]}}}"#)
        let fine = sealedLine(#"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"payload":{"float":2.5}}]}}}"#)
        let snapshot = Array(Self.snapshot(good).utf8)
        #expect(throws: LiveObjectsError.self) {
            _ = try FileStorage.decode(snapshot: snapshot, journal: Array((header + bad).utf8))
        }
        let replayed = try FileStorage.decode(snapshot: snapshot, journal: Array((header + fine).utf8))
        #expect(try replayed.store.table(named: "Box").value(0, 1) == .float(2.5))
    }

    /// Every single-byte change of a snapshot holding every kind is refused, or opens with
    /// exactly the same content; a snapshot cut short is refused.
    @Test func everySingleByteChangeIsCaught() throws {
        let objects =
            #"{"Box": [{"$id": 0, "id": 1, "payload": {"decimal": "9.99"}}, {"$id": 1, "id": 2, "payload": 2.5}, {"$id": 2, "id": 3, "payload": "x"}, {"$id": 3, "id": 4, "payload": {"date": 1.5}}, {"$id": 4, "id": 5, "payload": {"objectID": "507f1f77bcf86cd799439011"}}, {"$id": 5, "id": 6, "payload": null}, {"$id": 6, "id": 7, "payload": {"double": "NaN"}}]}"#
        try expectEverySingleByteChangeCaught(Self.snapshot(objects), truncationStride: 5)
    }

    /// Nested values, with the ones a careless format would confuse: a dictionary whose one
    /// key names a kind, an empty list and dictionary, a list holding tagged kinds.
    static let nested: [AnyValue] = [
        [1, "a", [true, .null]], [:], [], ["double": 2], ["b": ["x": [.decimal(Decimal(string: "9.99")!)]], "a": 1],
        [.double(2), .float(1.5), .date(Date(timeIntervalSinceReferenceDate: 3)), ["list": []]],
    ]

    @Test func nestedListsAndDictionariesSurviveSnapshotAndJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("nested.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: Self.schema(), options: options)
        try await withRealm(configuration) { realm in
            try await realm.write { r in
                for (id, value) in Self.nested.enumerated() where id < 3 {
                    _ = try r.dynamicCreate("Box", value: ["id": .int(Int64(id)), "payload": value.propertyValue])
                }
            }
            try await realm.save()
            try await realm.write { r in
                for (id, value) in Self.nested.enumerated() where id >= 3 {
                    _ = try r.dynamicCreate("Box", value: ["id": .int(Int64(id)), "payload": value.propertyValue])
                }
            }
            let journal = String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal")), as: UTF8.self)
            #expect(journal.contains(#"{"dictionary":{"double":2}}"#), "\(journal)")
        }
        for _ in 0..<2 {
            let read = try await withRealm(configuration) { try await Self.payloads($0) }
            #expect(read.map { AnyValue($0) } == Self.nested)
        }
        let snapshot = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(snapshot.contains(#""payload": [1, "a", [true, null]]"#), "\(snapshot)")
        #expect(snapshot.contains(#""payload": {"dictionary": {"a": 1, "b": {"dictionary": {"x": "#), "\(snapshot)")
    }

    @Test func badNestedValuesAreRefused() throws {
        let good = #"{"Box": [{"$id": 0, "id": 1, "payload": {"dictionary": {"a": [1], "b": 2}}}]}"#
        let loaded = try FileStorage.decode(snapshot: Array(Self.snapshot(good).utf8), journal: nil)
        let value = try loaded.store.table(named: "Box").value(0, 1)
        #expect(AnyValue(value) == ["a": [1], "b": 2])
        // {"list": […]} reads as a list too.
        let listed = good.replacingOccurrences(of: #"[1]"#, with: #"{"list": [1]}"#)
        let relisted = try FileStorage.decode(snapshot: Array(Self.snapshot(listed).utf8), journal: nil)
        #expect(try relisted.store.table(named: "Box").value(0, 1) == value)
        let payload = #""payload": {"dictionary": {"a": [1], "b": 2}}"#
        var deep = "1"
        for _ in 0..<(AnyValue.maximumNestingDepth + 1) { deep = "[" + deep + "]" }
        for bad in [
            #""payload": {"dictionary": {"b": 2, "a": [1]}}"#, #""payload": {"dictionary": {"a": 1, "a": 2}}"#,
            #""payload": {"dictionary": [1]}"#, #""payload": {"list": {"a": 1}}"#, #""payload": {"list": 1}"#,
            #""payload": {"a": 1, "b": 2}"#, #""payload": [{"money": 1}]"#, #""payload": [1,]"#,
            #""payload": {"dictionary": {"a": {"decimal": "x"}}}"#, #""payload": \#(deep)"#,
        ] {
            let text = Self.snapshot(good.replacingOccurrences(of: payload, with: bad))
            #expect("\(bad)") {
                _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
            } throws: { error in
                let error = error as? LiveObjectsError
                return error?.code == .corruptFile && (error?.property == "payload" || error?.property == nil)
            }
        }
    }

    /// In a journal line too: keys out of order are refused, a nested value replays.
    @Test func nestedValuesInAJournalLine() throws {
        let good = #"{"Box": [{"$id": 0, "id": 1, "payload": 1}]}"#
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":3,"schemaVersion":0,"base":0}"#)
        let bad = sealedLine(
            #"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"payload":{"dictionary":{"b":1,"a":2}}}]}}}"#)
        let fine = sealedLine(
            #"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"payload":[1,{"dictionary":{"a":[]}}]}]}}}"#)
        let snapshot = Array(Self.snapshot(good).utf8)
        #expect(throws: LiveObjectsError.self) {
            _ = try FileStorage.decode(snapshot: snapshot, journal: Array((header + bad).utf8))
        }
        let replayed = try FileStorage.decode(snapshot: snapshot, journal: Array((header + fine).utf8))
        #expect(AnyValue(try replayed.store.table(named: "Box").value(0, 1)) == [1, ["a": []]])
    }

    /// Every single-byte change of a snapshot holding nested values is refused, or opens with
    /// exactly the same content; a snapshot cut short is refused.
    @Test func everySingleByteChangeOfANestedValueIsCaught() throws {
        let objects =
            #"{"Box": [{"$id": 0, "id": 1, "payload": [1, "a", [true, null]]}, {"$id": 1, "id": 2, "payload": {"dictionary": {"a": {"dictionary": {}}, "b": [{"float": 1.5}]}}}, {"$id": 2, "id": 3, "payload": []}]}"#
        try expectEverySingleByteChangeCaught(Self.snapshot(objects), truncationStride: 3)
    }

    @Test func aMigrationAddsAnAnyValueOrTurnsAStringIntoOne() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("migrated.json")
        try await withRealm(Realm.Configuration(file: url, schema: Self.schema(payload: .string, optional: true))) {
            realm in
            try await realm.write { r in
                _ = try r.dynamicCreate("Box", value: ["id": 1, "payload": "3"])
                _ = try r.dynamicCreate("Box", value: ["id": 2, "payload": .null])
            }
        }
        let configuration = Realm.Configuration(
            file: url, schema: Self.schema(), schemaVersion: 1, options: .init(migration: { _ in }))
        let values = try await withRealm(configuration) { realm in
            try await realm.write { r in
                let box = try #require(try r.dynamicObject(ofType: "Box", forPrimaryKey: 2))
                box["payload"] = .decimal(Decimal(string: "9.99")!)
            }
            return try await Self.payloads(realm)
        }
        #expect(values == [.string("3"), .decimal(Decimal(string: "9.99")!)])
        #expect(try await withRealm(configuration) { try await Self.payloads($0) } == values)
        // A type that gains an AnyValue: null in every object.
        let url2 = try makeTemporaryDirectory().appendingPathComponent("added.json")
        let without = Schema([
            ObjectSchema(name: "Box", properties: [Property(name: "id", type: .int, isPrimaryKey: true)])
        ])
        try await withRealm(Realm.Configuration(file: url2, schema: without)) { realm in
            try await realm.write { r in _ = try r.dynamicCreate("Box", value: ["id": 1]) }
        }
        let added = try await withRealm(
            Realm.Configuration(
                file: url2, schema: Self.schema(), schemaVersion: 1, options: .init(migration: { _ in }))
        ) { try await Self.payloads($0) }
        #expect(added == [.null])
    }
}
