import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@Suite("Change history")
struct ChangeHistoryTests {
    func historyRealm(_ name: String = #function) async throws -> Realm {
        var configuration = Realm.Configuration(identifier: "\(name)-\(UUID())", objectTypes: petModelTypes)
        configuration.keepsHistory = true
        return try await Realm.open(configuration)
    }

    @Test func tokensGoUpOnePerCommit() async throws {
        let realm = try await historyRealm()
        #expect(await realm.currentHistoryToken == .initial)
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 1, "name": "Rex"]) }
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 2, "name": "Fido"]) }
        #expect(await realm.currentHistoryToken == HistoryToken(rawValue: 2))
        // A write that changes nothing is no commit.
        try await realm.write { _ in }
        #expect(await realm.currentHistoryToken == HistoryToken(rawValue: 2))
    }

    @Test func insertUpdateDeleteSinceAToken() async throws {
        let realm = try await historyRealm()
        try await realm.write { r in
            _ = try r.create(Dog.self, value: ["id": 1, "name": "Rex"])
            _ = try r.create(Dog.self, value: ["id": 2, "name": "Fido"])
        }
        let start = await realm.currentHistoryToken
        try await realm.write { r in
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "Rex II"
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 4
            try r.delete(r.object(ofType: Dog.self, forPrimaryKey: 2)!)
            _ = try r.create(Dog.self, value: ["id": 3, "name": "Max"])
        }
        let history = try await realm.read { try $0.changes(since: start) }
        #expect(history[Dog.self].inserted == [.int(3)])
        #expect(history[Dog.self].updated == [.int(1): ["name", "age"]])
        #expect(history[Dog.self].deleted == [.int(2)])
        #expect(history.token == HistoryToken(rawValue: 2))
        let everything = try await realm.read { try $0.changes(since: .initial) }
        #expect(everything[Dog.self].inserted == [.int(1), .int(3)])
        #expect(everything[Dog.self].updated.isEmpty)
        #expect(everything[Dog.self].deleted.isEmpty)
        #expect(try await realm.read { try $0.changes(since: $0.currentHistoryToken) }.isEmpty)
    }

    @Test func coalescingRulesAcrossCommits() async throws {
        let realm = try await historyRealm()
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 10, "name": "Old"]) }
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 11, "name": "Old"]) }
        let start = await realm.currentHistoryToken
        // insert then delete → nothing
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 1]) }
        try await realm.write { try $0.delete($0.object(ofType: Dog.self, forPrimaryKey: 1)!) }
        // insert then update → insert
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 2]) }
        try await realm.write { $0.object(ofType: Dog.self, forPrimaryKey: 2)!.age = 9 }
        // update then delete → delete
        try await realm.write { $0.object(ofType: Dog.self, forPrimaryKey: 10)!.age = 9 }
        try await realm.write { try $0.delete($0.object(ofType: Dog.self, forPrimaryKey: 10)!) }
        // update then update → one update with both properties
        try await realm.write { $0.object(ofType: Dog.self, forPrimaryKey: 11)!.age = 1 }
        try await realm.write { $0.object(ofType: Dog.self, forPrimaryKey: 11)!.name = "New" }
        let history = try await realm.read { try $0.changes(since: start) }
        #expect(history[Dog.self].inserted == [.int(2)])
        #expect(history[Dog.self].deleted == [.int(10)])
        #expect(history[Dog.self].updated == [.int(11): ["age", "name"]])
    }

    @Test func deleteAndReinsertOfAPrimaryKeyIsAnUpdateOfEveryProperty() async throws {
        let realm = try await historyRealm()
        try await realm.write { _ = try $0.create(DogToy.self, value: ["id": 5, "name": "Ball"]) }
        let start = await realm.currentHistoryToken
        try await realm.write { try $0.delete($0.object(ofType: DogToy.self, forPrimaryKey: 5)!) }
        try await realm.write { _ = try $0.create(DogToy.self, value: ["id": 5, "name": "Bone"]) }
        // In one commit too.
        try await realm.write { r in
            try r.delete(r.object(ofType: DogToy.self, forPrimaryKey: 5)!)
            _ = try r.create(DogToy.self, value: ["id": 5, "name": "Stick"])
        }
        let history = try await realm.read { try $0.changes(since: start) }
        #expect(history[DogToy.self].updated == [.int(5): ["name"]])
        #expect(history[DogToy.self].inserted.isEmpty && history[DogToy.self].deleted.isEmpty)
    }

    @Test func embeddedObjectsAreNotRecordedAndListChangesNameTheList() async throws {
        let realm = try await historyRealm()
        try await realm.write { r in
            _ = try r.create(Person.self, value: ["id": 1, "name": "Ann", "address": ["city": "Lyon"]])
            _ = try r.create(Dog.self, value: ["id": 1])
        }
        let start = await realm.currentHistoryToken
        try await realm.write { r in
            let ann = r.object(ofType: Person.self, forPrimaryKey: 1)!
            ann.dogs.append(r.object(ofType: Dog.self, forPrimaryKey: 1)!)
        }
        let history = try await realm.read { try $0.changes(since: start) }
        #expect(history["Address"].isEmpty)
        #expect(history[Person.self].updated == [.int(1): ["dogs"]])
    }

    @Test func trimmedHistoryIsATypedError() async throws {
        let realm = try await historyRealm()
        for id in 1...5 { try await realm.write { _ = try $0.create(Dog.self, value: ["id": id]) } }
        try await realm.trimHistory(upTo: HistoryToken(rawValue: 3))
        #expect(await realm.oldestHistoryToken == HistoryToken(rawValue: 3))
        let rest = try await realm.read { try $0.changes(since: HistoryToken(rawValue: 3)) }
        #expect(rest[Dog.self].inserted == [.int(4), .int(5)])
        let error = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { _ = try $0.changes(since: HistoryToken(rawValue: 2)) }
        }
        #expect(error?.code == .historyTrimmed)
        let future = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { _ = try $0.changes(since: HistoryToken(rawValue: 99)) }
        }
        #expect(future?.code == .historyTrimmed)
        // Trimming past the end stops at the current token.
        try await realm.trimHistory(upTo: HistoryToken(rawValue: 99))
        #expect(await realm.oldestHistoryToken == HistoryToken(rawValue: 5))
        #expect(try await realm.read { try $0.changes(since: HistoryToken(rawValue: 5)) }.isEmpty)
    }

    @Test func realmWithoutHistoryRefusesToAnswer() async throws {
        let realm = try await openPets("nohistory")
        try await realm.write { _ = try $0.create(Dog.self, value: ["id": 1]) }
        #expect(await realm.currentHistoryToken == .initial)
        let error = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { _ = try $0.changes(since: .initial) }
        }
        #expect(error?.code == .invalidOperation)
    }

    @Test func rolledBackWritesLeaveNoHistory() async throws {
        let realm = try await historyRealm()
        struct Stop: Error {}
        _ = try? await realm.write { r in
            _ = try r.create(Dog.self, value: ["id": 1])
            throw Stop()
        }
        #expect(await realm.currentHistoryToken == .initial)
        #expect(try await realm.read { try $0.changes(since: .initial) }.isEmpty)
    }

    /// A seeded random sequence of commits, checked against a reference that replays the
    /// coalescing rules on the objects' states before and after.
    @Test func randomCommitsMatchTheStateDifference() async throws {
        let seed = TestEnvironment.seed("HISTORY_SEED") ?? 0x5eed_1234
        var rng = SeededRandomNumberGenerator(seed: seed)
        let realm = try await historyRealm()
        var log: [String] = []
        var snapshots: [UInt64: [Int: (name: String, age: Int)]] = [0: [:]]
        for _ in 0..<200 {
            let ops = (0..<Int(rng.next() % 4 + 1)).map { _ in
                (Int(rng.next() % 12), Int(rng.next() % 3), Int(rng.next() % 5))
            }
            log.append("\(ops)")
            try await realm.write { r in
                for (id, op, value) in ops {
                    let dog = r.object(ofType: Dog.self, forPrimaryKey: id)
                    switch (op, dog) {
                    case (0, nil): _ = try r.create(Dog.self, value: ["id": id, "name": "n\(value)", "age": value])
                    case (0, let dog?): dog.age = value
                    case (1, let dog?): dog.name = "n\(value)"
                    case (2, let dog?): try r.delete(dog)
                    default: break
                    }
                }
            }
            let state = try await realm.read { r in
                Dictionary(uniqueKeysWithValues: r.objects(Dog.self).map { ($0.id, (name: $0.name, age: $0.age)) })
            }
            snapshots[await realm.currentHistoryToken.rawValue] = state
        }
        for (token, before) in snapshots {
            let history = try await realm.read { try $0.changes(since: HistoryToken(rawValue: token)) }
            let after = snapshots[await realm.currentHistoryToken.rawValue]!
            let dogs = history[Dog.self]
            for id in 0..<12 {
                let was = before[id]
                let now = after[id]
                let context = "seed \(seed), since \(token), id \(id), ops \(log)"
                switch (was, now) {
                case (nil, nil):
                    #expect(
                        !dogs.inserted.contains(.int(Int64(id))) && !dogs.deleted.contains(.int(Int64(id))),
                        "\(context)")
                case (nil, _?):
                    #expect(dogs.inserted.contains(.int(Int64(id))), "\(context)")
                case (_?, nil):
                    #expect(dogs.deleted.contains(.int(Int64(id))), "\(context)")
                case (let was?, let now?):
                    #expect(
                        !dogs.inserted.contains(.int(Int64(id))) && !dogs.deleted.contains(.int(Int64(id))),
                        "\(context)")
                    let changed = dogs.updated[.int(Int64(id))] ?? []
                    if was.name != now.name { #expect(changed.contains("name"), "\(context)") }
                    if was.age != now.age { #expect(changed.contains("age"), "\(context)") }
                }
            }
        }
    }
}
