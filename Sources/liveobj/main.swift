import Foundation
import LiveObjectsShell

// The `liveobj` command: the shell of LiveObjectsShell on the process's arguments and streams.
// Output is written unbuffered, so that results and errors keep their order.
let environment = CommandLineTool.Environment(
    arguments: Array(CommandLine.arguments.dropFirst()),
    readLine: { readLine(strippingNewline: true) },
    isInteractive: isatty(0) != 0,
    output: { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) },
    errorOutput: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
    prompt: { FileHandle.standardOutput.write(Data($0.utf8)) },
    fileStore: PersistenceFileStore())
exit(await CommandLineTool.run(environment))
