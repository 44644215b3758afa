import LiveObjects
import LiveObjectsJSON
import Synchronization

/// Watches: each `watch` is a query whose change sets (`Results.changes()`) are printed as they
/// happen, the shell's own commands' and other processes' alike.
///
/// Between commands, each watch has a live subscription followed by a task of its own: the
/// change sets of the commits the realm applies from other processes are rendered there and
/// handed to ``Shell/liveOutput`` (at a terminal: printed above the line being edited).
///
/// Around a command that can change objects (outside an open transaction: before `begin`),
/// the command's change sets are printed after its own output instead. Before the command a
/// subscription is armed, then the live task is stopped, handing over the rows it knows; after
/// the command (or after `commit` / `rollback`) a new live subscription is made, then the armed
/// one is ended and what it buffered is read to the end: the realm yields change sets
/// synchronously in its commit, so by then every change set of the command is in the buffer.
/// Each subscription is made before the previous one ends, and a change set whose version is
/// not above the version of the rows handed over is skipped: no change set is lost between two
/// subscriptions, none is printed twice.
extension Shell {
    /// The most rows a change set prints unless `watches rows N` says otherwise; the rest are
    /// counted in a `… and N more` line.
    static let defaultWatchRowLimit = 20

    /// Starts a watch's live subscription from rows read now (a new watch, or the realm replaced
    /// by `define`).
    func startWatch(at i: Int) async throws {
        let request = watches[i].request
        let (changes, state) = try await realm.read { realm in
            let results = try Operations.results(request, line: "", realm)
            return (results.changes(), WatchState(version: realm.version, snapshot: results.freeze()))
        }
        startLive(at: i, changes: changes, from: state)
    }

    /// Follows `changes` in a task of its own, from `state`.
    func startLive(at i: Int, changes: CollectionChanges<Object>, from state: WatchState) {
        let renderer = watchRenderer(for: watches[i])
        let sink = liveSink
        let task = Task { await Shell.follow(changes, from: state, renderer, sink) }
        watches[i].live = task
    }

    /// Renders each change set of `changes` to `sink` until the subscription is ended; the rows
    /// after the last one.
    static func follow(
        _ changes: CollectionChanges<Object>, from state: WatchState, _ renderer: WatchRenderer,
        _ sink: @Sendable (String) -> Void
    ) async -> WatchState {
        var state = state
        var iterator = changes.makeAsyncIterator()
        while let change = await iterator.next() {
            let (next, text) = apply(change, after: state, renderer)
            state = next
            if let text { sink(text) }
        }
        return state
    }

    func watchRenderer(for watch: Watch) -> WatchRenderer {
        WatchRenderer(
            name: watch.name, type: watch.request.type,
            properties: realm.schema[watch.request.type]?.properties.filter(\.isStored) ?? [], json: json,
            rowLimit: watchRowLimit)
    }

    /// Before a command that can change objects: arms a subscription for each watch, then stops
    /// its live task.
    func armWatches() async {
        for i in watches.indices where watches[i].armed == nil {
            let request = watches[i].request
            guard
                let changes = try? await realm.read({ realm in
                    try Operations.results(request, line: "", realm).changes()
                })
            else { continue }
            guard let state = await stopLive(at: i) else { continue }
            watches[i].armed = Armed(changes: changes, state: state)
        }
    }

    /// Ends a watch's live task, after it rendered what it had received; the rows it knows.
    func stopLive(at i: Int) async -> WatchState? {
        guard let task = watches[i].live else { return nil }
        watches[i].live = nil
        // Cancelling ends the stream: the iterator returns what is buffered, then nil.
        task.cancel()
        return await task.value
    }

    /// Stops every live task (before `define` replaces the realm, and when the shell ends).
    func stopWatches() async {
        for i in watches.indices {
            _ = await stopLive(at: i)
            watches[i].armed = nil
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
        task.cancel()
        return await task.value
    }

    /// After a command (outside a transaction): prints the change sets of the armed
    /// subscriptions, and follows each watch live again.
    func reportWatches() async {
        for i in watches.indices {
            guard let armed = watches[i].armed else {
                if watches[i].live == nil { try? await startWatch(at: i) }
                continue
            }
            watches[i].armed = nil
            let request = watches[i].request
            let live = try? await realm.read { realm in try Operations.results(request, line: "", realm).changes() }
            var state = armed.state
            let renderer = watchRenderer(for: watches[i])
            for change in await Self.drain(armed.changes) {
                let (next, text) = Self.apply(change, after: state, renderer)
                state = next
                if let text { io.output(text) }
            }
            if let live { startLive(at: i, changes: live, from: state) }
        }
    }

    /// The rows after one change set, and the text that reports it (nil for the first element,
    /// a change set already in `state`, or one without rows).
    ///
    /// Only the rows printed are read (at most the renderer's row limit): a deleted row from the
    /// frozen rows of the state before, the others from the change set's own snapshot.
    static func apply(
        _ change: CollectionChange<Object>, after state: WatchState, _ renderer: WatchRenderer
    ) -> (WatchState, String?) {
        guard !change.isInitial, change.version > state.version else { return (state, nil) }
        let text = renderer.render(change, old: state.snapshot)
        return (WatchState(version: change.version, snapshot: change.snapshot), text)
    }
}

/// A watch's rows at a version, frozen: what its next change set is read against (deleted rows
/// are printed as they were).
struct WatchState: Sendable {
    var version: UInt64
    var snapshot: FrozenResults<Object>
}

/// Where the change sets of other processes' commits go when the shell has no
/// ``Shell/liveOutput``: kept until the next command, which prints them first.
final class LiveQueue: Sendable {
    let texts = Mutex<[String]>([])

    func post(_ text: String) { texts.withLock { $0.append(text) } }

    func take() -> [String] {
        texts.withLock { texts in
            defer { texts = [] }
            return texts
        }
    }
}

/// Renders a watch's change set: a summary line with every count, then at most `rowLimit`
/// rows, so that a large change prints quickly.
struct WatchRenderer: Sendable {
    var name: String
    var type: String
    var properties: [Property]
    var json: Bool
    var rowLimit: Int

    /// A frozen row as JSON, as the shell prints objects (``Operations/json(_:inverse:_:)``),
    /// its links read at the row's version.
    static func row(_ object: FrozenObject<Object>, _ properties: [Property]) -> JSONValue {
        .object(
            properties.map { property in
                (property.name, json((try? object.value(forKey: property.name)) ?? .null, property, of: object))
            })
    }

    static func json(_ value: PropertyValue, _ property: Property, of object: FrozenObject<Object>) -> JSONValue {
        if case .list(let items) = value {
            var element = property
            element.isList = false
            return .array(items.map { json($0, element, of: object) })
        }
        guard case .object(let key) = value else { return Operations.json(scalar: value) }
        guard let type = property.objectType, let target = object.object(ofType: type, key: key) else {
            return .string(key.description)
        }
        let schema = target.objectSchema
        if schema.isEmbedded { return row(target, schema.properties.filter(\.isStored)) }
        if let pk = schema.primaryKey { return json((try? target.value(forKey: pk.name)) ?? .null, pk, of: target) }
        return .string(key.description)
    }

    func row(_ object: FrozenObject<Object>) -> JSONValue { Self.row(object, properties) }

    func render(_ change: CollectionChange<Object>, old: FrozenResults<Object>) -> String? {
        let counts = [
            ("deleted", change.deletions.count), ("inserted", change.insertions.count),
            ("modified", change.modificationsInNewIndices.count), ("moved", change.moves.count),
        ]
        let total = counts.reduce(0) { $0 + $1.1 }
        guard total > 0 else { return nil }
        typealias Entry = (kind: String, index: String, indexJSON: JSONMembers, row: JSONValue)
        var entries: [Entry] = []
        let new = change.snapshot
        for i in change.deletions.prefix(rowLimit) {
            entries.append(("deleted", String(i), [("index", .int(Int64(i)))], row(old[i])))
        }
        for i in change.insertions.prefix(max(0, rowLimit - entries.count)) {
            entries.append(("inserted", String(i), [("index", .int(Int64(i)))], row(new[i])))
        }
        for i in change.modificationsInNewIndices.prefix(max(0, rowLimit - entries.count)) {
            entries.append(("modified", String(i), [("index", .int(Int64(i)))], row(new[i])))
        }
        for move in change.moves.prefix(max(0, rowLimit - entries.count)) {
            entries.append(
                (
                    "moved", "\(move.from)->\(move.to)",
                    [("from", .int(Int64(move.from))), ("to", .int(Int64(move.to)))], row(new[move.to])
                ))
        }
        let more = total - entries.count
        if json {
            var document: JSONMembers = [("watch", .string(name)), ("version", .int(Int64(change.version)))]
            for (kind, _) in counts {
                let items = entries.filter { $0.kind == kind }
                if !items.isEmpty {
                    document.append((kind, .array(items.map { .object($0.indexJSON + [("object", $0.row)]) })))
                }
            }
            if more > 0 {
                document.append(("counts", .object(counts.filter { $0.1 > 0 }.map { ($0.0, .int(Int64($0.1))) })))
                document.append(("more", .int(Int64(more))))
            }
            return JSONValue.object(document).compact
        }
        let summary = counts.filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }
        guard !entries.isEmpty else { return "watch \(name): " + summary.joined(separator: ", ") }
        let columns = properties.map(\.name)
        var table = TextTable(columns: ["change", "index"] + columns)
        table.rows = entries.map { entry in
            [entry.kind, entry.index] + columns.map { TextTable.cell(entry.row[$0] ?? .null) }
        }
        var body = table.text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
        if more > 0 { body.append("  … and \(more) more") }
        return "watch \(name): " + summary.joined(separator: ", ") + "\n" + body.joined(separator: "\n")
    }
}
