// The child process of the persistence crash and lock tests.
//
// Usage: persistence-crash-child FILE journal|save|hold|try
//
// - journal, save: opens a file realm and commits in a loop, printing each step number
//   (flushed) after its write returns, until it is killed.
// - hold: opens the file realm, prints "open", and keeps it open until its standard input
//   ends (then closes the realm and prints "closed") or it is killed.
// - try: tries to open the file realm once and prints "opened" (and closes it) or
//   "error CODE".
import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Persistence

let arguments = CommandLine.arguments
guard arguments.count == 3, ["journal", "save", "hold", "try"].contains(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: persistence-crash-child FILE journal|save|hold|try\n".utf8))
    exit(2)
}
let options =
    arguments[2] == "save"
    ? FileStorage.Options(savePolicy: .afterEveryCommit, journal: false)
    : FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 8 << 10)
let configuration = Realm.Configuration(
    file: URL(fileURLWithPath: arguments[1]), schema: CrashWorkload.schema, options: options)

/// Unbuffered: the line is out of the process when the call returns.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    switch arguments[2] {
    case "try":
        do {
            let realm = try await Realm.open(configuration)
            say("opened")
            try await realm.close()
        } catch {
            say("error \(error.code)")
        }
    case "hold":
        let realm = try await Realm.open(configuration)
        say("open")
        _ = FileHandle.standardInput.readDataToEndOfFile()
        try await realm.close()
        say("closed")
    default:
        let realm = try await Realm.open(configuration)
        var n = try await realm.read { try CrashWorkload.state(of: $0).counter }
        while true {
            n += 1
            let step = n
            try await realm.write { try CrashWorkload.step(step, in: $0) }
            say("\(step)")
        }
    }
} catch {
    FileHandle.standardError.write(Data("persistence-crash-child: \(error)\n".utf8))
    exit(1)
}
