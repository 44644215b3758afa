import LiveObjects

/// Watches: each `watch` is a query whose change sets (`Results.changes()`) are printed after
/// every command that affects it.
///
/// Before a command that can change objects (outside an open transaction: before `begin`), each
/// watch subscribes to its query: the subscription's first element is the state before the
/// command. After the command (or after `commit` / `rollback`), the subscription is ended and
/// what it buffered is read to the end: the realm yields change sets synchronously in its
/// commit, so by then every change set of the command is in the buffer, and ending the
/// subscription makes reading it stop there instead of waiting for more.
extension Shell {
    func armWatches() async {
        for i in watches.indices where watches[i].armed == nil {
            let request = watches[i].request
            watches[i].armed = try? await realm.read { realm in
                let results = try Operations.results(request, line: "", realm)
                var rows: [ObjectKey: JSONValue] = [:]
                for element in results {
                    if let object = DynamicObject(element) { rows[object.key] = Operations.json(object, realm) }
                }
                return Armed(changes: results.changes(), rows: rows)
            }
        }
    }

    /// Reads every change set buffered by an armed subscription, ending it.
    static func drain(_ changes: CollectionChanges<Object>) async -> [CollectionChange<Object>] {
        let task = Task {
            var received: [CollectionChange<Object>] = []
            var iterator = changes.makeAsyncIterator()
            while let change = await iterator.next() { received.append(change) }
            return received
        }
        // Cancelling ends the stream: the iterator returns what is buffered, then nil.
        task.cancel()
        return await task.value
    }

    func reportWatches() async {
        for i in watches.indices {
            guard let armed = watches[i].armed else { continue }
            watches[i].armed = nil
            let received = await Self.drain(armed.changes)
            guard var previous = received.first?.snapshot.keys else { continue }
            var previousRows = armed.rows
            for change in received.dropFirst() where !change.isInitial {
                let newKeys = change.snapshot.keys
                let type = watches[i].request.type
                let current: [ObjectKey: JSONValue]
                do {
                    current = try await realm.read { realm in
                        var rows: [ObjectKey: JSONValue] = [:]
                        for key in newKeys {
                            if let object = try realm.dynamicObject(ofType: type, key: key) {
                                rows[key] = Operations.json(object, realm)
                            }
                        }
                        return rows
                    }
                } catch {
                    current = [:]
                }
                report(
                    watches[i].name, type: type, change, old: previous, oldRows: previousRows, new: newKeys,
                    newRows: current)
                previous = newKeys
                previousRows = current
            }
        }
    }

    func report(
        _ name: String, type: String, _ change: CollectionChange<Object>, old: [ObjectKey],
        oldRows: [ObjectKey: JSONValue], new: [ObjectKey], newRows: [ObjectKey: JSONValue]
    ) {
        typealias Entry = (kind: String, index: String, indexJSON: [(String, JSONValue)], row: JSONValue)
        var entries: [Entry] = []
        for i in change.deletions {
            entries.append(("deleted", String(i), [("index", .int(Int64(i)))], oldRows[old[i]] ?? .null))
        }
        for i in change.insertions {
            entries.append(("inserted", String(i), [("index", .int(Int64(i)))], newRows[new[i]] ?? .null))
        }
        for i in change.modificationsInNewIndices {
            entries.append(("modified", String(i), [("index", .int(Int64(i)))], newRows[new[i]] ?? .null))
        }
        for move in change.moves {
            entries.append(
                (
                    "moved", "\(move.from)->\(move.to)",
                    [("from", .int(Int64(move.from))), ("to", .int(Int64(move.to)))],
                    newRows[new[move.to]] ?? .null
                ))
        }
        guard !entries.isEmpty else { return }
        if json {
            var document: [(String, JSONValue)] = [("watch", .string(name)), ("version", .int(Int64(change.version)))]
            for kind in ["deleted", "inserted", "modified", "moved"] {
                let items = entries.filter { $0.kind == kind }
                if !items.isEmpty {
                    document.append((kind, .array(items.map { .object($0.indexJSON + [("object", $0.row)]) })))
                }
            }
            io.output(JSONValue.object(document).compact)
            return
        }
        let summary = ["deleted", "inserted", "modified", "moved"].compactMap { kind -> String? in
            let n = entries.filter { $0.kind == kind }.count
            return n == 0 ? nil : "\(n) \(kind)"
        }
        let columns = realm.schema[type]?.properties.filter(\.isStored).map(\.name) ?? []
        var table = TextTable(columns: ["change", "index"] + columns)
        table.rows = entries.map { entry in
            [entry.kind, entry.index] + columns.map { TextTable.cell(entry.row[$0] ?? .null) }
        }
        let body = table.text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
        io.output("watch \(name): " + summary.joined(separator: ", ") + "\n" + body.joined(separator: "\n"))
    }
}
