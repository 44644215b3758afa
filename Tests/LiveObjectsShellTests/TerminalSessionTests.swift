import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real `liveobj` binary at a terminal (a pseudo-terminal), driven by keystrokes.
@Suite(.serialized) struct TerminalSessionTests {
    static let prompt = "liveobj> "

    /// A temporary directory, removed at the end of the test.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("liveobj-tty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func demo(_ directory: URL, columns: Int = 100) throws -> PseudoTerminal {
        let terminal = try PseudoTerminal(
            ["--demo"], environment: ["LIVEOBJ_HISTORY": directory.appendingPathComponent("history").path],
            columns: columns)
        try terminal.waitFor(prompt)
        return terminal
    }

    @Test func upRecallsTheHistoryWhichIsKeptInAPrivateFile() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let history = directory.appendingPathComponent("history").path
        do {
            let terminal = try Self.demo(directory)
            #expect(try terminal.run("count Dog").contains("7\r\n"))
            try terminal.run("count Dog")  // a duplicate in a row: recorded once
            try terminal.run(" count Person")  // a leading space: not recorded
            terminal.send(Keys.up)
            try terminal.waitFor("count Dog")
            #expect(terminal.screen.cursorLine == "liveobj> count Dog")
            #expect(try terminal.run("").contains("7\r\n"))
            terminal.send("quit" + Keys.enter)
            #expect(try terminal.waitForExit() == 0, terminal.shown)
        }
        #expect(try String(contentsOfFile: history, encoding: .utf8) == "count Dog\nquit\n")
        let mode = try FileManager.default.attributesOfItem(atPath: history)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // The next session starts with it.
        let terminal = try Self.demo(directory)
        terminal.send(Keys.up + Keys.up)
        try terminal.waitFor("count Dog")
        #expect(terminal.screen.cursorLine == "liveobj> count Dog")
    }

    @Test func editingInTheMiddleOfACyrillicLine() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory)
        terminal.send(#"create Dog {"id": 60, "name": "Шарик"}"#)
        try terminal.waitFor("}")
        // Three characters back: before the к; Backspace deletes the и.
        terminal.send(Keys.left + Keys.left + Keys.left + Keys.backspace + "ё")
        try terminal.waitFor("ё")
        #expect(terminal.screen.cursorLine == #"liveobj> create Dog {"id": 60, "name": "Шарёк"}"#)
        // Ctrl-A, two words forward (create, Dog), a word inserted.
        terminal.send(
            Keys.control("a") + Keys.altF + Keys.altF + "Cat" + Keys.backspace + Keys.backspace + Keys.backspace)
        #expect(try terminal.run(Keys.control("e")).contains("Created Dog 60."))
        #expect(try terminal.run("get Dog 60").contains("name:     Шарёк"))
    }

    @Test func tabCompletesCommandsTypesAndKeyPaths() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory)
        terminal.send("que" + Keys.tab)
        try terminal.waitFor("query")
        terminal.send("Pe" + Keys.tab)
        try terminal.waitFor("Person")
        terminal.send("where addr" + Keys.tab)
        try terminal.waitFor("address.")
        terminal.send("ci" + Keys.tab)
        try terminal.waitFor("city")
        #expect(terminal.screen.cursorLine == "liveobj> query Person where address.city")
        #expect(try terminal.run("== 'Paris'").contains("Chloé Dubois"))
        // Two candidates: the second Tab lists them.
        terminal.send("q" + Keys.tab + Keys.tab)
        let listed = try terminal.waitFor("quit")
        #expect(listed.contains("query"))
        try terminal.waitFor(Self.prompt + "qu")
        #expect(terminal.screen.cursorLine == "liveobj> qu")
    }

    @Test func decimalsAndObjectIDsByKeystrokes() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory)
        #expect(
            try terminal.run("define Invoice { _id: objectid primary, total: decimal, due: decimal? }")
                .contains("Defined Invoice"))
        let id = "507f1f77bcf86cd799439011"
        #expect(
            try terminal.run(#"create Invoice {"_id": "\#(id)", "total": 0.30000000000000000000000000001}"#)
                .contains("Created Invoice"))
        #expect(
            try terminal.run(#"create Invoice {"_id": "507f1f77bcf86cd799439012", "total": 0.3}"#)
                .contains("Created Invoice"))
        // Tab completes the decimal property (and a space); the literal is edited with the arrows: 0.31 becomes
        // 0.3 + 1e-29, which Double cannot tell from 0.3 and the query tells apart exactly.
        terminal.send("query Invoice where tot" + Keys.tab)
        try terminal.waitFor("total")
        terminal.send(">= 0.31" + Keys.left + String(repeating: "0", count: 27))
        try terminal.waitFor("00001")
        #expect(terminal.screen.cursorLine == "liveobj> query Invoice where total >= 0.30000000000000000000000000001")
        let answer = try terminal.run("")
        #expect(answer.contains(id) && answer.contains("(1 object)"), "\(answer)")
        // An id as the shell shows it (bare hex) and as a query literal names the object.
        #expect(try terminal.run("get Invoice \(id)").contains("0.30000000000000000000000000001"))
        #expect(try terminal.run("get Invoice oid(507f1f77bcf86cd799439012)").contains("total:  0.3\r\n"))
        #expect(try terminal.run("delete Invoice \(id)").contains("Deleted Invoice"))
        #expect(try terminal.run("count Invoice").contains("1\r\n"))
    }

    @Test func sectionsByKeystrokes() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory)
        terminal.send("query Dog where age < 4 sort by age sec" + Keys.tab)
        try terminal.waitFor("section")
        terminal.send("by own" + Keys.tab)
        try terminal.waitFor("owner.")
        terminal.send("na" + Keys.tab)
        try terminal.waitFor("name")
        #expect(terminal.screen.cursorLine == "liveobj> query Dog where age < 4 sort by age section by owner.name")
        let answer = try terminal.run("")
        #expect(answer.contains("owner.name: Bob Martin"), "\(answer)")
        #expect(answer.contains("owner.name: Ann Lee"), "\(answer)")
        #expect(answer.contains("(3 sections)"), "\(answer)")
    }

    @Test func controlCAtThePromptClearsTheLine() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory)
        terminal.send("delete Dog where age > 0" + Keys.control("c"))
        try terminal.waitFor("^C")
        try terminal.waitFor(PseudoTerminal.startsReading)
        try terminal.waitFor(Self.prompt)
        #expect(terminal.screen.lines.suffix(2) == ["liveobj> delete Dog where age > 0^C", "liveobj>"])
        // A command left open is abandoned too.
        try terminal.run("create Dog {")
        try terminal.waitFor("...> ")
        terminal.send(Keys.control("c"))
        try terminal.waitFor(PseudoTerminal.startsReading)
        try terminal.waitFor(Self.prompt)
        #expect(try terminal.run("count Dog").contains("7\r\n"))
    }

    @Test func controlCCancelsALongUpdateWhichChangesNothing() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let items = directory.appendingPathComponent("items.json")
        let count = 300_000
        var json = "["
        for i in 0..<count { json += (i == 0 ? "" : ",") + #"{"id":\#(i),"name":"item \#(i)"}"# }
        try (json + "]").write(to: items, atomically: true, encoding: .utf8)
        let terminal = try PseudoTerminal(["--create", directory.appendingPathComponent("realm.json").path])
        try terminal.waitFor(Self.prompt)
        try terminal.run("define Item { id: Int primary, name: String, flag: Bool }")
        #expect(try terminal.run("import Item \(items.path)").contains("Imported \(count) objects."))
        terminal.send("update Item where id >= 0 set flag = true, name = 'changed'" + Keys.enter)
        try terminal.waitFor(PseudoTerminal.hasRead)  // the line is read: the command runs
        terminal.send(Keys.control("c"))
        let output = try terminal.waitFor(PseudoTerminal.startsReading)
        #expect(output.contains("Error: interrupted; the command changed nothing"))
        #expect(try terminal.run("count Item where flag == true OR name == 'changed'").contains("\n0\r\n"))
    }

    @Test func controlCStopsALongQueryAndTheShellGoesOn() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 500 nodes with 30 friends each; the query reads the object tested three levels
        // down, so nothing is shared: 500 × 30³ friends visited, far longer than the test waits.
        let nodes = directory.appendingPathComponent("nodes.json")
        let records = (0..<500).map { i in
            let friends = (0..<30).map { k in String((i * 31 + k * 17 + k * k) % 500) }.joined(separator: ",")
            return #"{"id":\#(i),"age":\#(i * 7 % 15),"friends":[\#(friends)]}"#
        }
        try ("[" + records.joined(separator: ",") + "]").write(to: nodes, atomically: true, encoding: .utf8)
        let terminal = try PseudoTerminal(["--create", directory.appendingPathComponent("realm.json").path])
        try terminal.waitFor(Self.prompt)
        try terminal.run("define Node { id: Int primary, age: Int, friends: [Node] }")
        #expect(try terminal.run("import Node \(nodes.path)").contains("Imported 500 objects."))
        terminal.send(
            "count Node where SUBQUERY(friends, $a, SUBQUERY($a.friends, $b, SUBQUERY($b.friends, $c, "
                + "$c.age > age).@count > 0).@count > 0).@count > 0" + Keys.enter)
        try terminal.waitFor(PseudoTerminal.hasRead)  // the line is read: the query runs
        terminal.send(Keys.control("c"))
        let output = try terminal.waitFor(PseudoTerminal.startsReading)
        #expect(output.contains("was cancelled after"), "\(output)")
        try terminal.waitFor(Self.prompt)
        #expect(try terminal.run("count Node where age >= 0").contains("\n500\r\n"))
    }

    @Test func controlDOnAFileLeavesWithEveryChangeKept() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("realm.json").path
        let terminal = try PseudoTerminal(["--create", file])
        try terminal.waitFor(Self.prompt)
        try terminal.run("define Note { id: Int primary }")
        #expect(try terminal.run("create Note {\"id\": 1}").contains("Created Note 1."))
        // Every command is in the file when it returns: nothing to ask about.
        terminal.send(Keys.control("d"))
        #expect(try terminal.waitForExit() == 0, terminal.shown)
        #expect(!terminal.transcript.contains("[y/N]"))
        #expect(terminal.transcript.hasSuffix("\r\n"))
        let saved = try liveobjProcess([file, "-c", "count Note"])
        #expect(saved.stdout == "1\n", "\(saved)")
    }

    @Test func controlDInsideATransactionAsks() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("realm.json").path
        let terminal = try PseudoTerminal(["--create", file])
        try terminal.waitFor(Self.prompt)
        try terminal.run("define Note { id: Int primary }")
        try terminal.run("begin")
        try terminal.run("create Note {\"id\": 1}")
        terminal.send(Keys.control("d"))
        try terminal.waitFor("A transaction is open. Roll it back and quit? [y/N] ")
        try terminal.run("n")
        try terminal.run("create Note {\"id\": 2}")
        try terminal.run("commit")
        try terminal.run("begin")
        try terminal.run("create Note {\"id\": 3}")
        terminal.send(Keys.control("d"))
        try terminal.waitFor("[y/N] ")
        terminal.send("y" + Keys.enter)
        #expect(try terminal.waitForExit() == 0, terminal.shown)
        let saved = try liveobjProcess([file, "--mode", "csv", "-c", "query Note sort by id"])
        #expect(saved.stdout == "id\n1\n2\n", "\(saved)")
    }

    @Test func theTerminalIsRestoredWhenASignalEndsTheShell() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory)
        terminal.send("count")
        try terminal.waitFor("count")
        let editing = terminal.localModes
        #expect(editing & tcflag_t(ICANON | ECHO | ISIG) == 0)  // raw while a line is read
        kill(terminal.pid, SIGTERM)
        #expect(try terminal.waitForExit() == 128 + SIGTERM)
        #expect(terminal.localModes & tcflag_t(ICANON | ECHO | ISIG) == tcflag_t(ICANON | ECHO | ISIG))
    }

    /// Ctrl-Z under a shell with job control (bash, reading its lines without an editor of its
    /// own): liveobj leaves raw mode and stops, the terminal is in its normal mode while it is
    /// stopped, and `fg` resumes it in raw mode with the line being edited intact.
    @Test func controlZSuspendsAndFgResumesWithTheLineIntact() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = try #require(EndToEndTests.binary())
        let bash = URL(fileURLWithPath: "/bin/bash")
        #expect(FileManager.default.isExecutableFile(atPath: bash.path), "job control is tested with /bin/bash")
        let terminal = try PseudoTerminal(
            ["--norc", "--noprofile", "--noediting", "-i"], program: bash,
            environment: [
                "PS1": "job$ ", "HISTFILE": directory.appendingPathComponent("bash_history").path,
                "LIVEOBJ_HISTORY": directory.appendingPathComponent("history").path,
            ])
        try terminal.waitFor("job$ ")
        terminal.send("'\(binary.path)' --demo" + Keys.enter)
        try terminal.waitFor(Self.prompt)
        // Lines are read on a thread of Swift's executor, which blocks signals: a SIGTSTP raised
        // there without unblocking it stays pending and nothing stops.
        #expect(try terminal.run("count Person").contains("6\r\n"))
        terminal.send("count Do")
        try terminal.waitFor("count Do")
        let cooked = tcflag_t(ICANON | ECHO | ISIG)
        #expect(terminal.localModes & cooked == 0)  // raw while the line is edited

        terminal.send(Keys.control("z"))
        try terminal.waitFor("^Z")
        try terminal.waitFor(PseudoTerminal.hasRead)  // liveobj left raw mode itself
        try terminal.waitFor("Stopped")
        try terminal.waitFor("job$ ")
        #expect(terminal.localModes & cooked == cooked)  // restored while stopped

        terminal.send("fg" + Keys.enter)
        try terminal.waitFor(Self.prompt + "count Do")  // the line drawn again
        #expect(terminal.screen.cursorLine == "liveobj> count Do")
        #expect(terminal.localModes & cooked == 0)  // raw again
        terminal.send("g")
        try terminal.waitFor("g")
        #expect(terminal.screen.cursorLine == "liveobj> count Dog")
        #expect(try terminal.run("").contains("7\r\n"))
        terminal.send("quit" + Keys.enter)
        try terminal.waitFor("job$ ")
        terminal.send("exit" + Keys.enter)
        #expect(try terminal.waitForExit() == 0, terminal.shown)
    }

    @Test func aTwoLineJSONPasteIsOneCommand() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory)
        terminal.send(Keys.pasteBegin + "create Dog {\"id\": 70,\r\t\"name\": \"Pasted\"}\r" + Keys.pasteEnd)
        try terminal.waitFor("Created Dog 70.")
        #expect(terminal.screen.lines.contains("    ...> ^I\"name\": \"Pasted\"}"))
        #expect(try terminal.run("get Dog 70").contains("name:     Pasted"))
    }

    @Test func aLongLineIsRedrawnAfterAResize() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory, columns: 40)
        let line = "query Person where name == 'Иван Петров' OR name == '日本語' sort by name"
        terminal.send(line)
        try terminal.waitFor("sort by name")
        terminal.resize(columns: 30)
        terminal.send(Keys.control("a"))
        try terminal.waitFor("\r")
        terminal.send(Keys.control("e") + " desc")
        try terminal.waitFor("desc")
        // The line, drawn again at 30 columns, fills the last rows of the screen.
        let expected = TerminalScreen.wrapped(Self.prompt + line + " desc", columns: 30)
        #expect(Array(terminal.screen.lines.suffix(expected.count)) == expected)
        #expect(try terminal.run("").contains("(0 objects)"))
    }
}

extension TerminalScreen {
    /// Text as a terminal of `columns` columns shows it.
    static func wrapped(_ text: String, columns: Int) -> [String] {
        var screen = TerminalScreen(columns: columns)
        screen.feed(text)
        return screen.lines
    }
}
