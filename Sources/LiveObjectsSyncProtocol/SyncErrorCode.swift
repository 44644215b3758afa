/// The error codes of the sync protocol (docs/SYNC-PROTOCOL.md, "Errors" and "Push"): the code of
/// a refused request, of a rejected change's receipt, and of a failure on the device side.
///
/// One table for both sides: `LiveObjectsSync` names it `SyncHTTPError.Code`, the sync server
/// `SyncServerError.Code`. Extensible: a server may send codes this version does not know, kept
/// as they came.
public struct SyncErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as it is spelled on the wire.
    public var rawValue: String

    /// Creates a code from its spelling.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// No bearer token, or one the server does not know, that expired or that was revoked
    /// (HTTP 401).
    public static let unauthorized = SyncErrorCode(rawValue: "unauthorized")
    /// The user may not do this in this space, or to this object: no grant in the space, or a
    /// role too weak for the request or the change (HTTP 403, or a rejected change).
    public static let forbidden = SyncErrorCode(rawValue: "forbidden")
    /// A path under a version of the protocol the server does not speak (HTTP 404).
    public static let versionNotSupported = SyncErrorCode(rawValue: "versionNotSupported")
    /// The request is malformed (HTTP 400) or too large (HTTP 413).
    public static let badRequest = SyncErrorCode(rawValue: "badRequest")
    /// The request contradicts what the server holds, such as an idempotency key already
    /// applied to another object (HTTP 409).
    public static let conflict = SyncErrorCode(rawValue: "conflict")
    /// No such space or route (HTTP 404).
    public static let notFound = SyncErrorCode(rawValue: "notFound")
    /// The server failed (HTTP 500, and any other status that comes without a code).
    public static let `internal` = SyncErrorCode(rawValue: "internal")
    /// The server could not be reached, or the connection failed or timed out: a device-side
    /// code, never sent by a server.
    public static let network = SyncErrorCode(rawValue: "network")
    /// The server's answer is not what the protocol says: a device-side code, never sent by a
    /// server.
    public static let invalidResponse = SyncErrorCode(rawValue: "invalidResponse")
    /// A change of a type the space does not declare, or linking to one (a rejected change).
    public static let unknownType = SyncErrorCode(rawValue: "unknownType")
    /// A change naming a property its type lacks in the space's schema (a rejected change).
    public static let unknownProperty = SyncErrorCode(rawValue: "unknownProperty")
    /// A value or id that does not fit the space's schema: another type, nil where a value is
    /// required, a link to another type, an integer out of its range (a rejected change).
    public static let invalidValue = SyncErrorCode(rawValue: "invalidValue")
    /// A change holding U+0000 (NUL) in a string, an id or a name, which a server does not keep:
    /// refused by the engine before it is sent, and by the server (a rejected change).
    public static let invalidText = SyncErrorCode(rawValue: "invalidText")
    /// A change larger than the server's limits (``SyncProtocolLimits``): refused by the engine
    /// before it is sent, and by the server for an object id over
    /// ``SyncProtocolLimits/maximumIDBytes`` (a rejected change).
    public static let tooLarge = SyncErrorCode(rawValue: "tooLarge")
    /// A pull's cursor older than what the server still keeps of the space's deletions, which
    /// compaction removed (HTTP 410): the device pulls again from the beginning, and forgets
    /// the objects that pull does not bring.
    public static let resetRequired = SyncErrorCode(rawValue: "resetRequired")

    /// The HTTP status a server answers a refused request with: 401, 403, 404, 400, 409, 410, or 500
    /// for any other code (a request too large is 413 with ``badRequest``, which the server
    /// states apart).
    public var httpStatus: Int {
        switch self {
        case .unauthorized: 401
        case .forbidden: 403
        case .versionNotSupported, .notFound: 404
        case .badRequest: 400
        case .conflict: 409
        case .resetRequired: 410
        default: 500
        }
    }

    /// The code of a refusal that came with a status and without a body the protocol describes.
    public init(forStatus status: Int) {
        self =
            switch status {
            case 400, 413: .badRequest
            case 401: .unauthorized
            case 403: .forbidden
            case 404: .notFound
            case 409: .conflict
            case 410: .resetRequired
            default: .internal
            }
    }
}
