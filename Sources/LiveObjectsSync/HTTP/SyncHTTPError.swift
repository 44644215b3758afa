import Foundation
import LiveObjectsSyncProtocol

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
    /// What went wrong: the protocol's table of codes (`SyncErrorCode`, from
    /// `LiveObjectsSyncProtocol`, which this module re-exports), shared with the server.
    /// Extensible: a server may send codes this version does not know.
    public typealias Code = SyncErrorCode

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
}
