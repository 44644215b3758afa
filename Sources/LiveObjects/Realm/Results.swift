/// All objects of a type in a realm: a lazy, live collection.
///
/// Nothing is read until you use it, and every use reads the current state: after a write,
/// the same `Results` shows the new objects. Order is the storage order, which is stable
/// between writes but is not insertion order once objects are deleted.
public struct Results<Element: Object>: RandomAccessCollection {
    let store: Store
    let table: Table?

    init(store: Store, table: Table?) {
        self.store = store
        self.table = table
    }

    public var startIndex: Int { 0 }

    /// - Complexity: O(1).
    public var endIndex: Int { table?.liveCount ?? 0 }

    /// - Complexity: O(1), after an O(n) scan the first time it is used after objects were
    ///   inserted or deleted.
    public subscript(position: Int) -> Element {
        let table = table!
        let row = table.liveCount == table.rowCount ? Int32(position) : table.liveRows[position]
        let object = Element()
        object._handle = ObjectHandle(
            store: store, table: table, row: row, generation: table.generation(row))
        return object
    }
}
