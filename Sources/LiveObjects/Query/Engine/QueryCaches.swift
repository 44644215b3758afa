import LiveObjectsStore

/// What the query layer keeps for one store between queries: the typed condition being built,
/// parsed predicate templates, a spare argument buffer, the key-path probe, and per table the
/// traced key paths and the derived columns that scans and range lookups reuse (folded
/// strings, sorted indexes), each checked against its column's version before reuse.
///
/// Made on first use and kept by the store (``Store/withQueries(_:)``); like the store, used
/// inside its realm's isolation only.
///
/// The fields read while a typed condition is built are `@exclusivity(unchecked)`, as the
/// store's hot fields are: the dynamic exclusivity checks cost more than the reads.
final class QueryCaches {
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
    /// Property names read by Swift key paths of each table's model class (by table index),
    /// traced once.
    @exclusivity(unchecked) var tracedKeyPaths: [[AnyKeyPath: TracedKeyPath]]
    /// The key paths traced most recently, found by identity before hashing: a key path
    /// literal is one instance for the life of the process. Each is also a key of
    /// `tracedKeyPaths`, which holds it, so its identity is never reused by another one.
    @exclusivity(unchecked) var recentKeyPaths: [(table: Int, id: ObjectIdentifier, traced: TracedKeyPath)] = []
    /// Sorted indexes of indexed properties, for ranges, by table index and property; rebuilt
    /// when stale.
    var sortedIndexes: [[Int: SortedIndex]]
    /// Folded forms of string columns for `[c]`/`[d]` matching, by table index, then property
    /// and options.
    var foldedColumns: [[Int: FoldedColumn]]
    /// The most work one evaluation of a query may do (``Realm/Configuration/maximumQueryWork``,
    /// set when the realm opens).
    var maximumWork = QueryCaches.defaultMaximumWork

    /// The default of `maximumWork`: 100,000,000 units (objects and list elements visited).
    static let defaultMaximumWork = 100_000_000

    init(tableCount: Int) {
        tracedKeyPaths = Array(repeating: [:], count: tableCount)
        sortedIndexes = Array(repeating: [:], count: tableCount)
        foldedColumns = Array(repeating: [:], count: tableCount)
    }

    /// The traced key path found by identity among the recent ones.
    func recent(_ id: ObjectIdentifier, table: Int) -> TracedKeyPath? {
        for i in recentKeyPaths.indices where recentKeyPaths[i].id == id && recentKeyPaths[i].table == table {
            return recentKeyPaths[i].traced
        }
        return nil
    }

    /// For a recent key path that reads one property of the table it starts at: that property's
    /// position and the table it leads to, read in place (copying the traced key path would
    /// retain and release its names).
    func recentProperty(_ id: ObjectIdentifier, table: Int) -> (property: Int, target: Int)? {
        for i in recentKeyPaths.indices where recentKeyPaths[i].id == id && recentKeyPaths[i].table == table {
            guard recentKeyPaths[i].traced.names.count == 1, let property = recentKeyPaths[i].traced.firstProperty
            else { return nil }
            return (property, recentKeyPaths[i].traced.target)
        }
        return nil
    }

    /// Keeps a traced key path, already among `tracedKeyPaths`, among the few found by identity
    /// (the oldest makes room).
    func rememberRecent(_ keyPath: AnyKeyPath, _ traced: TracedKeyPath, table: Int) {
        if recentKeyPaths.count >= 32 { recentKeyPaths.removeFirst() }
        recentKeyPaths.append((table, ObjectIdentifier(keyPath), traced))
    }
}

extension Store {
    /// Runs `body` with the query layer's state for this store, made on first use.
    ///
    /// The state is lent, not retained: typed conditions read it a few times each, and a
    /// retain and release per read (atomic operations) cost about 15% of a typed indexed
    /// lookup (`indexed_eq_count`, 2.6 → 3.0 ms per 10,000 in the benchmark).
    @inline(__always)
    func withQueries<Result>(_ body: (QueryCaches) -> Result) -> Result {
        let attachment = attachment ?? makeQueryCaches()
        // The attachment is only ever set by `makeQueryCaches`, to a retained QueryCaches that
        // the store releases when it goes: the reference is valid for the store's lifetime.
        return Unmanaged<QueryCaches>.fromOpaque(attachment)._withUnsafeGuaranteedRef(body)
    }

    /// The query layer's state for this store (retained), for paths that run once per query.
    var queries: QueryCaches { withQueries { $0 } }

    @inline(never)
    private func makeQueryCaches() -> UnsafeMutableRawPointer {
        let pointer = Unmanaged.passRetained(QueryCaches(tableCount: tables.count)).toOpaque()
        attachment = pointer
        return pointer
    }
}

/// What building one typed condition has met so far: its first error and how many subquery
/// variables it has named.
struct TypedQueryState {
    /// The first error met, if any (in an array, which is cheaper to save and restore than an
    /// optional error).
    var errors: [LiveObjectsError] = []
    var variableCount = 0
    /// The thread's condition before this one began (``TypedCondition``), given back when it
    /// ends.
    var outerCondition: UInt = 0
}

/// What tracing a key path found: the property names it reads, and where they lead.
struct TracedKeyPath {
    /// The property names, link by link.
    let names: [String]
    /// The position in the store of the table the names lead to: the target of the last link
    /// followed, or the starting table when none is.
    let target: Int
    /// The position of the first name's property in the starting table.
    let firstProperty: Int?
}
