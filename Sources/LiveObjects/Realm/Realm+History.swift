extension Realm {
    /// The token of the last commit: save it, and later ask ``changes(since:)`` what changed
    /// after it. ``HistoryToken/initial`` when the realm keeps no history
    /// (``Configuration/keepsHistory``).
    public var currentHistoryToken: HistoryToken {
        HistoryToken(rawValue: history?.token ?? 0)
    }

    /// The oldest token ``changes(since:)`` accepts: changes up to it were trimmed.
    public var oldestHistoryToken: HistoryToken {
        HistoryToken(rawValue: history?.startToken ?? 0)
    }

    /// What changed after a token, per type, by primary key, coalesced.
    ///
    /// ```swift
    /// let history = try await realm.read { try $0.changes(since: lastSeen) }
    /// for id in history[Product.self].inserted { … }
    /// lastSeen = history.token
    /// ```
    ///
    /// Only types with a primary key are recorded; embedded objects and types without a
    /// primary key never appear.
    ///
    /// - Parameter token: A token from ``currentHistoryToken`` or an earlier
    ///   ``ChangeHistory/token``.
    /// - Returns: The changes of every commit after `token`, up to ``currentHistoryToken``.
    /// - Throws: `invalidOperation` when the realm keeps no history; `historyTrimmed` when
    ///   `token` is older than ``oldestHistoryToken`` or newer than ``currentHistoryToken``.
    /// - Complexity: O(entries after `token`).
    public func changes(since token: HistoryToken) throws(LiveObjectsError) -> ChangeHistory {
        let history = try requireHistory()
        try checkHistoryRange(token, history)
        var types: [String: TypeChangeHistory] = [:]
        for name in history.types.keys {
            var result = TypeChangeHistory()
            for (key, change) in history.coalesced(name, since: token.rawValue, schema: schema[name]) {
                switch change.kind {
                case .insert: result.inserted.insert(key)
                case .update: result.updated[key] = change.properties
                case .delete: result.deleted.insert(key)
                }
            }
            if !result.isEmpty { types[name] = result }
        }
        return ChangeHistory(since: token, token: currentHistoryToken, types: types)
    }

    /// Forgets the history up to a token (at most the current one), to save memory and file
    /// space. A file realm keeps the trim with its next save.
    ///
    /// - Throws: `invalidOperation` when the realm keeps no history.
    public func trimHistory(upTo token: HistoryToken) throws(LiveObjectsError) {
        try requireHistory().trim(upTo: token.rawValue)
    }

    // MARK: For the sync engine

    /// The coalesced local changes of a type after a token (remote writes left out; an object
    /// inserted then deleted is a deletion marked `wasInserted`).
    package func localChanges(_ typeName: String, since token: HistoryToken) throws(LiveObjectsError)
        -> [PropertyValue: HistoryLog.Coalesced]
    {
        let history = try requireHistory()
        try checkHistoryRange(token, history)
        return history.coalesced(
            typeName, since: token.rawValue, schema: schema[typeName], localOnly: true, keepingInsertedDeletions: true)
    }

    /// Runs a write recorded in the history as remote: its changes are not local changes.
    package func writeRemote<T>(_ body: @Sendable (isolated Realm) throws -> sending T) throws -> sending T {
        history?.isRecordingRemote = true
        defer { history?.isRecordingRemote = false }
        return try write(body)
    }

    private func requireHistory() throws(LiveObjectsError) -> HistoryLog {
        guard let history = history else {
            throw LiveObjectsError(
                .invalidOperation,
                "the realm '\(configuration.identifier)' keeps no history (set Configuration.keepsHistory)")
        }
        return history
    }

    private func checkHistoryRange(_ token: HistoryToken, _ history: HistoryLog) throws(LiveObjectsError) {
        guard token.rawValue >= history.startToken else {
            throw LiveObjectsError(
                .historyTrimmed,
                "the history before \(HistoryToken(rawValue: history.startToken)) was trimmed; \(token) is older")
        }
        guard token.rawValue <= history.token else {
            throw LiveObjectsError(
                .historyTrimmed, "\(token) is newer than the last commit \(HistoryToken(rawValue: history.token))")
        }
    }
}

extension ChangeHistory {
    /// The changes of a model class (empty when it did not change).
    public subscript(type: Object.Type) -> TypeChangeHistory { self[type.className] }
}
