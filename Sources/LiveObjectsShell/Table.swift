import LiveObjectsJSON

/// Aligned text tables: a header, a rule of dashes, one line per row, columns two spaces apart.
/// With a maximum width (the terminal's), the widest columns are narrowed until the table fits,
/// and values wider than their column are cut with `…`.
struct TextTable {
    var columns: [String]
    var rows: [[String]] = []
    /// The most columns a line may take; nil for no limit.
    var maximumWidth: Int?

    /// A column is never narrowed below this many terminal columns.
    static let minimumColumnWidth = 6

    /// A cell for a JSON value: strings as they are with control characters escaped, everything
    /// else as spaced JSON.
    static func cell(_ value: JSONValue) -> String {
        if case .string(let s) = value { return escaped(s) }
        return value.spaced
    }

    /// Control characters as escapes (`\n`, `\t`, `\r`, `\u001B`), so that a value cannot move
    /// the cursor, ring the bell or change the terminal's colours.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where isControl(scalar):
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value)
    }

    /// `text` cut to `width` terminal columns, ending with `…` when something was cut.
    static func cut(_ text: String, to width: Int) -> String {
        guard Self.width(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let w = DisplayWidth.of(character)
            if used + w > width - 1 { break }
            result.append(character)
            used += w
        }
        return result + "…"
    }

    /// The widths of the columns: as wide as their widest cell, narrowed to fit.
    var widths: [Int] {
        var widths = columns.map(Self.width)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], Self.width(cell)) }
        }
        guard let maximumWidth, !widths.isEmpty else { return widths }
        var total = widths.reduce(0, +) + 2 * (widths.count - 1)
        while total > maximumWidth {
            let widest = widths.indices.max { widths[$0] < widths[$1] }!
            guard widths[widest] > Self.minimumColumnWidth else { break }
            widths[widest] -= 1
            total -= 1
        }
        return widths
    }

    var text: String {
        let widths = self.widths
        func line(_ cells: [String]) -> String {
            var s = ""
            for (i, cell) in cells.enumerated() {
                let shown = i < widths.count ? Self.cut(cell, to: widths[i]) : cell
                if i == cells.count - 1 {
                    s += shown
                } else {
                    s += shown + String(repeating: " ", count: max(0, widths[i] - Self.width(shown)) + 2)
                }
            }
            while s.last == " " { s.removeLast() }
            return s
        }
        var lines = [line(columns), line(widths.map { String(repeating: "-", count: $0) })]
        for row in rows { lines.append(line(row)) }
        return lines.joined(separator: "\n")
    }

    /// The number of terminal columns a text takes.
    static func width(_ text: String) -> Int {
        DisplayWidth.of(text)
    }
}

/// How results are printed: `mode` in the shell, `--mode` on the command line.
package enum OutputMode: String, Sendable, CaseIterable {
    /// Aligned columns, values cut to the terminal's width.
    case table
    /// One `name | value` line per property, one block per object; values in full.
    case vertical
    /// One JSON document per result (as `--json`).
    case json
    /// Comma-separated values with a header line (RFC 4180 quoting).
    case csv
}

extension TextTable {
    /// The table in an output mode (not JSON, which every command prints its own way).
    func rendered(_ mode: OutputMode) -> String {
        switch mode {
        case .table, .json: return text
        case .vertical:
            let width = columns.map(Self.width).max() ?? 0
            return rows.enumerated().map { index, row in
                let header = "-[ RECORD \(index + 1) ]" + String(repeating: "-", count: max(2, width - 8))
                let lines = zip(columns, row).map { name, value in
                    name + String(repeating: " ", count: width - Self.width(name)) + " | " + value
                }
                return ([header] + lines).joined(separator: "\n")
            }.joined(separator: "\n")
        case .csv:
            return ([columns] + rows).map { $0.map(Self.csvField).joined(separator: ",") }.joined(separator: "\n")
        }
    }

    static func csvField(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
