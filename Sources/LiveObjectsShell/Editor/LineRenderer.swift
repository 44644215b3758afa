/// Draws an edited line (a prompt and text, possibly longer than the terminal is wide) and puts
/// the cursor where it belongs, redrawing over what it drew before. It remembers on which row
/// of the drawing the cursor is, so that the next drawing starts from the top.
///
/// Characters are placed as a terminal places them: a wide character that does not fit at the
/// end of a row goes to the next one; control characters are shown as `^X`.
package struct LineRenderer: Sendable {
    /// The terminal's width in columns.
    package var columns: Int
    /// The row of the cursor, counted from the first row of the last drawing.
    package private(set) var cursorRow = 0
    var last: (prompt: String, text: [Character], cursor: Int)?

    package init(columns: Int) {
        self.columns = max(columns, 1)
    }

    /// A row and column on the screen, relative to the drawing's start.
    struct Position: Equatable {
        var row = 0
        var column = 0
    }

    /// The character as drawn: `^X` for a control character.
    static func visible(_ character: Character) -> String {
        guard let first = character.unicodeScalars.first, first.value < 0x20 || first.value == 0x7F else {
            return String(character)
        }
        return "^" + String(Character(Unicode.Scalar(first.value == 0x7F ? 0x3F : first.value + 0x40)!))
    }

    /// Where each character starts, and where the end is, placing characters from the
    /// drawing's start.
    func layout(_ characters: [Character]) -> (starts: [Position], end: Position) {
        var position = Position()
        var starts: [Position] = []
        starts.reserveCapacity(characters.count)
        for character in characters {
            let width = DisplayWidth.of(character)
            if position.column >= columns || position.column + width > columns {
                position.row += 1
                position.column = 0
            }
            starts.append(position)
            position.column += width
        }
        if position.column >= columns {
            position.row += 1
            position.column = 0
        }
        return (starts, position)
    }

    /// The bytes that draw `prompt` and `text` over the previous drawing, with the cursor before
    /// the character at index `cursor` of `text`.
    package mutating func draw(prompt: String, text: [Character], cursor: Int) -> String {
        let all = Array(prompt) + text
        let (starts, end) = layout(all)
        var target = end
        if prompt.count + cursor < all.count { target = starts[prompt.count + cursor] }
        var out = ""
        if cursorRow > 0 { out += "\u{1B}[\(cursorRow)A" }
        out += "\r\u{1B}[J"
        out += prompt
        for character in text { out += Self.visible(character) }
        // After an exactly full row the terminal waits to wrap: go to the next row for real.
        if end.column == 0 && end.row > 0 { out += "\r\n" }
        if end.row > target.row { out += "\u{1B}[\(end.row - target.row)A" }
        out += "\r"
        if target.column > 0 { out += "\u{1B}[\(target.column)C" }
        cursorRow = target.row
        last = (prompt, text, cursor)
        return out
    }

    /// The bytes that move the cursor below the drawing, to the start of a new line, after which
    /// the next drawing starts afresh.
    package mutating func finish() -> String {
        var out = ""
        if let last {
            let (_, end) = layout(Array(last.prompt) + last.text)
            if end.row > cursorRow { out += "\u{1B}[\(end.row - cursorRow)B" }
            if end.column > 0 || end.row == 0 { out += "\r\n" } else { out += "\r" }
        } else {
            out = "\r\n"
        }
        cursorRow = 0
        last = nil
        return out
    }

    /// Forgets the previous drawing (the screen was cleared, or other output moved on).
    package mutating func reset() {
        cursorRow = 0
        last = nil
    }

    /// Takes a new terminal width. Terminals that reflow (most emulators and multiplexers) rewrap the
    /// drawing to it, so the cursor's row is counted again at the new width.
    package mutating func resize(columns: Int) {
        self.columns = max(columns, 1)
        guard let last else { return }
        let all = Array(last.prompt) + last.text
        let (starts, end) = layout(all)
        cursorRow = last.prompt.count + last.cursor < all.count ? starts[last.prompt.count + last.cursor].row : end.row
    }
}
