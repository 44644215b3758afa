import Foundation
import LiveObjects
import LiveObjectsTestSupport

/// The `liveobj` shell: parses command lines and runs them against a realm.
///
/// This first version knows the demo realm and the read-only commands; the full command set
/// arrives with the shell issue.
public final class Shell {
    let realm: Realm
    var output: (String) -> Void
    var errorOutput: (String) -> Void

    /// Creates a shell over a realm, writing results and errors through the given closures.
    public init(
        realm: Realm, output: @escaping (String) -> Void, errorOutput: @escaping (String) -> Void
    ) {
        self.realm = realm
        self.output = output
        self.errorOutput = errorOutput
    }

    /// Opens an in-memory realm filled with the demo data set (people, dogs, toys, clubs).
    public static func openDemoRealm() async throws -> Realm {
        let realm = try await Realm.open(.init(identifier: "demo-\(UUID())", objectTypes: petModelTypes))
        try await realm.write { realm in
            let people = ["Ann", "Bob", "Chloé", "Дмитрий"].enumerated().map { i, name in
                try? realm.create(Person.self, value: ["id": i + 1, "name": name, "age": 25 + 7 * i])
            }
            let dogs = ["Rex", "Fido", "bella", "Шарик", "Max", "Élan"]
            for (i, name) in dogs.enumerated() {
                let owner = people[i % people.count]
                let dog = try realm.create(
                    Dog.self,
                    value: ["id": i + 1, "name": name, "age": 1 + (i * 3) % 12, "owner": owner as Any])
                owner?.dogs.append(dog)
                dog.toys.append(try realm.create(DogToy.self, value: ["id": i + 1, "name": "toy \(i + 1)"]))
            }
            _ = try realm.create(
                DogClub.self,
                value: ["name": "Barkers", "members": [people[0] as Any, people[1] as Any]])
        }
        return realm
    }

    /// Runs one command line. Returns false when the shell should stop.
    public func run(_ line: String) async -> Bool {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let command = words.first else { return true }
        switch command {
        case "quit", "exit":
            return false
        case "help":
            output(Self.help)
        case "types":
            for type in realm.schema.objectSchemas {
                output(type.name + (type.isEmbedded ? " (embedded)" : ""))
            }
        case "schema":
            let types = words.count > 1 ? realm.schema.objectSchemas.filter { $0.name == words[1] } : realm.schema.objectSchemas
            if types.isEmpty {
                errorOutput("Error: there is no object type named '\(words[1])'")
            }
            for type in types { output(type.description) }
        case "count":
            guard words.count > 1 else {
                errorOutput("Error: usage: count TYPE")
                return true
            }
            let name = words[1]
            do {
                let n = try await realm.read { realm in try realm.dynamicObjects(name).count }
                output(String(n))
            } catch {
                errorOutput("Error: \(error)")
            }
        default:
            errorOutput("Error: unknown command '\(command)'; type 'help' for the list")
        }
        return true
    }

    static let help = """
        Commands:
          help            show this list
          types           list the object types
          schema [TYPE]   show the schema of one or every type
          count TYPE      count the objects of a type
          quit            leave the shell
        """
}
