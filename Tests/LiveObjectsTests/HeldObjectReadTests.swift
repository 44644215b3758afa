import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Reading the scalar properties of managed objects kept across writes agrees with a plain
/// model: objects held from their creation or from a lookup, through creates, changes,
/// deletes of other objects (after which a held object checks that its row is still its
/// own), slots freed and taken again, and writes cancelled; and frozen copies keep what the
/// model held when they were made. Seeded (`LIVEOBJECTS_READ_SEED` replays a run; the seed
/// and operations are printed on failure).
@Suite struct HeldObjectReadTests {
    final class Reading: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var flag = false
        @Persisted var count = 0
        @Persisted var small: Int32 = 0
        @Persisted var ratio = 0.0
        @Persisted var weight: Float = 0
        @Persisted var name = ""
        @Persisted var date = Date(timeIntervalSince1970: 0)
        @Persisted var nickname: String?
        @Persisted var rank: Int?
    }

    /// What a `Reading` holds, in the model.
    struct Values: Equatable, Sendable {
        var flag = false
        var count = 0
        var small: Int32 = 0
        var ratio = 0.0
        var weight: Float = 0
        var name = ""
        var date = Date(timeIntervalSince1970: 0)
        var nickname: String?
        var rank: Int?

        static func random(_ rng: inout SeededRandomNumberGenerator) -> Values {
            Values(
                flag: rng.chance(0.5), count: rng.int(-1_000...1_000_000), small: Int32(rng.int(-300...300)),
                ratio: Double(rng.int(-40...40)) / 8, weight: Float(rng.int(-8...8)) / 2,
                name: ["", "Rex", "Fido", "Émile", "a longer name than fits inline"][rng.int(0...4)],
                date: Date(timeIntervalSince1970: Double(rng.int(0...1_000_000))),
                nickname: rng.chance(0.3) ? nil : "n\(rng.int(0...9))", rank: rng.chance(0.3) ? nil : rng.int(0...99))
        }

        init(
            flag: Bool = false, count: Int = 0, small: Int32 = 0, ratio: Double = 0, weight: Float = 0,
            name: String = "", date: Date = Date(timeIntervalSince1970: 0), nickname: String? = nil, rank: Int? = nil
        ) {
            (self.flag, self.count, self.small, self.ratio, self.weight) = (flag, count, small, ratio, weight)
            (self.name, self.date, self.nickname, self.rank) = (name, date, nickname, rank)
        }

        init(_ r: Reading) {
            self.init(
                flag: r.flag, count: r.count, small: r.small, ratio: r.ratio, weight: r.weight, name: r.name,
                date: r.date, nickname: r.nickname, rank: r.rank)
        }

        func write(to r: Reading) {
            (r.flag, r.count, r.small, r.ratio, r.weight) = (flag, count, small, ratio, weight)
            (r.name, r.date, r.nickname, r.rank) = (name, date, nickname, rank)
        }
    }

    @Test func heldObjectsReadWhatAModelHolds() async throws {
        let realm = try await openFreshRealm("held-reads", objectTypes: [Reading.self])
        let failure = try await SeededRun.run(
            "heldObjectsReadWhatAModelHolds", variable: "LIVEOBJECTS_READ_SEED", seed: 0x4EAD, steps: (150, 800)
        ) { steps, rng, log in try await Self.run(realm, steps: steps, &rng, &log) }
        #expect(failure == nil)
    }

    /// The model: each live object's values and the serial number of its creation (a held
    /// object is of the live object only when it was made for that creation).
    struct Model {
        var objects: [Int: (serial: Int, values: Values)] = [:]
        var serial = 0
    }

    static func run(
        _ realm: isolated Realm, steps: Int, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]
    ) throws -> String? {
        var model = Model()
        var held: [(id: Int, serial: Int, object: Reading)] = []
        var frozen: [(realm: FrozenRealm, objects: [Int: Values])] = []
        for step in 0..<steps {
            try Self.step(realm, &model, &held, &frozen, &rng, &log)
            if let mismatch = Self.mismatch(model, held, frozen) { return "step \(step): \(mismatch)" }
        }
        return nil
    }

    /// One random operation, on the realm and the model.
    static func step(
        _ realm: isolated Realm, _ model: inout Model, _ held: inout [(id: Int, serial: Int, object: Reading)],
        _ frozen: inout [(realm: FrozenRealm, objects: [Int: Values])], _ rng: inout SeededRandomNumberGenerator,
        _ log: inout [String]
    ) throws {
        let id = rng.int(0...15)
        let values = Values.random(&rng)
        switch rng.int(0...5) {
        case 0 where model.objects[id] == nil:
            try realm.beginWrite()
            let object = try realm.create(Reading.self, value: ["id": id])
            values.write(to: object)
            try realm.commitWrite()
            model.serial += 1
            model.objects[id] = (model.serial, values)
            held.append((id, model.serial, object))
            log.append("create \(id) \(values)")
        case 1 where model.objects[id] != nil:
            try realm.write { values.write(to: $0.object(ofType: Reading.self, forPrimaryKey: id)!) }
            model.objects[id]!.values = values
            log.append("change \(id) \(values)")
        case 2 where model.objects[id] != nil:
            try realm.write { try $0.delete($0.object(ofType: Reading.self, forPrimaryKey: id)!) }
            model.objects[id] = nil
            log.append("delete \(id)")
        case 3:
            // Everything a write can do, then cancelled.
            try realm.beginWrite()
            if let object = realm.object(ofType: Reading.self, forPrimaryKey: id) {
                values.write(to: object)
                try realm.delete(object)
            } else {
                values.write(to: try realm.create(Reading.self, value: ["id": id]))
            }
            realm.cancelWrite()
            log.append("change or create \(id), cancelled")
        case 4 where model.objects[id] != nil:
            held.append((id, model.objects[id]!.serial, realm.object(ofType: Reading.self, forPrimaryKey: id)!))
            log.append("look up \(id)")
        case 5:
            frozen.append((realm.freeze(), model.objects.mapValues(\.values)))
            if frozen.count > 3 { frozen.removeFirst() }
            log.append("freeze")
        default:
            break
        }
    }

    /// The first held object or frozen copy that disagrees with the model, if any.
    static func mismatch(
        _ model: Model, _ held: [(id: Int, serial: Int, object: Reading)],
        _ frozen: [(realm: FrozenRealm, objects: [Int: Values])]
    ) -> String? {
        for (id, serial, object) in held {
            guard let live = model.objects[id], live.serial == serial else {
                if !object.isInvalidated { return "a held object of deleted \(id) is not invalidated" }
                continue
            }
            if object.isInvalidated { return "a held object of \(id) is invalidated" }
            if object.id != id || Values(object) != live.values {
                return "held \(id) reads \(Values(object)), not \(live.values)"
            }
        }
        for (copy, objects) in frozen {
            for id in 0...15 {
                let found = copy.object(ofType: Reading.self, forPrimaryKey: id)
                let read = found.map {
                    Values(
                        flag: $0.flag, count: $0.count, small: $0.small, ratio: $0.ratio, weight: $0.weight,
                        name: $0.name, date: $0.date, nickname: $0.nickname, rank: $0.rank)
                }
                if read != objects[id] {
                    return "frozen \(id) reads \(String(describing: read)), not \(String(describing: objects[id]))"
                }
            }
        }
        return nil
    }
}
