import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

final class Stop: EmbeddedObject {
    @Persisted var city = ""
}

final class Route: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var stops: Map<String, Stop?>
}

/// Maps of embedded objects in snapshots and journals: a snapshot writes each object inline as
/// the map's value (`[key, {object} or null]` pairs), a journal writes it as a record of its
/// own and the map by id; a file whose embedded object has two parents or none is refused;
/// every single-byte change is caught; a seeded random run against a plain dictionary.
@Suite struct MapOfEmbeddedFileTests {
    /// The route's stops as `key=city` (`key=nil` for a key with no object).
    static func stops(_ realm: Realm) async throws -> [String] {
        try await realm.read { realm in
            let route = realm.object(ofType: Route.self, forPrimaryKey: 1)
            return route?.stops.map { "\($0.key)=\($0.value?.city ?? "nil")" } ?? []
        }
    }

    @Test func mapsOfEmbeddedObjectsSurviveSnapshotAndJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("routes.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, objectTypes: [Route.self, Stop.self], options: options)
        let copy = url.deletingLastPathComponent().appendingPathComponent("copy.json")
        let before = try await withRealm(configuration) { realm in
            try await realm.write { r in
                _ = try r.create(
                    Route.self, value: ["id": 1, "stops": ["b": nil, "a": ["city": "Oslo"], "c": ["city": "Rome"]]])
            }
            try await realm.save()
            let snapshot = String(decoding: try Data(contentsOf: url), as: UTF8.self)
            #expect(
                snapshot.contains(
                    #""stops": [["a", {"$id": 0, "city": "Oslo"}], ["b", null], ["c", {"$id": 1, "city": "Rome"}]]"#),
                "\(snapshot)")
            // In the journal only: a key replaced, one removed, one object changed.
            try await realm.write { r in
                let route = r.object(ofType: Route.self, forPrimaryKey: 1)!
                let nice = Stop()
                nice.city = "Nice"
                route.stops["a"] = nice
                route.stops.removeObject(for: "c")
                route.stops["d"] = Stop()
                route.stops["d"]??.city = "Lima"
            }
            let journal = String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal")), as: UTF8.self)
            #expect(journal.contains(#""Stop":{"insert":[{"$id":"#), "\(journal)")
            // A copy of the snapshot and the journal as they are, for an open that replays it.
            try FileManager.default.copyItem(at: url, to: copy)
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: url.path + ".journal"), to: URL(fileURLWithPath: copy.path + ".journal"))
            return try await Self.stops(realm)
        }
        #expect(before == ["a=Nice", "b=nil", "d=Lima"])
        let replaying = Realm.Configuration(file: copy, objectTypes: [Route.self, Stop.self], options: options)
        #expect(try await withRealm(replaying) { try await Self.stops($0) } == before, "replayed from the journal")
        // Closed: the snapshot holds everything.
        #expect(try await withRealm(configuration) { try await Self.stops($0) } == before)
        try await withRealm(configuration) { realm in
            try await realm.read { r in
                let stops = try r.dynamicObjects("Stop").count
                #expect(stops == 2, "the replaced and removed objects are gone")
                #expect(StoreInvariants.violations(in: r.store).isEmpty)
            }
        }
    }

    static func snapshot(_ objects: String) -> String {
        let schema =
            #"[{"name": "Box", "properties": [{"name": "id", "type": "int", "primaryKey": true}, {"name": "places", "type": "object", "optional": true, "map": true, "objectType": "Place"}]}, {"name": "Place", "embedded": true, "properties": [{"name": "city", "type": "string"}]}]"#
        return BadFileTests.file(version: 1, schema: schema, objects: objects)
    }

    static let good =
        #"{"Box": [{"$id": 0, "id": 1, "places": [["a", {"$id": 0, "city": "Oslo"}], ["b", null], ["c", {"$id": 1, "city": "Rome"}]]}]}"#

    @Test func badMapsOfEmbeddedObjectsAreRefused() throws {
        let loaded = try FileStorage.decode(snapshot: Array(Self.snapshot(Self.good).utf8), journal: nil)
        #expect(try loaded.store.table(named: "Place").liveCount == 2)
        #expect(StoreInvariants.violations(in: loaded.store).isEmpty)
        let places = #""places": [["a", {"$id": 0, "city": "Oslo"}], ["b", null], ["c", {"$id": 1, "city": "Rome"}]]"#
        for bad in [
            #""places": [["a", 0]]"#, #""places": [["a", {"$id": 0, "city": "Oslo"}], ["a", null]]"#,
            #""places": [["b", null], ["a", null]]"#, #""places": [["a", {"$id": 0, "city": "Oslo"}, 1]]"#,
            #""places": [["a", {"$id": 0, "city": "Oslo"}], ["b", {"$id": 0, "city": "Rome"}]]"#,
            #""places": [["a", {"city": "Oslo"}]]"#, #""places": [["a", {"$id": 0, "town": "Oslo"}]]"#,
            #""places": [["a.b", null]]"#, #""places": null"#,
        ] {
            let text = Self.snapshot(Self.good.replacingOccurrences(of: places, with: bad))
            #expect("\(bad)") {
                _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil)
            } throws: { error in
                (error as? LiveObjectsError)?.code == .corruptFile
            }
        }
        // Embedded objects written on their own at the top level are refused, as any.
        let outside = #"{"Box": [{"$id": 0, "id": 1, "places": []}], "Place": [{"$id": 0, "city": "Oslo"}]}"#
        #expect(throws: LiveObjectsError.self) {
            _ = try FileStorage.decode(snapshot: Array(Self.snapshot(outside).utf8), journal: nil)
        }
        // In a journal line: an embedded object under two keys, or left without its key, is refused.
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":3,"schemaVersion":0,"base":0}"#)
        let snapshot = Array(Self.snapshot(Self.good).utf8)
        for bad in [
            #"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"places":[["a",0],["b",0],["c",1]]}]}}}"#,
            #"{"commit":1,"changes":{"Box":{"update":[{"$id":0,"places":[["a",0]]}]}}}"#,
            #"{"commit":1,"changes":{"Place":{"insert":[{"$id":2,"city":"Lima"}]}}}"#,
        ] {
            #expect(throws: LiveObjectsError.self, "\(bad)") {
                _ = try FileStorage.decode(snapshot: snapshot, journal: Array((header + sealedLine(bad)).utf8))
            }
        }
        let good = sealedLine(
            #"{"commit":1,"changes":{"Place":{"insert":[{"$id":2,"city":"Lima"}],"delete":[1]},"Box":{"update":[{"$id":0,"places":[["a",0],["c",2]]}]}}}"#
        )
        let replayed = try FileStorage.decode(snapshot: snapshot, journal: Array((header + good).utf8))
        #expect(try replayed.store.table(named: "Place").liveCount == 2)
        #expect(StoreInvariants.violations(in: replayed.store).isEmpty)
    }

    /// Every single-byte change of a snapshot holding a map of embedded objects is refused, or
    /// opens with exactly the same content; a snapshot cut short is refused.
    @Test func everySingleByteChangeIsCaught() throws {
        try expectEverySingleByteChangeCaught(Self.snapshot(Self.good), truncationStride: 5)
    }

    enum Operation: CustomStringConvertible {
        /// Sets a key to a new object of a city, or to nil.
        case set(String, String?)
        case remove(String)
        /// Changes the city of a key's object, if it has one.
        case rename(String, String)
        case removeAll
        /// A write of these operations that throws: nothing of it stays.
        case rollback([Operation])
        /// Closes the realm (saving the file, or leaving the journal) and opens it again.
        case reopen

        var description: String {
            switch self {
            case .set(let k, let c): "[\(k)] = \(c ?? "nil")"
            case .remove(let k): "remove \(k)"
            case .rename(let k, let c): "[\(k)].city = \(c)"
            case .removeAll: "removeAll"
            case .rollback(let operations): "rollback(\(operations.map(\.description).joined(separator: ", ")))"
            case .reopen: "reopen"
            }
        }

        static func random(_ rng: inout SeededRandomNumberGenerator, nested: Bool = false) -> Operation {
            let key = "k\(rng.int(in: 0...4))"
            let city = "c\(rng.int(in: 0...9))"
            switch rng.int(in: 0...19) {
            case 0...7: return .set(key, rng.int(in: 0...4) == 0 ? nil : city)
            case 8...10: return .remove(key)
            case 11...13: return .rename(key, city)
            case 14 where !nested: return .removeAll
            case 15...16 where !nested:
                return .rollback((0..<rng.int(in: 1...3)).map { _ in random(&rng, nested: true) })
            case 17...18 where !nested: return .reopen
            default: return .set(key, city)
            }
        }

        /// The plain model's step.
        func apply(to model: inout [String: String?]) {
            switch self {
            case .set(let k, let c): model[k] = .some(c)
            case .remove(let k): model[k] = nil
            case .rename(let k, let c): if case .some(.some) = model[k] { model[k] = .some(c) }
            case .removeAll: model = [:]
            case .rollback, .reopen: break
            }
        }

        /// The realm's step, inside a write.
        func apply(in realm: isolated Realm) throws {
            let route = realm.object(ofType: Route.self, forPrimaryKey: 1)!
            switch self {
            case .set(let k, let c):
                guard let c else {
                    route.stops[k] = .some(nil)
                    return
                }
                let stop = Stop()
                stop.city = c
                route.stops[k] = stop
            case .remove(let k): route.stops.removeObject(for: k)
            case .rename(let k, let c): route.stops[k]??.city = c
            case .removeAll: route.stops.removeAll()
            case .rollback(let operations):
                for operation in operations { try operation.apply(in: realm) }
            case .reopen: break
            }
        }
    }

    struct Thrown: Error {}

    @Test func matchesAPlainDictionaryThroughRollbacksAndReopening() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("routes.json")
        let failure = try await SeededRun.run(
            "MapOfEmbeddedFileTests", variable: "LIVEOBJECTS_EMBEDDED_MAP_SEED", seed: 0x51_e4b0, steps: (80, 400)
        ) { steps, rng, log in
            // Every other reopen leaves the changes in the journal instead of a saved snapshot.
            let journal = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
            var configurations = [
                Realm.Configuration(file: url, objectTypes: [Route.self, Stop.self]),
                Realm.Configuration(file: url, objectTypes: [Route.self, Stop.self], options: journal),
            ]
            var realm: Realm? = try await openRealm(configurations[0])
            try await realm!.write { r in _ = try r.create(Route.self, value: ["id": 1]) }
            var model: [String: String?] = [:]
            for _ in 0..<steps {
                let operation = Operation.random(&rng)
                log.append(operation.description)
                switch operation {
                case .reopen:
                    realm = nil
                    for _ in 0..<1000 where FileStorage.isOpen(configurations[0]) {
                        try await Task.sleep(for: .milliseconds(1))
                    }
                    configurations.swapAt(0, 1)
                    realm = try await openRealm(configurations[0])
                case .rollback:
                    do {
                        try await realm!.write { r in
                            try operation.apply(in: r)
                            throw Thrown()
                        }
                        return "the rolled-back write did not throw"
                    } catch is Thrown {}
                default:
                    try await realm!.write { r in try operation.apply(in: r) }
                }
                operation.apply(to: &model)
                let expected = model
                let problem = try await realm!.read { r -> String? in
                    let route = r.object(ofType: Route.self, forPrimaryKey: 1)!
                    let found = Dictionary(uniqueKeysWithValues: route.stops.map { ($0.key, $0.value.map(\.city)) })
                    if found != expected { return "found \(found), expected \(expected)" }
                    let stops = try r.dynamicObjects("Stop").count
                    let owned = expected.values.filter { $0 != nil }.count
                    if stops != owned { return "\(stops) stops for \(owned) owned" }
                    let violations = StoreInvariants.violations(in: r.store)
                    return violations.isEmpty ? nil : "\(violations)"
                }
                if let problem { return problem }
            }
            realm = nil
            _ = realm
            return nil
        }
        #expect(failure == nil, "\(failure ?? "")")
    }
}
