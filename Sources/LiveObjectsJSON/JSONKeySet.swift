/// A fixed list of object keys that ``JSONReader/nextKey(in:)`` matches without making strings.
///
/// ```swift
/// let keys = JSONKeySet(["id", "name", "owner"])
/// while let key = try reader.nextKey(in: keys) {
///     switch key {
///     case 0: id = try reader.readInt64()
///     case 1: name = try reader.readString()
///     case 2: owner = try reader.readNull() ? nil : try reader.readInt64()
///     default: try reader.skipValue()  // JSONKeySet.unknownKey
///     }
/// }
/// ```
@usableFromInline
package struct JSONKeySet: Sendable, Hashable {
    /// What ``JSONReader/nextKey(in:)`` returns for a key that is not in the set.
    static let unknownKey = -1

    /// The keys, in the order given.
    @usableFromInline package let keys: [String]
    /// The UTF-8 bytes of all keys, one after the other.
    private let bytes: [UInt8]
    /// Where each key's bytes start in `bytes`, and where the last one ends.
    private let starts: [Int]
    /// For each index, the first index holding the same key.
    @usableFromInline let firstIndex: [Int]
    /// For each index, whether JSON text holds the key as its bytes, unescaped: no `"`, `\` or
    /// control character in it.
    private let isPlain: [Bool]
    /// For each plain key of at most 7 bytes: its bytes and the closing `"`, little-endian, and
    /// the mask of those bytes (zero for other keys), to match it with one 8-byte load.
    private let words: [Word]

    /// For each plain key short enough: its member as ``JSONWriter`` writes it, `"key": ` after
    /// the `{` and `, "key": ` after a member, as 16 bytes and masks (zero masks for other keys).
    @usableFromInline let members: [Member]

    @usableFromInline
    struct Word: Sendable, Hashable {
        @usableFromInline var bytes: UInt64
        @usableFromInline var mask: UInt64
    }

    @usableFromInline
    struct Member: Sendable, Hashable {
        @usableFromInline var first: (Word, Word)
        @usableFromInline var next: (Word, Word)
        @usableFromInline var firstLength: Int
        @usableFromInline var nextLength: Int

        @usableFromInline static func == (a: Member, b: Member) -> Bool {
            a.first == b.first && a.next == b.next && a.firstLength == b.firstLength && a.nextLength == b.nextLength
        }

        @usableFromInline func hash(into hasher: inout Hasher) {
            hasher.combine(first.0)
            hasher.combine(first.1)
            hasher.combine(next.0)
            hasher.combine(next.1)
        }

        /// Up to 16 bytes as two words and masks; zero masks when longer.
        static func words(_ bytes: [UInt8]) -> (Word, Word) {
            guard bytes.count <= 16 else { return (Word(bytes: 0, mask: 0), Word(bytes: 0, mask: 0)) }
            var words = [Word(bytes: 0, mask: 0), Word(bytes: 0, mask: 0)]
            for (j, byte) in bytes.enumerated() {
                words[j / 8].bytes |= UInt64(byte) << (8 * UInt64(j % 8))
                words[j / 8].mask |= 0xFF << (8 * UInt64(j % 8))
            }
            return (words[0], words[1])
        }
    }

    /// Creates a set. If a key is listed twice, its first index is the one matched.
    package init(_ keys: [String]) {
        self.keys = keys
        var bytes: [UInt8] = []
        var starts: [Int] = [0]
        for key in keys {
            bytes.append(contentsOf: key.utf8)
            starts.append(bytes.count)
        }
        self.bytes = bytes
        self.starts = starts
        let isPlain = keys.map { key in !key.utf8.contains { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 } }
        self.isPlain = isPlain
        words = keys.indices.map { i in
            let utf8 = Array(keys[i].utf8) + [0x22]
            guard isPlain[i] && utf8.count <= 8 else { return Word(bytes: 0, mask: 0) }
            var word: UInt64 = 0
            for (j, byte) in utf8.enumerated() { word |= UInt64(byte) << (8 * UInt64(j)) }
            return Word(bytes: word, mask: utf8.count == 8 ? ~0 : (1 << (8 * UInt64(utf8.count))) - 1)
        }
        members = keys.indices.map { i in
            let quoted = [0x22] + Array(keys[i].utf8) + [0x22, 0x3A, 0x20]
            let first = isPlain[i] ? Member.words(quoted) : Member.words(Array(repeating: 0, count: 17))
            let next = isPlain[i] ? Member.words([0x2C, 0x20] + quoted) : first
            return Member(first: first, next: next, firstLength: quoted.count, nextLength: quoted.count + 2)
        }
        var seen: [String: Int] = [:]
        firstIndex = keys.indices.map { i in
            if let first = seen[keys[i]] { return first }
            seen[keys[i]] = i
            return i
        }
    }

    /// The number of keys.
    @inlinable package var count: Int { keys.count }

    /// The index of the key whose UTF-8 bytes are `utf8`, trying `hint` first; or
    /// ``unknownKey``.
    @inline(__always)
    func index(of utf8: UnsafeBufferPointer<UInt8>, hint: Int) -> Int {
        bytes.withUnsafeBufferPointer { all in
            starts.withUnsafeBufferPointer { starts in
                let n = starts.count - 1
                func matches(_ i: Int) -> Bool {
                    let start = starts[i]
                    guard starts[i + 1] - start == utf8.count else { return false }
                    for j in 0..<utf8.count where all[start + j] != utf8[j] { return false }
                    return true
                }
                if hint < n && matches(hint) {
                    return firstIndex.withUnsafeBufferPointer { $0[hint] }
                }
                for i in 0..<n where matches(i) { return i }
                return Self.unknownKey
            }
        }
    }

    /// If the bytes at `text` (`available` of them readable) are key `i` unescaped and then the
    /// string's closing `"`, the index matched (as ``index(of:hint:)`` gives it) and the length
    /// of the key's bytes; nil otherwise. Bytes equal to a key's are valid UTF-8, being a
    /// string's.
    @inline(__always)
    func match(_ i: Int, at text: UnsafePointer<UInt8>, available: Int) -> (index: Int, length: Int)? {
        guard i < firstIndex.count else { return nil }
        if available >= 8 {
            let word = words.withUnsafeBufferPointer { $0[i] }
            if word.mask != 0 {
                guard loadEightBytes(text) & word.mask == word.bytes else { return nil }
                return (firstIndex.withUnsafeBufferPointer { $0[i] }, word.mask.nonzeroBitCount / 8 - 1)
            }
        }
        return starts.withUnsafeBufferPointer { starts in
            let start = starts[i]
            let length = starts[i + 1] - start
            guard length < available, text[length] == 0x22, isPlain.withUnsafeBufferPointer({ $0[i] }) else {
                return nil
            }
            return bytes.withUnsafeBufferPointer { all in
                for j in 0..<length where all[start + j] != text[j] { return nil }
                return (firstIndex.withUnsafeBufferPointer { $0[i] }, length)
            }
        }
    }

    /// If the bytes at `text` (`available` of them readable) are member `i`'s start as
    /// ``JSONWriter`` writes it (`"key": `, or `, "key": ` when not `first`), the index matched
    /// (as ``index(of:hint:)`` gives it) and the length of those bytes; nil otherwise.
    @inlinable @inline(__always)
    func matchMember(_ i: Int, at text: UnsafePointer<UInt8>, available: Int, first: Bool)
        -> (index: Int, length: Int)?
    {
        guard i < firstIndex.count, available >= 16 else { return nil }
        return members.withUnsafeBufferPointer { members in
            let member = members[i]
            let (low, high) = first ? member.first : member.next
            guard low.mask != 0, loadEightBytes(text) & low.mask == low.bytes,
                loadEightBytes(text + 8) & high.mask == high.bytes
            else { return nil }
            return (firstIndex.withUnsafeBufferPointer { $0[i] }, first ? member.firstLength : member.nextLength)
        }
    }

    /// The index of `key`, or ``unknownKey``.
    func index(of key: String) -> Int {
        var key = key
        return key.withUTF8 { index(of: $0, hint: 0) }
    }
}
