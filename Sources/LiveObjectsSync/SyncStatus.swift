import LiveObjects

/// Where one object stands with the server.
public enum SyncStatus: Sendable, Hashable {
    /// A local change has not reached the server yet.
    case pending
    /// The server has every local change.
    case synced
    /// Sending the object's change failed after every retry; the next sync tries again.
    case failed
    /// The object was deleted on the server while it had a local change: waiting for
    /// ``SyncEngine/resolve(_:with:)``.
    case conflict
}

/// A change of an object's sync status.
public struct SyncStatusUpdate: Sendable, Hashable {
    /// The object.
    public var object: SyncObjectID
    /// Its new status.
    public var status: SyncStatus
}

/// The sync status changes of a ``SyncEngine``, as an asynchronous sequence; see
/// ``SyncEngine/statusUpdates(for:)``. Ending the iteration unsubscribes.
public struct SyncStatusUpdates: AsyncSequence, Sendable {
    public typealias Element = SyncStatusUpdate
    public typealias AsyncIterator = AsyncStream<SyncStatusUpdate>.Iterator
    let stream: AsyncStream<SyncStatusUpdate>

    public func makeAsyncIterator() -> AsyncIterator { stream.makeAsyncIterator() }
}

/// An object deleted on the server while it had a local change not yet sent: the app decides
/// with ``SyncEngine/resolve(_:with:)``.
public struct SyncConflict: Sendable, Hashable {
    /// The object.
    public var object: SyncObjectID
    /// Its server id.
    public var serverID: String?
    /// The properties changed locally (every sent property for an object created locally).
    public var localChanges: Set<String>
}

/// How the app resolves a ``SyncConflict``.
public enum SyncConflictResolution: Sendable, Hashable {
    /// Keep the local object: it is sent again as a new object (the server re-creates it).
    case keepLocal
    /// Accept the server's deletion: the local object is deleted, its change dropped.
    case acceptDeletion
}

/// The conflicts a ``SyncEngine`` finds, as an asynchronous sequence; see
/// ``SyncEngine/conflicts()``. Ending the iteration unsubscribes.
public struct SyncConflicts: AsyncSequence, Sendable {
    public typealias Element = SyncConflict
    public typealias AsyncIterator = AsyncStream<SyncConflict>.Iterator
    let stream: AsyncStream<SyncConflict>

    public func makeAsyncIterator() -> AsyncIterator { stream.makeAsyncIterator() }
}

/// What one ``SyncEngine/sync()`` did.
public struct SyncReport: Sendable, Hashable {
    /// Changes the server acknowledged.
    public var pushed = 0
    /// Server states applied locally.
    public var pulled = 0
    /// Conflicts found.
    public var conflicts = 0
    /// Objects whose change failed after every retry, or was refused by the server.
    public var failed: Set<SyncObjectID> = []
    /// Why the server refused the change of an object (a subset of ``failed``).
    public var rejections: [SyncObjectID: SyncRejection] = [:]
}
