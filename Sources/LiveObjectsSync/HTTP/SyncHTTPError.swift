import Foundation

/// An error of ``HTTPSyncTransport``: a refusal by the server, with the protocol's code
/// (docs/SYNC-PROTOCOL.md, "Errors"), or a failure to reach it.
///
/// Its description reads like
/// `sync HTTP error forbidden (403): user ann may only read space team (POST /v1/spaces/team/push)`.
///
/// ```swift
/// do {
///     try await engine.sync()
/// } catch let error as SyncHTTPError where error.code == .unauthorized {
///     // ask the user to sign in again
/// }
/// ```
public struct SyncHTTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong. Extensible: a server may send codes this version does not know.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No bearer token, or one the server does not know (HTTP 401).
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// The user may not do this in this space, or to this object (HTTP 403).
        public static let forbidden = Code(rawValue: "forbidden")
        /// The server does not speak this version of the protocol (HTTP 404).
        public static let versionNotSupported = Code(rawValue: "versionNotSupported")
        /// The request is malformed or too large (HTTP 400).
        public static let badRequest = Code(rawValue: "badRequest")
        /// The request contradicts what the server holds, such as an idempotency key already
        /// used for another object (HTTP 409).
        public static let conflict = Code(rawValue: "conflict")
        /// No such space or route (HTTP 404).
        public static let notFound = Code(rawValue: "notFound")
        /// The server failed (HTTP 500 and other statuses without a code).
        public static let `internal` = Code(rawValue: "internal")
        /// The server could not be reached, or the connection failed or timed out.
        public static let network = Code(rawValue: "network")
        /// The server's answer is not what the protocol says.
        public static let invalidResponse = Code(rawValue: "invalidResponse")
        /// A change of a type the space does not declare (a rejected change).
        public static let unknownType = Code(rawValue: "unknownType")
        /// A change naming a property its type lacks in the space's schema (a rejected change).
        public static let unknownProperty = Code(rawValue: "unknownProperty")
        /// A value or id that does not fit the space's schema (a rejected change).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// A change holding U+0000 (NUL) in a string, an id or a name, which a server does not
        /// keep: refused by the engine before it is sent, and by the server (a rejected change).
        public static let invalidText = Code(rawValue: "invalidText")
        /// A change larger than the server's limits (``SyncLimits``): refused by the engine
        /// before it is sent, so that it never holds back the others.
        public static let tooLarge = Code(rawValue: "tooLarge")
    }

    /// What went wrong.
    public var code: Code
    /// What the server (or the transport) said.
    public var message: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The request, as `METHOD /path`, when there was one.
    public var request: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, status: Int? = nil, request: String? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.request = request
    }

    /// Whether trying again later may succeed: network failures and server failures, not
    /// refusals.
    public var isTransient: Bool {
        code == .network || code == .internal || code == .invalidResponse
    }

    public var description: String {
        var text = "sync HTTP error \(code)"
        if let status { text += " (\(status))" }
        text += ": \(message)"
        if let request { text += " (\(request))" }
        return text
    }

    /// The code for a status that came without a body the protocol describes.
    static func code(forStatus status: Int) -> Code {
        switch status {
        case 400, 413: .badRequest
        case 401: .unauthorized
        case 403: .forbidden
        case 404: .notFound
        case 409: .conflict
        default: .internal
        }
    }
}
