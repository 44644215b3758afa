/// A refusal or failure of the server, with the protocol's code (docs/SYNC-PROTOCOL.md,
/// "Errors") and the HTTP status it is answered with.
public struct SyncServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The protocol's error codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No token, or an unknown or revoked one (401).
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// No grant in the space, or a role too weak for the request or the change (403).
        public static let forbidden = Code(rawValue: "forbidden")
        /// A path under a version this server does not speak (404).
        public static let versionNotSupported = Code(rawValue: "versionNotSupported")
        /// A malformed or too large request (400).
        public static let badRequest = Code(rawValue: "badRequest")
        /// An idempotency key already applied to another object (409).
        public static let conflict = Code(rawValue: "conflict")
        /// No such space or route (404).
        public static let notFound = Code(rawValue: "notFound")
        /// Anything else (500).
        public static let `internal` = Code(rawValue: "internal")
    }

    /// What went wrong.
    public var code: Code
    /// Said to the client (and, for the command line, to the person).
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The HTTP status of the code.
    public var status: Int {
        switch code {
        case .unauthorized: 401
        case .forbidden: 403
        case .versionNotSupported, .notFound: 404
        case .badRequest: 400
        case .conflict: 409
        default: 500
        }
    }

    public var description: String { "\(code): \(message)" }
}
