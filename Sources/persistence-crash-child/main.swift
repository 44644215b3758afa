// The child process of the persistence crash test: opens a file realm and commits in a loop,
// printing each step number (flushed) after its write returns, until it is killed.
//
// Usage: persistence-crash-child FILE journal|save
import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Persistence

let arguments = CommandLine.arguments
guard arguments.count == 3, ["journal", "save"].contains(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: persistence-crash-child FILE journal|save\n".utf8))
    exit(2)
}
let options =
    arguments[2] == "journal"
    ? FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 8 << 10)
    : FileStorage.Options(savePolicy: .afterEveryCommit, journal: false)
let configuration = Realm.Configuration(
    file: URL(fileURLWithPath: arguments[1]), schema: CrashWorkload.schema, options: options)
do {
    let realm = try await Realm.open(configuration)
    var n = try await realm.read { try CrashWorkload.state(of: $0).counter }
    while true {
        n += 1
        let step = n
        try await realm.write { try CrashWorkload.step(step, in: $0) }
        // Unbuffered: the line is out of the process when the write call returns.
        FileHandle.standardOutput.write(Data("\(step)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("persistence-crash-child: \(error)\n".utf8))
    exit(1)
}
