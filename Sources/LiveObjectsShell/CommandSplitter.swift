import Foundation

/// Cuts input into commands, line by line: a command ends at the end of its line or at `;`,
/// outside quotes and brackets. A line that ends inside a quote or an unclosed `{`, `[` or `(`
/// continues on the next line (the lines are joined with a space). `#` starts a comment at the
/// start of a command, or after white space when white space or the end of the line follows it
/// (so `#3`, an object key, is not one).
package struct CommandSplitter: Sendable {
    /// A complete command and the number of the line (from 1) where it starts.
    package struct Command: Equatable, Sendable {
        package var text: String
        package var line: Int
    }

    var current: [UInt8] = []
    var startLine = 0
    var quote: UInt8?
    var escaped = false
    var depth = 0
    /// The number of lines added so far.
    package private(set) var lineCount = 0

    package init() {}

    /// Whether a command is started and not finished: the next line continues it.
    package var isContinuing: Bool { !isBlank(current) }

    func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D }

    /// Adds one line of input (without its newline); returns the commands it completes.
    package mutating func add(line: String) -> [Command] {
        lineCount += 1
        var done: [Command] = []
        let bytes = Array(line.utf8)
        var i = 0
        scan: while i < bytes.count {
            let b = bytes[i]
            defer { i += 1 }
            if isBlank(current) && !Self.isSpace(b) { startLine = lineCount }
            if let q = quote {
                current.append(b)
                if escaped {
                    escaped = false
                } else if b == UInt8(ascii: "\\") {
                    escaped = true
                } else if b == q {
                    quote = nil
                }
                continue
            }
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                quote = b
                current.append(b)
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "("):
                depth += 1
                current.append(b)
            case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ")"):
                depth = max(0, depth - 1)
                current.append(b)
            case UInt8(ascii: ";") where depth == 0:
                if let command = take() { done.append(command) }
            case UInt8(ascii: "#")
            where isBlank(current)
                || ((i == 0 || Self.isSpace(bytes[i - 1])) && (i + 1 == bytes.count || Self.isSpace(bytes[i + 1]))):
                break scan
            default:
                current.append(b)
            }
        }
        if quote == nil && depth == 0 {
            if let command = take() { done.append(command) }
        } else {
            current.append(0x20)
        }
        return done
    }

    /// Ends the input: the started command, if any (it is incomplete; running it reports why).
    package mutating func finish() -> Command? {
        take()
    }

    /// Drops the started command (Ctrl-C on a continuation line).
    mutating func abandon() {
        current = []
        quote = nil
        escaped = false
        depth = 0
    }

    mutating func take() -> Command? {
        defer { abandon() }
        guard !isBlank(current) else { return nil }
        let text = String(decoding: current, as: UTF8.self)
        return Command(text: text.trimmingCharacters(in: .whitespaces), line: startLine)
    }

    /// Splits text (lines, commands separated by `;`) into commands.
    package static func split(_ text: String) -> [Command] {
        var splitter = CommandSplitter()
        var commands: [Command] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            commands += splitter.add(line: String(line))
        }
        if let last = splitter.finish() { commands.append(last) }
        return commands
    }
}
