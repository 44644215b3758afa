import Foundation
import LiveObjects
import Testing

@testable import Persistence

/// A wrapped identifier, stored as its string.
struct TicketID: CustomPersistable, Hashable, Sendable {
    let raw: String
    init(persistedValue: String) { raw = persistedValue }
    var persistableValue: String { raw }
}

/// A failable type: a rating of 1 to 5, stored as its integer.
struct Stars: FailableCustomPersistable, Hashable, Sendable {
    let count: Int
    init?(persistedValue: Int) {
        guard (1...5).contains(persistedValue) else { return nil }
        count = persistedValue
    }
    var persistableValue: Int { count }
}

final class Ticket: Object {
    @Persisted(primaryKey: true) var id = TicketID(persistedValue: "")
    @Persisted var page = URL(string: "https://tickets.example")!
    @Persisted var mirror: URL?
    @Persisted var links: List<URL>
    @Persisted var stars = Stars(persistedValue: 3)!
}

/// Custom persistable types in a file: kept as their persisted type, so that a program without
/// the types reads the file; a value a failable type refuses, written by such a program, makes
/// the open fail with the object named and changes no file.
@Suite struct CustomTypeFileTests {
    /// The same type, as schema-as-data (the shell's view).
    static let plain = Schema([
        ObjectSchema(
            name: "Ticket",
            properties: [
                Property(name: "id", type: .string, isPrimaryKey: true),
                Property(name: "page", type: .string),
                Property(name: "mirror", type: .string, isOptional: true),
                Property(name: "links", type: .string, isList: true),
                Property(name: "stars", type: .int),
            ])
    ])

    static func add(_ realm: Realm, _ id: String, stars: Int, links: [String]) async throws {
        try await realm.write { realm in
            let ticket = Ticket()
            ticket.id = TicketID(persistedValue: id)
            ticket.mirror = URL(string: "https://\(id).example")
            ticket.links.append(objectsIn: links.map { URL(string: $0)! })
            ticket.stars = Stars(persistedValue: stars)!
            try realm.add(ticket)
        }
    }

    @Test func valuesSurviveSnapshotAndJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("tickets.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, objectTypes: [Ticket.self], options: options)
        try await withRealm(configuration) { realm in
            try await Self.add(realm, "t1", stars: 5, links: ["https://a.example/x"])
            try await realm.save()
            // In the journal only.
            try await Self.add(realm, "t2", stars: 1, links: [])
        }
        for _ in 0..<2 {
            let read = try await withRealm(configuration) { realm in
                try await realm.read { realm in
                    realm.objects(Ticket.self).sorted(by: \.id).map {
                        "\($0.id.raw) \($0.page) \($0.mirror?.absoluteString ?? "-") "
                            + "\($0.links.map(\.absoluteString)) \($0.stars.count)"
                    }
                }
            }
            #expect(
                read == [
                    #"t1 https://tickets.example https://t1.example ["https://a.example/x"] 5"#,
                    "t2 https://tickets.example https://t2.example [] 1",
                ])
        }
        let seen = try await withRealm(Realm.Configuration(file: url, schema: Self.plain)) { realm in
            try await realm.read { realm in
                let t = try realm.dynamicObject(ofType: "Ticket", forPrimaryKey: "t1")
                return [t?["page"], t?["links"], t?["stars"]]
            }
        }
        #expect(seen == [.string("https://tickets.example"), .list([.string("https://a.example/x")]), .int(5)])
    }

    @Test(arguments: [
        ("stars", PropertyValue.int(9)), ("mirror", .string("")), ("links", .list(["https://a.example", "http://["])),
    ])
    func aRefusedValueFailsTheOpen(_ property: String, _ value: PropertyValue) async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("tickets.json")
        try await withRealm(Realm.Configuration(file: url, objectTypes: [Ticket.self])) { realm in
            try await Self.add(realm, "t1", stars: 4, links: [])
        }
        // Written by a program that does not know the types, in the journal and then in the snapshot.
        for save in [false, true] {
            let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
            try await withRealm(Realm.Configuration(file: url, schema: Self.plain, options: options)) { realm in
                var values: [String: PropertyValue] = ["id": "t2", "page": "https://t2.example", "stars": 2]
                values[property] = value
                let written = values
                try await realm.write { realm in
                    _ = try realm.dynamicCreate("Ticket", value: written, update: .modified)
                }
                if save { try await realm.save() }
            }
            let snapshot = fileBytes(url)
            let journal = fileBytes(URL(fileURLWithPath: url.path + ".journal"))
            var error: LiveObjectsError?
            do {
                _ = try await Realm.open(Realm.Configuration(file: url, objectTypes: [Ticket.self], options: options))
            } catch let thrown {
                error = thrown
            }
            #expect(error?.code == .typeMismatch, "save \(save): \(String(describing: error))")
            #expect(error?.objectType == "Ticket" && error?.property == property, "\(String(describing: error))")
            #expect(fileBytes(url) == snapshot && fileBytes(URL(fileURLWithPath: url.path + ".journal")) == journal)
        }
        // Mended by the program that wrote it, the file opens.
        try await withRealm(Realm.Configuration(file: url, schema: Self.plain)) { realm in
            try await realm.write { realm in
                if let t2 = try realm.dynamicObject(ofType: "Ticket", forPrimaryKey: "t2") { try realm.delete(t2) }
            }
        }
        let count = try await withRealm(Realm.Configuration(file: url, objectTypes: [Ticket.self])) { realm in
            try await realm.read { $0.objects(Ticket.self).count }
        }
        #expect(count == 1)
    }
}
