import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Objects found by their integer primary key agree with a plain model, looked up at once and
/// held across later writes: keys created in key order (which lookups find by position alone),
/// keys out of order, deletes, a key deleted and created again in one write (the new object in
/// a reused slot), changes and cancelled writes. An absent key finds nothing; a held object
/// reads its object's current values, and once that object is deleted it is invalidated and a
/// read by name throws `objectInvalidated` instead of reading another object's row; a tracked
/// read of a looked-up object's `age` is told of the commit that changes that age or deletes the
/// object, and of nothing else; frozen copies keep what the model held when they were made.
/// Seeded (`LIVEOBJECTS_READ_SEED` replays a run; the seed and operations are printed on
/// failure).
@Suite struct LookedUpObjectTests {
    @Test func lookedUpObjectsAgreeWithAModel() async throws {
        let realm = try await openPets("looked-up")
        let failure = try await SeededRun.run(
            "lookedUpObjectsAgreeWithAModel", variable: "LIVEOBJECTS_READ_SEED", seed: 0x100C, steps: (250, 1_500)
        ) { steps, rng, log in try await Self.run(realm, steps: steps, &rng, &log) }
        #expect(failure == nil)
    }

    /// What a dog holds in the model, and the serial number of its creation (a held object is
    /// of the live dog only when it was looked up for that creation).
    struct Entry: Equatable {
        var serial: Int
        var name: String
        var age: Int
    }

    /// A looked-up object kept across steps, with the tracking of its `age` when it has one and
    /// the number of changes that tracking should have heard.
    struct Held {
        var id: Int
        var serial: Int
        var dog: Dog
        var counter: ChangeCounter?
        var expectedChanges = 0
    }

    /// The model and everything held, as the steps change them.
    struct State {
        var dogs: [Int: Entry] = [:]
        var serial = 0
        var nextID = 0
        var held: [Held] = []
        var frozen: [(realm: FrozenRealm, dogs: [Int: Entry])] = []

        /// A new creation of `id` in the model.
        mutating func created(_ id: Int, _ name: String, _ age: Int) {
            serial += 1
            dogs[id] = Entry(serial: serial, name: name, age: age)
        }

        /// What the trackers of `id`'s current object hear of a commit that sets its age to
        /// `age` (nil: deletes it): one change when the value really changes, or on delete.
        mutating func committed(_ id: Int, age: Int?) {
            guard let entry = dogs[id], entry.age != age else { return }
            for i in held.indices where held[i].id == id && held[i].serial == entry.serial && held[i].counter != nil {
                held[i].expectedChanges = 1
            }
        }
    }

    static let names = ["Rex", "Fido", "Émile", "a name longer than fits inline", ""]

    static func run(
        _ realm: isolated Realm, steps: Int, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]
    ) throws -> String? {
        var state = State()
        for step in 0..<steps {
            do {
                try Self.step(realm, &state, &rng, &log)
            } catch {
                return "step \(step) threw \(error)"
            }
            if let mismatch = Self.mismatch(realm, state) { return "step \(step): \(mismatch)" }
        }
        return nil
    }

    /// One random operation, on the realm and the model.
    static func step(
        _ realm: isolated Realm, _ state: inout State, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]
    ) throws {
        let id = rng.int(-2...(state.nextID + 2))
        let name = names[rng.int(0...names.count - 1)]
        let age = rng.int(0...6)
        switch rng.int(0...8) {
        case 0, 1:
            // The next keys, as an auto-increment gives them.
            let ids = (state.nextID..<(state.nextID + rng.int(1...4))).filter { state.dogs[$0] == nil }
            try commit(realm) {
                for id in ids { _ = try realm.create(Dog.self, value: ["id": id, "name": name, "age": age]) }
            }
            for id in ids { state.created(id, name, age) }
            state.nextID += max(ids.count, 1)
            log.append("create \(ids) \(name) \(age)")
        case 2 where state.dogs[id] == nil:
            try commit(realm) { _ = try realm.create(Dog.self, value: ["id": id, "name": name, "age": age]) }
            state.created(id, name, age)
            log.append("create \(id) out of order, \(name) \(age)")
        case 3 where state.dogs[id] != nil:
            let renames = rng.chance(0.5)
            try commit(realm) {
                let dog = realm.object(ofType: Dog.self, forPrimaryKey: id)!
                dog.age = age
                if renames { dog.name = name }
            }
            state.committed(id, age: age)
            state.dogs[id]!.age = age
            if renames { state.dogs[id]!.name = name }
            log.append("change \(id) to age \(age)\(renames ? ", name \(name)" : "")")
        case 4 where state.dogs[id] != nil:
            let again = rng.chance(0.5)
            try commit(realm) {
                try realm.delete(realm.object(ofType: Dog.self, forPrimaryKey: id)!)
                if again { _ = try realm.create(Dog.self, value: ["id": id, "name": name, "age": age]) }
            }
            state.committed(id, age: nil)
            state.dogs[id] = nil
            if again { state.created(id, name, age) }
            log.append(again ? "delete \(id) and create it again, \(name) \(age)" : "delete \(id)")
        case 5, 6:
            let found = realm.object(ofType: Dog.self, forPrimaryKey: id)
            // A key the model does not hold: the check after the step finds what it found.
            guard let found, let entry = state.dogs[id] else { return log.append("look up \(id)") }
            var held = Held(id: id, serial: entry.serial, dog: found)
            if rng.chance(0.5) {
                let counter = ChangeCounter()
                counter.track { _ = found.age }
                held.counter = counter
            }
            state.held.append(held)
            if state.held.count > 12 { state.held.removeFirst() }
            log.append("look up \(id) and hold it\(held.counter == nil ? "" : ", its age tracked")")
        case 7:
            state.frozen.append((realm.freeze(), state.dogs))
            if state.frozen.count > 3 { state.frozen.removeFirst() }
            log.append("freeze")
        case 8:
            // A change and a delete, cancelled: nothing is reported and nothing changes.
            try realm.beginWrite()
            if let dog = realm.object(ofType: Dog.self, forPrimaryKey: id) {
                dog.age = age + 100
                try realm.delete(dog)
            }
            _ = try? realm.create(Dog.self, value: ["id": state.nextID + 50, "name": name])
            realm.cancelWrite()
            log.append("change and delete \(id), cancelled")
        default:
            break
        }
    }

    /// The first lookup, held object, tracking or frozen copy that disagrees with the model.
    static func mismatch(_ realm: isolated Realm, _ state: State) -> String? {
        for id in -3...(state.nextID + 3) {
            let found = realm.object(ofType: Dog.self, forPrimaryKey: id)
            let read = found.map { Entry(serial: 0, name: $0.name, age: $0.age) }
            let expected = state.dogs[id].map { Entry(serial: 0, name: $0.name, age: $0.age) }
            if read != expected || (found.map { $0.id != id } ?? false) {
                return "dog \(id) is \(String(describing: read)), not \(String(describing: expected))"
            }
        }
        for held in state.held {
            guard let entry = state.dogs[held.id], entry.serial == held.serial else {
                if !held.dog.isInvalidated { return "a held object of deleted dog \(held.id) is not invalidated" }
                do {
                    _ = try held.dog.value(forKey: "age")
                    return "a held object of deleted dog \(held.id) reads its age"
                } catch {
                    if error.code != .objectInvalidated { return "reading deleted dog \(held.id) throws \(error)" }
                }
                continue
            }
            if held.dog.isInvalidated { return "a held object of dog \(held.id) is invalidated" }
            if held.dog.id != held.id || held.dog.name != entry.name || held.dog.age != entry.age {
                return "held dog \(held.id) reads \(held.dog.name) \(held.dog.age), not \(entry.name) \(entry.age)"
            }
            if let counter = held.counter, counter.value != held.expectedChanges {
                return "the tracked age of dog \(held.id) heard \(counter.value) changes, not \(held.expectedChanges)"
            }
        }
        for (copy, dogs) in state.frozen {
            for id in -3...(state.nextID + 3) {
                let read = copy.object(ofType: Dog.self, forPrimaryKey: id).map { "\($0.name) \($0.age)" }
                let expected = dogs[id].map { "\($0.name) \($0.age)" }
                if read != expected {
                    return "frozen dog \(id) reads \(String(describing: read)), not \(String(describing: expected))"
                }
            }
        }
        return nil
    }
}
