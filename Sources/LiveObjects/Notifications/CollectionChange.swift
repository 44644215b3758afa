import LiveObjectsStore

/// One change of a collection (query results, a `List`, a `LinkingObjects`): what a
/// ``CollectionChanges`` subscription yields.
///
/// Indices follow UIKit's batch-update conventions and are each sorted ascending:
/// - ``deletions``: indices in the *old* collection of elements that are gone;
/// - ``insertions``: indices in the *new* collection of elements that are new;
/// - ``moves``: elements that stayed but changed position (from an old index to a new one);
///   they appear in neither deletions nor insertions;
/// - ``modifications`` / ``modificationsInNewIndices``: elements that stayed and whose observed
///   properties changed, by old and by new index.
///
/// To go from the old keys to the new: remove the deletions and the move sources (old
/// indices), then put the insertions and the move destinations at their new indices in
/// ascending order. ``snapshot`` holds the new keys and values, frozen.
public struct CollectionChange<Element: Object>: Sendable {
    /// The realm version after the commit (for the first element: the version it shows).
    public let version: UInt64
    /// Whether this is the first element, the state when the subscription started (all the
    /// index lists are empty).
    public let isInitial: Bool
    /// Old indices of removed elements, ascending.
    public let deletions: [Int]
    /// New indices of added elements, ascending.
    public let insertions: [Int]
    /// Old indices of modified elements, ascending.
    public let modifications: [Int]
    /// New indices of the same modified elements, in the same order as ``modifications``.
    public let modificationsInNewIndices: [Int]
    /// Elements that moved, sorted by destination.
    public let moves: [Move]
    /// The collection after the change, frozen.
    public let snapshot: FrozenResults<Element>

    /// An element that moved from an old index to a new one.
    public struct Move: Hashable, Sendable {
        /// The index in the old collection.
        public let from: Int
        /// The index in the new collection.
        public let to: Int

        /// Creates a move.
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// Applies the change to the keys of the previous snapshot: the result equals
    /// `snapshot.keys`.
    public func applied(to oldKeys: [ObjectKey]) -> [ObjectKey] {
        var removed = Set(deletions)
        for move in moves { removed.insert(move.from) }
        var remaining = oldKeys.indices.filter { !removed.contains($0) }.map { oldKeys[$0] }.makeIterator()
        var placed: [Int: ObjectKey] = [:]
        for i in insertions { placed[i] = snapshot.key(at: i) }
        for move in moves { placed[move.to] = oldKeys[move.from] }
        var result: [ObjectKey] = []
        result.reserveCapacity(snapshot.count)
        for i in 0..<(oldKeys.count - removed.count + placed.count) {
            if let key = placed[i] { result.append(key) } else if let key = remaining.next() { result.append(key) }
        }
        return result
    }
}

/// The changes of a collection, as an asynchronous sequence: the first element is the current
/// state, then one element per committed write that changed the collection.
///
/// ```swift
/// let changes = try await realm.read { $0.objects(Dog.self).where { $0.age > 3 }.changes() }
/// for await change in changes {
///     print(change.insertions, change.snapshot.count)
/// }
/// ```
///
/// Buffering: unbounded, so that no change is lost and every change applies to the previous
/// one; a consumer that falls far behind holds its pending changes in memory. Ending the
/// iteration (or cancelling its task) ends the subscription; the realm frees it at its next
/// commit.
public struct CollectionChanges<Element: Object>: AsyncSequence, Sendable {
    public typealias AsyncIterator = ChangeIterator<CollectionChange<Element>>
    let stream: ChangeStream<CollectionChange<Element>>
    /// Names the subscription, for ``Realm/write(withoutNotifying:_:)``.
    public let token: SubscriptionToken

    public func makeAsyncIterator() -> AsyncIterator { ChangeIterator(stream) }

    /// The version of the last change set the subscription has yielded (0 before the first).
    /// The realm yields a commit's change sets before the write returns, so after a write
    /// (or a refresh) this says which change set a consumer must still receive to have seen it.
    package var lastYieldedVersion: UInt64 { stream.yielded.value.load(ordering: .acquiring) }
}

extension CollectionChange.Move: CustomStringConvertible {
    /// `3 → 0`: the element at index 3 before the write is at index 0 after it.
    public var description: String { "\(from) → \(to)" }
}

extension CollectionChange: CustomStringConvertible {
    /// `initial (3 objects)`, or the changes of a write:
    /// `deletions [0], insertions [2], modifications [1], moves [3 → 0] (3 objects)`.
    public var description: String {
        guard !isInitial else { return "initial (\(snapshot.count) objects)" }
        var parts: [String] = []
        if !deletions.isEmpty { parts.append("deletions \(deletions)") }
        if !insertions.isEmpty { parts.append("insertions \(insertions)") }
        if !modifications.isEmpty { parts.append("modifications \(modifications)") }
        if !moves.isEmpty { parts.append("moves [" + moves.map(\.description).joined(separator: ", ") + "]") }
        if parts.isEmpty { parts.append("no changes") }
        return parts.joined(separator: ", ") + " (\(snapshot.count) objects)"
    }
}
