import Foundation
import LiveObjects

/// `dal`: a data-access layer for teams and players. The app codes against a protocol of its
/// own, a `Repository` bridges it to the storage model, and the storage can be swapped.
enum DALWalkthrough: Walkthrough {
    static let name = "dal"
    static let summary =
        "a Team / Player data-access layer: CRUD protocol, bridge types, typed errors, swapping the storage"

    // MARK: The app's model: plain values, no storage types

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

    /// A rule of the app that a team broke; the stores report it as `insertFailed`.
    struct RosterRule: Error, CustomStringConvertible {
        var description: String
    }

    /// What the app wants of the data, whichever store keeps it: a team needs a name, and
    /// shirt numbers go from 1 to 99.
    static func validate(_ team: Team) throws(RepositoryError) {
        guard !team.name.isEmpty else {
            throw .missingRequiredData(objectType: "Team", property: "name", underlying: nil)
        }
        for player in team.players where !(1...99).contains(player.number) {
            throw .insertFailed(
                objectType: "Player",
                underlying: RosterRule(description: "\(player.name)'s number must be 1 to 99, not \(player.number)"))
        }
    }

    // MARK: What the app codes against

    /// The CRUD helpers of the app. Every one throws only `RepositoryError`, whatever the store.
    protocol TeamStore: Sendable {
        /// Adds a new team; a team with the same id is an `insertFailed` error.
        func add(_ team: Team) async throws(RepositoryError)
        /// Adds a team or replaces the one with the same id (its players too).
        func save(_ team: Team) async throws(RepositoryError)
        /// Adds the teams of a JSON object or array, all or none, and returns them. The JSON is
        /// read by the storage's rules: a missing key takes the stored default, a missing `id`
        /// is `missingRequiredData`, a taken id or malformed JSON is `insertFailed`.
        func importTeams(json: Data) async throws(RepositoryError) -> [Team]
        /// The team with an id, or nil.
        func team(id: Int) async throws(RepositoryError) -> Team?
        /// The teams whose name starts with a prefix, by name.
        func teams(namedLike prefix: String) async throws(RepositoryError) -> [Team]
        /// The teams with a player wearing a number, by id.
        func teams(withPlayerNumbered number: Int) async throws(RepositoryError) -> [Team]
        /// Every team, by id.
        func allTeams() async throws(RepositoryError) -> [Team]
        /// Removes a team and its players; false when there was none.
        func removeTeam(id: Int) async throws(RepositoryError) -> Bool
    }

    // MARK: The storage model

    final class TeamRecord: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var players: List<PlayerRecord>
    }

    /// Embedded: a player lives inside its team's record and goes when the team goes.
    final class PlayerRecord: EmbeddedObject {
        @Persisted var id = 0
        @Persisted var name = ""
        @Persisted var number = 0
    }

    // MARK: The realm-backed store

    /// A `Repository` of `TeamRecord` whose items are `Team` values: the two bridge functions
    /// are all it writes; `save`, `find`, `delete` and the rest come with the protocol.
    struct RealmTeamStore: TeamStore, Repository {
        let realm: Realm

        /// Storage → app: `record` is a detached copy, read freely.
        func item(from record: TeamRecord) -> Team {
            Team(
                id: record.id, name: record.name,
                players: record.players.map { Player(id: $0.id, name: $0.name, number: $0.number) })
        }

        /// App → storage: a new unmanaged record, after the app's rules.
        func model(from team: Team) throws(RepositoryError) -> TeamRecord {
            try validate(team)
            let record = TeamRecord()
            record.id = team.id
            record.name = team.name
            for player in team.players {
                let stored = PlayerRecord()
                stored.id = player.id
                stored.name = player.name
                stored.number = player.number
                record.players.append(stored)
            }
            return record
        }

        func add(_ team: Team) async throws(RepositoryError) { try await save(team, update: .error) }
        func save(_ team: Team) async throws(RepositoryError) { try await save(team, update: .modified) }
        func importTeams(json: Data) async throws(RepositoryError) -> [Team] {
            try await save(json: json, update: .error)
        }
        func team(id: Int) async throws(RepositoryError) -> Team? { try await find(primaryKey: id) }
        func teams(namedLike prefix: String) async throws(RepositoryError) -> [Team] {
            try await find(where: "name BEGINSWITH %@", prefix, sortedBy: [SortField("name")])
        }
        func teams(withPlayerNumbered number: Int) async throws(RepositoryError) -> [Team] {
            try await find(where: "ANY players.number == %@", number, sortedBy: [SortField("id")])
        }
        func allTeams() async throws(RepositoryError) -> [Team] { try await findAll(sortedBy: [SortField("id")]) }
        func removeTeam(id: Int) async throws(RepositoryError) -> Bool { try await delete(primaryKey: id) }
    }

    // MARK: The in-memory store

    /// The same helpers over a dictionary, as an app's tests or previews would use.
    actor InMemoryTeamStore: TeamStore {
        private var teams: [Int: Team] = [:]

        func add(_ team: Team) throws(RepositoryError) {
            try validate(team)
            guard teams[team.id] == nil else { throw Self.taken(team.id) }
            teams[team.id] = team
        }

        func save(_ team: Team) throws(RepositoryError) {
            try validate(team)
            teams[team.id] = team
        }

        func importTeams(json: Data) throws(RepositoryError) -> [Team] {
            let decoded: [Team]
            do {
                let isArray = json.first(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) == UInt8(ascii: "[")
                decoded =
                    isArray
                    ? try JSONDecoder().decode([TeamJSON].self, from: json).map(\.team)
                    : [try JSONDecoder().decode(TeamJSON.self, from: json).team]
            } catch DecodingError.keyNotFound(let key, _) {
                throw .missingRequiredData(objectType: "Team", property: key.stringValue, underlying: nil)
            } catch {
                throw .insertFailed(objectType: "Team", underlying: error)
            }
            var ids = Set(teams.keys)
            for team in decoded where !ids.insert(team.id).inserted { throw Self.taken(team.id) }
            for team in decoded { teams[team.id] = team }
            return decoded
        }

        func team(id: Int) -> Team? { teams[id] }

        func teams(namedLike prefix: String) -> [Team] {
            teams.values.filter { $0.name.hasPrefix(prefix) }.sorted { $0.name < $1.name }
        }

        func teams(withPlayerNumbered number: Int) -> [Team] {
            allTeams().filter { $0.players.contains { $0.number == number } }
        }

        func allTeams() -> [Team] { teams.values.sorted { $0.id < $1.id } }

        func removeTeam(id: Int) -> Bool { teams.removeValue(forKey: id) != nil }

        private static func taken(_ id: Int) -> RepositoryError {
            .insertFailed(
                objectType: "Team",
                underlying: LiveObjectsError(
                    .duplicatePrimaryKey, "a team with this id already exists", objectType: "Team",
                    primaryKey: .int(Int64(id))))
        }

        /// A team as JSON, with the storage model's defaults for missing keys (except the id).
        private struct TeamJSON: Decodable {
            struct PlayerJSON: Decodable {
                var id: Int?
                var name: String?
                var number: Int?
            }
            var id: Int
            var name: String?
            var players: [PlayerJSON]?

            var team: Team {
                Team(
                    id: id, name: name ?? "",
                    players: (players ?? []).map { Player(id: $0.id ?? 0, name: $0.name ?? "", number: $0.number ?? 0) }
                )
            }
        }
    }

    // MARK: The app

    /// What the app tells its user when the store refuses: a switch over `RepositoryError`,
    /// the same for every store.
    static func message(for error: RepositoryError) -> String {
        switch error {
        case .missingRequiredData(_, let property?, _):
            "Please fill in the \(property)."
        case .missingRequiredData:
            "Something required is missing."
        case .insertFailed(_, let underlying as LiveObjectsError) where underlying.code == .duplicatePrimaryKey:
            "That id is taken."
        case .insertFailed(_, let rule as RosterRule):
            "Not allowed: \(rule)."
        case .insertFailed:
            "The data could not be read or saved."
        case .searchFailed:
            "The search could not run."
        case .deleteFailed:
            "That team cannot be removed."
        case .openFailed:
            "The team list could not be opened."
        }
    }

    /// What the app saw while running, to compare between stores.
    struct Transcript: Equatable, Sendable {
        var owls: Team?
        var fourth: Team?
        var namedO: [String] = []
        var wearingNine: [String] = []
        var otters: Team?
        var removed = false
        /// Starts true, so that only the second removal's own answer can make it false.
        var removedAgain = true
        var remaining: [String] = []
    }

    static let appCodeText = """
        func appCode(_ store: any TeamStore) async throws(RepositoryError) -> Transcript {
            try await store.add(Team(id: 1, name: "Owls", players: [Player(id: 10, name: "Ann", number: 9),
                                                                    Player(id: 11, name: "Bo", number: 4)]))
            try await store.add(Team(id: 2, name: "Otters", players: [Player(id: 20, name: "Cy", number: 9)]))
            try await store.add(Team(id: 3, name: "Bears"))
            var seen = Transcript()
            seen.owls = try await store.team(id: 1)
            seen.fourth = try await store.team(id: 4)
            seen.namedO = try await store.teams(namedLike: "O").map(\\.name)
            seen.wearingNine = try await store.teams(withPlayerNumbered: 9).map(\\.name)
            if var otters = try await store.team(id: 2) {          // a value: change it, then save it
                otters.name = "Otters FC"
                otters.players.append(Player(id: 21, name: "Dee", number: 5))
                try await store.save(otters)
            }
            seen.otters = try await store.team(id: 2)
            seen.removed = try await store.removeTeam(id: 3)
            seen.removedAgain = try await store.removeTeam(id: 3)
            seen.remaining = try await store.allTeams().map(\\.name)
            return seen
        }
        """

    /// The app's code: it knows `TeamStore`, `Team` and `Player`, nothing of the storage.
    static func appCode(_ store: any TeamStore) async throws(RepositoryError) -> Transcript {
        try await store.add(
            Team(
                id: 1, name: "Owls",
                players: [Player(id: 10, name: "Ann", number: 9), Player(id: 11, name: "Bo", number: 4)]))
        try await store.add(Team(id: 2, name: "Otters", players: [Player(id: 20, name: "Cy", number: 9)]))
        try await store.add(Team(id: 3, name: "Bears"))
        var seen = Transcript()
        seen.owls = try await store.team(id: 1)
        seen.fourth = try await store.team(id: 4)
        seen.namedO = try await store.teams(namedLike: "O").map(\.name)
        seen.wearingNine = try await store.teams(withPlayerNumbered: 9).map(\.name)
        if var otters = try await store.team(id: 2) {
            otters.name = "Otters FC"
            otters.players.append(Player(id: 21, name: "Dee", number: 5))
            try await store.save(otters)
        }
        seen.otters = try await store.team(id: 2)
        seen.removed = try await store.removeTeam(id: 3)
        seen.removedAgain = try await store.removeTeam(id: 3)
        seen.remaining = try await store.allTeams().map(\.name)
        return seen
    }

    /// One attempt the app makes that the store should refuse.
    struct Attempt: Sendable {
        var text: String
        var run: @Sendable (any TeamStore) async throws(RepositoryError) -> Void
        var expected: String
    }

    static let attempts: [Attempt] = [
        Attempt(
            text: "add a second team with id 1",
            run: { store throws(RepositoryError) in
                try await store.add(Team(id: 1, name: "Owls again"))
            }, expected: "That id is taken."),
        Attempt(
            text: "save a team without a name",
            run: { store throws(RepositoryError) in
                try await store.save(Team(id: 7, name: ""))
            }, expected: "Please fill in the name."),
        Attempt(
            text: "save a team whose player wears 120",
            run: { store throws(RepositoryError) in
                try await store.save(Team(id: 7, name: "Wolves", players: [Player(id: 70, name: "Flo", number: 120)]))
            }, expected: "Not allowed: Flo's number must be 1 to 99, not 120."),
        Attempt(
            text: #"import {"name": "Nobody"} (no id)"#,
            run: { store throws(RepositoryError) in
                _ = try await store.importTeams(json: Data(#"{"name": "Nobody"}"#.utf8))
            }, expected: "Please fill in the id."),
        Attempt(
            text: #"import [{"id": 8, "name": "Lynx"}, {"id": 1, "name": "Owls"}] (id 1 is taken)"#,
            run: { store throws(RepositoryError) in
                _ = try await store.importTeams(
                    json: Data(#"[{"id": 8, "name": "Lynx"}, {"id": 1, "name": "Owls"}]"#.utf8))
            }, expected: "That id is taken."),
        Attempt(
            text: #"import {"id": 9, "name": 42} (a number for a name)"#,
            run: { store throws(RepositoryError) in
                _ = try await store.importTeams(json: Data(#"{"id": 9, "name": 42}"#.utf8))
            }, expected: "The data could not be read or saved."),
        Attempt(
            text: #"import [{"id": 9, (malformed JSON)"#,
            run: { store throws(RepositoryError) in
                _ = try await store.importTeams(json: Data(#"[{"id": 9,"#.utf8))
            }, expected: "The data could not be read or saved."),
    ]

    // MARK: The walkthrough

    /// The error an operation threw, or nil when it succeeded.
    static func failure(_ body: () async throws(RepositoryError) -> Void) async -> RepositoryError? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    static let configuration = Realm.Configuration(
        identifier: "playground.dal", objectTypes: [TeamRecord.self, PlayerRecord.self])

    static func run(_ narrator: Narrator) async throws {
        declare(narrator)
        let realmStore = try await open(narrator)
        try bridge(narrator, realmStore)
        let memoryStore = InMemoryTeamStore()
        let seen = try await crud(narrator, realmStore)
        try await swap(narrator, memoryStore, realmStore, fromRealm: seen)
        try await importJSON(narrator, [("realm", realmStore), ("in-memory", memoryStore)])
        try await typedErrors(narrator, [("realm", realmStore), ("in-memory", memoryStore)])
        try await completionHandlers(narrator, realmStore)
    }

    static func declare(_ narrator: Narrator) {
        narrator.step("Two models: the app's plain values, and the storage's objects.")
        narrator.code(
            """
            struct Team: Sendable, Hashable { var id: Int; var name: String; var players: [Player] = [] }
            struct Player: Sendable, Hashable { var id: Int; var name: String; var number: Int }

            final class TeamRecord: Object {
                @Persisted(primaryKey: true) var id = 0
                @Persisted var name = ""
                @Persisted var players: List<PlayerRecord>
            }
            final class PlayerRecord: EmbeddedObject {     // lives inside its team's record
                @Persisted var id = 0
                @Persisted var name = ""
                @Persisted var number = 0
            }
            """)
        narrator.say("The app only ever sees Team and Player: Sendable values it can pass anywhere and change freely.")
        narrator.say("The app codes against a protocol of CRUD helpers, each throwing only RepositoryError:")
        narrator.code(
            """
            protocol TeamStore: Sendable {
                func add(_ team: Team) async throws(RepositoryError)           // insert only
                func save(_ team: Team) async throws(RepositoryError)          // insert or replace
                func importTeams(json: Data) async throws(RepositoryError) -> [Team]
                func team(id: Int) async throws(RepositoryError) -> Team?
                func teams(namedLike prefix: String) async throws(RepositoryError) -> [Team]
                func teams(withPlayerNumbered number: Int) async throws(RepositoryError) -> [Team]
                func allTeams() async throws(RepositoryError) -> [Team]
                func removeTeam(id: Int) async throws(RepositoryError) -> Bool
            }
            """)
    }

    static func open(_ narrator: Narrator) async throws -> RealmTeamStore {
        narrator.step("Open the storage for the realm-backed store.")
        narrator.code(
            """
            let configuration = Realm.Configuration(identifier: "playground.dal",
                                                    objectTypes: [TeamRecord.self, PlayerRecord.self])
            let store = RealmTeamStore(realm: try await RealmTeamStore.openRealm(configuration))
            """)
        let store = RealmTeamStore(realm: try await RealmTeamStore.openRealm(configuration))
        let schema = store.realm.schema
        let team = try narrator.unwrap(schema["TeamRecord"], "the realm holds TeamRecord")
        for property in team.properties { narrator.say("  TeamRecord.\(property)") }
        let player = try narrator.unwrap(schema["PlayerRecord"], "and PlayerRecord")
        try narrator.check(player.isEmbedded, "PlayerRecord is embedded")

        narrator.say("Opening can fail too, as a RepositoryError: here the same identifier with other types.")
        let error = await failure { () throws(RepositoryError) in
            _ = try await RealmTeamStore.openRealm(.init(identifier: "playground.dal", objectTypes: [Dummy.self]))
        }
        guard case .openFailed(let underlying)? = error else {
            throw CheckFailure(
                message: "opening with another schema is openFailed (got \(error.map { "\($0)" } ?? "no error"))")
        }
        narrator.say("  \(underlying)")
        try narrator.expect(
            message(for: .openFailed(underlying: underlying)), "The team list could not be opened.",
            "openFailed, which the app tells as “The team list could not be opened.”")
        return store
    }

    /// A type that is not in the walkthrough's realm, to make opening it fail.
    final class Dummy: Object {
        @Persisted var value = 0
    }

    static func bridge(_ narrator: Narrator, _ store: RealmTeamStore) throws {
        narrator.step("The realm-backed store is a Repository with two bridge functions.")
        narrator.code(
            """
            struct RealmTeamStore: TeamStore, Repository {      // Model = TeamRecord, Item = Team
                let realm: Realm
                func item(from record: TeamRecord) -> Team {     // storage → app
                    Team(id: record.id, name: record.name,
                         players: record.players.map { Player(id: $0.id, name: $0.name, number: $0.number) })
                }
                func model(from team: Team) throws(RepositoryError) -> TeamRecord {   // app → storage
                    try validate(team)                           // a name, numbers 1 to 99
                    let record = TeamRecord()
                    record.id = team.id; record.name = team.name
                    for player in team.players { record.players.append(PlayerRecord(...)) }
                    return record
                }
                // Each helper is one line over what Repository provides:
                func add(_ team: Team) async throws(RepositoryError) { try await save(team, update: .error) }
                func save(_ team: Team) async throws(RepositoryError) { try await save(team, update: .modified) }
                func importTeams(json: Data) async throws(RepositoryError) -> [Team] {
                    try await save(json: json, update: .error)
                }
                func team(id: Int) async throws(RepositoryError) -> Team? { try await find(primaryKey: id) }
                func teams(namedLike prefix: String) async throws(RepositoryError) -> [Team] {
                    try await find(where: "name BEGINSWITH %@", prefix, sortedBy: [SortField("name")])
                }
                func teams(withPlayerNumbered number: Int) async throws(RepositoryError) -> [Team] {
                    try await find(where: "ANY players.number == %@", number, sortedBy: [SortField("id")])
                }
                func allTeams() async throws(RepositoryError) -> [Team] { try await findAll(sortedBy: [SortField("id")]) }
                func removeTeam(id: Int) async throws(RepositoryError) -> Bool { try await delete(primaryKey: id) }
            }
            """)
        let team = Team(id: 5, name: "Hawks", players: [Player(id: 50, name: "Gus", number: 23)])
        let record = try store.model(from: team)
        narrator.say(
            "model(from:) turns Team 5 into an unmanaged TeamRecord with \(record.players.count) PlayerRecord;"
                + " item(from:) turns it back.")
        try narrator.check(!record.isManaged, "the record is unmanaged: nothing is stored until a save")
        try narrator.expect(store.item(from: record), team, "the round trip gives the same Team")
    }

    static func crud(_ narrator: Narrator, _ store: RealmTeamStore) async throws -> Transcript {
        narrator.step("The app's code, run against the realm-backed store.")
        narrator.code(appCodeText)
        let seen = try await appCode(store)
        describe(narrator, seen)
        try narrator.expect(
            seen.owls,
            Team(
                id: 1, name: "Owls",
                players: [Player(id: 10, name: "Ann", number: 9), Player(id: 11, name: "Bo", number: 4)]),
            "team(id: 1) is the Owls with Ann and Bo, in order")
        try narrator.expect(seen.fourth, nil, "team(id: 4) is nil: there is no such team")
        try narrator.expect(seen.namedO, ["Otters", "Owls"], "teams(namedLike: \"O\") finds Otters and Owls, by name")
        try narrator.expect(
            seen.wearingNine, ["Owls", "Otters"], "teams(withPlayerNumbered: 9) finds Owls and Otters, by id")
        try narrator.expect(
            seen.otters,
            Team(
                id: 2, name: "Otters FC",
                players: [Player(id: 20, name: "Cy", number: 9), Player(id: 21, name: "Dee", number: 5)]),
            "save replaced team 2: new name, Dee added")
        try narrator.check(seen.removed && !seen.removedAgain, "removeTeam(id: 3) is true, then false")
        try narrator.expect(seen.remaining, ["Owls", "Otters FC"], "allTeams() is Owls, Otters FC")

        let stored = try await store.realm.read { realm in
            (realm.objects(TeamRecord.self).count, realm.objects(TeamRecord.self).map { $0.players.count })
        }
        narrator.say("Underneath, the realm holds \(stored.0) TeamRecords with \(stored.1) embedded players.")
        try narrator.check(
            stored.0 == 2 && stored.1.sorted() == [2, 2],
            "the records match: replacing Otters replaced its players, removing Bears left nothing behind")
        return seen
    }

    static func swap(
        _ narrator: Narrator, _ memory: InMemoryTeamStore, _ realm: RealmTeamStore, fromRealm: Transcript
    ) async throws {
        narrator.step("Swap the storage: the same appCode against an in-memory store.")
        narrator.code(
            """
            actor InMemoryTeamStore: TeamStore {
                private var teams: [Int: Team] = [:]
                func add(_ team: Team) throws(RepositoryError) {
                    try validate(team)
                    guard teams[team.id] == nil else { throw .insertFailed(objectType: "Team", underlying: ...) }
                    teams[team.id] = team
                }
                func teams(namedLike prefix: String) -> [Team] {
                    teams.values.filter { $0.name.hasPrefix(prefix) }.sorted { $0.name < $1.name }
                }
                ...                                       // the other helpers, over the dictionary
            }
            let store: any TeamStore = InMemoryTeamStore()  // instead of RealmTeamStore(...)
            """)
        let fromMemory = try await appCode(memory)
        describe(narrator, fromMemory)
        try narrator.expect(fromMemory, fromRealm, "the in-memory store gives exactly what the realm-backed store gave")
        let (memoryTeams, realmTeams) = (await memory.allTeams(), try await realm.allTeams())
        try narrator.expect(memoryTeams, realmTeams, "and both hold the same teams, players included")
    }

    static func describe(_ narrator: Narrator, _ seen: Transcript) {
        func show(_ team: Team?) -> String {
            guard let team else { return "nil" }
            let players = team.players.map { "\($0.name) #\($0.number)" }.joined(separator: ", ")
            return "\(team.name) [\(players)]"
        }
        narrator.say(
            """
            team(id: 1)          → \(show(seen.owls))
            team(id: 4)          → \(show(seen.fourth))
            namedLike "O"        → \(seen.namedO)
            withPlayerNumbered 9 → \(seen.wearingNine)
            after save, team 2   → \(show(seen.otters))
            removeTeam(id: 3)    → \(seen.removed), again → \(seen.removedAgain)
            allTeams()           → \(seen.remaining)
            """)
    }

    static func importJSON(_ narrator: Narrator, _ stores: [(String, any TeamStore)]) async throws {
        narrator.step("Save from JSON data: nested players, missing keys take the stored defaults.")
        let json = Data(
            #"""
            [{"id": 3, "name": "Bears", "players": [{"id": 30, "name": "Eve", "number": 1}]},
             {"id": 4, "name": "Wolves"}]
            """#.utf8)
        narrator.code(
            """
            let json = Data(#\"""
                [{"id": 3, "name": "Bears", "players": [{"id": 30, "name": "Eve", "number": 1}]},
                 {"id": 4, "name": "Wolves"}]
                \"""#.utf8)
            let imported = try await store.importTeams(json: json)
            """)
        narrator.say(
            "The realm-backed store hands it to Repository.save(json:update: .error); the in-memory one to JSONDecoder."
        )
        var results: [[Team]] = []
        for (label, store) in stores {
            let imported = try await store.importTeams(json: json)
            let all = try await store.allTeams()
            narrator.say("\(label): imported \(imported.map(\.name)); allTeams() → \(all.map(\.name))")
            try narrator.expect(
                imported,
                [
                    Team(id: 3, name: "Bears", players: [Player(id: 30, name: "Eve", number: 1)]),
                    Team(id: 4, name: "Wolves"),
                ],
                "\(label): the import returns Bears with Eve, and Wolves with no players")
            try narrator.expect(all.map(\.id), [1, 2, 3, 4], "\(label): the store now holds teams 1 to 4")
            results.append(all)
        }
        try narrator.check(results.count == 2 && results[0] == results[1], "both stores hold the same teams")
    }

    static func typedErrors(_ narrator: Narrator, _ stores: [(String, any TeamStore)]) async throws {
        narrator.step("Typed errors: the app switches on RepositoryError, whichever store refused.")
        narrator.code(
            """
            func message(for error: RepositoryError) -> String {
                switch error {
                case .missingRequiredData(_, let property?, _): "Please fill in the \\(property)."
                case .missingRequiredData: "Something required is missing."
                case .insertFailed(_, let underlying as LiveObjectsError) where underlying.code == .duplicatePrimaryKey:
                    "That id is taken."
                case .insertFailed(_, let rule as RosterRule): "Not allowed: \\(rule)."
                case .insertFailed: "The data could not be read or saved."
                case .searchFailed: "The search could not run."
                case .deleteFailed: "That team cannot be removed."
                case .openFailed: "The team list could not be opened."
                }
            }
            """)
        var before: [[Team]] = []
        for (_, store) in stores { before.append(try await store.allTeams()) }
        for attempt in attempts {
            narrator.say("The app tries to \(attempt.text):")
            for (label, store) in stores {
                let refused = await failure { () throws(RepositoryError) in try await attempt.run(store) }
                guard let error = refused else {
                    throw CheckFailure(message: "\(label): \(attempt.text) fails (it succeeded)")
                }
                let text = message(for: error)
                narrator.say("  \(label): \(error)")
                try narrator.expect(text, attempt.expected, "\(label): “\(text)”")
            }
        }
        var after: [[Team]] = []
        for (_, store) in stores { after.append(try await store.allTeams()) }
        try narrator.expect(
            after, before, "every refused attempt changed nothing, in either store (Lynx was not imported)")

        narrator.say("Beneath the protocol, the repository reports a bad query as searchFailed:")
        guard let realmStore = stores.first?.1 as? RealmTeamStore else {
            throw CheckFailure(message: "the first store is the realm-backed one")
        }
        let refused = await failure { () throws(RepositoryError) in
            _ = try await realmStore.find(where: "players.number >>> 3")
        }
        guard let error = refused, case .searchFailed(_, let underlying as LiveObjectsError) = error,
            underlying.code == .invalidQuery
        else {
            throw CheckFailure(
                message:
                    "a malformed predicate is searchFailed with invalidQuery (got \(refused.map { "\($0)" } ?? "no error"))"
            )
        }
        narrator.say("  \(error)")
        try narrator.expect(
            message(for: error), "The search could not run.",
            "searchFailed with an invalidQuery error: “The search could not run.”")
    }

    static func completionHandlers(_ narrator: Narrator, _ store: RealmTeamStore) async throws {
        narrator.step("Code without async calls the completion-handler forms, which report a Result once.")
        narrator.code(
            """
            store.findAll(sortedBy: [SortField("name")]) { result in
                switch result {
                case .success(let teams): show(teams)
                case .failure(let error): show(message(for: error))
                }
            }
            store.save(Team(id: 9, name: ""), completion: { result in ... })
            store.perform({ store throws(RepositoryError) in try await store.teams(withPlayerNumbered: 9) }) { ... }
            """)
        let all = await withCheckedContinuation { continuation in
            store.findAll(sortedBy: [SortField("name")]) { continuation.resume(returning: $0) }
        }
        narrator.say("findAll called back with \(all.map { $0.map(\.name) })")
        try narrator.expect(
            try all.get().map(\.name), ["Bears", "Otters FC", "Owls", "Wolves"], "findAll reported every team, by name")

        let saved = await withCheckedContinuation { continuation in
            store.save(Team(id: 9, name: ""), completion: { continuation.resume(returning: $0) })
        }
        guard case .failure(let error) = saved else {
            throw CheckFailure(message: "saving a team without a name calls back with a failure (got \(saved))")
        }
        try narrator.expect(
            message(for: error), "Please fill in the name.", "save called back with .failure(.missingRequiredData)")

        let wearingNine = await withCheckedContinuation { continuation in
            store.perform({ store throws(RepositoryError) in try await store.teams(withPlayerNumbered: 9) }) {
                continuation.resume(returning: $0)
            }
        }
        try narrator.expect(
            try wearingNine.get().map(\.name), ["Owls", "Otters FC"],
            "perform ran one of the app's own helpers and called back with its result")
    }
}
