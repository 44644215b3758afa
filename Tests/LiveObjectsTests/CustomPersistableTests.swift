import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// A wrapped identifier: every string makes one.
struct MemberID: CustomPersistable, Hashable, Sendable, Codable {
    let raw: String
    init(_ raw: String) { self.raw = raw }
    init(persistedValue: String) { raw = persistedValue }
    var persistableValue: String { raw }
}

/// A failable type: only 0 to 359 make one.
struct Hue: FailableCustomPersistable, Hashable, Sendable, Codable {
    let degrees: Int
    init?(persistedValue: Int) {
        guard (0..<360).contains(persistedValue) else { return nil }
        degrees = persistedValue
    }
    var persistableValue: Int { degrees }
}

/// A chain: stored as a `MemberID`, itself stored as a `String`.
struct Mentor: CustomPersistable, Hashable, Sendable {
    let id: MemberID
    init(persistedValue: MemberID) { id = persistedValue }
    var persistableValue: MemberID { id }
}

/// A chain over a failable type: it makes a value from every `Hue`, and the realm still keeps
/// out the integers `Hue` refuses.
struct Shade: CustomPersistable, Hashable, Sendable {
    let hue: Hue
    init(persistedValue: Hue) { hue = persistedValue }
    var persistableValue: Hue { hue }
}

final class Swatch: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var shade: Shade?
}

final class Member: Object {
    @Persisted(primaryKey: true) var id = MemberID("")
    @Persisted var homepage = URL(string: "https://example.com")!
    @Persisted var blog: URL?
    @Persisted var links: List<URL>
    @Persisted(indexed: true) var hue = Hue(persistedValue: 0)!
    @Persisted var accent: Hue?
    @Persisted var mentor: Mentor?
    @Persisted var friends: List<MemberID>
}

/// Custom persistable types: stored as their persisted type, read, written and queried as
/// themselves.
@Suite struct CustomPersistableTests {
    static let ann = URL(string: "https://ann.example/home")!

    func members() async throws -> Realm {
        let realm = try await openFreshRealm(objectTypes: [Member.self])
        try await realm.write { realm in
            let ann = Member()
            ann.id = MemberID("ann")
            ann.homepage = Self.ann
            ann.blog = URL(string: "https://ann.example/blog")
            ann.links.append(objectsIn: [URL(string: "https://a.example")!, URL(string: "mailto:ann@a.example")!])
            ann.hue = Hue(persistedValue: 200)!
            ann.mentor = Mentor(persistedValue: MemberID("bob"))
            ann.friends.append(MemberID("bob"))
            try realm.add(ann)
            _ = try realm.create(Member.self, value: ["id": "bob", "homepage": "https://bob.example", "hue": 30])
            _ = try realm.create(
                Member.self,
                value: [
                    "id": MemberID("cid"), "blog": URL(string: "https://cid.example")!,
                    "accent": Hue(persistedValue: 5)!,
                ])
        }
        return realm
    }

    @Test func valuesRoundTripAsTheirPersistedType() async throws {
        let realm = try await members()
        let ann = try await realm.read { realm in
            let ann = realm.object(ofType: Member.self, forPrimaryKey: MemberID("ann"))
            return ann.map {
                [
                    $0.id.raw, $0.homepage.absoluteString, $0.blog?.absoluteString ?? "-",
                    $0.links.map(\.absoluteString).joined(separator: " "), "\($0.hue.degrees)",
                    $0.accent.map { "\($0.degrees)" } ?? "-", $0.mentor?.id.raw ?? "-",
                    $0.friends.map(\.raw).joined(separator: " "),
                ]
            }
        }
        #expect(
            ann == [
                "ann", "https://ann.example/home", "https://ann.example/blog", "https://a.example mailto:ann@a.example",
                "200", "-", "bob", "bob",
            ])
        let bob = try await realm.read { realm in
            realm.object(ofType: Member.self, forPrimaryKey: MemberID("bob")).map {
                [$0.homepage.absoluteString, "\($0.hue.degrees)", $0.blog?.absoluteString ?? "-"]
            }
        }
        #expect(bob == ["https://bob.example", "30", "-"])
        // The dynamic API (the shell, sync, migrations) and the schema see the persisted type.
        let stored = try await realm.read { realm in
            guard let ann = try realm.dynamicObject(ofType: "Member", forPrimaryKey: "ann") else {
                return [PropertyValue]()
            }
            return [ann["id"], ann["homepage"], ann["hue"], ann["mentor"], ann["links"]]
        }
        #expect(
            stored == [
                .string("ann"), .string("https://ann.example/home"), .int(200), .string("bob"),
                .list([.string("https://a.example"), .string("mailto:ann@a.example")]),
            ])
        let schema = try #require(realm.schema["Member"])
        #expect(schema["id"]?.type == .string && schema["id"]?.isPrimaryKey == true)
        #expect(schema["homepage"]?.type == .string && schema["blog"]?.isOptional == true)
        #expect(schema["hue"]?.type == .int && schema["hue"]?.isIndexed == true)
        #expect(schema["links"]?.type == .string && schema["links"]?.isList == true)
        #expect(schema["mentor"]?.type == .string && schema["mentor"]?.isOptional == true)
    }

    @Test func primaryKeyOfAWrappedIDIsUnique() async throws {
        let realm = try await members()
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { realm in _ = try realm.create(Member.self, value: ["id": MemberID("ann")]) }
        }
        let updated = try await realm.write { realm in
            try realm.create(Member.self, value: ["id": "ann", "hue": Hue(persistedValue: 90)!], update: .modified)
                .hue
        }
        #expect(updated == Hue(persistedValue: 90))
        #expect(try await realm.read { $0.objects(Member.self).count } == 3)
    }

    @Test func typedAndStringQueriesCompareThePersistedValue() async throws {
        let realm = try await members()
        let answers = try await realm.read { realm in
            let members = realm.objects(Member.self)
            return [
                members.where { $0.homepage == Self.ann }.map(\.id.raw),
                members.where { $0.homepage != Self.ann }.map(\.id.raw),
                members.where { $0.blog == nil }.map(\.id.raw),
                members.where { $0.hue > Hue(persistedValue: 20)! }.map(\.id.raw),
                members.where { $0.id == MemberID("cid") }.map(\.id.raw),
                members.where { $0.mentor == Mentor(persistedValue: MemberID("bob")) }.map(\.id.raw),
                members.sorted(by: \.hue, ascending: false).map(\.id.raw),
                try members.filter("homepage == %@", Self.ann).map(\.id.raw),
                try members.filter("homepage BEGINSWITH 'https://bob'").map(\.id.raw),
                try members.filter("ANY links == %@", URL(string: "https://a.example")!).map(\.id.raw),
                try members.filter("hue < %@", Hue(persistedValue: 100)!).map(\.id.raw),
                try members.filter("ANY friends == %@", MemberID("bob")).map(\.id.raw),
            ]
        }
        #expect(
            answers == [
                ["ann"], ["bob", "cid"], ["bob"], ["ann", "bob"], ["cid"], ["ann"], ["ann", "bob", "cid"], ["ann"],
                ["bob"], ["ann"], ["bob", "cid"], ["ann"],
            ])
    }

    @Test func foundationPredicatesCompareThePersistedValue() async throws {
        let realm = try await members()
        let ann = Self.ann
        let limit = Hue(persistedValue: 30)!
        let bob = MemberID("bob")
        let found = try await realm.read { realm in
            let members = realm.objects(Member.self)
            return [
                try members.filter(#Predicate { $0.homepage == ann }).map(\.id.raw),
                try members.filter(#Predicate { $0.homepage != ann && $0.blog == nil }).map(\.id.raw),
                try members.filter(#Predicate { $0.id == bob }).map(\.id.raw),
                try members.filter(#Predicate { $0.hue == limit }).map(\.id.raw),
            ]
        }
        #expect(found == [["ann"], ["bob"], ["bob"], ["bob"]])
    }

    /// Input that is not a value the failable type accepts is refused, whichever way it comes.
    @Test(arguments: [
        ["id": "dee", "hue": 400] as [String: any Sendable],
        ["id": "dee", "accent": -1],
        ["id": "dee", "homepage": ""],
        ["id": "dee", "links": ["https://a.example", "http://["]],
    ])
    func aValueTheTypeRefusesIsRefused(_ value: [String: any Sendable]) async throws {
        let realm = try await members()
        var error: LiveObjectsError?
        do {
            try await realm.write { realm in _ = try realm.create(Member.self, value: value) }
        } catch let thrown as LiveObjectsError {
            error = thrown
        }
        #expect(error?.code == .typeMismatch && error?.objectType == "Member", "\(String(describing: error))")
        #expect(error?.message.contains("does not make a") == true, "\(String(describing: error))")
        #expect(try await realm.read { $0.objects(Member.self).count } == 3)
        // Through the dynamic API too, and the stored value stays.
        let property = value.keys.first { $0 != "id" }!
        let stored: PropertyValue =
            switch value[property] {
            case let number as Int: .int(Int64(number))
            case let text as String: .string(text)
            default: .list([.string("http://[")])
            }
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { realm in
                try realm.dynamicObject(ofType: "Member", forPrimaryKey: "bob")?.set(property, to: stored)
            }
        }
        let bob = try await realm.read { realm in
            realm.object(ofType: Member.self, forPrimaryKey: MemberID("bob")).map {
                [$0.homepage.absoluteString, "\($0.hue.degrees)", "\($0.accent == nil)", "\($0.links.count)"]
            }
        }
        #expect(bob == ["https://bob.example", "30", "true", "0"])
    }

    @Test func aChainKeepsTheCheckOfTheTypeItStoresAs() async throws {
        let realm = try await openFreshRealm(objectTypes: [Swatch.self])
        #expect(realm.schema["Swatch"]?["shade"]?.type == .int)
        let shade = try await realm.write { realm in
            try realm.create(Swatch.self, value: ["id": 1, "shade": 120]).shade?.hue.degrees
        }
        #expect(shade == 120)
        var error: LiveObjectsError?
        do {
            try await realm.write { realm in _ = try realm.create(Swatch.self, value: ["id": 2, "shade": 360]) }
        } catch let thrown as LiveObjectsError {
            error = thrown
        }
        #expect(error?.code == .typeMismatch && error?.property == "shade", "\(String(describing: error))")
        #expect(error?.message.contains("Hue") == true, "\(String(describing: error))")
        let found = try await realm.read { realm in
            realm.objects(Swatch.self).where { $0.shade == Shade(persistedValue: Hue(persistedValue: 120)!) }.count
        }
        #expect(found == 1)
    }

    @Test func unmanagedObjectsTakeTheTypeOrItsPersistedValue() throws {
        let byValue = try Member(
            value: [
                "id": "eve", "homepage": "https://eve.example", "blog": URL(string: "https://eve.example/b")!,
                "links": ["https://x.example", URL(string: "https://y.example")!], "hue": 12, "accent": NSNull(),
                "mentor": "ann", "friends": ["ann", MemberID("bob")],
            ])
        #expect(byValue.id == MemberID("eve") && byValue.homepage == URL(string: "https://eve.example"))
        #expect(byValue.blog == URL(string: "https://eve.example/b") && byValue.accent == nil)
        #expect(byValue.links.map(\.absoluteString) == ["https://x.example", "https://y.example"])
        #expect(byValue.hue == Hue(persistedValue: 12) && byValue.mentor?.id == MemberID("ann"))
        #expect(byValue.friends.map(\.raw) == ["ann", "bob"])
        #expect(throws: LiveObjectsError.self) { try Member(value: ["hue": 360]) }
        #expect(throws: LiveObjectsError.self) { try Member(value: ["links": ["https://x.example", 3]]) }
    }

    @Test func jsonImportAndExport() async throws {
        let realm = try await members()
        let exported = try await realm.read { realm in
            String(
                decoding: try JSONEncoder().encode(realm.object(ofType: Member.self, forPrimaryKey: MemberID("ann"))),
                as: UTF8.self)
        }
        #expect(exported.contains(#""hue":200"#) && exported.contains(#""id":"ann""#), "\(exported)")
        let decoded = try JSONDecoder().decode(Member.self, from: Data(exported.utf8))
        #expect(decoded.homepage == Self.ann && decoded.hue == Hue(persistedValue: 200))
        #expect(decoded.links.count == 2 && decoded.mentor?.id == MemberID("bob"))
        let other = try await openFreshRealm(objectTypes: [Member.self])
        let imported = try await other.write { realm in
            try realm.create(Member.self, json: Data(exported.utf8)).homepage
        }
        #expect(imported == Self.ann)
        await #expect(throws: LiveObjectsError.self) {
            try await other.write { realm in
                _ = try realm.create(Member.self, json: Data(#"{"id": "x", "hue": 720}"#.utf8))
            }
        }
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(Member.self, from: Data(#"{"id": "x", "hue": 720}"#.utf8))
        }
    }

    @Test func frozenObjectsAndChangesGiveTheType() async throws {
        let realm = try await members()
        let frozen = try await realm.read { realm in
            realm.object(ofType: Member.self, forPrimaryKey: MemberID("ann"))?.freeze()
        }
        #expect(frozen?.homepage == Self.ann && frozen?.hue == Hue(persistedValue: 200))
        #expect(frozen?.list(\.links).map(\.absoluteString) == ["https://a.example", "mailto:ann@a.example"])
        let changes = try await realm.read { realm in
            realm.object(ofType: Member.self, forPrimaryKey: MemberID("ann"))!.changes(keyPaths: [\.homepage])
        }
        var iterator = changes.makeAsyncIterator()
        _ = await iterator.next()
        try await realm.write { realm in
            realm.object(ofType: Member.self, forPrimaryKey: MemberID("ann"))?.homepage = URL(
                string: "https://new.example")!
        }
        guard case .changed(let object, let properties)? = await iterator.next() else {
            Issue.record("no change")
            return
        }
        #expect(object.homepage == URL(string: "https://new.example"))
        #expect(properties.map(\.name) == ["homepage"] && properties.first?.newValue == .string("https://new.example"))
    }
}

/// Random members and random comparisons: typed and string queries on custom types give what a
/// Swift filter on the same values gives (seeded; the seed and the query are printed).
@Suite struct CustomPersistableQueryTests {
    @Test func queriesAgreeWithASwiftFilter() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_QUERY_SEED") ?? 0xC057_0A11
        var rng = SeededRandomNumberGenerator(seed: seed)
        let realm = try await openFreshRealm(objectTypes: [Member.self])
        let hosts = ["a", "b", "c", "d"]
        func url(_ rng: inout SeededRandomNumberGenerator) -> URL {
            URL(string: "https://\(hosts[rng.int(0...hosts.count - 1)]).example/\(rng.int(0...3))")!
        }
        var rows: [(id: String, homepage: URL, hue: Int, links: [URL])] = []
        for i in 0..<40 {
            rows.append(
                ("m\(i)", url(&rng), rng.int(0...359), (0..<rng.int(0...3)).map { _ in url(&rng) }))
        }
        let stored = rows
        try await realm.write { realm in
            for row in stored {
                _ = try realm.create(
                    Member.self, value: ["id": row.id, "homepage": row.homepage, "hue": row.hue, "links": row.links])
            }
        }
        for round in 0..<60 {
            let target = url(&rng)
            let hue = Hue(persistedValue: rng.int(0...359))!
            let kind = rng.int(0...3)
            let description = "round \(round), kind \(kind): \(target) \(hue.degrees)"
            let expected: [String] =
                switch kind {
                case 0: rows.filter { $0.homepage == target }.map(\.id)
                case 1: rows.filter { $0.hue >= hue.degrees }.map(\.id)
                case 2: rows.filter { $0.links.contains(target) }.map(\.id)
                default: rows.filter { $0.homepage != target && $0.hue < hue.degrees }.map(\.id)
                }
            let answers = try await realm.read { realm in
                let members = realm.objects(Member.self)
                let (typed, text) =
                    switch kind {
                    case 0: (members.where { $0.homepage == target }, try members.filter("homepage == %@", target))
                    case 1: (members.where { $0.hue >= hue }, try members.filter("hue >= %@", hue))
                    case 2: (try members.filter("%@ IN links", target), try members.filter("ANY links == %@", target))
                    default:
                        (
                            members.where { $0.homepage != target && $0.hue < hue },
                            try members.filter("homepage != %@ AND hue < %@", target, hue)
                        )
                    }
                return (typed.map(\.id.raw).sorted(), text.map(\.id.raw).sorted())
            }
            #expect(answers.0 == expected.sorted(), "seed \(seed), \(description)")
            #expect(answers.1 == expected.sorted(), "seed \(seed), \(description)")
            if answers.0 != expected.sorted() || answers.1 != expected.sorted() { break }
        }
        // Sorting by a custom type sorts by the persisted value.
        let sorted = try await realm.read { realm in realm.objects(Member.self).sorted(by: \.hue).map(\.hue.degrees) }
        #expect(sorted == rows.map(\.hue).sorted(), "seed \(seed)")
    }
}
