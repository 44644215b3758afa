import Foundation
import LiveObjects
import Persistence

/// `realms`: one realm per domain, each with its own types, storage, schema version and migration.
enum RealmsWalkthrough: Walkthrough {
    static let name = "realms"
    static let summary =
        "a realm per domain, pets in memory and auth in a file, each with its own types, version, migration"

    // The pets domain, in memory.

    final class Pet: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var species = ""
        @Persisted var keeper: Keeper?
    }

    final class Keeper: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted(originProperty: "keeper") var pets: LinkingObjects<Pet>
    }

    /// Version 2 of `Pet`: a birthday.
    final class PetV2: Object {
        override class var className: String { "Pet" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var species = ""
        @Persisted var keeper: Keeper?
        @Persisted var birthday: Date?
    }

    // The auth domain, on disk.

    final class Account: Object {
        @Persisted(primaryKey: true) var email = ""
        @Persisted var passwordHash = ""
    }

    final class Session: Object {
        @Persisted(primaryKey: true) var token = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
        @Persisted var account: Account?
        @Persisted var expires = Date(timeIntervalSince1970: 0)
    }

    /// Version 2 of `Account`: a display name, filled in by the migration.
    final class AccountV2: Object {
        override class var className: String { "Account" }
        @Persisted(primaryKey: true) var email = ""
        @Persisted var passwordHash = ""
        @Persisted var displayName = ""
    }

    /// Version 2 of `Session`: the same properties, linking to the new `Account`.
    final class SessionV2: Object {
        override class var className: String { "Session" }
        @Persisted(primaryKey: true) var token = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
        @Persisted var account: AccountV2?
        @Persisted var expires = Date(timeIntervalSince1970: 0)
    }

    static let token = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!

    static let petsConfiguration = Realm.Configuration(
        identifier: "playground.pets", objectTypes: [Pet.self, Keeper.self], schemaVersion: 1)
    static let petsV2Configuration = Realm.Configuration(
        identifier: "playground.pets", objectTypes: [PetV2.self, Keeper.self], schemaVersion: 2)

    static func run(_ narrator: Narrator) async throws {
        let directory = try makeTemporaryDirectory("realms")
        defer { removeTemporaryDirectory(directory) }
        let authFile = directory.appendingPathComponent("auth.liveobjects")
        var (pets, auth): (Realm?, Realm?) = try await openRealms(narrator, authFile: authFile)
        try await writeToEach(narrator, pets: pets!, auth: auth!)
        // The migration opens the file again: the realm of version 1 goes first.
        auth = nil
        auth = try await migrateAuth(narrator, authFile: authFile)
        let (keepers, rows) = try await readPets(narrator, pets!)
        // An in-memory realm's data goes with it: version 1 goes before version 2 opens.
        pets = nil
        try await copyPets(narrator, keepers: keepers, rows: rows)
        narrator.step("Clean up: save auth, close it, remove the temporary directory.")
        try await auth!.save()
        narrator.say("Files: \(fileNames(in: directory).joined(separator: ", "))")
        try narrator.check(fileNames(in: directory).contains("auth.liveobjects"), "the auth file is on disk")
        auth = nil
        removeTemporaryDirectory(directory)
        try narrator.check(!FileManager.default.fileExists(atPath: directory.path), "the temporary directory is gone")
    }

    /// Opens one realm per domain: pets in memory, auth in a file.
    static func openRealms(_ narrator: Narrator, authFile: URL) async throws -> (pets: Realm, auth: Realm) {
        narrator.step("Open one realm per domain: pets in memory, auth in a file.")
        narrator.code(
            """
            let pets = try await Realm.open(.init(identifier: "pets", objectTypes: [Pet.self, Keeper.self],
                                                  schemaVersion: 1))
            let auth = try await Realm.open(.init(file: authFile, objectTypes: [Account.self, Session.self],
                                                  schemaVersion: 1))
            """)
        let authConfiguration = Realm.Configuration(
            file: authFile, objectTypes: [Account.self, Session.self], schemaVersion: 1)
        let pets = try await Realm.open(petsConfiguration)
        let auth = try await Realm.open(authConfiguration)
        narrator.say("The auth file is \(authFile.lastPathComponent) in a temporary directory.")
        try narrator.check(
            pets.schema.objectSchemas.map(\.name).sorted() == ["Keeper", "Pet"]
                && auth.schema.objectSchemas.map(\.name).sorted() == ["Account", "Session"],
            "each realm has its own types")
        return (pets, auth)
    }

    /// Writes to each realm, and opens the pets identifier again.
    static func writeToEach(_ narrator: Narrator, pets: Realm, auth: Realm) async throws {
        narrator.step("Write to each; they are independent.")
        try await pets.write { pets in
            let kim = try pets.create(Keeper.self, value: ["id": 1, "name": "Kim"])
            _ = try pets.create(Pet.self, value: ["id": 1, "name": "Rex", "species": "dog", "keeper": kim])
            _ = try pets.create(Pet.self, value: ["id": 2, "name": "Tom", "species": "cat", "keeper": kim])
        }
        try await pets.write { pets in
            pets.object(ofType: Pet.self, forPrimaryKey: 2)?.name = "Tom the cat"
        }
        try await auth.write { auth in
            let ann = try auth.create(Account.self, value: ["email": "ann@example.com", "passwordHash": "5e88…"])
            _ = try auth.create(
                Session.self,
                value: ["token": token, "account": ann, "expires": Date(timeIntervalSince1970: 2_000_000_000)])
            _ = try auth.create(Account.self, value: ["email": "bob.smith@example.com", "passwordHash": "a1b2…"])
        }
        let petsVersion = await pets.version
        let authVersion = await auth.version
        narrator.say("Two commits in pets (version \(petsVersion)), one in auth (version \(authVersion)).")
        try narrator.check(petsVersion == 2 && authVersion == 1, "each realm counts its own commits")
        let keptBy = try await pets.read { pets in
            pets.object(ofType: Keeper.self, forPrimaryKey: 1)?.pets.map(\.name).sorted()
        }
        try narrator.expect(keptBy, ["Rex", "Tom the cat"], "Kim keeps Rex and Tom (links stay inside a realm)")
        try await narrator.expectError(.unknownType, "the pets realm does not know the auth types") {
            _ = try await pets.read { $0.objects(Account.self).count }
        }

        narrator.step("Opening an identifier that is open gives the same realm; with another version, an error.")
        let isSameRealm = try await Realm.open(petsConfiguration) === pets
        try narrator.check(isSameRealm, "Realm.open(petsConfiguration) returns the open pets realm")
        try await narrator.expectError(.schemaMismatch, "pets cannot be opened at version 2 while it is open at 1") {
            _ = try await Realm.open(petsV2Configuration)
        }
    }

    /// Opens the auth file at schema version 2, with a migration.
    static func migrateAuth(_ narrator: Narrator, authFile: URL) async throws -> Realm {
        narrator.step("Close auth and reopen its file at schema version 2, with a migration.")
        narrator.code(
            """
            final class Account: Object {                  // version 2
                @Persisted(primaryKey: true) var email = ""
                @Persisted var passwordHash = ""
                @Persisted var displayName = ""            // new
            }
            let options = FileStorage.Options(migration: { migration in
                try migration.enumerateObjects(ofType: "Account") { old, new in
                    guard case .string(let email) = old["email"] else { return }
                    // "bob.smith@example.com" -> "Bob Smith"
                    try new?.set("displayName", to: .string(displayName(from: email)))
                }
            })
            let auth = try await Realm.open(.init(file: authFile, objectTypes: [Account.self, Session.self],
                                                  schemaVersion: 2, options: options))
            """)
        let options = FileStorage.Options(migration: { migration in
            try migration.enumerateObjects(ofType: "Account") { old, new in
                guard case .string(let email) = old["email"] else { return }
                try new?.set("displayName", to: .string(displayName(from: email)))
            }
        })
        let auth = try await Realm.open(
            Realm.Configuration(
                file: authFile, objectTypes: [AccountV2.self, SessionV2.self], schemaVersion: 2, options: options))
        let (accounts, sessionAccount) = try await auth.read { auth in
            (
                auth.objects(AccountV2.self).sorted(by: \.email).map { [$0.email, $0.passwordHash, $0.displayName] },
                auth.object(ofType: SessionV2.self, forPrimaryKey: token)?.account?.displayName
            )
        }
        for account in accounts { narrator.say("Account \(account[0]): displayName \"\(account[2])\"") }
        try narrator.expect(
            accounts,
            [["ann@example.com", "5e88…", "Ann"], ["bob.smith@example.com", "a1b2…", "Bob Smith"]],
            "every account kept its values and got a display name")
        try narrator.expect(sessionAccount, "Ann", "the session still links to Ann's account")
        let header = try FileStorage.header(ofFile: authFile)
        try narrator.check(
            header.schemaVersion == 2 && header.schema["Account"]?["displayName"] != nil,
            "the file now records schema version 2 and the new property")
        return auth
    }

    /// Reads the keepers and pets out of the pets realm of version 1.
    static func readPets(_ narrator: Narrator, _ pets: Realm) async throws -> (keepers: [(Int, String)], rows: [PetRow])
    {
        narrator.step("Pets lives in memory: its migration copies the data into the new version.")
        narrator.say(
            """
            An in-memory realm's data goes when the realm closes, so there is no file to migrate:
            read the values out, let the realm go, open version 2 and write them back, transformed.
            """)
        narrator.code(
            """
            let rows = try await pets.read { $0.objects(Pet.self).map { ($0.id, $0.name, $0.species, $0.keeper?.id) } }
            pets = nil                                      // version 1 closes
            let petsV2 = try await Realm.open(.init(identifier: "pets", objectTypes: [PetV2.self, Keeper.self],
                                                    schemaVersion: 2))
            try await petsV2.write { ... create the keepers and the pets again, with a birthday where known ... }
            """)
        let keepers = try await pets.read { pets in pets.objects(Keeper.self).map { ($0.id, $0.name) } }
        let rows = try await pets.read { pets in
            pets.objects(Pet.self).sorted(by: \.id).map {
                PetRow(id: $0.id, name: $0.name, species: $0.species, keeper: $0.keeper?.id)
            }
        }
        return (keepers, rows)
    }

    /// Opens pets at version 2 and writes the keepers and pets back, transformed.
    static func copyPets(_ narrator: Narrator, keepers: [(Int, String)], rows: [PetRow]) async throws {
        let petsV2 = try await Realm.open(petsV2Configuration)
        try narrator.expect(try await petsV2.read { $0.objects(PetV2.self).count }, 0, "version 2 opens empty")
        try await petsV2.write { pets in
            for (id, name) in keepers { _ = try pets.create(Keeper.self, value: ["id": id, "name": name]) }
            for row in rows {
                let pet = try pets.create(PetV2.self, value: ["id": row.id, "name": row.name, "species": row.species])
                pet.keeper = row.keeper.flatMap { pets.object(ofType: Keeper.self, forPrimaryKey: $0) }
                if row.species == "dog" { pet.birthday = Date(timeIntervalSince1970: 1_600_000_000) }
            }
        }
        let copied = try await petsV2.read { pets in
            pets.objects(PetV2.self).sorted(by: \.id).map {
                PetRow(id: $0.id, name: $0.name, species: $0.species, keeper: $0.keeper?.id)
            }
        }
        let birthdays = try await petsV2.read { $0.objects(PetV2.self).filter { $0.birthday != nil }.count }
        try narrator.expect(copied, rows, "every pet came over with its values and its keeper")
        try narrator.expect(birthdays, 1, "the new birthday is set where it is known (Rex)")
        try narrator.expect(petsV2.configuration.schemaVersion, 2, "pets is now at version 2")
    }

    /// A pet's values, outside the realm.
    struct PetRow: Equatable, Sendable {
        var id: Int
        var name: String
        var species: String
        var keeper: Int?
    }

    /// "bob.smith@example.com" → "Bob Smith".
    static func displayName(from email: String) -> String {
        let local = email.split(separator: "@").first ?? ""
        return local.split(separator: ".").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }
}
