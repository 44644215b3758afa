/// The hash bits a value index keeps per value (its tag), and the string hash behind them.
///
/// A string's tag is the most common case (an indexed name) and the standard library's
/// `String` hash is SipHash over the string's NFC form, about a fifth of a lookup. Strings
/// whose NFC form is ASCII (nearly every name) are hashed here instead, a few multiplications
/// over their bytes keyed by the index's ``ValueIndex/seed``; any other string keeps the
/// standard library's hash. Equal strings must get equal tags, and Swift's `==` on strings is
/// canonical equivalence: a string that is not ASCII but canonically equivalent to an ASCII
/// one ("\u{212A}", KELVIN SIGN, is "K") must be hashed as that ASCII string. Canonically
/// equivalent strings have the same full canonical decomposition, and the only scalars outside
/// ASCII that decompose into ASCII are three singletons (``asciiEquivalent(of:)``; a test of
/// every scalar holds the list to the standard library's own equality), so a string is
/// equivalent to an ASCII string exactly when each of its scalars is ASCII or one of those
/// three, and that ASCII string is the scalars with the three replaced.
///
/// Nothing of this is stored: the tags live in the hash table in memory, which a load or a
/// frozen copy builds anew, so the seed may differ from one index and one process to the next.
extension ValueIndex {
    /// The seed of every index made by this process (each index keeps its own copy, so that a
    /// lookup reads it with the index's other fields).
    static let processSeed: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()

    /// The bits of a value's hash that the table keeps: for a string, `tag(_:)`,
    /// for anything else the low 32 bits of its `hashValue`.
    @inlinable package func tag(_ value: PropertyValue) -> UInt32 {
        if case .string(let string) = value { return tag(string) }
        return UInt32(truncatingIfNeeded: value.hashValue)
    }

    /// The tag of a string: keyed by ``seed`` from the UTF-8 of its NFC form when that is
    /// ASCII, the low 32 bits of its `hashValue` otherwise. Equal strings get equal tags.
    @inlinable package func tag(_ string: String) -> UInt32 {
        let seed = self.seed
        let fast = string.utf8.withContiguousStorageIfAvailable { Self.asciiTag($0, seed: seed) }
        if let fast, let tag = fast { return tag }
        return Self.slowTag(string, seed: seed)
    }

    /// The tag of a string that is not contiguous ASCII UTF-8: the tag of the ASCII string it
    /// is canonically equivalent to, if there is one, else its `hashValue`'s low bits.
    @usableFromInline package static func slowTag(_ string: String, seed: UInt64) -> UInt32 {
        var ascii: [UInt8] = []
        for scalar in string.unicodeScalars {
            guard let byte = asciiEquivalent(of: scalar) else {
                return UInt32(truncatingIfNeeded: string.hashValue)
            }
            ascii.append(byte)
        }
        return ascii.withUnsafeBufferPointer { asciiTag($0, seed: seed)! }
    }

    /// The ASCII scalar a scalar's full canonical decomposition is, if it is one: the scalar
    /// itself when ASCII, and the three singletons outside ASCII that decompose into ASCII
    /// (U+037E GREEK QUESTION MARK is ";", U+1FEF GREEK VARIA is "`", U+212A KELVIN SIGN is
    /// "K"). Every other scalar's decomposition holds a scalar outside ASCII.
    @usableFromInline package static func asciiEquivalent(of scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0..<0x80: UInt8(scalar.value)
        case 0x037E: 0x3B
        case 0x1FEF: 0x60
        case 0x212A: 0x4B
        default: nil
        }
    }

    /// The tag of UTF-8 bytes if they are all ASCII, nil otherwise. Each 8-byte word is mixed
    /// into the state by a full-width multiplication (the high and low halves of the product
    /// folded together); the length is mixed in first, so that the last word, read overlapping
    /// the one before it, and the zero bytes of a short string are not ambiguous.
    @inlinable static func asciiTag(_ bytes: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt32? {
        let n = bytes.count
        let raw = UnsafeRawBufferPointer(bytes)
        var high: UInt64 = 0
        var state = seed ^ (UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15)
        if n >= 8 {
            var i = 0
            while i + 8 < n {
                let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                high |= word
                state = mix(state ^ word, 0xA076_1D64_78BD_642F)
                i += 8
            }
            let last = raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            high |= last
            state = mix(state ^ last, 0xE703_7ED1_A0B4_28DB)
        } else if n >= 4 {
            let first = UInt64(raw.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
            let last = UInt64(raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            high = first | last
            state = mix(state ^ (first << 32 | last), 0xE703_7ED1_A0B4_28DB)
        } else if n > 0 {
            let word = UInt64(bytes[0]) << 16 | UInt64(bytes[n / 2]) << 8 | UInt64(bytes[n - 1])
            high = word
            state = mix(state ^ word, 0xE703_7ED1_A0B4_28DB)
        }
        guard high & 0x8080_8080_8080_8080 == 0 else { return nil }
        state = mix(state, 0x8EBC_6AF0_9C88_C6E3)
        return UInt32(truncatingIfNeeded: state ^ state >> 32)
    }

    /// The high and low halves of the full-width product, folded together.
    @inlinable @inline(__always) static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }
}
