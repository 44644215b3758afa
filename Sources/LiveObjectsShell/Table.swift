/// Aligned text tables: a header, a rule of dashes, one line per row, columns two spaces apart.
struct TextTable {
    var columns: [String]
    var rows: [[String]] = []

    /// A cell for a JSON value: strings as they are, everything else as spaced JSON.
    static func cell(_ value: JSONValue) -> String {
        if case .string(let s) = value { return s.replacingOccurrences(of: "\n", with: "\\n") }
        return value.spaced
    }

    var text: String {
        var widths = columns.map(Self.width)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], Self.width(cell)) }
        }
        func line(_ cells: [String]) -> String {
            var s = ""
            for (i, cell) in cells.enumerated() {
                if i == cells.count - 1 {
                    s += cell
                } else {
                    s += cell + String(repeating: " ", count: widths[i] - Self.width(cell) + 2)
                }
            }
            while s.last == " " { s.removeLast() }
            return s
        }
        var lines = [line(columns), line(widths.map { String(repeating: "-", count: $0) })]
        for row in rows { lines.append(line(row)) }
        return lines.joined(separator: "\n")
    }

    /// The number of terminal columns a text takes: two for wide (East Asian) characters and
    /// emoji, one for other characters.
    static func width(_ text: String) -> Int {
        var total = 0
        for character in text {
            guard let scalar = character.unicodeScalars.first else { continue }
            total +=
                isWide(scalar) || character.unicodeScalars.count > 1 && scalar.properties.isEmojiPresentation ? 2 : 1
        }
        return total
    }

    static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            true
        default:
            false
        }
    }
}
