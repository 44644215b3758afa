import LiveObjects
import LiveObjectsJSON

/// Watches: each `watch` is a query whose change sets (`Results.changes()`) are printed as they
/// happen, the shell's own commands' and other processes' alike.
///
/// Each watch has one subscription, followed by a task of its own from the `watch` command
/// until `unwatch` (or `define`, or the end): the task renders every change set and hands the
/// text to its ``WatchFollower``. Between commands the follower passes it on to
/// ``Shell/liveOutput`` (at a terminal: printed above the line being edited).
///
/// Around a command that can change objects (outside an open transaction: from `begin` to
/// `commit` or `rollback`), the command's change sets are printed after its own output instead:
/// before the command the follower starts keeping the texts; after it, the shell reads the
/// version of the last change set the subscription yielded (the realm yields a commit's change
/// sets before the write returns), waits until the task has rendered up to that version, and
/// prints what was kept. One subscription serves the whole watch: a command costs the watch no
/// evaluation of its query.
extension Shell {
    /// The most rows a change set prints unless `watches rows N` says otherwise; the rest are
    /// counted in a `… and N more` line.
    static let defaultWatchRowLimit = 20

    /// Starts a watch's subscription and the task that follows it, from rows read now (a new
    /// watch, or the realm replaced by `define`).
    func startWatch(at i: Int) async throws {
        let request = watches[i].request
        let (changes, state) = try await realm.read { realm in
            let results = try Operations.results(request, line: "", realm)
            return (results.changes(), WatchState(version: realm.version, snapshot: results.freeze()))
        }
        let follower = WatchFollower(renderer: watchRenderer(for: watches[i]), sink: liveSink)
        watches[i].follower = follower
        watches[i].changes = changes
        watches[i].live = Task { await Shell.follow(changes, from: state, follower) }
    }

    /// Renders each change set of `changes` and hands it to `follower`, until the subscription
    /// is ended.
    static func follow(
        _ changes: CollectionChanges<Object>, from state: WatchState, _ follower: WatchFollower
    ) async {
        var state = state
        var iterator = changes.makeAsyncIterator()
        while let change = await iterator.next() {
            let (next, text) = apply(change, after: state, follower.renderer)
            state = next
            follower.handled(version: change.version, text: text)
        }
        follower.ended()
    }

    func watchRenderer(for watch: Watch) -> WatchRenderer {
        WatchRenderer(
            name: watch.name, type: watch.request.type,
            properties: realm.schema[watch.request.type]?.properties.filter(\.isStored) ?? [], json: json,
            rowLimit: watchRowLimit)
    }

    /// Before a command that can change objects: each watch keeps its change sets' texts for
    /// ``reportWatches()``.
    func armWatches() {
        for watch in watches { watch.follower?.keep() }
    }

    /// Ends a watch's task, after it rendered what it had received.
    func stopLive(at i: Int) async {
        guard let task = watches[i].live else { return }
        watches[i].live = nil
        watches[i].follower = nil
        watches[i].changes = nil
        // Cancelling ends the stream: the iterator returns what is buffered, then nil.
        task.cancel()
        await task.value
    }

    /// Stops every watch's task (before `define` replaces the realm, and when the shell ends).
    func stopWatches() async {
        for i in watches.indices { await stopLive(at: i) }
    }

    /// After a command (outside a transaction): prints the change sets each watch kept once its
    /// task has rendered every change set yielded so far, and passes the next ones on live
    /// again; starts the watches a `define` stopped.
    func reportWatches() async {
        for i in watches.indices {
            guard let follower = watches[i].follower, let changes = watches[i].changes else {
                if watches[i].live == nil { try? await startWatch(at: i) }
                continue
            }
            await follower.wait(until: changes.lastYieldedVersion)
            for text in follower.release() { io.output(text) }
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

/// What a watch's task shares with the shell: the renderer, where rendered change sets go
/// (passed on live, or kept while a command runs), and how far the task has got.
final class WatchFollower: Sendable {
    private struct State {
        var renderer: WatchRenderer
        var keeping = false
        var kept: [String] = []
        /// The version of the last change set handled (rendered, or skipped as already seen).
        var handled: UInt64 = 0
        var ended = false
        var waiter: (version: UInt64, continuation: CheckedContinuation<Void, Never>)?

        /// The waiter, taken, when what it waits for has happened.
        mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
            guard let waiter, ended || handled >= waiter.version else { return nil }
            self.waiter = nil
            return waiter.continuation
        }
    }

    private let state: Locked<State>
    private let sink: @Sendable (String) -> Void

    init(renderer: WatchRenderer, sink: @escaping @Sendable (String) -> Void) {
        self.state = Locked(State(renderer: renderer))
        self.sink = sink
    }

    /// The renderer of the next change set.
    var renderer: WatchRenderer {
        get { state.withLock { $0.renderer } }
        set { state.withLock { $0.renderer = newValue } }
    }

    /// Keeps the texts of the next change sets instead of passing them on.
    func keep() { state.withLock { $0.keeping = true } }

    /// The texts kept since ``keep()``; passes the next ones on again.
    func release() -> [String] {
        state.withLock { state in
            defer {
                state.kept = []
                state.keeping = false
            }
            return state.kept
        }
    }

    /// Called by the task for each change set, in order.
    func handled(version: UInt64, text: String?) {
        let (pass, waiter) = state.withLock { state -> (String?, CheckedContinuation<Void, Never>?) in
            state.handled = max(state.handled, version)
            var pass: String?
            if let text {
                if state.keeping { state.kept.append(text) } else { pass = text }
            }
            return (pass, state.takeWaiter())
        }
        if let pass { sink(pass) }
        waiter?.resume()
    }

    /// Called by the task when its subscription has ended: nothing more will come.
    func ended() {
        state.withLock { state in
            state.ended = true
            return state.takeWaiter()
        }?.resume()
    }

    /// Returns once the task has handled the change set of `version` (or a later one), or has
    /// ended.
    func wait(until version: UInt64) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.ended || state.handled >= version { return true }
                state.waiter = (version, continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// Where the change sets of other processes' commits go when the shell has no
/// ``Shell/liveOutput``: kept until the next command, which prints them first.
final class LiveQueue: Sendable {
    let texts = Locked<[String]>([])

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
        if property.isMap { return Operations.mapJSON(value, property) { json($0, $1, of: object) } }
        if case .list(let items) = value {
            var element = property
            element.isList = false
            element.isSet = false
            element.isMap = false
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
