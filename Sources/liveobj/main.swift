import Foundation
import LiveObjectsShell

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments == ["--demo"] else {
    FileHandle.standardError.write(Data("Error: usage: liveobj --demo\n".utf8))
    exit(64)
}
let realm = try await Shell.openDemoRealm()
let shell = Shell(
    realm: realm, output: { print($0) },
    errorOutput: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
let interactive = isatty(0) != 0
if interactive { print("liveobj: demo realm open. Type 'help' for commands.") }
while true {
    if interactive {
        print("> ", terminator: "")
        fflush(nil)
    }
    guard let line = readLine() else { break }
    if !(await shell.run(line)) { break }
}
