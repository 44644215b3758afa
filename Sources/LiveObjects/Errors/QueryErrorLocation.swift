/// Where in a query's text an error was found, so that a tool can show the line with a caret
/// under the problem:
///
/// ```
/// age > > 3
///       ^
/// ```
///
/// Attached to a ``LiveObjectsError`` as ``LiveObjectsError/queryLocation``.
package struct QueryErrorLocation: Hashable, Sendable {
    /// The whole text of the query.
    package var text: String
    /// The UTF-8 offset of the problem in ``text``.
    package var utf8Offset: Int
    /// The 1-based line of the problem (lines are separated by `\n`).
    package var line: Int
    /// The 1-based column of the problem within its line, counted in characters (grapheme
    /// clusters). A problem at the end of the input is one column past the last character.
    package var column: Int

    /// Locates a UTF-8 offset in a text. An offset past the end is clamped to the end; one inside
    /// a character is moved back to the start of that character.
    package init(text: String, utf8Offset: Int) {
        let utf8 = text.utf8
        let target = max(0, min(utf8Offset, utf8.count))
        // Find the start of the line holding the offset.
        var line = 1
        var lineStart = 0
        var position = 0
        for byte in utf8 {
            if position >= target { break }
            position += 1
            if byte == UInt8(ascii: "\n") {
                line += 1
                lineStart = position
            }
        }
        // Count the characters of that line before the offset.
        var column = 1
        var characterStart = lineStart
        let lineStartIndex = utf8.index(utf8.startIndex, offsetBy: lineStart)
        for character in text[lineStartIndex...] {
            let next = characterStart + character.utf8.count
            if next > target || character == "\n" { break }
            characterStart = next
            column += 1
        }
        self.text = text
        self.utf8Offset = characterStart
        self.line = line
        self.column = column
    }

    /// The line of the problem and, under it, a caret at the problem's column. Tabs in the line
    /// are kept in the caret line so the caret stays aligned; a very long line is cut to a
    /// window around the problem, marked with `…`.
    package var caretDiagnostic: String {
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let lineText = line - 1 < lines.count ? Array(String(Substring(lines[line - 1]))) : []
        let caretIndex = column - 1
        let window = 60
        var first = 0
        var last = lineText.count
        if lineText.count > window * 2 {
            first = max(0, caretIndex - window)
            last = min(lineText.count, caretIndex + window)
        }
        var shown = first > 0 ? "…" : ""
        var padding = first > 0 ? " " : ""
        for i in first..<last {
            shown.append(lineText[i])
            if i < caretIndex { padding += lineText[i] == "\t" ? "\t" : " " }
        }
        if last < lineText.count { shown += "…" }
        if caretIndex >= last { padding += String(repeating: " ", count: caretIndex - max(last, first)) }
        return shown + "\n" + padding + "^"
    }
}
