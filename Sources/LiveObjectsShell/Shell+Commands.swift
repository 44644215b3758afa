import Foundation
import LiveObjects
import LiveObjectsJSON

/// The commands, one function each (``Shell/execute(_:line:)`` picks one).
extension Shell {
    /// Prints the overview, or one command's help.
    func help(_ topic: String?) throws {
        guard let topic else {
            print(CommandDoc.overview, json: .string(CommandDoc.overview))
            return
        }
        guard let doc = CommandDoc.named(topic) else {
            throw ShellError("unknown command '\(topic)'; type 'help' for the list")
        }
        print(doc.help, json: .string(doc.help))
    }

    /// Prints every type with its number of objects.
    func showTypes() async throws {
        let rows = try await realm.read { realm in
            try realm.schema.objectSchemas.map { s in (s.name, s.isEmbedded, try realm.dynamicObjects(s.name).count)
            }
        }
        var table = TextTable(columns: ["type", "objects", "kind"], maximumWidth: io.width())
        table.rows = rows.map { [$0.0, String($0.2), $0.1 ? "embedded" : ""] }
        print(
            table.rendered(mode),
            json: .array(
                rows.map {
                    .object([("name", .string($0.0)), ("objects", .int(Int64($0.2))), ("embedded", .bool($0.1))])
                }))
    }

    /// Prints the schema of one type, or of every type.
    func showSchema(_ type: String?) throws {
        var schemas = realm.schema.objectSchemas
        if let type {
            schemas = schemas.filter { $0.name == type }
            if schemas.isEmpty { throw ShellError("there is no object type named '\(type)'; 'types' lists them") }
        }
        print(
            schemas.map(\.description).joined(separator: "\n"),
            json: .array(schemas.map(Self.json)))
    }

    /// Creates an object.
    func create(_ type: String, _ values: JSONValue) async throws {
        let (name, key) = try await change { realm in
            let object = try Operations.create(type, values, realm)
            let pk = object.objectSchema.primaryKey.map { Operations.json(object[$0.name], $0, realm) }
            return (Operations.name(object, realm), pk ?? .string(object.key.description))
        }
        print("Created \(type) \(name).", json: .object([("created", .string(type)), ("key", key)]))
    }

    /// Prints one object, with the objects linking to it.
    func get(_ type: String, _ key: ObjectReference) async throws {
        let object = try await realm.read { realm in
            Operations.json(try Operations.find(type, key, realm), inverse: true, realm)
        }
        guard case .object(let pairs) = object else { return }
        let width = pairs.map { TextTable.width($0.0) }.max() ?? 0
        let text = pairs.map { name, value in
            name + ":" + String(repeating: " ", count: width - TextTable.width(name) + 2) + TextTable.cell(value)
        }
        print(text.joined(separator: "\n"), json: object)
    }

    /// Prints the objects a query finds (in sections, with `section by`).
    func query(_ request: QueryRequest, line: String) async throws {
        let interruption = self.interruption
        let (columns, rows, keys) = try await realm.read { realm in
            let results = try Operations.results(request, line: line, realm)
            let columns = realm.schema[request.type]!.properties.filter(\.isStored).map(\.name)
            let section = try request.section.map { try Operations.sectionPath($0, of: request.type, realm) }
            var rows: [JSONValue] = []
            var keys: [JSONValue] = []
            for result in results {
                try interruption.check()
                guard let object = DynamicObject(result) else { continue }
                rows.append(Operations.json(object, realm))
                if let section { keys.append(Operations.value(at: section, of: object, realm)) }
            }
            return (columns, rows, keys)
        }
        guard let path = request.section else {
            print(table(columns: columns, rows: rows), json: .array(rows))
            return
        }
        // Sections in the order of their first object, as `Results.sectioned(by:sortDescriptors:)` with a
        // function makes them (the query's sort decides).
        var order: [JSONValue] = []
        var members: [JSONValue: [JSONValue]] = [:]
        for (key, row) in zip(keys, rows) {
            if members[key] == nil { order.append(key) }
            members[key, default: []].append(row)
        }
        let text = order.map { key in
            let rows = members[key]!
            return "\(path): \(TextTable.cell(key))\n" + table(columns: columns, rows: rows)
        }
        let json = order.map { key in JSONValue.object([("key", key), ("objects", .array(members[key]!))]) }
        print(
            text.joined(separator: "\n\n") + (order.count > 1 ? "\n(\(order.count) sections)" : ""),
            json: .array(json))
    }

    /// Prints the number of objects a query finds.
    func count(_ type: String, where predicate: PredicateText?, line: String) async throws {
        let n = try await realm.read { realm in
            try Operations.results(QueryRequest(type: type, predicate: predicate), line: line, realm).count
        }
        print(String(n), json: .int(Int64(n)))
    }

    /// Changes one object.
    func update(_ type: String, _ key: ObjectReference, values: JSONValue) async throws {
        let name = try await change { realm in
            let object = try Operations.find(type, key, realm)
            try Operations.apply(try Operations.pairs(values, type), to: object, realm)
            return Operations.name(object, realm)
        }
        print("Updated \(type) \(name).", json: .object([("updated", .string(type)), ("count", 1)]))
    }

    /// Changes the objects a query finds.
    func update(_ type: String, where predicate: PredicateText, set assignments: [Assignment], line: String)
        async throws
    {
        let interruption = self.interruption
        let n = try await change { realm in
            let results = try Operations.results(QueryRequest(type: type, predicate: predicate), line: line, realm)
            let objects = results.compactMap { DynamicObject($0) }
            let pairs = assignments.map { ($0.property, $0.value) }
            for object in objects {
                try interruption.check()
                try Operations.apply(pairs, to: object, realm)
            }
            return objects.count
        }
        print(
            "Updated \(Self.count(n, type)).",
            json: .object([("updated", .string(type)), ("count", .int(Int64(n)))]))
    }

    /// Deletes one object.
    func delete(_ type: String, _ key: ObjectReference) async throws {
        let name = try await change { realm in
            let object = try Operations.find(type, key, realm)
            let name = Operations.name(object, realm)
            try realm.delete(object)
            return name
        }
        print("Deleted \(type) \(name).", json: .object([("deleted", .string(type)), ("count", 1)]))
    }

    /// Deletes the objects a query finds.
    func delete(_ type: String, where predicate: PredicateText, line: String) async throws {
        let interruption = self.interruption
        let n = try await change { realm in
            let results = try Operations.results(QueryRequest(type: type, predicate: predicate), line: line, realm)
            let objects = results.compactMap { DynamicObject($0) }
            for object in objects where !object.isInvalidated {
                try interruption.check()
                try realm.delete(object)
            }
            return objects.count
        }
        print(
            "Deleted \(Self.count(n, type)).",
            json: .object([("deleted", .string(type)), ("count", .int(Int64(n)))]))
    }

    /// Opens a transaction.
    func begin() async throws {
        guard !inTransaction else { throw ShellError("a transaction is already open") }
        try await realm.beginWrite()
        inTransaction = true
        print("Transaction open.", json: .object([("transaction", "open")]))
    }

    /// Commits the open transaction.
    func commit() async throws {
        guard inTransaction else { throw ShellError("no transaction is open; 'begin' opens one") }
        inTransaction = false
        try await realm.commitWrite()
        markChanged()
        print("Committed.", json: .object([("transaction", "committed")]))
    }

    /// Rolls the open transaction back.
    func rollback() async throws {
        guard inTransaction else { throw ShellError("no transaction is open; 'begin' opens one") }
        inTransaction = false
        await realm.cancelWrite()
        print("Rolled back.", json: .object([("transaction", "rolled back")]))
    }

    /// Starts a watch.
    func watch(_ name: String, _ request: QueryRequest, line: String) async throws {
        guard !inTransaction else { throw ShellError("finish the open transaction before starting a watch") }
        guard !watches.contains(where: { $0.name == name }) else {
            throw ShellError("there is already a watch named '\(name)'; 'unwatch \(name)' first")
        }
        let n = try await realm.read { realm in try Operations.results(request, line: line, realm).count }
        watches.append(Watch(name: name, request: request))
        do {
            try await startWatch(at: watches.count - 1)
        } catch {
            watches.removeLast()
            throw error
        }
        print(
            "Watching \(name): \(Self.count(n, request.type)).",
            json: .object([("watching", .string(name)), ("count", .int(Int64(n)))]))
    }

    /// Stops a watch.
    func unwatch(_ name: String) throws {
        guard let i = watches.firstIndex(where: { $0.name == name }) else {
            throw ShellError("there is no watch named '\(name)'")
        }
        watches[i].live?.cancel()
        watches.remove(at: i)
        print("Stopped watching \(name).", json: .object([("unwatched", .string(name))]))
    }

    /// Sets how many rows a watch prints per change set, for every watch; the live tasks
    /// follow with the new limit.
    func setWatchRowLimit(_ rows: Int) async {
        watchRowLimit = rows
        for watch in watches { watch.follower?.renderer = watchRenderer(for: watch) }
        print(
            "A watch prints at most \(rows) row\(rows == 1 ? "" : "s") per change.",
            json: .object([("watchRows", .int(Int64(rows)))]))
    }

    /// Prints the watches.
    func listWatches() {
        var table = TextTable(columns: ["watch", "query"], maximumWidth: io.width())
        table.rows = watches.map { [$0.name, $0.request.text] }
        print(
            watches.isEmpty ? "No watches." : table.rendered(mode),
            json: .array(
                watches.map { .object([("name", .string($0.name)), ("query", .string($0.request.text))]) }))
    }

    /// Saves a file realm.
    func save() async throws {
        guard case .file(let path, let store) = storage else {
            throw ShellError(
                "this realm lives in memory; saving needs a file realm, and file realms need the Persistence module, not available yet"
            )
        }
        if inTransaction { throw ShellError("'commit' or 'rollback' the open transaction before saving") }
        try await store.save(realm, to: path)
        hasUnsavedChanges = false
        print("Saved \(path).", json: .object([("saved", .string(path))]))
    }

    /// Sets the output mode, or shows it.
    func setMode(_ newMode: OutputMode?) {
        if let newMode { mode = newMode }
        print("Output mode: \(mode.rawValue).", json: .object([("mode", .string(mode.rawValue))]))
    }
}
