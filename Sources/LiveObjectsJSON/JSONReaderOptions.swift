/// Limits and conventions of a ``JSONReader``.
public struct JSONReaderOptions: Sendable, Hashable {
    /// The hard ceiling of ``maxDepth``.
    public static let depthCeiling = 512

    /// The deepest nesting of objects and arrays accepted, in `1...depthCeiling`: 512 unless
    /// lowered. A document may hold `maxDepth` nested containers; one more fails with
    /// a ``JSONError`` of kind ``JSONError/Kind-swift.enum/nesting``.
    public var maxDepth: Int
    /// Whether ``JSONReader/readDouble()`` and ``JSONReader/readFloat()`` accept the strings
    /// `"NaN"`, `"Infinity"` and `"-Infinity"` that ``JSONWriter`` writes for non-finite
    /// values. On by default.
    public var acceptsNonFiniteStrings: Bool
    /// A file name for error messages (``JSONError/fileName``), if any.
    public var fileName: String?
    /// Where the bytes start in their file, when they are a part of it (a journal line):
    /// error messages give positions in the file.
    public var startOffset: Int
    /// The line of the file that the bytes start on (from 1), at its start.
    public var startLine: Int

    /// Creates options.
    ///
    /// - Parameter maxDepth: At most ``depthCeiling``.
    public init(
        maxDepth: Int = JSONReaderOptions.depthCeiling, acceptsNonFiniteStrings: Bool = true, fileName: String? = nil,
        startOffset: Int = 0, startLine: Int = 1
    ) {
        self.maxDepth = maxDepth
        self.acceptsNonFiniteStrings = acceptsNonFiniteStrings
        self.fileName = fileName
        self.startOffset = startOffset
        self.startLine = startLine
    }
}

/// The kind of a JSON value, from its first byte (``JSONReader/peekKind()``).
package enum JSONValueKind: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool
    /// A number.
    case number
    /// A string.
    case string
    /// An array.
    case array
    /// An object.
    case object
}
