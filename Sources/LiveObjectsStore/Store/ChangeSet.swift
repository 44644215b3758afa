/// What one committed write changed in one table.
///
/// Rows inserted and then deleted in the same write appear nowhere; changes to rows inserted in
/// the write are folded into the insertion; rows deleted in the write are not also reported as
/// modified.
public struct TableChanges: Sendable, Hashable {
    /// Keys of the objects inserted, in ascending order (kept as runs of consecutive rows).
    public var insertions = ObjectKeys()
    /// Keys of the objects deleted, with their primary key if the type has one.
    public var deletions: [ObjectKey: PropertyValue] = [:]
    /// Keys of the objects modified, with the indices of the properties that changed.
    public var modifications: [ObjectKey: Set<Int>] = [:]

    /// Whether nothing changed.
    public var isEmpty: Bool { insertions.isEmpty && deletions.isEmpty && modifications.isEmpty }

    package init() {}
}

/// Everything one committed write changed: the changeset that notifications, the journal and the
/// change history are built from.
public struct ChangeSet: Sendable, Hashable {
    /// The realm version the write produced.
    public var version: UInt64
    /// Changes per object type name; types the write did not touch are absent.
    public var tables: [String: TableChanges]

    /// Whether the write changed nothing.
    public var isEmpty: Bool { tables.values.allSatisfy(\.isEmpty) }

    package init(version: UInt64, tables: [String: TableChanges]) {
        self.version = version
        self.tables = tables
    }
}
