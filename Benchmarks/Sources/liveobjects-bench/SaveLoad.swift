import Foundation
import GRDB
import LiveObjects
import Persistence

/// The files of the `save` and `load` workloads: one per system, in a temporary directory
/// removed when the run ends.
enum BenchFiles {
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "liveobjects-bench-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    static func url(_ system: String) -> URL { directory.appendingPathComponent("\(system)-save") }

    /// Removes a file and the files beside it that a system may leave (journal, lock, SQLite's).
    static func remove(_ url: URL) {
        for suffix in ["", ".journal", ".lock", ".tmp", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    static func size(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    static func removeAll() { try? FileManager.default.removeItem(at: directory) }
}

/// The checksum of a loaded data set: the same for every system that read it all back.
func loadChecksum(persons: Int, dogs: Int, ageSum: Int, ownerSum: Int) -> Int {
    persons &+ dogs &* 3 &+ ageSum &* 7 &+ ownerSum &* 11
}

// MARK: LiveObjects: a JSON snapshot of the loaded realm; loading is opening the file realm.

extension LiveObjectsSystem {
    /// `FileStorage.writeSnapshot(of:to:schemaVersion:)`: the whole realm to a new snapshot
    /// file, written atomically and synced (file and directory) like every save.
    func save(_ data: Dataset) async throws -> Sample {
        let url = BenchFiles.url(Self.name)
        BenchFiles.remove(url)
        let realm = realm!
        let clock = ContinuousClock()
        let start = clock.now
        try await FileStorage.writeSnapshot(of: realm, to: url, schemaVersion: 0)
        let elapsed = seconds(start.duration(to: clock.now))
        let count = try await realm.read { $0.objects(Dog.self).count + $0.objects(Person.self).count }
        return Sample(seconds: elapsed, checksum: count, fileBytes: BenchFiles.size(url))
    }

    /// `Realm.open` of the file (no journal: nothing is written at open), which reads every
    /// object into the realm; the realm is closed after the timing.
    func loadFile(_ data: Dataset) async throws -> Sample {
        let url = BenchFiles.url(Self.name)
        if !FileManager.default.fileExists(atPath: url.path) { _ = try await save(data) }
        let configuration = Realm.Configuration(
            file: url, objectTypes: [Person.self, Dog.self], options: .init(savePolicy: .manual, journal: false))
        let clock = ContinuousClock()
        let start = clock.now
        let realm = try await Realm.open(configuration)
        let elapsed = seconds(start.duration(to: clock.now))
        let checksum = try await realm.read { realm in
            var ageSum = 0
            var ownerSum = 0
            for dog in realm.objects(Dog.self) {
                ageSum &+= dog.age
                ownerSum &+= dog.owner!.id
            }
            return loadChecksum(
                persons: realm.objects(Person.self).count, dogs: realm.objects(Dog.self).count, ageSum: ageSum,
                ownerSum: ownerSum)
        }
        try await realm.close()
        return Sample(seconds: elapsed, checksum: checksum, fileBytes: BenchFiles.size(url))
    }
}

// MARK: GRDB: a file database filled in one transaction; loading reads every row.

extension GRDBSystem {
    /// A new file `DatabaseQueue` (SQLite defaults as GRDB sets them: rollback journal,
    /// synchronous FULL), the schema, then every row of the loaded database (read untimed first,
    /// as it is now: update_notify changed ages) inserted in one transaction with the same
    /// prepared statements as `insert_all`. Timed from opening to the committed transaction.
    func save(_ data: Dataset) async throws -> Sample {
        let url = BenchFiles.url(Self.name)
        BenchFiles.remove(url)
        let (persons, dogs) = try Self.readAll(loadedQueue)
        let clock = ContinuousClock()
        let start = clock.now
        try Self.write(persons, dogs, toFile: url)
        let elapsed = seconds(start.duration(to: clock.now))
        return Sample(seconds: elapsed, checksum: persons.count + dogs.count, fileBytes: BenchFiles.size(url))
    }

    /// Synchronous, so that GRDB's synchronous `write` is the one called.
    private static func write(_ persons: [RawPerson], _ dogs: [RawDog], toFile url: URL) throws {
        let dbQueue = try DatabaseQueue(path: url.path)
        try dbQueue.write { db in try createSchema(db) }
        _ = try insert(
            persons: persons.count, { [persons[$0].id, persons[$0].name, persons[$0].age] },
            dogs: dogs.count, { [dogs[$0].id, dogs[$0].name, dogs[$0].age, dogs[$0].ownerId] },
            into: dbQueue)
        try dbQueue.close()
    }

    /// Opens the file and reads every person and dog into Swift structs (`RawPerson`,
    /// `RawDog`) through row cursors.
    func loadFile(_ data: Dataset) async throws -> Sample {
        let url = BenchFiles.url(Self.name)
        if !FileManager.default.fileExists(atPath: url.path) { _ = try await save(data) }
        let clock = ContinuousClock()
        let start = clock.now
        let dbQueue = try DatabaseQueue(path: url.path)
        let (persons, dogs) = try Self.readAll(dbQueue)
        let elapsed = seconds(start.duration(to: clock.now))
        try dbQueue.close()
        return Sample(seconds: elapsed, checksum: rawChecksum(persons, dogs), fileBytes: BenchFiles.size(url))
    }

    private static func readAll(_ dbQueue: DatabaseQueue) throws -> ([RawPerson], [RawDog]) {
        try dbQueue.read { db in
            var persons: [RawPerson] = []
            let personRows = try Row.fetchCursor(db, sql: "SELECT id, name, age FROM person")
            while let row = try personRows.next() { persons.append(RawPerson(id: row[0], name: row[1], age: row[2])) }
            var dogs: [RawDog] = []
            let dogRows = try Row.fetchCursor(db, sql: "SELECT id, name, age, ownerId FROM dog")
            while let row = try dogRows.next() {
                dogs.append(RawDog(id: row[0], name: row[1], age: row[2], ownerId: row[3]))
            }
            return (persons, dogs)
        }
    }
}

// MARK: Raw: JSONEncoder / JSONDecoder of Codable arrays.

/// The raw system's file: the persons and dogs as arrays of `Codable` structs.
struct RawFile: Codable {
    var persons: [RawPerson]
    var dogs: [RawDog]
}

func rawChecksum(_ persons: [RawPerson], _ dogs: [RawDog]) -> Int {
    var ageSum = 0
    var ownerSum = 0
    for dog in dogs {
        ageSum &+= dog.age
        ownerSum &+= dog.ownerId
    }
    return loadChecksum(persons: persons.count, dogs: dogs.count, ageSum: ageSum, ownerSum: ownerSum)
}

extension RawSystem {
    /// The dictionaries' values as arrays, `JSONEncoder().encode`, and the bytes written to a
    /// file and synced (as the other two systems sync theirs).
    func save(_ data: Dataset) async throws -> Sample {
        let url = BenchFiles.url(Self.name)
        BenchFiles.remove(url)
        let store = store!
        let clock = ContinuousClock()
        let start = clock.now
        let file = RawFile(persons: Array(store.persons.values), dogs: Array(store.dogs.values))
        let bytes = try JSONEncoder().encode(file)
        try writeSynced(bytes, to: url)
        let elapsed = seconds(start.duration(to: clock.now))
        return Sample(seconds: elapsed, checksum: file.persons.count + file.dogs.count, fileBytes: bytes.count)
    }

    /// The file's bytes, `JSONDecoder().decode` into the arrays of structs.
    func loadFile(_ data: Dataset) async throws -> Sample {
        let url = BenchFiles.url(Self.name)
        if !FileManager.default.fileExists(atPath: url.path) { _ = try await save(data) }
        let clock = ContinuousClock()
        let start = clock.now
        let file = try JSONDecoder().decode(RawFile.self, from: Data(contentsOf: url))
        let elapsed = seconds(start.duration(to: clock.now))
        return Sample(seconds: elapsed, checksum: rawChecksum(file.persons, file.dogs), fileBytes: BenchFiles.size(url))
    }
}

/// Writes `bytes` to a new file and syncs it to the disk.
func writeSynced(_ bytes: Data, to url: URL) throws {
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    let handle = try FileHandle(forWritingTo: url)
    try handle.write(contentsOf: bytes)
    try handle.synchronize()
    try handle.close()
}
