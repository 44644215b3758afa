import Foundation
import LiveObjects
import Persistence

/// A small realm that the query and journal targets start from: people with dogs, addresses
/// (embedded), nicknames (optional), lists of tags and scores, and links both ways.
enum Fixture {
    /// Whether the targets print why an input was refused (`FUZZ_VERBOSE=1`), to check seeds.
    static let verbose = ProcessInfo.processInfo.environment["FUZZ_VERBOSE"] != nil

    static let schema =
        #"[{"name": "Person", "properties": [{"name": "id", "type": "int", "primaryKey": true}, "#
        + #"{"name": "name", "type": "string"}, {"name": "nickname", "type": "string", "optional": true}, "#
        + #"{"name": "age", "type": "int"}, {"name": "small", "type": "int8"}, {"name": "score", "type": "double"}, "#
        + #"{"name": "ratio", "type": "float", "optional": true}, {"name": "active", "type": "bool"}, "#
        + #"{"name": "born", "type": "date"}, {"name": "blob", "type": "data"}, {"name": "uuid", "type": "uuid", "optional": true}, "#
        + #"{"name": "tags", "type": "string", "list": true}, {"name": "scores", "type": "int", "list": true}, "#
        + #"{"name": "friend", "type": "object", "optional": true, "objectType": "Person"}, "#
        + #"{"name": "dogs", "type": "object", "list": true, "objectType": "Dog"}, "#
        + #"{"name": "address", "type": "object", "optional": true, "objectType": "Address"}]}, "#
        + #"{"name": "Dog", "properties": [{"name": "name", "type": "string", "indexed": true}, {"name": "age", "type": "int"}, "#
        + #"{"name": "owners", "type": "linkingObjects", "list": true, "objectType": "Person", "originProperty": "dogs"}]}, "#
        + #"{"name": "Address", "embedded": true, "properties": [{"name": "city", "type": "string"}, {"name": "zip", "type": "int", "optional": true}]}]"#

    static let snapshot =
        #"{"format": "LiveObjects", "formatVersion": 1, "schemaVersion": 0, "commit": 0, "schema": "# + schema
        + #", "objects": {"Person": ["#
        + #"{"$id": 0, "id": 1, "name": "Ana", "nickname": "an", "age": 31, "small": -3, "score": 2.5, "ratio": 0.5, "active": true, "born": 0.0, "blob": "AAE=", "uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "tags": ["a", "Bé"], "scores": [1, 2, 3], "friend": 1, "dogs": [0, 1], "address": {"$id": 0, "city": "Lyon", "zip": 69000}}, "#
        + #"{"$id": 1, "id": 2, "name": "bob", "nickname": null, "age": 4, "small": 7, "score": "NaN", "ratio": null, "active": false, "born": -1e9, "blob": "", "uuid": null, "tags": [], "scores": [], "friend": 0, "dogs": [1], "address": null}, "#
        + #"{"$id": 2, "id": 3, "name": "Ćelia", "nickname": "", "age": -7, "small": 0, "score": "-Infinity", "ratio": "Infinity", "active": true, "born": 1e9, "blob": "/w==", "uuid": null, "tags": ["x"], "scores": [9], "friend": null, "dogs": [], "address": {"$id": 1, "city": "", "zip": null}}"#
        + #"], "Dog": [{"$id": 0, "name": "Rex", "age": 3}, {"$id": 1, "name": "fido", "age": 11}, {"$id": 2, "name": "", "age": 0}]}}"#
        + "\n"

    /// A fresh store holding the fixture.
    static func store() -> (store: Store, schemaVersion: UInt64, commit: UInt64) {
        do {
            return try FileStorage.decode(snapshot: Array(snapshot.utf8), journal: nil)
        } catch {
            fatalError("the fixture does not load: \(error)")
        }
    }
}
