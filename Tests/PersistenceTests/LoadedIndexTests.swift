import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import LiveObjectsStore
@testable import Persistence

/// Secondary indexes of a loaded table large enough that they are built on a thread of their
/// own after the load: the first query and the first write wait for them and find them whole,
/// whichever comes first, on a snapshot alone and with a journal to replay.
@Suite struct LoadedIndexTests {
    static let count = 25_000
    static let schema = Schema([
        ObjectSchema(
            name: "Pet",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "name", type: .string, isIndexed: true),
                Property(name: "age", type: .int, isIndexed: true),
            ])
    ])

    /// A file of `count` pets (names n0…n99, ages 0…6), its last few changes in the journal.
    static func configuration() async throws -> Realm.Configuration {
        let url = try makeTemporaryDirectory().appendingPathComponent("pets.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: schema, options: options)
        try await withRealm(configuration) { realm in
            try await realm.write { realm in
                for i in 0..<count {
                    try realm.dynamicCreate(
                        "Pet", value: ["id": .int(Int64(i)), "name": .string("n\(i % 100)"), "age": .int(Int64(i % 7))])
                }
            }
            try await realm.save()
            // In the journal only: replayed at the next open, before the indexes are whole.
            try await realm.write { realm in
                try realm.dynamicObject(ofType: "Pet", forPrimaryKey: .int(7))?.set("name", to: .string("journal"))
            }
        }
        return configuration
    }

    static func count(_ realm: Realm, _ predicate: String) async throws -> Int {
        try await realm.read { try $0.dynamicResults("Pet").filter(predicate).count }
    }

    static func violations(_ realm: Realm) async throws -> [String] {
        try await realm.read { StoreInvariants.violations(in: $0.store) }
    }

    @Test func aQueryFirstFindsTheIndexesWhole() async throws {
        let configuration = try await Self.configuration()
        try await withRealm(configuration) { realm in
            let n5 = try await Self.count(realm, "name == 'n5'")
            let n7 = try await Self.count(realm, "name == 'n7'")
            let journal = try await Self.count(realm, "name == 'journal'")
            let three = try await Self.count(realm, "age == 3")
            let violations = try await Self.violations(realm)
            #expect(n5 == 250)
            #expect(n7 == 249)
            #expect(journal == 1)
            #expect(three == Self.count / 7)
            #expect(violations == [])
        }
    }

    /// A store let go while its indexes are still building (a realm closed right after it
    /// opened, before any query) waits for the thread, which reads the table's columns, before
    /// the table goes: without that the thread read freed memory (a crash, seen once in the
    /// load benchmark).
    @Test func aStoreLetGoWhileItsIndexesBuildWaitsForThem() throws {
        // Enough distinct names that the build outlasts the load's return by far; a number of
        // rows no other test loads, to tell this build from theirs.
        let n = 150_001
        let records = (0..<n).map { #"{"$id": \#($0), "id": \#($0), "name": "name \#($0)", "age": \#($0 % 7)}"# }
        let bytes = Array(
            (#"{"format": "LiveObjects", "formatVersion": 1, "schemaVersion": 0, "commit": 0, "schema": "#
                + #"[{"name": "Pet", "properties": [{"name": "id", "type": "int", "primaryKey": true}, "#
                + #"{"name": "name", "type": "string", "indexed": true}, {"name": "age", "type": "int", "indexed": true}]}], "#
                + #""objects": {"Pet": ["# + records.joined(separator: ",\n") + "]}}\n").utf8)
        // The store goes as soon as the load returns.
        _ = try FileStorage.decode(snapshot: bytes, journal: nil)
        let left = ValueIndexBuild.unfinished.withLock { $0.filter { $0 == n }.count }
        #expect(left == 0, "\(left) builds left running after their store went")
    }

    @Test func aWriteFirstKeepsTheIndexesInStep() async throws {
        let configuration = try await Self.configuration()
        try await withRealm(configuration) { realm in
            try await realm.write { realm in
                try realm.dynamicObject(ofType: "Pet", forPrimaryKey: .int(5))?.set("name", to: .string("renamed"))
                let gone = try #require(try realm.dynamicObject(ofType: "Pet", forPrimaryKey: .int(105)))
                try realm.delete(gone)
                try realm.dynamicCreate(
                    "Pet", value: ["id": .int(Int64(Self.count)), "name": .string("n5"), "age": .int(3)])
            }
            let n5 = try await Self.count(realm, "name == 'n5'")
            let renamed = try await Self.count(realm, "name == 'renamed'")
            let violations = try await Self.violations(realm)
            #expect(n5 == 250 - 2 + 1)
            #expect(renamed == 1)
            #expect(violations == [])
        }
    }
}
