import Foundation
import LiveObjects
import Testing

@testable import Persistence

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Durability under failing file calls: for every kind of file call (open, write, sync,
/// rename, directory sync, truncate, unlink) and every *n* along a scenario (journal appends,
/// folds, an explicit save, the close, a migration), the *n*-th call fails; after every step
/// the files are read as a crash would leave them, and every write that returned must be there
/// and no write that threw. Then the file is opened again normally and checked the same way.
@Suite struct FaultInjectionTests {
    /// What the realm holds, per the writes that returned.
    struct Model: Equatable, CustomStringConvertible {
        var items: [Int64: String] = [:]
        var counter: Int64 = 0
        var description: String { "counter \(counter), items \(items.keys.sorted())" }
    }

    static let schema = Schema([
        ObjectSchema(
            name: "Item",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "name", type: .string),
            ]),
        ObjectSchema(
            name: "Counter",
            properties: [Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "n", type: .int)]),
    ])

    /// The new schema of the migration scenario: items gain a `note`.
    static let migratedSchema = Schema([
        ObjectSchema(
            name: "Item",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "name", type: .string),
                Property(name: "note", type: .string),
            ]),
        ObjectSchema(
            name: "Counter",
            properties: [Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "n", type: .int)]),
    ])

    struct Scenario: Sendable, CustomTestStringConvertible {
        var name: String
        var options: FileStorage.Options
        var keepsHistory = false
        /// Opens the file with ``FaultInjectionTests/migratedSchema`` at schema version 1.
        var migrates = false
        /// Opens a file that does not exist yet (and only opens it).
        var firstOpen = false
        var testDescription: String { name }
    }

    static let scenarios: [Scenario] = [
        Scenario(name: "journal, folds, save, close", options: .init(journalFoldThreshold: 400), keepsHistory: true),
        Scenario(name: "journal without folds", options: .init()),
        Scenario(name: "afterEveryCommit, no journal", options: .init(savePolicy: .afterEveryCommit, journal: false)),
        Scenario(name: "afterEveryCommit with journal", options: .init(savePolicy: .afterEveryCommit)),
        Scenario(name: "coalesced, journal", options: .init(savePolicy: .coalesced(.zero), journalFoldThreshold: 300)),
        Scenario(name: "migration at open", options: .init(migration: { _ in }), migrates: true),
        Scenario(name: "first open, journal", options: .init(), firstOpen: true),
        Scenario(name: "first open, no journal", options: .init(journal: false), firstOpen: true),
        Scenario(
            name: "first open, afterEveryCommit, no journal",
            options: .init(savePolicy: .afterEveryCommit, journal: false),
            firstOpen: true),
        Scenario(
            name: "first open, afterEveryCommit with journal", options: .init(savePolicy: .afterEveryCommit),
            firstOpen: true),
        Scenario(name: "first open, coalesced", options: .init(savePolicy: .coalesced(.zero)), firstOpen: true),
    ]

    static let writes = 8

    @Test(arguments: scenarios)
    func everyFailingCallKeepsWhatReturnedAndNothingThatThrew(_ scenario: Scenario) async throws {
        // A run without faults counts the calls of each kind.
        let (counts, cleanRunThrew) = try await run(scenario, fault: nil)
        #expect(cleanRunThrew == 0)
        #expect(counts[.write, default: 0] > 0 && counts[.rename, default: 0] > 0)
        var runs = 0
        var thrown = 0
        for call in FileFaults.Call.allCases {
            for n in 1...max(counts[call, default: 0], 1) {
                // Once, for a while (a disk that fills up and is freed), and for good.
                for (code, times) in [(EIO, 1), (ENOSPC, 3), (ENOSPC, Int.max)] {
                    thrown += try await run(scenario, fault: (call, n, code), times: times).thrown
                    runs += 1
                }
            }
        }
        print(
            "fault injection, \(scenario.name): \(runs) runs over the calls \(counts.sorted { $0.key.rawValue < $1.key.rawValue })"
        )
        #expect(runs > 20)
        // The faults reached the writes: some of them threw.
        #expect(thrown > 0)
    }

    /// Runs the scenario in a new directory with the fault installed, checking after every step.
    /// Returns the calls counted.
    func run(
        _ scenario: Scenario, fault: (call: FileFaults.Call, n: Int, code: Int32)?, times: Int = 1
    ) async throws -> (counts: [FileFaults.Call: Int], thrown: Int) {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("data.liveobjects")
        let label =
            "\(scenario.name), fault \(fault.map { "\($0.call) #\($0.n) errno \($0.code)" } ?? "none")\(times > 1 ? " and after, \(times == .max ? "for good" : "\(times) times")" : "")"

        if scenario.firstOpen {
            return try await runFirstOpen(scenario, url, directory, fault: fault, times: times, label)
        }
        // The file before the scenario: one item and the counter, made without faults.
        var model = Model(items: [0: "seed"], counter: 0)
        var base = Realm.Configuration(file: url, schema: Self.schema, schemaVersion: 0)
        base.keepsHistory = scenario.keepsHistory
        try await withRealm(base) { realm in
            try await realm.write { realm in
                try realm.dynamicCreate("Item", value: ["id": 0, "name": "seed"])
                try realm.dynamicCreate("Counter", value: ["id": 1, "n": 0])
            }
        }

        var configuration = Realm.Configuration(
            file: url, schema: scenario.migrates ? Self.migratedSchema : Self.schema,
            schemaVersion: scenario.migrates ? 1 : 0, options: scenario.options)
        configuration.keepsHistory = scenario.keepsHistory
        let plan = FileFaults.install(
            FileFaults.Plan(directory: directory.path, failing: fault, times: times))
        var realm: Realm?
        do {
            realm = try await Realm.open(configuration)
        } catch {
            // A failed open changes nothing: the old file still reads as before.
            let counts = FileFaults.remove(plan)
            try checkDisk(url, model, label + ", after a failed open")
            return (counts, 1)
        }
        try checkDisk(url, model, label + ", after the open")
        var thrown = 0
        for k in Int64(1)...Int64(Self.writes) {
            let name = String(repeating: "n", count: 30) + "\(k)"
            do {
                try await realm!.write { realm in
                    try realm.dynamicCreate("Item", value: ["id": .int(k), "name": .string(name)])
                    try realm.dynamicObject(ofType: "Counter", forPrimaryKey: 1)!.set("n", to: .int(k))
                    if k % 3 == 0, let old = try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(k - 2)) {
                        try realm.delete(old)
                    }
                }
                model.items[k] = name
                model.counter = k
                if k % 3 == 0 { model.items[k - 2] = nil }
            } catch let error as LiveObjectsError {
                #expect(error.code == .io, "\(label): write \(k) threw \(error)")
                thrown += 1
            }
            // A write that threw changed nothing in memory either.
            #expect(try await Self.contents(of: realm!) == model, "\(label), in memory after write \(k)")
            try checkDisk(url, model, label + ", after write \(k)")
            if k == 4 {
                do { try await realm!.save() } catch { #expect(error.code == .io) }
                try checkDisk(url, model, label + ", after the save")
            }
        }
        do { try await realm!.close() } catch {
            #expect(error.code == .io)
            // Released with the faults still there, its last save fails again: the file must
            // be released all the same, with every returned write in it.
            realm = nil
            for _ in 0..<1000 where FileStorage.isOpen(configuration) { try await Task.sleep(for: .milliseconds(2)) }
            #expect(!FileStorage.isOpen(configuration), "\(label): the released realm did not release its file")
        }
        _ = realm
        try checkDisk(url, model, label + ", after the close")
        let counts = FileFaults.remove(plan)

        // Opened again normally, the file holds exactly what returned.
        let reopened = try await withRealm(configuration) { realm in try await Self.contents(of: realm) }
        #expect(reopened == model, "\(label), reopened")
        return (counts, thrown)
    }

    /// Opens a file that does not exist under the fault: a failed open leaves no file (the lock
    /// files aside, which hold nothing); one that succeeds leaves an empty realm.
    func runFirstOpen(
        _ scenario: Scenario, _ url: URL, _ directory: URL, fault: (call: FileFaults.Call, n: Int, code: Int32)?,
        times: Int, _ label: String
    ) async throws -> (counts: [FileFaults.Call: Int], thrown: Int) {
        let configuration = Realm.Configuration(file: url, schema: Self.schema, options: scenario.options)
        let plan = FileFaults.install(FileFaults.Plan(directory: directory.path, failing: fault, times: times))
        do {
            let realm = try await Realm.open(configuration)
            try? await realm.close()
        } catch {
            let counts = FileFaults.remove(plan)
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                !$0.hasSuffix(".lock") && !$0.hasSuffix(".write-lock")
            }
            #expect(left.isEmpty, "\(label): a failed first open left \(left)")
            return (counts, 1)
        }
        let counts = FileFaults.remove(plan)
        let model = try await withRealm(configuration) { realm in try await Self.contents(of: realm) }
        #expect(model == Model(items: [:], counter: -1), "\(label), reopened")
        return (counts, 0)
    }

    /// A fresh directory, in memory where the system has one (the faults are injected: the
    /// disk's own speed only slows the test down).
    static func makeDirectory() throws -> URL {
        guard FileManager.default.fileExists(atPath: "/dev/shm") else { return try makeTemporaryDirectory() }
        let url = URL(fileURLWithPath: "/dev/shm/persistence-faults-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// What a realm holds, as a model.
    static func contents(of realm: Realm) async throws -> Model {
        try await realm.read { realm in
            var model = Model()
            for item in try realm.dynamicObjects("Item") {
                model.items[item["id"].intValue!] = item["name"].stringValue!
            }
            model.counter = try realm.dynamicObjects("Counter").first?["n"].intValue ?? -1
            return model
        }
    }

    /// Reads the snapshot and journal as they are on disk now (what a crash would leave) and
    /// checks that they hold the model.
    func checkDisk(_ url: URL, _ model: Model, _ label: String) throws {
        // A background save may replace the snapshot and restart the journal between the two
        // reads: the files are read until the snapshot is the same after the journal as
        // before it (what a crash leaves is the two files at one instant).
        var snapshot = try [UInt8](Data(contentsOf: url))
        var journal: [UInt8]?
        while true {
            journal = (try? Data(contentsOf: URL(fileURLWithPath: url.path + ".journal"))).map { [UInt8]($0) }
            let again = try [UInt8](Data(contentsOf: url))
            if again == snapshot { break }
            snapshot = again
        }
        let loaded: (store: Store, schemaVersion: UInt64, commit: UInt64)
        do {
            loaded = try FileStorage.decode(snapshot: snapshot, journal: journal)
        } catch {
            Issue.record("\(label): the files do not load: \(error)")
            return
        }
        var found = Model()
        let items = loaded.store.tablesByName["Item"]!
        for row in 0..<Int32(items.rowCount) where items.isLive(row) {
            found.items[items.value(row, 0).intValue!] = items.value(row, 1).stringValue!
        }
        let counters = loaded.store.tablesByName["Counter"]!
        found.counter = counters.row(forPrimaryKey: 1).map { counters.value($0, 1).intValue! } ?? -1
        #expect(found == model, "\(label): on disk \(found), expected \(model)")
    }
}
