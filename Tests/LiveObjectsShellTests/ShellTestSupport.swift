import Foundation
import LiveObjects
import LiveObjectsShell
import Testing

/// What one run of the tool printed, and its exit code.
struct ToolRun: Equatable, CustomStringConvertible {
    var stdout: String
    var stderr: String
    var code: Int32

    var description: String { "exit \(code)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// Lines written by the tool (each write is one line).
final class Capture {
    var text = ""
    func write(_ line: String) { text += line + "\n" }
}

/// Runs `liveobj` in-process with arguments and, optionally, standard input (not a terminal).
func liveobj(_ arguments: [String], stdin: String = "", fileStore: (any RealmFileStore)? = nil) async -> ToolRun {
    let out = Capture()
    let err = Capture()
    var lines = stdin.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.last == "" { lines.removeLast() }
    var index = 0
    let environment = CommandLineTool.Environment(
        arguments: arguments,
        readLine: {
            guard index < lines.count else { return nil }
            index += 1
            return lines[index - 1]
        },
        isInteractive: false, output: out.write, errorOutput: err.write, fileStore: fileStore)
    let code = await CommandLineTool.run(environment)
    return ToolRun(stdout: out.text, stderr: err.text, code: code)
}

/// Compares a run with the expected output, showing both in full on a mismatch.
func expectRun(
    _ run: ToolRun, stdout: String, stderr: String = "", code: Int32 = 0,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let expected = ToolRun(stdout: stdout, stderr: stderr, code: code)
    #expect(run == expected, "\nexpected:\n\(expected)\ngot:\n\(run)", sourceLocation: sourceLocation)
}

/// Removes the common indentation of a multi-line string literal's lines and adds the final
/// newline each output line has.
func lines(_ text: String) -> String { text + "\n" }
