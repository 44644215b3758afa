import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the `liveobj` binary in a process of its own, with no terminal: another program using
/// the file while a shell has it open.
func liveobjProcess(_ arguments: [String]) throws -> ToolRun {
    guard let binary = EndToEndTests.binary() else {
        throw PseudoTerminal.Failure(description: "the liveobj binary was not found")
    }
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let stdout = output.fileHandleForReading.readDataToEndOfFile()
    let stderr = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ToolRun(
        stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self),
        code: process.terminationStatus)
}

/// The shell holds its file as a file realm does, from `--create` and across `define`: what any
/// process was told is saved stays in the file.
@Suite(.serialized) struct FileSharingTests {
    static let prompt = "liveobj> "

    /// A file with a Shop type and one shop, made (and closed) by a first shell.
    static func smallFile(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("small.lo").path
        let made = try liveobjProcess([
            file, "--create", "-c",
            #"define Shop { id: Int primary, name: String }; create Shop {"id": 1, "name": "one"}; save"#,
        ])
        #expect(made.code == 0, "\(made)")
        return file
    }

    /// The sequence that lost a save: shell A defines on the file; another process creates
    /// Shop 9 and saves; shell A creates Shop 10 and saves. Whatever the other process is told
    /// (today: the file is locked, since A holds it), the file ends with everything anyone was
    /// told was created.
    @Test func aDefineThenAnotherProcessSaveThenSaveLosesNothing() throws {
        let directory = try TerminalSessionTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.smallFile(in: directory)

        let shell = try PseudoTerminal([file])
        try shell.waitFor(Self.prompt)
        #expect(try shell.run("define Shop { city: String? }").contains("Added city to Shop (schema version 2)."))

        let other = try liveobjProcess([file, "-c", #"create Shop {"id": 9, "name": "nine"}; save"#])
        let nineAcknowledged = other.code == 0 && other.stdout.contains("Created Shop 9.")
        if !nineAcknowledged {
            // Refused with a clear message, and nothing half done.
            #expect(other.code == 1 && other.stdout.isEmpty, "\(other)")
            #expect(other.stderr.contains("another process"), "\(other)")
        }

        #expect(try shell.run(#"create Shop {"id": 10, "name": "ten", "city": "Lyon"}"#).contains("Created Shop 10."))
        #expect(try shell.run("save").contains("Saved \(file)."))
        shell.send("quit" + Keys.enter)
        #expect(try shell.waitForExit() == 0, shell.shown)

        if !nineAcknowledged {
            // Now that the shell is gone the other process gets the file.
            let retry = try liveobjProcess([file, "-c", #"create Shop {"id": 9, "name": "nine"}; save"#])
            #expect(retry.code == 0, "\(retry)")
        }
        let final = try liveobjProcess([file, "--mode", "csv", "-c", "query Shop sort by id"])
        #expect(final.code == 0, "\(final)")
        #expect(final.stdout == "id,name,city\n1,one,\n9,nine,\n10,ten,Lyon\n", "\(final)")
    }

    /// While a shell made the file with `--create`, it holds it: another process is refused
    /// (not handed a file that the shell later overwrites).
    @Test func aCreatedFileIsHeldFromTheStart() throws {
        let directory = try TerminalSessionTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("new.lo").path
        let shell = try PseudoTerminal(["--create", file])
        try shell.waitFor(Self.prompt)
        #expect(FileManager.default.fileExists(atPath: file))
        let other = try liveobjProcess([file, "-c", "define Other { id: Int primary }"])
        let otherAcknowledged = other.code == 0
        if !otherAcknowledged { #expect(other.stderr.contains("another process"), "\(other)") }
        try shell.run("define Note { id: Int primary }")
        try shell.run(#"create Note {"id": 1}"#)
        shell.send("quit" + Keys.enter)
        #expect(try shell.waitForExit() == 0, shell.shown)
        let types = try liveobjProcess([file, "--mode", "csv", "-c", "types"])
        #expect(types.stdout.contains("Note,1,"), "\(types)")
        #expect(types.stdout.contains("Other,0,") == otherAcknowledged, "\(types)")
    }

    /// Every command is on disk when it returns: a shell killed without `save` loses nothing.
    @Test func aKilledShellLosesNoCommand() throws {
        let directory = try TerminalSessionTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.smallFile(in: directory)
        let shell = try PseudoTerminal([file])
        try shell.waitFor(Self.prompt)
        try shell.run("define Shop { city: String? }")
        #expect(try shell.run(#"create Shop {"id": 2, "name": "two", "city": "Nice"}"#).contains("Created Shop 2."))
        #expect(try shell.run(#"update Shop 1 {"city": "Pau"}"#).contains("Updated Shop 1."))
        kill(shell.pid, SIGKILL)
        #expect(try shell.waitForExit() == 128 + SIGKILL)
        let final = try liveobjProcess([file, "--mode", "csv", "-c", "query Shop sort by id"])
        #expect(final.stdout == "id,name,city\n1,one,Pau\n2,two,Nice\n", "\(final)")
    }
}
