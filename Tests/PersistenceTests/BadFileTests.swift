import Foundation
import LiveObjects
import Testing

@testable import Persistence

/// Each kind of bad file: the open fails with the right typed error, and the file's bytes (and
/// the journal's) are unchanged.
@Suite struct BadFileTests {
    static let schema = Schema([
        ObjectSchema(
            name: "Item",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "small", type: .int8),
                Property(name: "name", type: .string),
                Property(name: "blob", type: .data),
                Property(name: "uuid", type: .uuid),
                .link("next", to: "Item"),
            ])
    ])

    static let schemaText =
        #"[{"name": "Item", "properties": [{"name": "id", "type": "int", "primaryKey": true}, {"name": "small", "type": "int8"}, {"name": "name", "type": "string"}, {"name": "blob", "type": "data"}, {"name": "uuid", "type": "uuid"}, {"name": "next", "type": "object", "optional": true, "objectType": "Item"}]}]"#

    static func file(version: Int = 1, schemaVersion: Int = 0, schema: String = schemaText, objects: String) -> String {
        #"{"format": "LiveObjects", "formatVersion": \#(version), "schemaVersion": \#(schemaVersion), "commit": 0, "schema": \#(schema), "objects": \#(objects)}"#
            + "\n"
    }

    static let good1 =
        #"{"$id": 0, "id": 1, "small": 5, "name": "a", "blob": "AAE=", "uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "next": 1}"#
    static let good2 =
        #"{"$id": 1, "id": 2, "small": -5, "name": "b", "blob": "", "uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "next": null}"#

    static func items(_ records: String...) -> String { #"{"Item": ["# + records.joined(separator: ", ") + "]}" }

    /// Name, snapshot text (nil: no snapshot), journal text (nil: none), expected error code.
    static let catalog: [(String, String?, String?, LiveObjectsError.Code)] = [
        ("empty file", "", nil, .corruptFile),
        ("not JSON", "hello, world\n", nil, .corruptFile),
        ("binary garbage", String(decoding: [0xFF, 0xFE, 0x00, 0x01], as: UTF8.self), nil, .corruptFile),
        ("truncated", String(file(objects: items(good1, good2)).prefix(200)), nil, .corruptFile),
        ("trailing bytes", file(objects: items(good1, good2)) + "{}", nil, .corruptFile),
        (
            "another format", file(objects: "{}").replacingOccurrences(of: #""LiveObjects""#, with: #""Other""#), nil,
            .corruptFile
        ),
        ("future format version", file(version: 4, objects: "{}"), nil, .corruptFile),
        ("format 2 without its checksum", file(version: 2, objects: "{}"), nil, .corruptFile),
        (
            "invalid schema",
            file(
                schema: #"[{"name": "Item", "properties": [{"name": "x", "type": "object", "objectType": "Nope"}]}]"#,
                objects: "{}"), nil, .corruptFile
        ),
        (
            "unknown property type",
            file(schema: #"[{"name": "Item", "properties": [{"name": "x", "type": "decimal256"}]}]"#, objects: "{}"),
            nil,
            .corruptFile
        ),
        ("header after objects", #"{"objects": {}, "format": "LiveObjects"}"# + "\n", nil, .corruptFile),
        ("unknown type", file(objects: #"{"Thing": []}"#), nil, .corruptFile),
        ("unknown property", file(objects: items(#"{"$id": 0, "id": 1, "color": "red"}"#)), nil, .corruptFile),
        ("wrong value type", file(objects: items(#"{"$id": 0, "id": "one"}"#)), nil, .corruptFile),
        ("int8 out of range", file(objects: items(#"{"$id": 0, "id": 1, "small": 300}"#)), nil, .corruptFile),
        ("fraction for an int", file(objects: items(#"{"$id": 0, "id": 1.5}"#)), nil, .corruptFile),
        (
            "null for a required property", file(objects: items(#"{"$id": 0, "id": 1, "name": null}"#)), nil,
            .corruptFile
        ),
        ("bad base64", file(objects: items(#"{"$id": 0, "id": 1, "blob": "!!"}"#)), nil, .corruptFile),
        ("bad UUID", file(objects: items(#"{"$id": 0, "id": 1, "uuid": "nope"}"#)), nil, .corruptFile),
        (
            "raw control character in a string",
            file(objects: items(#"{"$id": 0, "id": 1, "name": "\#u{FFFD}"}"#)).replacingOccurrences(
                of: "\u{FFFD}", with: "\u{1}"), nil, .corruptFile
        ),
        ("missing id", file(objects: items(#"{"id": 1}"#)), nil, .corruptFile),
        ("duplicate id", file(objects: items(#"{"$id": 0, "id": 1}"#, #"{"$id": 0, "id": 2}"#)), nil, .corruptFile),
        (
            "duplicate primary key", file(objects: items(#"{"$id": 0, "id": 1}"#, #"{"$id": 1, "id": 1}"#)), nil,
            .corruptFile
        ),
        ("negative id", file(objects: items(#"{"$id": -1, "id": 1}"#)), nil, .corruptFile),
        ("huge id", file(objects: items(#"{"$id": 2000000000, "id": 1}"#)), nil, .corruptFile),
        ("link to a missing object", file(objects: items(#"{"$id": 0, "id": 1, "next": 7}"#)), nil, .corruptFile),
        ("bare NaN", file(objects: items(#"{"$id": 0, "id": NaN}"#)), nil, .corruptFile),
        ("higher schema version", file(schemaVersion: 5, objects: "{}"), nil, .schemaVersionMismatch),
        (
            "journal without snapshot", nil,
            #"{"format": "LiveObjects journal", "formatVersion": 1, "schemaVersion": 0, "base": 0}"# + "\n",
            .corruptFile
        ),
        (
            "damaged journal line", file(objects: items(good1, good2)),
            #"{"format":"LiveObjects journal","formatVersion":1,"schemaVersion":0,"base":0}"# + "\n"
                + #"{"commit":1,"changes":{"Item":{"update":[{"$id":0,"small":7}]}}}"# + "\n"
                + #"{"commit":2,"changes":{"Item":{"update":[{"$id":0,"small":7}}}}"# + "\n"
                + #"{"commit":3,"changes":{"Item":{"update":[{"$id":0,"small":8}]}}}"# + "\n",
            .corruptFile
        ),
        (
            "missing journal commit", file(objects: items(good1, good2)),
            #"{"format":"LiveObjects journal","formatVersion":1,"schemaVersion":0,"base":0}"# + "\n"
                + #"{"commit":2,"changes":{"Item":{"update":[{"$id":0,"small":7}]}}}"# + "\n"
                + #"{"commit":3,"changes":{"Item":{"update":[{"$id":0,"small":8}]}}}"# + "\n",
            .corruptFile
        ),
        (
            "journal deletes a missing object", file(objects: items(good1, good2)),
            #"{"format":"LiveObjects journal","formatVersion":1,"schemaVersion":0,"base":0}"# + "\n"
                + #"{"commit":1,"changes":{"Item":{"delete":[9]}}}"# + "\n",
            .corruptFile
        ),
        (
            "not a journal", file(objects: items(good1, good2)),
            #"{"format":"something else"}"# + "\n" + #"{"commit":1,"changes":{}}"# + "\n", .corruptFile
        ),
    ]

    @Test func goodFileOpens() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("good.json")
        try Data(Self.file(objects: Self.items(Self.good1, Self.good2)).utf8).write(to: url)
        let names = try await withRealm(
            Realm.Configuration(file: url, schema: Self.schema, options: .init(journal: false))
        ) { realm in
            try await realm.read { realm in
                try realm.dynamicObjects("Item").map { try $0.linkedObject("next")?["name"] ?? $0["name"] }
            }
        }
        #expect(names == ["b", "b"])
    }

    @Test(arguments: 0..<catalog.count) func badFileIsRefusedAndUntouched(_ index: Int) async throws {
        let (name, snapshot, journal, code) = Self.catalog[index]
        let url = try makeTemporaryDirectory().appendingPathComponent("bad.json")
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        if let snapshot { try Data(snapshot.utf8).write(to: url) }
        if let journal { try Data(journal.utf8).write(to: journalURL) }
        let before = (fileBytes(url), fileBytes(journalURL))
        do {
            _ = try await Realm.open(Realm.Configuration(file: url, schema: Self.schema))
            Issue.record("\(name): the file opened")
        } catch {
            #expect(error.code == code, "\(name): \(error)")
            #expect(error.file != nil, "\(name): the error names no file: \(error)")
            // Every error about the bytes of a file says where they are (a missing snapshot has
            // none to point at).
            if code == .corruptFile && snapshot != nil {
                #expect(error.message.contains("byte "), "\(name): no position: \(error)")
                #expect(error.inputLocation != nil, "\(name): no position: \(error)")
            }
        }
        #expect(fileBytes(url) == before.0, "\(name): the file changed")
        #expect(fileBytes(journalURL) == before.1, "\(name): the journal changed")
        #expect(!FileManager.default.fileExists(atPath: url.path + ".tmp"), "\(name): a temporary file was left")
    }

    @Test func directoryInsteadOfAFileIsAnIOError() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("dir.json")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        await #expect {
            _ = try await Realm.open(Realm.Configuration(file: url, schema: Self.schema))
        } throws: { ($0 as! LiveObjectsError).code == .io }
    }
}
