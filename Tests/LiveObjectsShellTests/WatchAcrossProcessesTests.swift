import Foundation
import Synchronization
import Testing

@testable import LiveObjectsShell

/// Two shells on one file, each at a terminal of its own: a `watch` in one prints the other's
/// commits as they arrive, above the line being typed, which is drawn again intact.
@Suite(.serialized) struct WatchAcrossProcessesTests {
    static let prompt = "liveobj> "

    static func shell(_ file: String, _ directory: URL) throws -> PseudoTerminal {
        let terminal = try PseudoTerminal([file], environment: ["LIVEOBJ_NO_HISTORY": "1"], columns: 100)
        try terminal.waitFor(prompt)
        return terminal
    }

    /// Whether a line of `text` is a watch's row of the kind showing `value`.
    static func row(_ text: String, _ kind: String, _ value: String) -> Bool {
        text.components(separatedBy: "\r\n").contains { $0.hasPrefix("  " + kind) && $0.contains(value) }
    }

    @Test func aWatchPrintsAnotherShellsChangesWithoutATypedCommand() throws {
        let directory = try TerminalSessionTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try FileSharingTests.smallFile(in: directory)
        let a = try Self.shell(file, directory)
        let b = try Self.shell(file, directory)

        #expect(try a.run("watch shops = Shop sort by id").contains("Watching shops: 1 Shop object."))

        // B creates: A shows it without anything typed.
        #expect(try b.run(#"create Shop {"id": 2, "name": "two"}"#).contains("Created Shop 2."))
        var shown = try a.waitFor("watch shops: 1 inserted")
        shown = try a.waitFor(Self.prompt)
        #expect(Self.row(shown, "inserted", "two"), "\(shown)")

        // A line partly typed in A survives B's update and delete.
        a.send("count Sh")
        try a.waitFor("count Sh")
        #expect(try b.run(#"update Shop 1 {"name": "uno"}"#).contains("Updated Shop 1."))
        shown = try a.waitFor("watch shops: 1 modified")
        shown = try a.waitFor(Self.prompt + "count Sh")
        #expect(Self.row(shown, "modified", "uno"), "\(shown)")
        #expect(try b.run("delete Shop 2").contains("Deleted Shop 2."))
        shown = try a.waitFor("watch shops: 1 deleted")
        shown = try a.waitFor(Self.prompt + "count Sh")
        #expect(Self.row(shown, "deleted", "two"), "\(shown)")
        #expect(a.screen.cursorLine == Self.prompt + "count Sh")
        // The line is finished and runs.
        #expect(try a.run("op").contains("1\r\n"))

        // A writes: its watch prints the change once, and B sees it.
        let created = try a.run(#"create Shop {"id": 3, "name": "three"}"#)
        #expect(created.contains("Created Shop 3."), "\(created)")
        #expect(created.components(separatedBy: "watch shops: 1 inserted").count == 2, "\(created)")
        let after = try a.run("count Shop")
        #expect(after.contains("2\r\n") && !after.contains("watch shops"), "\(after)")
        let seen = try b.run("query Shop sort by id")
        #expect(seen.contains("three") && seen.contains("uno") && !seen.contains("two"), "\(seen)")

        // After `unwatch`, B's commits are not printed in A.
        try a.run("unwatch shops")
        #expect(try b.run(#"create Shop {"id": 4, "name": "four"}"#).contains("Created Shop 4."))
        #expect(try a.run("count Shop").contains("3\r\n"))
        #expect(!a.transcript.contains("four"))

        for shell in [a, b] {
            shell.send("quit\r")
            #expect(try shell.waitForExit() == 0, shell.shown)
        }
        let final = try liveobjProcess([file, "--mode", "csv", "-c", "query Shop sort by id"])
        #expect(final.stdout == "id,name\n1,uno\n3,three\n4,four\n", "\(final)")
    }

    /// A change of many rows prints its counts, the first rows and how many more.
    @Test func aLargeChangePrintsTheFirstRowsAndACount() throws {
        let directory = try TerminalSessionTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try FileSharingTests.smallFile(in: directory)
        let shops = (2...501).map { #"{"id": \#($0), "name": "shop \#($0)"}"# }
        let json = directory.appendingPathComponent("shops.json")
        try ("[" + shops.joined(separator: ", ") + "]").write(to: json, atomically: true, encoding: .utf8)
        let a = try Self.shell(file, directory)
        try a.run("watch shops = Shop sort by id")

        let other = try liveobjProcess([file, "-c", "import Shop \(json.path)"])
        #expect(other.code == 0, "\(other)")
        try a.waitFor("watch shops: 500 inserted")
        let shown = try a.waitFor("… and 480 more")
        #expect(shown.components(separatedBy: "inserted  ").count - 1 == Shell.defaultWatchRowLimit, "\(shown)")

        let updated = try liveobjProcess([file, "-c", "update Shop where id > 0 set name = 'x'"])
        #expect(updated.code == 0, "\(updated)")
        try a.waitFor("watch shops: 501 modified")
        try a.waitFor("… and 481 more")
        a.send("quit\r")
        #expect(try a.waitForExit() == 0, a.shown)
    }
}

/// Without a terminal (commands on standard input), another process's change sets are printed
/// with the output of a later command, once.
@Suite(.serialized) struct WatchWithoutATerminalTests {
    @Test func anotherProcessesChangesPrintWithALaterCommand() throws {
        let directory = try TerminalSessionTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try FileSharingTests.smallFile(in: directory)
        let binary = try #require(EndToEndTests.binary())
        let process = Process()
        process.executableURL = binary
        process.arguments = [file]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let received = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            received.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }
        /// Waits until `text` shows `times` times.
        func waitFor(_ text: String, after times: Int = 1) throws {
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline {
                if received.withLock({ $0.components(separatedBy: text).count > times }) { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
            throw PseudoTerminal.Failure(
                description: "'\(text)' did not show; the output is:\n" + received.withLock { $0 })
        }

        send("watch shops = Shop sort by id")
        try waitFor("Watching shops: 1 Shop object.")
        let other = try liveobjProcess([file, "-c", #"create Shop {"id": 2, "name": "two"}"#])
        #expect(other.code == 0, "\(other)")
        // Each command catches up with the file; the change set shows with a later command's output.
        var counts = 0
        while counts < 100, !received.withLock({ $0.contains("watch shops: 1 inserted") }) {
            counts += 1
            send("count Shop")
            try waitFor("\n2\n", after: counts)
        }
        let shown = received.withLock { $0 }
        #expect(shown.components(separatedBy: "watch shops: 1 inserted").count == 2, "\(shown)")
        #expect(
            shown.components(separatedBy: "\n").contains { $0.hasPrefix("  inserted") && $0.contains("two") },
            "\(shown)")
        send("quit")
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        #expect(process.terminationStatus == 0)
    }
}
