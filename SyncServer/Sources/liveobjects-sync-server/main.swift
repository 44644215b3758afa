import Foundation
import LiveObjectsSyncServer
import Logging

// The command line: `serve`, `user add NAME [--expires-in DURATION | --expires DATE]`,
// `user revoke NAME`, `space add NAME --types TYPE,…`, `space types NAME [TYPE…]`,
// `space schema NAME [--file FILE]`, `space check NAME`, `grant USER SPACE reader|writer|admin`,
// `user remove NAME`, `users`, `ungrant USER SPACE`, `grants SPACE`, `rules set SPACE FILE`,
// `rules show SPACE`. The database comes from the environment
// (DatabaseConfiguration.fromEnvironment).

let usage = """
    OVERVIEW: The LiveObjects sync server (docs/SYNC-PROTOCOL.md), on PostgreSQL.

    USAGE: liveobjects-sync-server <command>

    COMMANDS:
      serve [--host HOST] [--port PORT]   Serve HTTP (default 127.0.0.1:8080; port 0 picks one).
            [--header-timeout S] [--read-timeout S] [--idle-timeout S] [--max-connections N]
                                          A new connection sends its request head within
                                          --header-timeout (10 s), a body pauses at most
                                          --read-timeout (30 s), a connection waits for its
                                          next request at most --idle-timeout (60 s); over
                                          --max-connections (4000) open at once, a connection
                                          is answered 503 and closed.
      user add NAME [--expires-in DURATION | --expires DATE]
                                          Add a user (or give one another token); prints the
                                          token. DURATION: seconds, or 90s, 45m, 12h, 30d, 2w;
                                          DATE: 2027-01-31 or 2027-01-31T12:00:00Z. Without
                                          either, the token never expires.
      user revoke NAME                    Revoke every token of a user.
      user remove NAME                    Revoke every token of a user and take every role
                                          away (its objects stay).
      users                               List the users, their active tokens and roles.
      space add NAME --schema FILE        Add a space with a schema (see space schema).
      space add NAME --types TYPE,...     Add a space (or set the types of one without a
                                          schema) that accepts the given object types, such
                                          as Card,Holder, checking type names only.
      space types NAME [TYPE...]          Print a space's types, or replace them (a space
                                          without a schema).
      space schema NAME [--file FILE]     Print a space's schema, or set it from a JSON file
                                          (SyncSchema in LiveObjectsSync writes one): a new
                                          version may add types and optional properties only.
                                          Pushes are then checked against it, change by change.
      space check NAME [--remove]         List the stored objects that do not fit the space's
                                          schema (stored before it had one); exit status 1 if
                                          any. --remove removes them from the database (the
                                          only repair of an object whose id does not fit).
      grant USER SPACE ROLE               Give a user a role in a space: reader, writer or admin.
      ungrant USER SPACE                  Take a user's role in a space away.
      grants SPACE                        List the users with a role in a space.
      rules set SPACE FILE                Set a space's read and write rules from a JSON file,
                                          {"TaskItem": {"read": "...", "write": "..."}}, checked
                                          against its schema; {} removes them.
      rules show SPACE                    Print a space's rules.
      compact --older-than DURATION       Remove the deleted objects deleted, and the receipts
                                          of changes applied, longer ago than DURATION (such
                                          as 30d); a device whose cursor is older than a
                                          deletion removed pulls again from the beginning.

    The database: LIVEOBJECTS_SYNC_DATABASE_URL=postgres://USER:PASSWORD@HOST:PORT/DATABASE, or
    PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE. TLS to it: ?sslmode=MODE in the URL, or
    PGSSLMODE: disable, prefer (the default), require, verify-ca or verify-full; the
    authorities of verify-ca and verify-full: ?sslrootcert=FILE or PGSSLROOTCERT (a PEM file;
    default, the system's).

    OPTIONS:
      -h, --help                          Show this help.
    """

struct UsageError: Error, CustomStringConvertible {
    var description: String
}

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
    if code == 64 { FileHandle.standardError.write(Data("\n\(usage)\n".utf8)) }
    exit(code)
}

/// The options of `serve`.
func readServeOptions(_ arguments: ArraySlice<String>, into service: inout SyncServerService) throws {
    var rest = arguments
    func seconds(_ option: String, _ value: String) throws -> Duration {
        guard let number = Double(value), number > 0, number <= 86_400 else {
            throw UsageError(description: "\(option) takes a number of seconds, over 0 and at most 86400")
        }
        return .milliseconds(Int64((number * 1000).rounded(.up)))
    }
    while let option = rest.popFirst() {
        guard let value = rest.popFirst() else { throw UsageError(description: "\(option) needs a value") }
        switch option {
        case "--host": service.host = value
        case "--port":
            guard let port = Int(value), (0...65535).contains(port) else {
                throw UsageError(description: "--port takes a number from 0 to 65535")
            }
            service.port = port
        case "--header-timeout": service.http.headerTimeout = try seconds(option, value)
        case "--read-timeout": service.http.readTimeout = try seconds(option, value)
        case "--idle-timeout": service.http.idleTimeout = try seconds(option, value)
        case "--max-connections":
            guard let count = Int(value), count >= 1 else {
                throw UsageError(description: "--max-connections takes a number of at least 1")
            }
            service.http.maximumConnections = count
        default: throw UsageError(description: "unknown option \(option)")
        }
    }
}

/// Raises the process's limit of open files toward its hard limit, so that the connection bound,
/// not the file limit, turns connections away; returns the limit in force.
func raiseFileLimit(for connections: Int) -> Int {
    #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        let resource = RLIMIT_NOFILE
    #endif
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0 else { return 0 }
    let wanted = rlim_t(connections + 256)
    if limit.rlim_cur < wanted {
        var raised = limit
        raised.rlim_cur = min(wanted, limit.rlim_max)
        if setrlimit(resource, &raised) == 0 { limit = raised }
    }
    return Int(clamping: limit.rlim_cur)
}

/// `serve [OPTION...]`: runs until SIGTERM or SIGINT.
func serve(_ arguments: [String], _ service: SyncServerService, _ database: DatabaseConfiguration) async throws {
    var service = service
    try readServeOptions(arguments.dropFirst(), into: &service)
    let host = service.host
    service.stopsOnSignals = true
    let files = raiseFileLimit(for: service.http.maximumConnections)
    if files < service.http.maximumConnections + 256 {
        service.logger.warning(
            "the process may open \(files) files, fewer than --max-connections \(service.http.maximumConnections) and 256 more: raise its limit (ulimit -n)"
        )
    }
    try await service.run { port in
        print("liveobjects-sync-server listening on http://\(host):\(port) (database \(database))")
        fflush(nil)  // a pipe buffers stdout; whoever started the server reads the port now
    }
}

/// `user add NAME [--expires-in DURATION | --expires DATE]`: prints the token.
func addUser(_ arguments: [String], _ service: SyncServerService) async throws {
    var expiry: TokenExpiry?
    var rest = arguments.dropFirst(3)
    while let option = rest.popFirst() {
        guard let value = rest.popFirst() else { throw UsageError(description: "\(option) needs a value") }
        guard expiry == nil else { throw UsageError(description: "give --expires-in or --expires once") }
        do {
            expiry = try TokenExpiry.parse(option: option, value: value)
        } catch {
            throw UsageError(description: error.message)
        }
    }
    let token = try await service.withStore { [expiry] in try await $0.addUser(arguments[2], expiry: expiry) }
    print(token)
}

/// `compact --older-than DURATION`.
func compact(_ arguments: [String], _ service: SyncServerService) async throws {
    guard arguments.count == 3, arguments[1] == "--older-than" else {
        throw UsageError(description: "compact takes --older-than DURATION, such as 30d")
    }
    let seconds: Int64
    do {
        seconds = try TokenExpiry.seconds(arguments[2], option: "--older-than")
    } catch {
        throw UsageError(description: error.message)
    }
    let removed = try await service.withStore { try await $0.compact(olderThan: .seconds(seconds)) }
    print(
        "removed \(removed.deletedObjects) deleted object(s) and \(removed.receipts) receipt(s); "
            + "\(removed.spaces) space(s) now refuse older cursors")
}

func run(_ arguments: [String]) async throws {
    if arguments.isEmpty || arguments.contains("-h") || arguments.contains("--help") {
        print(usage)
        return
    }
    let database = try DatabaseConfiguration.fromEnvironment()
    let service = SyncServerService(database: database)
    switch arguments {
    case let args where args.first == "serve":
        try await serve(args, service, database)
    case let args where args.count >= 3 && args[0] == "user" && args[1] == "add":
        try await addUser(args, service)
    case let args where args.first == "compact":
        try await compact(args, service)
    case let args where args.count == 3 && args[0] == "user" && args[1] == "revoke":
        let count = try await service.withStore { try await $0.revokeTokens(of: args[2]) }
        print("revoked \(count) token(s) of \(args[2])")
    case let args where args.count == 5 && args[0] == "space" && args[1] == "add" && args[3] == "--schema":
        guard let data = FileManager.default.contents(atPath: args[4]) else {
            throw UsageError(description: "cannot read \(args[4])")
        }
        let schema = try SpaceSchema.parse(data)
        let upload = try await service.withStore { store in
            // A space that has a schema already gets a new version (its types are the schema's).
            let current = try? await store.schema(of: args[2])
            if current?.version == nil { try await store.addSpace(args[2], types: schema.types.map(\.name)) }
            return try await store.setSchema(of: args[2], to: schema)
        }
        print(
            "space \(args[2]): schema version \(upload.version), types \(schema.types.map(\.name).joined(separator: ", "))"
        )
    case let args where args.count >= 3 && args[0] == "space" && args[1] == "add":
        guard args.count == 5, args[3] == "--types" else {
            throw UsageError(
                description:
                    "a space declares its schema or the types it accepts: space add \(args[2]) --schema schema.json, or --types Card,Holder"
            )
        }
        let types = typeList(args[4...])
        guard !types.isEmpty else { throw UsageError(description: "--types needs at least one type name") }
        try await service.withStore { try await $0.addSpace(args[2], types: types) }
        print("space \(args[2]) accepts \(types.sorted().joined(separator: ", "))")
        let warning =
            "note: without a schema, space \(args[2]) stores any value of these types; a device skips and reports "
            + "what its model cannot read. Give it one: space schema \(args[2]) --file schema.json\n"
        FileHandle.standardError.write(Data(warning.utf8))
    case let args where args.count >= 3 && args[0] == "space" && args[1] == "types":
        if args.count > 3 {
            let types = typeList(args[3...])
            try await service.withStore { try await $0.setTypes(of: args[2], to: types) }
        }
        let types = try await service.withStore { try await $0.types(of: args[2]) }
        print("space \(args[2]) accepts \(types.isEmpty ? "no types" : types.joined(separator: ", "))")
    case let args where args.count >= 3 && args[0] == "space" && args[1] == "schema":
        if args.count == 3 {
            let found = try await service.withStore { try await $0.schema(of: args[2]) }
            guard let (version, schema) = found else {
                print("space \(args[2]) has no schema")
                return
            }
            print("space \(args[2]), schema version \(version):\n\(schema.json)")
            return
        }
        guard args.count == 5, args[3] == "--file" else {
            throw UsageError(description: "space schema \(args[2]) --file schema.json")
        }
        guard let data = FileManager.default.contents(atPath: args[4]) else {
            throw UsageError(description: "cannot read \(args[4])")
        }
        let schema = try SpaceSchema.parse(data)
        let upload = try await service.withStore { try await $0.setSchema(of: args[2], to: schema) }
        let types = schema.types.map(\.name).sorted().joined(separator: ", ")
        print(
            upload.isNew
                ? "space \(args[2]): schema version \(upload.version), types \(types)"
                : "space \(args[2]): schema unchanged, version \(upload.version)")
    case let args
    where (args.count == 3 || args.count == 4 && args[3] == "--remove") && args[0] == "space"
        && args[1] == "check":
        let removing = args.count == 4
        let problems = try await service.withStore { try await $0.check(space: args[2], removing: removing) }
        for problem in problems { print(problem) }
        print(
            "space \(args[2]): \(problems.count) object(s) do not fit the schema"
                + (removing && !problems.isEmpty ? "; removed (but ids only not in NFC)" : ""))
        if !problems.isEmpty && !removing { exit(1) }
    case let args where args.count == 4 && args[0] == "grant":
        guard let role = Role(rawValue: args[3]) else {
            throw UsageError(description: "a role is reader, writer or admin, not \(args[3])")
        }
        try await service.withStore { try await $0.grant(user: args[1], space: args[2], role: role) }
        print("\(args[1]) is \(role.rawValue) of \(args[2])")
    default:
        guard try await runAccountCommand(arguments, service) else {
            throw UsageError(description: "unknown command: \(arguments.joined(separator: " "))")
        }
    }
}

/// `user remove`, `users`, `ungrant`, `grants` and `rules`; false for another command.
func runAccountCommand(_ arguments: [String], _ service: SyncServerService) async throws -> Bool {
    switch arguments {
    case let args where args.count == 3 && args[0] == "user" && args[1] == "remove":
        let (tokens, grants) = try await service.withStore { try await $0.removeUser(args[2]) }
        print("removed \(args[2]): \(tokens) token(s) revoked, \(grants) role(s) taken away")
    case ["users"]:
        let users = try await service.withStore { try await $0.users() }
        for user in users {
            let roles = user.roles.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.rawValue)" }
            print(
                "\(user.name)\t\(user.activeTokens) active token(s)\t\(roles.isEmpty ? "no role" : roles.joined(separator: ","))"
            )
        }
    case let args where args.count == 3 && args[0] == "ungrant":
        try await service.withStore { try await $0.removeGrant(user: args[1], space: args[2]) }
        print("\(args[1]) has no role in \(args[2]) any more")
    case let args where args.count == 2 && args[0] == "grants":
        let grants = try await service.withStore { try await $0.grants(of: args[1]) }
        for grant in grants { print("\(grant.user)\t\(grant.role.rawValue)") }
    case let args where args.count == 4 && args[0] == "rules" && args[1] == "set":
        guard let data = FileManager.default.contents(atPath: args[3]) else {
            throw UsageError(description: "cannot read \(args[3])")
        }
        let rules = try SpaceRules.parse(data)
        try await service.withStore { try await $0.setRules(of: args[2], to: rules) }
        print(
            rules.isEmpty
                ? "space \(args[2]) has no rules: the roles alone decide"
                : "space \(args[2]): rules for \(rules.types.keys.sorted().joined(separator: ", "))")
    case let args where args.count == 3 && args[0] == "rules" && args[1] == "show":
        let rules = try await service.withStore { try await $0.rules(of: args[2]) }
        print(rules.isEmpty ? "space \(args[2]) has no rules" : rules.json(pretty: true))
    default:
        return false
    }
    return true
}

/// Type names given as `Card,Holder`, `Card Holder` or both.
func typeList(_ arguments: ArraySlice<String>) -> [String] {
    arguments.flatMap { $0.split(separator: ",").map(String.init) }
}

do {
    try await run(Array(CommandLine.arguments.dropFirst()))
} catch let error as UsageError {
    fail(error.description, code: 64)
} catch let error as SyncServerError {
    fail(error.message, code: 1)
} catch {
    fail(String(reflecting: error), code: 1)
}
