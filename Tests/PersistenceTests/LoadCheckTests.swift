import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// Snapshot text of format 1 (as the tests write it by hand), made into format 2: the version
/// raised and the checksum member added, the way the writer adds it.
func sealedSnapshot(_ text: String) -> [UInt8] {
    var text = text.replacingOccurrences(of: #""formatVersion": 1"#, with: #""formatVersion": 2"#)
    precondition(text.hasSuffix("}\n"), "sealedSnapshot: the text must end with '}' and a line break")
    text.removeLast(2)
    let covered = Array((text + ", ").utf8)
    let hex = String(decoding: CRC32C.hex(CRC32C.checksum(covered)), as: UTF8.self)
    return covered + Array(#""checksum": "crc32c:\#(hex)"}"#.utf8) + [0x0A]
}

/// A journal line of format 2 from the JSON object `object` (compact, without its checksum):
/// the checksum member added, and the line break.
func sealedLine(_ object: String) -> String {
    precondition(object.hasSuffix("}"), "sealedLine: not an object")
    let body = String(object.dropLast())
    let hex = String(decoding: CRC32C.hex(CRC32C.checksum(Array(body.utf8))), as: UTF8.self)
    return body + #","crc32c":"\#(hex)"}"# + "\n"
}

/// Checksums, strict journals, duplicate members, limits and positions at load (see
/// docs/FORMAT.md and docs/LIMITS.md).
@Suite struct LoadCheckTests {
    static let header2 = sealedLine(#"{"format":"LiveObjects journal","formatVersion":2,"schemaVersion":0,"base":0}"#)
    static let snapshot1 = BadFileTests.file(objects: BadFileTests.items(BadFileTests.good1, BadFileTests.good2))
    static let snapshot2 = sealedSnapshot(snapshot1)

    static func update(_ commit: Int, small: Int) -> String {
        #"{"commit":\#(commit),"changes":{"Item":{"update":[{"$id":0,"small":\#(small)}]}}}"#
    }

    static func decodeError(snapshot: [UInt8], journal: String? = nil) -> LiveObjectsError? {
        do {
            _ = try FileStorage.decode(snapshot: snapshot, journal: journal.map { Array($0.utf8) })
            return nil
        } catch {
            return error
        }
    }

    /// Opens a file that must be refused; checks the error and that no file changed.
    static func expectRefused(
        snapshot: [UInt8], journal: String?, code: LiveObjectsError.Code = .corruptFile, _ fragments: [String],
        options: FileStorage.Options = .init(), schema: Schema = BadFileTests.schema,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("refused.json")
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        try Data(snapshot).write(to: url)
        if let journal { try Data(journal.utf8).write(to: journalURL) }
        let before = (fileBytes(url), fileBytes(journalURL))
        do {
            _ = try await Realm.open(Realm.Configuration(file: url, schema: schema, options: options))
            Issue.record("the file opened", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(error.file != nil, "\(error)", sourceLocation: sourceLocation)
            for fragment in fragments {
                #expect(error.message.contains(fragment), "\(fragment): \(error)", sourceLocation: sourceLocation)
            }
        }
        #expect(fileBytes(url) == before.0, "the snapshot changed", sourceLocation: sourceLocation)
        #expect(fileBytes(journalURL) == before.1, "the journal changed", sourceLocation: sourceLocation)
    }

    // MARK: CRC-32C

    @Test func crcHasTheStandardCheckValue() {
        let check = Array("123456789".utf8)
        #expect(CRC32C.checksum(check) == 0xE306_9283)
        let software = check.withUnsafeBytes { ~CRC32C.software(0xFFFF_FFFF, $0.baseAddress!, $0.count) }
        #expect(software == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
        #expect(String(decoding: CRC32C.hex(0xE306_9283), as: UTF8.self) == "e3069283")
    }

    @Test func crcOfPiecesIsTheCrcOfTheWhole() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededRandomNumberGenerator(seed: seed)
        for _ in 0..<50 {
            let bytes = (0..<Int.random(in: 0...3000, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            let whole = CRC32C.checksum(bytes)
            let software = bytes.withUnsafeBytes { raw in
                raw.isEmpty ? 0 : ~CRC32C.software(0xFFFF_FFFF, raw.baseAddress!, raw.count)
            }
            #expect(software == whole, "seed \(seed)")
            var crc = CRC32C()
            var start = 0
            bytes.withUnsafeBytes { raw in
                while start < raw.count {
                    let end = min(raw.count, start + Int.random(in: 1...40, using: &random))
                    crc.update(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
                    start = end
                }
            }
            #expect(crc.value == whole, "seed \(seed)")
        }
    }

    // MARK: Snapshot checksum

    @Test func savedSnapshotsCarryTheirChecksumAndOlderOnesStillLoad() throws {
        let loaded = try FileStorage.decode(snapshot: Array(Self.snapshot1.utf8), journal: nil)
        let bytes = try FileStorage.encode(loaded.store, schemaVersion: 0, commit: 0)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""formatVersion": 3"#))
        #expect(text.contains(#""checksum": "crc32c:"#), "\(text.suffix(40))")
        let member = try #require(bytes.withUnsafeBytes { Snapshot.checksumMember($0) })
        #expect(CRC32C.checksum(Array(bytes[..<member.covered])) == member.recorded)
        // Hand-made files of format 2 load like the writer's.
        _ = try FileStorage.decode(snapshot: Self.snapshot2, journal: nil)
    }

    @Test func editedSnapshotIsRefusedUnlessTheOptionSaysOtherwise() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("edited.json")
        try Data(Self.snapshot2).write(to: url)
        let edited = Data(
            String(decoding: Self.snapshot2, as: UTF8.self).replacingOccurrences(of: #""a""#, with: #""z""#).utf8)
        try edited.write(to: url)
        try await Self.expectRefused(
            snapshot: Array(edited), journal: nil, ["changed outside LiveObjects", "verifiesChecksum", "byte "])
        // Without the checksum member at all, too.
        let stripped = String(decoding: edited, as: UTF8.self).replacingOccurrences(
            of: #", "checksum": "crc32c:"#, with: #", "nothing": ""#)
        try await Self.expectRefused(snapshot: Array(stripped.utf8), journal: nil, ["no checksum", "byte "])

        let options = FileStorage.Options(journal: false, verifiesChecksum: false)
        let name = try await withRealm(Realm.Configuration(file: url, schema: BadFileTests.schema, options: options)) {
            realm in
            try await realm.read { realm in try realm.dynamicObjects("Item").map { $0["name"] } }
        }
        #expect(name == [.string("z"), .string("b")])
        // The header alone is read without the check.
        #expect(try FileStorage.header(ofFile: url).schemaVersion == 0)
        // An edited file without its checksum opens too with the option.
        let noChecksum = String(decoding: Self.snapshot2, as: UTF8.self).replacingOccurrences(
            of: #", "checksum": "crc32c:[0-9a-f]{8}""#, with: "", options: .regularExpression)
        _ = try FileStorage.decode(snapshot: Array(noChecksum.utf8), journal: nil, verifiesChecksum: false)
    }

    /// Every single-byte change of a small snapshot is refused with the byte it is at, or (never,
    /// in practice) opens with exactly the same content.
    @Test func everySingleByteChangeOfASnapshotIsCaught() throws {
        let sources = [Array(Self.snapshot1.utf8), Array(FuzzRegressionTests.snapshot.utf8)]
        for source in sources {
            let loaded = try FileStorage.decode(snapshot: source, journal: nil)
            let good = try FileStorage.encode(loaded.store, schemaVersion: loaded.schemaVersion, commit: 7)
            for offset in good.indices {
                for replacement in [good[offset] ^ 0x01, UInt8(ascii: "7"), UInt8(ascii: "\"")]
                where replacement != good[offset] {
                    var bad = good
                    bad[offset] = replacement
                    do {
                        let opened = try FileStorage.decode(snapshot: bad, journal: nil)
                        let again = try FileStorage.encode(opened.store, schemaVersion: opened.schemaVersion, commit: 7)
                        #expect(
                            again == good && opened.commit == 7 && opened.schemaVersion == loaded.schemaVersion,
                            "byte \(offset) set to \(replacement) opened with other content")
                    } catch {
                        #expect(error.code == .corruptFile, "byte \(offset): \(error)")
                        #expect(error.message.contains("byte "), "byte \(offset): \(error)")
                    }
                }
            }
        }
    }

    // MARK: Journal checksums

    /// A realm of the crash workload with `commits` commits in its journal; returns the snapshot
    /// and journal bytes.
    static func journaled(commits: Int) async throws -> (url: URL, snapshot: Data, journal: Data) {
        let url = try makeTemporaryDirectory().appendingPathComponent("journaled.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: CrashWorkload.schema, options: options)
        var realm: Realm? = try await openRealm(configuration)
        for n in 1...commits { try await realm!.write { try CrashWorkload.step(Int64(n), in: $0) } }
        let snapshot = try Data(contentsOf: url)
        let journal = try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal"))
        realm = nil
        _ = realm
        while FileStorage.isOpen(configuration) { try await Task.sleep(for: .milliseconds(5)) }
        return (url, snapshot, journal)
    }

    @Test func journalLinesCarryTheirChecksum() async throws {
        let (_, _, journal) = try await Self.journaled(commits: 2)
        let lines = journal.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
        #expect(lines.count == 3)
        #expect(lines[0].contains(#""formatVersion":3"#))
        for line in lines {
            #expect(sealedLine(String(line.dropLast(Journal.checksumSuffixLength)) + "}") == line + "\n")
        }
    }

    @Test func everySingleByteChangeOfAJournalIsCaught() async throws {
        let (_, snapshot, journal) = try await Self.journaled(commits: 3)
        let snapshotBytes = Array(snapshot)
        let good = try FileStorage.decode(snapshot: snapshotBytes, journal: Array(journal))
        #expect(good.commit == 3)
        let goodBytes = try FileStorage.encode(good.store, schemaVersion: 0, commit: good.commit)
        for offset in journal.indices {
            let byte = journal[journal.startIndex + offset]
            for replacement in [byte ^ 0x01, UInt8(ascii: "7"), UInt8(ascii: "\"")] where replacement != byte {
                var bad = Array(journal)
                bad[offset] = replacement
                do {
                    let opened = try FileStorage.decode(snapshot: snapshotBytes, journal: bad)
                    let again = try FileStorage.encode(opened.store, schemaVersion: 0, commit: opened.commit)
                    #expect(
                        again == goodBytes, "journal byte \(offset) set to \(replacement) opened with other content")
                } catch {
                    #expect(error.code == .corruptFile, "journal byte \(offset): \(error)")
                    #expect(error.message.contains("journal line "), "journal byte \(offset): \(error)")
                    #expect(error.message.contains("byte "), "journal byte \(offset): \(error)")
                }
            }
        }
    }

    @Test func tornLastLineIsIgnoredAndADamagedOneIsAnError() async throws {
        let (url, snapshot, journal) = try await Self.journaled(commits: 4)
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        let configuration = Realm.Configuration(
            file: url, schema: CrashWorkload.schema, options: .init(journalFoldThreshold: 1 << 30))
        let lines = journal.split(separator: 0x0A, omittingEmptySubsequences: false)
        let lastStart = journal.count - lines[4].count - 1
        // Torn: any prefix of the last line, up to the whole line without its line break.
        for cut in [lastStart + 1, lastStart + 40, journal.count - 2, journal.count - 1] {
            try snapshot.write(to: url)
            try journal.prefix(cut).write(to: journalURL)
            let state = try await withRealm(configuration) { realm in
                try await realm.read { try CrashWorkload.state(of: $0) }
            }
            #expect(state.counter == 3, "cut at \(cut)")
        }
        // Damaged: a complete last line whose checksum is wrong.
        var damaged = journal
        damaged[lastStart + 20] ^= 0x01
        try await Self.expectDamaged(url, snapshot, damaged, configuration, ["journal line 5", "checksum", "byte "])
        // A whole last line followed by another byte than its line break.
        damaged = journal
        damaged[journal.count - 1] = UInt8(ascii: " ")
        try await Self.expectDamaged(
            url, snapshot, damaged, configuration, ["journal line 5", "instead of a line break"])
        // A complete last line with a right checksum that does not validate.
        for object in [
            #"{"commit":4,"changes":{"Ghost":{}}}"#,
            #"{"commit":4,"changes":{"Item":{"update":[{"$id":0,"tags":12}]}}}"#,
            #"{"commit":4,"changes":{"Item":{"delete":[99]}}}"#,
        ] {
            damaged = journal.prefix(lastStart) + Data(sealedLine(object).utf8)
            try await Self.expectDamaged(url, snapshot, damaged, configuration, ["journal line 5", "byte "])
        }
    }

    static func expectDamaged(
        _ url: URL, _ snapshot: Data, _ journal: Data, _ configuration: Realm.Configuration, _ fragments: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        try snapshot.write(to: url)
        try journal.write(to: journalURL)
        do {
            _ = try await Realm.open(configuration)
            Issue.record("the damaged journal opened", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .corruptFile, "\(error)", sourceLocation: sourceLocation)
            #expect(error.file == journalURL.path, "\(error)", sourceLocation: sourceLocation)
            for fragment in fragments {
                #expect(error.message.contains(fragment), "\(fragment): \(error)", sourceLocation: sourceLocation)
            }
        }
        #expect(try Data(contentsOf: url) == snapshot, sourceLocation: sourceLocation)
        #expect(try Data(contentsOf: journalURL) == journal, sourceLocation: sourceLocation)
    }

    @Test func badJournalHeaderAloneIsAnError() async throws {
        for header in [
            "hello\n",
            #"{"format":"LiveObjects journal","formatVersion":2,"schemaVersion":0,"base":0,"crc32c":"00000000"}"#
                + "\n",
            #"{"format":"LiveObjects journal","formatVersion":2,"schemaVersion":0,"base":0}"# + "\n",
            sealedLine(#"{"format":"LiveObjects journal","formatVersion":2,"schemaVersion":0,"base":0,"base":0}"#),
            sealedLine(#"{"format":"LiveObjects journal","formatVersion":4,"schemaVersion":0,"base":0}"#),
        ] {
            try await Self.expectRefused(snapshot: Self.snapshot2, journal: header, ["journal line 1", "byte "])
        }
        // A header torn while written (no line break) is no journal: it opens.
        let url = try makeTemporaryDirectory().appendingPathComponent("torn-header.json")
        try Data(Self.snapshot2).write(to: url)
        try Data(Self.header2.prefix(30).utf8).write(to: URL(fileURLWithPath: url.path + ".journal"))
        try await withRealm(Realm.Configuration(file: url, schema: BadFileTests.schema)) { _ in }
    }

    @Test func commitsMustCountUpByOne() async throws {
        let cases: [([Int], String)] = [
            ([1, 1, 2], "count up"), ([1, 3], "commit 2 is missing"), ([2], "commit 1 is missing"),
            ([1, 2, 2], "count up"),
        ]
        for (commits, message) in cases {
            let journal = Self.header2 + commits.map { sealedLine(Self.update($0, small: $0)) }.joined()
            let error = try #require(Self.decodeError(snapshot: Self.snapshot2, journal: journal), "\(commits)")
            #expect(error.code == .corruptFile && error.message.contains(message), "\(commits): \(error)")
            #expect(error.message.contains("byte "), "\(commits): \(error)")
            try await Self.expectRefused(snapshot: Self.snapshot2, journal: journal, [message])
        }
        // Lines the snapshot already holds are skipped, but must count up too.
        let ahead = String(decoding: Self.snapshot2, as: UTF8.self)
        #expect(ahead.contains(#""commit": 0"#))
        let snapshotAt2 = sealedSnapshot(
            Self.snapshot1.replacingOccurrences(of: #""commit": 0"#, with: #""commit": 2"#))
        let stale = Self.header2 + [1, 2, 3].map { sealedLine(Self.update($0, small: $0 * 10)) }.joined()
        let loaded = try FileStorage.decode(snapshot: snapshotAt2, journal: Array(stale.utf8))
        #expect(loaded.commit == 3)
        let table = loaded.store.tablesByName["Item"]!
        #expect(table.value(0, 1) == .int(30))
        let repeated = Self.header2 + [1, 1, 3].map { sealedLine(Self.update($0, small: $0)) }.joined()
        #expect(Self.decodeError(snapshot: snapshotAt2, journal: repeated)?.message.contains("count up") == true)
        // Version 1 journals: commits go up (the old writer could leave a gap after lines the
        // snapshot held), a repeated one is an error.
        let header1 = #"{"format":"LiveObjects journal","formatVersion":1,"schemaVersion":0,"base":0}"# + "\n"
        let v1 = header1 + [1, 2, 5].map { Self.update($0, small: $0) + "\n" }.joined()
        let snapshotAt4 = Self.snapshot1.replacingOccurrences(of: #""commit": 0"#, with: #""commit": 4"#)
        #expect(try FileStorage.decode(snapshot: Array(snapshotAt4.utf8), journal: Array(v1.utf8)).commit == 5)
        let v1Repeated = header1 + [1, 1, 2].map { Self.update($0, small: $0) + "\n" }.joined()
        #expect(Self.decodeError(snapshot: Array(Self.snapshot1.utf8), journal: v1Repeated) != nil)
    }

    @Test func versionOneJournalIsReplayedThenSavedAndRestarted() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("v1.json")
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        try Data(Self.snapshot1.utf8).write(to: url)
        let header1 = #"{"format":"LiveObjects journal","formatVersion":1,"schemaVersion":0,"base":0}"# + "\n"
        try Data((header1 + Self.update(1, small: 42) + "\n" + #"{"commit":2,"#).utf8).write(to: journalURL)
        let configuration = Realm.Configuration(file: url, schema: BadFileTests.schema)
        for _ in 0..<2 {
            let small = try await withRealm(configuration) { realm in
                try await realm.read { realm in try realm.dynamicObjects("Item").map { $0["small"] } }
            }
            #expect(small == [.int(42), .int(-5)])
            #expect(String(decoding: try Data(contentsOf: journalURL), as: UTF8.self).contains(#""formatVersion":3"#))
            #expect(String(decoding: try Data(contentsOf: url), as: UTF8.self).contains(#""checksum": "crc32c:"#))
        }
    }

    // MARK: Duplicate members

    @Test func duplicateMembersAreErrors() async throws {
        let item = BadFileTests.items(BadFileTests.good1, BadFileTests.good2)
        let snapshots: [(String, String)] = [
            (
                "commit twice",
                BadFileTests.file(objects: item).replacingOccurrences(
                    of: #""commit": 0"#, with: #""commit": 0, "commit": 3"#)
            ),
            (
                "schemaVersion twice",
                BadFileTests.file(objects: item).replacingOccurrences(
                    of: #""schemaVersion": 0"#, with: #""schemaVersion": 0, "schemaVersion": 0"#)
            ),
            (
                "type twice",
                BadFileTests.file(objects: #"{"Item": [\#(BadFileTests.good1)], "Item": [\#(BadFileTests.good2)]}"#)
            ),
            ("record member twice", BadFileTests.file(objects: BadFileTests.items(#"{"$id": 0, "id": 1, "id": 3}"#))),
            (
                "record member twice, out of order",
                BadFileTests.file(objects: BadFileTests.items(#"{"$id": 0, "name": "a", "id": 1, "name": "b"}"#))
            ),
            (
                "schema member twice",
                BadFileTests.file(schema: #"[{"name": "Item", "name": "Item", "properties": []}]"#, objects: "{}")
            ),
            (
                "property member twice",
                BadFileTests.file(
                    schema: #"[{"name": "Item", "properties": [{"name": "id", "type": "int", "type": "string"}]}]"#,
                    objects: "{}")
            ),
            (
                "free slots twice",
                BadFileTests.file(objects: item).replacingOccurrences(
                    of: "]}}", with: #"]}, "freeSlots": {"Item": [5]}, "freeSlots": {}}"#)
            ),
        ]
        for (name, text) in snapshots {
            for bytes in [Array(text.utf8), sealedSnapshot(text)] {
                let error = try #require(Self.decodeError(snapshot: bytes), "\(name) opened")
                #expect(error.code == .corruptFile, "\(name): \(error)")
                #expect(error.message.contains("twice") && error.message.contains("byte "), "\(name): \(error)")
            }
        }
        let lines: [(String, String)] = [
            ("commit twice", #"{"commit":1,"commit":1,"changes":{}}"#),
            ("changes twice", #"{"commit":1,"changes":{},"changes":{}}"#),
            ("type twice", #"{"commit":1,"changes":{"Item":{"delete":[1]},"Item":{"delete":[1]}}}"#),
            ("kind twice", #"{"commit":1,"changes":{"Item":{"delete":[],"delete":[1]}}}"#),
            ("record member twice", #"{"commit":1,"changes":{"Item":{"update":[{"$id":0,"small":1,"small":2}]}}}"#),
            ("$id twice", #"{"commit":1,"changes":{"Item":{"update":[{"$id":0,"$id":1,"small":2}]}}}"#),
        ]
        for (name, line) in lines {
            let error = try #require(
                Self.decodeError(snapshot: Self.snapshot2, journal: Self.header2 + sealedLine(line)), "\(name) opened")
            #expect(error.code == .corruptFile, "\(name): \(error)")
            #expect(error.message.contains("twice") && error.message.contains("journal line 2"), "\(name): \(error)")
        }
    }

    // MARK: Limits

    @Test func stringsAndDataOverTheLimitAreRefusedAndTheFileLeftAsItIs() async throws {
        let long = String(repeating: "x", count: Realm.Limits.maximumStringLength + 1)
        let big = Data(count: Realm.Limits.maximumDataLength + 1).base64EncodedString()
        let records = [
            #"{"$id": 0, "id": 1, "name": "\#(long)"}"#,
            #"{"$id": 0, "id": 1, "blob": "\#(big)"}"#,
        ]
        for record in records {
            try await Self.expectRefused(
                snapshot: sealedSnapshot(BadFileTests.file(objects: BadFileTests.items(record))), journal: nil,
                code: .limitExceeded, ["Realm.Limits.maximum", "byte ", "left as it is"])
        }
        // The size is the data's own: base64 padding is not counted.
        for size in [Realm.Limits.maximumDataLength + 1, Realm.Limits.maximumDataLength + (1 << 20)] {
            let blob = Data(count: size).base64EncodedString()
            let error = try #require(
                Self.decodeError(
                    snapshot: sealedSnapshot(
                        BadFileTests.file(objects: BadFileTests.items(#"{"$id": 0, "id": 1, "blob": "\#(blob)"}"#)))))
            #expect(error.code == .limitExceeded && error.message.contains("data of \(size) bytes"), "\(error)")
        }
        // Exactly at the limit is fine.
        let atLimit = String(repeating: "y", count: Realm.Limits.maximumStringLength)
        _ = try FileStorage.decode(
            snapshot: sealedSnapshot(
                BadFileTests.file(objects: BadFileTests.items(#"{"$id": 0, "id": 1, "name": "\#(atLimit)"}"#))),
            journal: nil)
    }

    // MARK: Positions

    @Test func aNegativeCommitOrSchemaVersionIsReportedAtItsValue() throws {
        let file = BadFileTests.file(objects: "{}")
        for (member, text) in [("commit", #""commit": -1"#), ("schema version", #""schemaVersion": -1"#)] {
            let bad = file.replacingOccurrences(
                of: member == "commit" ? #""commit": 0"# : #""schemaVersion": 0"#, with: text)
            let error = try #require(Self.decodeError(snapshot: Array(bad.utf8)), "\(member) opened")
            let range = try #require(bad.range(of: text))
            let valueEnd = bad.utf8.distance(from: bad.startIndex, to: range.upperBound)
            #expect(error.code == .corruptFile, "\(error)")
            #expect(error.message.contains("the \(member) is -1: it must be 0 or more"), "\(error)")
            #expect(error.inputLocation?.offset == valueEnd, "\(error)")
        }
    }

    @Test func everyLoadErrorNamesItsByte() throws {
        let schema = SnapshotLoadTests.self
        let cases: [(String, [UInt8])] = [
            ("to-one link to a missing object", schema.file([#"{"$id": 0, "id": 1, "next": 77}"#])),
            ("list entry to a missing object", schema.file([#"{"$id": 0, "id": 1, "friends": [0, 77]}"#])),
            ("link out of slot order", schema.file([#"{"$id": 1, "id": 1}"#, #"{"$id": 0, "id": 2, "next": 5}"#])),
            ("duplicate $id", schema.file([#"{"$id": 1, "id": 1}"#, #"{"$id": 1, "id": 2}"#])),
            (
                "type declared twice",
                Array(
                    BadFileTests.file(
                        schema: #"[{"name": "Item", "properties": []}, {"name": "Item", "properties": []}]"#,
                        objects: "{}"
                    ).utf8)
            ),
            (
                "link to an unknown type",
                Array(
                    BadFileTests.file(
                        schema:
                            #"[{"name": "Item", "properties": [{"name": "x", "type": "object", "objectType": "Nope"}]}]"#,
                        objects: "{}"
                    ).utf8)
            ),
            ("free slot in use", schema.file([#"{"$id": 0, "id": 1}"#], freeSlots: "0")),
        ]
        for (name, bytes) in cases {
            let error = try #require(Self.decodeError(snapshot: bytes), "\(name) opened")
            #expect(error.code == .corruptFile, "\(name): \(error)")
            #expect(error.message.contains("byte ") && error.message.contains("line "), "\(name): \(error)")
            #expect(error.file != nil, "\(name): \(error)")
        }
        // The position is the link's.
        let text = schema.file([#"{"$id": 0, "id": 1, "name": "a"}"#, #"{"$id": 1, "id": 2, "next": 77}"#])
        let error = try #require(Self.decodeError(snapshot: text))
        let end = String(decoding: text, as: UTF8.self).range(of: #""next": 77"#)!.upperBound
        let offset = String(decoding: text, as: UTF8.self).utf8.distance(
            from: String(decoding: text, as: UTF8.self).startIndex, to: end)
        #expect(error.message.contains("does not exist (before byte \(offset), line 2"), "\(error)")
    }

    /// Where the last `marker` in `text` ends: "(before byte N, line L, column C)", and N.
    static func end(of marker: String, in text: String) -> (fragment: String, offset: Int) {
        let range = text.range(of: marker, options: .backwards)!
        let offset = text.utf8.distance(from: text.startIndex, to: range.upperBound)
        let before = Array(text.utf8.prefix(offset))
        let line = before.filter { $0 == 0x0A }.count + 1
        let column = offset - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
        return ("(before byte \(offset), line \(line), column \(column))", offset)
    }

    /// Checks that `error` is about what ends with the last `marker` of `text`: the message
    /// gives its byte, line and column, and the error the byte.
    static func expectAt(
        _ error: LiveObjectsError?, _ marker: String, in text: String, _ name: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (fragment, offset) = end(of: marker, in: text)
        guard let error else {
            Issue.record("\(name): opened", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == .corruptFile, "\(name): \(error)", sourceLocation: sourceLocation)
        #expect(error.file != nil, "\(name): \(error)", sourceLocation: sourceLocation)
        #expect(error.message.hasSuffix(fragment), "\(name): \(fragment): \(error)", sourceLocation: sourceLocation)
        #expect(error.inputLocation?.offset == offset, "\(name): \(error)", sourceLocation: sourceLocation)
    }

    /// Every error of a snapshot's objects says where the value it is about ends: a to-one
    /// link or a list entry naming a missing object (whichever way the loader read the record),
    /// a link inside an embedded object, a duplicate id or primary key, a free slot in use.
    @Test func snapshotErrorsGiveTheByteOfTheirValue() throws {
        let items = SnapshotLoadTests.self
        let cases: [(name: String, records: [String], freeSlots: String?, marker: String)] = [
            (
                "dangling to-one link", [#"{"$id": 0, "id": 1, "name": "a"}"#, #"{"$id": 1, "id": 2, "next": 77}"#],
                nil, #""next": 77"#
            ),
            ("dangling to-one link, $id last", [#"{"id": 1, "next": 77, "$id": 0}"#], nil, #""next": 77"#),
            (
                "dangling to-one link, out of slot order",
                [#"{"$id": 1, "id": 1}"#, #"{"$id": 0, "id": 2, "next": 77}"#], nil, #""next": 77"#
            ),
            (
                "dangling to-one link of a later generation", [#"{"$id": 0, "id": 1, "next": 4294967296}"#], nil,
                "4294967296"
            ),
            ("dangling list entry", [#"{"$id": 0, "id": 1, "friends": [0, 77, 0]}"#], nil, #""friends": [0, 77"#),
            (
                "dangling list entry, out of slot order",
                [#"{"$id": 1, "id": 1}"#, #"{"$id": 0, "id": 2, "friends": [1, 77]}"#], nil, #"[1, 77"#
            ),
            (
                "duplicate primary key", [#"{"$id": 0, "id": 1}"#, #"{"$id": 1, "id": 1}"#], nil,
                #"{"$id": 1, "id": 1}"#
            ),
            ("duplicate $id", [#"{"$id": 1, "id": 1}"#, #"{"$id": 1, "id": 2}"#], nil, #"{"$id": 1, "id": 2}"#),
            ("free slot in use", [#"{"$id": 0, "id": 1}"#], "3, 0", "3, 0"),
        ]
        for (name, records, freeSlots, marker) in cases {
            let bytes = items.file(records, freeSlots: freeSlots)
            let text = String(decoding: bytes, as: UTF8.self)
            Self.expectAt(Self.decodeError(snapshot: bytes), marker, in: text, name)
            // The same with a checksum: the position is the same.
            let sealed = sealedSnapshot(text)
            Self.expectAt(Self.decodeError(snapshot: sealed), marker, in: String(decoding: sealed, as: UTF8.self), name)
        }
        let owners = [
            (
                "dangling link of an embedded object",
                #"{"$id": 0, "id": 1, "pet": {"$id": 0, "name": "a", "friend": 9}}"#, #""friend": 9"#
            ),
            (
                "dangling link of an embedded object in a list",
                #"{"$id": 0, "id": 1, "pets": [{"$id": 0, "friend": 0}, {"$id": 1, "friend": 9}]}"#, #""friend": 9"#
            ),
            (
                "dangling to-one link beside embedded objects",
                #"{"$id": 0, "id": 1, "pets": [{"$id": 0}], "best": 5}"#, #""best": 5"#
            ),
        ]
        for (name, record, marker) in owners {
            let text = Self.ownersFile([record])
            Self.expectAt(Self.decodeError(snapshot: Array(text.utf8)), marker, in: text, name)
        }
    }

    /// Owners with embedded pets, and a link whose rule denies deleting its target.
    static let ownersSchema =
        #"[{"name": "Owner", "properties": [{"name": "id", "type": "int", "primaryKey": true}, "#
        + #"{"name": "pet", "type": "object", "optional": true, "objectType": "Pet"}, "#
        + #"{"name": "pets", "type": "object", "list": true, "objectType": "Pet"}, "#
        + #"{"name": "best", "type": "object", "optional": true, "objectType": "Owner"}, "#
        + #"{"name": "friends", "type": "object", "list": true, "objectType": "Owner"}, "#
        + #"{"name": "keeper", "type": "object", "optional": true, "objectType": "Owner", "deleteRule": "deny"}]}, "#
        + #"{"name": "Pet", "embedded": true, "properties": [{"name": "name", "type": "string"}, "#
        + #"{"name": "friend", "type": "object", "optional": true, "objectType": "Owner"}]}]"#

    static func ownersFile(_ records: [String]) -> String {
        #"{"format": "LiveObjects", "formatVersion": 1, "schemaVersion": 0, "commit": 0, "schema": "#
            + ownersSchema + #", "objects": {"Owner": ["# + records.joined(separator: ",\n") + "]}}\n"
    }

    /// Every error of applying a journal line says where the value, record or id it is about
    /// ends, with its line and column, after the line and its first byte.
    @Test func journalErrorsGiveTheByteOfTheirValue() throws {
        let items: [(String, String, String)] = [
            (
                "dangling link", #"{"commit":1,"changes":{"Item":{"update":[{"$id":0,"small":1,"next":9}]}}}"#,
                #""next":9"#
            ),
            (
                "dangling link of an insert",
                #"{"commit":1,"changes":{"Item":{"insert":[{"$id":5,"id":9,"next":9,"small":2}]}}}"#, #""next":9"#
            ),
            (
                "value out of range", #"{"commit":1,"changes":{"Item":{"update":[{"$id":0,"small":900,"name":"x"}]}}}"#,
                #""small":900"#
            ),
            (
                "value out of range in an insert",
                #"{"commit":1,"changes":{"Item":{"insert":[{"$id":5,"id":9,"small":900}]}}}"#, #""small":900"#
            ),
            (
                "primary key changed", #"{"commit":1,"changes":{"Item":{"update":[{"$id":0,"id":9,"small":1}]}}}"#,
                #""id":9"#
            ),
            (
                "update of a missing object", #"{"commit":1,"changes":{"Item":{"update":[{"$id":9,"small":1}]}}}"#,
                #"{"$id":9,"small":1}"#
            ),
            (
                "duplicate primary key", #"{"commit":1,"changes":{"Item":{"insert":[{"$id":5,"id":1}]}}}"#,
                #"{"$id":5,"id":1}"#
            ),
            ("deletion of a missing object", #"{"commit":1,"changes":{"Item":{"delete":[1,9]}}}"#, "9"),
        ]
        for (name, line, marker) in items {
            let journal = Self.header2 + sealedLine(line)
            let error = Self.decodeError(snapshot: Self.snapshot2, journal: journal)
            Self.expectAt(error, marker, in: journal, name)
            #expect(
                error?.message.hasPrefix("journal line 2 (at byte \(Self.header2.utf8.count)): ") == true, "\(name)")
        }
        let owners = Array(
            Self.ownersFile([
                #"{"$id": 0, "id": 1, "pet": {"$id": 0, "name": "a"}, "pets": [{"$id": 1, "name": "b"}]}"#,
                #"{"$id": 1, "id": 2, "keeper": 0}"#,
            ]).utf8)
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":2,"schemaVersion":0,"base":0}"#)
        let ownerLines: [(String, String, String)] = [
            (
                "dangling list entry",
                #"{"commit":1,"changes":{"Owner":{"update":[{"$id":1,"friends":[0,1,7,0],"best":0}]}}}"#,
                #""friends":[0,1,7"#
            ),
            (
                "embedded object inserted without a parent",
                #"{"commit":1,"changes":{"Pet":{"insert":[{"$id":2,"name":"c"}]}}}"#, #"{"$id":2,"name":"c"}"#
            ),
            (
                "embedded object given a second parent",
                #"{"commit":1,"changes":{"Owner":{"update":[{"$id":1,"pet":0,"best":0}]}}}"#, #""pet":0"#
            ),
            (
                "deletion refused by a deny rule",
                #"{"commit":1,"changes":{"Owner":{"delete":[0]},"Pet":{"delete":[0,1]}}}"#, #""Owner":{"delete":[0"#
            ),
        ]
        for (name, line, marker) in ownerLines {
            let journal = header + sealedLine(line)
            let error = Self.decodeError(snapshot: owners, journal: journal)
            Self.expectAt(error, marker, in: journal, name)
            #expect(error?.message.hasPrefix("journal line 2 (at byte \(header.utf8.count)): ") == true, "\(name)")
        }
        // The same lines without the fault load: the error was that one.
        let good = #"{"commit":1,"changes":{"Owner":{"update":[{"$id":1,"friends":[0,1,0],"best":0}]}}}"#
        _ = try FileStorage.decode(snapshot: owners, journal: Array((header + sealedLine(good)).utf8))
    }

    /// Opening a file (not only decoding its bytes) gives the same positions, and changes no
    /// file.
    @Test func danglingLinksAreRefusedAtTheirByteAndNoFileChanges() async throws {
        let owners = [
            #"{"$id": 0, "id": 1, "pets": [{"$id": 0, "name": "a"}]}"#,
            #"{"$id": 1, "id": 2, "best": 0, "friends": [0, 1]}"#,
        ]
        let good = Self.ownersFile(owners)
        let schema = try FileStorage.decode(snapshot: Array(good.utf8), journal: nil).store.schema
        let header = sealedLine(#"{"format":"LiveObjects journal","formatVersion":2,"schemaVersion":0,"base":0}"#)
        // A to-one link and a list entry naming a missing object, in the snapshot and in the
        // journal: the snapshot, the journal, and the marker the position is the end of.
        let cases: [(snapshot: String, journal: String?, marker: String)] = [
            (good.replacingOccurrences(of: #""best": 0"#, with: #""best": 77"#), nil, #""best": 77"#),
            (good.replacingOccurrences(of: "[0, 1]", with: "[0, 77, 1]"), nil, "[0, 77"),
            (
                good, header + sealedLine(#"{"commit":1,"changes":{"Owner":{"update":[{"$id":0,"best":77}]}}}"#),
                #""best":77"#
            ),
            (
                good, header + sealedLine(#"{"commit":1,"changes":{"Owner":{"update":[{"$id":0,"friends":[1,77]}]}}}"#),
                "[1,77"
            ),
        ]
        for (snapshot, journal, marker) in cases {
            let bytes = sealedSnapshot(snapshot)
            let fragment = Self.end(of: marker, in: journal ?? String(decoding: bytes, as: UTF8.self)).fragment
            try await Self.expectRefused(
                snapshot: bytes, journal: journal, ["which does not exist \(fragment)"], schema: schema)
        }
    }

    // MARK: Files

    @Test func staleTemporaryFileIsRemovedAtOpen() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("stale.json")
        let configuration = Realm.Configuration(file: url, schema: BadFileTests.schema)
        try await withRealm(configuration) { _ in }
        let temporary = URL(fileURLWithPath: url.path + ".tmp")
        try Data(repeating: 0x41, count: 4096).write(to: temporary)
        try await withRealm(configuration) { _ in
            #expect(!FileManager.default.fileExists(atPath: temporary.path))
        }
    }
}
