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
