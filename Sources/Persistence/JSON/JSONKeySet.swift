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
package struct JSONKeySet: Sendable, Hashable {
    /// What ``JSONReader/nextKey(in:)`` returns for a key that is not in the set.
    package static let unknownKey = -1

    /// The keys, in the order given.
    package let keys: [String]
    /// The UTF-8 bytes of all keys, one after the other.
    private let bytes: [UInt8]
    /// Where each key's bytes start in `bytes`, and where the last one ends.
    private let starts: [Int]
    /// For each index, the first index holding the same key.
    private let firstIndex: [Int]
    /// For each index, whether JSON text holds the key as its bytes, unescaped: no `"`, `\` or
    /// control character in it.
    private let isPlain: [Bool]

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
        isPlain = keys.map { key in !key.utf8.contains { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 } }
        var seen: [String: Int] = [:]
        firstIndex = keys.indices.map { i in
            if let first = seen[keys[i]] { return first }
            seen[keys[i]] = i
            return i
        }
    }

    /// The number of keys.
    package var count: Int { keys.count }

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

    /// The index of `key`, or ``unknownKey``.
    func index(of key: String) -> Int {
        var key = key
        return key.withUTF8 { index(of: $0, hint: 0) }
    }
}
