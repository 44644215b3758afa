import Foundation
import Testing

@testable import LiveObjectsShell

/// The line editor as a state machine: bytes in, keys decoded, buffer and cursor out.
@Suite struct LineEditorTests {
    /// Feeds bytes to a decoder and an editor; returns the editor and the last action.
    @discardableResult
    static func type(_ bytes: String, into editor: inout LineEditor) -> LineEditor.Action? {
        var decoder = KeyDecoder()
        decoder.feed(bytes.utf8)
        var last: LineEditor.Action?
        while let key = decoder.next() { last = editor.handle(key) }
        return last
    }

    static func edit(_ bytes: String, history: [String] = []) -> (text: String, cursor: Int, action: LineEditor.Action?)
    {
        var editor = LineEditor(history: history)
        let action = type(bytes, into: &editor)
        return (editor.text, editor.cursor, action)
    }

    @Test func decodesKeys() {
        var decoder = KeyDecoder()
        decoder.feed(Array("a\u{1B}[A\u{1B}OH\u{1B}[3~\u{1B}b\u{1B}[1;5C\u{01}\t\r\u{7F}".utf8))
        var keys: [EditorKey] = []
        while let key = decoder.next() { keys.append(key) }
        #expect(
            keys == [.text("a"), .up, .home, .delete, .wordLeft, .wordRight, .control("a"), .tab, .enter, .backspace])
    }

    @Test func waitsForTheRestOfASplitSequence() {
        var decoder = KeyDecoder()
        let bytes = Array("Ж\u{1B}[D".utf8)
        decoder.feed(bytes[..<1])  // half of Ж
        #expect(decoder.next() == nil)
        decoder.feed(bytes[1..<3])  // the rest of Ж and ESC
        #expect(decoder.next() == .text("Ж"))
        #expect(decoder.next() == nil)
        #expect(decoder.isWaitingAfterEscape)
        decoder.feed(bytes[3...])
        #expect(decoder.next() == .left)
        decoder.feed([0x1B])
        #expect(decoder.next() == nil)
        #expect(decoder.flushEscape() == .escape)
    }

    @Test func movesAndEditsByCharacter() {
        #expect(Self.edit("abc\u{1B}[D\u{1B}[DX").text == "aXbc")
        #expect(Self.edit("Привет\u{1B}[D\u{1B}[D\u{7F}").text == "Приет")
        // A letter with a combining accent and a family emoji are one character each.
        let (text, cursor, _) = Self.edit("e\u{301}👨‍👩‍👧x\u{1B}[D\u{1B}[D\u{7F}")
        #expect(text == "👨‍👩‍👧x")
        #expect(cursor == 0)
        #expect(Self.edit("abc\u{01}X\u{05}Y").text == "XabcY")
        #expect(Self.edit("abc\u{1B}[H\u{1B}[3~").text == "bc")
        #expect(Self.edit("ab\u{02}\u{02}\u{06}\u{04}").text == "a")
    }

    @Test func killsAndYanks() {
        #expect(Self.edit("one two three\u{17}").text == "one two ")
        #expect(Self.edit("one two three\u{1B}b\u{0B}").text == "one two ")
        #expect(Self.edit("one two three\u{1B}b\u{15}").text == "three")
        #expect(Self.edit("one two\u{17}\u{01}\u{19} ").text == "two one ")
        #expect(Self.edit("one two\u{01}\u{1B}f\u{1B}f\u{1B}b|").text == "one |two")
    }

    @Test func controlDEndsOnlyAnEmptyLine() {
        #expect(Self.edit("\u{04}").action == .endOfInput)
        let partial = Self.edit("abc\u{01}\u{04}")
        #expect(partial.text == "bc")
        #expect(partial.action == .redraw)
        #expect(Self.edit("abc\u{03}").action == .interrupt)
        #expect(Self.edit("abc\u{0C}").action == .clearScreen)
        #expect(Self.edit("count Dog\r").action == .submit("count Dog"))
    }

    @Test func upAndDownGoThroughTheHistoryKeepingTheDraft() {
        let history = ["count Dog", "query Person"]
        #expect(Self.edit("\u{1B}[A", history: history).text == "query Person")
        #expect(Self.edit("\u{1B}[A\u{1B}[A", history: history).text == "count Dog")
        #expect(Self.edit("\u{1B}[A\u{1B}[A\u{1B}[A", history: history).action == .bell)
        #expect(Self.edit("dra\u{1B}[A\u{1B}[Bft", history: history).text == "draft")
    }

    @Test func controlRSearchesBackwards() {
        let history = ["count Dog", "query Person where age > 3", "count Person"]
        var editor = LineEditor(history: history)
        Self.type("\u{12}Per", into: &editor)
        #expect(editor.text == "count Person")
        #expect(editor.display(prompt: "> ").prompt == "(reverse-i-search)'Per': ")
        Self.type("\u{12}", into: &editor)
        #expect(editor.text == "query Person where age > 3")
        #expect(Self.type("\r", into: &editor) == .submit("query Person where age > 3"))
        // Ctrl-G gives the line back.
        var cancelled = LineEditor(history: history)
        Self.type("typed\u{12}Dog\u{07}", into: &cancelled)
        #expect(cancelled.text == "typed")
        #expect(cancelled.display(prompt: "> ").prompt == "> ")
    }

    @Test func tabCompletesAndAPasteInsertsTabs() {
        var editor = LineEditor()
        editor.completer = { line, cursor in
            let start =
                line.prefix(cursor).lastIndex(of: " ").map { line.distance(from: line.startIndex, to: $0) + 1 } ?? 0
            let word = String(Array(line)[start..<cursor])
            return CompletionCandidates(start: start, candidates: ["query", "quit"].filter { $0.hasPrefix(word) })
        }
        Self.type("que\t", into: &editor)
        #expect(editor.text == "query ")
        editor.reset()
        #expect(Self.type("q\t", into: &editor) == .redraw)  // the common prefix
        #expect(editor.text == "qu")
        #expect(Self.type("\t", into: &editor) == .list(["query", "quit"]))
        editor.reset()
        Self.type("q", into: &editor)
        #expect(Self.type("\u{1B}[D\u{1B}[C\t", into: &editor) == .redraw)
        #expect(Self.type("x\u{7F}\t", into: &editor) == .bell)  // the first Tab on "qu"
        #expect(Self.type("\t", into: &editor) == .list(["query", "quit"]))
        editor.reset()
        Self.type("\u{1B}[200~a\tb\u{1B}[201~", into: &editor)
        #expect(editor.text == "a\tb")
    }

    @Test func rendersLongAndWideLinesAsATerminalWraps() {
        var renderer = LineRenderer(columns: 10)
        var screen = TerminalScreen(columns: 10)
        let text = Array("abc日本語defghijk")
        screen.feed(renderer.draw(prompt: "> ", text: text, cursor: 3))
        // "> abc日本" fills 9 columns; 語 does not fit in the last one and goes to the next row.
        #expect(screen.lines == ["> abc日本", "語defghijk", ""])
        #expect(screen.row == 0 && screen.column == 5)
        screen.feed(renderer.draw(prompt: "> ", text: Array("abcdefgh"), cursor: 8))
        // Exactly full: the cursor waits on the next row.
        #expect(screen.lines == ["> abcdefgh", ""])
        #expect(screen.row == 1 && screen.column == 0)
        screen.feed(renderer.draw(prompt: "> ", text: Array("ab"), cursor: 1))
        #expect(screen.lines == ["> ab"])
        #expect(screen.row == 0 && screen.column == 3)
        screen.feed(renderer.finish())
        #expect(screen.row == 1 && screen.column == 0)
    }

    @Test func historyIsBoundedPrivateAndSkipsRepeatsAndLeadingSpaces() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        var history = LineHistory(.init(file: file, limit: 3))
        let recorded = ["one", "one", " secret", "   "].map { history.add($0) }
        #expect(recorded == [true, false, false, false])
        for line in ["two", "three", "four"] { history.add(line) }
        #expect(history.entries == ["two", "three", "four"])
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "two\nthree\nfour\n")
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(LineHistory(.init(file: file, limit: 2)).entries == ["three", "four"])
        #expect(LineHistory.Configuration.fromEnvironment(["HOME": "/home/u"]).file == "/home/u/.liveobj_history")
        #expect(LineHistory.Configuration.fromEnvironment(["HOME": "/h", "LIVEOBJ_HISTORY": "/x"]).file == "/x")
        #expect(LineHistory.Configuration.fromEnvironment(["HOME": "/h", "LIVEOBJ_NO_HISTORY": "1"]).file == nil)
        #expect(LineHistory.Configuration.fromEnvironment(["LIVEOBJ_HISTORY_SIZE": "50"]).limit == 50)
    }

    @Test func displayWidths() {
        #expect(DisplayWidth.of("Иван") == 4)
        #expect(DisplayWidth.of("日本") == 4)
        #expect(DisplayWidth.of("🚀") == 2)
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("👨‍👩‍👧") == 2)
        #expect(DisplayWidth.of("❤️") == 2)
    }

    @Test func commandsContinueOverLines() {
        var splitter = CommandSplitter()
        #expect(splitter.add(line: #"create Dog {"id": 1,"#).isEmpty)
        #expect(splitter.isContinuing)
        #expect(
            splitter.add(line: #" "name": "a"}  # a comment"#) == [
                .init(text: #"create Dog {"id": 1,  "name": "a"}"#, line: 1)
            ])
        #expect(!splitter.isContinuing)
        #expect(splitter.add(line: "get Toy #3 # the ball; count Dog") == [.init(text: "get Toy #3", line: 3)])
        #expect(splitter.add(line: "query Dog where name == 'a;") == [])
        #expect(
            splitter.add(line: "b'; count Dog") == [
                .init(text: "query Dog where name == 'a; b'", line: 4), .init(text: "count Dog", line: 5),
            ])
    }
}
