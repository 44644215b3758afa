import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

// MARK: The Team / Player data-access layer: app models, storage models, bridge, two stores

/// The app's model: plain values, no storage types.
struct Team: Sendable, Hashable {
    var id: Int
    var name: String
    var players: [Player] = []
}

struct Player: Sendable, Hashable {
    var id: Int
    var name: String
    var number: Int
}

/// What the app depends on.
protocol TeamStore: Sendable {
    func save(_ team: Team) async throws(RepositoryError)
    func team(id: Int) async throws(RepositoryError) -> Team?
    func teams(namedLike prefix: String) async throws(RepositoryError) -> [Team]
    func allTeams() async throws(RepositoryError) -> [Team]
    func removeTeam(id: Int) async throws(RepositoryError) -> Bool
}

/// The storage models.
final class TeamRecord: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var players: List<PlayerRecord>
}

final class PlayerRecord: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var number = 0
    @Persisted(originProperty: "players") var teams: LinkingObjects<TeamRecord>
}

/// The realm-backed store: a repository whose items are app-model values.
struct RealmTeamStore: TeamStore, Repository {
    let realm: Realm

    func item(from record: TeamRecord) -> Team {
        Team(
            id: record.id, name: record.name,
            players: record.players.map { Player(id: $0.id, name: $0.name, number: $0.number) })
    }

    func model(from team: Team) throws -> TeamRecord {
        guard !team.name.isEmpty else {
            throw RepositoryError.missingRequiredData(objectType: "Team", property: "name", underlying: nil)
        }
        let record = TeamRecord()
        record.id = team.id
        record.name = team.name
        for player in team.players {
            let p = PlayerRecord()
            p.id = player.id
            p.name = player.name
            p.number = player.number
            record.players.append(p)
        }
        return record
    }

    func save(_ team: Team) async throws(RepositoryError) { try await save(team, update: .modified) }
    func team(id: Int) async throws(RepositoryError) -> Team? { try await find(primaryKey: id) }
    func teams(namedLike prefix: String) async throws(RepositoryError) -> [Team] {
        try await find(where: "name BEGINSWITH %@", prefix, sortedBy: [SortField("name")])
    }
    func allTeams() async throws(RepositoryError) -> [Team] { try await findAll(sortedBy: [SortField("id")]) }
    func removeTeam(id: Int) async throws(RepositoryError) -> Bool { try await delete(primaryKey: id) }
}

/// The in-memory fake the app's tests use instead.
actor InMemoryTeamStore: TeamStore {
    private var teams: [Int: Team] = [:]

    func save(_ team: Team) throws(RepositoryError) {
        guard !team.name.isEmpty else {
            throw .missingRequiredData(objectType: "Team", property: "name", underlying: nil)
        }
        teams[team.id] = team
    }
    func team(id: Int) -> Team? { teams[id] }
    func teams(namedLike prefix: String) -> [Team] {
        teams.values.filter { $0.name.hasPrefix(prefix) }.sorted { $0.name < $1.name }
    }
    func allTeams() -> [Team] { teams.values.sorted { $0.id < $1.id } }
    func removeTeam(id: Int) -> Bool { teams.removeValue(forKey: id) != nil }
}

enum StoreKind: String, CaseIterable, Sendable {
    case realm, memory

    func make() async throws -> any TeamStore {
        switch self {
        case .realm:
            RealmTeamStore(
                realm: try await RealmTeamStore.openRealm(
                    .init(identifier: "teams-\(UUID())", objectTypes: [TeamRecord.self, PlayerRecord.self])))
        case .memory: InMemoryTeamStore()
        }
    }
}

/// The error an operation threw, or nil if it succeeded.
private func failure<T>(_ body: () async throws(RepositoryError) -> T) async -> RepositoryError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// Awaits a completion handler.
private func callback<T: Sendable>(
    _ start: (@escaping @Sendable (Result<T, RepositoryError>) -> Void) -> Void
) async -> Result<T, RepositoryError> {
    await withCheckedContinuation { continuation in
        start { continuation.resume(returning: $0) }
    }
}

@Suite struct RepositoryTests {
    private func dogs(_ name: String = #function) async throws -> ObjectRepository<Dog> {
        try await ObjectRepository<Dog>.open(.init(identifier: "repo-\(name)-\(UUID())", objectTypes: petModelTypes))
    }

    private func dog(_ id: Int, _ name: String, age: Int = 1) -> Dog {
        let dog = Dog()
        dog.id = id
        dog.name = name
        dog.age = age
        return dog
    }

    // MARK: App code against a store, with the storage swapped

    @Test(arguments: StoreKind.allCases)
    func appCodeRunsTheSameOnEitherStore(kind: StoreKind) async throws {
        let store = try await kind.make()
        try await store.save(Team(id: 1, name: "Owls", players: [Player(id: 10, name: "Ann", number: 9)]))
        try await store.save(Team(id: 2, name: "Otters"))
        try await store.save(Team(id: 3, name: "Bears"))
        #expect(try await store.team(id: 1)?.players == [Player(id: 10, name: "Ann", number: 9)])
        #expect(try await store.team(id: 4) == nil)
        #expect(try await store.teams(namedLike: "O").map(\.name) == ["Otters", "Owls"])
        // Saving again updates.
        try await store.save(Team(id: 2, name: "Otters FC", players: [Player(id: 11, name: "Bo", number: 4)]))
        #expect(try await store.team(id: 2)?.name == "Otters FC")
        #expect(try await store.allTeams().map(\.id) == [1, 2, 3])
        #expect(try await store.removeTeam(id: 3))
        #expect(try await store.removeTeam(id: 3) == false)
        #expect(try await store.allTeams().map(\.name) == ["Owls", "Otters FC"])
        // Missing data: a typed error the app can switch on, and nothing saved.
        if case .missingRequiredData(_, let property, _)? = await failure({ () throws(RepositoryError) in
            try await store.save(Team(id: 5, name: ""))
        }) {
            #expect(property == "name")
        } else {
            Issue.record("a team without a name was saved")
        }
        #expect(try await store.allTeams().count == 2)
    }

    // MARK: CRUD with detached copies

    @Test func saveFindAndDeleteDetachedCopies() async throws {
        let dogs = try await dogs()
        try await dogs.save(dog(1, "Rex", age: 3))
        try await dogs.save([dog(2, "Fido", age: 5), dog(3, "Bella", age: 2)])
        let rex = try #require(try await dogs.find(primaryKey: 1))
        #expect(!rex.isManaged && rex.name == "Rex")
        rex.age = 30  // a copy: the stored object does not change
        #expect(try await dogs.find(primaryKey: 1)?.age == 3)
        #expect(try await dogs.find(primaryKey: 9) == nil)
        #expect(try await dogs.findAll().map(\.id) == [1, 2, 3])
        #expect(
            try await dogs.findAll(sortedBy: [SortField("age", ascending: false)]).map(\.name) == [
                "Fido", "Rex", "Bella",
            ])
        #expect(
            try await dogs.find(where: "age >= %@ AND name != %@", 2, "Rex", sortedBy: [SortField("name")]).map(\.name)
                == ["Bella", "Fido"])
        #expect(try await dogs.find { $0.age < 3 }.map(\.name) == ["Bella"])
        #expect(
            try await dogs.find(sortedBy: [SortField("name")]) { $0.age > 1 }.map(\.name) == ["Bella", "Fido", "Rex"])
        #expect(try await dogs.count() == 3)
        #expect(try await dogs.count(where: "age > %@", 2) == 2)

        // Update with the default policy (insert or update), then insert-only.
        try await dogs.save(dog(1, "Rex II", age: 4))
        #expect(try await dogs.find(primaryKey: 1)?.name == "Rex II")

        // Delete one by item, by key, matching a predicate, matching a typed condition, all.
        #expect(try await dogs.delete(rex))
        #expect(try await dogs.delete(primaryKey: 1) == false)
        #expect(try await dogs.delete(where: "name == %@", "Fido") == 1)
        try await dogs.save([dog(4, "Max", age: 7), dog(5, "Lola", age: 8)])
        #expect(try await dogs.delete { $0.age > 7 } == 1)
        #expect(try await dogs.findAll(sortedBy: [SortField("name")]).map(\.name) == ["Bella", "Max"])
        #expect(try await dogs.deleteAll() == 2)
        #expect(try await dogs.count() == 0)
    }

    @Test func linkedObjectsComeWithTheCopy() async throws {
        let dogs = try await dogs()
        let rex = dog(1, "Rex")
        let ann = Person()
        ann.id = 7
        ann.name = "Ann"
        rex.owner = ann
        let ball = DogToy()
        ball.id = 1
        ball.name = "ball"
        rex.toys.append(ball)
        try await dogs.save(rex)
        let copy = try #require(try await dogs.find(primaryKey: 1))
        #expect(copy.owner?.name == "Ann" && copy.toys.map(\.name) == ["ball"])
        #expect(try await dogs.find(where: "owner.name == %@", "Ann").count == 1)
    }

    @Test func saveFromJSON() async throws {
        let dogs = try await dogs()
        let saved = try await dogs.save(
            json: Data(#"{"id": 1, "name": "Rex", "owner": {"id": 7, "name": "Ann"}}"#.utf8))
        #expect(saved.map(\.name) == ["Rex"] && saved[0].owner?.name == "Ann")
        let more = try await dogs.save(
            json: Data(#"  [{"id": 2, "name": "Fido", "owner": 7}, {"id": 1, "age": 6}]"#.utf8))
        #expect(more.map(\.name) == ["Fido", "Rex"] && more[1].age == 6)
        #expect(try await dogs.find(primaryKey: 2)?.owner?.id == 7)
        // Insert only: a duplicate fails and nothing of the array is saved.
        if case .insertFailed(let type, let underlying)? = await failure({ () throws(RepositoryError) in
            try await dogs.save(json: Data(#"[{"id": 3, "name": "New"}, {"id": 2}]"#.utf8), update: .error)
        }) {
            #expect(type == "Dog")
            #expect((underlying as? LiveObjectsError)?.code == .duplicatePrimaryKey)
        } else {
            Issue.record("a duplicate was saved")
        }
        #expect(try await dogs.count() == 2)
        // Dates with a strategy.
        let stamped = try await ObjectRepository<CodedEverything>.open(
            .init(
                identifier: "repo-dates-\(UUID())",
                objectTypes: [CodedEverything.self, CodedNode.self, CodedPlace.self]))
        let items = try await stamped.save(
            json: Data(#"{"id": 1, "date": "2024-02-29T12:00:00Z"}"#.utf8), dateDecodingStrategy: .iso8601)
        #expect(items.first?.date == Date(timeIntervalSince1970: 1_709_208_000))
    }

    // MARK: Errors

    @Test func errorsAreTypedAndChangeNothing() async throws {
        let dogs = try await dogs()
        try await dogs.save(dog(1, "Rex"))

        // Insert-only over an existing key.
        if case .insertFailed(_, let underlying)? = await failure({ () throws(RepositoryError) in
            try await dogs.save(dog(1, "Other"), update: .error)
        }) {
            #expect((underlying as? LiveObjectsError)?.code == .duplicatePrimaryKey)
        } else {
            Issue.record("duplicate accepted")
        }
        #expect(try await dogs.find(primaryKey: 1)?.name == "Rex")

        // JSON without the primary key; a link to a key that does not exist.
        if case .missingRequiredData(let type, let property, _)? = await failure({ () throws(RepositoryError) in
            try await dogs.save(json: Data(#"{"name": "Nobody"}"#.utf8))
        }) {
            #expect(type == "Dog" && property == "id")
        } else {
            Issue.record("saved without a primary key")
        }
        if case .missingRequiredData(let type, _, let underlying)? = await failure({ () throws(RepositoryError) in
            try await dogs.save(json: Data(#"{"id": 5, "owner": 99}"#.utf8))
        }) {
            #expect(type == "Person" && (underlying as? LiveObjectsError)?.primaryKey == .int(99))
        } else {
            Issue.record("saved a link to nothing")
        }
        // Malformed JSON and a wrong type.
        if case .insertFailed(_, let underlying)? = await failure({ () throws(RepositoryError) in
            try await dogs.save(json: Data("{".utf8))
        }) {
            #expect((underlying as? LiveObjectsError)?.code == .corruptFile)
        } else {
            Issue.record("saved malformed JSON")
        }
        if case .insertFailed(_, let underlying)? = await failure({ () throws(RepositoryError) in
            try await dogs.save(json: Data(#"{"id": 6, "age": "old"}"#.utf8))
        }) {
            let error = underlying as? LiveObjectsError
            #expect(error?.code == .typeMismatch && error?.property == "age")
        } else {
            Issue.record("saved a wrong type")
        }
        #expect(try await dogs.count() == 1)

        // Bad queries.
        if case .searchFailed(let type, let underlying)? = await failure({ () throws(RepositoryError) in
            try await dogs.find(where: "age >>> 3")
        }) {
            #expect(type == "Dog" && (underlying as? LiveObjectsError)?.code == .invalidQuery)
        } else {
            Issue.record("bad predicate accepted")
        }
        if case .searchFailed(_, let underlying)? = await failure({ () throws(RepositoryError) in
            try await dogs.findAll(sortedBy: [SortField("colour")])
        }) {
            #expect((underlying as? LiveObjectsError)?.code == .unknownProperty)
        } else {
            Issue.record("unknown sort key accepted")
        }
        if case .searchFailed(_, let underlying)? = await failure({ () throws(RepositoryError) in
            try await dogs.find(primaryKey: "one")
        }) {
            #expect((underlying as? LiveObjectsError)?.code == .typeMismatch)
        } else {
            Issue.record("a key of the wrong type was accepted")
        }
        await #expect(throws: RepositoryError.self) { try await dogs.delete(where: "name ==") }
        #expect(try await dogs.count() == 1)
    }

    @Test func deleteDeniedByARule() async throws {
        let clubs = try await ObjectRepository<DogClub>.open(
            .init(identifier: "repo-clubs-\(UUID())", objectTypes: petModelTypes))
        try await clubs.save(json: Data(#"{"name": "Barkers", "president": {"id": 1, "name": "Ann"}}"#.utf8))
        let people = ObjectRepository<Person>(realm: clubs.realm)
        if case .deleteFailed(let type, let underlying)? = await failure({ () throws(RepositoryError) in
            try await people.delete(primaryKey: 1)
        }) {
            #expect(type == "Person" && (underlying as? LiveObjectsError)?.code == .deleteDenied)
        } else {
            Issue.record("deleted a club's president")
        }
        #expect(try await people.count() == 1)
    }

    @Test func openFailures() async throws {
        let identifier = "repo-open-\(UUID())"
        let realm = try await Realm.open(.init(identifier: identifier, objectTypes: petModelTypes))
        if case .openFailed(let underlying)? = await failure({ () throws(RepositoryError) in
            try await ObjectRepository<Dog>.open(.init(identifier: identifier, objectTypes: [CodedNode.self]))
        }) {
            #expect((underlying as? LiveObjectsError)?.code == .schemaMismatch)
        } else {
            Issue.record("opened with another schema")
        }
        if case .openFailed(let underlying)? = await failure({ () throws(RepositoryError) in
            try await ObjectRepository<CodedNode>.open(.init(identifier: identifier, objectTypes: petModelTypes))
        }) {
            #expect((underlying as? LiveObjectsError)?.code == .unknownType)
        } else {
            Issue.record("opened a repository of a type the realm does not hold")
        }
        withExtendedLifetime(realm) {}
    }

    // MARK: Completion handlers

    @Test func completionHandlerForms() async throws {
        let teams = try #require(try await StoreKind.realm.make() as? RealmTeamStore)
        let saved = await callback { teams.save(Team(id: 1, name: "Owls"), completion: $0) }
        #expect((try? saved.get()) != nil)
        let found = await callback { teams.find(primaryKey: 1, completion: $0) }
        #expect(try found.get()?.name == "Owls")
        let all = await callback { teams.findAll(completion: $0) }
        #expect(try all.get().map(\.id) == [1])
        let matching = await callback { teams.find(where: "name == %@", arguments: ["Owls"], completion: $0) }
        #expect(try matching.get().count == 1)
        let fromJSON = await callback { teams.save(json: Data(#"{"id": 2, "name": "Otters"}"#.utf8), completion: $0) }
        #expect(try fromJSON.get().map(\.name) == ["Otters"])
        let counted = await callback {
            teams.perform({ (teams) throws(RepositoryError) in try await teams.count() }, completion: $0)
        }
        #expect(try counted.get() == 2)

        // Failures arrive as typed results.
        let missing = await callback { teams.save(Team(id: 3, name: ""), completion: $0) }
        guard case .failure(.missingRequiredData(_, "name", _)) = missing else {
            Issue.record("expected missingRequiredData, got \(missing)")
            return
        }
        let badQuery = await callback { teams.find(where: "name ==", completion: $0) }
        guard case .failure(.searchFailed) = badQuery else {
            Issue.record("expected searchFailed, got \(badQuery)")
            return
        }
        let deleted = await callback { teams.delete(primaryKey: 2, completion: $0) }
        #expect(try deleted.get())
        let deletedMatching = await callback { teams.delete(where: "id == %@", arguments: [1], completion: $0) }
        #expect(try deletedMatching.get() == 1)
        #expect(try await teams.count() == 0)
    }
}
