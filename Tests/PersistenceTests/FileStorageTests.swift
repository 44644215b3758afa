import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// Every property type, optional and not, lists, links, lists of links and embedded objects.
let everythingSchema = Schema([
    ObjectSchema(
        name: "All",
        properties: [
            Property(name: "id", type: .int, isPrimaryKey: true),
            Property(name: "b", type: .bool),
            Property(name: "i8", type: .int8),
            Property(name: "i16", type: .int16),
            Property(name: "i32", type: .int32),
            Property(name: "i64", type: .int64),
            Property(name: "f", type: .float),
            Property(name: "d", type: .double),
            Property(name: "s", type: .string),
            Property(name: "date", type: .date),
            Property(name: "data", type: .data),
            Property(name: "uuid", type: .uuid),
            Property(name: "os", type: .string, isOptional: true),
            Property(name: "od", type: .double, isOptional: true),
            Property(name: "odate", type: .date, isOptional: true),
            Property(name: "ouuid", type: .uuid, isOptional: true),
            Property(name: "odata", type: .data, isOptional: true),
            Property(name: "doubles", type: .double, isList: true),
            Property(name: "floats", type: .float, isList: true),
            Property(name: "ostrings", type: .string, isOptional: true, isList: true),
            .link("next", to: "All"),
            .list("friends", of: "All"),
            .link("place", to: "Place"),
            .list("places", of: "Place"),
            .linkingObjects("pointedBy", from: "All", property: "next"),
        ]),
    ObjectSchema(
        name: "Place",
        properties: [
            Property(name: "name", type: .string),
            .link("inner", to: "Place"),
        ], isEmbedded: true),
])

/// Doubles that JSON cannot write as numbers, or that round-trip only if written exactly.
let awkwardDoubles: [Double] = [
    0, -0.0, .infinity, -.infinity, .nan, -.nan, Double(bitPattern: 0x7FF0_0000_0000_0001),
    Double(bitPattern: 0xFFF8_0000_DEAD_BEEF), .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, 1e23,
    -2.2250738585072014e-308, -Double.leastNonzeroMagnitude, 123456789.123456789,
]
let awkwardFloats: [Float] = [
    0, -0.0, .infinity, -.infinity, .nan, Float(bitPattern: 0x7F80_0001), Float(bitPattern: 0xFFC0_1234),
    .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, Float(16_777_216).nextDown,
]

/// Compares values bit for bit (NaNs included).
func sameBits(_ a: PropertyValue, _ b: PropertyValue) -> Bool {
    switch (a, b) {
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern
    case (.date(let x), .date(let y)):
        return x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
    case (.list(let x), .list(let y)): return x.count == y.count && zip(x, y).allSatisfy { sameBits($0, $1) }
    default: return a == b
    }
}

@Suite struct FileStorageTests {
    /// Writes objects with every kind of value, reopens, and compares every value bit for bit.
    @Test(arguments: [true, false]) func everyPropertyTypeRoundTripsExactly(journal: Bool) async throws {
        let directory = try makeTemporaryDirectory()
        let url = directory.appendingPathComponent("all.json")
        let options = FileStorage.Options(savePolicy: journal ? .manual : .afterEveryCommit, journal: journal)
        let configuration = Realm.Configuration(file: url, schema: everythingSchema, options: options)
        let seed = TestEnvironment.seed("PERSISTENCE_SEED") ?? UInt64.random(in: 0...UInt64.max)
        print("everyPropertyTypeRoundTripsExactly seed: \(seed)")
        let written: [[String: PropertyValue]] = try await withRealm(configuration) { realm in
            try await realm.write { realm in
                var generator = SeededRandomNumberGenerator(seed: seed)
                var made: [DynamicObject] = []
                for i in 0..<40 {
                    let d = i < awkwardDoubles.count ? awkwardDoubles[i] : Double(bitPattern: generator.next())
                    let f =
                        i < awkwardFloats.count
                        ? awkwardFloats[i] : Float(bitPattern: UInt32(truncatingIfNeeded: generator.next()))
                    let date = Date(
                        timeIntervalSinceReferenceDate: i == 0
                            ? 0.000_000_1 : Double(Int64(bitPattern: generator.next() >> 12)) / 1e6)
                    var bytes = [UInt8](repeating: 0, count: i)
                    for j in bytes.indices { bytes[j] = UInt8(truncatingIfNeeded: generator.next()) }
                    let object = try realm.dynamicCreate(
                        "All",
                        value: [
                            "id": .int(Int64(i) - 20), "b": .bool(i % 2 == 0), "i8": .int(Int64(Int8.min) + Int64(i)),
                            "i16": .int(Int64(Int16.max) - Int64(i)), "i32": .int(Int64(Int32.min)),
                            "i64": .int(i == 0 ? Int64.min : i == 1 ? Int64.max : Int64(bitPattern: generator.next())),
                            "f": .float(f), "d": .double(d), "s": .string(i == 0 ? "" : "é\u{0}\n\"\\😀 \(i) \u{1F}"),
                            "date": .date(date), "data": .data(Data(bytes)), "uuid": .uuid(UUID()),
                            "os": i % 3 == 0 ? .null : .string("x\(i)"), "od": i % 3 == 1 ? .null : .double(-d),
                            "odate": i % 2 == 0 ? .null : .date(date), "ouuid": i % 2 == 0 ? .uuid(UUID()) : .null,
                            "odata": i % 4 == 0 ? .null : .data(Data()),
                            "doubles": .list(awkwardDoubles.map { .double($0) }),
                            "floats": .list(awkwardFloats.map { .float($0) }),
                            "ostrings": .list([.string("a"), .null, .string("")]),
                        ])
                    if i % 3 == 0 {
                        let place = try object.setEmbedded("place", values: ["name": .string("p\(i)")])
                        _ = try place.setEmbedded("inner", values: ["name": .string("inner\(i)")])
                    }
                    _ = try object.setEmbedded("places", values: ["name": .string("q\(i)")])
                    made.append(object)
                }
                for (i, object) in made.enumerated() {
                    try object.set("next", to: .object(made[(i * 7 + 3) % made.count].key))
                    try object.set(
                        "friends", to: .list([.object(made[(i + 1) % made.count].key), .object(made[i].key)]))
                }
                // Free slots and reused ones.
                try realm.delete(made[5])
                try realm.delete(made[6])
            }
            try await realm.write { realm in
                _ = try realm.dynamicCreate("All", value: ["id": 1000, "s": "reused"])
            }
            return try await realm.read { realm in try snapshotValues(realm) }
        }
        let read = try await withRealm(configuration) { realm in try await realm.read { try snapshotValues($0) } }
        #expect(read.count == written.count)
        for (a, b) in zip(written, read) {
            for (name, value) in a {
                #expect(sameBits(value, b[name] ?? .null), "\(name): \(value) != \(b[name] ?? .null)")
            }
        }
        // The file holds the exact values too when read back without the journal.
        let again = try await withRealm(
            Realm.Configuration(file: url, schema: everythingSchema, options: .init(journal: false))
        ) { realm in
            try await realm.read { try snapshotValues($0) }
        }
        #expect(again.count == written.count)
        for (a, b) in zip(written, again) {
            for (name, value) in a { #expect(sameBits(value, b[name] ?? .null)) }
        }
        #expect(!FileManager.default.fileExists(atPath: url.path + ".journal"))
        // New files are readable and writable by the owner only.
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test func keysStayTheSameAcrossSaveAndLoad() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("keys.json")
        let configuration = Realm.Configuration(
            file: url, schema: everythingSchema, options: .init(savePolicy: .manual, journal: false))
        let (keys, deleted): ([Int64: ObjectKey], ObjectKey) = try await withRealm(configuration) { realm in
            let result = try await realm.write { realm -> ([Int64: ObjectKey], ObjectKey) in
                for i in 0..<10 { try realm.dynamicCreate("All", value: ["id": .int(Int64(i))]) }
                let doomed = try realm.dynamicObject(ofType: "All", forPrimaryKey: 3)!
                let key = doomed.key
                try realm.delete(doomed)
                var keys: [Int64: ObjectKey] = [:]
                for object in try realm.dynamicObjects("All") { keys[object["id"].intValue!] = object.key }
                return (keys, key)
            }
            try await realm.save()
            return result
        }
        try await withRealm(configuration) { realm in
            try await realm.read { realm throws in
                for (id, key) in keys {
                    #expect(try realm.dynamicObject(ofType: "All", key: key)?["id"] == .int(id))
                }
                // The deleted object's key does not come back.
                #expect(try realm.dynamicObject(ofType: "All", key: deleted) == nil)
            }
            try await realm.write { realm throws in
                let reused = try realm.dynamicCreate("All", value: ["id": 99])
                #expect(reused.key != deleted)
                #expect(try realm.dynamicObject(ofType: "All", key: deleted) == nil)
            }
        }
    }

    @Test func manualPolicyWithoutJournalSavesOnlyOnSave() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("manual.json")
        let configuration = Realm.Configuration(
            file: url, schema: CrashWorkload.schema, options: .init(savePolicy: .manual, journal: false))
        try await withRealm(configuration) { realm in
            try await realm.write { try CrashWorkload.step(1, in: $0) }
            try await realm.save()
            try await realm.write { try CrashWorkload.step(2, in: $0) }
        }
        let counter = try await withRealm(configuration) { realm in
            try await realm.read { try CrashWorkload.state(of: $0).counter }
        }
        #expect(counter == 1)
    }

    @Test func coalescedPolicySavesPendingChanges() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("coalesced.json")
        let configuration = Realm.Configuration(
            file: url, schema: CrashWorkload.schema,
            options: .init(savePolicy: .coalesced(.milliseconds(20)), journal: false))
        try await withRealm(configuration) { realm in
            for n in 1...30 { try await realm.write { try CrashWorkload.step(Int64(n), in: $0) } }
        }
        let state = try await withRealm(configuration) { realm in
            try await realm.read { try CrashWorkload.state(of: $0) }
        }
        #expect(state.counter == 30)
        #expect(state.items == CrashWorkload.expectedItems(after: 30))
    }

    @Test func journalIsReplayedAndFolded() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("journal.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: CrashWorkload.schema, options: options)
        var realm: Realm? = try await openRealm(configuration)
        for n in 1...25 { try await realm!.write { try CrashWorkload.step(Int64(n), in: $0) } }
        // Copy the files as a crash would leave them (the realm has not saved).
        let copy = url.deletingLastPathComponent().appendingPathComponent("copy.json")
        try FileManager.default.copyItem(at: url, to: copy)
        try FileManager.default.copyItem(atPath: url.path + ".journal", toPath: copy.path + ".journal")
        realm = nil
        _ = realm
        let snapshot = try String(decoding: Data(contentsOf: copy), as: UTF8.self)
        #expect(snapshot.contains("\"commit\": 0"))
        let state = try await withRealm(Realm.Configuration(file: copy, schema: CrashWorkload.schema, options: options))
        { realm in
            try await realm.read { try CrashWorkload.state(of: $0) }
        }
        #expect(state.counter == 25 && state.items == CrashWorkload.expectedItems(after: 25) && state.last == 5)
        // Closing folded the journal into the snapshot.
        let folded = try String(decoding: Data(contentsOf: copy), as: UTF8.self)
        #expect(folded.contains("\"commit\": 25"))
        let journal = try String(
            decoding: Data(contentsOf: URL(fileURLWithPath: copy.path + ".journal")), as: UTF8.self)
        #expect(journal.split(separator: "\n").count == 1)
    }

    @Test func tornLastJournalLineIsIgnored() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("torn.json")
        let options = FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 1 << 30)
        let configuration = Realm.Configuration(file: url, schema: CrashWorkload.schema, options: options)
        var realm: Realm? = try await openRealm(configuration)
        for n in 1...6 { try await realm!.write { try CrashWorkload.step(Int64(n), in: $0) } }
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        let snapshot = try Data(contentsOf: url)
        let journal = try Data(contentsOf: journalURL)
        realm = nil
        _ = realm
        while FileStorage.isOpen(configuration) { try await Task.sleep(for: .milliseconds(5)) }
        let lines = journal.split(separator: 0x0A, omittingEmptySubsequences: false)
        #expect(lines.count == 8)  // header, 6 commits, and "" after the last line break
        // Every cut inside the last line keeps exactly the first five commits.
        let lastStart = journal.count - lines[6].count - 1
        for cut in [lastStart + 1, lastStart + lines[6].count / 2, journal.count - 1] {
            try snapshot.write(to: url)
            try journal.prefix(cut).write(to: journalURL)
            let state = try await withRealm(configuration) { realm in
                try await realm.read { try CrashWorkload.state(of: $0) }
            }
            #expect(state.counter == 5 && state.items == CrashWorkload.expectedItems(after: 5), "cut at \(cut)")
        }
        // A damaged line in the middle is an error, and changes nothing.
        var damaged = journal
        damaged[lastStart - 5] = UInt8(ascii: "}")
        try snapshot.write(to: url)
        try damaged.write(to: journalURL)
        await #expect(throws: LiveObjectsError.self) { _ = try await Realm.open(configuration) }
        #expect(try Data(contentsOf: url) == snapshot && Data(contentsOf: journalURL) == damaged)
    }

    /// The Product example: version 1 (id, name, price) with data; version 2 adds `note`.
    @Test func productMigrationAddsAPropertyAndKeepsEveryProduct() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("shop.json")
        let v1 = Schema([
            ObjectSchema(
                name: "Product",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "name", type: .string),
                    Property(name: "price", type: .double),
                ])
        ])
        var v2 = v1
        v2.objectSchemas[0].properties.append(Property(name: "note", type: .string))
        try await withRealm(Realm.Configuration(file: url, schema: v1, schemaVersion: 1)) { realm in
            try await realm.write { realm in
                for i in 1...100 {
                    try realm.dynamicCreate(
                        "Product",
                        value: ["id": .int(Int64(i)), "name": .string("P\(i)"), "price": .double(Double(i) * 0.1)])
                }
            }
        }
        let before = try Data(contentsOf: url)
        // The same version with another schema: a typed error listing the difference; file untouched.
        await #expect {
            _ = try await Realm.open(Realm.Configuration(file: url, schema: v2, schemaVersion: 1))
        } throws: { error in
            let error = error as! LiveObjectsError
            return error.code == .schemaVersionMismatch && error.message.contains("added properties: Product.note")
        }
        #expect(try Data(contentsOf: url) == before)
        // A lower version: a typed error; file untouched.
        await #expect {
            _ = try await Realm.open(Realm.Configuration(file: url, schema: v1, schemaVersion: 0))
        } throws: { ($0 as! LiveObjectsError).code == .schemaVersionMismatch }
        #expect(try Data(contentsOf: url) == before)
        // Version 2: automatic.
        let products = try await withRealm(Realm.Configuration(file: url, schema: v2, schemaVersion: 2)) { realm in
            try await realm.read { realm in
                try realm.dynamicObjects("Product").map { [$0["id"], $0["name"], $0["price"], $0["note"]] }
            }
        }
        #expect(products.count == 100)
        for (i, p) in products.sorted(by: { $0[0].intValue! < $1[0].intValue! }).enumerated() {
            #expect(p == [.int(Int64(i + 1)), .string("P\(i + 1)"), .double(Double(i + 1) * 0.1), .string("")])
        }
        // Reopening at version 2 needs nothing more; version 1 is now refused.
        await #expect(throws: LiveObjectsError.self) {
            _ = try await Realm.open(Realm.Configuration(file: url, schema: v1, schemaVersion: 1))
        }
    }

    /// A migration written as for Realm: typed reads of the old object, subscript sets on the
    /// new one.
    @Test func migrationReadsTypedValuesAndSetsBySubscript() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("typed.json")
        let v1 = Schema([
            ObjectSchema(
                name: "Person",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "first", type: .string),
                    Property(name: "last", type: .string),
                ])
        ])
        let v2 = Schema([
            ObjectSchema(
                name: "Person",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "fullName", type: .string),
                ])
        ])
        try await withRealm(Realm.Configuration(file: url, schema: v1, schemaVersion: 1)) { realm in
            try await realm.write { realm in
                _ = try realm.dynamicCreate("Person", value: ["id": 1, "first": "Ann", "last": "Lee"])
            }
        }
        let options = FileStorage.Options(migration: { migration in
            migration.enumerateObjects(ofType: "Person") { old, new in
                let first = old["first", as: String.self] ?? ""
                let last = old["last", as: String.self] ?? ""
                new?["fullName"] = .string("\(first) \(last)")
            }
        })
        let names = try await withRealm(Realm.Configuration(file: url, schema: v2, schemaVersion: 2, options: options))
        {
            realm in
            try await realm.read { realm in try realm.dynamicObjects("Person").map { $0["fullName", as: String.self] } }
        }
        #expect(names == ["Ann Lee"])
    }

    @Test func migrationBlockRenamesEnumeratesCreatesAndDeletes() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("migrate.json")
        let v1 = Schema([
            ObjectSchema(
                name: "Person",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "fullName", type: .string),
                    Property(name: "age", type: .int), .link("friend", to: "Person"),
                ]),
            ObjectSchema(name: "Log", properties: [Property(name: "text", type: .string)]),
        ])
        let v2 = Schema([
            ObjectSchema(
                name: "Person",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "name", type: .string),
                    Property(name: "birthYear", type: .int), .link("friend", to: "Person"),
                ]),
            ObjectSchema(name: "Log", properties: [Property(name: "text", type: .string)]),
            ObjectSchema(name: "Note", properties: [Property(name: "text", type: .string)]),
        ])
        try await withRealm(Realm.Configuration(file: url, schema: v1, schemaVersion: 1)) { realm in
            try await realm.write { realm in
                let a = try realm.dynamicCreate("Person", value: ["id": 1, "fullName": "Ann", "age": 30])
                try realm.dynamicCreate(
                    "Person", value: ["id": 2, "fullName": "Bob", "age": 40, "friend": .object(a.key)])
                try realm.dynamicCreate("Person", value: ["id": 3, "fullName": "Cy", "age": 50])
                try realm.dynamicCreate("Log", value: ["text": "old"])
            }
        }
        let options = FileStorage.Options(migration: { migration in
            #expect(migration.oldSchemaVersion == 1 && migration.newSchemaVersion == 2)
            try migration.renameProperty(onType: "Person", from: "fullName", to: "name")
            try migration.enumerateObjects(ofType: "Person") { old, new in
                try new?.set("birthYear", to: .int(2020 - old["age"].intValue!))
                if old["id"] == 3, let new { try migration.delete(new) }
            }
            try migration.deleteData(forType: "Log")
            try migration.create("Note", value: ["text": "migrated"])
        })
        let (people, logs, notes) = try await withRealm(
            Realm.Configuration(file: url, schema: v2, schemaVersion: 2, options: options)
        ) { realm in
            try await realm.read { realm in
                (
                    try realm.dynamicObjects("Person").map {
                        [$0["id"], $0["name"], $0["birthYear"], try $0.linkedObject("friend")?["id"] ?? .null]
                    },
                    try realm.dynamicObjects("Log").count, try realm.dynamicObjects("Note").map { $0["text"] }
                )
            }
        }
        #expect(Set(people) == [[1, "Ann", 1990, nil], [2, "Bob", 1980, 1]])
        #expect(logs == 0 && notes == ["migrated"])
    }

    @Test func failingMigrationLeavesTheFileUntouched() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("fail.json")
        let schema = CrashWorkload.schema
        try await withRealm(Realm.Configuration(file: url, schema: schema, schemaVersion: 1)) { realm in
            try await realm.write { try CrashWorkload.step(1, in: $0) }
        }
        let before = try Data(contentsOf: url)
        struct Refused: Error {}
        let options = FileStorage.Options(migration: { _ in throw Refused() })
        await #expect(throws: LiveObjectsError.self) {
            _ = try await Realm.open(Realm.Configuration(file: url, schema: schema, schemaVersion: 2, options: options))
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func deleteDataIfMigrationNeeded() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("cache.json")
        try await withRealm(Realm.Configuration(file: url, schema: CrashWorkload.schema, schemaVersion: 1)) { realm in
            try await realm.write { try CrashWorkload.step(1, in: $0) }
        }
        var changed = CrashWorkload.schema
        changed.objectSchemas[1].properties.removeLast()
        let options = FileStorage.Options(deleteDataIfMigrationNeeded: true)
        let count = try await withRealm(
            Realm.Configuration(file: url, schema: changed, schemaVersion: 1, options: options)
        ) { realm in
            try await realm.read { try $0.dynamicObjects("Item").count }
        }
        #expect(count == 0)
    }

    @Test func modelClassesRoundTrip() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("pets.json")
        let configuration = Realm.Configuration(file: url, objectTypes: petModelTypes)
        #expect(configuration.identifier == url.standardizedFileURL.path)
        try await withRealm(configuration) { realm in
            try await realm.write { realm in
                let ann = try realm.create(
                    Person.self, value: ["id": 1, "name": "Ann", "address": ["street": "Main", "city": "X"]])
                let rex = try realm.create(
                    Dog.self, value: ["id": 1, "name": "Rex", "owner": ann, "toys": [["id": 1, "name": "ball"]]])
                ann.dogs.append(rex)
            }
        }
        let (name, city, walkers, toys) = try await withRealm(configuration) { realm in
            try await realm.read { realm in
                let rex = realm.object(ofType: Dog.self, forPrimaryKey: 1)!
                return (rex.owner?.name, rex.owner?.address?.city, rex.walkers.count, rex.toys.map(\.name))
            }
        }
        #expect(name == "Ann" && city == "X" && walkers == 1 && toys == ["ball"])
    }

    @Test func aFileIsOpenOnceAndSaveNeedsAFile() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("once.json")
        let realm = try await Realm.open(Realm.Configuration(file: url, schema: CrashWorkload.schema))
        await #expect(throws: LiveObjectsError.self) {
            _ = try await Realm.open(
                Realm.Configuration(identifier: "other", schema: CrashWorkload.schema, storage: .file(url)))
        }
        let memory = try await Realm.open(
            Realm.Configuration(identifier: "memory-\(UUID())", schema: CrashWorkload.schema))
        await #expect(throws: LiveObjectsError.self) { try await memory.save() }
        try await realm.save()
    }
}

/// Every object's values by property name (links as keys), in key order.
func snapshotValues(_ realm: isolated Realm) throws -> [[String: PropertyValue]] {
    var result: [[String: PropertyValue]] = []
    for type in realm.schema.objectSchemas where !type.isEmbedded {
        for object in try realm.dynamicObjects(type.name).sorted(by: { $0.key < $1.key }) {
            var values = object.values
            values["$key"] = .string(object.key.description)
            if let place = try object.linkedObject("place") {
                values["$place"] = .string("\(place["name"]) \(try place.linkedObject("inner")?["name"] ?? .null)")
            }
            values["$places"] = .list(try object.linkedObjects("places").map { $0["name"] })
            values["place"] = nil
            values["places"] = nil
            result.append(values)
        }
    }
    return result
}
