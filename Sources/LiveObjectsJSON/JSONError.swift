/// An error of the JSON reader (parsing a ``JSONValue``, or the package's `JSONReader`): what
/// went wrong and where, in the input's file.
///
/// The reader's own error, so that the JSON library depends on nothing: a module that reads JSON
/// turns it into its own error type through ``JSONReadingError`` (Persistence and the shell into
/// `LiveObjectsError`, with the same code and message as before).
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The input is not JSON (a `corruptFile` `LiveObjectsError`).
        case syntax
        /// The input nests deeper than ``JSONReaderOptions/maxDepth`` (`limitExceeded`).
        case nesting
        /// A method was called where the document's position does not allow it
        /// (`invalidOperation`).
        case misuse
    }

    /// What went wrong.
    public var kind: Kind
    /// The whole message, with the position: `invalid JSON at byte 9 (line 1, column 10):
    /// expected ',' or '}' after an object member, found ']'`.
    public var message: String
    /// The message without the position.
    public var reason: String
    /// For a syntax error, what was expected (`"':' after an object key"`).
    public var expected: String?
    /// The byte offset of the problem in the file (``JSONReaderOptions/startOffset`` counted).
    public var offset: Int
    /// The line of the problem, from 1.
    public var line: Int
    /// The column of the problem, from 1, in bytes.
    public var column: Int
    /// The file, when the options named one.
    public var fileName: String?

    /// Creates an error.
    public init(
        _ kind: Kind, message: String, reason: String, expected: String? = nil, offset: Int, line: Int, column: Int,
        fileName: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.reason = reason
        self.expected = expected
        self.offset = offset
        self.line = line
        self.column = column
        self.fileName = fileName
    }

    /// The message, after the file's name when there is one.
    public var description: String { fileName.map { "\($0): \(message)" } ?? message }
}

/// An error type a ``JSONReader`` throws: made from a ``JSONError``.
@usableFromInline
package protocol JSONReadingError: Error {
    /// The error for a JSON error.
    init(_ error: JSONError)
}

extension JSONError: JSONReadingError {
    /// The error itself.
    @usableFromInline package init(_ error: JSONError) { self = error }
}
