/// What a pushed change does to its object: the `kind` of a change on the wire
/// (docs/SYNC-PROTOCOL.md, "Push").
public enum SyncChangeKind: String, Sendable, Hashable, CaseIterable {
    /// The object was created: the change's values hold every sent property.
    case create
    /// The object changed: the change's values hold the changed properties.
    case update
    /// The object was deleted: the change has no values.
    case delete
}

/// What the server did with one pushed change: the `outcome` of a receipt on the wire
/// (docs/SYNC-PROTOCOL.md, "Push").
public enum SyncReceiptOutcomeKind: String, Sendable, Hashable, CaseIterable {
    /// Applied now, or by an earlier request with the same key.
    case applied
    /// An update of an object deleted on the server: nothing applied.
    case deletedOnServer
    /// Refused for this change only, with an error code and message.
    case rejected
}
