import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class MapHolder: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var settings: Map<String, String>
    @Persisted var scores: Map<String, Int?>
    @Persisted var name = ""
}

private let mapTypes: [Object.Type] = [MapHolder.self]

@Suite struct MapTests {
    @Test func theSchemaSaysMap() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        let schema = try #require(realm.schema["MapHolder"])
        let settings = try #require(schema["settings"])
        #expect(settings.isMap && settings.isList && !settings.isSet && settings.type == .string)
        #expect(settings.description == "settings: [String: String]")
        #expect(schema["scores"]?.description == "scores: [String: Int?]")
        let target = ObjectSchema(name: "T", properties: [Property(name: "x", type: .int)])
        let links = ObjectSchema(
            name: "H", properties: [Property(name: "m", type: .object, objectType: "T", isMap: true)])
        #expect(throws: LiveObjectsError.self) { try Schema([target, links]).validate() }
        let both = ObjectSchema(name: "B", properties: [Property(name: "m", type: .int, isSet: true, isMap: true)])
        #expect(throws: LiveObjectsError.self) { try Schema([both]).validate() }
    }

    @Test func unmanagedMapBehavesLikeADictionary() {
        let map = Map<String, Int>()
        map["b"] = 2
        map["a"] = 1
        map["c"] = 3
        map["b"] = nil
        #expect(map.keys == ["a", "c"] && map.values == [1, 3] && map.count == 2)
        #expect(map["a"] == 1 && map["b"] == nil && map.contains(key: "c") && !map.isManaged)
        map.merge(["c": 30, "d": 4])
        #expect(map.map(\.key) == ["a", "c", "d"] && map.map(\.value) == [1, 30, 4])
        map.removeAll()
        #expect(map.isEmpty)
    }

    @Test func managedMapKeepsKeysSortedAndValuesLive() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        try await realm.write { r in
            let holder = MapHolder()
            holder.id = 1
            holder.settings["theme"] = "dark"
            holder.settings["font"] = "serif"
            try r.add(holder)
            #expect(holder.settings.isManaged)
            #expect(holder.settings.keys == ["font", "theme"])
            holder.settings["size"] = "12"
            holder.settings["theme"] = "light"
            holder.scores["r1"] = 10
            holder.scores["r2"] = .some(nil)
        }
        try await realm.read { r in
            let found = r.object(ofType: MapHolder.self, forPrimaryKey: 1)
            let holder = try #require(found)
            #expect(holder.settings.dictionary == ["font": "serif", "size": "12", "theme": "light"])
            #expect(holder.settings.keys == ["font", "size", "theme"])
            #expect(holder.settings["theme"] == "light" && holder.settings["none"] == nil)
            #expect(holder.scores.count == 2 && holder.scores["r1"] == .some(10))
            #expect(holder.scores["r2"] == .some(nil), "a key with nil as its value")
            #expect(holder.scores["r3"] == nil)
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
        try await realm.write { r in
            let found = r.object(ofType: MapHolder.self, forPrimaryKey: 1)
            let holder = try #require(found)
            holder.settings.removeObject(for: "font")
            holder.scores["r2"] = nil
        }
        try await realm.read { r in
            let found = r.object(ofType: MapHolder.self, forPrimaryKey: 1)
            let holder = try #require(found)
            #expect(holder.settings.keys == ["size", "theme"] && holder.scores.keys == ["r1"])
        }
    }

    @Test func createFromADictionaryAndReadAsPairs() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        try await realm.write { r in
            let holder = try r.create(
                MapHolder.self, value: ["id": 1, "settings": ["b": "2", "a": "1"], "scores": ["x": nil, "y": 3]])
            #expect(holder.settings.keys == ["a", "b"] && holder.settings.values == ["1", "2"])
            #expect(holder.scores["x"] == .some(nil) && holder.scores["y"] == .some(3))
            let copy = try MapHolder(value: ["id": 2, "settings": ["k": "v"]])
            #expect(copy.settings["k"] == "v" && !copy.settings.isManaged)
        }
    }

    @Test func codableRoundTripIsAJSONObject() async throws {
        let json = #"{"id":7,"name":"","scores":{"a":null,"b":2},"settings":{"theme":"dark","font":"serif"}}"#
        let decoded = try JSONDecoder().decode(MapHolder.self, from: Data(json.utf8))
        #expect(decoded.settings.keys == ["font", "theme"] && decoded.scores["a"] == .some(nil))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(decoded), as: UTF8.self)
        #expect(text == #"{"id":7,"name":"","scores":{"a":null,"b":2},"settings":{"font":"serif","theme":"dark"}}"#)
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        let managed = try await realm.write { r in
            try r.add(try JSONDecoder().decode(MapHolder.self, from: Data(json.utf8)))
            return String(
                decoding: try encoder.encode(r.object(ofType: MapHolder.self, forPrimaryKey: 7)!), as: UTF8.self)
        }
        #expect(managed == text)
        #expect(throws: LiveObjectsError.self) {
            try JSONDecoder().decode(MapHolder.self, from: Data(#"{"id":1,"settings":{"a.b":"x"}}"#.utf8))
        }
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(MapHolder.self, from: Data(#"{"id":1,"settings":["x"]}"#.utf8))
        }
    }

    @Test func aDetachedCopyHoldsTheEntriesUnmanaged() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        try await realm.write { r in
            _ = try r.create(MapHolder.self, value: ["id": 1, "settings": ["b": "2", "a": "1"], "scores": ["n": nil]])
        }
        let copy = try await realm.read { r in r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.detached() }
        #expect(!copy.settings.isManaged && copy.settings.dictionary == ["a": "1", "b": "2"])
        #expect(copy.scores.keys == ["n"] && copy.scores["n"] == .some(nil))
        copy.settings["c"] = "3"
        #expect(try await realm.read { r in r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.settings.count } == 2)
    }

    @Test func badKeysAreRefusedAndChangeNothing() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        try await realm.write { r in _ = try r.create(MapHolder.self, value: ["id": 1, "settings": ["a": "1"]]) }
        for key in ["", "a.b", "$x"] {
            await #expect(throws: LiveObjectsError.self, "key \(key)") {
                try await realm.write { r in
                    let holder = r.object(ofType: MapHolder.self, forPrimaryKey: 1)!
                    holder.settings["z"] = "ok"
                    holder.settings[key] = "bad"
                }
            }
        }
        do {
            try await realm.write { r in _ = try r.create(MapHolder.self, value: ["id": 2, "settings": ["a.b": "1"]]) }
            Issue.record("a key with a dot was accepted")
        } catch let error as LiveObjectsError {
            #expect(error.code == .typeMismatch && error.property == "settings")
        }
        try await realm.read { r in
            #expect(r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.settings.dictionary == ["a": "1"])
            #expect(r.objects(MapHolder.self).count == 1)
        }
        do {
            try await realm.read { r in r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.settings["a"] = "x" }
            Issue.record("a map changed outside a write")
        } catch let error as LiveObjectsError {
            #expect(error.code == .notInWriteTransaction)
        }
    }

    @Test func queriesReadAMapsValuesAsAList() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        var rng = SeededRandomNumberGenerator(seed: 0x3a9)
        let words = ["dark", "light", "serif", "mono"]
        let keys = ["theme", "font", "size"]
        let maps: [[String: String]] = (0..<40).map { _ in
            var map: [String: String] = [:]
            for _ in 0..<rng.int(in: 0...3) { map[rng.element(of: keys)] = rng.element(of: words) }
            return map
        }
        try await realm.write { r in
            for (id, map) in maps.enumerated() { _ = try r.create(MapHolder.self, value: ["id": id, "settings": map]) }
        }
        try await realm.read { r in
            let results = r.objects(MapHolder.self)
            let cases: [(String, ([String: String]) -> Bool)] = [
                ("ANY settings == 'dark'", { $0.values.contains("dark") }),
                ("settings == 'mono'", { $0.values.contains("mono") }),
                ("'serif' IN settings", { $0.values.contains("serif") }),
                ("NONE settings == 'light'", { !$0.values.contains("light") }),
                ("settings.@count >= 2", { $0.count >= 2 }),
                ("ANY settings BEGINSWITH 'li'", { $0.values.contains { $0.hasPrefix("li") } }),
                ("settings['theme'] == 'dark'", { $0["theme"] == "dark" }),
                ("settings['theme'] != 'dark'", { $0["theme"] != "dark" }),
                ("settings['font'] == nil", { $0["font"] == nil }),
                ("settings['size'] BEGINSWITH[c] 'SE'", { $0["size"]?.lowercased().hasPrefix("se") == true }),
                ("settings['theme'] IN {'mono', 'light'}", { ["mono", "light"].contains($0["theme"] ?? "") }),
                ("NOT settings['theme'] == 'dark' AND settings.@count > 0", { $0["theme"] != "dark" && !$0.isEmpty }),
                ("ANY settings.@keys == 'font'", { $0["font"] != nil }),
                ("settings.@keys == 'size'", { $0["size"] != nil }),
                ("NONE settings.@keys BEGINSWITH 't'", { !$0.keys.contains { $0.hasPrefix("t") } }),
                ("ANY settings.@values == 'serif'", { $0.values.contains("serif") }),
                ("settings['theme'] == settings['font']", { $0["theme"] == $0["font"] }),
            ]
            for (predicate, keep) in cases {
                let found = try results.filter(predicate).map(\.id)
                #expect(found == maps.indices.filter { keep(maps[$0]) }, "\(predicate)")
            }
            func expected(_ keep: ([String: String]) -> Bool) -> [Int] { maps.indices.filter { keep(maps[$0]) } }
            #expect(results.where { $0.settings["theme"] == "dark" }.map(\.id) == expected { $0["theme"] == "dark" })
            #expect(results.where { $0.settings["font"] == String?.none }.map(\.id) == expected { $0["font"] == nil })
            #expect(results.where { $0.settings.keys.contains("size") }.map(\.id) == expected { $0["size"] != nil })
            #expect(results.where { $0.settings.keys == "font" }.map(\.id) == expected { $0["font"] != nil })
            #expect(
                results.where { $0.settings.values.contains("mono") }.map(\.id)
                    == expected { $0.values.contains("mono") })
            #expect(
                results.where { $0.settings.contains("serif") }.map(\.id) == expected { $0.values.contains("serif") })
            #expect(results.where { $0.settings.count == 2 }.map(\.id) == expected { $0.count == 2 })
            #expect(
                results.where { $0.settings["size"].contains("ser", options: .caseInsensitive) }.map(\.id)
                    == expected { $0["size"]?.contains("ser") == true })
        }
    }

    @Test func mapStepsParsePrintAndFailClearly() async throws {
        for text in ["settings['theme'] == 'dark'", "ANY settings.@keys == 'a'", "settings.@values == 'b'"] {
            let parsed = try PredicateParser.parse(text)
            #expect(try PredicateParser.parse(parsed.description) == parsed, "\(text) → \(parsed)")
        }
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        for bad in [
            "name['a'] == 'x'", "settings['a'].b == 'x'", "settings[1] == 'x'", "settings['a' == 'x'",
            "name.@keys == 'a'",
        ] {
            do {
                _ = try await realm.read { r in try r.objects(MapHolder.self).filter(bad).count }
                Issue.record("\(bad) was accepted")
            } catch let error as LiveObjectsError {
                #expect(error.code == .invalidQuery, "\(bad): \(error)")
            }
        }
    }

    @Test func keyPathFilteredChangesOfAMap() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        try await realm.write { r in _ = try r.create(MapHolder.self, value: ["id": 1]) }
        let changes = try await realm.read { r in
            r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.changes(keyPaths: [\.settings])
        }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        // A change of another property is not reported; one of the map is, with its keys.
        try await realm.write { r in r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.name = "x" }
        try await realm.write { r in r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.scores["a"] = 1 }
        try await realm.write { r in r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.settings["k"] = "v" }
        guard case .changed(_, let properties) = try #require(await iterator.next()) else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.name) == ["settings"])
        #expect(properties.first.flatMap(MapChange.init) == MapChange(insertions: ["k"]))
    }

    @Test func aCancelledWriteRestoresKeysAndValues() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        try await realm.write { r in
            _ = try r.create(MapHolder.self, value: ["id": 1, "settings": ["a": "1", "c": "3"]])
        }
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await realm.write { r in
                let settings = r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.settings
                settings["b"] = "2"
                settings.removeObject(for: "a")
                settings["c"] = "30"
                settings["d"] = "4"
                settings.removeAll()
                settings["e"] = "5"
                throw Stop()
            }
        }
        try await realm.read { r in
            let holder = r.object(ofType: MapHolder.self, forPrimaryKey: 1)!
            #expect(holder.settings.dictionary == ["a": "1", "c": "3"])
            #expect(StoreInvariants.violations(in: r.store).isEmpty)
        }
        try await realm.write { r in try r.delete(r.object(ofType: MapHolder.self, forPrimaryKey: 1)!) }
        try await realm.read { r in #expect(StoreInvariants.violations(in: r.store).isEmpty) }
    }

    @Test func anObjectsChangeOfAMapNamesTheKeys() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        try await realm.write { r in
            _ = try r.create(MapHolder.self, value: ["id": 1, "settings": ["a": "1", "b": "2", "c": "3"]])
        }
        let changes = try await realm.read { r in r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.changes() }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        try await realm.write { r in
            let settings = r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.settings
            settings["a"] = "10"
            settings["b"] = nil
            settings["d"] = "4"
            settings["c"] = "3"  // the same value: no change
        }
        guard case .changed(_, let properties) = try #require(await iterator.next()) else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.name) == ["settings"])
        let change = try #require(MapChange(properties[0]))
        #expect(change == MapChange(insertions: ["d"], modifications: ["a"], deletions: ["b"]))
    }

    @Test func aMapsOwnChangesNameTheKeys() async throws {
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        try await realm.write { r in
            _ = try r.create(MapHolder.self, value: ["id": 1, "settings": ["b": "2", "a": "1"]])
        }
        let changes = try await realm.read { r in
            r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.settings.changes()
        }
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next() == .initial(keys: ["a", "b"]))
        func write(_ body: @escaping @Sendable (MapHolder) -> Void) async throws {
            try await realm.write { r in body(r.object(ofType: MapHolder.self, forPrimaryKey: 1)!) }
        }
        // A write of another property, or of a key to the value it has, yields nothing; the
        // next element is the next real change.
        try await write { $0.name = "x" }
        try await write { $0.settings["a"] = "1" }
        try await write { $0.scores["s"] = 1 }
        try await write {
            $0.settings["a"] = "10"
            $0.settings["b"] = nil
            $0.settings["c"] = "3"
        }
        #expect(
            await iterator.next()
                == .changed(MapChange(insertions: ["c"], modifications: ["a"], deletions: ["b"])))
        try await write { $0.settings.removeAll() }
        #expect(await iterator.next() == .changed(MapChange(deletions: ["a", "c"])))
        try await realm.write { r in try r.delete(r.object(ofType: MapHolder.self, forPrimaryKey: 1)!) }
        #expect(await iterator.next() == .deleted)
        #expect(await iterator.next() == nil)
        // An unmanaged map yields nothing.
        var unmanaged = Map<String, Int>().changes().makeAsyncIterator()
        #expect(await unmanaged.next() == nil)
    }
}

/// A managed `Map` against Swift's `Dictionary` over random operations, and each write's
/// ``MapChange`` against the difference of the dictionaries before and after it.
@Suite struct MapRandomizedTests {
    enum Operation: CustomStringConvertible {
        case set(String, Int?), remove(String), merge([String: Int?]), removeAll

        var description: String {
            switch self {
            case .set(let k, let v): "[\(k)] = .some(\(v.map(String.init) ?? "nil"))"
            case .remove(let k): "removeObject(for: \(k))"
            case .merge(let d):
                "merge(\(d.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.map(String.init) ?? "nil")" }))"
            case .removeAll: "removeAll()"
            }
        }

        static func random(_ rng: inout SeededRandomNumberGenerator) -> Operation {
            let key = { (rng: inout SeededRandomNumberGenerator) in "k\(rng.int(in: 0...7))" }
            let value = { (rng: inout SeededRandomNumberGenerator) -> Int? in
                rng.int(in: 0...4) == 0 ? nil : rng.int(in: 0...3)
            }
            switch rng.int(in: 0...9) {
            case 0...4: return .set(key(&rng), value(&rng))
            case 5...7: return .remove(key(&rng))
            case 8:
                var d: [String: Int?] = [:]
                for _ in 0..<rng.int(in: 0...3) { d[key(&rng)] = .some(value(&rng)) }
                return .merge(d)
            default: return .removeAll
            }
        }

        func apply(to map: Map<String, Int?>) {
            switch self {
            case .set(let k, let v): map[k] = .some(v)
            case .remove(let k): map.removeObject(for: k)
            case .merge(let d): map.merge(d)
            case .removeAll: map.removeAll()
            }
        }

        func apply(to dictionary: inout [String: Int?]) {
            switch self {
            case .set(let k, let v): dictionary[k] = .some(v)
            case .remove(let k): dictionary[k] = nil
            case .merge(let d): dictionary.merge(d) { $1 }
            case .removeAll: dictionary.removeAll()
            }
        }
    }

    @Test func matchesSwiftDictionaryAndReportsChangedKeys() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_MAP_SEED") ?? 0x3a9_5eed
        let writes = TestEnvironment.isLong ? 400 : 60
        var rng = SeededRandomNumberGenerator(seed: seed)
        var done: [String] = []
        let context = { "seed \(seed) (LIVEOBJECTS_MAP_SEED), operations: \(done.joined(separator: "; "))" }
        let realm = try await openFreshRealm(objectTypes: mapTypes)
        try await realm.write { r in _ = try r.create(MapHolder.self, value: ["id": 1]) }
        let changes = try await realm.read { r in r.object(ofType: MapHolder.self, forPrimaryKey: 1)!.changes() }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        var reference: [String: Int?] = [:]
        for write in 0..<writes {
            let before = reference
            let operations = (0..<rng.int(in: 1...3)).map { _ in Operation.random(&rng) }
            done.append(operations.map(\.description).joined(separator: ", "))
            for operation in operations { operation.apply(to: &reference) }
            let (note, expected) = (context(), reference)
            try await realm.write { r in
                let holder = r.object(ofType: MapHolder.self, forPrimaryKey: 1)!
                holder.name = "write \(write)"  // every write notifies
                for operation in operations { operation.apply(to: holder.scores) }
                let violations = StoreInvariants.violations(in: r.store)
                #expect(violations.isEmpty, "\(violations); \(note)")
                #expect(holder.scores.keys == expected.keys.sorted(), "\(note)")
                #expect(holder.scores.values == expected.keys.sorted().map { expected[$0]! }, "\(note)")
                #expect((0...7).allSatisfy { holder.scores["k\($0)"] == expected["k\($0)"] }, "\(note)")
            }
            guard case .changed(_, let properties) = try #require(await iterator.next(), "\(context())") else {
                Issue.record("expected a change; \(context())")
                return
            }
            let wanted = MapChange(
                insertions: reference.keys.filter { before[$0] == nil }.sorted(),
                modifications: reference.keys.filter { before[$0] != nil && before[$0]! != reference[$0]! }.sorted(),
                deletions: before.keys.filter { reference[$0] == nil }.sorted())
            // A write that changes the map and changes it back may or may not name it.
            let change = properties.first { $0.name == "scores" }.flatMap(MapChange.init) ?? MapChange()
            #expect(change == wanted, "\(context())")
        }
    }
}
