import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// Lists, sets and maps of `AnyValue` in snapshots and journals: each element written in the
/// form of a mixed value (`{"list": …}`, `{"dictionary": …}`, `{"link": …}` for containers and
/// links), read back the same, bad elements refused as corrupt.
@Suite struct AnyValueCollectionFileTests {
    static let schema = Schema([
        ObjectSchema(
            name: "Bag",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "items", type: .mixed, isList: true),
                Property(name: "fields", type: .mixed, isMap: true),
                Property(name: "members", type: .mixed, isList: true, isSet: true),
            ]),
        ObjectSchema(name: "Dog", properties: [Property(name: "id", type: .int, isPrimaryKey: true)]),
    ])

    static func values(_ realm: Realm) async throws -> [[PropertyValue]] {
        try await realm.read { realm in
            try realm.dynamicObjects("Bag").map { [$0["id"], $0["items"], $0["fields"], $0["members"]] }
                .sorted { $0[0].description < $1[0].description }
        }
    }

    static func pairs(_ entries: KeyValuePairs<String, AnyValue>) -> PropertyValue {
        .list(entries.map { .list([.string($0.key), $0.value.propertyValue]) })
    }

    static func list(_ elements: [AnyValue]) -> PropertyValue { .list(elements.map(\.propertyValue)) }

    @Test func collectionsSurviveSnapshotAndJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("bags.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: Self.schema, options: options)
        let nested: AnyValue = ["a": [1, "two", nil, 2.5], "b": .dictionary([:]), "c": .list([])]
        let expected = try await withRealm(configuration) { realm in
            try await realm.write { r in
                let dog = try r.dynamicCreate("Dog", value: ["id": 7])
                let link = AnyValue.link(.init(objectType: "Dog", key: dog.key))
                _ = try r.dynamicCreate(
                    "Bag",
                    value: [
                        "id": 1, "items": Self.list([1, "1", nil, nested, link, .decimal(Decimal(string: "0.1")!)]),
                        "fields": Self.pairs(["n": 3, "nested": nested, "dog": link]),
                        "members": Self.list([true, 1, link, [link]]),
                    ])
            }
            try await realm.save()
            // In the journal only: a new bag, and the first bag's collections changed.
            try await realm.write { r in
                let dog = try #require(try r.dynamicObject(ofType: "Dog", forPrimaryKey: 7))
                let link = AnyValue.link(.init(objectType: "Dog", key: dog.key))
                _ = try r.dynamicCreate(
                    "Bag",
                    value: [
                        "id": 2, "items": Self.list([link, [link], .data(Data([1, 2]))]),
                        "fields": Self.pairs(["x": link]), "members": Self.list([.uuid(UUID()), "s"]),
                    ])
                // A bag linking to a dog made in the same write (the journal lists bags first).
                let pup = try r.dynamicCreate("Dog", value: ["id": 8])
                let pupLink = AnyValue.link(.init(objectType: "Dog", key: pup.key))
                _ = try r.dynamicCreate(
                    "Bag",
                    value: [
                        "id": 3, "items": Self.list([pupLink]), "fields": Self.pairs(["pup": ["p": pupLink]]),
                        "members": Self.list([pupLink]),
                    ])
                let first = try #require(try r.dynamicObject(ofType: "Bag", forPrimaryKey: 1))
                first["items"] = Self.list([nested, .date(Date(timeIntervalSince1970: 5))])
                first["fields"] = Self.pairs(["only": [link]])
            }
            let journal = String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal")), as: UTF8.self)
            #expect(journal.contains(#"["only",[{"link":{"type":"Dog","id":0}}]]"#), "\(journal)")
            return try await Self.values(realm)
        }
        #expect(expected.count == 3)
        let afterJournal = try await withRealm(configuration) { try await Self.values($0) }
        #expect(afterJournal == expected)
        let snapshot = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(snapshot.contains(#""name": "items", "type": "mixed", "list": true"#), "\(snapshot)")
        #expect(snapshot.contains(#"{"link": {"type": "Dog", "id": 0}}"#), "\(snapshot)")
        #expect(try await withRealm(configuration) { try await Self.values($0) } == expected)
    }

    static func snapshot(_ objects: String) -> String {
        let schema =
            #"[{"name": "Bag", "properties": [{"name": "id", "type": "int", "primaryKey": true}, {"name": "items", "type": "mixed", "list": true}, {"name": "fields", "type": "mixed", "map": true}, {"name": "members", "type": "mixed", "set": true}]}, {"name": "Dog", "properties": [{"name": "id", "type": "int", "primaryKey": true}]}]"#
        return BadFileTests.file(version: 1, schema: schema, objects: objects)
    }

    static let good =
        #"{"Bag": [{"$id": 0, "id": 1, "items": [1, [2, {"link": {"type": "Dog", "id": 0}}], {"decimal": "0.1"}], "fields": [["a", {"dictionary": {"k": null}}], ["b", {"link": {"type": "Dog", "id": 0}}]], "members": [true, {"link": {"type": "Dog", "id": 0}}]}], "Dog": [{"$id": 0, "id": 7}]}"#

    /// A file written when a set of AnyValues kept `1` and `1.0` as two members loads with both
    /// (nothing is dropped); a later insert of the number finds the first.
    @Test func aSetWrittenWithEqualNumbersOfTwoKindsLoadsWithBoth() throws {
        let text = Self.snapshot(
            Self.good.replacingOccurrences(
                of: #""members": [true, "#, with: #""members": [1, {"double": 1.0}, {"decimal": "1"}, true, "#))
        let loaded = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
        let bag = try loaded.store.table(named: "Bag")
        #expect(bag.value(0, 3).elementsForTest.prefix(3) == [.int(1), .double(1), .decimal(1)])
        #expect(loaded.store.indexOfMember(.double(1), bag, 0, 3) == 0)
    }

    @Test func badElementsAreRefusedAsCorrupt() throws {
        let loaded = try FileStorage.decode(snapshot: Array(Self.snapshot(Self.good).utf8), journal: nil)
        let bag = try loaded.store.table(named: "Bag")
        #expect(AnyValue(bag.value(0, 2)) == nil, "a map's value is not an AnyValue itself")
        #expect(AnyValue(bag.value(0, 3).elementsForTest[1])?.link?.objectType == "Dog")
        #expect(AnyValue(bag.value(0, 1).elementsForTest[1]) == [2, AnyValue(bag.value(0, 3).elementsForTest[1])!])
        for (good, bad) in [
            (#"[2, {"link": {"type": "Dog", "id": 0}}]"#, #"[2, {"link": {"type": "Dog", "id": 1}}]"#),
            (#"[2, {"link""#, #"[2, {"lnk""#),
            (#"["b", {"link""#, #"["a", {"link""#),
            (#"["b", {"link""#, #"["$b", {"link""#),
            (#""members": [true, {"link""#, #""members": [true, true, {"link""#),
            (
                #""members": [true, {"link": {"type": "Dog", "id": 0}}]"#,
                #""members": [true, {"link": {"type": "Cat", "id": 0}}]"#
            ),
            (#"{"decimal": "0.1"}"#, #"{"decimal": "x"}"#),
            (#""items": [1, "#, #""items": {"list": [1]}, "x": [1, "#),
        ] {
            #expect(Self.good.contains(good), "\(good)")
            let text = Self.snapshot(Self.good.replacingOccurrences(of: good, with: bad))
            #expect("\(bad)") {
                _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
            } throws: { error in
                (error as? LiveObjectsError)?.code == .corruptFile
            }
        }
        // A journal line linking to a missing dog from a list's element is refused as corrupt.
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":3,"schemaVersion":0,"base":0}"#)
        let bad = sealedLine(
            #"{"commit":1,"changes":{"Bag":{"update":[{"$id":0,"items":[{"link":{"type":"Dog","id":4}}]}]}}}"#)
        let fine = sealedLine(
            #"{"commit":1,"changes":{"Bag":{"update":[{"$id":0,"items":[{"link":{"type":"Dog","id":0}}]}]}}}"#)
        let snapshot = Array(Self.snapshot(Self.good).utf8)
        let refusal = #expect(throws: LiveObjectsError.self) {
            _ = try FileStorage.decode(snapshot: snapshot, journal: Array((header + bad).utf8))
        }
        #expect(refusal?.code == .corruptFile, "\(String(describing: refusal))")
        let replayed = try FileStorage.decode(snapshot: snapshot, journal: Array((header + fine).utf8))
        #expect(AnyValue(try replayed.store.table(named: "Bag").value(0, 1).elementsForTest[0])?.link != nil)
    }

    /// Every single-byte change of a snapshot holding collections of mixed values is refused or
    /// opens with exactly the same content; a snapshot cut short is refused.
    @Test func everySingleByteChangeIsCaught() throws {
        try expectEverySingleByteChangeCaught(Self.snapshot(Self.good), truncationStride: 3)
    }

    /// A migration turns lists, sets and maps of plain values into ones of AnyValues, each
    /// element as it was; a plain value never becomes a collection.
    @Test func aMigrationTurnsPlainCollectionsIntoCollectionsOfAnyValues() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("migrated.json")
        func schema(_ type: PropertyType, tags: PropertyType = .string) -> Schema {
            Schema([
                ObjectSchema(
                    name: "Bag",
                    properties: [
                        Property(name: "id", type: .int, isPrimaryKey: true),
                        Property(name: "items", type: type, isOptional: type != .mixed, isList: true),
                        Property(name: "fields", type: type, isMap: true),
                        Property(name: "members", type: type, isList: true, isSet: true),
                        Property(name: "note", type: tags == .mixed ? .mixed : .string, isList: tags == .mixed),
                    ])
            ])
        }
        try await withRealm(Realm.Configuration(file: url, schema: schema(.int), schemaVersion: 1)) { realm in
            try await realm.write { realm in
                _ = try realm.dynamicCreate(
                    "Bag",
                    value: [
                        "id": 1, "items": [1, .null, 3], "fields": .list([.list(["a", 2])]), "members": [5, 6],
                        "note": "n",
                    ])
            }
        }
        let migrated = Realm.Configuration(file: url, schema: schema(.mixed, tags: .mixed), schemaVersion: 2)
        let values = try await withRealm(migrated) { realm in
            try await realm.read { realm in
                try realm.dynamicObjects("Bag").map { [$0["items"], $0["fields"], $0["members"], $0["note"]] }
            }
        }
        #expect(values == [[[1, .null, 3], .list([.list(["a", 2])]), [5, 6], .list([])]])
    }
}

extension PropertyValue {
    fileprivate var elementsForTest: [PropertyValue] {
        if case .list(let items) = self { return items }
        return []
    }
}

/// Random links appended to lists, set in maps and inserted in sets of `AnyValue`s (at the top
/// of an element and nested in one), plain elements, deletes of the linked objects, writes that
/// fail, saves and reopenings, against a reference that writes every link as the dog's id and
/// clears those of a deleted dog (a set drops a member that was the link and keeps the first of
/// equal members). `LIVEOBJECTS_MIXED_COLLECTION_SEED` (a number, or `random`) replays one run;
/// a failure prints the seed and the operations.
@Suite struct AnyValueCollectionRandomTests {
    struct Bag: Equatable, CustomStringConvertible {
        var items: [AnyValue] = []
        var fields: [String: AnyValue] = [:]
        var members: [AnyValue] = []

        var description: String { "items \(items), fields \(fields), members \(members)" }

        /// The bag with every link to `dog` cleared.
        func clearing(_ dog: Int) -> Bag {
            var bag = Bag()
            bag.items = items.map { MixedLinkRandomTests.Reference.clearing(dog, in: $0) }
            bag.fields = fields.mapValues { MixedLinkRandomTests.Reference.clearing(dog, in: $0) }
            for member in members where member != .string("→Dog \(dog)") {
                let cleared = MixedLinkRandomTests.Reference.clearing(dog, in: member)
                if !bag.members.contains(cleared) { bag.members.append(cleared) }
            }
            return bag
        }
    }

    static func bags(_ realm: isolated Realm) throws -> [Int: Bag] {
        func named(_ value: PropertyValue) throws -> AnyValue {
            try MixedLinkFileTests.named(try #require(AnyValue(value)), realm)
        }
        var result: [Int: Bag] = [:]
        for object in try realm.dynamicObjects("Bag") {
            var bag = Bag()
            guard case .list(let items) = object["items"], case .list(let pairs) = object["fields"],
                case .list(let members) = object["members"]
            else { throw MixedLinkRandomTests.Failure() }
            bag.items = try items.map(named)
            for pair in pairs {
                guard case .list(let kv) = pair, case .string(let key) = kv[0] else {
                    throw MixedLinkRandomTests.Failure()
                }
                bag.fields[key] = try named(kv[1])
            }
            bag.members = try members.map(named)
            result[Int(object["id"].intValue!)] = bag
        }
        return result
    }

    @Test func randomElementLinksDeletesRollbacksAndReopensMatchTheReference() async throws {
        let failure = try await SeededRun.run(
            "AnyValueCollectionRandomTests", variable: "LIVEOBJECTS_MIXED_COLLECTION_SEED", seed: 0xC0_11EC,
            steps: (60, 300)
        ) { steps, rng, log in try await Self.run(steps: steps, &rng, &log) ? "the bags differ" : nil }
        #expect(failure == nil)
    }

    /// Puts `value` (named `named` in the reference) into one of a bag's collections.
    static func put(
        _ value: AnyValue, named: AnyValue, into target: Int, key: String, _ object: DynamicObject, _ bag: inout Bag
    ) throws {
        switch target {
        case 0:
            guard case .list(var items) = object["items"] else { return }
            items.append(value.propertyValue)
            try object.set("items", to: .list(items))
            bag.items.append(named)
        case 1:
            guard case .list(var pairs) = object["fields"] else { return }
            pairs.removeAll { if case .list(let kv) = $0 { kv[0] == .string(key) } else { false } }
            pairs.append(.list([.string(key), value.propertyValue]))
            try object.set("fields", to: .list(pairs))
            bag.fields[key] = named
        default:
            guard case .list(var members) = object["members"] else { return }
            members.append(value.propertyValue)
            try object.set("members", to: .list(members))
            if !bag.members.contains(named) { bag.members.append(named) }
        }
    }

    static func run(steps: Int, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]) async throws -> Bool {
        let url = try makeTemporaryDirectory().appendingPathComponent("random-collections.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: AnyValueCollectionFileTests.schema, options: options)
        var realm: Realm? = try await openRealm(configuration)
        var reference: [Int: Bag] = [:]
        var dogs: Set<Int> = []
        var nextDog = 0
        try await realm!.write { r in
            for id in 0..<3 { _ = try r.dynamicCreate("Bag", value: ["id": .int(Int64(id))]) }
        }
        for id in 0..<3 { reference[id] = Bag() }
        for _ in 0..<steps {
            let id = rng.int(0...2)
            let target = rng.int(0...2)
            let key = ["a", "b", "c"][rng.int(0...2)]
            let dog = rng.pick(dogs.sorted())
            var bag = reference[id]!
            switch rng.int(0...9) {
            case 0, 1:
                let made = nextDog
                nextDog += 1
                let nested = rng.int(0...2)
                log.append("create dog \(made), put a link to it (\(nested)) in bag \(id)'s \(target) at \(key)")
                let before = bag
                bag = try await realm!.write { r in
                    var bag = before
                    let created = try r.dynamicCreate("Dog", value: ["id": .int(Int64(made))])
                    let (stored, named) = MixedLinkRandomTests.value(linking: made, created.link, nested: nested)
                    let object = try r.dynamicObject(ofType: "Bag", forPrimaryKey: .int(Int64(id)))!
                    try Self.put(stored, named: named, into: target, key: key, object, &bag)
                    return bag
                }
                dogs.insert(made)
            case 2, 3:
                guard let dog else { continue }
                let nested = rng.int(0...2)
                log.append("put a link to dog \(dog) (\(nested)) in bag \(id)'s \(target) at \(key)")
                let before = bag
                bag = try await realm!.write { r in
                    var bag = before
                    let linked = try r.dynamicObject(ofType: "Dog", forPrimaryKey: .int(Int64(dog)))!
                    let (stored, named) = MixedLinkRandomTests.value(linking: dog, linked.link, nested: nested)
                    let object = try r.dynamicObject(ofType: "Bag", forPrimaryKey: .int(Int64(id)))!
                    try Self.put(stored, named: named, into: target, key: key, object, &bag)
                    return bag
                }
            case 4:
                let n = rng.int(0...5)
                log.append("put \(n) in bag \(id)'s \(target) at \(key)")
                let before = bag
                bag = try await realm!.write { r in
                    var bag = before
                    let object = try r.dynamicObject(ofType: "Bag", forPrimaryKey: .int(Int64(id)))!
                    try Self.put(.int(n), named: .int(n), into: target, key: key, object, &bag)
                    return bag
                }
            case 5, 6:
                guard let dog else { continue }
                log.append("delete dog \(dog)")
                try await realm!.write { r in
                    try r.delete(r.dynamicObject(ofType: "Dog", forPrimaryKey: .int(Int64(dog)))!)
                }
                dogs.remove(dog)
                reference = reference.mapValues { $0.clearing(dog) }
                bag = reference[id]!
            case 7:
                guard let dog else { continue }
                log.append("delete dog \(dog) and put 9 in bag \(id)'s \(target), then fail")
                let before = bag
                do {
                    try await realm!.write { r in
                        var scratch = before
                        try r.delete(r.dynamicObject(ofType: "Dog", forPrimaryKey: .int(Int64(dog)))!)
                        let object = try r.dynamicObject(ofType: "Bag", forPrimaryKey: .int(Int64(id)))!
                        try Self.put(9, named: 9, into: target, key: key, object, &scratch)
                        throw MixedLinkRandomTests.Failure()
                    }
                } catch is MixedLinkRandomTests.Failure {}
            default:
                let saves = rng.chance(0.5)
                log.append(saves ? "save and reopen" : "reopen")
                if saves { try await realm!.save() }
                realm = nil
                for _ in 0..<1000 where FileStorage.isOpen(configuration) {
                    try await Task.sleep(for: .milliseconds(5))
                }
                realm = try await openRealm(configuration)
            }
            reference[id] = bag
            let (read, violations) = try await realm!.read { r in
                (try Self.bags(r), StoreInvariants.violations(in: r.store))
            }
            if read != reference || !violations.isEmpty {
                Issue.record("after \(log.last ?? ""): read \(read), expected \(reference); \(violations)")
                return true
            }
        }
        return false
    }
}
