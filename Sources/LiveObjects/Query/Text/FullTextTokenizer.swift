import LiveObjectsStore

/// Splits text into the words that full-text search (`TEXT`) matches.
///
/// Words are found on the text folded as `[cd]` folds it (``FoldedString``: full case folding,
/// diacritics removed), so `"Crème"`, `"CREME"` and `"crème"` are the same word:
/// - a run of letters, digits and combining marks is a word (`"coffee"`, `"пятёрочка"`,
///   `"42"`); punctuation, symbols and spaces separate words, also inside a run
///   (`"don't"` is `don` and `t`, `"3.14"` is `3` and `14`, as SQLite FTS5's `unicode61`);
/// - each Han ideograph and each Hiragana character is a word of its own, since Chinese and
///   Japanese are written without spaces (`"東京都"` is `東`, `京`, `都`; a phrase of adjacent
///   ideographs then finds a word written without spaces);
/// - a run of Katakana is a word, and ends where another script starts (`"Tシャツ"` is `t` and
///   `シャツ`); Hangul and every other script form runs like Latin;
/// - each emoji (a whole grapheme cluster: a flag, a family, a skin tone) is a word; `[d]`
///   folding removes its variation selector (`"❤️"` is the word `"❤"`).
package enum FullTextTokenizer {
    /// The folding words are compared under.
    package static let options: ComparisonOptions = [.caseInsensitive, .diacriticInsensitive]

    /// The words of a string, folded, in order.
    package static func words(_ string: String) -> [String] {
        words(folded: FoldedString(string, options: options))
    }

    /// The words of a string folded with ``options``, in order.
    package static func words(folded: FoldedString) -> [String] {
        assert(folded.options == options, "full-text words are found on [cd]-folded text")
        if folded.isASCII { return asciiWords(folded.utf8) }
        return words(ofFoldedText: folded.string)
    }

    /// The words of UTF-8 bytes already folded with ``options``.
    package static func words(folded bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> [String] {
        if isASCII { return asciiWords(bytes) }
        return words(ofFoldedText: String(decoding: bytes, as: UTF8.self))
    }

    private static func asciiWords<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [String] {
        var words: [String] = []
        var current: [UInt8] = []
        for byte in bytes {
            let isWordByte =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A)
            if isWordByte {
                current.append(byte)
            } else if !current.isEmpty {
                words.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            }
        }
        if !current.isEmpty { words.append(String(decoding: current, as: UTF8.self)) }
        return words
    }

    /// What a character is to the tokenizer.
    enum CharacterClass: Equatable {
        /// Not part of a word.
        case separator
        /// A word by itself: a Han ideograph, a Hiragana character, an emoji.
        case single
        /// Part of a run of Katakana.
        case katakana
        /// Part of a run of letters, digits and marks of another script.
        case word
    }

    private static func words(ofFoldedText text: String) -> [String] {
        var words: [String] = []
        var current = ""
        var currentClass = CharacterClass.separator
        for character in text {
            let kind = classify(character)
            if kind != currentClass || kind == .single, !current.isEmpty {
                words.append(current)
                current = ""
            }
            currentClass = kind
            if kind != .separator { current.append(character) }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// The class of one character (an extended grapheme cluster).
    static func classify(_ character: Character) -> CharacterClass {
        guard let first = character.unicodeScalars.first else { return .separator }
        let value = first.value
        if value < 0x80 {
            if character.unicodeScalars.count > 1, isEmoji(character) { return .single }  // keycaps
            return first.properties.isAlphabetic || (value >= 0x30 && value <= 0x39) ? .word : .separator
        }
        if isHanOrHiragana(value) { return .single }
        if isKatakana(value) { return .katakana }
        if isEmoji(character) { return .single }
        switch first.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
            return .word
        default:
            return .separator
        }
    }

    /// Han ideographs (with the iteration mark `々` and the ideographic zero `〇`) and Hiragana.
    static func isHanOrHiragana(_ value: UInt32) -> Bool {
        (0x4E00...0x9FFF).contains(value) || (0x3400...0x4DBF).contains(value)
            || (0x20000...0x3FFFF).contains(value) || (0xF900...0xFAFF).contains(value)
            || value == 0x3005 || value == 0x3007 || (0x3040...0x309F).contains(value)
    }

    /// Katakana, its phonetic extensions and the half-width forms.
    static func isKatakana(_ value: UInt32) -> Bool {
        (0x30A0...0x30FF).contains(value) || (0x31F0...0x31FF).contains(value)
            || (0xFF66...0xFF9F).contains(value)
    }

    /// Whether a character is an emoji: a non-ASCII emoji scalar (with or without the
    /// variation selector that `[d]` folding removes, so `©` and `❤` count), or an ASCII one
    /// made an emoji by a keycap, joiner or skin tone (`1️⃣`).
    static func isEmoji(_ character: Character) -> Bool {
        let scalars = character.unicodeScalars
        guard let first = scalars.first, first.properties.isEmoji else { return false }
        if first.value >= 0x80 { return true }
        return scalars.dropFirst().contains { s in
            s.value == 0xFE0F || s.value == 0x200D || s.value == 0x20E3 || (0x1F3FB...0x1F3FF).contains(s.value)
        }
    }
}
