import Foundation
import LiveObjects
import LiveObjectsJSON

/// Opens and saves realms kept in snapshot files: the hook through which the Persistence module
/// gives the shell file realms. Without one, `liveobj FILE` and `save` report that file realms
/// are not available.
package protocol RealmFileStore: Sendable {
    /// Opens the realm in a snapshot file. With `create`, a missing file is a new, empty realm;
    /// without, a missing file is an error.
    func open(path: String, create: Bool) async throws -> Realm
    /// Writes the realm to its file, atomically: the old file stays whole until the new one is
    /// complete.
    func save(_ realm: Realm, to path: String) async throws
    /// The size of the file in bytes, if it exists.
    func fileSize(path: String) -> Int64?
    /// Whether every commit is in the file (or its journal) when its write returns. Then the
    /// shell has no unsaved changes to warn about, and `save` only compacts the file. The
    /// default is false: changes reach the file only through ``save(_:to:)``.
    var keepsEveryCommit: Bool { get }
    /// Moves the realm of the file at `path` to a larger schema (the shell's `define`): on
    /// return `realm` is the realm to go on with, holding every object with the new schema and
    /// schema version. When it throws, nothing was lost and `realm` is the realm to go on with
    /// (unless the error says that the file could not be opened again).
    ///
    /// The default copies the objects into a new realm in memory, which ``save(_:to:)`` then
    /// writes to the file.
    func changeSchema(of realm: inout Realm, path: String, to schema: Schema, schemaVersion: UInt64) async throws
}

extension RealmFileStore {
    package var keepsEveryCommit: Bool { false }

    package func changeSchema(of realm: inout Realm, path: String, to schema: Schema, schemaVersion: UInt64)
        async throws
    {
        realm = try await RealmDump.copy(realm, to: schema, schemaVersion: schemaVersion)
    }
}

/// Where the shell's realm lives.
package enum ShellStorage: Sendable {
    /// In memory only: the data lives as long as the shell.
    case memory
    /// In a snapshot file, saved through a file store with `save`.
    case file(path: String, store: any RealmFileStore)
}

/// How the shell talks to its user: result and error lines, and questions.
package struct ShellIO {
    /// Writes one result line (or several, separated by new lines) to standard output.
    package var output: (String) -> Void
    /// Writes one error line (or several) to standard error.
    package var errorOutput: (String) -> Void
    /// Asks a yes/no question when interactive; nil when there is nobody to ask.
    package var ask: ((String) -> Bool?)?
    /// The width of the terminal showing the output, or nil when it is not a terminal (then
    /// table values are never cut).
    package var width: () -> Int?

    package init(
        output: @escaping (String) -> Void, errorOutput: @escaping (String) -> Void,
        ask: ((String) -> Bool?)? = nil, width: @escaping () -> Int? = { nil }
    ) {
        self.width = width
        self.output = output
        self.errorOutput = errorOutput
        self.ask = ask
    }
}

/// The `liveobj` shell: parses command lines and runs them against a realm through the dynamic
/// API, printing aligned tables or, with `json`, one JSON document per result.
package final class Shell {
    /// What running a command line did.
    package enum Outcome: Equatable, Sendable {
        case succeeded
        case failed
        case quit
    }

    /// The realm the commands run against (replaced by `define`).
    package internal(set) var realm: Realm
    let storage: ShellStorage
    /// How results are printed (`mode`).
    package internal(set) var mode: OutputMode
    var json: Bool { mode == .json }
    var io: ShellIO
    /// Whether a transaction opened by `begin` is open.
    package internal(set) var inTransaction = false
    /// Whether the realm has committed changes its file does not have yet.
    package internal(set) var hasUnsavedChanges = false
    var watches: [Watch] = []
    /// The most rows a watch prints per change set (`watches rows N`).
    var watchRowLimit = Shell.defaultWatchRowLimit
    /// Raised by Ctrl-C at a terminal: the running command stops and changes nothing.
    let interruption: InterruptFlag
    /// The line of the script the command being run starts on, named in its errors.
    var scriptLine: Int?

    /// Where the change sets of commits made by other processes are printed, from the task
    /// following a watch, as they arrive (at a terminal: above the line being edited). When nil,
    /// they are printed before the next command's output.
    var liveOutput: (@Sendable (String) -> Void)?
    let liveQueue = LiveQueue()
    var liveSink: @Sendable (String) -> Void {
        if let liveOutput { return liveOutput }
        let queue = liveQueue
        return { queue.post($0) }
    }

    /// A watched query: its subscription, the task following it, and what the task shares with
    /// the shell (nil while `define` replaces the realm).
    struct Watch {
        var name: String
        var request: QueryRequest
        var changes: CollectionChanges<Object>?
        var live: Task<Void, Never>?
        var follower: WatchFollower?
    }

    /// Creates a shell over a realm.
    package init(
        realm: Realm, storage: ShellStorage = .memory, json: Bool = false, mode: OutputMode? = nil, io: ShellIO,
        interruption: InterruptFlag = InterruptFlag()
    ) {
        self.mode = mode ?? (json ? .json : .table)
        self.interruption = interruption
        self.realm = realm
        self.storage = storage
        self.io = io
    }

    deinit {
        for watch in watches { watch.live?.cancel() }
    }

    /// Prints the change sets of other processes' commits received since the last command (when
    /// there is no ``liveOutput``).
    func printLiveChanges() {
        for text in liveQueue.take() { io.output(text) }
    }

    // MARK: Running

    /// Runs one or more commands (separated by new lines or `;`), stopping at the first that
    /// fails or quits.
    package func run(_ text: String) async -> Outcome {
        for line in CommandParser.split(text) {
            let outcome = await runCommand(line)
            if outcome != .succeeded { return outcome }
        }
        return .succeeded
    }

    /// Runs one command (one piece of ``CommandSplitter``'s output).
    func runCommand(_ line: String) async -> Outcome {
        let command: Command
        do {
            guard let parsed = try CommandParser.parse(line) else { return .succeeded }
            command = parsed
        } catch {
            report(error.text)
            return .failed
        }
        if case .quit = command { return quit() ? .quit : .failed }
        if case .file(let path, _) = storage, await realm.isClosed {
            // Only after a `define` whose migration failed and whose file could not be opened again.
            report("Error: \(path) is no longer open in this shell; quit and start the shell again")
            return .failed
        }
        printLiveChanges()
        let mutates = command.mutates
        if mutates && !inTransaction { armWatches() }
        if case .define = command { await stopWatches() }
        var outcome = Outcome.succeeded
        do {
            // Ctrl-C stops a running query too (`cancelled`), not only the commands' own loops.
            let interruption = self.interruption
            try await QueryCancellation.$current.withValue(QueryCancellation { interruption.isRaised }) {
                try await execute(command, line: line)
            }
        } catch let error as ShellError {
            report(error.text)
            outcome = .failed
        } catch let error as LiveObjectsError {
            report("Error: " + Operations.message(error) + suggestion(for: error))
            outcome = .failed
        } catch {
            report("Error: \(error)")
            outcome = .failed
        }
        if !inTransaction { await reportWatches() }
        printLiveChanges()
        return outcome
    }

    /// `; did you mean 'name'?` for an unknown property of a type (a misspelt key in the JSON of
    /// `create`, `update` or `set`), or nothing.
    func suggestion(for error: LiveObjectsError) -> String {
        guard error.code == .unknownProperty, let type = error.objectType, let property = error.property,
            !property.contains("."), !error.message.contains("did you mean"),
            let schema = realm.schema.objectSchemas.first(where: { $0.name == type })
        else { return "" }
        return Suggestion.clause(for: property, among: schema.properties.map(\.name))
    }

    /// Called when the input ends. Returns false (after saying why) when that loses something:
    /// an open transaction (rolled back) or unsaved changes.
    package func finish() async -> Bool {
        if inTransaction {
            await realm.cancelWrite()
            inTransaction = false
            io.errorOutput("Error: the input ended inside a transaction; its changes were rolled back")
            return false
        }
        if hasUnsavedChanges, case .file(let path, _) = storage {
            io.errorOutput("Error: the changes to \(path) were not saved; end with 'save' to keep them")
            return false
        }
        return true
    }

    /// Writes an error, naming the script's line when there is one: `Error: line 3: …`.
    func report(_ text: String) {
        guard let scriptLine, text.hasPrefix("Error: ") else {
            io.errorOutput(text)
            return
        }
        io.errorOutput("Error: line \(scriptLine): " + text.dropFirst("Error: ".count))
    }

    /// At the end of input at a terminal (Ctrl-D): asks before losing an open transaction or
    /// unsaved changes. Returns false to stay in the shell.
    func confirmEnd() async -> Bool {
        if inTransaction {
            guard let ask = io.ask, ask("A transaction is open. Roll it back and quit? [y/N] ") == true else {
                return false
            }
            await realm.cancelWrite()
            inTransaction = false
        }
        return quit()
    }

    func quit() -> Bool {
        if inTransaction {
            io.errorOutput("Error: a transaction is open; 'commit' or 'rollback' it before quitting")
            return false
        }
        guard hasUnsavedChanges, case .file(let path, _) = storage else { return true }
        guard let ask = io.ask else {
            io.errorOutput("Error: the changes to \(path) are not saved; 'save' them before quitting")
            return false
        }
        switch ask("Quit without saving the changes to \(path)? [y/N] ") {
        case true?: return true
        default: return false
        }
    }

    func print(_ text: String, json value: @autoclosure () -> JSONValue) {
        io.output(json ? value().compact : text)
    }

    // MARK: Writes

    /// Runs a change: in its own write, or inside the open transaction, where a failure rolls
    /// back only this command's changes.
    func change<T: Sendable>(_ body: @escaping @Sendable (isolated Realm) throws -> T) async throws -> T {
        if inTransaction {
            return try await realm.read { realm in
                let savepoint = realm.store.makeSavepoint()
                do {
                    let result = try body(realm)
                    if let error = realm.store.takePendingError() { throw error }
                    return result
                } catch {
                    realm.store.rollback(to: savepoint)
                    throw error
                }
            }
        }
        let result = try await realm.write { realm in try body(realm) }
        markChanged()
        return result
    }

    func markChanged() {
        if case .file(_, let store) = storage, !store.keepsEveryCommit { hasUnsavedChanges = true }
    }

    // MARK: Commands

    func execute(_ command: Command, line: String) async throws {
        switch command {
        case .help(let topic): try help(topic)
        case .types: try await showTypes()
        case .schema(let type): try showSchema(type)
        case .define(let definition):
            try await define(definition)
        case .create(let type, let values): try await create(type, values)
        case .get(let type, let key): try await get(type, key)
        case .query(let request): try await query(request, line: line)
        case .count(let type, let predicate): try await count(type, where: predicate, line: line)
        case .updateObject(let type, let key, let values): try await update(type, key, values: values)
        case .updateWhere(let type, let predicate, let assignments):
            try await update(type, where: predicate, set: assignments, line: line)
        case .deleteObject(let type, let key): try await delete(type, key)
        case .deleteWhere(let type, let predicate): try await delete(type, where: predicate, line: line)
        case .begin: try await begin()
        case .commit: try await commit()
        case .rollback: try await rollback()
        case .watch(let name, let request): try await watch(name, request, line: line)
        case .unwatch(let name): try unwatch(name)
        case .watches(let rows):
            if let rows {
                await setWatchRowLimit(rows)
            } else {
                listWatches()
            }
        case .importFile(let type, let path):
            try await importFile(type: type, path: path)
        case .export(let type, let path):
            try await export(type: type, path: path)
        case .save: try await save()
        case .stats:
            try await stats()
        case .mode(let newMode): setMode(newMode)
        case .quit:
            break
        }
    }

    /// A type's schema as JSON fields.
    static func json(_ schema: ObjectSchema) -> JSONValue {
        .object([
            ("name", .string(schema.name)), ("embedded", .bool(schema.isEmbedded)),
            (
                "properties",
                .array(
                    schema.properties.map { p in
                        var fields: JSONMembers = [
                            ("name", .string(p.name)),
                            ("type", .string("\(p.type)")),
                            ("optional", .bool(p.isOptional)), ("list", .bool(p.isList)),
                        ]
                        // A set and a map are lists that say which.
                        if p.isSet { fields.append(("set", true)) }
                        if p.isMap { fields.append(("map", true)) }
                        if let objectType = p.objectType { fields.append(("objectType", .string(objectType))) }
                        if let origin = p.originProperty { fields.append(("originProperty", .string(origin))) }
                        if p.isPrimaryKey { fields.append(("primaryKey", true)) }
                        if p.isIndexed { fields.append(("indexed", true)) }
                        if p.isFullTextIndexed { fields.append(("fullText", true)) }
                        if p.type == .object { fields.append(("deleteRule", .string("\(p.deleteRule)"))) }
                        return .object(fields)
                    })
            ),
        ])
    }

    static func count(_ n: Int, _ type: String) -> String {
        "\(n) \(type) object\(n == 1 ? "" : "s")"
    }

    /// Objects in the output mode: an aligned table with a count line, blocks of lines, or CSV
    /// (values in full, strings unescaped).
    func table(columns: [String], rows: [JSONValue]) -> String {
        var table = TextTable(columns: columns, maximumWidth: mode == .table ? io.width() : nil)
        if mode == .csv {
            table.rows = rows.map { row in
                columns.map { column in
                    switch row[column] ?? .null {
                    case .string(let s): s
                    case .null: ""
                    case let value: value.compact
                    }
                }
            }
            return table.rendered(.csv)
        }
        let footer = "(\(rows.count) object\(rows.count == 1 ? "" : "s"))"
        guard !rows.isEmpty else { return footer }
        table.rows = rows.map { row in columns.map { TextTable.cell(row[$0] ?? .null) } }
        return table.rendered(mode) + "\n" + footer
    }

    // MARK: Stats

    func stats() async throws {
        let (counts, version) = try await realm.read { realm in
            (try realm.schema.objectSchemas.map { ($0.name, try realm.dynamicObjects($0.name).count) }, realm.version)
        }
        let schemaVersion = realm.configuration.schemaVersion
        var storageText = "in memory"
        var storageJSON: JSONMembers = [("storage", "memory")]
        if case .file(let path, let store) = storage {
            let size = store.fileSize(path: path)
            storageText =
                "\(path), " + (size.map { "\($0) bytes" } ?? "not written yet")
                + (hasUnsavedChanges ? ", unsaved changes" : "")
            storageJSON = [
                ("storage", "file"), ("file", .string(path)), ("fileSize", size.map { .int($0) } ?? .null),
                ("unsavedChanges", .bool(hasUnsavedChanges)),
            ]
        }
        var table = TextTable(columns: ["type", "objects"])
        table.rows = counts.map { [$0.0, String($0.1)] }
        let text =
            table.text
            + "\n\nversion:         \(version)\nschema version:  \(schemaVersion)\nstorage:         \(storageText)"
        print(
            text,
            json: .object(
                [
                    ("objects", .object(counts.map { ($0.0, .int(Int64($0.1))) })), ("version", .int(Int64(version))),
                    ("schemaVersion", .int(Int64(schemaVersion))),
                ] + storageJSON))
    }
}

extension Command {
    /// Whether the command can change objects (watches keep their change sets for after it).
    var mutates: Bool {
        switch self {
        case .create, .updateObject, .updateWhere, .deleteObject, .deleteWhere, .begin, .importFile: true
        default: false
        }
    }
}
