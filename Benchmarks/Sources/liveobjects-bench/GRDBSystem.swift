import GRDB

/// GRDB (SQLite) with an in-memory `DatabaseQueue`, used the fastest idiomatic way: SQL through
/// prepared (and cached) statements, rows read from cursors, everything inside one
/// `read { }` or `write { }` per measurement.
///
/// Schema: `person(id INTEGER PRIMARY KEY, name, age)` and `dog(id INTEGER PRIMARY KEY,
/// name indexed, age, ownerId REFERENCES person indexed)`, made with GRDB's table builder
/// (`belongsTo` adds the indexed foreign key). Foreign keys are checked (GRDB's default).
final class GRDBSystem: BenchSystem {
    static let name = "grdb"
    private var dbQueue: DatabaseQueue?

    private static func makeDatabase() throws -> DatabaseQueue {
        let dbQueue = try DatabaseQueue()
        try dbQueue.write { db in
            try createSchema(db)
        }
        return dbQueue
    }

    static func createSchema(_ db: Database) throws {
        try db.create(table: "person") { t in
            t.primaryKey("id", .integer)
            t.column("name", .text).notNull()
            t.column("age", .integer).notNull()
        }
        try db.create(table: "dog") { t in
            t.primaryKey("id", .integer)
            t.column("name", .text).notNull().indexed()
            t.column("age", .integer).notNull()
            t.belongsTo("owner", inTable: "person").notNull()
        }
    }

    /// One write transaction; one prepared INSERT statement per table, reused for every row
    /// (`setUncheckedArguments` + `execute()`, which skips the per-row argument validation).
    static func insert(_ data: Dataset, into dbQueue: DatabaseQueue) throws -> Double {
        try insert(
            persons: data.personCount, { [$0 + 1, data.personNames[$0], data.personAges[$0]] },
            dogs: data.dogCount, { [$0 + 1, data.dogNames[$0], data.dogAges[$0], data.dogOwners[$0]] },
            into: dbQueue)
    }

    /// Inserts rows (given by index as statement arguments) in one transaction with one
    /// prepared statement per table; returns the time it took.
    static func insert(
        persons: Int, _ person: (Int) -> StatementArguments, dogs: Int, _ dog: (Int) -> StatementArguments,
        into dbQueue: DatabaseQueue
    ) throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try dbQueue.write { db in
            let insertPerson = try db.makeStatement(sql: "INSERT INTO person (id, name, age) VALUES (?, ?, ?)")
            for i in 0..<persons {
                insertPerson.setUncheckedArguments(person(i))
                try insertPerson.execute()
            }
            let insertDog = try db.makeStatement(sql: "INSERT INTO dog (id, name, age, ownerId) VALUES (?, ?, ?, ?)")
            for i in 0..<dogs {
                insertDog.setUncheckedArguments(dog(i))
                try insertDog.execute()
            }
        }
        return seconds(start.duration(to: clock.now))
    }

    func insertAll(_ data: Dataset) async throws -> Sample {
        let dbQueue = try Self.makeDatabase()
        let elapsed = try Self.insert(data, into: dbQueue)
        let count = try Self.read(dbQueue) { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT COUNT(*) FROM dog) + (SELECT COUNT(*) FROM person)")!
        }
        return Sample(seconds: elapsed, checksum: count)
    }

    func load(_ data: Dataset) async throws {
        let dbQueue = try Self.makeDatabase()
        _ = try Self.insert(data, into: dbQueue)
        self.dbQueue = dbQueue
    }

    func unload() { dbQueue = nil }

    /// The queue built by `load`.
    var loadedQueue: DatabaseQueue { dbQueue! }

    /// GRDB's synchronous `read`, called from a synchronous function (in an async context
    /// Swift would pick the async overload, which hops to another thread).
    private static func read<T>(_ dbQueue: DatabaseQueue, _ body: (Database) throws -> T) throws -> T {
        try dbQueue.read(body)
    }

    private func read<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.read(dbQueue!, body)
    }

    func pkLookup(_ data: Dataset) async throws -> Sample {
        try read { db in
            let clock = ContinuousClock()
            let start = clock.now
            var checksum = 0
            let statement = try db.cachedStatement(sql: "SELECT name, age FROM dog WHERE id = ?")
            for id in data.pkLookupIds {
                // The row is a view on the statement: read it while the cursor is alive.
                let rows = try Row.fetchCursor(statement, arguments: [id])
                while let row = try rows.next() {
                    let name: String = row[0]
                    let age: Int = row[1]
                    checksum &+= age &+ name.utf8.count
                }
            }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }

    func filterUnindexed(_ data: Dataset) async throws -> Sample {
        try read { db in
            let clock = ContinuousClock()
            let start = clock.now
            // SQLite's LIKE ignores ASCII case by default: the same as CONTAINS[c] here.
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, name FROM dog WHERE age > 10 AND name LIKE '%a%'")
            var rows: [(id: Int, name: String)] = []
            while let row = try cursor.next() { rows.append((id: row[0], name: row[1])) }
            let count = rows.count
            let elapsed = seconds(start.duration(to: clock.now))
            return Sample(seconds: elapsed, checksum: filterChecksum(count: count, rows))
        }
    }

    func filterIndexedEq(_ data: Dataset) async throws -> Sample {
        try read { db in
            let clock = ContinuousClock()
            let start = clock.now
            var checksum = 0
            let statement = try db.cachedStatement(sql: "SELECT id FROM dog WHERE name = ?")
            for name in data.eqLookupNames {
                let ids = try Int.fetchCursor(statement, arguments: [name])
                while let id = try ids.next() { checksum &+= id }
            }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }

    func indexedEqCount(_ data: Dataset) async throws -> Sample {
        try read { db in
            let clock = ContinuousClock()
            let start = clock.now
            var checksum = 0
            let statement = try db.cachedStatement(sql: "SELECT COUNT(*) FROM dog WHERE name = ?")
            for name in data.eqLookupNames {
                checksum &+= try Int.fetchOne(statement, arguments: [name]) ?? 0
            }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }

    func toMany(_ data: Dataset) async throws -> Sample {
        try read { db in
            let clock = ContinuousClock()
            let start = clock.now
            var checksum = 0
            let statement = try db.cachedStatement(sql: "SELECT age FROM dog WHERE ownerId = ?")
            for id in data.toManyPersonIds {
                let ages = try Int.fetchCursor(statement, arguments: [id])
                while let age = try ages.next() { checksum &+= age &+ 1 }
            }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }

    func inverse(_ data: Dataset) async throws -> Sample {
        try read { db in
            let clock = ContinuousClock()
            let start = clock.now
            var checksum = 0
            let statement = try db.cachedStatement(
                sql: "SELECT person.id, person.name FROM dog JOIN person ON person.id = dog.ownerId WHERE dog.id = ?")
            for id in data.inverseDogIds {
                let rows = try Row.fetchCursor(statement, arguments: [id])
                while let row = try rows.next() {
                    let ownerId: Int = row[0]
                    let name: String = row[1]
                    checksum &+= ownerId &+ name.utf8.count
                }
            }
            return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
        }
    }

    /// An in-memory `DatabaseQueue` cannot give a `DatabaseSnapshot` (that needs a WAL
    /// `DatabasePool` on a file), so the snapshot is a copy made with SQLite's backup API into a
    /// new in-memory queue (which is `Sendable`).
    func freeze(_ data: Dataset) async throws -> Sample {
        let clock = ContinuousClock()
        let start = clock.now
        let snapshot = try DatabaseQueue()
        try dbQueue!.backup(to: snapshot)
        let count = try await Task.detached { try countDogs(in: snapshot) }.value
        return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: count)
    }
}

/// The number of dogs, through GRDB's synchronous `read`.
private func countDogs(in dbQueue: DatabaseQueue) throws -> Int {
    try dbQueue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dog")! }
}
