/// A fast writer of JSON text (RFC 8259) into a byte buffer.
///
/// Containers are opened and closed explicitly; commas, colons, line breaks and indentation are
/// written for the caller:
///
/// ```swift
/// var writer = JSONWriter(options: .records)
/// writer.beginObject()
/// writer.key("dogs")
/// writer.beginArray()
/// for dog in dogs {
///     writer.beginObject()
///     writer.key("id"); writer.int(dog.id)
///     writer.key("name"); writer.string(dog.name)
///     writer.endObject()
/// }
/// writer.endArray()
/// writer.endObject()
/// let bytes = writer.takeBytes()
/// ```
///
/// Output details:
/// - Strings are written as UTF-8. `"` and `\` are escaped, control characters U+0000...U+001F
///   are written as `\b`, `\f`, `\n`, `\r`, `\t` or `\u00XX`; everything else passes through.
/// - `Double` and `Float` are written in the shortest form that reads back as the same value
///   (a `Float` in its own shortest form, not that of the widened `Double`): `0.1`, `3.0`,
///   `1e16`, `5e-324`, `-0.0`. Non-finite values are not JSON numbers; they are written as the
///   strings `"NaN"`, `"Infinity"` and `"-Infinity"`, which ``JSONReader/readDouble()`` and
///   ``JSONReader/readFloat()`` accept back. A NaN's sign and payload are not kept.
/// - Integers are written exactly.
///
/// Misuse (a value in an object without a key, a key outside an object, closing the wrong kind
/// of container, a second top-level value without ``finishLine()``) is a programming error and
/// stops the program.
///
/// The writer is non-copyable: it owns its buffers outright, so writing needs no copy-on-write
/// checks. Tokens are written into a staging buffer (64 KB, or the capacity asked for), which is
/// moved into the output array when it is full. Take the output with ``takeBytes()``, or stream it
/// with ``withUnsafeBytes(_:)`` and ``removeAllBytes()``: a stream that empties the writer before
/// the staging buffer fills never copies its bytes.
///
/// Public for its ``Options`` only: the writing methods are the package's; outside it (the sync
/// server), write a ``JSONValue`` with ``JSONValue/jsonBytes(options:)``.
public struct JSONWriter: ~Copyable {
    /// How the output is laid out.
    public struct Options: Sendable, Hashable {
        /// Spaces per nesting level, not negative. 0 writes compact JSON with no whitespace at
        /// all.
        public var indentWidth: Int
        /// When indenting, whether an object or array that is an element of an array is written
        /// on a single line (`{"id": 1, "name": "Rex"}`). Large arrays of records then take one
        /// line per record: readable, yet compact.
        public var singleLineArrayElements: Bool

        /// Creates options.
        public init(indentWidth: Int = 0, singleLineArrayElements: Bool = false) {
            self.indentWidth = indentWidth
            self.singleLineArrayElements = singleLineArrayElements
        }

        /// No whitespace: the smallest output, for journals and machines.
        public static let compact = Options()
        /// Every container member on its own line, indented by two spaces.
        public static let pretty = Options(indentWidth: 2)
        /// Like ``pretty``, except that containers inside arrays take one line each: one record
        /// per line in arrays of records. The layout of snapshot files.
        public static let records = Options(indentWidth: 2, singleLineArrayElements: true)
    }

    @usableFromInline
    enum State: UInt8 {
        /// Nothing written yet at the top level (or after ``finishLine()``).
        case top
        /// The top-level value is complete.
        case done
        /// A key was written; its value comes next.
        case afterKey
        case objectFirst
        case objectNext
        case arrayFirst
        case arrayNext
    }

    @usableFromInline
    struct Frame {
        @usableFromInline var isObject: Bool
        @usableFromInline var singleLine: Bool
    }

    /// The layout options.
    @usableFromInline package let options: Options
    /// The output, except for the last bytes, which are still in the staging buffer.
    @usableFromInline var output: [UInt8] = []
    /// The staging buffer: `length` bytes written out of `capacity`.
    @usableFromInline var buffer: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity = 1 << 16
    @usableFromInline var length = 0
    /// The open containers, outermost first: `openCount` of `frameCapacity`.
    @usableFromInline var frames: UnsafeMutablePointer<Frame>
    @usableFromInline var frameCapacity = 16
    @usableFromInline var openCount = 0
    /// The innermost container (a copy of the last open frame), or a placeholder at the top
    /// level.
    @usableFromInline var current = Frame(isObject: false, singleLine: true)
    @usableFromInline var state: State = .top
    /// ``DecimalTables/shortestTable``, held so that the hot path does not touch the lazily
    /// initialised global.
    @usableFromInline let shortestTable: [UInt64]

    /// Creates a writer.
    ///
    /// - Parameters:
    ///   - options: The layout; compact by default.
    ///   - capacity: The size of the staging buffer, if more than 64 KB: the most bytes that can
    ///     be written before they are copied to the output array.
    package init(options: Options = .compact, capacity: Int = 0) {
        precondition(options.indentWidth >= 0, "JSONWriter: indentWidth must not be negative")
        self.options = options
        self.capacity = max(self.capacity, capacity)
        buffer = .allocate(capacity: self.capacity)
        frames = .allocate(capacity: frameCapacity)
        shortestTable = DecimalTables.shortestTable
    }

    deinit {
        buffer.deallocate()
        frames.deallocate()
    }

    // MARK: Output

    /// The number of bytes written and not yet taken.
    package var count: Int { output.count + length }

    /// Whether a complete top-level value has been written (and ``finishLine()`` not called
    /// since).
    package var isComplete: Bool { state == .done }

    /// The nesting depth: the number of open objects and arrays.
    package var depth: Int { openCount }

    /// Returns the bytes written so far and empties the buffer. The writer's position in the
    /// document is kept, so a large document can be written in chunks (write some records, take
    /// the bytes, write them to a file, continue).
    package mutating func takeBytes() -> [UInt8] {
        flush()
        let result = output
        output = []
        return result
    }

    /// Forgets the bytes written so far, keeping the buffer's capacity and the position in the
    /// document: for streaming a large document to a file in chunks with
    /// ``withUnsafeBytes(_:)``.
    package mutating func removeAllBytes() {
        output.removeAll(keepingCapacity: true)
        length = 0
    }

    /// Calls `body` with the bytes written so far, in place (the pointer is only valid during
    /// the call).
    package mutating func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        if output.isEmpty {
            return try body(UnsafeRawBufferPointer(start: buffer, count: length))
        }
        flush()
        return try output.withUnsafeBytesTyped(body)
    }

    /// Ends the current top-level value with a line break, so that another one can follow: the
    /// JSON Lines format, one value per line. The current value must be complete.
    package mutating func finishLine() {
        precondition(state == .done, "JSONWriter.finishLine(): the top-level value is not complete")
        emit(.none, count: 1) { p in
            p[0] = 0x0A
            return 1
        }
        state = .top
    }

    // MARK: Containers

    /// Opens an object.
    ///
    /// - Parameter singleLine: When indenting, write the whole object on one line regardless of
    ///   the options. Ignored for compact output.
    package mutating func beginObject(singleLine: Bool = false) {
        openContainer(isObject: true, singleLine: singleLine)
    }

    /// Closes the innermost container, which must be an object (after a complete member).
    package mutating func endObject() {
        precondition(
            (state == .objectFirst || state == .objectNext) && openCount > 0 && current.isObject,
            "JSONWriter.endObject(): no object to close here")
        closeContainer(0x7D)
    }

    /// Opens an array.
    ///
    /// - Parameter singleLine: When indenting, write the whole array on one line regardless of
    ///   the options. Ignored for compact output.
    package mutating func beginArray(singleLine: Bool = false) {
        openContainer(isObject: false, singleLine: singleLine)
    }

    /// Closes the innermost container, which must be an array.
    package mutating func endArray() {
        precondition(
            (state == .arrayFirst || state == .arrayNext) && openCount > 0 && !current.isObject,
            "JSONWriter.endArray(): no array to close here")
        closeContainer(0x5D)
    }

    // MARK: Keys

    /// Writes the key of the next object member. A value must follow.
    @inlinable
    package mutating func key(_ name: String) {
        var name = name
        let separator = keySeparator()
        name.withUTF8 { writeQuoted($0, after: separator, colon: true) }
        state = .afterKey
    }

    /// Writes a pre-encoded key (faster for keys that repeat, like property names).
    @inlinable
    package mutating func key(_ key: JSONKey) {
        let separator = keySeparator()
        let spaced = options.indentWidth > 0
        key.quoted.withUnsafeBufferPointer { quoted in
            let n = quoted.count
            emit(separator, count: n + 2) { p in
                copyBytes(p, quoted.baseAddress!, n)
                p[n] = 0x3A
                p[n + 1] = 0x20
                return spaced ? n + 2 : n + 1
            }
        }
        state = .afterKey
    }

    // MARK: Scalars

    /// Writes `null`.
    @inlinable
    package mutating func null() {
        emit(valueSeparator(), count: 4) { p in
            p[0] = 0x6E; p[1] = 0x75; p[2] = 0x6C; p[3] = 0x6C
            return 4
        }
        valueDone()
    }

    /// Writes `true` or `false`.
    @inlinable
    package mutating func bool(_ value: Bool) {
        emit(valueSeparator(), count: 5) { p in
            if value {
                p[0] = 0x74; p[1] = 0x72; p[2] = 0x75; p[3] = 0x65
                return 4
            }
            p[0] = 0x66; p[1] = 0x61; p[2] = 0x6C; p[3] = 0x73; p[4] = 0x65
            return 5
        }
        valueDone()
    }

    /// Writes an integer exactly.
    @inlinable
    package mutating func int(_ value: Int64) {
        emit(valueSeparator(), count: Self.maxIntLength) { p in Self.formatInt(value, into: p) }
        valueDone()
    }

    /// Writes an integer exactly.
    @inlinable
    package mutating func int(_ value: Int) {
        int(Int64(value))
    }

    /// Writes an unsigned integer exactly.
    @inlinable
    package mutating func uint(_ value: UInt64) {
        emit(valueSeparator(), count: Self.maxIntLength) { p in storeDecimal(value, at: p) }
        valueDone()
    }

    /// Writes a `Double` in its shortest round-trip form; non-finite values as the strings
    /// `"NaN"`, `"Infinity"`, `"-Infinity"` (see the type's documentation).
    @inlinable
    package mutating func double(_ value: Double) {
        binaryFloatingPoint(value)
    }

    /// Writes a `Float` in its own shortest round-trip form; non-finite values as for
    /// ``double(_:)``.
    @inlinable
    package mutating func float(_ value: Float) {
        binaryFloatingPoint(value)
    }

    @inlinable @inline(__always)
    mutating func binaryFloatingPoint<T: ShortestDecimalFormattable>(_ value: T) {
        guard value.isFinite else {
            string(Self.nonFiniteName(value.isNaN, value < 0))
            return
        }
        let separator = valueSeparator()
        shortestTable.withUnsafeBufferPointer { table in
            emit(separator, count: maxFormattedDecimalLength) { p in
                Self.formatFinite(value, table: table.baseAddress!, into: p)
            }
        }
        valueDone()
    }

    /// Writes a string, escaped as described in the type's documentation.
    @inlinable
    package mutating func string(_ value: String) {
        var value = value
        let separator = valueSeparator()
        value.withUTF8 { writeQuoted($0, after: separator, colon: false) }
        valueDone()
    }

    /// Writes a whole JSON value (iteratively: any depth is fine). Numbers are written as their
    /// stored text.
    package mutating func value(_ value: JSONValue) {
        // Containers being written, with the index of their next element.
        enum Pending {
            case array([JSONValue], Int)
            case object([(key: String, value: JSONValue)], Int)
        }
        var stack: [Pending] = []
        var next: JSONValue? = value
        while true {
            if let current = next {
                next = nil
                switch current {
                case .null: null()
                case .bool(let b): bool(b)
                case .string(let s): string(s)
                case .number(let n): number(n)
                case .array(let elements):
                    beginArray()
                    stack.append(.array(elements, 0))
                case .object(let members):
                    beginObject()
                    stack.append(.object(members, 0))
                }
            }
            guard let top = stack.popLast() else { return }
            switch top {
            case .array(let elements, let index):
                if index < elements.count {
                    next = elements[index]
                    stack.append(.array(elements, index + 1))
                } else {
                    endArray()
                }
            case .object(let members, let index):
                if index < members.count {
                    key(members[index].key)
                    next = members[index].value
                    stack.append(.object(members, index + 1))
                } else {
                    endObject()
                }
            }
        }
    }

    /// Writes a number token as its text.
    package mutating func number(_ number: JSONNumber) {
        let separator = valueSeparator()
        var text = number.text
        text.withUTF8 { utf8 in
            emit(separator, count: utf8.count) { p in
                copyBytes(p, utf8.baseAddress!, utf8.count)
                return utf8.count
            }
        }
        valueDone()
    }

    /// Writes one value that the caller formats itself, in a single reservation: `body` gets
    /// room for `maxLength` bytes and returns how many it wrote. The bytes must be one complete
    /// JSON value without line breaks (which is not checked); the formatting functions below
    /// (``formatInt(_:into:)``, ``formatFinite(_:table:into:)``, ``formatQuoted(_:into:)``) and
    /// ``singleLineMemberPrefix(_:first:)`` help write it. For records written in bulk.
    @inlinable @inline(__always)
    package mutating func rawValue(maxLength: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        emit(valueSeparator(), count: maxLength) { p in
            let n = body(p)
            precondition(n >= 0 && n <= maxLength, "JSONWriter.rawValue: wrote more than maxLength bytes")
            return n
        }
        valueDone()
    }

    /// What goes before a member's value in an object written on one line, laid out like the
    /// writer's own output: `"name": ` (compact: `"name":`), preceded by `, ` (compact: `,`)
    /// unless it is the `first` member.
    package func singleLineMemberPrefix(_ key: JSONKey, first: Bool) -> [UInt8] {
        let spaced = options.indentWidth > 0
        var bytes: [UInt8] = first ? [] : spaced ? [0x2C, 0x20] : [0x2C]
        bytes += key.quoted
        bytes += spaced ? [0x3A, 0x20] : [0x3A]
        return bytes
    }

    // MARK: Standalone formatting

    /// The most bytes ``formatInt(_:into:)`` writes.
    @usableFromInline package static let maxIntLength = 20

    /// Writes an integer exactly and returns the number of bytes (at most ``maxIntLength``, all
    /// of which it may overwrite).
    @inlinable @inline(__always)
    package static func formatInt(_ value: Int64, into p: UnsafeMutablePointer<UInt8>) -> Int {
        var q = p
        if value < 0 {
            q[0] = 0x2D
            q += 1
        }
        return q + storeDecimal(value.magnitude, at: q) - p
    }

    /// Writes `"…"` with escapes as ``string(_:)`` does and returns the number of bytes, at most
    /// `6 * utf8.count + 2`.
    @inlinable @inline(__always)
    package static func formatQuoted(_ utf8: UnsafeBufferPointer<UInt8>, into p: UnsafeMutablePointer<UInt8>) -> Int {
        formatQuoted(utf8, clean: utf8.baseAddress.map { cleanPrefixLength($0, utf8.count) } ?? 0, into: p)
    }

    /// ``formatQuoted(_:into:)`` for a string whose first `clean` bytes need no escape.
    @inlinable @inline(__always)
    static func formatQuoted(
        _ utf8: UnsafeBufferPointer<UInt8>, clean: Int, into p: UnsafeMutablePointer<UInt8>
    )
        -> Int
    {
        p[0] = 0x22
        guard let source = utf8.baseAddress else {
            p[1] = 0x22
            return 2
        }
        let n = utf8.count
        copyBytes(p + 1, source, clean)
        var q = p + 1 + clean
        if clean < n { q = writeEscaped(source + clean, n - clean, into: q) }
        q[0] = 0x22
        return q + 1 - p
    }

    /// Appends `"…"` with escapes, as ``string(_:)`` writes it, to `text`: for callers that
    /// build JSON text as a `String` (the shell's `JSONValue`). With `shortBackspaceAndFormFeed`
    /// off, U+0008 and U+000C are written `\u0008` and `\u000c` instead of `\b` and `\f`.
    package static func appendQuoted(_ value: String, to text: inout String, shortBackspaceAndFormFeed: Bool = true) {
        var value = value
        value.withUTF8 { utf8 in
            guard let source = utf8.baseAddress else {
                text += "\"\""
                return
            }
            let n = utf8.count
            let clean = cleanPrefixLength(source, n)
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: clean + 6 * (n - clean) + 2) { buffer in
                let p = buffer.baseAddress!
                p[0] = 0x22
                copyBytes(p + 1, source, clean)
                var q = p + 1 + clean
                if clean < n {
                    q = writeEscaped(
                        source + clean, n - clean, into: q, shortBackspaceAndFormFeed: shortBackspaceAndFormFeed)
                }
                q[0] = 0x22
                text += String(decoding: UnsafeBufferPointer(start: p, count: q + 1 - p), as: UTF8.self)
            }
        }
    }

    /// The number of leading bytes that a JSON string can hold as they are (no `"`, `\` or
    /// control character).
    @inlinable @inline(__always)
    static func cleanPrefixLength(_ source: UnsafePointer<UInt8>, _ n: Int) -> Int {
        var clean = 0
        while clean < n {
            let b = source[clean]
            if b < 0x20 || b == 0x22 || b == 0x5C { break }
            clean += 1
        }
        return clean
    }

    /// Writes `n` bytes of string content with escapes (at most `6 * n` bytes) and returns the
    /// position after them. Without `shortBackspaceAndFormFeed`, U+0008 and U+000C take the
    /// `\u00XX` form.
    @usableFromInline
    static func writeEscaped(
        _ source: UnsafePointer<UInt8>, _ n: Int, into p: UnsafeMutablePointer<UInt8>,
        shortBackspaceAndFormFeed: Bool = true
    )
        -> UnsafeMutablePointer<UInt8>
    {
        var q = p
        for i in 0..<n {
            let b = source[i]
            if b >= 0x20 && b != 0x22 && b != 0x5C {
                q[0] = b
                q += 1
                continue
            }
            q[0] = 0x5C
            switch b {
            case 0x22, 0x5C: q[1] = b
            case 0x08 where shortBackspaceAndFormFeed: q[1] = 0x62  // b
            case 0x0C where shortBackspaceAndFormFeed: q[1] = 0x66  // f
            case 0x0A: q[1] = 0x6E  // n
            case 0x0D: q[1] = 0x72  // r
            case 0x09: q[1] = 0x74  // t
            default:
                q[1] = 0x75  // u00XX
                q[2] = 0x30
                q[3] = 0x30
                q[4] = hexDigit(b >> 4)
                q[5] = hexDigit(b & 0xF)
                q += 6
                continue
            }
            q += 2
        }
        return q
    }

    /// The shortest round-trip text of a `Double`, exactly as ``double(_:)`` writes it
    /// (`"NaN"`, `"Infinity"` and `"-Infinity"` without the quotes).
    package static func format(_ value: Double) -> String {
        formatted(value)
    }

    /// The shortest round-trip text of a `Float`, exactly as ``float(_:)`` writes it.
    package static func format(_ value: Float) -> String {
        formatted(value)
    }

    private static func formatted<T: ShortestDecimalFormattable>(_ value: T) -> String {
        guard value.isFinite else { return nonFiniteName(value.isNaN, value < 0) }
        return DecimalTables.shortestTable.withUnsafeBufferPointer { table in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxFormattedDecimalLength) { buffer in
                let n = formatFinite(value, table: table.baseAddress!, into: buffer.baseAddress!)
                return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<n]), as: UTF8.self)
            }
        }
    }

    /// The string written for a non-finite value.
    @usableFromInline
    static func nonFiniteName(_ isNaN: Bool, _ isNegative: Bool) -> String {
        isNaN ? "NaN" : isNegative ? "-Infinity" : "Infinity"
    }

    /// Writes a finite `Double` or `Float` as ``double(_:)`` and ``float(_:)`` do and returns
    /// the number of bytes (at most `maxFormattedDecimalLength`). `table` is the base address of
    /// ``DecimalTables/shortestTable``.
    @inlinable @inline(__always)
    package static func formatFinite<T: ShortestDecimalFormattable>(
        _ value: T, table: UnsafePointer<UInt64>, into p: UnsafeMutablePointer<UInt8>
    ) -> Int {
        if value == 0 { return writeZero(negative: value.sign == .minus, into: p) }
        let (digits, exponent) = value.magnitude.shortestDecimal(table: table)
        return formatDecimal(negative: value < 0, digits: digits, exponent: exponent, into: p)
    }

    @inlinable @inline(__always)
    static func writeZero(negative: Bool, into p: UnsafeMutablePointer<UInt8>) -> Int {
        var q = p
        if negative {
            q[0] = 0x2D
            q += 1
        }
        q[0] = 0x30; q[1] = 0x2E; q[2] = 0x30
        return q + 3 - p
    }

    // MARK: Internals

    /// What goes before a key or value: a comma, a space, a line break and indentation.
    @usableFromInline
    struct Separator {
        @usableFromInline var comma: Bool
        @usableFromInline var space: Bool
        /// Spaces after a line break, or -1 for no line break.
        @usableFromInline var indent: Int

        @inlinable
        init(comma: Bool = false, space: Bool = false, indent: Int = -1) {
            self.comma = comma
            self.space = space
            self.indent = indent
        }

        @inlinable
        static var none: Separator { Separator() }

        /// The number of bytes ``write(to:)`` writes.
        @inlinable @inline(__always)
        var length: Int {
            (comma ? 1 : 0) + (space ? 1 : 0) + (indent >= 0 ? indent + 1 : 0)
        }

        @inlinable @inline(__always)
        func write(to p: UnsafeMutablePointer<UInt8>) -> Int {
            var q = p
            if comma {
                q[0] = 0x2C
                q += 1
            }
            if space {
                q[0] = 0x20
                q += 1
            }
            if indent >= 0 {
                q[0] = 0x0A
                (q + 1).update(repeating: 0x20, count: indent)
                q += indent + 1
            }
            return q - p
        }
    }

    /// Writes `separator`, then calls `body` with room for at least `count` bytes after it;
    /// `body` returns how many it wrote. One reservation for both.
    @inlinable @inline(__always)
    mutating func emit(_ separator: Separator, count: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        let needed = separator.length + count
        if length &+ needed > capacity { makeRoom(needed) }
        let p = buffer + length
        let n = separator.write(to: p)
        length += n + body(p + n)
    }

    /// Moves the staged bytes to the output.
    @usableFromInline
    mutating func flush() {
        output.append(contentsOf: UnsafeBufferPointer(start: buffer, count: length))
        length = 0
    }

    /// Empties the staging buffer, and enlarges it for a token larger than it.
    @usableFromInline @inline(never)
    mutating func makeRoom(_ needed: Int) {
        flush()
        if needed > capacity {
            buffer.deallocate()
            capacity = needed
            buffer = .allocate(capacity: capacity)
        }
    }

    /// The separator between elements of the current container.
    @inlinable @inline(__always)
    var nextSeparator: Separator {
        if options.indentWidth == 0 { return Separator(comma: true) }
        if current.singleLine { return Separator(comma: true, space: true) }
        return Separator(comma: true, indent: openCount * options.indentWidth)
    }

    /// The separator before the first member of the current container.
    @inlinable @inline(__always)
    var firstSeparator: Separator {
        options.indentWidth > 0 && !current.singleLine
            ? Separator(indent: openCount * options.indentWidth) : .none
    }

    /// Checks that a value may come now and returns what goes before it.
    @inlinable @inline(__always)
    func valueSeparator() -> Separator {
        switch state {
        case .afterKey, .top:
            return .none
        case .arrayFirst:
            return firstSeparator
        case .arrayNext:
            return nextSeparator
        case .done:
            preconditionFailure("JSONWriter: the top-level value is complete; call finishLine() to start another")
        case .objectFirst, .objectNext:
            preconditionFailure("JSONWriter: a value inside an object needs a key first")
        }
    }

    /// Checks that a key may come now and returns what goes before it.
    @inlinable @inline(__always)
    func keySeparator() -> Separator {
        switch state {
        case .objectFirst:
            return firstSeparator
        case .objectNext:
            return nextSeparator
        default:
            preconditionFailure("JSONWriter.key(_:): a key is only allowed inside an object, before a value")
        }
    }

    /// The state after a complete value.
    @inlinable @inline(__always)
    mutating func valueDone() {
        state = openCount == 0 ? .done : current.isObject ? .objectNext : .arrayNext
    }

    private mutating func openContainer(isObject: Bool, singleLine: Bool) {
        let separator = valueSeparator()
        let inArray = openCount > 0 && !current.isObject
        let single =
            singleLine || (openCount > 0 && current.singleLine)
            || (options.singleLineArrayElements && inArray)
        current = Frame(isObject: isObject, singleLine: single)
        if openCount == frameCapacity {
            let newFrames = UnsafeMutablePointer<Frame>.allocate(capacity: frameCapacity * 2)
            newFrames.initialize(from: frames, count: openCount)
            frames.deallocate()
            frames = newFrames
            frameCapacity *= 2
        }
        (frames + openCount).initialize(to: current)
        openCount += 1
        emit(separator, count: 1) { p in
            p[0] = isObject ? 0x7B : 0x5B
            return 1
        }
        state = isObject ? .objectFirst : .arrayFirst
    }

    private mutating func closeContainer(_ byte: UInt8) {
        let wasEmpty = state == .objectFirst || state == .arrayFirst
        let multiLine = options.indentWidth > 0 && !current.singleLine
        openCount -= 1
        current = openCount > 0 ? frames[openCount - 1] : Frame(isObject: false, singleLine: true)
        let separator = multiLine && !wasEmpty ? Separator(indent: openCount * options.indentWidth) : .none
        emit(separator, count: 1) { p in
            p[0] = byte
            return 1
        }
        valueDone()
    }

    /// Writes `separator`, then `"…"` with escapes, then a colon (and space, when indenting) if
    /// `colon`.
    @inlinable @inline(__always)
    mutating func writeQuoted(_ utf8: UnsafeBufferPointer<UInt8>, after separator: Separator, colon: Bool) {
        let n = utf8.count
        let suffix = colon ? (options.indentWidth > 0 ? 2 : 1) : 0
        // The room for escapes is only reserved when there are some.
        let clean = utf8.baseAddress.map { Self.cleanPrefixLength($0, n) } ?? 0
        emit(separator, count: clean + 6 * (n - clean) + 4) { p in
            let q = p + Self.formatQuoted(utf8, clean: clean, into: p)
            q[0] = 0x3A
            q[1] = 0x20
            return q + suffix - p
        }
    }
}

/// Copies `count` bytes; short copies (keys, names) avoid the call to `memmove`.
@inlinable @inline(__always)
package func copyBytes(_ destination: UnsafeMutablePointer<UInt8>, _ source: UnsafePointer<UInt8>, _ count: Int) {
    let from = UnsafeRawPointer(source)
    let to = UnsafeMutableRawPointer(destination)
    switch count {
    case 8...16:
        // Two overlapping 8-byte moves.
        let head = from.loadUnaligned(as: UInt64.self)
        let tail = from.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        to.storeBytes(of: head, as: UInt64.self)
        to.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
    case 4..<8:
        let head = from.loadUnaligned(as: UInt32.self)
        let tail = from.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        to.storeBytes(of: head, as: UInt32.self)
        to.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
    case 0..<4:
        for i in 0..<count { destination[i] = source[i] }
    default:
        destination.update(from: source, count: count)
    }
}

/// The lowercase hexadecimal digit of `nibble` (0...15).
@usableFromInline @inline(__always)
func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10
}

/// An object key encoded once, for writing it many times (property names in records).
@usableFromInline
package struct JSONKey: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The key.
    package let name: String
    /// The key as written: quoted and escaped, UTF-8.
    @usableFromInline package let quoted: [UInt8]

    /// Encodes a key.
    package init(_ name: String) {
        self.name = name
        var writer = JSONWriter()
        writer.string(name)
        quoted = writer.takeBytes()
    }

    /// Encodes a key.
    @usableFromInline
    package init(stringLiteral value: String) {
        self.init(value)
    }

    /// The key.
    @usableFromInline package var description: String { name }
}
