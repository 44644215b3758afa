import LiveObjectsSyncProtocol

/// A refusal or failure of the server, with the protocol's code (docs/SYNC-PROTOCOL.md,
/// "Errors") and the HTTP status it is answered with.
public struct SyncServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The protocol's error codes: the one table of `LiveObjectsSyncProtocol`, shared with the
    /// device's transport.
    public typealias Code = SyncErrorCode

    /// What went wrong.
    public var code: Code
    /// Said to the client (and, for the command line, to the person).
    public var message: String
    /// The HTTP status, when it is not the code's usual one (413 for a `badRequest` that is too
    /// large).
    public var statusOverride: Int?

    /// Creates an error.
    public init(_ code: Code, _ message: String, status: Int? = nil) {
        self.code = code
        self.message = message
        self.statusOverride = status
    }

    /// A request too large to be read: 413 with the code `badRequest`, as the client maps a
    /// 413 that comes without a body.
    static func tooLarge(_ message: String) -> SyncServerError {
        SyncServerError(.badRequest, message, status: 413)
    }

    /// The HTTP status of the error.
    public var status: Int {
        statusOverride ?? code.httpStatus
    }

    public var description: String { "\(code): \(message)" }
}
