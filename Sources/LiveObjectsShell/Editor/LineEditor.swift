/// What completing the word before the cursor offers: the index (in characters) where the
/// word starts, and the texts that can replace it.
package struct CompletionCandidates: Equatable, Sendable {
    package var start: Int
    package var candidates: [String]

    package init(start: Int, candidates: [String]) {
        self.start = start
        self.candidates = candidates
    }
}

/// The line editor as a state machine: keys go in, the line (a buffer of characters and a
/// cursor) changes, and each key says what the terminal has to do next. It never touches a
/// terminal itself, so its behaviour is tested key by key; ``TerminalLineReader`` connects it to
/// one.
///
/// Editing is by character (grapheme cluster): a letter with its combining marks, an emoji
/// sequence, is one step of the cursor and one Backspace.
package struct LineEditor {
    /// What the terminal does after a key.
    package enum Action: Equatable, Sendable {
        /// Draw the line again.
        case redraw
        /// The line is complete (Enter).
        case submit(String)
        /// End of input: Ctrl-D on an empty line.
        case endOfInput
        /// Ctrl-C: the line is abandoned.
        case interrupt
        /// Ctrl-L: clear the screen, then draw the line.
        case clearScreen
        /// Ctrl-Z: suspend the process.
        case suspend
        /// Show these completion candidates below the line, then draw the line.
        case list([String])
        /// Nothing to do, or nothing possible: ring the bell.
        case bell
    }

    /// The state of an incremental reverse search (Ctrl-R).
    struct Search {
        var query = ""
        /// The history index of the match shown.
        var match: Int?
        var failed = false
        /// The line as it was before the search, for Ctrl-G.
        var original: [Character]
        var originalCursor: Int
    }

    /// The characters of the line.
    package private(set) var buffer: [Character] = []
    /// The cursor, as an index into ``buffer``.
    package private(set) var cursor = 0
    /// Earlier lines, oldest first (Up goes back through them).
    package var history: [String] = []
    /// Completes the word before the cursor, given the line and the cursor (in characters).
    package var completer: ((String, Int) -> CompletionCandidates)?

    var historyIndex = 0
    var draft: [Character] = []
    var search: Search?
    /// Inside a bracketed paste: Tab is text, not completion.
    package private(set) var isPasting = false
    var lastKeyWasTab = false
    var killed: [Character] = []

    package init(history: [String] = []) {
        self.history = history
        historyIndex = history.count
    }

    /// The line as text.
    package var text: String { String(buffer) }

    /// Starts a new, empty line (history position at its end).
    package mutating func reset() {
        buffer = []
        cursor = 0
        historyIndex = history.count
        draft = []
        search = nil
        lastKeyWasTab = false
    }

    /// What to draw: the prompt (the search prompt during Ctrl-R), the characters and the cursor.
    package func display(prompt: String) -> (prompt: String, text: [Character], cursor: Int) {
        guard let search else { return (prompt, buffer, cursor) }
        let label = search.failed ? "(failed reverse-i-search)" : "(reverse-i-search)"
        return ("\(label)'\(search.query)': ", buffer, cursor)
    }

    /// Handles one key.
    package mutating func handle(_ key: EditorKey) -> Action {
        defer { if key != .tab { lastKeyWasTab = false } }
        if search != nil, let action = handleInSearch(key) { return action }
        switch key {
        case .text(let text):
            insert(text)
        case .enter:
            return .submit(text)
        case .tab:
            if isPasting {
                insert("\t")
            } else {
                return complete()
            }
        case .pasteBegin:
            isPasting = true
        case .pasteEnd:
            isPasting = false
        case .backspace:
            guard cursor > 0 else { return .bell }
            buffer.remove(at: cursor - 1)
            cursor -= 1
        case .delete:
            guard cursor < buffer.count else { return .bell }
            buffer.remove(at: cursor)
        case .left:
            guard cursor > 0 else { return .bell }
            cursor -= 1
        case .right:
            guard cursor < buffer.count else { return .bell }
            cursor += 1
        case .home: cursor = 0
        case .end: cursor = buffer.count
        case .up: return recall(historyIndex - 1)
        case .down: return recall(historyIndex + 1)
        case .wordLeft: cursor = wordStart(before: cursor)
        case .wordRight: cursor = wordEnd(after: cursor)
        case .deleteWordBackward: kill(wordStart(before: cursor)..<cursor)
        case .deleteWordForward: kill(cursor..<wordEnd(after: cursor))
        case .escape: return .bell
        case .control(let letter): return control(letter)
        }
        return .redraw
    }

    mutating func control(_ letter: Character) -> Action {
        switch letter {
        case "a": cursor = 0
        case "e": cursor = buffer.count
        case "b": return handle(.left)
        case "f": return handle(.right)
        case "d":
            if buffer.isEmpty { return .endOfInput }
            return handle(.delete)
        case "c": return .interrupt
        case "k": kill(cursor..<buffer.count)
        case "u": kill(0..<cursor)
        case "w":
            // Back to the previous white space, as in a Unix shell.
            var start = cursor
            while start > 0, buffer[start - 1].isWhitespace { start -= 1 }
            while start > 0, !buffer[start - 1].isWhitespace { start -= 1 }
            kill(start..<cursor)
        case "y":
            guard !killed.isEmpty else { return .bell }
            insert(String(killed))
        case "t":
            // Swap the two characters before the cursor (or around it).
            guard buffer.count >= 2, cursor > 0 else { return .bell }
            let i = cursor == buffer.count ? cursor - 1 : cursor
            buffer.swapAt(i - 1, i)
            cursor = i + 1
        case "l": return .clearScreen
        case "p": return handle(.up)
        case "n": return handle(.down)
        case "r":
            search = Search(original: buffer, originalCursor: cursor)
        case "z": return .suspend
        default: return .bell
        }
        return .redraw
    }

    // MARK: Editing

    /// Inserts text at the cursor. A combining mark joins the character before it.
    mutating func insert(_ text: String) {
        let before = String(buffer[..<cursor]) + text
        let after = String(buffer[cursor...])
        let newBefore = Array(before)
        buffer = Array(before + after)
        cursor = min(newBefore.count, buffer.count)
    }

    mutating func kill(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        killed = Array(buffer[range])
        buffer.removeSubrange(range)
        cursor = range.lowerBound
    }

    static func isWordCharacter(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || c == "_"
    }

    func wordStart(before index: Int) -> Int {
        var i = index
        while i > 0, !Self.isWordCharacter(buffer[i - 1]) { i -= 1 }
        while i > 0, Self.isWordCharacter(buffer[i - 1]) { i -= 1 }
        return i
    }

    func wordEnd(after index: Int) -> Int {
        var i = index
        while i < buffer.count, !Self.isWordCharacter(buffer[i]) { i += 1 }
        while i < buffer.count, Self.isWordCharacter(buffer[i]) { i += 1 }
        return i
    }

    // MARK: History

    mutating func recall(_ index: Int) -> Action {
        guard index >= 0, index <= history.count, index != historyIndex else { return .bell }
        if historyIndex == history.count { draft = buffer }
        historyIndex = index
        buffer = index == history.count ? draft : Array(history[index])
        cursor = buffer.count
        return .redraw
    }

    /// Keys during a reverse search; nil when the key ends the search and is then handled as
    /// usual.
    mutating func handleInSearch(_ key: EditorKey) -> Action? {
        guard var search else { return nil }
        switch key {
        case .text(let text):
            search.query += text
            find(&search, from: search.match ?? history.count - 1)
        case .backspace:
            guard !search.query.isEmpty else { return .bell }
            search.query.removeLast()
            find(&search, from: history.count - 1)
        case .control("r"):
            find(&search, from: (search.match ?? history.count) - 1)
        case .control("g"), .escape:
            buffer = search.original
            cursor = search.originalCursor
            self.search = nil
            return .redraw
        case .control("c"):
            self.search = nil
            return .interrupt
        default:
            // Any other key keeps the match as the line and acts on it.
            self.search = nil
            if let match = search.match { historyIndex = match }
            return nil
        }
        self.search = search
        return search.failed ? .bell : .redraw
    }

    /// Finds the newest history line at or before `start` containing the query, and shows it.
    mutating func find(_ search: inout Search, from start: Int) {
        guard !search.query.isEmpty else {
            search.failed = false
            return
        }
        var i = min(start, history.count - 1)
        while i >= 0 {
            if let range = history[i].range(of: search.query) {
                search.match = i
                search.failed = false
                buffer = Array(history[i])
                cursor = history[i][..<range.lowerBound].count
                return
            }
            i -= 1
        }
        search.failed = true
    }

    // MARK: Completion

    mutating func complete() -> Action {
        defer { lastKeyWasTab = true }
        guard let completer else { return .bell }
        let result = completer(text, cursor)
        let start = min(max(result.start, 0), cursor)
        let word = String(buffer[start..<cursor])
        let candidates = result.candidates
        guard !candidates.isEmpty else { return .bell }
        if candidates.count == 1 {
            let candidate = candidates[0]
            let ending = candidate.hasSuffix(".") || candidate.hasSuffix("/") ? "" : " "
            replace(start..<cursor, with: candidate + ending)
            return .redraw
        }
        let common = Self.commonPrefix(candidates)
        if common.count > word.count {
            replace(start..<cursor, with: common)
            return .redraw
        }
        return lastKeyWasTab ? .list(candidates) : .bell
    }

    mutating func replace(_ range: Range<Int>, with text: String) {
        buffer.removeSubrange(range)
        cursor = range.lowerBound
        insert(text)
    }

    static func commonPrefix(_ strings: [String]) -> String {
        guard var prefix = strings.first.map(Array.init) else { return "" }
        for string in strings.dropFirst() {
            let characters = Array(string)
            var n = 0
            while n < prefix.count, n < characters.count, prefix[n] == characters[n] { n += 1 }
            prefix.removeSubrange(n...)
        }
        return String(prefix)
    }
}
