import Foundation
import LiveObjects
import LiveObjectsJSON

/// Every object of a realm as plain values, to copy into a realm with a larger schema.
struct RealmDump: Sendable {
    struct Record: Sendable {
        var key: ObjectKey
        var values: [String: PropertyValue]
    }

    /// Per type: the records in storage order, and their positions by key.
    var records: [String: [Record]] = [:]
    var positions: [String: [ObjectKey: Int]] = [:]

    static func make(_ realm: isolated Realm) throws -> RealmDump {
        var dump = RealmDump()
        for schema in realm.schema.objectSchemas {
            var records: [Record] = []
            var positions: [ObjectKey: Int] = [:]
            for object in try realm.dynamicObjects(schema.name) {
                var values: [String: PropertyValue] = [:]
                for property in schema.properties where property.isStored {
                    values[property.name] = object[property.name]
                }
                positions[object.key] = records.count
                records.append(Record(key: object.key, values: values))
            }
            dump.records[schema.name] = records
            dump.positions[schema.name] = positions
        }
        return dump
    }

    /// A new realm in memory with `schema` (which holds every type and property of the realm's)
    /// and every object of `realm` copied over; `realm` is closed once the copy is made, so that
    /// a file it held is released.
    static func copy(_ realm: Realm, to schema: Schema, schemaVersion: UInt64) async throws -> Realm {
        let old = realm.schema
        let dump = try await realm.read { realm in try RealmDump.make(realm) }
        let next = try await Realm.open(
            .init(identifier: "liveobj-\(UUID())", schema: schema, schemaVersion: schemaVersion))
        try await next.write { realm in try dump.load(into: realm, from: old) }
        try await realm.close()
        return next
    }

    func record(_ type: String, _ key: ObjectKey) -> Record? {
        positions[type]?[key].map { records[type]![$0] }
    }

    /// Recreates the objects in a realm whose schema holds every type and property of the
    /// dumped one: first every object with its plain values (embedded objects inside their
    /// parents), then the links, through the map from old keys to new ones.
    func load(into realm: isolated Realm, from old: Schema) throws {
        var keys: [String: [ObjectKey: ObjectKey]] = [:]
        func isEmbeddedLink(_ p: Property) -> Bool {
            p.type == .object && old[p.objectType ?? ""]?.isEmbedded == true
        }
        func plain(_ record: Record, _ schema: ObjectSchema) -> [String: PropertyValue] {
            record.values.filter { name, _ in schema[name].map { $0.type != .object } ?? false }
        }
        func createChildren(of object: DynamicObject, _ record: Record, _ schema: ObjectSchema) throws {
            for p in schema.properties where isEmbeddedLink(p) {
                let target = old[p.objectType!]!
                let childKeys: [ObjectKey]
                switch record.values[p.name] {
                case .object(let key)?: childKeys = [key]
                case .list(let items)?: childKeys = items.compactMap(\.objectKey)
                default: childKeys = []
                }
                for key in childKeys {
                    guard let child = self.record(target.name, key) else { continue }
                    let created = try object.setEmbedded(p.name, values: plain(child, target))
                    keys[target.name, default: [:]][key] = created.key
                    try createChildren(of: created, child, target)
                }
            }
        }
        for schema in old.objectSchemas where !schema.isEmbedded {
            for record in records[schema.name] ?? [] {
                let object = try realm.dynamicCreate(schema.name, value: plain(record, schema))
                keys[schema.name, default: [:]][record.key] = object.key
                try createChildren(of: object, record, schema)
            }
        }
        for schema in old.objectSchemas {
            for record in records[schema.name] ?? [] {
                guard let newKey = keys[schema.name]?[record.key],
                    let object = try realm.dynamicObject(ofType: schema.name, key: newKey)
                else { continue }
                for p in schema.properties where p.type == .object && !isEmbeddedLink(p) {
                    let targetKeys = keys[p.objectType!] ?? [:]
                    switch record.values[p.name] {
                    case .object(let key)?:
                        if let mapped = targetKeys[key] { try object.set(p.name, to: .object(mapped)) }
                    case .list(let items)? where !items.isEmpty:
                        try object.set(
                            p.name,
                            to: .list(items.compactMap { $0.objectKey.flatMap { targetKeys[$0] }.map { .object($0) } }))
                    default:
                        break
                    }
                }
            }
        }
    }
}

extension Shell {
    // MARK: define

    /// Adds a type or properties, raising the schema version by one. A realm in memory is copied
    /// into a new one with the extended schema; a file realm is moved to it by its file store
    /// (``RealmFileStore/changeSchema(of:path:to:schemaVersion:)``: for Persistence files, the
    /// file's own migration).
    func define(_ definition: TypeDefinition) async throws {
        guard !inTransaction else { throw ShellError("'commit' or 'rollback' the open transaction before 'define'") }
        let old = realm.schema
        var schema = old
        var added: [Property] = []
        if let i = schema.objectSchemas.firstIndex(where: { $0.name == definition.name }) {
            let existing = schema.objectSchemas[i]
            if definition.isEmbedded && !existing.isEmbedded {
                throw ShellError("\(definition.name) exists and is not embedded; a type cannot become embedded")
            }
            for property in definition.properties {
                if let current = existing[property.name] {
                    guard current == property else {
                        throw ShellError(
                            "\(definition.name).\(property.name) exists as '\(current)'; define only adds properties")
                    }
                    continue
                }
                if property.isPrimaryKey {
                    throw ShellError(
                        "\(definition.name).\(property.name): a primary key can only be given to a new type")
                }
                added.append(property)
            }
            schema.objectSchemas[i].properties += added
            if added.isEmpty {
                print(
                    "\(definition.name) already has these properties.",
                    json: .object([("defined", .string(definition.name)), ("added", .array([]))]))
                return
            }
        } else {
            added = definition.properties
            schema.objectSchemas.append(
                ObjectSchema(name: definition.name, properties: added, isEmbedded: definition.isEmbedded))
        }
        do {
            try schema.validate()
        } catch {
            throw ShellError("the definition is not valid: " + Operations.message(error))
        }
        let version = realm.configuration.schemaVersion + 1
        switch storage {
        case .memory:
            realm = try await RealmDump.copy(realm, to: schema, schemaVersion: version)
        case .file(let path, let store):
            var current = realm
            defer { realm = current }
            try await store.changeSchema(of: &current, path: path, to: schema, schemaVersion: version)
        }
        markChanged()
        let isNew = old[definition.name] == nil
        let what =
            isNew
            ? "Defined \(definition.isEmbedded ? "embedded " : "")\(definition.name)"
            : "Added \(added.map(\.name).joined(separator: ", ")) to \(definition.name)"
        print(
            "\(what) (schema version \(version)).",
            json: .object([
                ("defined", .string(definition.name)), ("added", .array(added.map { .string($0.name) })),
                ("schemaVersion", .int(Int64(version))),
            ]))
    }

    // MARK: import and export

    /// The largest file `import` reads, in bytes (256 MiB): the file is read in chunks and
    /// refused as soon as it is larger, so a huge file or an endless device costs nothing.
    static let maximumImportSize = 256 << 20

    func importFile(type: String?, path: String) async throws {
        var data = Data()
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                data.append(chunk)
                if data.count > Self.maximumImportSize {
                    throw ShellError(
                        "\(path) is larger than the \(Self.maximumImportSize) bytes import reads; nothing was imported")
                }
            }
        } catch let error as ShellError {
            throw error
        } catch {
            throw ShellError("cannot read \(path): \((error as NSError).localizedDescription)")
        }
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes: Array(data))
        } catch {
            throw ShellError("\(path) is not valid JSON: \(error.message) at byte \(error.offset)")
        }
        var batches: [(String, [JSONValue])] = []
        if let type {
            guard case .array(let items) = document else {
                throw ShellError("\(path): expected a JSON array of \(type) objects")
            }
            batches = [(type, items)]
        } else {
            guard case .object(let pairs) = document else {
                throw ShellError(
                    "\(path): expected a JSON object of type names and arrays ('import TYPE FILE' reads an array)")
            }
            for (name, value) in pairs {
                guard case .array(let items) = value else { throw ShellError("\(path): \(name) is not an array") }
                batches.append((name, items))
            }
        }
        let toImport = batches
        let interruption = self.interruption
        let n = try await change { realm in try Self.importObjects(toImport, interruption: interruption, realm) }
        print("Imported \(n) object\(n == 1 ? "" : "s").", json: .object([("imported", .int(Int64(n)))]))
    }

    /// Creates objects from JSON: first with their plain values and embedded objects, then
    /// their links, so that imported objects can link to each other in any order.
    static func importObjects(
        _ batches: [(String, [JSONValue])], interruption: InterruptFlag = InterruptFlag(), _ realm: isolated Realm
    ) throws -> Int {
        var links: [(DynamicObject, JSONMembers)] = []
        for (type, items) in batches {
            let schema = try Operations.objectSchema(type, realm)
            func isLink(_ name: String) -> Bool {
                guard let p = schema[name], p.type == .object else { return false }
                return realm.schema[p.objectType ?? ""]?.isEmbedded != true
            }
            for item in items {
                try interruption.check()
                let pairs = try Operations.pairs(item, type)
                let object = try Operations.create(type, .object(pairs.filter { !isLink($0.0) }), realm)
                links.append((object, pairs.filter { isLink($0.0) }))
            }
        }
        for (object, pairs) in links where !pairs.isEmpty { try Operations.apply(pairs, to: object, realm) }
        return links.count
    }

    func export(type: String?, path: String) async throws {
        let (text, n) = try await realm.read { realm in
            let types: [String]
            if let type {
                _ = try Operations.objectSchema(type, realm)
                types = [type]
            } else {
                types = realm.schema.objectSchemas.filter { !$0.isEmbedded }.map(\.name)
            }
            var n = 0
            var sections: [(String, [String])] = []
            for name in types {
                let lines = try realm.dynamicObjects(name).map { Operations.json($0, realm).compact }
                n += lines.count
                sections.append((name, lines))
            }
            func array(_ lines: [String], indent: String) -> String {
                lines.isEmpty
                    ? "[]" : "[\n" + lines.map { indent + "  " + $0 }.joined(separator: ",\n") + "\n\(indent)]"
            }
            if type != nil { return (array(sections[0].1, indent: "") + "\n", n) }
            var key = ""
            let body = sections.map { name, lines in
                key = ""
                JSONValue.writeString(name, to: &key)
                return "  \(key): " + array(lines, indent: "  ")
            }
            return ("{\n" + body.joined(separator: ",\n") + "\n}\n", n)
        }
        try PrivateFile.save(Array(text.utf8), to: path)
        print(
            "Exported \(n) object\(n == 1 ? "" : "s") to \(path).",
            json: .object([("exported", .int(Int64(n))), ("file", .string(path))]))
    }
}
