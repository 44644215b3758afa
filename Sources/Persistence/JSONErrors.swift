import LiveObjects
import LiveObjectsJSON

// The JSON library has its own error type; Persistence reads with `LiveObjectsError`s, whose code,
// message and input location are what the library's error says.

/// The reader of this module: its errors are `LiveObjectsError`s.
typealias JSONReader = LiveObjectsJSON.JSONReader<LiveObjectsError>

extension LiveObjectsError: JSONReadingError {
    /// The error for a JSON error: `corruptFile` for malformed input, `limitExceeded` for nesting
    /// too deep, `invalidOperation` for a reader used out of turn; the same message, the file,
    /// and (but for a misuse) the input location.
    @usableFromInline package init(_ error: JSONError) {
        let code: LiveObjectsError.Code =
            switch error.kind {
            case .syntax: .corruptFile
            case .nesting: .limitExceeded
            case .misuse: .invalidOperation
            }
        self.init(code, error.message, file: error.fileName)
        if error.kind != .misuse {
            inputLocation = InputErrorLocation(offset: error.offset, expected: error.expected, reason: error.reason)
        }
    }
}
