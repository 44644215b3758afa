/// Hands out managed objects for rows of one table, as the rows were when iteration started:
/// the iterator under `Results` and `LinkingObjects`.
///
/// While it hands out one element it starts loading the values of an element a few positions
/// ahead, so that reading a property of each element does not wait for one cache miss after
/// another.
struct ObjectRowIterator<Element: Object> {
    let store: Store?
    let table: Table?
    let rows: [Int32]
    var position = 0

    /// How many elements ahead of the one they return iterators start loading values.
    static var prefetchDistance: Int { 4 }

    /// An iterator over `rows` of `table`, whose first elements start loading now.
    init(store: Store?, table: Table?, rows: [Int32]) {
        self.store = store
        self.table = table
        self.rows = rows
        if let table {
            for row in rows.prefix(Self.prefetchDistance) { table.prefetchElement(row: row) }
        }
    }

    mutating func next() -> Element? {
        guard let store, let table, position < rows.count else { return nil }
        defer { position += 1 }
        return rows.withUnsafeBufferPointer { rows in
            let ahead = position + Self.prefetchDistance
            if ahead < rows.count { table.prefetchElement(row: rows[ahead]) }
            return Self.object(store, table, rows[position])
        }
    }

    /// A managed object for a live row.
    @inline(__always)
    static func object(_ store: Store, _ table: Table, _ row: Int32) -> Element {
        let object = Element()
        object._handle = ObjectHandle(
            store: store, table: table, row: row, generation: table.generation(ofLiveRow: row),
            validAt: store.mutationCount)
        return object
    }
}
