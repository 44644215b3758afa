import Foundation
import Testing

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
            terminal.send("count Dog" + Keys.enter)
            try terminal.waitFor("7\r\n" + Self.prompt)
            terminal.send("count Dog" + Keys.enter)  // a duplicate in a row: recorded once
            try terminal.waitFor(Self.prompt)
            terminal.send(" count Person" + Keys.enter)  // a leading space: not recorded
            try terminal.waitFor(Self.prompt)
            terminal.send(Keys.up)
            try terminal.waitFor("count Dog")
            #expect(terminal.screen.cursorLine == "liveobj> count Dog")
            terminal.send(Keys.enter)
            try terminal.waitFor("7\r\n" + Self.prompt)
            terminal.send("quit" + Keys.enter)
            #expect(try terminal.waitForExit() == 0)
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
        terminal.send(Keys.control("a") + Keys.altF + Keys.altF + "Cat" + Keys.backspace + Keys.backspace + Keys.backspace)
        terminal.send(Keys.control("e") + Keys.enter)
        try terminal.waitFor("Created Dog 60.")
        terminal.send("get Dog 60" + Keys.enter)
        let shown = try terminal.waitFor(Self.prompt)
        #expect(shown.contains("name:     Шарёк"))
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
        terminal.send("== 'Paris'" + Keys.enter)
        let output = try terminal.waitFor(Self.prompt)
        #expect(output.contains("Chloé Dubois"))
        // Two candidates: the second Tab lists them.
        terminal.send("q" + Keys.tab + Keys.tab)
        let listed = try terminal.waitFor("quit")
        #expect(listed.contains("query"))
        #expect(terminal.screen.cursorLine == "liveobj> qu")
    }

    @Test func controlCAtThePromptClearsTheLine() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory)
        terminal.send("delete Dog where age > 0" + Keys.control("c"))
        try terminal.waitFor("^C\r\n" + Self.prompt)
        // A command left open is abandoned too.
        terminal.send("create Dog {" + Keys.enter)
        try terminal.waitFor("...> ")
        terminal.send(Keys.control("c"))
        try terminal.waitFor(Self.prompt)
        terminal.send("count Dog" + Keys.enter)
        try terminal.waitFor("7\r\n" + Self.prompt)
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
        terminal.send("define Item { id: Int primary, name: String, flag: Bool }" + Keys.enter)
        try terminal.waitFor(Self.prompt)
        terminal.send("import Item \(items.path)" + Keys.enter)
        try terminal.waitFor("Imported \(count) objects.")
        try terminal.waitFor(Self.prompt)
        terminal.send("update Item where id >= 0 set flag = true, name = 'changed'" + Keys.enter)
        try terminal.waitFor("'changed'\r\n")  // the line is read: the command runs
        terminal.send(Keys.control("c"))
        try terminal.waitFor("Error: interrupted; the command changed nothing")
        try terminal.waitFor(Self.prompt)
        terminal.send("count Item where flag == true OR name == 'changed'" + Keys.enter)
        try terminal.waitFor("0\r\n" + Self.prompt)
    }

    @Test func controlDWithUnsavedChangesAsks() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("realm.json").path
        let terminal = try PseudoTerminal(["--create", file])
        try terminal.waitFor(Self.prompt)
        terminal.send("define Note { id: Int primary }" + Keys.enter)
        try terminal.waitFor(Self.prompt)
        terminal.send(Keys.control("d"))
        try terminal.waitFor("Quit without saving the changes to \(file)? [y/N] ")
        terminal.send("n" + Keys.enter)
        try terminal.waitFor(Self.prompt)
        terminal.send("create Note {\"id\": 1}" + Keys.enter)
        try terminal.waitFor("Created Note 1.")
        terminal.send(Keys.control("d"))
        try terminal.waitFor("[y/N] ")
        terminal.send("y" + Keys.enter)
        #expect(try terminal.waitForExit() == 0)
        #expect(terminal.transcript.hasSuffix("\r\n"))
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func aTwoLineJSONPasteIsOneCommand() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try Self.demo(directory)
        terminal.send(Keys.pasteBegin + "create Dog {\"id\": 70,\r\t\"name\": \"Pasted\"}\r" + Keys.pasteEnd)
        try terminal.waitFor("Created Dog 70.")
        #expect(terminal.screen.lines.contains("    ...> ^I\"name\": \"Pasted\"}"))
        terminal.send("get Dog 70" + Keys.enter)
        let shown = try terminal.waitFor(Self.prompt)
        #expect(shown.contains("name:     Pasted"))
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
        terminal.send(Keys.enter)
        let output = try terminal.waitFor(Self.prompt)
        #expect(output.contains("(0 objects)"))
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
