import Foundation
import LiveObjects

/// The `liveobj` command-line tool, driven by an array of arguments and closures for input and
/// output, so that tests can run it in-process and compare its output exactly.
package enum CommandLineTool {
    /// The tool's version, printed by `--version`.
    package static let version = "0.1.0"

    /// The exit codes.
    package enum ExitCode {
        static let success: Int32 = 0
        /// A command failed in a script or `-c`, or opening the realm failed.
        package static let failure: Int32 = 1
        /// The command line was not valid.
        package static let usage: Int32 = 64
    }

    /// The parsed command line.
    package struct Options: Equatable, Sendable {
        package var file: String?
        package var demo = false
        package var create = false
        package var commands: [String] = []
        package var json = false
        /// `--mode`: the output mode at the start.
        package var mode: OutputMode?
        package var help = false
        package var version = false
    }

    /// A command-line error, printed with the short usage.
    package struct UsageError: Error, Equatable {
        package var message: String
    }

    package static let usage =
        "liveobj [<file>] [--demo] [--create] [--command <command> ...] [--json] [--mode <mode>]"

    package static let help = """
        OVERVIEW: An interactive shell for LiveObjects realms.

        Opens a realm and runs commands on it: typed at the prompt, given with -c, or read from
        standard input one per line when it is not a terminal. Without <file> or --demo the realm
        is empty and in memory. Type 'help' in the shell for the commands.

        USAGE: \(usage)

        ARGUMENTS:
          <file>                  The snapshot file to open. The shell holds it until it
                                  ends; every command's changes are in its journal
                                  (<file>.journal) when the command returns, and 'save'
                                  or leaving folds them into the snapshot.

        OPTIONS:
          --demo                  Open an in-memory realm filled with a demo data set (people,
                                  dogs, toys, clubs).
          --create                Create <file> as a new, empty realm if it does not exist.
          -c, --command <command> Run a command (';' separates several) and exit. Can be
                                  repeated.
          --json                  Print every result as one JSON document per line.
          --mode <mode>           Print results as table (the default), vertical, json or csv.
          --version               Show the version.
          -h, --help              Show help information.

        AT A TERMINAL:
          Lines are edited in place (arrows, Home/End, Ctrl-A/E/K/U/W, Alt-B/F), Up/Down and
          Ctrl-R go through the history, Tab completes, Ctrl-C abandons the line or stops a running
          command, Ctrl-Z suspends (fg resumes), Ctrl-D on an empty line leaves. A line ending
          inside quotes or brackets continues on the next.

        ENVIRONMENT:
          LIVEOBJ_HISTORY         The history file (default ~/.liveobj_history, mode 0600).
          LIVEOBJ_HISTORY_SIZE    The most commands kept (default 1000).
          LIVEOBJ_NO_HISTORY      When set, the history is not read nor written.

        EXIT STATUS:
          0 on success, 1 when a command failed in a script or -c, 64 for a usage error.
        """

    package static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var i = 0
        var onlyArguments = false
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if onlyArguments || !argument.hasPrefix("-") || argument == "-" {
                guard options.file == nil else { throw UsageError(message: "Unexpected argument '\(argument)'") }
                options.file = argument
                continue
            }
            switch argument {
            case "--": onlyArguments = true
            case "--demo": options.demo = true
            case "--create": options.create = true
            case "--json": options.json = true
            case "-h", "--help": options.help = true
            case "--version": options.version = true
            case "--mode":
                guard i < arguments.count else { throw UsageError(message: "Missing value for '--mode <mode>'") }
                guard let mode = OutputMode(rawValue: arguments[i]) else {
                    throw UsageError(message: "Unknown mode '\(arguments[i])' (table, vertical, json, csv)")
                }
                options.mode = mode
                i += 1
            case "-c", "--command":
                guard i < arguments.count else {
                    throw UsageError(message: "Missing value for '-c <command>'")
                }
                options.commands.append(arguments[i])
                i += 1
            default:
                if argument.hasPrefix("--command=") {
                    options.commands.append(String(argument.dropFirst("--command=".count)))
                } else if argument.hasPrefix("-c"), argument.count > 2, !argument.hasPrefix("--") {
                    options.commands.append(String(argument.dropFirst(2)))
                } else {
                    throw UsageError(message: "Unknown option '\(argument)'")
                }
            }
        }
        if options.demo && options.file != nil {
            throw UsageError(message: "'--demo' cannot be used with a file")
        }
        if options.create && options.file == nil {
            throw UsageError(message: "'--create' needs a <file>")
        }
        return options
    }

    /// Where the tool reads and writes.
    package struct Environment {
        /// The command-line arguments, without the program name.
        package var arguments: [String]
        /// Reads one line of standard input (without its newline), nil at the end.
        package var readLine: () -> String?
        /// Whether standard input is a terminal (then the shell prompts).
        package var isInteractive: Bool
        /// Writes to standard output; each call is one line.
        package var output: (String) -> Void
        /// Writes to standard error; each call is one line.
        package var errorOutput: (String) -> Void
        /// Writes a prompt without a newline (interactive only).
        package var prompt: (String) -> Void
        /// Opens and saves snapshot files (`PersistenceFileStore` in the `liveobj` command).
        package var fileStore: (any RealmFileStore)?
        /// The width of standard output when it is a terminal (tables are cut to it).
        package var outputWidth: () -> Int? = { nil }
        /// The line editor, when standard input and output are terminals: then lines are read
        /// through it instead of `readLine`, and Ctrl-C interrupts commands.
        package var terminal: TerminalLineReader?

        package init(
            arguments: [String], readLine: @escaping () -> String?, isInteractive: Bool,
            output: @escaping (String) -> Void, errorOutput: @escaping (String) -> Void,
            prompt: @escaping (String) -> Void = { _ in }, fileStore: (any RealmFileStore)? = nil,
            terminal: TerminalLineReader? = nil
        ) {
            self.terminal = terminal
            self.arguments = arguments
            self.readLine = readLine
            self.isInteractive = isInteractive
            self.output = output
            self.errorOutput = errorOutput
            self.prompt = prompt
            self.fileStore = fileStore
        }
    }

    /// Runs the tool; returns its exit code.
    package static func run(_ environment: Environment) async -> Int32 {
        let options: Options
        do {
            options = try parse(environment.arguments)
        } catch {
            environment.errorOutput(
                "Error: \(error.message)\nUsage: \(usage)\n  See 'liveobj --help' for more information.")
            return ExitCode.usage
        }
        if options.help {
            environment.output(help)
            return ExitCode.success
        }
        if options.version {
            environment.output(version)
            return ExitCode.success
        }

        guard let (realm, storage) = await openRealm(options, environment) else { return ExitCode.failure }
        let interactive = environment.isInteractive && options.commands.isEmpty
        let terminal = interactive ? environment.terminal : nil
        let ask: ((String) -> Bool?)? = interactive ? question(terminal, environment) : nil
        let shell = Shell(
            realm: realm, storage: storage, json: options.json, mode: options.mode,
            io: ShellIO(
                output: environment.output, errorOutput: environment.errorOutput, ask: ask,
                width: environment.outputWidth),
            interruption: terminal?.interruption ?? InterruptFlag())
        terminal?.completer = { [unowned shell] line, cursor in shell.completions(line, cursor: cursor) }
        if let notices = terminal?.notices { shell.liveOutput = { notices.post($0) } }
        let code = await run(shell, options: options, environment: environment, terminal: terminal)
        await shell.stopWatches()
        // A file realm is closed before the process ends: what its store still owes is written
        // (the journal folded into the snapshot) and the file is released.
        if case .file = storage {
            do {
                try await shell.realm.close()
            } catch {
                environment.errorOutput("Error: " + Operations.message(error))
                return ExitCode.failure
            }
        }
        return code
    }

    /// Opens the realm the options name: a file, the demo, or an empty realm in memory. On an
    /// error, says why and returns nil.
    static func openRealm(_ options: Options, _ environment: Environment) async -> (Realm, ShellStorage)? {
        do {
            if let file = options.file {
                guard let store = environment.fileStore else {
                    environment.errorOutput("Error: file realms need the Persistence module, not available yet")
                    return nil
                }
                return (try await store.open(path: file, create: options.create), .file(path: file, store: store))
            } else if options.demo {
                return (try await Demo.open(), .memory)
            } else {
                return (try await Realm.open(.init(identifier: "liveobj-\(UUID())", schema: Schema([]))), .memory)
            }
        } catch let error as LiveObjectsError {
            environment.errorOutput("Error: " + Operations.message(error))
            return nil
        } catch {
            environment.errorOutput("Error: \(error)")
            return nil
        }
    }

    /// Asks a yes/no question at the terminal, or on standard input and output.
    static func question(_ terminal: TerminalLineReader?, _ environment: Environment) -> (String) -> Bool? {
        return { question in
            let answer: String?
            if let terminal {
                guard case .line(let line) = terminal.readLine(prompt: question, usesHistory: false) else {
                    return nil
                }
                answer = line
            } else {
                environment.prompt(question)
                answer = environment.readLine()
            }
            guard let answer else { return nil }
            return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
        }
    }

    /// Runs the commands of `-c`, of the terminal or of standard input.
    static func run(
        _ shell: Shell, options: Options, environment: Environment, terminal: TerminalLineReader?
    ) async -> Int32 {
        let interactive = environment.isInteractive && options.commands.isEmpty
        if !options.commands.isEmpty { return await run(shell, commands: options.commands) }
        if interactive { environment.output(greeting(shell, options)) }
        // Lines are read one at a time; a command left open (quotes, brackets) continues on the
        // next line with the continuation prompt.
        var splitter = CommandSplitter()
        var entry: [String] = []
        reading: while true {
            let prompt =
                splitter.isContinuing ? continuationPrompt : shell.inTransaction ? "liveobj*> " : "liveobj> "
            let line: String
            if let terminal {
                switch await readLine(terminal, prompt: prompt) {
                case .line(let text): line = text
                case .interrupted:
                    splitter.abandon()
                    entry = []
                    continue reading
                case .ended:
                    splitter.abandon()
                    entry = []
                    if terminal.isClosed { break reading }
                    if await shell.confirmEnd() { return ExitCode.success }
                    continue reading
                }
            } else {
                if interactive { environment.prompt(prompt) }
                guard let text = environment.readLine() else { break reading }
                line = text
            }
            entry.append(line)
            let commands = splitter.add(line: line)
            if !splitter.isContinuing {
                terminal?.record(entry.joined(separator: " "))
                entry = []
            }
            for command in commands {
                shell.scriptLine = interactive ? nil : command.line
                switch await shell.runCommand(command.text) {
                case .quit: return ExitCode.success
                case .failed where !interactive: return await shell.finishAfterFailure()
                case .failed: splitter.abandon()
                case .succeeded: continue
                }
                break
            }
        }
        if let command = splitter.finish() {
            shell.scriptLine = interactive ? nil : command.line
            switch await shell.runCommand(command.text) {
            case .quit: return ExitCode.success
            case .failed: return await shell.finishAfterFailure()
            case .succeeded: break
            }
        }
        return await shell.finish() ? ExitCode.success : ExitCode.failure
    }

    /// Runs the commands of `-c`, stopping at the first failure.
    static func run(_ shell: Shell, commands: [String]) async -> Int32 {
        for command in commands {
            switch await shell.run(command) {
            case .failed: return await shell.finishAfterFailure()
            case .quit: return ExitCode.success
            case .succeeded: continue
            }
        }
        return await shell.finish() ? ExitCode.success : ExitCode.failure
    }

    /// The first line at the terminal: the version and the realm.
    static func greeting(_ shell: Shell, _ options: Options) -> String {
        let what: String
        switch shell.storage {
        case .memory:
            what = options.demo ? "a demo realm in memory (people, dogs, toys, clubs)" : "an empty realm in memory"
        case .file(let path, _): what = path
        }
        return "liveobj \(version): \(what). Type 'help' for the commands, 'quit' to leave."
    }

    /// Reads a line at the terminal on a thread of its own, not one of the threads that run
    /// tasks (one per core): while the reader waits at the prompt, the realm applies other
    /// processes' commits and the watches' tasks render them, on one core too.
    static func readLine(_ terminal: TerminalLineReader, prompt: String) async -> TerminalRead {
        let reader = ReaderTransfer(reader: terminal)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: reader.reader.readLine(prompt: prompt)) }
        }
    }

    /// The prompt of a line continuing a command, as wide as `liveobj> `.
    static let continuationPrompt = "    ...> "
}

extension Shell {
    /// Ends a script after a failed command: an open transaction is rolled back (the script's
    /// later commands did not run, so committing part of it could leave half a change).
    func finishAfterFailure() async -> Int32 {
        if inTransaction {
            await realm.cancelWrite()
            inTransaction = false
            io.errorOutput("The open transaction was rolled back.")
        }
        return CommandLineTool.ExitCode.failure
    }
}

/// The line reader handed to the thread that reads one line. @unchecked Sendable: the reader
/// is used by one thread at a time, the caller waiting for the line before it uses it again.
private struct ReaderTransfer: @unchecked Sendable {
    let reader: TerminalLineReader
}
