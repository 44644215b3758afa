import Foundation
import LiveObjects
import Synchronization
import Testing

// The Realm code of the product's source documents (the models, a realm manager, a data-access
// layer, an offline-first queue), ported as a Realm user ports it with the Coming from Realm
// article. Every line that differs from the Realm original says so with `// Realm:`; the kinds
// of change are counted at the end of the file.

// MARK: Models

private enum Positions: String, PersistableEnum {  // Realm: PersistableEnum too
    case pitcher, catcher, outfielder
}

private final class PlayerEntity: Object {
    @Persisted(primaryKey: true) var id = UUID().uuidString
    @Persisted(indexed: true) var name = ""
    @Persisted var position: Positions = .pitcher
    @Persisted var team: TeamEntity?
}

private final class TeamEntity: Object {
    @Persisted(primaryKey: true) var id = UUID().uuidString
    @Persisted var name = ""
    @Persisted(originProperty: "team") var players: LinkingObjects<PlayerEntity>
}

/// An offline-first note: a local id, the server's id once synced, and a flag for the queue.
private final class Note: Object {
    @Persisted(primaryKey: true) var localId = UUID().uuidString
    @Persisted var serverId: Int?
    @Persisted var text = ""
    @Persisted(indexed: true) var isSynced = false
    @Persisted var updatedAt = Date()
    var isEditing = false  // not persisted, as in Realm
}

// MARK: A realm manager: one realm per domain, CRUD off the caller's thread

private final class RealmManager: Sendable {
    let configuration: Realm.Configuration
    /// Kept open: an in-memory realm lives while it is open (as in Realm).
    private let opened: Realm

    // Realm: init(...) without async
    init(name: String, types: [Object.Type], version: UInt64) async throws {
        // Realm: Realm.Configuration(inMemoryIdentifier: name, schemaVersion: version, objectTypes: types)
        configuration = Realm.Configuration(identifier: name, objectTypes: types, schemaVersion: version)
        opened = try await Realm.open(configuration)  // Realm: try Realm(configuration: configuration)
    }

    // Realm: func realm() throws -> Realm { try Realm(configuration: configuration) }
    func realm() -> Realm { opened }

    /// Saves objects made by the caller, with or without update.
    // Realm: DispatchQueue.global().async { try realm.write { realm.add(objects, update: …) } }
    func save(_ objects: sending [Object], update: Bool) async throws {
        try await realm().write(adding: objects, update: update ? .modified : .error)
    }

    /// Saves objects from JSON.
    func save<T: Object>(_ type: T.Type, json: Data) async throws {
        let values = try JSONSerialization.jsonObject(with: json) as? [[String: any Sendable]] ?? []
        try await realm().write { realm in
            for value in values { try realm.create(type, value: value, update: .modified) }
        }
    }

    /// Everything of a type matching a filter, for another thread.
    // Realm: -> Results<T> (then .freeze() before handing it to another thread)
    func fetch<T: Object>(_ type: T.Type, filter: String) async throws -> FrozenResults<T> {
        try await realm().read { try $0.objects(type).filter(filter).freeze() }
    }
}

// MARK: A data-access layer: app structs, typed errors, storage behind a protocol

private struct PlayerModel: Equatable, Sendable {
    var id: String
    var name: String
    var position: Positions
}

private enum DataAccessError: Error, Equatable {
    case insert(String), search(String)
}

private protocol PlayerStore {
    func insert(_ player: PlayerModel) throws(DataAccessError)
    func find(id: String) -> PlayerModel?
    func findAll() -> [PlayerModel]
}

/// The synchronous store of the case study, on the main actor as a Realm app has it.
@MainActor
private final class RealmPlayerStore: @MainActor PlayerStore {  // Realm: PlayerStore (Swift 6: an isolated conformance)
    let realm: Realm
    // Realm: init(realm: Realm) with Realm(configuration:) made on the main thread
    init(realm: Realm) { self.realm = realm }

    func insert(_ player: PlayerModel) throws(DataAccessError) {
        do {
            // Realm: try realm.write { realm.create(PlayerEntity.self, value: [...], update: .modified) }
            try realm.access { realm in
                try realm.write { realm in
                    try realm.create(
                        PlayerEntity.self, value: ["id": player.id, "name": player.name, "position": player.position],
                        update: .modified)
                }
            }
        } catch {
            throw .insert(player.id)
        }
    }

    func find(id: String) -> PlayerModel? {
        // Realm: realm.object(ofType: PlayerEntity.self, forPrimaryKey: id).map(PlayerModel.init)
        realm.access { $0.object(ofType: PlayerEntity.self, forPrimaryKey: id).map(PlayerModel.init) }
    }

    func findAll() -> [PlayerModel] {
        realm.access { $0.objects(PlayerEntity.self).sorted(by: \.name).map(PlayerModel.init) }
    }
}

extension PlayerModel {
    fileprivate init(_ entity: PlayerEntity) {
        self.init(id: entity.id, name: entity.name, position: entity.position)
    }
}

// MARK: Offline first: local ids, unsynced changes queued in order

/// Sends unsynced notes in the order they changed, then marks them synced with the server's id.
private func drainQueue(_ realm: Realm, send: @Sendable (String) async -> Int) async throws -> Int {
    // Realm: realm.objects(Note.self).filter("isSynced == false").sorted(byKeyPath: "updatedAt")
    let pending = try await realm.read { realm in
        realm.objects(Note.self).where { !$0.isSynced }.sorted(by: \.updatedAt).map { ($0.localId, $0.text) }
    }
    for (localId, text) in pending {
        let serverId = await send(text)
        try await realm.write { realm in
            let note = realm.object(ofType: Note.self, forPrimaryKey: localId)
            note?.serverId = serverId
            note?.isSynced = true
        }
    }
    return pending.count
}

@Suite struct SourceDocumentPortTests {
    @Test func theRealmManagerSavesFetchesAndCopies() async throws {
        let manager = try await RealmManager(
            name: "pets-\(UUID())", types: [PlayerEntity.self, TeamEntity.self], version: 1)
        let mets = TeamEntity()
        mets.name = "Mets"
        let ann = PlayerEntity()
        ann.name = "Ann"
        ann.team = mets
        try await manager.save([ann], update: false)
        let json = Data(#"[{"id": "b", "name": "Bea", "position": "catcher"}]"#.utf8)
        try await manager.save(PlayerEntity.self, json: json)
        let catchers = try await manager.fetch(PlayerEntity.self, filter: "position == 'catcher'")
        #expect(catchers.map(\.name) == ["Bea"])
        let players = try await manager.fetch(PlayerEntity.self, filter: "team.name == 'Mets'")
        #expect(players.map(\.name) == ["Ann"] && players.first?.team?.players.count == 1)

        // Copying into another realm.
        let archive = try await RealmManager(
            name: "archive-\(UUID())", types: [PlayerEntity.self, TeamEntity.self], version: 1)
        let bea = try #require(catchers.first)
        // Realm: try archive.write { archive.create(PlayerEntity.self, value: bea) }
        try await archive.realm().write { try $0.create(PlayerEntity.self, value: bea) }
        #expect(try await archive.fetch(PlayerEntity.self, filter: "TRUEPREDICATE").map(\.position) == [.catcher])
    }

    @MainActor
    @Test func theDataAccessLayerIsSynchronousOnTheMainActor() async throws {
        let realm = try await Realm.open(
            .init(identifier: "players-\(UUID())", objectTypes: [PlayerEntity.self, TeamEntity.self]),
            on: MainActor.shared)  // Realm: Realm(configuration:) on the main thread
        let store: any PlayerStore = RealmPlayerStore(realm: realm)
        try store.insert(PlayerModel(id: "1", name: "Zoe", position: .outfielder))
        try store.insert(PlayerModel(id: "2", name: "Ada", position: .pitcher))
        #expect(store.find(id: "1")?.position == .outfielder)
        #expect(store.findAll().map(\.name) == ["Ada", "Zoe"])
        #expect(store.find(id: "3") == nil)
    }

    @Test func theOfflineQueueSendsUnsyncedNotesInOrder() async throws {
        let realm = try await Realm.open(.init(identifier: "notes-\(UUID())", objectTypes: [Note.self]))
        for (index, text) in ["first", "second", "third"].enumerated() {
            // Realm: try realm.write { realm.add(note) } with the note made before
            let note = Note()
            note.text = text
            note.updatedAt = Date(timeIntervalSince1970: Double(index))
            try await realm.write(adding: [note])
        }
        let sent = Mutex<[String]>([])
        let count = try await drainQueue(realm) { text in
            sent.withLock { $0.append(text) }
            return sent.withLock { $0.count }
        }
        #expect(count == 3 && sent.withLock { $0 } == ["first", "second", "third"])
        let synced = try await realm.read { $0.objects(Note.self).sorted(by: \.updatedAt).map(\.serverId) }
        #expect(synced == [1, 2, 3])
        #expect(try await drainQueue(realm) { _ in 0 } == 0)
    }
}

// Kinds of change from the Realm original (the `// Realm:` lines above):
// 1. `import LiveObjects` for `import RealmSwift`.
// 2. The configuration's initializer (`identifier:` for a file URL or in-memory identifier).
// 3. Opening is `await Realm.open(_:)` (or `Realm.open(_:on: MainActor.shared)` for the main
//    actor) where Realm has `try Realm(configuration:)`, so a manager that opens in its
//    initializer has an async one; reads and writes off the realm's actor `await`.
// 4. Objects made before a write go through `write(adding:)`.
// 5. Results handed to another thread are frozen inside the read (`freeze()` as in Realm, but
//    inside the closure).
// 6. Synchronous main-actor code reads and writes inside `realm.access { }`.
// Not counted, as Swift 6 asks it of any main-actor class: the main-actor store's conformance to
// a protocol that is not isolated is written `@MainActor PlayerStore`.
