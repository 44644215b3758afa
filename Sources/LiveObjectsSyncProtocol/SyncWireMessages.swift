import LiveObjectsJSON

// The messages of docs/SYNC-PROTOCOL.md that hold no object values, for both the device's
// transport and the server: read and written as LiveObjectsJSON values (`json`, `init(json:)`).

/// A refusal: an error code and a message; the `error` member of an error response and of a
/// rejected receipt.
public struct SyncWireError: Hashable, Sendable {
    /// The code, as spelled on the wire (``SyncErrorCode``).
    public var code: String
    /// What the server said.
    public var message: String

    /// Creates an error member.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// Creates an error member with a code of the table.
    public init(_ code: SyncErrorCode, message: String) {
        self.init(code: code.rawValue, message: message)
    }
}

/// The body of an error response: `{"error": {"code": …, "message": …}}`.
public struct SyncWireErrorResponse: Hashable, Sendable {
    /// The refusal.
    public var error: SyncWireError

    /// Creates an error response.
    public init(error: SyncWireError) { self.error = error }
}

/// One receipt of a push response.
public struct SyncWireReceipt: Hashable, Sendable {
    /// The key of the change answered.
    public var key: String
    /// The outcome as spelled on the wire (``SyncReceiptOutcomeKind``; a reader refuses one it
    /// does not know).
    public var outcome: String
    /// The object's id on the server (absent for a rejected change).
    public var serverID: String?
    /// The object's version after the change (absent for a rejected change).
    public var serverVersion: UInt64?
    /// Why the change was rejected.
    public var error: SyncWireError?

    /// Creates a receipt.
    public init(
        key: String, outcome: SyncReceiptOutcomeKind, serverID: String? = nil, serverVersion: UInt64? = nil,
        error: SyncWireError? = nil
    ) {
        self.key = key
        self.outcome = outcome.rawValue
        self.serverID = serverID
        self.serverVersion = serverVersion
        self.error = error
    }

    /// The outcome, or nil for one this version does not know.
    public var outcomeKind: SyncReceiptOutcomeKind? { SyncReceiptOutcomeKind(rawValue: outcome) }
}

/// The body of a push response: one receipt per change.
public struct SyncWirePushResponse: Hashable, Sendable {
    /// The receipts, in the order of the changes.
    public var receipts: [SyncWireReceipt]

    /// Creates a push response.
    public init(receipts: [SyncWireReceipt]) { self.receipts = receipts }
}

/// The body of `GET /v1/limits`. Every member may be absent (no limit).
public struct SyncWireLimits: Hashable, Sendable {
    /// The largest body of a push, in bytes.
    public var maximumBodyBytes: Int?
    /// The most changes in one push.
    public var maximumChanges: Int?
    /// The longest idempotency key, type name or property name, in UTF-8 bytes.
    public var maximumNameBytes: Int?
    /// The longest object id, in bytes (see ``SyncProtocolLimits/maximumIDBytes``).
    public var maximumIDBytes: Int?
    /// The most objects in one pull page.
    public var maximumPageObjects: Int?
    /// The longest long poll, in seconds.
    public var maximumWaitSeconds: Int64?

    /// Creates limits; nil is no limit.
    public init(
        maximumBodyBytes: Int? = nil, maximumChanges: Int? = nil, maximumNameBytes: Int? = nil,
        maximumIDBytes: Int? = nil, maximumPageObjects: Int? = nil, maximumWaitSeconds: Int64? = nil
    ) {
        self.maximumBodyBytes = maximumBodyBytes
        self.maximumChanges = maximumChanges
        self.maximumNameBytes = maximumNameBytes
        self.maximumIDBytes = maximumIDBytes
        self.maximumPageObjects = maximumPageObjects
        self.maximumWaitSeconds = maximumWaitSeconds
    }
}

// MARK: JSON

extension SyncWireError {
    /// The JSON of the member.
    public var json: JSONValue {
        .object([(key: "code", value: .string(code)), (key: "message", value: .string(message))])
    }

    /// Reads the member.
    ///
    /// - Throws: ``SyncWireFormatError`` for JSON of another shape.
    public init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "an error")
        self.init(code: try object.string("code"), message: try object.string("message"))
    }
}

extension SyncWireErrorResponse {
    /// The JSON of the response.
    public var json: JSONValue { .object([(key: "error", value: error.json)]) }

    /// Reads the response.
    ///
    /// - Throws: ``SyncWireFormatError`` for JSON of another shape.
    public init(json: JSONValue) throws(SyncWireFormatError) {
        self.init(error: try SyncWireError(json: try WireObject(json, "an error response").required("error")))
    }
}

extension SyncWireReceipt {
    /// The JSON of the receipt; absent members are left out.
    public var json: JSONValue {
        .members([
            ("key", .string(key)), ("outcome", .string(outcome)), ("serverID", serverID.map(JSONValue.string)),
            ("serverVersion", serverVersion.map { .number(JSONNumber($0)) }), ("error", error?.json),
        ])
    }

    /// Reads a receipt; an outcome this version does not know is kept (``outcomeKind`` is nil).
    ///
    /// - Throws: ``SyncWireFormatError`` for JSON of another shape.
    public init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a receipt")
        key = try object.string("key")
        outcome = try object.string("outcome")
        serverID = try object.optionalString("serverID")
        serverVersion = try object.optionalUInt64("serverVersion")
        error = try object["error"].map { (value) throws(SyncWireFormatError) in try SyncWireError(json: value) }
    }
}

extension SyncWirePushResponse {
    /// The JSON of the response.
    public var json: JSONValue { .object([(key: "receipts", value: .array(receipts.map(\.json)))]) }

    /// Reads the response.
    ///
    /// - Throws: ``SyncWireFormatError`` for JSON of another shape.
    public init(json: JSONValue) throws(SyncWireFormatError) {
        var receipts: [SyncWireReceipt] = []
        for receipt in try WireObject(json, "a push response").array("receipts") {
            receipts.append(try SyncWireReceipt(json: receipt))
        }
        self.init(receipts: receipts)
    }
}

extension SyncWireLimits {
    /// The JSON of the limits, members in the order of their names; absent members are left
    /// out.
    public var json: JSONValue {
        func int(_ value: Int?) -> JSONValue? { value.map { .int(Int64($0)) } }
        return .members([
            ("maximumBodyBytes", int(maximumBodyBytes)), ("maximumChanges", int(maximumChanges)),
            ("maximumIDBytes", int(maximumIDBytes)), ("maximumNameBytes", int(maximumNameBytes)),
            ("maximumPageObjects", int(maximumPageObjects)),
            ("maximumWaitSeconds", maximumWaitSeconds.map(JSONValue.int)),
        ])
    }

    /// Reads the limits.
    ///
    /// - Throws: ``SyncWireFormatError`` for JSON of another shape.
    public init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "the limits")
        self.init(
            maximumBodyBytes: try object.optionalInt("maximumBodyBytes"),
            maximumChanges: try object.optionalInt("maximumChanges"),
            maximumNameBytes: try object.optionalInt("maximumNameBytes"),
            maximumIDBytes: try object.optionalInt("maximumIDBytes"),
            maximumPageObjects: try object.optionalInt("maximumPageObjects"),
            maximumWaitSeconds: try object.optionalInt64("maximumWaitSeconds"))
    }
}
