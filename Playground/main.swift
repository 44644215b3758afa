import Foundation

// `swift run Playground [NAME]`: runs one walkthrough, or lists them.
exit(await PlaygroundCommand.run(Array(CommandLine.arguments.dropFirst())))
