/// A refusal or failure of the server, with the protocol's code (docs/SYNC-PROTOCOL.md,
/// "Errors") and the HTTP status it is answered with.
public struct SyncServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The protocol's error codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No token, or an unknown, expired or revoked one (401).
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// No grant in the space, or a role too weak for the request or the change (403).
        public static let forbidden = Code(rawValue: "forbidden")
        /// A path under a version this server does not speak (404).
        public static let versionNotSupported = Code(rawValue: "versionNotSupported")
        /// A malformed request (400), or one too large (413).
        public static let badRequest = Code(rawValue: "badRequest")
        /// An idempotency key already applied to another object (409).
        public static let conflict = Code(rawValue: "conflict")
        /// No such space or route (404).
        public static let notFound = Code(rawValue: "notFound")
        /// A pushed change of a type its space does not declare (a rejected receipt's code).
        public static let unknownType = Code(rawValue: "unknownType")
        /// A pushed change naming a property its type lacks in the space's schema (a rejected
        /// receipt's code).
        public static let unknownProperty = Code(rawValue: "unknownProperty")
        /// A pushed value or id that does not fit the space's schema: another type, nil where
        /// a value is required, a link to another type, an integer out of its range (a
        /// rejected receipt's code).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// A pushed change holding U+0000 (NUL) in a string, an id or a name (a rejected
        /// receipt's code).
        public static let invalidText = Code(rawValue: "invalidText")
        /// A pushed change whose object id is over ``maximumIDLength`` bytes (a rejected
        /// receipt's code).
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// Anything else (500).
        public static let `internal` = Code(rawValue: "internal")
    }

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
        if let statusOverride { return statusOverride }
        return switch code {
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
