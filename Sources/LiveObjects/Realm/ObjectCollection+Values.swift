import LiveObjectsStore

// Reading from every object of a collection without making an object per element:
// `results.values(\.age)` gives what `results.map(\.age)` gives, read through one managed
// object moved from row to row, with the values of the next elements loading into the cache
// while one is read.

extension Results {
    /// What a key path or closure reads from each object, in order: the values `map` gives,
    /// read without making an object per element.
    ///
    /// ```swift
    /// let ids = realm.objects(Dog.self).where { $0.name == "Rex" }.values(\.id)
    /// let rows = realm.objects(Dog.self).where { $0.age > 10 }.values { ($0.id, $0.name) }
    /// ```
    ///
    /// `read` is called once per object, in order, with a managed object that moves from
    /// element to element: use it during the call. A read that keeps it (returns it, stores
    /// it, or reads it under Observation tracking, which gives it a registrar) leaves it to
    /// the reader, and the next element is read on a new object, so `values { $0 }` gives the
    /// same objects as `Array(results)`. While one element is read, the values of the
    /// properties the first read touched start loading for an element a few positions ahead.
    ///
    /// - Parameter read: What to read from each object, such as `\.age` or
    ///   `{ ($0.id, $0.owner?.name) }`.
    /// - Returns: One value per object, in the order of the results.
    /// - Throws: What `read` throws; the values read before are dropped.
    /// - Complexity: O(n), with no allocation per element beyond what `read` makes.
    @inlinable
    public func values<Value, Failure: Error>(_ read: (Element) throws(Failure) -> Value) throws(Failure)
        -> [Value]
    {
        try elementCursor()?.values(of: Element.self, read) ?? []
    }
}

extension LinkingObjects {
    /// What a key path or closure reads from each linking object, in order: the values `map`
    /// gives, read without making an object per element (see ``Results/values(_:)``).
    ///
    /// ```swift
    /// let ages = person.dogs.values(\.age)  // dogs: LinkingObjects<Dog>
    /// ```
    ///
    /// - Parameter read: What to read from each object.
    /// - Returns: One value per linking object, in the order of the collection (none for an
    ///   unmanaged object's).
    /// - Throws: What `read` throws.
    /// - Complexity: O(n), with no allocation per element beyond what `read` makes.
    @inlinable
    public func values<Value, Failure: Error>(_ read: (Element) throws(Failure) -> Value) throws(Failure)
        -> [Value]
    {
        try elementCursor()?.values(of: Element.self, read) ?? []
    }
}

extension List where Element: Object {
    /// What a key path or closure reads from each object of the list, in order: the values
    /// `map` gives, read without making an object per element (see ``Results/values(_:)``).
    /// On an unmanaged list it is `map`.
    ///
    /// ```swift
    /// let names = person.dogs.values(\.name)  // dogs: List<Dog>
    /// ```
    ///
    /// - Parameter read: What to read from each object.
    /// - Returns: One value per element, in the order of the list.
    /// - Throws: What `read` throws.
    /// - Complexity: O(n), with no allocation per element beyond what `read` makes.
    @inlinable
    public func values<Value, Failure: Error>(_ read: (Element) throws(Failure) -> Value) throws(Failure)
        -> [Value]
    {
        if let cursor = elementCursor() { return try cursor.values(of: Element.self, read) }
        var values: [Value] = []
        for element in self { values.append(try read(element)) }
        return values
    }
}

extension Results {
    /// Where the objects of the results are, evaluated now (nil for results of an unknown
    /// type).
    @usableFromInline
    func elementCursor() -> ElementCursor? {
        guard let table else { return nil }
        return ElementCursor(store: store, table: table, rows: rows)
    }
}

extension LinkingObjects {
    /// Where the linking objects are now (nil for an unmanaged or deleted object's).
    @usableFromInline
    func elementCursor() -> ElementCursor? {
        guard let context = accessContext, context.handle.isValid,
            let source = context.handle.table.linkingObjectsSources[context.property]
        else { return nil }
        return ElementCursor(
            store: context.handle.store, table: source.source, rows: source.rows[Int(context.handle.row)])
    }
}

extension List where Element: Object {
    /// Where the objects of a managed list are now (nil for an unmanaged list).
    @usableFromInline
    func elementCursor() -> ElementCursor? {
        guard let context = accessContext else { return nil }
        let handle = context.handle
        precondition(handle.isValid, "the list's object was deleted")
        let column = unsafeDowncast(handle.table.columns[context.property]!, to: LinkListColumn.self)
        return ElementCursor(store: handle.store, table: column.target, rows: column.lists[Int(handle.row)])
    }
}

/// The rows of a collection's objects, handed out as handles one by one, with the values
/// that reading an element needs loading a few elements ahead.
///
/// The first element is read while the store records which properties of the table the read
/// touches (``startRecording()``, ``finishRecording()``); from then on the values of those
/// properties start loading ``distance`` elements ahead of the one read, so that their cache
/// misses overlap. Short results (``shortResults``) are read without either. Not generic, so
/// that the inlined, specialized loop of `values` calls it without looking up generic metadata.
@usableFromInline
struct ElementCursor {
    // Unowned: a cursor lives inside one call, in the realm's isolation, where the store and
    // its tables are alive.
    private unowned(unsafe) let store: Store
    private unowned(unsafe) let table: Table
    private let rows: [Int32]
    /// The properties read by the first element (at most four; -1 for none).
    private var read: (Int, Int, Int, Int) = (-1, -1, -1, -1)
    private var recorder: ColumnReadRecorder?
    private var outer: (any PropertyReadRecorder)?

    /// How many elements ahead of the one read values start loading.
    private static var distance: Int { 4 }
    /// Results of at most this many elements are read without recording or loading ahead:
    /// the recorder's setting up and its retains and releases (atomic operations, which wait
    /// for the loads in flight) cost more than the few loads it would overlap.
    private static var shortResults: Int { 16 }

    init(store: Store, table: Table, rows: [Int32]) {
        self.store = store
        self.table = table
        self.rows = rows
    }

    /// The number of elements.
    @usableFromInline var count: Int { rows.count }

    /// The handle of element `i` (a live row), after starting to load the properties read
    /// for element `i + distance`.
    @usableFromInline
    func handle(at i: Int) -> ObjectHandle {
        // Borrowed, not retained: retains and releases are atomic operations, which wait for
        // the loads in flight (the prefetches among them).
        Unmanaged.passUnretained(table)._withUnsafeGuaranteedRef { table in
            rows.withUnsafeBufferPointer { rows in
                let ahead = i + Self.distance
                if ahead < rows.count && read.0 >= 0 {
                    let row = rows[ahead]
                    table.prefetch(row: row, property: read.0)
                    if read.1 >= 0 { table.prefetch(row: row, property: read.1) }
                    if read.2 >= 0 { table.prefetch(row: row, property: read.2) }
                    if read.3 >= 0 { table.prefetch(row: row, property: read.3) }
                }
                let row = rows[i]
                return Unmanaged.passUnretained(store)._withUnsafeGuaranteedRef { store in
                    ObjectHandle(
                        store: store, table: table, row: row, generation: table.generation(ofLiveRow: row),
                        validAt: store.mutationCount)
                }
            }
        }
    }

    /// Starts recording the properties that reading an element touches.
    @usableFromInline
    mutating func startRecording() {
        guard rows.count > Self.shortResults else { return }
        let recorder = ColumnReadRecorder(table: table)
        self.recorder = recorder
        outer = store.readRecorder
        store.readRecorder = outer.map { ChainedReadRecorder(first: recorder, then: $0) } ?? recorder
    }

    /// Stops recording, and starts loading the recorded properties of the next elements.
    @usableFromInline
    mutating func finishRecording() {
        guard let recorder else { return }
        store.readRecorder = outer
        outer = nil
        self.recorder = nil
        let properties = recorder.properties
        func at(_ i: Int) -> Int { i < properties.count ? properties[i] : -1 }
        read = (at(0), at(1), at(2), at(3))
        guard read.0 >= 0 else { return }
        for row in rows.dropFirst().prefix(Self.distance) {
            for property in properties { table.prefetch(row: row, property: property) }
        }
    }

    /// What `read` returns for every element, read on one object moved from row to row.
    @inlinable
    func values<Element: Object, Value, Failure: Error>(
        of type: Element.Type, _ read: (Element) throws(Failure) -> Value
    ) throws(Failure) -> [Value] {
        let count = count
        guard count > 0 else { return [] }
        var cursor = self
        var values: [Value] = []
        values.reserveCapacity(count)
        var accessor = Element()
        accessor._handle = cursor.handle(at: 0)
        cursor.startRecording()
        do {
            values.append(try read(accessor))
        } catch {
            cursor.finishRecording()
            throw error
        }
        cursor.finishRecording()
        for i in 1..<count {
            // A read that kept the object (returned it, or gave it an Observation registrar)
            // leaves it to the reader: the next element is read on a new one.
            if !isKnownUniquelyReferenced(&accessor) || accessor._observation != nil {
                accessor = Element()
            }
            accessor._handle = cursor.handle(at: i)
            values.append(try read(accessor))
        }
        return values
    }
}
/// Notes the first few properties of one table that a read touches.
final class ColumnReadRecorder: PropertyReadRecorder {
    unowned let table: Table
    var properties: [Int] = []

    init(table: Table) { self.table = table }

    func record(_ table: Table, _ property: Int) {
        guard table === self.table, properties.count < 4, !properties.contains(property) else { return }
        properties.append(property)
    }
}

/// Passes each read on to two recorders.
private final class ChainedReadRecorder: PropertyReadRecorder {
    let first: any PropertyReadRecorder
    let then: any PropertyReadRecorder

    init(first: any PropertyReadRecorder, then: any PropertyReadRecorder) {
        self.first = first
        self.then = then
    }

    func record(_ table: Table, _ property: Int) {
        first.record(table, property)
        then.record(table, property)
    }
}
