/// A fast, strict pull reader of JSON text (RFC 8259) over a byte buffer.
///
/// The reader is a cursor: the caller says what it expects next and the reader checks it, so
/// millions of records load without building a tree for each:
///
/// ```swift
/// try JSONReader.withReader(bytes) { reader throws(Failure) in
///     try reader.beginArray()
///     while try reader.nextElement() {
///         try reader.beginObject()
///         while let key = try reader.nextKey() {
///             switch key {
///             case "id": id = try reader.readInt64()
///             case "name": name = try reader.readString()
///             case "owner": owner = try reader.readNull() ? nil : try reader.readInt64()
///             default: try reader.skipValue()
///             }
///         }
///     }
///     try reader.finish()
/// }
/// ```
///
/// ``readValue()`` reads any value as a ``JSONValue`` tree instead, and can be mixed with the
/// cursor methods.
///
/// Strictness: the reader accepts exactly RFC 8259 JSON. It rejects trailing bytes after the
/// value (see ``finish()``), unterminated strings, unescaped control characters, invalid escapes,
/// escaped lone surrogates (`"\uD800"`), invalid UTF-8 anywhere in strings (overlong forms,
/// encoded surrogates, code points above U+10FFFF), leading zeros, `+1`, `.5`, `1.`, `1e`,
/// trailing commas, comments and the non-JSON literals `NaN` and `Infinity`. Numbers read with
/// ``readInt64()`` must be integers within `Int64`, read exactly; ``readDouble()`` and
/// ``readFloat()`` round correctly (once, straight from the decimal text) and reject magnitudes
/// too large for the type, while tiny ones round to zero as usual. Nesting is limited to
/// ``Options/maxDepth`` levels and the reader never recurses, so hostile input cannot exhaust the
/// stack.
///
/// Errors are of the reader's `Failure` type, made from a ``JSONError`` (the reader's own error,
/// which a module turns into its own, as Persistence into `LiveObjectsError`). Malformed input
/// gives a ``JSONError/Kind-swift.enum/syntax`` error (`corruptFile` as a `LiveObjectsError`)
/// with a message that names the byte offset, line and column and what was expected, such as
/// `invalid JSON at byte 9 (line 1, column 10): expected ',' or '}' after an object member,
/// found ']'`; lines and columns count from 1, columns in bytes. Nesting too deep gives
/// ``JSONError/Kind-swift.enum/nesting`` (`limitExceeded`). Calling a method the document's
/// position does not allow (``nextKey()`` outside an object, a value where a key is due) gives
/// ``JSONError/Kind-swift.enum/misuse`` (`invalidOperation`).
///
/// The reader does not own its bytes: they must stay valid and unchanged while it is used.
/// ``withReader(_:options:_:)`` scopes this for an array.
@usableFromInline
package struct JSONReader<Failure: JSONReadingError> {
    /// Limits and conventions (``JSONReaderOptions``).
    package typealias Options = JSONReaderOptions
    /// The kind of a value (``JSONValueKind``).
    package typealias Kind = JSONValueKind

    @usableFromInline
    enum State: UInt8 {
        /// A value is due: at the start, after a key, after ``nextElement()`` returned `true`.
        case value
        /// After `{`: a key or `}` is due.
        case objectFirst
        /// After a member's value: `,` or `}` is due.
        case objectNext
        /// After `[`: an element or `]` is due.
        case arrayFirst
        /// After an element: `,` or `]` is due.
        case arrayNext
        /// The top-level value is complete.
        case afterDocument
    }

    @usableFromInline let base: UnsafePointer<UInt8>
    @usableFromInline let end: Int
    /// The offset of the next byte to read.
    @usableFromInline package internal(set) var offset: Int = 0
    /// ``offset`` in the file (see ``Options/startOffset``).
    package var fileOffset: Int { offset + options.startOffset }
    /// The number of bytes after ``offset``.
    package var remainingCount: Int { end - offset }
    @usableFromInline var state: State = .value
    /// The number of open containers.
    @usableFromInline package internal(set) var depth: Int = 0
    /// Bit `d` is set when the container at depth `d + 1` is an object.
    @usableFromInline var objectBits: [UInt64]
    /// The state after a complete value at the current depth: `.objectNext` or `.arrayNext` as
    /// the innermost container is an object or an array, `.afterDocument` outside any. Kept as
    /// containers open and close, so that a value's end reads no bit of ``objectBits``.
    @usableFromInline var stateAfterValue: State = .afterDocument
    /// For strings with escapes.
    private var scratch: [UInt8] = []
    /// The index in a ``JSONKeySet`` to try first: the one after the last match.
    @usableFromInline var keyHint = 0
    private let parseTable: [UInt64]
    /// The options.
    @usableFromInline package let options: JSONReaderOptions

    /// Creates a reader of `bytes`, which must stay valid and unchanged while the reader is used.
    package init(_ bytes: UnsafeRawBufferPointer, options: Options = .init()) {
        if let address = bytes.baseAddress {
            base = address.assumingMemoryBound(to: UInt8.self)
        } else {
            // An empty buffer has no address; nothing will be read through this one.
            base = UnsafePointer(bitPattern: 1)!
        }
        end = bytes.count
        precondition(
            options.maxDepth >= 1 && options.maxDepth <= Options.depthCeiling,
            "JSONReader: maxDepth must be in 1...\(Options.depthCeiling)")
        self.options = options
        objectBits = [UInt64](repeating: 0, count: (options.maxDepth + 63) / 64)
        parseTable = DecimalTables.parseTable
    }

    /// Calls `body` with a reader of `bytes`.
    package static func withReader<R>(
        _ bytes: [UInt8], options: Options = .init(),
        _ body: (inout JSONReader) throws(Failure) -> R
    ) throws(Failure) -> R {
        try bytes.withUnsafeBytesTyped { (raw) throws(Failure) -> R in
            var reader = JSONReader(raw, options: options)
            return try body(&reader)
        }
    }

    // MARK: Document

    /// Checks that only whitespace follows the top-level value.
    package mutating func finish() throws(Failure) {
        guard state == .afterDocument else {
            throw misuse("finish() before the top-level value is complete")
        }
        skipWhitespace()
        if offset < end {
            throw syntaxError("the end of the input after the top-level value", at: offset)
        }
    }

    /// For JSON Lines (one value per line): after a complete top-level value, moves to the next
    /// one. Returns `false` if only whitespace remains. The next value must start on a later
    /// line.
    package mutating func nextLine() throws(Failure) -> Bool {
        guard state == .afterDocument else {
            throw misuse("nextLine() before the top-level value is complete")
        }
        var sawNewline = false
        while offset < end {
            let b = base[offset]
            if b == 0x0A {
                sawNewline = true
            } else if b != 0x20 && b != 0x09 && b != 0x0D {
                break
            }
            offset += 1
        }
        if offset == end { return false }
        if !sawNewline { throw syntaxError("a line break before the next value", at: offset) }
        state = .value
        return true
    }

    /// Whether only whitespace remains (skipping it). Useful before reading the first value of a
    /// possibly empty JSON Lines input.
    package mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return offset == end
    }

    // MARK: Containers

    /// The kind of the next value, without consuming it.
    package mutating func peekKind() throws(Failure) -> Kind {
        switch try valueStart() {
        case 0x7B: return .object
        case 0x5B: return .array
        case 0x22: return .string
        case 0x74, 0x66: return .bool
        case 0x6E: return .null
        case 0x2D, 0x30...0x39: return .number
        default: throw syntaxError("a value", at: offset)
        }
    }

    /// The first byte of the next value, not consumed (after whitespace): `"` for a string,
    /// `n` for null, and so on.
    @inlinable @inline(__always)
    package mutating func peekByte() throws(Failure) -> UInt8 {
        try valueStart()
    }

    /// Consumes the `{` of an object.
    @inlinable
    package mutating func beginObject() throws(Failure) {
        let b = try valueStart()
        guard b == 0x7B else { throw typeMismatch("an object") }
        try push(isObject: true)
        offset += 1
        state = .objectFirst
    }

    /// The next key of the current object, or `nil` after consuming its `}`. After a key, its
    /// value must be read or skipped.
    package mutating func nextKey() throws(Failure) -> String? {
        guard try moveToKey() else { return nil }
        let key = try readStringToken()
        try consumeColon()
        return key
    }

    /// The next key of the current object as its index in `keys`, or
    /// ``JSONKeySet/unknownKey`` for a key not in the set; `nil` after consuming the `}`.
    ///
    /// Faster than ``nextKey()`` for records: keys are matched on their bytes without making
    /// strings, trying first the key that followed the previous match. Keys match exactly
    /// (code point by code point, as JSON compares them), escaped or not.
    ///
    /// The part that reads records as ``JSONWriter`` writes them is `@inlinable`: compiled in
    /// the caller's module, for the caller's error type (a call of the unspecialized generic
    /// method costs more than the match).
    @inlinable
    package mutating func nextKey(in keys: JSONKeySet) throws(Failure) -> Int? {
        // Records list their keys in the same order: the expected key (after the last one, the
        // first), compared byte for byte; first with what precedes and follows it as
        // ``JSONWriter`` writes it (`, "key": `), all of which the checks below would skip.
        if state == .objectNext || state == .objectFirst {
            let hint = keyHint < keys.count ? keyHint : 0
            if let (index, length) = keys.matchMember(
                hint, at: base + offset, available: end - offset, first: state == .objectFirst)
            {
                offset += length
                keyHint = index + 1
                state = .value
                return index
            }
            // The record's `}` right after its last value.
            if state == .objectNext && offset < end && base[offset] == 0x7D {
                closeContainer()
                return nil
            }
        }
        return try searchKey(in: keys)
    }

    /// ``nextKey(in:)`` for a key that is not where a record as written has it: after
    /// whitespace, escaped, out of order or unknown.
    @usableFromInline
    mutating func searchKey(in keys: JSONKeySet) throws(Failure) -> Int? {
        let hint = keyHint < keys.count ? keyHint : 0
        guard try moveToKey() else { return nil }
        let start = offset + 1
        if let (index, length) = keys.match(hint, at: base + start, available: end - start) {
            offset = start + length + 1
            keyHint = index + 1
            try consumeColon()
            return index
        }
        var i = start
        var plain = true
        while true {
            guard i < end else { throw unterminatedString(start - 1) }
            let b = base[i]
            if b == 0x22 { break }
            if b == 0x5C {
                plain = false
                break
            }
            if b < 0x20 { throw controlCharacter(at: i) }
            i = b < 0x80 ? i + 1 : try validateUTF8Sequence(at: i)
        }
        let index: Int
        if plain {
            index = keys.index(of: UnsafeBufferPointer(start: base + start, count: i - start), hint: keyHint)
            offset = i + 1
        } else {
            index = keys.index(of: try readStringToken())
        }
        if index >= 0 { keyHint = index + 1 }
        try consumeColon()
        return index
    }

    /// Consumes the `[` of an array.
    package mutating func beginArray() throws(Failure) {
        let b = try valueStart()
        guard b == 0x5B else { throw typeMismatch("an array") }
        try push(isObject: false)
        offset += 1
        state = .arrayFirst
    }

    /// Whether the current array has another element (which must then be read or skipped);
    /// consumes the `]` when not.
    @inlinable
    package mutating func nextElement() throws(Failure) -> Bool {
        switch state {
        case .arrayFirst:
            skipWhitespace()
            if offset < end && base[offset] == 0x5D {
                closeContainer()
                return false
            }
        case .arrayNext:
            skipWhitespace()
            guard offset < end else { throw syntaxError("',' or ']' after an array element", at: offset) }
            let b = base[offset]
            if b == 0x5D {
                closeContainer()
                return false
            }
            guard b == 0x2C else { throw syntaxError("',' or ']' after an array element", at: offset) }
            offset += 1
        default:
            throw misuse("nextElement() outside an array or before the previous element was read")
        }
        state = .value
        return true
    }

    /// Reads an object with `body` called for each key, positioned at the key's value (which
    /// `body` must read or skip).
    package mutating func readObject(_ body: (inout JSONReader, String) throws(Failure) -> Void)
        throws(Failure)
    {
        try beginObject()
        while let key = try nextKey() {
            try body(&self, key)
        }
    }

    /// Reads an array with `body` called for each element, positioned at the element (which
    /// `body` must read or skip).
    package mutating func readArray(_ body: (inout JSONReader) throws(Failure) -> Void)
        throws(Failure)
    {
        try beginArray()
        while try nextElement() {
            try body(&self)
        }
    }

    // MARK: Scalars

    /// If the next value is `null`, consumes it and returns `true`; otherwise returns `false`
    /// and leaves the value to be read.
    @inlinable
    package mutating func readNull() throws(Failure) -> Bool {
        guard try valueStart() == 0x6E else { return false }
        try expectLiteral(0x6E75_6C6C, length: 4, "null")
        valueDone()
        return true
    }

    /// Reads `true` or `false`.
    package mutating func readBool() throws(Failure) -> Bool {
        switch try valueStart() {
        case 0x74:
            try expectLiteral(0x7472_7565, length: 4, "true")
            valueDone()
            return true
        case 0x66:
            try expectLiteral(0x6661_6C73_65, length: 5, "false")
            valueDone()
            return false
        default:
            throw typeMismatch("a boolean")
        }
    }

    /// Reads an integer number exactly. Fractions and exponents (`1.0`, `1e3`) and values
    /// outside `Int64` are errors.
    @inlinable
    package mutating func readInt64() throws(Failure) -> Int64 {
        let b = try valueStart()
        // Fast path: up to 18 digits (always in range), no leading zero, nothing number-like after.
        var i = offset
        if b == 0x2D { i += 1 }
        let digitsStart = i
        // Fewer than eight digits with eight bytes to read (most integers of a record): the
        // byte after them is in the word loaded, and checked there.
        if end - i >= 8 {
            let word = loadEightBytes(base + i)
            let n = leadingDigitCount(word)
            let after = UInt8(truncatingIfNeeded: word >> UInt64(truncatingIfNeeded: 8 * n & 63))
            if n > 0 && n < 8 && (n == 1 || word & 0xFF != 0x30) && after != 0x2E && after | 0x20 != 0x65 {
                offset = i + n
                valueDone()
                let value = Int64(valueOfLeadingDigits(word, count: n))
                return b == 0x2D ? -value : value
            }
        }
        var magnitude: UInt64 = 0
        // Eight bytes at a time while eight can be read: the digits among them counted and
        // valued at once, with no branch per digit (most integers of a record end inside the
        // first eight bytes). Then byte by byte, for the last bytes of the text.
        while end - i >= 8 {
            let word = loadEightBytes(base + i)
            let n = leadingDigitCount(word)
            if n == 0 { break }
            let value = valueOfLeadingDigits(word, count: n)
            if magnitude == 0 {
                magnitude = value
            } else {
                for _ in 0..<n { magnitude = magnitude &* 10 }
                magnitude = magnitude &+ value
            }
            i += n
            if n < 8 { break }
        }
        while i < end {
            let d = base[i] &- 0x30
            if d >= 10 { break }
            magnitude = magnitude &* 10 &+ UInt64(d)
            i += 1
        }
        let digits = i - digitsStart
        if digits > 0 && digits <= 18 && (digits == 1 || base[digitsStart] != 0x30)
            && (i == end || (base[i] != 0x2E && base[i] | 0x20 != 0x65))
        {
            offset = i
            valueDone()
            let value = Int64(magnitude)
            return b == 0x2D ? -value : value
        }
        return try readInt64Checked()
    }

    /// ``readInt64()`` for the cases its fast path leaves: long numbers and errors.
    @usableFromInline
    mutating func readInt64Checked() throws(Failure) -> Int64 {
        let b = base[offset]
        guard b == 0x2D || isDigit(b) else { throw typeMismatch("an integer") }
        let scan = try scanNumberToken()
        guard scan.isInteger else {
            throw error("expected an integer, found the number \(text(scan))", at: scan.start)
        }
        guard let value = scan.int64Value else {
            throw error("integer \(text(scan)) is out of range for Int64", at: scan.start)
        }
        offset = scan.end
        valueDone()
        return value
    }

    /// Reads a number as the nearest `Double`. With ``Options/acceptsNonFiniteStrings``, also the
    /// strings `"NaN"`, `"Infinity"`, `"-Infinity"`. Magnitudes too large for a `Double` are
    /// errors.
    package mutating func readDouble() throws(Failure) -> Double {
        let b = try valueStart()
        if b == 0x22 { return try readNonFinite() }
        guard b == 0x2D || isDigit(b) else { throw typeMismatch("a number") }
        let scan = try scanNumberToken()
        let value = parseTable.withUnsafeBufferPointer { scan.doubleValue(base, table: $0.baseAddress!) }
        guard value.isFinite else {
            throw error("number \(text(scan)) is out of range for Double", at: scan.start)
        }
        offset = scan.end
        valueDone()
        return value
    }

    /// Reads a number as the nearest `Float`, rounded once from the decimal text (not through a
    /// `Double`). Otherwise as ``readDouble()``.
    package mutating func readFloat() throws(Failure) -> Float {
        let b = try valueStart()
        if b == 0x22 { return Float(try readNonFinite()) }
        guard b == 0x2D || isDigit(b) else { throw typeMismatch("a number") }
        let scan = try scanNumberToken()
        let value = parseTable.withUnsafeBufferPointer { scan.floatValue(base, table: $0.baseAddress!) }
        guard value.isFinite else {
            throw error("number \(text(scan)) is out of range for Float", at: scan.start)
        }
        offset = scan.end
        valueDone()
        return value
    }

    /// Reads a number without converting it.
    package mutating func readNumber() throws(Failure) -> JSONNumber {
        let b = try valueStart()
        guard b == 0x2D || isDigit(b) else { throw typeMismatch("a number") }
        let scan = try scanNumberToken()
        offset = scan.end
        valueDone()
        return JSONNumber(validatedText: text(scan))
    }

    /// Reads a string.
    @inlinable
    package mutating func readString() throws(Failure) -> String {
        guard try valueStart() == 0x22 else { throw typeMismatch("a string") }
        let value: String
        if let plain = plainStringToken() {
            value = plain
        } else {
            value = try readStringToken()
        }
        valueDone()
        return value
    }

    // MARK: Whole values

    /// Skips the next value, whatever it is, checking it as strictly as reading it would.
    package mutating func skipValue() throws(Failure) {
        let startDepth = depth
        repeat {
            switch state {
            case .value:
                switch try valueStart() {
                case 0x7B: try beginObject()
                case 0x5B: try beginArray()
                case 0x22:
                    try skipStringToken()
                    valueDone()
                case 0x74, 0x66: _ = try readBool()
                case 0x6E: _ = try readNull()
                case 0x2D, 0x30...0x39:
                    offset = try scanNumberToken().end
                    valueDone()
                default: throw syntaxError("a value", at: offset)
                }
            case .objectFirst, .objectNext:
                if try moveToKey() {
                    try skipStringToken()
                    try consumeColon()
                }
            case .arrayFirst, .arrayNext:
                _ = try nextElement()
            case .afterDocument:
                throw misuse("skipValue() after the top-level value")
            }
        } while depth > startDepth
    }

    /// Reads the next value, whatever it is, as a tree (iteratively: deep nesting cannot
    /// exhaust the stack).
    package mutating func readValue() throws(Failure) -> JSONValue {
        var stack: [PartialValue] = []
        while true {
            // Read one value or open a container.
            var value: JSONValue
            switch try valueStart() {
            case 0x7B:
                try beginObject()
                if let key = try nextKey() {
                    stack.append(PartialValue(isObject: true, key: key))
                    continue
                }
                value = .object([])
            case 0x5B:
                try beginArray()
                if try nextElement() {
                    stack.append(PartialValue(isObject: false))
                    continue
                }
                value = .array([])
            case 0x22: value = .string(try readString())
            case 0x74, 0x66: value = .bool(try readBool())
            case 0x6E:
                _ = try readNull()
                value = .null
            case 0x2D, 0x30...0x39: value = .number(try readNumber())
            default: throw syntaxError("a value", at: offset)
            }
            // Attach it to the open containers, closing those that end.
            while true {
                let top = stack.count - 1
                guard top >= 0 else { return value }
                if stack[top].isObject {
                    stack[top].members.append((key: stack[top].key, value: value))
                    if let next = try nextKey() {
                        stack[top].key = next
                        break
                    }
                    value = .object(stack.removeLast().members)
                } else {
                    stack[top].elements.append(value)
                    if try nextElement() { break }
                    value = .array(stack.removeLast().elements)
                }
            }
        }
    }

    // MARK: Structure internals

    @inlinable @inline(__always)
    mutating func skipWhitespace() {
        while offset < end {
            let b = base[offset]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            offset += 1
        }
    }

    /// Checks that a value is due, skips whitespace and returns its first byte (not consumed).
    @inlinable @inline(__always)
    mutating func valueStart() throws(Failure) -> UInt8 {
        guard state == .value else {
            throw misuse(
                state == .afterDocument
                    ? "reading a value after the top-level value (use nextLine() for JSON Lines)"
                    : "reading a value where a key or the end of a container is due")
        }
        skipWhitespace()
        guard offset < end else { throw syntaxError("a value", at: offset) }
        return base[offset]
    }

    /// The state after a complete value.
    @inlinable @inline(__always)
    mutating func valueDone() {
        state = stateAfterValue
    }

    @inlinable @inline(__always)
    mutating func push(isObject: Bool) throws(Failure) {
        guard depth < options.maxDepth else { throw nestingError() }
        let bit: UInt64 = 1 << UInt64(depth & 63)
        if isObject {
            objectBits[depth >> 6] |= bit
        } else {
            objectBits[depth >> 6] &= ~bit
        }
        depth += 1
        stateAfterValue = isObject ? .objectNext : .arrayNext
    }

    /// Consumes the closing byte at `offset`.
    @inlinable @inline(__always)
    mutating func closeContainer() {
        offset += 1
        depth -= 1
        if depth == 0 {
            stateAfterValue = .afterDocument
        } else {
            let d = depth - 1
            stateAfterValue = objectBits[d >> 6] >> UInt64(d & 63) & 1 == 1 ? .objectNext : .arrayNext
        }
        valueDone()
    }

    /// Moves to the next key of the current object (returns `true`, positioned at its `"`) or
    /// consumes the `}` (returns `false`).
    @inline(__always)
    private mutating func moveToKey() throws(Failure) -> Bool {
        switch state {
        case .objectFirst:
            skipWhitespace()
            guard offset < end else { throw syntaxError("a string key or '}'", at: offset) }
            let b = base[offset]
            if b == 0x7D {
                closeContainer()
                return false
            }
            guard b == 0x22 else { throw syntaxError("a string key or '}'", at: offset) }
        case .objectNext:
            skipWhitespace()
            guard offset < end else { throw syntaxError("',' or '}' after an object member", at: offset) }
            let b = base[offset]
            if b == 0x7D {
                closeContainer()
                return false
            }
            guard b == 0x2C else { throw syntaxError("',' or '}' after an object member", at: offset) }
            offset += 1
            skipWhitespace()
            guard offset < end && base[offset] == 0x22 else {
                throw syntaxError("a string key after ','", at: offset)
            }
        default:
            throw misuse("nextKey() outside an object or before the previous member's value was read")
        }
        return true
    }

    @inline(__always)
    private mutating func consumeColon() throws(Failure) {
        skipWhitespace()
        guard offset < end && base[offset] == 0x3A else {
            throw syntaxError("':' after an object key", at: offset)
        }
        offset += 1
        state = .value
    }

    /// Consumes the literal whose bytes, big-endian, are `bytes`.
    @inlinable @inline(__always)
    mutating func expectLiteral(_ bytes: UInt64, length: Int, _ name: String) throws(Failure) {
        guard offset + length <= end else { throw literalError(name) }
        var actual: UInt64 = 0
        for i in 0..<length {
            actual = actual << 8 | UInt64(base[offset + i])
        }
        guard actual == bytes else { throw literalError(name) }
        offset += length
    }

    @usableFromInline @inline(never)
    func literalError(_ name: String) -> Failure {
        // Point at the first byte that differs.
        let expected = Array(name.utf8)
        var at = offset
        while at < end && at - offset < expected.count && base[at] == expected[at - offset] { at += 1 }
        return syntaxError("'\(name)'", at: at)
    }

    /// Reads a `"NaN"`-style string as a `Double`.
    private mutating func readNonFinite() throws(Failure) -> Double {
        let start = offset
        guard options.acceptsNonFiniteStrings else { throw typeMismatch("a number") }
        let text = try readStringToken()
        guard let value = nonFiniteValue(text) else {
            throw error(
                "expected a number, found a string other than \"NaN\", \"Infinity\" or \"-Infinity\"", at: start)
        }
        valueDone()
        return value
    }

    // MARK: Numbers

    @inline(__always)
    private func scanNumberToken() throws(Failure) -> ScannedNumber {
        do {
            return try scanNumber(base, count: end, at: offset)
        } catch {
            throw syntaxError(error.expected, at: error.offset)
        }
    }

    /// The text of a scanned number, shortened for messages if very long.
    private func text(_ scan: ScannedNumber) -> String {
        let length = min(scan.end - scan.start, 4096)
        return String(decoding: UnsafeBufferPointer(start: base + scan.start, count: length), as: UTF8.self)
    }

    // MARK: Strings

    /// The string token at `offset` (its `"`) when it is ASCII with no escape and no control
    /// character, moving past it; otherwise nil, nothing moved (``readStringToken()`` reads it).
    @inlinable @inline(__always)
    mutating func plainStringToken() -> String? {
        let start = offset + 1
        var i = start
        while i &+ 8 <= end {
            if needsAttention(loadEightBytes(base + i)) { break }
            i &+= 8
        }
        while i < end {
            let b = base[i]
            if b == 0x22 {
                offset = i + 1
                return String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
            }
            guard b >= 0x20 && b < 0x80 && b != 0x5C else { return nil }
            i += 1
        }
        return nil
    }

    /// Reads the string token at `offset` (its `"`), leaving the state alone.
    @usableFromInline
    mutating func readStringToken() throws(Failure) -> String {
        let start = offset + 1
        var i = start
        while true {
            // Eight plain ASCII bytes at a time.
            while i &+ 8 <= end {
                let v = loadEightBytes(base + i)
                if needsAttention(v) { break }
                i &+= 8
            }
            guard i < end else { throw unterminatedString(start - 1) }
            let b = base[i]
            if b == 0x22 {
                offset = i + 1
                return String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
            }
            if b == 0x5C { return try readEscapedString(start: start, firstEscape: i) }
            if b < 0x20 { throw controlCharacter(at: i) }
            if b < 0x80 {
                i += 1
            } else {
                i = try validateUTF8Sequence(at: i)
            }
        }
    }

    /// Skips the string token at `offset`, validating it, leaving the state alone.
    private mutating func skipStringToken() throws(Failure) {
        var i = offset + 1
        while true {
            while i &+ 8 <= end {
                if needsAttention(loadEightBytes(base + i)) { break }
                i &+= 8
            }
            guard i < end else { throw unterminatedString(offset) }
            let b = base[i]
            if b == 0x22 {
                offset = i + 1
                return
            }
            if b == 0x5C {
                var sink: [UInt8] = []
                i = try decodeEscape(at: i, into: &sink)
            } else if b < 0x20 {
                throw controlCharacter(at: i)
            } else if b < 0x80 {
                i += 1
            } else {
                i = try validateUTF8Sequence(at: i)
            }
        }
    }

    /// The rest of a string that has escapes, decoded through the scratch buffer.
    private mutating func readEscapedString(start: Int, firstEscape: Int) throws(Failure) -> String {
        var buffer = scratch
        scratch = []
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: UnsafeBufferPointer(start: base + start, count: firstEscape - start))
        var i = firstEscape
        while true {
            guard i < end else { throw unterminatedString(start - 1) }
            let b = base[i]
            if b == 0x22 {
                offset = i + 1
                let result = String(decoding: buffer, as: UTF8.self)
                scratch = buffer
                return result
            }
            if b == 0x5C {
                i = try decodeEscape(at: i, into: &buffer)
            } else if b < 0x20 {
                throw controlCharacter(at: i)
            } else if b < 0x80 {
                buffer.append(b)
                i += 1
            } else {
                let next = try validateUTF8Sequence(at: i)
                buffer.append(contentsOf: UnsafeBufferPointer(start: base + i, count: next - i))
                i = next
            }
        }
    }

    /// Decodes the escape at `i` (its backslash) into `buffer`; returns the offset after it.
    private func decodeEscape(at i: Int, into buffer: inout [UInt8]) throws(Failure) -> Int {
        guard i + 1 < end else {
            throw syntaxError(
                "a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u followed by 4 hex digits)", at: i + 1)
        }
        let decoded: UInt8
        switch base[i + 1] {
        case 0x22: decoded = 0x22
        case 0x5C: decoded = 0x5C
        case 0x2F: decoded = 0x2F
        case 0x62: decoded = 0x08
        case 0x66: decoded = 0x0C
        case 0x6E: decoded = 0x0A
        case 0x72: decoded = 0x0D
        case 0x74: decoded = 0x09
        case 0x75:
            let unit = try hexEscape(at: i)
            var scalar = UInt32(unit)
            var next = i + 6
            if unit >= 0xD800 && unit < 0xDC00 {
                // A high surrogate must be followed by an escaped low one.
                guard next + 1 < end && base[next] == 0x5C && base[next + 1] == 0x75 else {
                    throw error(
                        "unpaired surrogate \\u\(hex(unit)): expected an escaped low surrogate (\\uDC00...\\uDFFF) after it",
                        at: i)
                }
                let low = try hexEscape(at: next)
                guard low >= 0xDC00 && low < 0xE000 else {
                    throw error(
                        "unpaired surrogate \\u\(hex(unit)): expected an escaped low surrogate (\\uDC00...\\uDFFF) after it",
                        at: i)
                }
                scalar = 0x10000 + (UInt32(unit - 0xD800) << 10 | UInt32(low - 0xDC00))
                next += 6
            } else if unit >= 0xDC00 && unit < 0xE000 {
                throw error("unpaired surrogate \\u\(hex(unit)): a low surrogate without a high one before it", at: i)
            }
            appendUTF8(scalar, to: &buffer)
            return next
        default:
            throw syntaxError(
                "a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u followed by 4 hex digits)", at: i + 1)
        }
        buffer.append(decoded)
        return i + 2
    }

    /// The code unit of the `\uXXXX` escape at `i` (its backslash).
    private func hexEscape(at i: Int) throws(Failure) -> UInt16 {
        var unit: UInt16 = 0
        for j in (i + 2)..<(i + 6) {
            guard j < end else { throw syntaxError("4 hex digits after \\u", at: j) }
            let b = base[j]
            let digit: UInt8
            switch b {
            case 0x30...0x39: digit = b - 0x30
            case 0x41...0x46: digit = b - 0x41 + 10
            case 0x61...0x66: digit = b - 0x61 + 10
            default: throw syntaxError("4 hex digits after \\u", at: j)
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    /// Checks the UTF-8 sequence whose lead byte (0x80 or more) is at `i`; returns the offset
    /// after it.
    @inline(__always)
    private func validateUTF8Sequence(at i: Int) throws(Failure) -> Int {
        let lead = base[i]
        let length: Int
        // The allowed range of the second byte (RFC 3629): no overlong forms, no surrogates,
        // nothing above U+10FFFF.
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default:
            throw invalidUTF8(at: i)
        }
        guard i + length <= end else { throw invalidUTF8(at: i) }
        let second = base[i + 1]
        guard second >= low && second <= high else { throw invalidUTF8(at: i) }
        for j in (i + 2)..<(i + length) where base[j] & 0xC0 != 0x80 {
            throw invalidUTF8(at: i)
        }
        return i + length
    }

    // MARK: Errors

    /// "invalid JSON at byte N (line L, column C): expected X, found Y".
    @usableFromInline @inline(never)
    func syntaxError(_ expected: String, at offset: Int) -> Failure {
        Failure(
            jsonError(
                .syntax, "expected \(expected), found \(describeByte(at: offset))", expected: expected, at: offset))
    }

    /// An error about the value at `offset`, whose first byte does not fit what was asked.
    @usableFromInline @inline(never)
    func typeMismatch(_ expected: String) -> Failure {
        let found: String
        switch base[offset] {
        case 0x7B: found = "an object"
        case 0x5B: found = "an array"
        case 0x22: found = "a string"
        case 0x2D, 0x30...0x39: found = "a number"
        case 0x74 where startsWith("true"), 0x66 where startsWith("false"): found = "a boolean"
        case 0x6E where startsWith("null"): found = "null"
        default: found = describeByte(at: offset)
        }
        return error("expected \(expected), found \(found)", at: offset)
    }

    private func startsWith(_ literal: String) -> Bool {
        let bytes = Array(literal.utf8)
        return offset + bytes.count <= end && bytes.indices.allSatisfy { base[offset + $0] == bytes[$0] }
    }

    @inline(never)
    private func error(_ message: String, at offset: Int) -> Failure {
        Failure(jsonError(.syntax, message, at: offset))
    }

    @usableFromInline @inline(never)
    func nestingError() -> Failure {
        Failure(jsonError(.nesting, "JSON nesting deeper than \(options.maxDepth) levels", at: offset))
    }

    @usableFromInline @inline(never)
    func misuse(_ message: String) -> Failure {
        Failure(jsonError(.misuse, message, at: offset))
    }

    /// The error of a kind at `offset`, with its position and message.
    private func jsonError(_ kind: JSONError.Kind, _ reason: String, expected: String? = nil, at offset: Int)
        -> JSONError
    {
        let (byte, line, column) = coordinates(offset)
        let position = "at byte \(byte) (line \(line), column \(column))"
        let message =
            switch kind {
            case .syntax: "invalid JSON \(position): \(reason)"
            case .nesting: "\(reason) \(position)"
            case .misuse: "JSONReader: \(reason) \(position)"
            }
        return JSONError(
            kind, message: message, reason: reason, expected: expected, offset: byte, line: line, column: column,
            fileName: options.fileName)
    }

    @inline(never)
    private func unterminatedString(_ start: Int) -> Failure {
        error(
            "expected '\"' to close the string that starts at byte \(start + options.startOffset), found end of input",
            at: end)
    }

    @inline(never)
    private func controlCharacter(at i: Int) -> Failure {
        error("control character 0x\(hex(UInt16(base[i]), width: 2)) must be escaped in a string", at: i)
    }

    @inline(never)
    private func invalidUTF8(at i: Int) -> Failure {
        error("invalid UTF-8 sequence starting with byte 0x\(hex(UInt16(base[i]), width: 2)) in a string", at: i)
    }

    /// "byte N, line L, column C": `offset` in the reader's bytes as a position in the file (see
    /// ``Options/startOffset``). Counts the lines before it: for error messages.
    package func location(_ offset: Int) -> String {
        let (byte, line, column) = coordinates(offset)
        return "byte \(byte), line \(line), column \(column)"
    }

    /// The byte offset in the file, line and column (from 1, in bytes) of `offset` in the
    /// reader's bytes.
    package func coordinates(_ offset: Int) -> (byte: Int, line: Int, column: Int) {
        var line = options.startLine
        var lineStart = 0
        for i in 0..<min(offset, end) where base[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        return (offset + options.startOffset, line, offset - lineStart + 1)
    }

    private func describeByte(at offset: Int) -> String {
        guard offset < end else { return "end of input" }
        let b = base[offset]
        if b >= 0x21 && b <= 0x7E { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x\(hex(UInt16(b), width: 2))"
    }
}

/// An open container of ``JSONReader/readValue()``. Elements are appended in place
/// (`stack[top].…append`), so that the arrays stay uniquely referenced and are never copied.
private struct PartialValue {
    var isObject: Bool
    var elements: [JSONValue] = []
    var members: [(key: String, value: JSONValue)] = []
    var key = ""
}

/// Whether any of the 8 bytes is `"`, `\`, a control character or not ASCII.
@inlinable @inline(__always)
func needsAttention(_ v: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let quote = v ^ (ones &* 0x22)
    let backslash = v ^ (ones &* 0x5C)
    // A byte is flagged when it is zero (after the xor) or below 0x20; bytes of 0x80 and more
    // are flagged by their own high bit.
    let zeroQuote = (quote &- ones) & ~quote
    let zeroBackslash = (backslash &- ones) & ~backslash
    let control = v &- ones &* 0x20
    return ((zeroQuote | zeroBackslash | control) & ~v | v) & highs != 0
}

/// Appends the UTF-8 encoding of a scalar value.
@inline(__always)
private func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
    switch scalar {
    case 0..<0x80:
        buffer.append(UInt8(scalar))
    case 0x80..<0x800:
        buffer.append(UInt8(0xC0 | scalar >> 6))
        buffer.append(UInt8(0x80 | scalar & 0x3F))
    case 0x800..<0x10000:
        buffer.append(UInt8(0xE0 | scalar >> 12))
        buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        buffer.append(UInt8(0x80 | scalar & 0x3F))
    default:
        buffer.append(UInt8(0xF0 | scalar >> 18))
        buffer.append(UInt8(0x80 | scalar >> 12 & 0x3F))
        buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        buffer.append(UInt8(0x80 | scalar & 0x3F))
    }
}

/// Uppercase hexadecimal, zero-padded to `width` digits.
private func hex(_ value: UInt16, width: Int = 4) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` keeping the body's error type (the standard one only rethrows).
    @inlinable
    package func withUnsafeBytesTyped<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in
            Result { () throws(E) -> R in try body(raw) }
        }
        return try result.get()
    }
}
