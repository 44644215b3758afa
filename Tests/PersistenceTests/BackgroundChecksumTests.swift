import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// A large snapshot's checksum is computed on another thread while its objects are read
/// (`BackgroundChecksum`): a damaged file is still refused as damaged, whatever its damage made
/// the reader find first, and nothing acts on its header (a migration, deleting the data) before
/// the checksum is known. Seeded; the seed and the damage are in the message.
@Suite struct BackgroundChecksumTests {
    /// The seeds; `LIVEOBJECTS_CHECKSUM_SEED` replays one.
    static let seeds: [UInt64] = TestEnvironment.seed("LIVEOBJECTS_CHECKSUM_SEED").map { [$0] } ?? [1, 2, 3]

    /// A sealed snapshot of `count` items of `BadFileTests.schema`, linked in a chain, with
    /// names of `nameLength` bytes.
    static func snapshot(count: Int, nameLength: Int = 8) -> [UInt8] {
        var records: [String] = []
        records.reserveCapacity(count)
        for i in 0..<count {
            let name = String(String(repeating: "n\(i)-", count: nameLength).prefix(nameLength))
            let next = i + 1 < count ? "\(i + 1)" : "null"
            records.append(
                #"{"$id": \#(i), "id": \#(i * 7 - 300), "small": \#(i % 200 - 100), "name": "\#(name)", "blob": "AAE=", "#
                    + #""uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "next": \#(next)}"#)
        }
        return sealedSnapshot(BadFileTests.file(objects: #"{"Item": ["# + records.joined(separator: ", ") + "]}"))
    }

    /// Whether `error` is the checksum's refusal.
    static func isChecksumError(_ error: LiveObjectsError) -> Bool {
        error.code == .corruptFile && error.message.contains("changed outside LiveObjects")
    }

    /// Every single-bit flip of the bytes the checksum covers is refused as a checksum mismatch
    /// when the checksum is computed in the background, as when it is computed first: many of
    /// these flips make the reader fail first (a syntax error, an unknown member, a duplicate
    /// key, a dangling link), and those errors must wait for the checksum's.
    @Test func everyFlipIsRefusedAsDamage() throws {
        let good = Self.snapshot(count: 40)
        let covered = try #require(good.withUnsafeBytes { Snapshot.checksumMember($0) }).covered
        let loaded = try FileStorage.decode(snapshot: good, journal: nil, checksumInBackground: true)
        let expected = try FileStorage.encode(loaded.store, schemaVersion: 0, commit: 0)
        let first = try FileStorage.decode(snapshot: good, journal: nil)
        #expect(try FileStorage.encode(first.store, schemaVersion: 0, commit: 0) == expected)
        for seed in Self.seeds {
            var rng = SeededRandomNumberGenerator(seed: seed)
            for step in 0..<300 {
                let offset = rng.below(covered)
                let bit = UInt8(1) << UInt8(rng.below(8))
                var bad = good
                bad[offset] ^= bit
                let damage = "seed \(seed) (LIVEOBJECTS_CHECKSUM_SEED), step \(step): byte \(offset) ^ \(bit)"
                do {
                    _ = try FileStorage.decode(snapshot: bad, journal: nil, checksumInBackground: true)
                    Issue.record("\(damage): the file loaded")
                } catch {
                    #expect(Self.isChecksumError(error), "\(damage): \(error)")
                }
            }
        }
    }

    /// A file large enough for the open to compute its checksum in the background, damaged
    /// where a migration would act on it: in its schema version (a newer one than the app's)
    /// and, with `deleteDataIfMigrationNeeded`, in its objects while the app asks for a newer
    /// schema version. Both are refused as damage and no file changes (the second would
    /// otherwise have replaced the file by an empty one).
    @Test func aLargeDamagedFileIsRefusedBeforeItsHeaderIsActedOn() async throws {
        let good = Self.snapshot(count: 30_000, nameLength: 100)
        #expect(good.count >= Snapshot.backgroundChecksumSize)
        let text = String(decoding: good, as: UTF8.self)
        let newer = Array(text.replacingOccurrences(of: #""schemaVersion": 0"#, with: #""schemaVersion": 9"#).utf8)
        #expect(newer != good)
        try await Self.expectRefused(newer, schemaVersion: 0, options: .init())
        var damaged = good
        damaged[good.count / 2] ^= 0x04
        try await Self.expectRefused(damaged, schemaVersion: 1, options: .init(deleteDataIfMigrationNeeded: true))
        // Undamaged, it opens with every object.
        let url = try makeTemporaryDirectory().appendingPathComponent("large.json")
        try Data(good).write(to: url)
        let count = try await withRealm(
            Realm.Configuration(file: url, schema: BadFileTests.schema, options: .init(journal: false))
        ) { realm in
            try await realm.read { realm in try realm.dynamicObjects("Item").count }
        }
        #expect(count == 30_000)
    }

    /// Opens `bytes` as a file with the app's `schemaVersion`: it must be refused as damaged,
    /// the file unchanged.
    static func expectRefused(
        _ bytes: [UInt8], schemaVersion: UInt64, options: FileStorage.Options,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("damaged.json")
        try Data(bytes).write(to: url)
        do {
            _ = try await Realm.open(
                Realm.Configuration(
                    file: url, schema: BadFileTests.schema, schemaVersion: schemaVersion, options: options))
            Issue.record("the file opened", sourceLocation: sourceLocation)
        } catch {
            #expect(isChecksumError(error), "\(error)", sourceLocation: sourceLocation)
        }
        #expect(fileBytes(url) == Data(bytes), "the file changed", sourceLocation: sourceLocation)
    }
}
