// The text rules of docs/SYNC-PROTOCOL.md ("Text"): no NUL character anywhere in a change
// (PostgreSQL keeps neither `\u0000` in JSONB nor NUL in text), and string ids compared in NFC,
// as a realm and the engine compare them.

/// The text rules of the protocol, for the device and the server.
public enum SyncText {
    /// Whether the text holds U+0000, which the protocol does not carry.
    public static func containsNUL(_ text: String) -> Bool { text.utf8.contains(0) }

    /// The text in the standard library's NFC, the form `==` compares (not Foundation's
    /// `precomposedStringWithCanonicalMapping`, which differs from it on Linux): the form a server
    /// stores string ids in.
    public static func nfc(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        return String(decoding: text._nfcCodeUnits, as: UTF8.self)
    }
}
