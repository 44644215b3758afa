import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// Links inside `AnyValue`s in files: `{"link": {"type": "Dog", "id": N}}` at the top and
/// nested, through snapshots and journals (a journal entry whose holder is inserted before the
/// object it links to), a link to no object or to an unknown or embedded type refused as
/// corrupt, every single-byte change caught; and a seeded random run of sets, deletes, rollbacks
/// and reopenings against a plain reference.
@Suite struct MixedLinkFileTests {
    /// `Box` comes before `Dog`, so that a journal entry inserts a box before the dog it links to.
    static let schema = Schema([
        ObjectSchema(
            name: "Box",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "payload", type: .mixed),
            ]),
        ObjectSchema(
            name: "Dog",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "name", type: .string),
                Property(name: "tag", type: .object, isOptional: true, objectType: "Tag"),
            ]),
        ObjectSchema(name: "Tag", properties: [Property(name: "text", type: .string)], isEmbedded: true),
    ])

    static func snapshot(_ objects: String) -> String {
        let schema =
            #"[{"name": "Box", "properties": [{"name": "id", "type": "int", "primaryKey": true}, {"name": "payload", "type": "mixed"}]}, {"name": "Dog", "properties": [{"name": "id", "type": "int", "primaryKey": true}]}]"#
        return BadFileTests.file(version: 1, schema: schema, objects: objects)
    }

    /// The payloads by box id, with every link written as the linked dog's id (`"→Dog 3"`).
    static func payloads(_ realm: isolated Realm) throws -> [Int: AnyValue] {
        var result: [Int: AnyValue] = [:]
        for box in try realm.dynamicObjects("Box") {
            let value = try #require(AnyValue(box["payload"]))
            result[Int(box["id"].intValue!)] = try named(value, realm)
        }
        return result
    }

    static func named(_ value: AnyValue, _ realm: isolated Realm) throws -> AnyValue {
        switch value {
        case .link(let link):
            let dog = try realm.dynamicObject(ofType: link.objectType, key: link.key)
            return .string("→\(link.objectType) \(dog?["id"].intValue.map(String.init) ?? "missing")")
        case .list(let items): return .list(try items.map { try named($0, realm) })
        case .dictionary(let values): return .dictionary(try values.mapValues { try named($0, realm) })
        default: return value
        }
    }

    @Test func linksSurviveSnapshotAndJournalAndDeletesReplay() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("links.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: Self.schema, options: options)
        let expected: [Int: AnyValue] = [
            1: "→Dog 1", 2: ["pet": "→Dog 2", "list": [1, "→Dog 1"]], 3: .null, 4: "→Dog 4",
        ]
        let files = try await withRealm(configuration) { realm in
            try await realm.write { r in
                let rex = try r.dynamicCreate("Dog", value: ["id": 1, "name": "Rex"])
                _ = try r.dynamicCreate("Box", value: ["id": 1, "payload": AnyValue.link(rex.link).propertyValue])
            }
            try await realm.save()
            // In the journal only: boxes inserted before the dogs they link to, and a delete.
            try await realm.write { r in
                let box = try r.dynamicCreate("Box", value: ["id": 2])
                let box3 = try r.dynamicCreate("Box", value: ["id": 3])
                let fido = try r.dynamicCreate("Dog", value: ["id": 2, "name": "Fido"])
                let rex = try #require(try r.dynamicObject(ofType: "Dog", forPrimaryKey: 1))
                let gone = try r.dynamicCreate("Dog", value: ["id": 3, "name": "Gone"])
                let value: AnyValue = ["pet": .link(fido.link), "list": [1, .link(rex.link)]]
                try box.set("payload", to: value.propertyValue)
                try box3.set("payload", to: AnyValue.link(gone.link).propertyValue)
                try r.delete(gone)
            }
            try await realm.write { r in
                let box = try r.dynamicCreate("Box", value: ["id": 4])
                let dog = try r.dynamicCreate("Dog", value: ["id": 4, "name": "Late"])
                try box.set("payload", to: AnyValue.link(dog.link).propertyValue)
            }
            #expect(try await realm.read { try Self.payloads($0) } == expected)
            let journal = String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal")), as: UTF8.self)
            #expect(journal.contains(#"{"link":{"type":"Dog","id":"#), "\(journal)")
            return (try Data(contentsOf: url), Data(journal.utf8))
        }
        // The journal replays onto the snapshot saved before it (closing the realm folds it).
        let replayed = try FileStorage.decode(snapshot: Array(files.0), journal: Array(files.1))
        #expect(StoreInvariants.violations(in: replayed.store).isEmpty)
        let boxes = try replayed.store.table(named: "Box")
        #expect(
            boxes.liveRows.map { AnyValue(boxes.value($0, 1))?.kindName } == ["object", "dictionary", "null", "object"])
        // From the snapshot the realm saved as it closed, twice.
        for _ in 0..<2 {
            let read = try await withRealm(configuration) { realm in
                try await realm.read { r in
                    #expect(StoreInvariants.violations(in: r.store).isEmpty)
                    return try Self.payloads(r)
                }
            }
            #expect(read == expected)
        }
        let snapshot = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(snapshot.contains(#""payload": {"link": {"type": "Dog", "id": 0}}"#), "\(snapshot)")
    }

    @Test func badLinksAreRefusedAsCorrupt() throws {
        let good =
            #"{"Box": [{"$id": 0, "id": 1, "payload": {"link": {"type": "Dog", "id": 0}}}], "Dog": [{"$id": 0, "id": 7}]}"#
        let loaded = try FileStorage.decode(snapshot: Array(Self.snapshot(good).utf8), journal: nil)
        let value = AnyValue(try loaded.store.table(named: "Box").value(0, 1))
        #expect(value == .link(.init(objectType: "Dog", key: ObjectKey(row: 0, generation: 0))))
        let payload = #""payload": {"link": {"type": "Dog", "id": 0}}"#
        for bad in [
            #""payload": {"link": {"type": "Dog", "id": 1}}"#,
            #""payload": {"link": {"type": "Dog", "id": 4294967296}}"#,
            #""payload": {"link": {"type": "Cat", "id": 0}}"#, #""payload": {"link": {"type": "Box", "id": 1}}"#,
            #""payload": {"link": {"id": 0, "type": "Dog"}}"#, #""payload": {"link": {"type": "Dog"}}"#,
            #""payload": {"link": {"type": "Dog", "id": 0, "x": 1}}"#,
            #""payload": {"link": {"type": "Dog", "id": "0"}}"#,
            #""payload": {"link": {"type": 1, "id": 0}}"#, #""payload": {"link": {"type": "Dog", "id": -1}}"#,
            #""payload": {"link": ["Dog", 0]}"#, #""payload": {"link": null}"#,
            #""payload": [1, {"dictionary": {"a": {"link": {"type": "Dog", "id": 3}}}}]"#,
        ] {
            let text = Self.snapshot(good.replacingOccurrences(of: payload, with: bad))
            #expect("\(bad)") {
                _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
            } throws: { error in
                let error = error as? LiveObjectsError
                return error?.code == .corruptFile && (error?.property == "payload" || error?.property == nil)
            }
        }
        // A journal line naming a missing dog is refused; one naming the dog replays.
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":3,"schemaVersion":0,"base":0}"#)
        let bad = sealedLine(
            #"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"payload":{"link":{"type":"Dog","id":5}}}]}}}"#)
        let fine = sealedLine(
            #"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"payload":[{"link":{"type":"Dog","id":0}}]}]}}}"#)
        let snapshot = Array(Self.snapshot(good.replacingOccurrences(of: payload, with: #""payload": 1"#)).utf8)
        // A damaged journal is a damaged file, whatever check finds it.
        let refusal = #expect(throws: LiveObjectsError.self) {
            _ = try FileStorage.decode(snapshot: snapshot, journal: Array((header + bad).utf8))
        }
        #expect(refusal?.code == .corruptFile, "\(String(describing: refusal))")
        #expect(refusal?.inputLocation != nil, "\(String(describing: refusal))")
        let replayed = try FileStorage.decode(snapshot: snapshot, journal: Array((header + fine).utf8))
        #expect(AnyValue(try replayed.store.table(named: "Box").value(0, 1)) == [value!])
    }

    /// Every single-byte change of a snapshot holding links, at the top and nested, is refused
    /// or opens with exactly the same content; a snapshot cut short is refused.
    @Test func everySingleByteChangeOfALinkIsCaught() throws {
        let objects =
            #"{"Box": [{"$id": 0, "id": 1, "payload": {"link": {"type": "Dog", "id": 1}}}, {"$id": 1, "id": 2, "payload": [{"link": {"type": "Dog", "id": 0}}, {"dictionary": {"a": {"link": {"type": "Dog", "id": 1}}}}]}], "Dog": [{"$id": 0, "id": 7}, {"$id": 1, "id": 8}]}"#
        try expectEverySingleByteChangeCaught(Self.snapshot(objects), truncationStride: 3)
    }
}

/// Random links set in `AnyValue`s (at the top and nested), plain values, deletes of the linked
/// objects, writes that fail (rolled back), saves and reopenings, against a reference that holds
/// each box's value with every link written as the dog's id and clears those of a deleted dog.
/// `LIVEOBJECTS_MIXED_LINK_SEED` (a number, or `random`) replays one run; a failure prints the
/// seed and the operations.
@Suite struct MixedLinkRandomTests {
    struct Reference {
        var dogs: Set<Int> = []
        var boxes: [Int: AnyValue] = [:]
        var nextDog = 0

        /// The value with every link to `dog` made null.
        static func clearing(_ dog: Int, in value: AnyValue) -> AnyValue {
            switch value {
            case .string("→Dog \(dog)"): .null
            case .list(let items): .list(items.map { clearing(dog, in: $0) })
            case .dictionary(let values): .dictionary(values.mapValues { clearing(dog, in: $0) })
            default: value
            }
        }
    }

    struct Failure: Error {}

    @Test func randomLinksDeletesRollbacksAndReopensMatchTheReference() async throws {
        let failure = try await SeededRun.run(
            "MixedLinkRandomTests", variable: "LIVEOBJECTS_MIXED_LINK_SEED", seed: 0x11AC_ED, steps: (60, 300)
        ) { steps, rng, log in try await Self.run(steps: steps, &rng, &log) ? "the boxes differ" : nil }
        #expect(failure == nil)
    }

    /// A value for a box linking to `dog`: at the top, or nested in a list and a dictionary.
    static func value(linking dog: Int, _ key: AnyValue.Link, nested: Int) -> (AnyValue, AnyValue) {
        switch nested {
        case 0: (.link(key), .string("→Dog \(dog)"))
        case 1: ([1, .link(key)], [1, .string("→Dog \(dog)")])
        default: (["pet": [.link(key)], "n": 2], ["pet": [.string("→Dog \(dog)")], "n": 2])
        }
    }

    static func run(steps: Int, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]) async throws -> Bool {
        let url = try makeTemporaryDirectory().appendingPathComponent("random-links.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: MixedLinkFileTests.schema, options: options)
        var realm: Realm? = try await openRealm(configuration)
        var reference = Reference()
        try await realm!.write { r in
            for id in 0..<4 { _ = try r.dynamicCreate("Box", value: ["id": .int(Int64(id))]) }
        }
        for id in 0..<4 { reference.boxes[id] = .null }
        for _ in 0..<steps {
            let box = rng.int(0...3)
            let dog = rng.pick(reference.dogs.sorted())
            switch rng.int(0...9) {
            case 0, 1:
                let id = reference.nextDog
                reference.nextDog += 1
                let nested = rng.int(0...2)
                let linked = rng.chance(0.5)
                log.append("create dog \(id)" + (linked ? ", box \(box) links to it (\(nested))" : ""))
                let (stored, named) = try await realm!.write { r in
                    let created = try r.dynamicCreate("Dog", value: ["id": .int(Int64(id))])
                    let (stored, named) = Self.value(linking: id, created.link, nested: nested)
                    if linked {
                        try r.dynamicObject(ofType: "Box", forPrimaryKey: .int(Int64(box)))!.set(
                            "payload", to: stored.propertyValue)
                    }
                    return (stored, named)
                }
                _ = stored
                reference.dogs.insert(id)
                if linked { reference.boxes[box] = named }
            case 2, 3:
                guard let dog else { continue }
                let nested = rng.int(0...2)
                log.append("box \(box) links to dog \(dog) (\(nested))")
                let named = try await realm!.write { r in
                    let target = try r.dynamicObject(ofType: "Dog", forPrimaryKey: .int(Int64(dog)))!
                    let (stored, named) = Self.value(linking: dog, target.link, nested: nested)
                    try r.dynamicObject(ofType: "Box", forPrimaryKey: .int(Int64(box)))!.set(
                        "payload", to: stored.propertyValue)
                    return named
                }
                reference.boxes[box] = named
            case 4:
                let n = rng.int(0...9)
                log.append("box \(box) = \(n)")
                try await realm!.write { r in
                    try r.dynamicObject(ofType: "Box", forPrimaryKey: .int(Int64(box)))!.set(
                        "payload", to: .int(Int64(n)))
                }
                reference.boxes[box] = .int(n)
            case 5, 6:
                guard let dog else { continue }
                log.append("delete dog \(dog)")
                try await realm!.write { r in
                    try r.delete(r.dynamicObject(ofType: "Dog", forPrimaryKey: .int(Int64(dog)))!)
                }
                reference.dogs.remove(dog)
                reference.boxes = reference.boxes.mapValues { Reference.clearing(dog, in: $0) }
            case 7:
                guard let dog else { continue }
                log.append("delete dog \(dog) and set box \(box), then fail")
                do {
                    try await realm!.write { r in
                        try r.delete(r.dynamicObject(ofType: "Dog", forPrimaryKey: .int(Int64(dog)))!)
                        try r.dynamicObject(ofType: "Box", forPrimaryKey: .int(Int64(box)))!.set("payload", to: "x")
                        throw Failure()
                    }
                } catch is Failure {}
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
            let (read, violations) = try await realm!.read { r in
                (try MixedLinkFileTests.payloads(r), StoreInvariants.violations(in: r.store))
            }
            if read != reference.boxes || !violations.isEmpty {
                Issue.record("after \(log.last ?? ""): read \(read), expected \(reference.boxes); \(violations)")
                return true
            }
        }
        return false
    }
}

extension DynamicObject {
    /// A link to this object, for an `AnyValue`.
    var link: AnyValue.Link { AnyValue.Link(objectType: objectSchema.name, key: key) }
}
