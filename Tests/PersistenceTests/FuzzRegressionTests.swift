import Foundation
import LiveObjects
import Testing

@testable import Persistence

/// Inputs the fuzz targets (Fuzz/) found wrong, kept so they stay fixed, and the file size
/// limit.
@Suite struct FuzzRegressionTests {
    static let schemaText =
        #"[{"name": "Person", "properties": [{"name": "id", "type": "int", "primaryKey": true}, "#
        + #"{"name": "address", "type": "object", "optional": true, "objectType": "Address"}, "#
        + #"{"name": "past", "type": "object", "list": true, "objectType": "Address"}]}, "#
        + #"{"name": "Address", "embedded": true, "properties": [{"name": "city", "type": "string"}]}]"#

    static let snapshot =
        #"{"format": "LiveObjects", "formatVersion": 1, "schemaVersion": 0, "commit": 0, "schema": "# + schemaText
        + #", "objects": {"Person": [{"$id": 0, "id": 1, "address": {"$id": 0, "city": "Lyon"}, "past": [{"$id": 1, "city": "Nice"}]}, "#
        + #"{"$id": 1, "id": 2, "address": null, "past": []}]}}"# + "\n"

    static let journalHeader = #"{"format":"LiveObjects journal","formatVersion":1,"schemaVersion":0,"base":0}"# + "\n"

    static func decode(journal lines: [String]) throws(LiveObjectsError) -> (
        store: Store, schemaVersion: UInt64, commit: UInt64
    ) {
        try FileStorage.decode(
            snapshot: Array(snapshot.utf8), journal: Array((journalHeader + lines.map { $0 + "\n" }.joined()).utf8))
    }

    /// Journal lines that leave an embedded object without its one parent: the writer never
    /// writes them (it deletes an embedded object with its link), and replaying them used to
    /// leave an orphan or a shared embedded object that the next save lost or duplicated.
    static let orphaningLines: [(String, String)] = [
        (
            "link set to null without deleting the embedded object",
            #"{"commit":1,"changes":{"Person":{"update":[{"$id":0,"address":null}]}}}"#
        ),
        (
            "list emptied without deleting its embedded objects",
            #"{"commit":1,"changes":{"Person":{"update":[{"$id":0,"past":[]}]}}}"#
        ),
        (
            "embedded object inserted without a parent",
            #"{"commit":1,"changes":{"Address":{"insert":[{"$id":2,"city":"Metz"}]}}}"#
        ),
        (
            "embedded object given a second parent",
            #"{"commit":1,"changes":{"Person":{"update":[{"$id":1,"address":0}]}}}"#
        ),
        (
            "embedded object twice in a list",
            #"{"commit":1,"changes":{"Person":{"update":[{"$id":0,"past":[1,1]}]}}}"#
        ),
        (
            "embedded object both linked and in a list",
            #"{"commit":1,"changes":{"Person":{"update":[{"$id":0,"past":[1,0]}]}}}"#
        ),
    ]

    @Test(arguments: 0..<orphaningLines.count) func journalThatBreaksEmbeddedParentsIsCorrupt(_ index: Int) throws {
        let (name, line) = Self.orphaningLines[index]
        do {
            _ = try Self.decode(journal: [line])
            Issue.record("\(name): the journal replayed")
        } catch {
            #expect(error.code == .corruptFile, "\(name): \(error)")
            #expect(error.message.contains("journal line 2"), "\(name): \(error)")
        }
        // As the next line after a good one, too (the good one must not be kept half-checked).
        let good = #"{"commit":1,"changes":{"Person":{"update":[{"$id":1,"id":2}]}}}"#
        let shifted = line.replacingOccurrences(of: #""commit":1"#, with: #""commit":2"#)
        #expect(throws: LiveObjectsError.self, "\(name)") { _ = try Self.decode(journal: [good, shifted]) }
    }

    @Test func journalsTheWriterWritesForEmbeddedObjectsReplay() throws {
        let lines = [
            // Replace the address: the old one is deleted, the new one inserted and linked.
            #"{"commit":1,"changes":{"Address":{"insert":[{"$id":2,"city":"Metz"}],"delete":[0]},"Person":{"update":[{"$id":0,"address":2}]}}}"#,
            // Empty the list, deleting its element.
            #"{"commit":2,"changes":{"Address":{"delete":[1]},"Person":{"update":[{"$id":0,"past":[]}]}}}"#,
            // Delete a person with its address.
            #"{"commit":3,"changes":{"Address":{"delete":[2]},"Person":{"delete":[0]}}}"#,
            // A deleted parent takes its embedded objects along even when they are not listed.
            #"{"commit":4,"changes":{"Address":{"insert":[{"$id":3,"city":"Metz"}]},"Person":{"update":[{"$id":1,"address":3}]}}}"#,
            #"{"commit":5,"changes":{"Person":{"delete":[1]}}}"#,
        ]
        let loaded = try Self.decode(journal: lines)
        #expect(loaded.commit == 5)
        let saved = try FileStorage.encode(loaded.store, schemaVersion: 0, commit: 5)
        let again = try FileStorage.decode(snapshot: saved, journal: nil)
        #expect(try FileStorage.encode(again.store, schemaVersion: 0, commit: 5) == saved)
        let text = String(decoding: saved, as: UTF8.self)
        #expect(text.contains(#""Person": []"#), "\(text)")
        #expect(text.contains(#""freeSlots""#), "\(text)")
    }

    /// A snapshot whose schema declares `LinkingObjects` without `"list": true`: refused when
    /// the schema is read (it let `owners == owners` crash the query engine).
    @Test func linkingObjectsThatIsNotAListIsACorruptFile() throws {
        let schema =
            #"[{"name": "Person", "properties": [{"name": "dogs", "type": "object", "list": true, "objectType": "Dog"}]}, "#
            + #"{"name": "Dog", "properties": [{"name": "owners", "type": "linkingObjects", "objectType": "Person", "originProperty": "dogs"}]}]"#
        let text =
            #"{"format": "LiveObjects", "formatVersion": 1, "schemaVersion": 0, "commit": 0, "schema": "# + schema
            + #", "objects": {}}"# + "\n"
        #expect { _ = try FileStorage.decode(snapshot: Array(text.utf8), journal: nil) } throws: {
            ($0 as! LiveObjectsError).code == .corruptFile
        }
        let fixed = text.replacingOccurrences(
            of: #""linkingObjects", "objectType""#, with: #""linkingObjects", "list": true, "objectType""#)
        #expect(try FileStorage.decode(snapshot: Array(fixed.utf8), journal: nil).commit == 0)
    }

    @Test func theFuzzSeedJournalOrphaningAnAddressIsRefusedOnOpen() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("orphan.json")
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        try Data(Self.snapshot.utf8).write(to: url)
        try Data((Self.journalHeader + Self.orphaningLines[0].1 + "\n").utf8).write(to: journalURL)
        let before = (fileBytes(url), fileBytes(journalURL))
        let schema = try FileStorage.header(ofFile: url).schema
        await #expect {
            _ = try await Realm.open(Realm.Configuration(file: url, schema: schema))
        } throws: { ($0 as! LiveObjectsError).code == .corruptFile }
        #expect(fileBytes(url) == before.0)
        #expect(fileBytes(journalURL) == before.1)
    }

    @Test func filesLargerThanTheMaximumAreRefusedBeforeReading() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("big.json")
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        try Data(Self.snapshot.utf8).write(to: url)
        let schema = try FileStorage.header(ofFile: url).schema
        let size = Self.snapshot.utf8.count

        // The snapshot: one byte over, refused; at the size, opened.
        for (maximum, opens) in [(size - 1, false), (size, true)] {
            let configuration = Realm.Configuration(
                file: url, schema: schema, options: .init(journal: false, maximumFileSize: maximum))
            if opens {
                let count = try await withRealm(configuration) { realm in
                    try await realm.read { try $0.dynamicObjects("Person").count }
                }
                #expect(count == 2)
            } else {
                do {
                    _ = try await Realm.open(configuration)
                    Issue.record("a file over the maximum opened")
                } catch {
                    #expect(error.code == .limitExceeded)
                    #expect(error.file == url.standardizedFileURL.path)
                    #expect(error.message.contains("\(size) bytes"))
                }
            }
        }

        // The journal, checked on its own size.
        let journal = Self.journalHeader + String(repeating: " ", count: size) + "\n"
        try Data(journal.utf8).write(to: journalURL)
        let before = (fileBytes(url), fileBytes(journalURL))
        do {
            _ = try await Realm.open(
                Realm.Configuration(file: url, schema: schema, options: .init(maximumFileSize: size)))
            Issue.record("a journal over the maximum was read")
        } catch {
            #expect(error.code == .limitExceeded)
            #expect(error.file?.hasSuffix(".journal") == true, "\(error)")
        }
        #expect(fileBytes(url) == before.0)
        #expect(fileBytes(journalURL) == before.1)
    }
}
