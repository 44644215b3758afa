import Foundation
import LiveObjects
import Testing

@testable import Persistence

enum Seat: String, PersistableEnum {
    case aisle, window
}

final class Passenger: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var seat = Seat.aisle
    @Persisted var wishes: List<Seat>
}

/// Enum properties in a file: kept as raw values; a value that is no case, written by a
/// program that does not know the enum, makes the open fail with the object named and changes
/// no file.
@Suite struct EnumFileTests {
    /// The same type, as schema-as-data (the shell's view): the raw values are plain strings.
    static let plain = Schema([
        ObjectSchema(
            name: "Passenger",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "seat", type: .string),
                Property(name: "wishes", type: .string, isList: true),
            ])
    ])

    @Test func casesSurviveTheFileAndAnUnknownRawValueFailsTheOpen() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("seats.json")
        try await withRealm(Realm.Configuration(file: url, objectTypes: [Passenger.self])) { realm in
            try await realm.write { realm in
                let p = Passenger()
                p.id = 1
                p.seat = .window
                p.wishes.append(.aisle)
                try realm.add(p)
            }
        }
        let seen = try await withRealm(Realm.Configuration(file: url, schema: Self.plain)) { realm in
            try await realm.read { realm in
                let p = try realm.dynamicObject(ofType: "Passenger", forPrimaryKey: 1)
                return [p?["seat"], p?["wishes"]]
            }
        }
        #expect(seen == [.string("window"), .list([.string("aisle")])])
        for (property, value) in [("seat", PropertyValue.string("middle")), ("wishes", .list(["window", "wing"]))] {
            try await withRealm(Realm.Configuration(file: url, schema: Self.plain)) { realm in
                try await realm.write { realm in
                    _ = try realm.dynamicCreate("Passenger", value: ["id": 2, property: value], update: .modified)
                }
                try await realm.save()
            }
            let bytes = fileBytes(url)
            var error: LiveObjectsError?
            do {
                _ = try await Realm.open(Realm.Configuration(file: url, objectTypes: [Passenger.self]))
            } catch let thrown {
                error = thrown
            }
            #expect(error?.code == .typeMismatch, "\(String(describing: error))")
            #expect(error?.objectType == "Passenger" && error?.property == property && error?.primaryKey == 2)
            #expect(fileBytes(url) == bytes)
            // Mended by the program that wrote it, the file opens.
            try await withRealm(Realm.Configuration(file: url, schema: Self.plain)) { realm in
                try await realm.write { realm in
                    try realm.dynamicObject(ofType: "Passenger", forPrimaryKey: 2)?.set(
                        property, to: property == "seat" ? "aisle" : .list(["window"]))
                }
            }
            let wishes = try await withRealm(Realm.Configuration(file: url, objectTypes: [Passenger.self])) { realm in
                try await realm.read { $0.object(ofType: Passenger.self, forPrimaryKey: 2)?.wishes.map(\.rawValue) }
            }
            #expect(wishes == (property == "seat" ? [] : ["window"]))
        }
    }
}
