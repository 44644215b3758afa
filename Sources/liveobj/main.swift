import Foundation
import LiveObjectsShell

// The `liveobj` command: the shell of LiveObjectsShell on the process's arguments and streams.
// Output is written unbuffered, so that results and errors keep their order. At a terminal
// (standard input and output both), lines are read with the shell's line editor.
let terminal = TerminalLineReader(history: .fromEnvironment(ProcessInfo.processInfo.environment))
var environment = CommandLineTool.Environment(
    arguments: Array(CommandLine.arguments.dropFirst()),
    readLine: { readLine(strippingNewline: true) },
    isInteractive: isatty(0) != 0,
    output: { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) },
    errorOutput: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
    prompt: { FileHandle.standardOutput.write(Data($0.utf8)) },
    fileStore: PersistenceFileStore(),
    terminal: terminal)
environment.outputWidth = { TerminalLineReader.outputWidth() }
exit(await CommandLineTool.run(environment))
