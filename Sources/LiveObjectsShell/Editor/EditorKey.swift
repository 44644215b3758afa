/// A key (or a run of typed text) decoded from the bytes a terminal sends.
package enum EditorKey: Equatable, Sendable {
    /// Printable text: one character typed, or several arriving together (a paste).
    case text(String)
    case enter
    case tab
    case backspace
    case delete
    case left
    case right
    case home
    case end
    case up
    case down
    /// Alt-B, Ctrl-Left.
    case wordLeft
    /// Alt-F, Ctrl-Right.
    case wordRight
    /// Alt-Backspace.
    case deleteWordBackward
    /// Alt-D.
    case deleteWordForward
    /// Ctrl with a letter: `control("a")` is Ctrl-A (byte 1). Enter, Tab and Backspace are keys of
    /// their own.
    case control(Character)
    /// The start and end of a bracketed paste (`ESC [200~`, `ESC [201~`).
    case pasteBegin
    case pasteEnd
    /// Escape pressed alone (reported once no more bytes follow it).
    case escape
}

/// Turns the bytes a terminal sends into keys: UTF-8 text, control characters and the escape
/// sequences of xterm-compatible terminals (CSI and SS3). Bytes that do not complete a key yet
/// (half a UTF-8 sequence, an escape sequence cut between two reads) wait for the next ones;
/// unknown sequences are dropped.
package struct KeyDecoder: Sendable {
    var pending: [UInt8] = []

    package init() {}

    /// Adds bytes read from the terminal.
    package mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        pending.append(contentsOf: bytes)
    }

    /// Whether the bytes held so far start an escape sequence that is not complete: the caller
    /// waits a little for the rest, then calls ``flushEscape()``.
    package var isWaitingAfterEscape: Bool { pending.first == 0x1B }

    /// Whether no byte is waiting.
    package var isEmpty: Bool { pending.isEmpty }

    /// Reports a lone Escape held back by ``next()``, once no more bytes came.
    package mutating func flushEscape() -> EditorKey? {
        guard pending.first == 0x1B else { return nil }
        pending.removeFirst()
        return .escape
    }

    /// The next complete key, or nil when the bytes held do not make one yet.
    package mutating func next() -> EditorKey? {
        while let first = pending.first {
            switch first {
            case 0x1B:
                guard let (key, length) = escapeSequence() else { return nil }
                pending.removeFirst(length)
                if let key { return key }
            case 0x0D, 0x0A:
                pending.removeFirst()
                return .enter
            case 0x09:
                pending.removeFirst()
                return .tab
            case 0x08, 0x7F:
                pending.removeFirst()
                return .backspace
            case 0x01...0x1A:
                pending.removeFirst()
                return .control(Character(Unicode.Scalar(first + 0x60)))
            case 0x00, 0x1C...0x1F:
                pending.removeFirst()
            default:
                return text()
            }
        }
        return nil
    }

    /// A run of printable UTF-8 text up to the next control byte; nil when it ends in the middle
    /// of a character.
    mutating func text() -> EditorKey? {
        var end = 0
        while end < pending.count, pending[end] >= 0x20, pending[end] != 0x7F {
            let length = Self.sequenceLength(pending[end])
            if end + length > pending.count { break }
            end += length
        }
        guard end > 0 else { return nil }
        let text = String(decoding: pending[..<end], as: UTF8.self)
        pending.removeFirst(end)
        return .text(text)
    }

    static func sequenceLength(_ lead: UInt8) -> Int {
        switch lead {
        case 0xC0...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF7: 4
        default: 1
        }
    }

    /// The escape sequence at the start of `pending`: the key (nil for one to drop) and its
    /// length, or nil when it is not complete.
    func escapeSequence() -> (EditorKey?, Int)? {
        guard pending.count >= 2 else { return nil }
        let second = pending[1]
        switch second {
        case UInt8(ascii: "["):
            // CSI: parameter bytes, intermediate bytes, one final byte.
            var i = 2
            while i < pending.count, (0x20...0x3F).contains(pending[i]) { i += 1 }
            guard i < pending.count else { return nil }
            let parameters = String(decoding: pending[2..<i], as: UTF8.self)
            return (Self.csi(parameters, final: pending[i]), i + 1)
        case UInt8(ascii: "O"):
            guard pending.count >= 3 else { return nil }
            return (Self.csi("", final: pending[2]), 3)
        case UInt8(ascii: "b"), UInt8(ascii: "B"): return (.wordLeft, 2)
        case UInt8(ascii: "f"), UInt8(ascii: "F"): return (.wordRight, 2)
        case UInt8(ascii: "d"), UInt8(ascii: "D"): return (.deleteWordForward, 2)
        case 0x7F, 0x08: return (.deleteWordBackward, 2)
        case 0x1B: return (.escape, 1)
        default:
            // Alt with another key: not bound; the key itself is read normally.
            return (nil, 1)
        }
    }

    static func csi(_ parameters: String, final: UInt8) -> EditorKey? {
        let modified = parameters.hasSuffix(";5") || parameters.hasSuffix(";3")
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return modified ? .wordRight : .right
        case UInt8(ascii: "D"): return modified ? .wordLeft : .left
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        case UInt8(ascii: "~"):
            switch parameters.split(separator: ";").first ?? "" {
            case "1", "7": return .home
            case "4", "8": return .end
            case "3": return .delete
            case "200": return .pasteBegin
            case "201": return .pasteEnd
            default: return nil
            }
        default: return nil
        }
    }
}
