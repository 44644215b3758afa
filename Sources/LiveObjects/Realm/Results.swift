import Foundation
import LiveObjectsStore

/// The objects of a type in a realm, optionally filtered, sorted, made distinct and sliced: a
/// lazy, live collection.
///
/// Nothing runs until the results are read. Every read sees the current state: after a write,
/// the same `Results` shows the change. The evaluation is cached until the realm changes.
///
/// ```swift
/// let young = realm.objects(Dog.self)
///     .where { $0.age < 3 && $0.owner.name.contains("ann", options: .caseInsensitive) }
///     .sorted(by: \.name, comparison: .natural)
/// let named = try realm.objects(Dog.self).filter("name BEGINSWITH[c] %@", "re")
/// ```
///
/// Unsorted results are in storage order, which is stable between writes but is not insertion
/// order once objects were deleted.
public struct Results<Element: Object>: RandomAccessCollection {
    /// What the results ask for and their last evaluation, in one object: copying results
    /// retains one reference, and refining them allocates one object.
    @usableFromInline let cache: ResultsCache

    init(store: Store, table: Table?, query: QuerySpec = QuerySpec()) {
        cache = ResultsCache(store: store, table: table, query: query)
    }

    @usableFromInline init(cache: ResultsCache) {
        self.cache = cache
    }

    var store: Store {
        @inline(__always) get { cache.store }
    }
    var table: Table? {
        @inline(__always) get { cache.table }
    }
    /// The query (made anew for a lookup: hot paths ask the cache for its rows and count).
    var query: QuerySpec {
        @inline(__always) get { cache.query }
    }

    /// The matching rows, in order, evaluated at most once per change of the realm.
    var rows: [Int32] { cache.rows }

    public var startIndex: Int { 0 }

    /// - Complexity: O(1) once evaluated.
    public var endIndex: Int {
        cache.store.observeResultsRead()
        guard let table = cache.table else { return 0 }
        return cache.isAll ? table.liveCount : cache.rows.count
    }

    /// The number of results.
    ///
    /// Equality with one value on an indexed property or the primary key, the usual lookup,
    /// is counted from the index without collecting its rows (which a later read still does
    /// when it needs them).
    ///
    /// - Complexity: O(1) for all objects of a type and once evaluated; otherwise the cost of
    ///   evaluating the results (see ``filter(_:_:)``).
    public var count: Int {
        cache.store.observeResultsRead()
        return cache.count
    }

    /// - Complexity: O(1) once evaluated.
    public subscript(position: Int) -> Element {
        let table = cache.table!
        let row = cache.isAll && table.liveCount == table.rowCount ? Int32(position) : cache.rows[position]
        return Self.object(cache.store, table, row)
    }

    @inline(__always)
    static func object(_ store: Store, _ table: Table, _ row: Int32) -> Element {
        ObjectRowIterator.object(store, table, row)
    }

    /// Iterates over the results as they are when iteration starts (evaluated once).
    ///
    /// While it hands out one element it starts loading the values of an element a few
    /// positions ahead, so that reading a property of each element does not wait for one cache
    /// miss after another.
    public struct Iterator: IteratorProtocol {
        var rows: ObjectRowIterator<Element>

        public mutating func next() -> Element? { rows.next() }
    }

    /// An iterator over the results as they are now.
    public func makeIterator() -> Iterator {
        store.observeResultsRead()
        return Iterator(rows: ObjectRowIterator(store: store, table: table, rows: table == nil ? [] : rows))
    }

    // MARK: Refining

    /// Results that also match a predicate in the string language.
    ///
    /// ```swift
    /// try realm.objects(Dog.self).filter("age > %@ AND name CONTAINS[cd] %@", 3, "fi")
    /// ```
    ///
    /// - Parameters:
    ///   - predicate: The predicate (see the query language in the README).
    ///   - arguments: Values for `%@`, `%d`, `%f`, `%K` and `$0`, `$1`, ….
    /// - Throws: `invalidQuery` with the column of the problem, `unknownProperty`, or
    ///   `limitExceeded` for an over-long or over-nested predicate.
    /// - Complexity: O(length of the predicate) to parse and check it (a predicate seen before
    ///   is a template lookup); reading the results then costs O(log n + m) for equality on the
    ///   primary key or an indexed property (m matches) and O(n) for a scan of the n objects,
    ///   each bounded by ``Realm/Configuration/maximumQueryWork``.
    public func filter(_ predicate: String, _ arguments: Any...) throws(LiveObjectsError) -> Results {
        // The converted arguments go into the store's spare array, taken and given back, so that
        // a filter run in a loop does not allocate one per call.
        var values: [PropertyValue] = []
        store.withQueries { swap(&values, &$0.spareArguments) }
        defer {
            values.removeAll(keepingCapacity: true)
            store.withQueries { swap(&values, &$0.spareArguments) }
        }
        values.reserveCapacity(arguments.count)
        for argument in arguments { values.append(try PropertyValue(argument: argument)) }
        return try filter(predicate, arguments: values)
    }

    /// Results that also match a predicate in the string language, with dynamic arguments.
    ///
    /// - Complexity: As ``filter(_:_:)``.
    public func filter(_ predicate: String, arguments: [PropertyValue]) throws(LiveObjectsError) -> Results {
        switch try store.queries.predicateTemplates.parseForLookup(predicate, arguments: arguments) {
        case .tree(let syntax):
            return try adding(syntax, text: predicate)
        case .equality(let value, let template):
            // The usual lookup on all objects of a type: its results made directly.
            if cache.isAll, let table, let p = template.position(in: table),
                QueryCompiler.canLookUp(property: p, value: value, in: table)
            {
                return Results(cache: ResultsCache(store: store, table: table, lookup: p, key: value))
            }
            return try adding(template.tree.substituting(arguments), text: predicate)
        }
    }

    /// Adds a predicate, checking it against the schema now (or taking `bound`, its binding
    /// found by the caller).
    func adding(_ syntax: PredicateSyntax, text: String?, bound known: BoundQuery? = nil) throws(LiveObjectsError)
        -> Results
    {
        try adding(QuerySpec.Filter(syntax: syntax, text: text), bound: known)
    }

    /// Adds a filter, checking it against the schema now (or taking `bound`, its binding found
    /// by the caller).
    func adding(_ filter: QuerySpec.Filter, bound known: BoundQuery?) throws(LiveObjectsError) -> Results {
        Results(cache: try cache.adding(filter, bound: known))
    }

    /// Results sorted by a key path, replacing any earlier sort.
    ///
    /// - Complexity: O(1) to make; O(n log n) when the results are next read after a change.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true, comparison: StringComparison = .exact)
        throws(LiveObjectsError) -> Results
    {
        try sorted(by: [SortField(keyPath, ascending: ascending, comparison: comparison)])
    }

    /// Results sorted by several fields, the first one deciding first, replacing any earlier
    /// sort.
    ///
    /// - Throws: `unknownProperty`, or `invalidQuery` for a key path that is not a single value.
    /// - Complexity: As ``sorted(byKeyPath:ascending:comparison:)``.
    public func sorted(by fields: [SortField]) throws(LiveObjectsError) -> Results {
        if let table { _ = try RowSorter.bind(fields, table: table, store: store) }
        var query = query
        query.sorts = fields
        return Results(store: store, table: table, query: query)
    }

    /// Results with one object per distinct combination of the given key paths' values (the
    /// first one in the current order).
    ///
    /// - Complexity: O(1) to make; O(n) hashing when the results are next read after a change.
    public func distinct(byKeyPaths keyPaths: [String]) throws(LiveObjectsError) -> Results {
        if let table {
            for keyPath in keyPaths {
                _ = try RowSorter.bind([SortField(keyPath)], table: table, store: store)
            }
        }
        var query = query
        query.distinct = keyPaths
        return Results(store: store, table: table, query: query)
    }

    /// The first `count` results (after any offset).
    ///
    /// - Complexity: O(1); reading still evaluates the filter and sort in full.
    public func limit(_ count: Int) -> Results {
        var query = query
        query.limit = Swift.max(0, count)
        return Results(store: store, table: table, query: query)
    }

    /// The results after skipping the first `count`.
    ///
    /// - Complexity: O(1); reading still evaluates the filter and sort in full.
    public func offset(_ count: Int) -> Results {
        var query = query
        query.offset = Swift.max(0, count)
        return Results(store: store, table: table, query: query)
    }
}

extension QuerySpec {
    /// Evaluates the query. Binding was checked when the parts were added, so binding errors
    /// here can only come from a changed schema; they give no rows.
    ///
    /// - Throws: `limitExceeded` past ``Realm/Configuration/maximumQueryWork``, `cancelled`
    ///   when the task is cancelled.
    func evaluate(table: Table, store: Store, cache: ResultsCache? = nil) throws(LiveObjectsError) -> [Int32] {
        var rows: [Int32]?
        if let combined = combinedFilter {
            var bound = cache?.bound
            if bound == nil {
                bound = try? QueryCompiler.bind(combined.syntax, to: table, store: store, text: combined.text)
                cache?.bound = bound
            }
            guard let bound else { return [] }
            do {
                rows = try bound.filter(nil, table: table, budget: store.queries.maximumWork)
            } catch {
                throw error.error(query: combined.text ?? combined.syntax.description, table: table)
            }
        }
        var result = rows ?? table.liveRows
        if !sorts.isEmpty {
            var sorter = cache?.sorter
            if sorter == nil {
                sorter = try? RowSorter.bind(sorts, table: table, store: store)
                cache?.sorter = sorter
            }
            if let sorter { result = sorter.sort(result) }
        }
        if !distinct.isEmpty {
            let paths = distinct.compactMap {
                try? BoundPath.resolve($0.split(separator: ".").map(String.init), from: table, store: store)
            }
            var seen = Set<[PropertyValue]>()
            result = result.filter { row in seen.insert(paths.map { $0.value(from: row) }).inserted }
        }
        if offset > 0 { result = Array(result.dropFirst(offset)) }
        if let limit { result = Array(result.prefix(limit)) }
        return result
    }
}

/// What a `Results` asks for, its last evaluation, and its bound predicate and sorter.
@usableFromInline
final class ResultsCache {
    let store: Store
    let table: Table?
    /// ``store`` and ``table`` again, not counted, for the paths that only borrow them (a
    /// lookup's count and the end of its condition): a strong reference read from a field is
    /// retained and released around its use, atomic operations that wait for the loads in
    /// flight.
    let unretainedStore: Unmanaged<Store>
    let unretainedTable: Unmanaged<Table>?
    /// What the results ask for, unless they are a lookup.
    private let spec: QuerySpec
    /// For the usual lookup, results of all objects of a type whose indexed property (or
    /// primary key) equals a value: the property's position (-1 for other results) and the
    /// value, which counting and reading the results use directly. Its query and binding are
    /// made only when something else needs them.
    private(set) var lookupProperty: Int
    private(set) var lookupKey: PropertyValue
    /// The last evaluation, and the realm's mutation count it was made at.
    var evaluatedRows: [Int32]?
    var mutationCount: UInt64 = 0
    var bound: BoundQuery?
    var sorter: RowSorter?
    /// For results of all objects of a type: the last results of a lookup made from them
    /// (``lookup(_:_:)``), taken again by the next lookup once nothing else holds them.
    private var spareLookup: ResultsCache?

    init(store: Store, table: Table?, query: QuerySpec, bound: BoundQuery? = nil) {
        self.store = store
        self.table = table
        unretainedStore = Unmanaged.passUnretained(store)
        unretainedTable = table.map(Unmanaged.passUnretained)
        self.spec = query
        lookupProperty = -1
        lookupKey = .null
        self.bound = bound
    }

    /// Results of a lookup, which the caller has checked can use an index
    /// (``QueryCompiler/canLookUp(property:value:in:)``).
    init(store: Store, table: Table, lookup property: Int, key: PropertyValue) {
        self.store = store
        self.table = table
        unretainedStore = Unmanaged.passUnretained(store)
        unretainedTable = Unmanaged.passUnretained(table)
        self.spec = QuerySpec()
        lookupProperty = property
        lookupKey = key
    }

    var isLookup: Bool { lookupProperty >= 0 }

    /// The results of a lookup on these results of all objects of a type, which the caller has
    /// checked can use an index (``QueryCompiler/canLookUp(property:value:in:)``).
    ///
    /// Counting matches in a loop (`dogs.where { $0.name == name }.count`) makes results per
    /// lookup and drops them at once: the last ones made are kept, and taken again when nothing
    /// else holds them (no `Results`, iterator or subscription: a reference count of one, which
    /// only this realm's isolation can change), instead of allocating new ones and retaining
    /// and releasing the store and the table for them.
    func lookup(_ property: Int, _ key: PropertyValue) -> ResultsCache {
        guard isKnownUniquelyReferenced(&spareLookup), let spare = spareLookup else {
            let made = ResultsCache(store: store, table: table!, lookup: property, key: key)
            spareLookup = made
            return made
        }
        spare.lookupProperty = property
        spare.lookupKey = key
        spare.evaluatedRows = nil
        spare.mutationCount = 0
        spare.bound = nil
        spare.sorter = nil
        return spare
    }

    /// What the results ask for.
    var query: QuerySpec {
        guard isLookup, let table else { return spec }
        return QuerySpec(
            filter: QuerySpec.Filter(equality: table.schema.properties[lookupProperty].name, value: lookupKey))
    }

    /// Whether the results are all objects of their type, in storage order.
    var isAll: Bool { !isLookup && spec.isEmpty }

    /// The matching rows, in order, evaluated at most once per change of the realm.
    var rows: [Int32] {
        guard let table else { return [] }
        if isAll { return table.liveRows }
        if let evaluatedRows, mutationCount == store.mutationCount { return evaluatedRows }
        let rows: [Int32]
        if isLookup {
            rows = table.lookUp(lookupProperty, lookupKey)
        } else {
            do {
                rows = try spec.evaluate(table: table, store: store, cache: self)
            } catch {
                // Thrown by the enclosing realm call; nothing is kept, so a later read tries again.
                store.recordError(error)
                return []
            }
        }
        evaluatedRows = rows
        mutationCount = store.mutationCount
        return rows
    }

    /// The number of results: from the index for a lookup of one value.
    var count: Int {
        if isLookup, let table = unretainedTable {
            return table._withUnsafeGuaranteedRef { $0.lookUpCount(lookupProperty, lookupKey) }
        }
        guard let table else { return 0 }
        if spec.isEmpty { return table.liveCount }
        if let evaluatedRows, mutationCount == store.mutationCount { return evaluatedRows.count }
        if spec.isOneFilter, let count = bound?.indexCount() { return count }
        return rows.count
    }

    /// The query refined by a filter, checked against the schema now (or taking `bound`, its
    /// binding found by the caller).
    func adding(_ filter: QuerySpec.Filter, bound known: BoundQuery?) throws(LiveObjectsError) -> ResultsCache {
        var query = query
        query.add(filter)
        guard let table else { return ResultsCache(store: store, table: nil, query: query) }
        // Bind now, to report errors at once; keep the binding when it is the whole filter.
        // An equality on an indexed property (the common lookup) takes a short cut.
        var bound = known
        if bound == nil, case .syntax(let syntax) = filter.form {
            bound = QueryCompiler.bindIndexedEquality(syntax, to: table, store: store)
        }
        if bound == nil {
            bound = try QueryCompiler.bind(filter.syntax, to: table, store: store, text: filter.text)
        }
        // A lookup of one value on all objects: kept as its parts.
        if isAll, case .index(let lookup) = bound?.predicate, case .one(let key) = lookup.keys {
            return ResultsCache(store: store, table: table, lookup: lookup.property, key: key)
        }
        return ResultsCache(store: store, table: table, query: query, bound: query.filterCount == 1 ? bound : nil)
    }
}

extension PropertyValue {
    /// Converts a query argument.
    init(argument: Any) throws(LiveObjectsError) {
        // A string (the usual argument) by one cast; the general conversion tries many types
        // first, none of which a string is.
        if let string = argument as? String {
            self = .string(string)
            return
        }
        switch try Input(any: argument, objectType: "") {
        case .value(let value): self = value
        case .object(let object):
            guard let key = object.objectKey else {
                throw LiveObjectsError(.invalidQuery, "an unmanaged object cannot be a query argument")
            }
            self = .object(key)
        case .array(let items):
            var values: [PropertyValue] = []
            for item in items {
                guard case .value(let v) = item else {
                    throw LiveObjectsError(.invalidQuery, "a list argument holds plain values only")
                }
                values.append(v)
            }
            self = .list(values)
        case .dictionary:
            throw LiveObjectsError(.invalidQuery, "a dictionary cannot be a query argument")
        }
    }
}

extension Results: ObjectCollection {}
