import LiveObjectsStore

/// The change history of a realm: one entry per object changed by each commit, kept per type in
/// columns, coalesced when read.
///
/// Only types with a primary key are recorded (objects are named by primary key, which stays
/// the same across saves, loads and devices); embedded types and types without a primary key
/// are not. Used only inside the isolation of the realm that owns it.
package final class HistoryLog: CommitListener {
    /// What happened to an object in one commit.
    package enum Kind: UInt8, Sendable {
        case insert = 0
        case update = 1
        case delete = 2
    }

    /// The entries of one type, as parallel columns (about 30 bytes an entry).
    package struct TypeLog {
        package var tokens: [UInt64] = []
        package var keys: [PropertyValue] = []
        /// The kind's raw value, plus ``HistoryLog/remoteFlag`` for remote writes.
        package var kinds: [UInt8] = []
        /// For updates, an index into ``HistoryLog/propertySets``; -1 otherwise.
        package var properties: [Int32] = []

        package var count: Int { tokens.count }

        mutating func append(_ token: UInt64, _ key: PropertyValue, _ kind: UInt8, _ properties: Int32) {
            tokens.append(token)
            keys.append(key)
            kinds.append(kind)
            self.properties.append(properties)
        }

        /// The index of the first entry with a token above `token`.
        func firstIndex(after token: UInt64) -> Int {
            tokens.partitioningIndex { $0 > token }
        }
    }

    /// Marks an entry written by a remote write (a sync engine applying server changes).
    package static let remoteFlag: UInt8 = 0x80

    /// The token of the last commit recorded.
    package private(set) var token: UInt64 = 0
    /// Changes after this token are all kept; earlier ones were trimmed.
    package private(set) var startToken: UInt64 = 0
    /// Entries per type name.
    package private(set) var types: [String: TypeLog] = [:]
    /// The distinct sets of changed property names, sorted, shared by the entries.
    package private(set) var propertySets: [[String]] = []
    private var propertySetIndex: [[String]: Int32] = [:]
    /// While set, commits are recorded as remote writes.
    package var isRecordingRemote = false

    package init() {}

    /// The number of entries kept.
    package var count: Int { types.values.reduce(0) { $0 + $1.count } }

    /// Records a commit.
    package func record(_ changes: ChangeSet, _ store: Store) {
        token += 1
        let flag = isRecordingRemote ? Self.remoteFlag : 0
        for (name, change) in changes.tables {
            guard let table = store.tablesByName[name], !table.schema.isEmbedded,
                let pk = table.primaryKeyProperty
            else { continue }
            var log = types[name] ?? TypeLog()
            // Deletions first: a primary key deleted and inserted again in one commit reads as
            // an update.
            for key in change.deletions.values.sorted(by: Self.order) {
                log.append(token, key, Kind.delete.rawValue | flag, -1)
            }
            for key in change.insertions {
                guard let row = table.row(for: key) else { continue }
                log.append(token, table.value(row, pk), Kind.insert.rawValue | flag, -1)
            }
            for (key, indices) in change.modifications.sorted(by: { $0.key < $1.key }) {
                guard let row = table.row(for: key) else { continue }
                let names = indices.sorted().map { table.schema.properties[$0].name }
                log.append(token, table.value(row, pk), Kind.update.rawValue | flag, internSet(names))
            }
            if log.count > 0 { types[name] = log }
        }
    }

    // MARK: Commit pipeline

    package var stage: CommitStage { .history }

    /// Records the commit before it is final, so that a snapshot saved for it holds it.
    package func prepare(_ commit: Commit) throws(LiveObjectsError) {
        record(commit.changes, commit.store)
    }

    package func abandon(_ commit: Commit) {
        forgetLastCommit()
    }

    /// The commit was recorded when it was prepared.
    package func committed(_ commit: Commit) {}

    /// A cancelled write recorded nothing.
    package func cancelled() {}

    /// Removes the entries of the last commit recorded: for a commit that was rolled back
    /// after ``record(_:_:)`` because it could not be made durable.
    func forgetLastCommit() {
        guard token > startToken else { return }
        for (name, var log) in types {
            let first = log.firstIndex(after: token - 1)
            guard first < log.count else { continue }
            log.tokens.removeSubrange(first...)
            log.keys.removeSubrange(first...)
            log.kinds.removeSubrange(first...)
            log.properties.removeSubrange(first...)
            types[name] = log.count == 0 ? nil : log
        }
        token -= 1
    }

    /// A deterministic order of primary keys (for stable files).
    static func order(_ a: PropertyValue, _ b: PropertyValue) -> Bool {
        a.description < b.description
    }

    private func internSet(_ names: [String]) -> Int32 {
        if let index = propertySetIndex[names] { return index }
        let index = Int32(propertySets.count)
        propertySets.append(names)
        propertySetIndex[names] = index
        return index
    }

    /// Drops the entries up to `token` (at most the current token).
    package func trim(upTo token: UInt64) {
        let token = min(token, self.token)
        guard token > startToken else { return }
        startToken = token
        for (name, log) in types {
            let first = log.firstIndex(after: token)
            if first == log.count {
                types[name] = nil
            } else if first > 0 {
                var kept = TypeLog()
                kept.tokens = Array(log.tokens[first...])
                kept.keys = Array(log.keys[first...])
                kept.kinds = Array(log.kinds[first...])
                kept.properties = Array(log.properties[first...])
                types[name] = kept
            }
        }
        if types.isEmpty {
            propertySets = []
            propertySetIndex = [:]
        }
    }

    /// Forgets every entry, keeping the token: for a store whose data was replaced (a
    /// migration). Asking for changes since an earlier token then fails.
    package func restart() {
        types = [:]
        propertySets = []
        propertySetIndex = [:]
        startToken = token
    }

    // MARK: Loading

    /// Replaces the state with one read from a file.
    package func load(token: UInt64, startToken: UInt64) {
        self.token = token
        self.startToken = min(startToken, token)
        types = [:]
        propertySets = []
        propertySetIndex = [:]
    }

    /// Appends an entry read from a file (tokens ascending per type).
    package func loadEntry(
        type: String, token: UInt64, key: PropertyValue, kind: Kind, isRemote: Bool, properties: [String]
    ) {
        let set = kind == .update ? internSet(properties.sorted()) : -1
        types[type, default: TypeLog()].append(token, key, kind.rawValue | (isRemote ? Self.remoteFlag : 0), set)
    }

    // MARK: Reading

    /// The coalesced change of one object.
    package struct Coalesced: Sendable, Hashable {
        package var kind: Kind
        package var properties: Set<String>
        /// The token of the last entry folded in.
        package var lastToken: UInt64
        /// For a deletion read with `keepingInsertedDeletions`: the object was inserted after
        /// the token asked for (someone may have seen it since).
        package var wasInserted = false
    }

    /// The coalesced changes of one type after `token`, by primary key.
    ///
    /// Insert then update is an insert; insert then delete is nothing; update then delete is a
    /// delete; delete then insert is an update of every property. With `localOnly`, entries of
    /// remote writes are skipped.
    ///
    /// - Complexity: O(entries after `token`).
    /// With `keepingInsertedDeletions`, insert then delete is a deletion marked
    /// ``Coalesced/wasInserted`` instead of nothing.
    package func coalesced(
        _ type: String, since token: UInt64, schema: ObjectSchema?, localOnly: Bool = false,
        keepingInsertedDeletions: Bool = false
    ) -> [PropertyValue: Coalesced] {
        guard let log = types[type] else { return [:] }
        var result: [PropertyValue: Coalesced] = [:]
        let all = Set(schema?.properties.filter { $0.isStored && !$0.isPrimaryKey }.map(\.name) ?? [])
        for i in log.firstIndex(after: token)..<log.count {
            let raw = log.kinds[i]
            if localOnly && raw & Self.remoteFlag != 0 { continue }
            let kind = Kind(rawValue: raw & ~Self.remoteFlag)!
            let key = log.keys[i]
            let entryToken = log.tokens[i]
            switch (result[key]?.kind, kind) {
            case (nil, .insert):
                result[key] = Coalesced(kind: .insert, properties: [], lastToken: entryToken)
            case (nil, .update):
                result[key] = Coalesced(
                    kind: .update, properties: Set(propertySets[Int(log.properties[i])]), lastToken: entryToken)
            case (nil, .delete):
                result[key] = Coalesced(kind: .delete, properties: [], lastToken: entryToken)
            case (.insert?, .update):
                result[key]!.lastToken = entryToken
            case (.insert?, .delete):
                result[key] =
                    keepingInsertedDeletions
                    ? Coalesced(kind: .delete, properties: [], lastToken: entryToken, wasInserted: true) : nil
            case (.update?, .update):
                result[key]!.properties.formUnion(propertySets[Int(log.properties[i])])
                result[key]!.lastToken = entryToken
            case (.update?, .delete):
                result[key] = Coalesced(kind: .delete, properties: [], lastToken: entryToken)
            case (.delete?, .insert):
                result[key] =
                    result[key]!.wasInserted
                    ? Coalesced(kind: .insert, properties: [], lastToken: entryToken)
                    : Coalesced(kind: .update, properties: all, lastToken: entryToken)
            case (.insert?, .insert), (.update?, .insert), (.delete?, .update), (.delete?, .delete):
                // Cannot follow one another in a consistent log; keep the latest.
                result[key] = Coalesced(
                    kind: kind, properties: kind == .update ? Set(propertySets[Int(log.properties[i])]) : [],
                    lastToken: entryToken)
            }
        }
        return result
    }
}

extension Store {
    /// The change history of the store's realm, when it keeps one.
    package var history: HistoryLog? { listener(HistoryLog.self) }
}
