import LiveObjects

/// Where one object stands with the server.
public enum SyncStatus: Sendable, Hashable {
    /// A local change has not reached the server yet.
    case pending
    /// The server has every local change.
    case synced
    /// Sending the object's change failed after every retry (the next sync tries again), or the
    /// server refused it (it waits for ``SyncEngine/retry(_:)`` or ``SyncEngine/discard(_:)``:
    /// see ``SyncEngine/rejectedChanges()``).
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
    /// Why the server refused the change of an object (a subset of ``failed``); the change waits
    /// in ``SyncEngine/rejectedChanges()``.
    public var rejections: [SyncObjectID: SyncRejection] = [:]
    /// Why pulling failed after every retry, if it did: the pages before the failure are merged.
    public var pullFailure: SyncPullFailure?
    /// Pulled states this device's model cannot read, and why: an id of another kind, a value
    /// of another type, nil where the model has none, a link to another type (a space whose
    /// server has no schema stores what any client sends). The object stays as it was here and
    /// the rest of the pull goes on; a later state of it that fits is applied. Properties the
    /// model does not have (those of a newer version of the app) are left out silently.
    public var unreadable: [SyncObjectID: LiveObjectsError] = [:]
    /// Whether the server no longer had the history this device's cursor needed (it compacts
    /// old deletions), so that the device pulled everything again and removed the objects the
    /// server no longer has (unless a local change of them waits to be sent).
    public var didReset = false
    /// Objects removed from the device because they left its subscriptions (no query matches
    /// them and no object kept links to them) or because the user may no longer read them;
    /// the server keeps them.
    public var removedFromView = 0
}

/// Why a pull failed.
public struct SyncPullFailure: Sendable, Hashable, CustomStringConvertible {
    /// The error's code for a ``SyncHTTPError``; `SyncErrorCode.network` for any other
    /// error of the transport.
    public var code: SyncHTTPError.Code
    /// What the error said.
    public var message: String

    /// Creates a failure.
    public init(code: SyncHTTPError.Code, message: String) {
        self.code = code
        self.message = message
    }

    init(_ error: any Error) {
        if let error = error as? SyncHTTPError {
            self.init(code: error.code, message: error.message)
        } else {
            self.init(code: .network, message: String(describing: error))
        }
    }

    public var description: String { "\(code): \(message)" }
}

/// A local change the server refused: it waits for ``SyncEngine/retry(_:)`` or
/// ``SyncEngine/discard(_:)``; see ``SyncEngine/rejectedChanges()``.
public struct SyncRejectedChange: Sendable, Hashable {
    /// The object.
    public var object: SyncObjectID
    /// What the refused change did.
    public var kind: SyncChange.Kind
    /// Why the server refused it.
    public var rejection: SyncRejection
    /// Whether the app asked for it to be sent again at the next push.
    public var isRetrying: Bool
    /// The object's local values of the properties refused (every sent property for a
    /// creation), links as references; empty when the object is deleted here.
    public var localValues: [String: SyncValue]
}

/// A change the server refused, as the engine keeps it.
struct RejectedChange: Sendable {
    var object: SyncObjectID
    var kind: SyncChange.Kind
    /// The properties refused and changed since; nil for a creation (every property).
    var properties: Set<String>?
    var rejection: SyncRejection
    /// Sent again at the next push.
    var retry = false
    /// Discarded at this history token: the object's changes up to it are not sent.
    var discardedAt: UInt64?
    /// Refused on the device (over the server's limits, or holding NUL): an edit of the object
    /// is a retry, since editing the value is how it comes to fit.
    var refusedOnDevice = false
}

/// A link property of one object, as a key of the links waiting for their targets.
struct PendingLink: Hashable, Sendable {
    var object: SyncObjectID
    var property: String
}
