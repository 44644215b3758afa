import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Observation
import Synchronization
import Testing

/// Counts the `onChange` calls of `withObservationTracking`.
final class ChangeCounter: Sendable {
    private let count = Locked(0)
    var value: Int { count.withLock { $0 } }

    /// Tracks the reads of `apply`; each change the tracking hears adds one.
    func track(_ apply: () -> Void) {
        withObservationTracking(apply) { [self] in count.withLock { $0 += 1 } }
    }
}

/// Runs `body` in a write and commits it, from inside the realm (so that the objects the
/// trackers read stay alive across the commit).
func commit(_ realm: isolated Realm, _ body: () throws -> Void) throws {
    try realm.beginWrite()
    do {
        try body()
        try realm.commitWrite()
    } catch {
        realm.cancelWrite()
        throw error
    }
}

@Suite struct ObservationTests {
    /// A realm with two people and three dogs (1 and 2 owned by Ann, 3 by nobody).
    func openObservedRealm() async throws -> Realm {
        let realm = try await openPets("observation")
        try await realm.write { r in
            let ann = try r.create(Person.self, value: ["id": 1, "name": "Ann"])
            _ = try r.create(Person.self, value: ["id": 2, "name": "Bob"])
            for (id, name) in [(1, "Rex"), (2, "Fido"), (3, "Spot")] {
                let dog = try r.create(Dog.self, value: ["id": id, "name": name, "age": id])
                if id < 3 {
                    dog.owner = ann
                    ann.dogs.append(dog)
                }
            }
        }
        return realm
    }

    @Test func commitChangingATrackedPropertyReportsIt() async throws {
        let realm = try await openObservedRealm()
        let counts = try await realm.read { r in
            let rex = r.object(ofType: Dog.self, forPrimaryKey: 1)!
            let counter = ChangeCounter()
            counter.track { _ = rex.age }
            try r.beginWrite()
            rex.age = 10
            let duringWrite = counter.value
            try r.commitWrite()
            let afterCommit = counter.value
            // A tracking fires once: a later commit adds nothing.
            try commit(r) { rex.age = 11 }
            return (duringWrite, afterCommit, counter.value)
        }
        #expect(counts == (0, 1, 1))
    }

    @Test func changesOfUntrackedPropertiesOrObjectsAreNotReported() async throws {
        let realm = try await openObservedRealm()
        let count = try await realm.read { r in
            let rex = r.object(ofType: Dog.self, forPrimaryKey: 1)!
            let fido = r.object(ofType: Dog.self, forPrimaryKey: 2)!
            let counter = ChangeCounter()
            counter.track { _ = rex.age }
            try commit(r) {
                rex.name = "Rexy"
                fido.age = 20
                _ = try r.create(Dog.self, value: ["id": 9, "name": "New", "age": 1])
            }
            return counter.value
        }
        #expect(count == 0)
    }

    @Test func writingTheSameValueIsNotReported() async throws {
        let realm = try await openObservedRealm()
        let counts = try await realm.read { r in
            let rex = r.object(ofType: Dog.self, forPrimaryKey: 1)!
            let counter = ChangeCounter()
            counter.track { _ = (rex.age, rex.name, rex.owner, rex.toys.count) }
            // The same value; a change undone in the same write; an update of every property
            // with the values it has (the store records those sets).
            try commit(r) {
                rex.age = 1
                rex.name = "Rex"
                rex.owner = r.object(ofType: Person.self, forPrimaryKey: 1)
                rex.age = 5
                rex.age = 1
                _ = try r.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 1, "owner": 1], update: .all)
            }
            let unchanged = counter.value
            try commit(r) { rex.age = 2 }
            return (unchanged, counter.value)
        }
        #expect(counts == (0, 1))
    }

    @Test func writesThroughAnyInstanceReachEveryInstance() async throws {
        let realm = try await openObservedRealm()
        let counts = try await realm.read { r in
            let first = r.object(ofType: Dog.self, forPrimaryKey: 1)!
            let second = r.objects(Dog.self).where { $0.id == 1 }.first!
            let viaFirst = ChangeCounter()
            let viaSecond = ChangeCounter()
            viaFirst.track { _ = first.name }
            viaSecond.track { _ = second.name }
            try commit(r) { second.name = "Rexy" }
            let byInstance = (viaFirst.value, viaSecond.value)
            // The dynamic API, with no instance of the object at all.
            viaFirst.track { _ = first.age }
            try commit(r) {
                try r.dynamicObject(ofType: "Dog", forPrimaryKey: 1)!.set("age", to: 30)
            }
            return (byInstance.0, byInstance.1, viaFirst.value)
        }
        #expect(counts == (1, 1, 2))
    }

    @Test func unmanagedObjectsReportTheirSetters() {
        let dog = Dog()
        dog.age = 4
        let counter = ChangeCounter()
        counter.track { _ = dog.age }
        dog.name = "Rex"
        #expect(counter.value == 0)
        dog.age = 4
        #expect(counter.value == 0)
        dog.age = 5
        #expect(counter.value == 1)
        #expect(dog.age == 5)
    }

    @Test func listsLinksAndLinkingObjectsReportTheirChanges() async throws {
        let realm = try await openObservedRealm()
        let counts = try await realm.read { r in
            let ann = r.object(ofType: Person.self, forPrimaryKey: 1)!
            let bob = r.object(ofType: Person.self, forPrimaryKey: 2)!
            let spot = r.object(ofType: Dog.self, forPrimaryKey: 3)!
            let rex = r.object(ofType: Dog.self, forPrimaryKey: 1)!
            let list = ChangeCounter()
            let link = ChangeCounter()
            let inverse = ChangeCounter()
            let untouched = ChangeCounter()
            list.track { _ = ann.dogs.count }
            link.track { _ = spot.owner }
            inverse.track { _ = spot.walkers.count }
            untouched.track { _ = (bob.dogs.count, rex.owner) }
            try commit(r) {
                ann.dogs.append(spot)
                spot.owner = ann
            }
            let first = [list.value, link.value, inverse.value, untouched.value]
            // Moving elements of a list is a change of it; removing and re-adding the same
            // element at the same place in one write is not.
            let moved = ChangeCounter()
            let same = ChangeCounter()
            moved.track { _ = ann.dogs.first }
            same.track { _ = bob.dogs.count }
            try commit(r) {
                ann.dogs.move(from: 0, to: 2)
                bob.dogs.append(spot)
                bob.dogs.remove(at: 0)
            }
            return first + [moved.value, same.value]
        }
        #expect(counts == [1, 1, 1, 0, 1, 0])
    }

    @Test func embeddedObjectsReportTheirChanges() async throws {
        let realm = try await openObservedRealm()
        let counts = try await realm.read { r in
            let ann = r.object(ofType: Person.self, forPrimaryKey: 1)!
            try commit(r) { ann.address = Address() }
            let address = ann.address!
            let city = ChangeCounter()
            let street = ChangeCounter()
            city.track { _ = address.city }
            street.track { _ = ann.address?.street }
            try commit(r) { ann.address!.city = "Oslo" }
            let afterCity = (city.value, street.value)
            // Replacing the embedded object deletes the old one: its tracked properties report.
            try commit(r) { ann.address = Address() }
            return [afterCity.0, afterCity.1, street.value]
        }
        #expect(counts == [1, 0, 1])
    }

    @Test func deletionReportsTrackedProperties() async throws {
        let realm = try await openObservedRealm()
        let counts = try await realm.read { r in
            let spot = r.object(ofType: Dog.self, forPrimaryKey: 3)!
            let rex = r.object(ofType: Dog.self, forPrimaryKey: 1)!
            let deleted = ChangeCounter()
            let kept = ChangeCounter()
            deleted.track { _ = spot.name }
            kept.track { _ = rex.name }
            try commit(r) { try r.delete(spot) }
            return (deleted.value, kept.value, spot.isInvalidated)
        }
        #expect(counts == (1, 0, true))
    }

    @Test func cancelledWritesReportNothing() async throws {
        let realm = try await openObservedRealm()
        let count = try await realm.read { r in
            let rex = r.object(ofType: Dog.self, forPrimaryKey: 1)!
            let counter = ChangeCounter()
            counter.track { _ = (rex.age, rex.toys.count) }
            try r.beginWrite()
            rex.age = 50
            rex.toys.append(DogToy())
            r.cancelWrite()
            return counter.value
        }
        #expect(count == 0)
    }

    /// Random writes against random trackers: each tracker fires exactly when the value of the
    /// property it read differs after the commit. Seeded; a failure prints the seed and the
    /// operations of the failing round.
    @Test func trackersFireExactlyWhenTheReadValueChanged() async throws {
        let seed: UInt64 = 0x0b5e_7ea7
        let realm = try await openObservedRealm()
        let failures = try await realm.read { r -> [String] in
            var random = SeededRandomNumberGenerator(seed: seed)
            let properties = ["name", "age", "owner", "toys", "walkers"]
            var failures: [String] = []
            var nextToy = 1
            for round in 0..<150 {
                // Trackers on fresh instances of random dogs, each reading one property.
                var trackers: [(dog: Dog, property: String, before: PropertyValue, counter: ChangeCounter)] = []
                for _ in 0..<4 {
                    let dog = r.object(ofType: Dog.self, forPrimaryKey: Int.random(in: 1...3, using: &random))!
                    let property = properties.randomElement(using: &random)!
                    let counter = ChangeCounter()
                    counter.track {
                        switch property {
                        case "name": _ = dog.name
                        case "age": _ = dog.age
                        case "owner": _ = dog.owner
                        case "toys": _ = dog.toys
                        default: _ = dog.walkers
                        }
                    }
                    trackers.append((dog, property, try dog.value(forKey: property), counter))
                }
                var operations: [String] = []
                try commit(r) {
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        let dog = r.object(ofType: Dog.self, forPrimaryKey: Int.random(in: 1...3, using: &random))!
                        let person = r.object(
                            ofType: Person.self, forPrimaryKey: Int.random(in: 1...2, using: &random))!
                        switch Int.random(in: 0..<6, using: &random) {
                        case 0:
                            dog.age = Int.random(in: 0...2, using: &random)
                            operations.append("dog \(dog.id).age = \(dog.age)")
                        case 1:
                            dog.name = ["Rex", "Fido", "Spot"].randomElement(using: &random)!
                            operations.append("dog \(dog.id).name = \(dog.name)")
                        case 2:
                            dog.owner = Bool.random(using: &random) ? person : nil
                            operations.append("dog \(dog.id).owner = \(dog.owner?.id as Any)")
                        case 3:
                            let toy = try r.create(DogToy.self, value: ["id": nextToy])
                            nextToy += 1
                            dog.toys.append(toy)
                            operations.append("dog \(dog.id).toys.append")
                        case 4:
                            if !dog.toys.isEmpty { dog.toys.remove(at: 0) }
                            operations.append("dog \(dog.id).toys.remove(at: 0)")
                        default:
                            if let index = person.dogs.firstIndex(of: dog) {
                                person.dogs.remove(at: index)
                                operations.append("person \(person.id).dogs.remove(dog \(dog.id))")
                            } else {
                                person.dogs.append(dog)
                                operations.append("person \(person.id).dogs.append(dog \(dog.id))")
                            }
                        }
                    }
                }
                for tracker in trackers {
                    let changed = try tracker.dog.value(forKey: tracker.property) != tracker.before
                    if tracker.counter.value != (changed ? 1 : 0) {
                        failures.append(
                            "seed \(seed) round \(round): dog \(tracker.dog.id).\(tracker.property) changed: \(changed), "
                                + "reports: \(tracker.counter.value); operations: \(operations)")
                    }
                }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures.prefix(5).joined(separator: "\n"))")
    }
}
