/// How many terminal columns text takes: 2 for East Asian wide characters and emoji, 0 for a
/// character made only of zero-width scalars, 1 otherwise. A character is one grapheme: a base
/// with its combining marks, or a whole emoji sequence (flags, ZWJ families, skin tones).
enum DisplayWidth {
    static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x20 || (0x7F..<0xA0).contains(first.value) {
            return 2  // shown as ^X by the editor, as \u{…} escapes in tables
        }
        if isZeroWidth(first) && scalars.count == 1 { return 0 }
        if isWide(first) || first.properties.isEmojiPresentation { return 2 }
        // A text-style emoji made graphic by a variation selector or a sequence (❤️, 🏳️‍🌈).
        if scalars.count > 1, first.properties.isEmoji,
            scalars.contains(where: { $0.value == 0xFE0F || $0.value == 0x200D || $0.properties.isEmojiModifier })
        {
            return 2
        }
        return 1
    }

    static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return true
        default: return scalar.value == 0x200B
        }
    }

    static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
            0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F680...0x1F6FF, 0x1F900...0x1F9FF,
            0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}

/// Draws an edited line (a prompt and text, possibly longer than the terminal is wide) and puts
/// the cursor where it belongs, redrawing over what it drew before. It remembers on which row
/// of the drawing the cursor is, so that the next drawing starts from the top.
///
/// Characters are placed as a terminal places them: a wide character that does not fit at the
/// end of a row goes to the next one; control characters are shown as `^X`.
public struct LineRenderer: Sendable {
    /// The terminal's width in columns.
    public var columns: Int
    /// The row of the cursor, counted from the first row of the last drawing.
    public private(set) var cursorRow = 0
    var last: (prompt: String, text: [Character], cursor: Int)?

    public init(columns: Int) {
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
    public mutating func draw(prompt: String, text: [Character], cursor: Int) -> String {
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
    public mutating func finish() -> String {
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
    public mutating func reset() {
        cursorRow = 0
        last = nil
    }

    /// Takes a new terminal width. Terminals that reflow (tmux, most emulators) rewrap the
    /// drawing to it, so the cursor's row is counted again at the new width.
    public mutating func resize(columns: Int) {
        self.columns = max(columns, 1)
        guard let last else { return }
        let all = Array(last.prompt) + last.text
        let (starts, end) = layout(all)
        cursorRow = last.prompt.count + last.cursor < all.count ? starts[last.prompt.count + last.cursor].row : end.row
    }
}
