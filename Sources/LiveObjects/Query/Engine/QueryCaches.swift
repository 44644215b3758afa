/// What the query layer keeps for one store between queries: the typed condition being built,
/// parsed predicate templates, a spare argument buffer, the key-path probe, and per table the
/// traced key paths and the derived columns that scans and range lookups reuse (folded
/// strings, sorted indexes), each checked against its column's version before reuse.
///
/// Made on first use and kept by the store (``Store/queries``); like the store, used inside
/// its realm's isolation only.
final class QueryCaches {
    /// The caches of one table.
    struct TableCaches {
        /// Property names read by Swift key paths of the model class, traced once.
        var tracedKeyPaths: [AnyKeyPath: TracedKeyPath] = [:]
        /// The key paths traced most recently, found by identity before hashing: a key path
        /// literal is one instance for the life of the process. Each is also a key of
        /// `tracedKeyPaths`, which holds it, so its identity is never reused by another one.
        var recentKeyPaths: [(id: ObjectIdentifier, traced: TracedKeyPath)] = []
        /// Sorted indexes of indexed properties, for ranges; rebuilt when stale.
        var sortedIndexes: [Int: SortedIndex] = [:]
        /// Folded forms of string columns for `[c]`/`[d]` matching, by property and options.
        var foldedColumns: [Int: FoldedColumn] = [:]
    }

    /// The typed condition (`where { … }`) being built.
    @exclusivity(unchecked) var typedQueryState = TypedQueryState()
    /// How many typed conditions are being built, one inside another (a condition may build
    /// another on other results).
    @exclusivity(unchecked) var typedQueryDepth = 0
    /// The states of the conditions being built around the innermost one, innermost last:
    /// each comes back when the one inside it is done.
    @exclusivity(unchecked) var outerTypedQueryStates: [TypedQueryState] = []
    /// An empty array with room, which `Results.filter(_:_:)` fills with its arguments and
    /// empties again (one caller at a time, as for all of the store).
    @exclusivity(unchecked) var spareArguments: [PropertyValue] = []
    /// Predicates of the string language parsed on this store, for reuse with new arguments.
    let predicateTemplates = PredicateTemplates()
    /// A one-object-per-table copy of the schema that Swift key paths are traced on.
    var probeStore: Store?
    /// The caches of each table, by table index.
    @exclusivity(unchecked) var tables: [TableCaches]

    init(tableCount: Int) {
        tables = Array(repeating: TableCaches(), count: tableCount)
    }
}

extension Store {
    /// The query layer's state for this store, made on first use.
    @inline(__always)
    var queries: QueryCaches {
        // The attachment is only ever set here, to a QueryCaches: the cast is never wrong, and
        // unchecked it costs nothing on the typed-condition path, which reads the state a few
        // times per condition.
        if let attachment { return unsafeDowncast(attachment, to: QueryCaches.self) }
        return makeQueryCaches()
    }

    @inline(never)
    private func makeQueryCaches() -> QueryCaches {
        let context = QueryCaches(tableCount: tables.count)
        attachment = context
        return context
    }
}
