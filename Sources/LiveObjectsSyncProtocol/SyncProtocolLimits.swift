/// The limits of the sync protocol as the package's server keeps them by default
/// (docs/SYNC-PROTOCOL.md, "Limits"). A server advertises its own at `GET /v1/limits`
/// (``SyncWireLimits``); a device keeps to what it advertises.
public enum SyncProtocolLimits {
    /// The largest body of a push, in bytes: 8 MiB.
    public static let maximumBodyBytes = 8 << 20
    /// The most changes in one push.
    public static let maximumChanges = 1_000
    /// The longest idempotency key, type name or property name, in UTF-8 bytes.
    public static let maximumNameBytes = 512
    /// The most bytes of an object id (its strings' UTF-8, 8 per number): a server indexes ids,
    /// and an index entry has a bounded size.
    public static let maximumIDBytes = 1_024
    /// The most objects in one pull page (a larger `limit` is capped).
    public static let maximumPageObjects = 1_000
    /// The objects in one pull page when the request gives no `limit`.
    public static let defaultPageObjects = 500
    /// The deepest nesting of lists and dictionaries in the value of an `AnyValue` property
    /// (`AnyValue.maximumNestingDepth`): a top-level list is at depth 0, so 100 levels in all.
    public static let maximumMixedNestingDepth = 100
    /// The longest long poll, in seconds (a larger `wait` is capped).
    public static let maximumWaitSeconds = 60
}
