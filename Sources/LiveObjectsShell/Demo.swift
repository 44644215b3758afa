import Foundation
import LiveObjects
import LiveObjectsJSON

/// The demo data set of `liveobj --demo`: people with embedded addresses, their dogs, the dogs'
/// toys and dog clubs, with names in several scripts.
package enum Demo {
    /// The demo schema, as data (the same types as the pet models of the tests).
    package static let schema = Schema([
        ObjectSchema(
            name: "Person",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "name", type: .string),
                Property(name: "age", type: .int),
                .list("dogs", of: "Dog"),
                .link("address", to: "Address"),
                .linkingObjects("clubs", from: "DogClub", property: "members"),
            ]),
        ObjectSchema(
            name: "Dog",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "name", type: .string, isIndexed: true),
                Property(name: "age", type: .int),
                .link("owner", to: "Person"),
                .list("toys", of: "DogToy", deleteRule: .cascade),
                .linkingObjects("walkers", from: "Person", property: "dogs"),
            ]),
        ObjectSchema(
            name: "DogToy",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "name", type: .string),
                .linkingObjects("dogs", from: "Dog", property: "toys"),
            ]),
        ObjectSchema(
            name: "DogClub",
            properties: [
                Property(name: "name", type: .string, isPrimaryKey: true),
                .list("members", of: "Person"),
                .link("president", to: "Person", deleteRule: .deny),
            ]),
        ObjectSchema(
            name: "Address",
            properties: [
                Property(name: "street", type: .string),
                Property(name: "city", type: .string),
            ], isEmbedded: true),
    ])

    static let people: [JSONValue] = [
        ["id": 1, "name": "Ann Lee", "age": 34, "address": ["street": "12 Harbour Road", "city": "Dublin"]],
        ["id": 2, "name": "Bob Martin", "age": 41, "address": ["street": "5 rue des Lilas", "city": "Lyon"]],
        ["id": 3, "name": "Chloé Dubois", "age": 28, "address": ["street": "9 quai Saint-Michel", "city": "Paris"]],
        ["id": 4, "name": "Дмитрий Иванов", "age": 37, "address": ["street": "ул. Ленина, 7", "city": "Москва"]],
        ["id": 5, "name": "田中さくら", "age": 25, "address": ["street": "千代田1-1", "city": "東京"]],
        ["id": 6, "name": "Zoë Ng", "age": 52],
    ]
    static let toys: [JSONValue] = [
        ["id": 1, "name": "squeaky bone"], ["id": 2, "name": "rope"], ["id": 3, "name": "tennis ball"],
        ["id": 4, "name": "frisbee"], ["id": 5, "name": "мячик"], ["id": 6, "name": "ぬいぐるみ"],
    ]
    static let dogs: [JSONValue] = [
        ["id": 1, "name": "Rex", "age": 3, "owner": 1, "toys": [1, 2]],
        ["id": 2, "name": "Fido", "age": 7, "owner": 1, "toys": [3]],
        ["id": 3, "name": "Bella", "age": 1, "owner": 2],
        ["id": 4, "name": "Max", "age": 5, "owner": 3, "toys": [4]],
        ["id": 5, "name": "Шарик", "age": 9, "owner": 4, "toys": [5]],
        ["id": 6, "name": "ポチ", "age": 2, "owner": 5, "toys": [6]],
        ["id": 7, "name": "Luna", "age": 4],
    ]
    /// Who walks which dogs (`Person.dogs`).
    static let walks: [(Int64, [Int64])] = [(1, [1, 2]), (2, [3, 7]), (3, [4]), (4, [5]), (5, [6]), (6, [7])]
    static let clubs: [JSONValue] = [
        ["name": "Barkers", "members": [1, 2, 3], "president": 1],
        ["name": "Собачники", "members": [4, 6]],
        ["name": "朝の散歩", "members": [5, 1], "president": 5],
    ]

    /// Opens an in-memory realm with the demo schema and data.
    package static func open() async throws -> Realm {
        let realm = try await Realm.open(.init(identifier: "liveobj-demo-\(UUID())", schema: schema))
        try await realm.write { realm in try fill(realm) }
        return realm
    }

    /// Creates the demo objects, inside a write.
    static func fill(_ realm: isolated Realm) throws {
        for person in people { _ = try Operations.create("Person", person, realm) }
        for toy in toys { _ = try Operations.create("DogToy", toy, realm) }
        for dog in dogs { _ = try Operations.create("Dog", dog, realm) }
        for (person, walked) in walks {
            let object = try Operations.find("Person", .primaryKey(.int(person)), realm)
            try Operations.apply([("dogs", .array(walked.map { .int($0) }))], to: object, realm)
        }
        for club in clubs { _ = try Operations.create("DogClub", club, realm) }
    }
}
