import Foundation

/// The command line of the Playground: which walkthrough to run, listing, help, exit codes.
enum PlaygroundCommand {
    /// The exit codes, as the `liveobj` shell uses them.
    enum ExitCode {
        static let success: Int32 = 0
        /// A check failed, or a walkthrough ended with an error.
        static let failure: Int32 = 1
        /// The command line was not valid.
        static let usage: Int32 = 64
    }

    static let usage = "Playground [<walkthrough> [<option>...]] [--list] [--help]"

    static var help: String {
        """
        OVERVIEW: Runnable walkthroughs of LiveObjects.

        Each walkthrough tells what it does step by step, checks its own results and exits with
        status 0; a failed check prints 'Check failed: …' and exits with status 1.

        USAGE: \(usage)

        ARGUMENTS:
          <walkthrough>   The walkthrough to run. Without it, the walkthroughs are listed.
          <option>        Options of the walkthrough, where it takes some (below).

        OPTIONS:
          --list          Print only the walkthrough names, one per line (for scripts).
          -h, --help      Show help information.

        WALKTHROUGHS:
        \(catalog)

        WALKTHROUGH OPTIONS:
        \(walkthroughs.compactMap { w in w.options.map { "  \(w.name) \($0)" } }.joined(separator: "\n"))
        """
    }

    /// One line per walkthrough: its name and what it shows.
    static var catalog: String {
        let width = walkthroughs.map(\.name.count).max() ?? 0
        return walkthroughs.map { walkthrough in
            "  " + walkthrough.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + walkthrough.summary
        }.joined(separator: "\n")
    }

    /// Runs the command line (without the program name) and returns the exit status.
    static func run(_ arguments: [String]) async -> Int32 {
        guard let argument = arguments.first else {
            Output.line(help)
            return ExitCode.success
        }
        switch argument {
        case "-h" where arguments.count == 1, "--help" where arguments.count == 1:
            Output.line(help)
            return ExitCode.success
        case "--list" where arguments.count == 1:
            for walkthrough in walkthroughs { Output.line(walkthrough.name) }
            return ExitCode.success
        case _ where argument.hasPrefix("-"):
            return usageError("unknown option '\(argument)'")
        default:
            guard let walkthrough = walkthroughs.first(where: { $0.name == argument }) else {
                let names = walkthroughs.map(\.name).joined(separator: ", ")
                return usageError("unknown walkthrough '\(argument)'; the walkthroughs are: \(names)")
            }
            let options = Array(arguments.dropFirst())
            if !options.isEmpty && walkthrough.options == nil {
                return usageError(
                    "the walkthrough '\(walkthrough.name)' takes no options (got \(options.joined(separator: " ")))")
            }
            return await run(walkthrough, options: options)
        }
    }

    static func run(_ walkthrough: WalkthroughEntry, options: [String] = []) async -> Int32 {
        let narrator = Narrator()
        narrator.title(walkthrough)
        do {
            try await walkthrough.run(narrator, options)
        } catch let error as UsageError {
            return usageError(error.message)
        } catch let failure as CheckFailure {
            Output.error("Check failed: \(failure.message)")
            return ExitCode.failure
        } catch {
            Output.error("Error: \(walkthrough.name) stopped with an unexpected error: \(error)")
            return ExitCode.failure
        }
        narrator.finish(walkthrough)
        return ExitCode.success
    }

    static func usageError(_ message: String) -> Int32 {
        Output.error("Error: \(message)")
        Output.error("Usage: \(usage)")
        Output.error("  See 'Playground --help'.")
        return ExitCode.usage
    }
}

/// Unbuffered output, so that narration and errors keep their order.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
