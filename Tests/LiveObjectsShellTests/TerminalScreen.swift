@testable import LiveObjectsShell

/// A small model of a terminal screen, enough to check what the line editor draws: printable
/// characters (wide ones take two cells), carriage return, line feed, backspace, and the CSI
/// sequences the editor sends (cursor up, down, forward, back, erase below and to the end of
/// the line, home and erase all). The screen has no height limit: rows are added below as
/// needed, like an endless scroll-back.
struct TerminalScreen {
    var columns: Int
    var rows: [[Character?]] = [[]]
    var row = 0
    var column = 0
    /// After writing into the last column, the next character goes to the next row.
    var pendingWrap = false
    var pending: [Character] = []

    init(columns: Int) { self.columns = columns }

    /// The text of each row, without trailing spaces.
    var lines: [String] {
        rows.map { cells in
            var s = String(cells.compactMap { $0 })
            while s.last == " " { s.removeLast() }
            return s
        }
    }

    /// The row the cursor is on.
    var cursorLine: String { lines[row] }

    mutating func ensureRow(_ r: Int) {
        while rows.count <= r { rows.append([]) }
    }

    mutating func put(_ c: Character?, at col: Int) {
        ensureRow(row)
        while rows[row].count <= col { rows[row].append(" ") }
        rows[row][col] = c
    }

    mutating func feed(_ text: String) {
        for c in text { feed(c) }
    }

    mutating func feed(_ c: Character) {
        if !pending.isEmpty {
            pending.append(c)
            if pending.count == 2 && c != "[" {
                pending = []  // ESC and one character: ignored
            } else if pending.count > 2, let scalar = c.unicodeScalars.first, (0x40...0x7E).contains(scalar.value) {
                csi(String(pending.dropFirst(2).dropLast()), final: c)
                pending = []
            }
            return
        }
        switch c {
        case "\u{1B}": pending = [c]
        case "\r":
            column = 0
            pendingWrap = false
        case "\n", "\r\n":
            if c == "\r\n" { column = 0 }
            row += 1
            pendingWrap = false
            ensureRow(row)
        case "\u{08}":
            column = max(0, column - 1)
            pendingWrap = false
        case "\u{07}": break
        default:
            let width = DisplayWidth.of(c)
            if pendingWrap || column + width > columns {
                row += 1
                column = 0
                pendingWrap = false
                ensureRow(row)
            }
            put(c, at: column)
            if width == 2 { put(nil, at: column + 1) }
            column += width
            if column >= columns {
                column = columns - 1
                pendingWrap = true
            }
        }
    }

    mutating func csi(_ parameters: String, final: Character) {
        let n = max(1, Int(parameters) ?? 1)
        pendingWrap = false
        switch final {
        case "A": row = max(0, row - n)
        case "B":
            row += n
            ensureRow(row)
        case "C": column = min(columns - 1, column + n)
        case "D": column = max(0, column - n)
        case "K":
            ensureRow(row)
            if rows[row].count > column { rows[row].removeSubrange(column...) }
        case "J":
            if parameters == "2" {
                rows = [[]]
                row = 0
                column = 0
                return
            }
            ensureRow(row)
            if rows[row].count > column { rows[row].removeSubrange(column...) }
            rows.removeSubrange((row + 1)...)
        case "H":
            row = 0
            column = 0
        default: break  // modes (bracketed paste) and the rest
        }
    }
}
