import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Nested lists and dictionaries in an `AnyValue`: stored whole, read back as written, rolled
/// back with a cancelled write, kept by a frozen copy, `Codable`, and read into by queries
/// (`value[0]`, `value['k']`, `value[*]`, `value.@count`, `@type`), against a plain Swift
/// evaluation of the same rules.
@Suite struct NestedAnyValueTests {
    static let pet: AnyValue = ["name": "Rex", "age": 3, "tags": ["good", "dog"], "owner": ["name": "Ann"]]

    /// Values whose kinds and shapes the fixed queries tell apart.
    static let values: [AnyValue] = [
        [1, 2, 3], ["a", ["b", 1]], [], pet, ["name": "Tom", "age": 3.0], [:], 1, "x", ["date": 1],
        [[1], [2, [3]]], [.null, 1.5, .decimal(Decimal(string: "2")!)],
    ]

    @Test func nestedValuesAreStoredRolledBackAndFrozen() async throws {
        let realm = try await openFreshRealm(objectTypes: [Payload.self])
        try await realm.write { r in
            for (id, value) in Self.values.enumerated() {
                _ = try r.create(Payload.self, value: ["id": id, "value": value])
            }
        }
        let stored = try await realm.read { r in try r.objects(Payload.self).sorted(byKeyPath: "id").map(\.value) }
        #expect(stored == Self.values)
        #expect(stored[3]["tags"]?[1] == "dog" && stored[3]["owner"]?["name"] == "Ann")
        #expect(stored.map(\.kindName).prefix(6) == ["list", "list", "list", "dictionary", "dictionary", "dictionary"])
        let frozen = try await realm.read { r in r.freeze() }
        // A cancelled write leaves the value as it was; the dynamic API takes the stored form.
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await realm.write { r in
                r.object(ofType: Payload.self, forPrimaryKey: 3)!.value = ["changed": true]
                try r.dynamicObject(ofType: "Payload", forPrimaryKey: .int(0))!.set(
                    "value", to: AnyValue.list([[["deep"]]]).propertyValue)
                throw Stop()
            }
        }
        try await realm.write { r in
            try r.dynamicObject(ofType: "Payload", forPrimaryKey: .int(1))!.set(
                "value", to: AnyValue.dictionary(["k": [1, ["x": .null]]]).propertyValue)
        }
        let after = try await realm.read { r in try r.objects(Payload.self).sorted(byKeyPath: "id").map(\.value) }
        var expected = Self.values
        expected[1] = ["k": [1, ["x": .null]]]
        #expect(after == expected)
        let kept = frozen.objects(Payload.self).sorted { $0.id < $1.id }.map { $0[dynamicMember: \Payload.value] }
        #expect(kept == Self.values)
        try await realm.read { r in #expect(StoreInvariants.violations(in: r.store).isEmpty) }
        // JSON input: an array is a list, an object that names no kind a dictionary.
        let fromJSON = try await realm.write { r in
            try r.create(Payload.self, json: Data(#"{"id": 99, "value": {"a": [1, {"name": "x"}], "b": 2}}"#.utf8))
                .value
        }
        #expect(fromJSON == ["a": [1, ["name": "x"]], "b": 2])
        // Swift arrays and dictionaries as input.
        let fromSwift = try await realm.write { r in
            try r.create(
                Payload.self, value: ["id": 98, "value": ["a": [1, "x"], "b": [] as [Any]] as [String: Any]]
            )
            .value
        }
        #expect(fromSwift == ["a": [1, "x"], "b": []])
    }

    /// A change inside a nested value is a change of the property; setting an equal value is
    /// none.
    @Test func anObjectsChangeNamesThePropertyOfANestedValue() async throws {
        let realm = try await openFreshRealm(objectTypes: [Payload.self])
        try await realm.write { r in _ = try r.create(Payload.self, value: ["id": 1, "value": Self.pet]) }
        let changes = try await realm.read { r in
            r.object(ofType: Payload.self, forPrimaryKey: 1)!.changes(keyPaths: [\.value])
        }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        try await realm.write { r in
            let object = r.object(ofType: Payload.self, forPrimaryKey: 1)!
            object.value = Self.pet
            object.note = "not watched"
        }
        try await realm.write { r in
            let object = r.object(ofType: Payload.self, forPrimaryKey: 1)!
            guard case .dictionary(var values) = object.value else { return }
            values["tags"] = ["good", "dog", "sleepy"]
            object.value = .dictionary(values)
        }
        guard case .changed(let object, let properties) = try #require(await iterator.next()) else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.name) == ["value"])
        #expect(object[dynamicMember: \Payload.value]["tags"]?[2] == "sleepy")
    }

    /// Scalars first, then lists, then dictionaries.
    @Test func sortsPutListsThenDictionariesLast() async throws {
        let realm = try await openFreshRealm(objectTypes: [Payload.self])
        try await realm.write { r in
            for (id, value) in Self.values.enumerated() {
                _ = try r.create(Payload.self, value: ["id": id, "value": value])
            }
        }
        let kinds = try await realm.read { r in
            try r.objects(Payload.self).sorted(byKeyPath: "value").map(\.value.kindName)
        }
        let rank = kinds.map { $0 == "list" ? 1 : ($0 == "dictionary" ? 2 : 0) }
        #expect(rank == rank.sorted(), "\(kinds)")
        #expect(kinds.count == Self.values.count)
    }

    @Test func nestingDeeperThanTheLimitIsRefused() async throws {
        let realm = try await openFreshRealm(objectTypes: [Payload.self])
        @Sendable func nested(_ depth: Int) -> AnyValue {
            var value: AnyValue = 1
            for i in 0..<depth { value = i.isMultiple(of: 2) ? [value] : ["k": value] }
            return value
        }
        try await realm.write { r in
            _ = try r.create(Payload.self, value: ["id": 1, "value": nested(AnyValue.maximumNestingDepth)])
        }
        await #expect {
            try await realm.write { r in
                _ = try r.create(Payload.self, value: ["id": 2, "value": nested(AnyValue.maximumNestingDepth + 1)])
            }
        } throws: { error in
            (error as? LiveObjectsError)?.code == .typeMismatch
        }
        #expect(try await realm.read { r in r.objects(Payload.self).count } == 1)
    }

    @Test func codableWritesArraysAndWrappedDictionaries() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for value in Self.values {
            let data = try encoder.encode(value)
            #expect(
                try JSONDecoder().decode(AnyValue.self, from: data) == value, "\(String(decoding: data, as: UTF8.self))"
            )
        }
        let text = String(decoding: try encoder.encode(AnyValue.dictionary(["a": [1, ["float": 1]]])), as: UTF8.self)
        #expect(text == #"{"dictionary":{"a":[1,{"dictionary":{"float":1}}]}}"#)
        // A bare object is a dictionary unless it is one member naming a kind.
        let read = try JSONDecoder().decode(
            [AnyValue].self,
            from: Data(#"[{"a": 1, "b": [true]}, {}, {"date": 0}, {"list": [1]}, {"dictionary": {"date": 0}}]"#.utf8))
        #expect(
            read == [
                ["a": 1, "b": [true]], [:], .date(Date(timeIntervalSinceReferenceDate: 0)), [1],
                ["date": 0],
            ])
    }

    /// Each query against the same rules written in Swift over ``values``.
    @Test func queriesReadIntoNestedValues() async throws {
        let realm = try await openFreshRealm(objectTypes: [Payload.self])
        try await realm.write { r in
            for (id, value) in Self.values.enumerated() {
                _ = try r.create(Payload.self, value: ["id": id, "value": value])
            }
        }
        func ids(_ keep: (AnyValue) -> Bool) -> [Int] { Self.values.indices.filter { keep(Self.values[$0]) } }
        let cases: [(String, [Int])] = [
            ("value[0] == 1", ids { $0[0] == 1 }),
            ("value[1][0] == 'b'", [1]),
            ("value['name'] == 'Rex'", [3]),
            ("value['age'] == 3", [3, 4]),
            ("value['owner']['name'] BEGINSWITH 'A'", [3]),
            ("value['tags'][*] == 'dog'", [3]),
            ("ANY value[*] == 2", [0, 10]),
            // [*] of a value that is no list or dictionary yields nothing: ALL holds for it.
            ("ALL value[*] > 0", [0, 2, 5, 6, 7, 8]),
            ("value[*].@type == 'list'", [1, 3, 9]),
            ("value.@count == 3", [0, 10]),
            ("value.@count == 0", [2, 5]),
            ("value.@size == 1", [6, 7, 8]),
            // The count of the elements [*] yields.
            ("value[*].@count == 2", [1, 4, 9]),
            ("value['tags'].@count == 2", [3]),
            ("value.@type == 'list'", ids { $0.kindName == "list" }),
            ("value.@type == 'dictionary'", ids { $0.kindName == "dictionary" }),
            ("value[0].@type == 'null'", ids { $0[0] == nil || $0[0] == .null }),
            ("value['missing'] == nil", ids { $0["missing"] == nil }),
            ("value['date'] == 1", [8]),
            ("value[2] == 2", [10]),
        ]
        try await realm.read { r in
            for (predicate, expected) in cases {
                #expect(try r.objects(Payload.self).filter(predicate).map(\.id).sorted() == expected, "\(predicate)")
            }
            // Typed queries write the same paths.
            let results = r.objects(Payload.self)
            let typed: [(Results<Payload>, String)] = [
                (results.where { $0.value[0] == 1 }, "value[0] == 1"),
                (results.where { $0.value["owner"]["name"] == "Ann" }, "value['owner']['name'] == 'Ann'"),
                (results.where { $0.value["tags"].elements.contains("dog") }, "value['tags'][*] == 'dog'"),
                (results.where { $0.value.count == 3 }, "value.@count == 3"),
                (results.where { $0.value.elements.count == 2 }, "value[*].@count == 2"),
                (results.where { $0.value[1].kind == "list" }, "value[1].@type == 'list'"),
            ]
            for (query, text) in typed {
                let expected = try results.filter(text).map(\.id).sorted()
                #expect(!expected.isEmpty && query.map(\.id).sorted() == expected, "\(text)")
            }
            for bad in ["value[0].name == 1", "note[0] == 1", "value[-1] == 1", "value['a'].@type.x == 1"] {
                #expect(throws: LiveObjectsError.self, "\(bad)") { try r.objects(Payload.self).filter(bad).count }
            }
            for text in ["value[0][*] == 1", "value['a'][2].@type == 'list'"] {
                let parsed = try PredicateParser.parse(text)
                #expect(try PredicateParser.parse(parsed.description) == parsed, "\(parsed)")
            }
        }
    }
}

/// Random writes of nested values (through the model, the dynamic API, cancelled writes and
/// deletes) against a dictionary; after every step the stored values, their `Codable` round
/// trip and a random query that reads into them must match the reference
/// (``NestedAnyValueReference``). `LIVEOBJECTS_MIXED_NESTED_SEED` (a number, or `random`)
/// replays one run; a failure prints the seed and the operations.
@Suite struct NestedAnyValueRandomTests {
    struct Stop: Error {}

    @Test func randomNestedValuesAndQueriesMatchTheReference() async throws {
        let failure = try await SeededRun.run(
            "NestedAnyValueRandomTests", variable: "LIVEOBJECTS_MIXED_NESTED_SEED", seed: 0x4E57, steps: (120, 500)
        ) { steps, rng, log in try await Self.run(steps: steps, &rng, &log) }
        #expect(failure == nil, "\(failure ?? "")")
    }

    /// Runs the steps; returns what first differed, if anything.
    static func run(steps: Int, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]) async throws
        -> String?
    {
        let realm = try await openFreshRealm(objectTypes: [Payload.self])
        var reference: [Int: AnyValue] = [:]
        for step in 0..<steps {
            let value = NestedAnyValueReference.value(&rng)
            let ids = reference.keys.sorted()
            let id = ids.isEmpty || rng.chance(0.3) ? step : rng.element(of: ids)
            switch rng.int(0...4) {
            case 0 where reference[id] != nil:
                log.append("delete \(id)")
                try await realm.write { r in try r.delete(r.object(ofType: Payload.self, forPrimaryKey: id)!) }
                reference[id] = nil
            case 1 where reference[id] != nil:
                log.append("cancelled set \(id) = \(value)")
                do {
                    try await realm.write { r in
                        r.object(ofType: Payload.self, forPrimaryKey: id)!.value = value
                        throw Stop()
                    }
                } catch is Stop {}
            case 2 where reference[id] != nil:
                log.append("dynamic set \(id) = \(value)")
                try await realm.write { r in
                    try r.dynamicObject(ofType: "Payload", forPrimaryKey: .int(Int64(id)))!.set(
                        "value", to: value.propertyValue)
                }
                reference[id] = value
            default:
                log.append("set \(id) = \(value)")
                try await realm.write { r in
                    _ = try r.create(Payload.self, value: ["id": id, "value": value], update: .modified)
                }
                reference[id] = value
            }
            let data = try JSONEncoder().encode(value)
            if try JSONDecoder().decode(AnyValue.self, from: data) != value {
                return "\(value) read back from \(String(decoding: data, as: UTF8.self)) differs"
            }
            if let failure = try await check(realm, reference, &rng, &log) { return failure }
        }
        return nil
    }

    static func check(
        _ realm: Realm, _ reference: [Int: AnyValue], _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]
    ) async throws -> String? {
        let stored = try await realm.read { r in
            Dictionary(uniqueKeysWithValues: r.objects(Payload.self).map { ($0.id, $0.value) })
        }
        if stored != reference { return "stored \(stored) != reference \(reference)" }
        let query = NestedAnyValueReference.query(&rng)
        log.append("query \(query.text)")
        let found = try await realm.read { r in try r.objects(Payload.self).filter(query.text).map(\.id).sorted() }
        let expected = reference.filter { query.matches($0.value) }.keys.sorted()
        if found != expected { return "\(query.text): \(found) != \(expected)" }
        return nil
    }
}
