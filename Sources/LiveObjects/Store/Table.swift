import Foundation

/// The rows of one link property pointing into a table, grouped by target row: the backlink
/// index that serves `LinkingObjects` and deletions.
package final class BacklinkColumn {
    /// The table holding the link property.
    package unowned let source: Table
    /// The link property's index in the source table.
    package let property: Int
    /// For each target row, the source rows that link to it (a multiset: a list can link twice).
    package var rows: [[Int32]] = []

    init(source: Table, property: Int) {
        self.source = source
        self.property = property
    }

    func add(_ sourceRow: Int32, to target: Int32) {
        rows[Int(target)].append(sourceRow)
    }

    func remove(_ sourceRow: Int32, from target: Int32) {
        if let i = rows[Int(target)].lastIndex(of: sourceRow) {
            rows[Int(target)].remove(at: i)
        }
    }
}

/// The primary-key index of a table.
package enum PrimaryKeyIndex {
    case int([Int64: Int32])
    case string([String: Int32])
    case uuid([UUID: Int32])

    func row(for key: PropertyValue) -> Int32? {
        switch (self, key) {
        case (.int(let d), .int(let k)): d[k]
        case (.string(let d), .string(let k)): d[k]
        case (.uuid(let d), .uuid(let k)): d[k]
        default: nil
        }
    }

    mutating func insert(_ key: PropertyValue, row: Int32) {
        switch (self, key) {
        case (.int(var d), .int(let k)):
            self = .int([:])
            d[k] = row
            self = .int(d)
        case (.string(var d), .string(let k)):
            self = .string([:])
            d[k] = row
            self = .string(d)
        case (.uuid(var d), .uuid(let k)):
            self = .uuid([:])
            d[k] = row
            self = .uuid(d)
        default: break
        }
    }

    mutating func remove(_ key: PropertyValue) {
        switch (self, key) {
        case (.int(var d), .int(let k)):
            self = .int([:])
            d[k] = nil
            self = .int(d)
        case (.string(var d), .string(let k)):
            self = .string([:])
            d[k] = nil
            self = .string(d)
        case (.uuid(var d), .uuid(let k)):
            self = .uuid([:])
            d[k] = nil
            self = .uuid(d)
        default: break
        }
    }

    var count: Int {
        switch self {
        case .int(let d): d.count
        case .string(let d): d.count
        case .uuid(let d): d.count
        }
    }

    mutating func reserve(_ capacity: Int) {
        switch self {
        case .int(var d):
            self = .int([:])
            d.reserveCapacity(capacity)
            self = .int(d)
        case .string(var d):
            self = .string([:])
            d.reserveCapacity(capacity)
            self = .string(d)
        case .uuid(var d):
            self = .uuid([:])
            d.reserveCapacity(capacity)
            self = .uuid(d)
        }
    }

    /// All (key, row) pairs, for checking the index against the data.
    package var entries: [(PropertyValue, Int32)] {
        switch self {
        case .int(let d): d.map { (.int($0.key), $0.value) }
        case .string(let d): d.map { (.string($0.key), $0.value) }
        case .uuid(let d): d.map { (.uuid($0.key), $0.value) }
        }
    }
}

/// A secondary index: value to rows, for `indexed: true` properties.
package final class ValueIndex {
    package var rows: [PropertyValue: [Int32]] = [:]

    func insert(_ value: PropertyValue, row: Int32) {
        rows[value, default: []].append(row)
    }

    func remove(_ value: PropertyValue, row: Int32) {
        guard var list = rows[value] else { return }
        rows[value] = nil
        if let i = list.lastIndex(of: row) { list.remove(at: i) }
        if !list.isEmpty { rows[value] = list }
    }
}

/// The storage of one object type: a column per stored property, slot bookkeeping, and indexes.
///
/// Rows are storage slots. A deleted slot is freed when its write commits and reused by later
/// inserts; its generation goes up so that old handles and keys stop resolving.
package final class Table {
    /// The table's position in the store.
    package let index: Int
    /// The object type stored here.
    package let schema: ObjectSchema
    /// One column per property, in schema order; nil for `LinkingObjects`.
    package internal(set) var columns: [Column?] = []
    /// The generation of each slot; a handle is valid while its generation matches.
    package internal(set) var generations: [UInt32] = []
    /// Whether each slot holds a live object.
    package internal(set) var isLive: [Bool] = []
    /// Slots free for reuse (last is used first).
    package internal(set) var freeRows: [Int32] = []
    /// The number of live objects.
    package internal(set) var liveCount = 0
    /// The primary key property's index, if any.
    package let primaryKeyProperty: Int?
    /// The primary-key index.
    package internal(set) var primaryKeyIndex: PrimaryKeyIndex?
    /// Secondary indexes, by property index.
    package internal(set) var valueIndexes: [Int: ValueIndex] = [:]
    /// Every link property (of any table) that targets this table.
    package internal(set) var incoming: [BacklinkColumn] = []
    /// For each link property of this table, the backlink column in the target table.
    package internal(set) var outgoing: [Int: BacklinkColumn] = [:]
    /// For each `LinkingObjects` property, the backlink column it reads.
    package internal(set) var linkingObjectsSources: [Int: BacklinkColumn] = [:]
    /// The Swift model class, when the realm was opened with model types.
    package internal(set) var objectType: Object.Type?
    /// The value each property takes when none is given (from the model's defaults).
    package internal(set) var defaults: [PropertyValue]
    /// Property index by name.
    package let propertyIndex: [String: Int]
    /// Property index by the key path of a `@Persisted` wrapper's storage; filled on first use.
    var storageKeyPaths: [ObjectIdentifier: Int] = [:]
    /// Bumped whenever a row is inserted or removed.
    package internal(set) var structureVersion: UInt64 = 0
    private var liveRowsCache: (version: UInt64, rows: [Int32])?

    init(index: Int, schema: ObjectSchema) {
        self.index = index
        self.schema = schema
        self.primaryKeyProperty = schema.properties.firstIndex { $0.isPrimaryKey }
        self.defaults = schema.properties.map(\.zeroValue)
        var names: [String: Int] = [:]
        for (i, p) in schema.properties.enumerated() { names[p.name] = i }
        self.propertyIndex = names
        if let pk = primaryKeyProperty {
            switch schema.properties[pk].type {
            case .string: primaryKeyIndex = .string([:])
            case .uuid: primaryKeyIndex = .uuid([:])
            default: primaryKeyIndex = .int([:])
            }
        }
        for (i, p) in schema.properties.enumerated() where p.isIndexed && !p.isPrimaryKey {
            valueIndexes[i] = ValueIndex()
        }
    }

    /// The name of the object type.
    package var name: String { schema.name }

    /// The number of slots, live or free.
    package var rowCount: Int { isLive.count }

    /// The key of the object in a slot.
    package func key(_ row: Int32) -> ObjectKey {
        ObjectKey(row: UInt32(bitPattern: row), generation: generations[Int(row)])
    }

    /// The slot of a key, if it names a live object.
    package func row(for key: ObjectKey) -> Int32? {
        let row = Int(key.row)
        guard row < isLive.count, isLive[row], generations[row] == key.generation else { return nil }
        return Int32(row)
    }

    /// Whether a slot holds a live object of the given generation.
    @inline(__always)
    package func isValid(_ row: Int32, generation: UInt32) -> Bool {
        let r = Int(row)
        return r < isLive.count && isLive[r] && generations[r] == generation
    }

    /// The live rows in slot order.
    package var liveRows: [Int32] {
        if let cache = liveRowsCache, cache.version == structureVersion { return cache.rows }
        var rows: [Int32] = []
        rows.reserveCapacity(liveCount)
        if liveCount == rowCount {
            rows.append(contentsOf: 0..<Int32(rowCount))
        } else {
            for r in 0..<rowCount where isLive[r] { rows.append(Int32(r)) }
        }
        liveRowsCache = (structureVersion, rows)
        return rows
    }

    /// The row of the object with a primary key.
    package func row(forPrimaryKey key: PropertyValue) -> Int32? {
        primaryKeyIndex?.row(for: key)
    }

    /// The primary key of a row.
    package func primaryKey(of row: Int32) -> PropertyValue? {
        primaryKeyProperty.map { columns[$0]!.value(at: Int(row)) }
    }

    /// The current value of a stored property.
    package func value(_ row: Int32, _ property: Int) -> PropertyValue {
        if let column = columns[property] { return column.value(at: Int(row)) }
        guard let source = linkingObjectsSources[property] else { return .list([]) }
        return .list(source.rows[Int(row)].map { .object(source.source.key($0)) })
    }

    /// All values of a row, in property order (`LinkingObjects` included).
    package func values(_ row: Int32) -> [PropertyValue] {
        (0..<schema.properties.count).map { value(row, $0) }
    }

    /// The source rows linking to `row` through every incoming link property.
    package func linkCount(to row: Int32) -> Int {
        incoming.reduce(0) { $0 + $1.rows[Int(row)].count }
    }

    // MARK: Raw slot operations (no logging; used by the store's logged primitives).

    func appendSlot(_ values: [PropertyValue]) -> Int32 {
        let row = Int32(rowCount)
        for (i, column) in columns.enumerated() { column?.append(values[i]) }
        generations.append(0)
        isLive.append(false)
        for b in incoming { b.rows.append([]) }
        return row
    }

    func removeLastSlot() {
        for column in columns { column?.removeLast() }
        generations.removeLast()
        isLive.removeLast()
        for b in incoming { b.rows.removeLast() }
    }

    func reserve(_ capacity: Int) {
        for column in columns { column?.reserve(capacity) }
        generations.reserveCapacity(capacity)
        isLive.reserveCapacity(capacity)
        primaryKeyIndex?.reserve(capacity)
    }

    func markLive(_ row: Int32, _ live: Bool) {
        isLive[Int(row)] = live
        liveCount += live ? 1 : -1
        structureVersion &+= 1
    }

    func setGeneration(_ row: Int32, _ generation: UInt32) {
        generations[Int(row)] = generation
    }

    func popFreeRow() -> Int32? { freeRows.popLast() }
    func pushFreeRow(_ row: Int32) { freeRows.append(row) }

    func indexInsert(_ row: Int32, values: [PropertyValue]) {
        if let pk = primaryKeyProperty { primaryKeyIndex?.insert(values[pk], row: row) }
        for (p, index) in valueIndexes { index.insert(values[p], row: row) }
    }

    func indexRemove(_ row: Int32) {
        if let pk = primaryKeyProperty {
            primaryKeyIndex?.remove(columns[pk]!.value(at: Int(row)))
        }
        for (p, index) in valueIndexes { index.remove(columns[p]!.value(at: Int(row)), row: row) }
    }

    func setColumns(_ columns: [Column?]) { self.columns = columns }
    func setObjectType(_ type: Object.Type?, defaults: [PropertyValue]?) {
        objectType = type
        if let defaults { self.defaults = defaults }
    }
    func addIncoming(_ b: BacklinkColumn) {
        b.rows = Array(repeating: [], count: rowCount)
        incoming.append(b)
    }
    func setOutgoing(_ property: Int, _ b: BacklinkColumn) { outgoing[property] = b }
    func setLinkingObjectsSource(_ property: Int, _ b: BacklinkColumn) {
        linkingObjectsSources[property] = b
    }
}
