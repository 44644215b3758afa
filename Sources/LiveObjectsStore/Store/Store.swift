import Foundation

/// One step of the undo log of the open write, which is also the source of its changeset.
@usableFromInline
package enum UndoEntry {
    /// Rows `first ..< first + count` were appended.
    case append(table: Int32, first: Int32, count: Int32)
    /// A free slot was reused for a new row.
    case insert(table: Int32, row: Int32)
    case set(table: Int32, row: Int32, property: Int32, old: PropertyValue)
    case listInsert(table: Int32, row: Int32, property: Int32, index: Int32)
    case listRemove(table: Int32, row: Int32, property: Int32, index: Int32, old: PropertyValue)
    case listReplace(table: Int32, row: Int32, property: Int32, index: Int32, old: PropertyValue)
    case listMove(table: Int32, row: Int32, property: Int32, from: Int32, to: Int32)
    case remove(table: Int32, row: Int32, removed: RemovedRow)
}

/// A position in the undo log of the open write.
@usableFromInline
package struct Savepoint {
    package let index: Int
    /// The row count of the last entry, if it is an append that later appends may extend.
    package let lastAppendCount: Int32?

    package init(index: Int, lastAppendCount: Int32?) {
        self.index = index
        self.lastAppendCount = lastAppendCount
    }
}

/// The values of a removed row, kept so that a rollback can restore it.
@usableFromInline
package final class RemovedRow {
    package let values: [PropertyValue]
    package let generation: UInt32
    package init(values: [PropertyValue], generation: UInt32) {
        self.values = values
        self.generation = generation
    }
}

/// Told of property reads of managed objects (see ``Store/readRecorder``).
@usableFromInline
package protocol PropertyReadRecorder: AnyObject {
    func record(_ table: Table, _ property: Int)
}

/// The storage engine of a realm: dynamic (schema as data), column-oriented, with an undo log
/// for transactions.
///
/// A store is owned by one realm and used only inside that realm's isolation, so the properties
/// the layers above read on every access skip run-time exclusivity checks: each is an
/// `@inlinable` accessor over `@exclusivity(unchecked)` storage (`mutationCount` over
/// `_mutationCount`), since the attribute does not hold in another module.
@usableFromInline
package final class Store {
    /// The schema of the stored types.
    package let schema: Schema
    /// One table per object type, in schema order.
    package let tables: [Table]
    package let tablesByName: [String: Table]
    /// Tables by the `ObjectIdentifier` of their model class.
    @inlinable package var tablesByType: [ObjectIdentifier: Table] {
        get { _tablesByType }
        set { _tablesByType = newValue }
        _modify { yield &_tablesByType }
    }
    @exclusivity(unchecked) @usableFromInline var _tablesByType: [ObjectIdentifier: Table] = [:]
    /// Bumped on every change, committed or not: what cached query results are checked against.
    @inlinable package var mutationCount: UInt64 {
        get { _mutationCount }
        set { _mutationCount = newValue }
        _modify { yield &_mutationCount }
    }
    @exclusivity(unchecked) @usableFromInline var _mutationCount: UInt64 = 0
    /// While set, told of every property read of a managed object (to resolve Swift key paths
    /// into property names).
    @inlinable package var readRecorder: (any PropertyReadRecorder)? {
        get { _readRecorder }
        set { _readRecorder = newValue }
        _modify { yield &_readRecorder }
    }
    @exclusivity(unchecked) @usableFromInline var _readRecorder: (any PropertyReadRecorder)?
    /// The state the layer above keeps for this store between calls (the query layer's
    /// caches): an object retained once, released with the store; the store never looks
    /// inside. A raw pointer so that the layer above can lend it without retaining it.
    @inlinable package var attachment: UnsafeMutableRawPointer? {
        get { _attachment }
        set { _attachment = newValue }
        _modify { yield &_attachment }
    }
    @exclusivity(unchecked) @usableFromInline var _attachment: UnsafeMutableRawPointer?
    /// What owns the store (the live realm), for an object to find its realm; the store never
    /// looks at it.
    package weak var owner: AnyObject?
    /// The last frozen copy, reused while nothing changed (kept by Snapshot/, which alone knows
    /// its type).
    @inlinable package var frozenCache: (mutationCount: UInt64, frozen: AnyObject)? {
        get { _frozenCache }
        set { _frozenCache = newValue }
        _modify { yield &_frozenCache }
    }
    @exclusivity(unchecked) @usableFromInline var _frozenCache: (mutationCount: UInt64, frozen: AnyObject)?
    /// The version of the last commit.
    @inlinable package var version: UInt64 {
        get { _version }
        set { _version = newValue }
        _modify { yield &_version }
    }
    @exclusivity(unchecked) @usableFromInline var _version: UInt64 = 0
    /// Whether a write is open.
    @inlinable package var isInWrite: Bool {
        get { _isInWrite }
        set { _isInWrite = newValue }
        _modify { yield &_isInWrite }
    }
    @exclusivity(unchecked) @usableFromInline var _isInWrite: Bool = false
    /// Set by `Realm.close()`: writes are refused from then on.
    @inlinable package var isClosed: Bool {
        get { _isClosed }
        set { _isClosed = newValue }
        _modify { yield &_isClosed }
    }
    @exclusivity(unchecked) @usableFromInline var _isClosed: Bool = false
    @inlinable package var undoLog: [UndoEntry] {
        get { _undoLog }
        set { _undoLog = newValue }
        _modify { yield &_undoLog }
    }
    @exclusivity(unchecked) @usableFromInline var _undoLog: [UndoEntry] = []
    /// The number of slots of each table when the open write began.
    @inlinable package var rowCountAtWriteStart: [Int] {
        get { _rowCountAtWriteStart }
        set { _rowCountAtWriteStart = newValue }
        _modify { yield &_rowCountAtWriteStart }
    }
    @exclusivity(unchecked) @usableFromInline var _rowCountAtWriteStart: [Int] = []
    /// The first error raised where it could not be thrown (property setters), thrown by the
    /// enclosing realm call.
    @inlinable package var pendingError: LiveObjectsError? {
        get { _pendingError }
        set { _pendingError = newValue }
        _modify { yield &_pendingError }
    }
    @exclusivity(unchecked) @usableFromInline var _pendingError: LiveObjectsError?
    /// Whether this is a realm's live store, whose objects change (not a frozen copy or a
    /// key-path probe, which never do): reads of other stores' objects are never observed.
    @inlinable package var isLive: Bool {
        get { _isLive }
        set { _isLive = newValue }
        _modify { yield &_isLive }
    }
    @exclusivity(unchecked) @usableFromInline var _isLive: Bool = false
    /// Embedded objects whose parent the journal entry being replayed may have changed:
    /// checked by ``replayedEmbeddedWithoutOneParent()`` before the entry commits.
    @inlinable var replayedEmbedded: [(table: Table, row: Int32)] {
        get { _replayedEmbedded }
        set { _replayedEmbedded = newValue }
        _modify { yield &_replayedEmbedded }
    }
    @exclusivity(unchecked) @usableFromInline var _replayedEmbedded: [(table: Table, row: Int32)] = []
    /// The commit pipeline, ordered by stage (see ``CommitListener``).
    var listeners: [any CommitListener] = []
    /// The mixed properties that ever held a link, by the index of the link's target table;
    /// nil until a delete first needs it (`Store+MixedLinks.swift`).
    var mixedLinkSources: [Int: Set<MixedLinkSource>]?
    /// For each mixed property a delete scanned, the rows whose values link to each object, as
    /// of a version of the property's column (`Store+MixedLinks.swift`).
    var mixedLinkHolders: [MixedLinkSource: MixedLinkHolders] = [:]
    /// The members of the set last looked up in, by position (`Store+Write.swift`).
    var setMembers: SetMembers?

    /// Creates an empty store for a schema, after validating it.
    ///
    /// - Throws: what ``Schema/validate()`` throws.
    package convenience init(schema: Schema) throws(LiveObjectsError) {
        try schema.validate()
        self.init(validatedSchema: schema)
    }

    /// Creates an empty store for a schema another store already has (a frozen copy's), without
    /// validating it again: a commit with a subscription makes such a copy, and validating took
    /// about a fifth of it.
    package init(validatedSchema schema: Schema) {
        self.schema = schema
        var tables: [Table] = []
        var byName: [String: Table] = [:]
        for (i, objectSchema) in schema.objectSchemas.enumerated() {
            let table = Table(index: i, schema: objectSchema)
            tables.append(table)
            byName[objectSchema.name] = table
        }
        self.tables = tables
        self.tablesByName = byName
        for table in tables { table.store = self }
        for table in tables {
            var columns: [Column?] = []
            for (p, property) in table.schema.properties.enumerated() {
                switch property.type {
                case .linkingObjects:
                    columns.append(nil)
                case .object:
                    let target = byName[property.objectType!]!
                    columns.append(Column.make(for: property, target: target))
                    let backlinks = BacklinkColumn(source: table, property: p)
                    target.addIncoming(backlinks)
                    table.setOutgoing(p, backlinks)
                default:
                    columns.append(Column.make(for: property, target: nil))
                }
            }
            table.setColumns(columns)
        }
        for table in tables {
            for (p, property) in table.schema.properties.enumerated()
            where property.type == .linkingObjects {
                let origin = byName[property.objectType!]!
                let originProperty = origin.propertyIndex[property.originProperty!]!
                table.setLinkingObjectsSource(p, origin.outgoing[originProperty]!)
            }
        }
    }

    deinit {
        if let attachment { Unmanaged<AnyObject>.fromOpaque(attachment).release() }
    }

    /// The table of a type name.
    package func table(named name: String) throws(LiveObjectsError) -> Table {
        if let table = tablesByName[name] { return table }
        throw LiveObjectsError(
            .unknownType, "there is no object type named '\(name)'", objectType: name)
    }

    /// Records an error that a non-throwing accessor could not throw.
    package func recordError(_ error: LiveObjectsError) {
        if pendingError == nil { pendingError = error }
    }

    /// Returns and clears the recorded error.
    package func takePendingError() -> LiveObjectsError? {
        defer { pendingError = nil }
        return pendingError
    }

    /// Fails unless a write is open.
    package func requireWrite(_ table: Table? = nil, property: String? = nil)
        throws(LiveObjectsError)
    {
        guard isInWrite else {
            throw LiveObjectsError(
                .notInWriteTransaction,
                "a realm can only be changed inside a write transaction",
                objectType: table?.name, property: property)
        }
    }
}
