import Foundation
import Synchronization

/// The rows of one link property pointing into a table, grouped by target row: the backlink
/// index that serves `LinkingObjects` and deletions.
@usableFromInline
package final class BacklinkColumn {
    /// The table holding the link property.
    @usableFromInline package unowned let source: Table
    /// The link property's index in the source table.
    package let property: Int
    /// For each target row, the source rows that link to it (a multiset: a list can link twice).
    ///
    /// Links added by ``addLater(_:to:)`` are put in their lists first.
    @inlinable package var rows: ChunkedArray<[Int32]> {
        _read {
            if hasPending { addPending() }
            yield storage
        }
        _modify {
            if hasPending { addPending() }
            yield &storage
        }
    }
    @exclusivity(unchecked) @usableFromInline var storage = ChunkedArray<[Int32]>()
    /// Links added but not yet in their targets' lists (`pendingSources[i]` to
    /// `pendingTargets[i]`).
    @exclusivity(unchecked) var pendingSources: [Int32] = []
    @exclusivity(unchecked) private var pendingTargets: [Int32] = []
    /// Source rows `pendingRun` whose to-one link is still to be added: read from the link
    /// column when the lists are filled, so that a write adding a million linked objects keeps
    /// no list of a million links meanwhile. Every change of a row's link first reads or
    /// changes the lists, which adds the run's links as the column then holds them.
    @exclusivity(unchecked) private var pendingRun: Range<Int32> = 0..<0
    /// Whether ``pendingSources`` or ``pendingRun`` holds links.
    @exclusivity(unchecked) @usableFromInline var hasPending = false

    package init(source: Table, property: Int) {
        self.source = source
        self.property = property
    }

    /// Adds a link as ``add(_:to:)`` does, but puts it in its target's list only when the
    /// lists are next read or changed (or the write commits), together with the links added
    /// after it: many links added in one write then fill each list once, at its size.
    /// Growing every target's list by one link at a time, in the random order of the sources,
    /// left the smaller arrays each list outgrew scattered between live ones, where the
    /// allocator could not give them back (about 20 bytes per link in the benchmark's model).
    func addLater(_ sourceRow: Int32, to target: Int32) {
        hasPending = true
        // The column borrowed: retaining the table's columns and the column per link added was
        // two atomic operations per object of a bulk insert.
        let isToOne = source.unretainedColumns[property]?._withUnsafeGuaranteedRef { $0.isLinkColumn } ?? false
        if isToOne {
            if pendingRun.isEmpty {
                pendingRun = sourceRow..<sourceRow + 1
                return
            }
            if pendingRun.upperBound == sourceRow {
                pendingRun = pendingRun.lowerBound..<sourceRow + 1
                return
            }
        }
        pendingSources.append(sourceRow)
        pendingTargets.append(target)
    }

    /// Puts the links added by ``addLater(_:to:)`` in their lists.
    @usableFromInline func addPending() {
        guard hasPending else { return }
        hasPending = false
        let run = pendingRun
        pendingRun = 0..<0
        if !run.isEmpty, let link = source.columns[property] as? LinkColumn { addRun(run, link) }
        guard !pendingSources.isEmpty else { return }
        let sources = pendingSources
        let targets = pendingTargets
        pendingSources = []
        pendingTargets = []
        // Grouping by target costs the number of targets: worth it for many links only.
        if sources.count >= storage.count / 8 {
            addAll(sources: sources, targets: targets)
        } else {
            for (s, t) in zip(sources, targets) { add(s, to: t) }
        }
    }

    /// Adds the to-one links of a run of source rows, as the link column holds them: for many
    /// links, each target's list is first given room for exactly its new links (so no list
    /// outgrows an array), then the rows go in in order.
    private func addRun(_ run: Range<Int32>, _ link: LinkColumn) {
        guard run.count >= storage.count / 8 else {
            for s in run {
                let t = link.targets[Int(s)]
                if t >= 0 { add(s, to: t) }
            }
            return
        }
        var counts = [Int32](repeating: 0, count: storage.count)
        for s in run {
            let t = link.targets[Int(s)]
            if t >= 0 { counts[Int(t)] &+= 1 }
        }
        for t in counts.indices where counts[t] > 0 {
            storage[t].reserveCapacity(storage[t].count + Int(counts[t]))
        }
        // Each link waits for its target's list (a random one of many): the place of the list
        // of the link some rows ahead is asked for, and the list itself half as far ahead,
        // once that place is in the cache.
        let distance: Int32 = 16
        for s in run {
            if s + distance < run.upperBound {
                let ahead = link.targets[Int(s + distance)]
                if ahead >= 0 { storage.prefetch(Int(ahead)) }
            }
            if s + distance / 2 < run.upperBound {
                let near = link.targets[Int(s + distance / 2)]
                if near >= 0 { storage.prefetchStorage(ofArrayAt: Int(near)) }
            }
            let t = Int(link.targets[Int(s)])
            guard t >= 0 else { continue }
            if storage[t].last.map({ $0 <= s }) ?? true {
                storage[t].append(s)
            } else {
                add(s, to: Int32(t))
            }
        }
    }

    /// Keeps each target's sources in row order, so that the order of `LinkingObjects` does not
    /// depend on the history of the links (a rolled-back write leaves it as it was).
    package func add(_ sourceRow: Int32, to target: Int32) {
        let t = Int(target)
        var i = rows[t].endIndex
        while i > 0 && rows[t][i - 1] > sourceRow { i -= 1 }
        rows[t].insert(sourceRow, at: i)
    }

    /// Adds many links (`sources[i]` to `targets[i]`) as ``add(_:to:)`` would one by one, but
    /// grouped by target first (a counting sort), so that the targets' lists are filled in
    /// order, each made once at its size, instead of in random order.
    func addAll(sources: [Int32], targets: [Int32]) {
        let n = rows.count
        // starts[t]..<starts[t + 1]: where target t's sources go in `grouped`.
        var starts = [Int32](repeating: 0, count: n + 1)
        for t in targets { starts[Int(t) + 1] &+= 1 }
        for t in 0..<n { starts[t + 1] &+= starts[t] }
        var next = starts
        var grouped = [Int32](repeating: 0, count: sources.count)
        for (s, t) in zip(sources, targets) {
            grouped[Int(next[Int(t)])] = s
            next[Int(t)] &+= 1
        }
        for t in 0..<n where starts[t + 1] > starts[t] {
            let group = grouped[Int(starts[t])..<Int(starts[t + 1])]
            if rows[t].isEmpty && zip(group, group.dropFirst()).allSatisfy({ $0 <= $1 }) {
                rows[t] = Array(group)
            } else {
                for s in group { add(s, to: Int32(t)) }
            }
        }
    }

    package func remove(_ sourceRow: Int32, from target: Int32) {
        if let i = rows[Int(target)].lastIndex(of: sourceRow) {
            rows[Int(target)].remove(at: i)
        }
    }
}

/// The primary-key index of a table: a hash map from key to row, typed by the key's type.
@usableFromInline
package final class PrimaryKeyIndex {
    @inlinable package var ints: IntKeyIndex { _ints }
    @exclusivity(unchecked) @usableFromInline private(set) var _ints: IntKeyIndex = IntKeyIndex()
    @inlinable package var strings: [String: Int32] { _strings }
    @exclusivity(unchecked) @usableFromInline private(set) var _strings: [String: Int32] = [:]
    @inlinable var uuids: [UUID: Int32] { _uuids }
    @exclusivity(unchecked) @usableFromInline private(set) var _uuids: [UUID: Int32] = [:]
    @inlinable package var objectIDs: [ObjectID: Int32] { _objectIDs }
    @exclusivity(unchecked) @usableFromInline private(set) var _objectIDs: [ObjectID: Int32] = [:]

    @inlinable @inline(__always)
    package func row(for key: PropertyValue) -> Int32? {
        switch key {
        case .int(let k): ints.row(for: k)
        case .string(let k): strings[k]
        case .uuid(let k): uuids[k]
        case .objectID(let k): objectIDs[k]
        default: nil
        }
    }

    package func insert(_ key: PropertyValue, row: Int32, generation: UInt32 = 0) {
        switch key {
        case .int(let k): _ints.insert(k, row: row, generation: generation)
        case .string(let k): _strings[k] = row
        case .uuid(let k): _uuids[k] = row
        case .objectID(let k): _objectIDs[k] = row
        default: break
        }
    }

    /// Adds a key that is not there yet (one probe for integer keys); false when it is there.
    package func insertIfAbsent(_ key: PropertyValue, row: Int32, generation: UInt32) -> Bool {
        switch key {
        case .int(let k): return _ints.insertIfAbsent(k, row: row, generation: generation)
        case .string(let k):
            guard _strings[k] == nil else { return false }
            _strings[k] = row
            return true
        case .uuid(let k):
            guard _uuids[k] == nil else { return false }
            _uuids[k] = row
            return true
        case .objectID(let k):
            guard _objectIDs[k] == nil else { return false }
            _objectIDs[k] = row
            return true
        default: return true
        }
    }

    /// Adds integer keys that are not there yet, in order: ``IntKeyIndex/insertAll(_:rows:generations:)``.
    package func insertAll(
        _ keys: UnsafeBufferPointer<Int64>, rows: UnsafeBufferPointer<Int32>, generations: UnsafeBufferPointer<UInt32>
    ) -> Int? {
        _ints.insertAll(keys, rows: rows, generations: generations)
    }

    package func remove(_ key: PropertyValue) {
        switch key {
        case .int(let k): _ints.remove(k)
        case .string(let k): _strings[k] = nil
        case .uuid(let k): _uuids[k] = nil
        case .objectID(let k): _objectIDs[k] = nil
        default: break
        }
    }

    package var count: Int { ints.count + strings.count + uuids.count + objectIDs.count }

    package func reserve(_ capacity: Int, for type: PropertyType) {
        switch type {
        case .string: _strings.reserveCapacity(capacity)
        case .uuid: _uuids.reserveCapacity(capacity)
        case .objectID: _objectIDs.reserveCapacity(capacity)
        default: _ints.reserve(capacity)
        }
    }

    /// All (key, row) pairs, for checking the index against the data.
    package var entries: [(PropertyValue, Int32)] {
        ints.pairs.map { (.int($0.key), $0.row) } + strings.map { (.string($0.key), $0.value) }
            + uuids.map { (.uuid($0.key), $0.value) }
            + objectIDs.map { (.objectID($0.key), $0.value) }
    }
}

/// How a property is stored.
package enum PropertyStorage {
    case value, link, computed
}

/// The storage of one object type: a column per stored property, slot bookkeeping, and indexes.
///
/// Storage is used only inside its realm's isolation, one access at a time, so its hot
/// properties opt out of run-time exclusivity checks (`@exclusivity(unchecked)`), which cost
/// more than the accesses themselves. The attribute holds only inside this module, so the layers
/// above (another module) reach such a property through an `@inlinable` accessor over its
/// underscored storage (`columns` over `_columns`): ARCHITECTURE.md, "Reads across the module
/// boundary".
///
/// Rows are storage slots. A deleted slot is freed when its write commits and reused by later
/// inserts; its generation goes up so that old handles and keys stop resolving.
@usableFromInline
package final class Table {
    /// The table's position in the store.
    package let index: Int
    /// The object type stored here.
    @usableFromInline package let schema: ObjectSchema
    /// The store that owns the table. Unowned: the store owns its tables and outlives them;
    /// a weak reference would move the store's reference count out of line and slow every
    /// retain of it.
    package unowned(unsafe) var store: Store?
    /// One column per property, in schema order; nil for `LinkingObjects`.
    @inlinable package var columns: [Column?] { _columns }
    @exclusivity(unchecked) @usableFromInline private(set) var _columns: [Column?] = []

    /// The column of a stored property (every property but `LinkingObjects` has one).
    @inlinable @inline(__always)
    package func column(_ property: Int) -> Column {
        guard let column = columns[property] else {
            preconditionFailure("\(name).\(schema.properties[property].name) is computed and has no column")
        }
        return column
    }

    /// The column of a to-one link property.
    package func linkColumn(_ property: Int) -> LinkColumn {
        guard let column = columns[property] as? LinkColumn else {
            preconditionFailure("\(name).\(schema.properties[property].name) is not a to-one link")
        }
        return column
    }

    /// The column of a list-of-links property.
    package func linkListColumn(_ property: Int) -> LinkListColumn {
        guard let column = columns[property] as? LinkListColumn else {
            preconditionFailure("\(name).\(schema.properties[property].name) is not a list of links")
        }
        return column
    }
    /// The same columns, unretained, for the property reads of managed objects: reading through
    /// `columns` retains and releases the array's buffer, and those atomic operations keep the
    /// processor from overlapping one read's cache miss with the next. Valid while `columns`
    /// holds the columns (both change together in `setColumns`).
    @inlinable package var unretainedColumns: UnsafeMutableBufferPointer<Unmanaged<Column>?> { _unretainedColumns }
    @exclusivity(unchecked) @usableFromInline private(set) var _unretainedColumns:
        UnsafeMutableBufferPointer<Unmanaged<Column>?> = .init(start: nil, count: 0)
    /// Per slot: the generation shifted left by one, with the low bit set while the slot holds
    /// a live object. A handle is valid while its generation matches and the bit is set; one
    /// array, so checking a handle touches one cache line.
    @exclusivity(unchecked) @usableFromInline private(set) var slotStates = ChunkedArray<UInt32>()
    /// The live bits of `slotStates` again, 64 slots a word: 32 times smaller, so that
    /// lookups by primary key find them in a near cache (one word per 64 slots, always
    /// `(rowCount + 63) / 64` words).
    @exclusivity(unchecked) @usableFromInline private(set) var liveBits = ChunkedArray<UInt64>()
    /// The number of live slots whose generation is not 0 (reused slots). While there are
    /// none, a live slot's generation is known without reading its state.
    @exclusivity(unchecked) @usableFromInline private(set) var liveLaterGenerations = 0
    /// Slots free for reuse (last is used first).
    @inlinable package var freeRows: [Int32] {
        get { _freeRows }
        set { _freeRows = newValue }
        _modify { yield &_freeRows }
    }
    @exclusivity(unchecked) @usableFromInline var _freeRows: [Int32] = []
    /// The number of live objects.
    @inlinable package var liveCount: Int {
        get { _liveCount }
        set { _liveCount = newValue }
        _modify { yield &_liveCount }
    }
    @exclusivity(unchecked) @usableFromInline var _liveCount: Int = 0
    /// The primary key property's index, if any.
    @usableFromInline package let primaryKeyProperty: Int?
    /// The primary-key index.
    @usableFromInline package let primaryKeyIndex: PrimaryKeyIndex?
    /// Secondary indexes, by property index.
    package let valueIndexes: [Int: ValueIndex]
    /// The secondary index of each property, nil where there is none: `valueIndexes` by
    /// position, for lookups without hashing.
    package let valueIndexByProperty: [ValueIndex?]
    /// `valueIndexByProperty` again, without the references counted: reading an index from the
    /// array retains and releases it, atomic operations that keep a lookup's cache misses from
    /// overlapping the next one's. Valid for the table's lifetime (the array is never changed).
    @usableFromInline package let unretainedValueIndexes: UnsafeMutableBufferPointer<Unmanaged<ValueIndex>?>
    /// Indexes of properties that the layers above build from a column (a full-text index:
    /// the store cannot split text into words) and the store keeps in step with the live rows,
    /// as it keeps ``valueIndexes``. Dropped when the indexes are rebuilt wholesale (a load, a
    /// frozen copy): their builder makes them again on next use.
    package var derivedIndexes: [Int: any DerivedIndex] = [:]
    /// Every link property (of any table) that targets this table.
    @inlinable package var incoming: [BacklinkColumn] {
        get { _incoming }
        set { _incoming = newValue }
        _modify { yield &_incoming }
    }
    @exclusivity(unchecked) @usableFromInline var _incoming: [BacklinkColumn] = []
    /// For each link property of this table, the backlink column in the target table.
    @inlinable package var outgoing: [Int: BacklinkColumn] {
        get { _outgoing }
        set { _outgoing = newValue }
        _modify { yield &_outgoing }
    }
    @exclusivity(unchecked) @usableFromInline var _outgoing: [Int: BacklinkColumn] = [:]
    /// For each `LinkingObjects` property, the backlink column it reads.
    @inlinable package var linkingObjectsSources: [BacklinkColumn?] {
        get { _linkingObjectsSources }
        set { _linkingObjectsSources = newValue }
        _modify { yield &_linkingObjectsSources }
    }
    @exclusivity(unchecked) @usableFromInline var _linkingObjectsSources: [BacklinkColumn?] = []
    /// What the layer above knows of the table's model class, when the realm was opened with
    /// model types (a `ModelInfo`, set by `Store.register`); the store only keeps it.
    @inlinable package var model: AnyObject? {
        get { _model }
        set { _model = newValue }
        _modify { yield &_model }
    }
    @exclusivity(unchecked) @usableFromInline var _model: AnyObject?
    /// For the enum properties of the model class (by name): the raw values of the cases, the
    /// only values they may hold.
    @inlinable package var enumCases: [String: (values: Set<PropertyValue>, enumName: String)] {
        get { _enumCases }
        set { _enumCases = newValue }
        _modify { yield &_enumCases }
    }
    @exclusivity(unchecked) @usableFromInline var _enumCases: [String: (values: Set<PropertyValue>, enumName: String)] =
        [:]
    /// For the properties of the model class whose Swift type makes a value from some stored
    /// values only (by name): the test of a stored value, and the type's name for errors.
    @inlinable package var valueChecks: [String: (accepts: @Sendable (PropertyValue) -> Bool, typeName: String)] {
        get { _valueChecks }
        set { _valueChecks = newValue }
        _modify { yield &_valueChecks }
    }
    @exclusivity(unchecked) @usableFromInline var _valueChecks:
        [String: (accepts: @Sendable (PropertyValue) -> Bool, typeName: String)] = [:]
    /// The value each property takes when none is given (from the model's defaults).
    @inlinable package var defaults: [PropertyValue] {
        get { _defaults }
        set { _defaults = newValue }
        _modify { yield &_defaults }
    }
    @exclusivity(unchecked) @usableFromInline var _defaults: [PropertyValue]
    /// An array of ``defaults`` that adding an object takes (``takeRowValues()``), fills with
    /// the object's values, inserts and gives back (``giveBackRowValues(_:)``), so that adding
    /// an object makes and frees no array of its own. Empty while taken.
    @exclusivity(unchecked) private var rowValues: [PropertyValue] = []
    /// Property index by name.
    @usableFromInline package let propertyIndex: [String: Int]
    /// The property names in schema order, for ``position(ofProperty:)``.
    @usableFromInline let propertyNames: [String]
    /// How each property is stored.
    package let storage: [PropertyStorage]
    /// The stored properties that hold plain values (not links).
    package let valueProperties: [Int]
    /// For each property, the value case it takes without conversion.
    @usableFromInline let valueTags: [PropertyValue.Tag?]
    /// Property index by the offset of a `@Persisted` wrapper's field in the object; filled on
    /// first use.
    /// Kept in an unmanaged buffer (`fieldKeyCount` entries): scanning an array held in a
    /// class property retains and releases its buffer, atomic operations on every property read.
    @exclusivity(unchecked) @usableFromInline private(set) var fieldKeys:
        UnsafeMutableBufferPointer<(field: Int, property: Int)> = .init(start: nil, count: 0)
    @exclusivity(unchecked) @usableFromInline private(set) var fieldKeyCount = 0
    /// The value indexes being built on a thread of their own since the table was loaded, or
    /// nil: ``finishValueIndexBuild()`` waits for them.
    private var valueIndexBuild: ValueIndexBuild?
    /// Whether the hash indexes must be rebuilt before use.
    @exclusivity(unchecked) @usableFromInline private(set) var indexesAreStale = false
    /// The generation given to appended slots: above that of every appended slot whose
    /// insertion was rolled back, so that keys of objects that never existed never resolve.
    @exclusivity(unchecked) private var appendGeneration: UInt32 = 0
    /// Bumped whenever a row is inserted or removed.
    @inlinable package var structureVersion: UInt64 {
        get { _structureVersion }
        set { _structureVersion = newValue }
        _modify { yield &_structureVersion }
    }
    @exclusivity(unchecked) @usableFromInline var _structureVersion: UInt64 = 0
    @exclusivity(unchecked) private var liveRowsCache: (version: UInt64, rows: [Int32])?

    package init(index: Int, schema: ObjectSchema) {
        self.index = index
        self.schema = schema
        self.primaryKeyProperty = schema.properties.firstIndex { $0.isPrimaryKey }
        self._defaults = schema.properties.map(\.zeroValue)
        var names: [String: Int] = [:]
        for (i, p) in schema.properties.enumerated() { names[p.name] = i }
        self.propertyIndex = names
        self.propertyNames = schema.properties.map(\.name)
        self._linkingObjectsSources = Array(repeating: nil, count: schema.properties.count)
        self.storage = schema.properties.map {
            $0.type == .linkingObjects ? .computed : $0.type == .object ? .link : .value
        }
        self.valueProperties = schema.properties.indices.filter {
            schema.properties[$0].type != .object && schema.properties[$0].type != .linkingObjects
        }
        self.valueTags = schema.properties.map { p in
            guard !p.isList else { return nil }
            switch p.type {
            case .bool: return .bool
            case .int, .int64: return .int
            case .float: return .float
            case .double: return .double
            case .string: return .string
            case .date: return .date
            case .data: return .data
            case .uuid: return .uuid
            case .decimal: return .decimal
            case .objectID: return .objectID
            default: return nil
            }
        }
        primaryKeyIndex = primaryKeyProperty == nil ? nil : PrimaryKeyIndex()
        var indexes: [Int: ValueIndex] = [:]
        for (i, p) in schema.properties.enumerated() where p.isIndexed && !p.isPrimaryKey {
            indexes[i] = ValueIndex()
        }
        valueIndexes = indexes
        valueIndexByProperty = schema.properties.indices.map { indexes[$0] }
        unretainedValueIndexes = .allocate(capacity: valueIndexByProperty.count)
        _ = unretainedValueIndexes.initialize(from: valueIndexByProperty.map { $0.map(Unmanaged.passUnretained) })
        for (p, index) in indexes { index.attach(to: self, property: p) }
    }

    /// The property stored by the wrapper at this offset in the object, if known.
    @inlinable @inline(__always)
    package func property(forField field: Int) -> Int? {
        // A linear scan: a type has few properties, and this beats hashing.
        for i in 0..<fieldKeyCount where fieldKeys[i].field == field { return fieldKeys[i].property }
        return nil
    }

    /// The field offset of the `@Persisted` wrapper resolved to a property, if one was.
    package func field(ofProperty p: Int) -> Int? {
        for i in 0..<fieldKeyCount where fieldKeys[i].property == p { return fieldKeys[i].field }
        return nil
    }

    package func setProperty(_ p: Int, forField field: Int) {
        guard property(forField: field) == nil else { return }
        if fieldKeyCount == fieldKeys.count {
            let grown = UnsafeMutableBufferPointer<(field: Int, property: Int)>.allocate(
                capacity: max(8, 2 * fieldKeys.count))
            if let old = fieldKeys.baseAddress {
                grown.baseAddress!.moveInitialize(from: old, count: fieldKeyCount)
            }
            fieldKeys.deallocate()
            fieldKeys = grown
        }
        (fieldKeys.baseAddress! + fieldKeyCount).initialize(to: (field, p))
        fieldKeyCount += 1
    }

    /// Whether a plain value fits property `p` as it is (the common case, checked quickly).
    @inlinable @inline(__always)
    package func accepts(_ value: PropertyValue, _ p: Int) -> Bool {
        guard let tag = valueTags[p] else { return false }
        let actual = value.tag
        return actual == tag || (actual == .null && schema.properties[p].isOptional)
    }

    /// The values of a new row before it is filled: the table's ``defaults``, in an array that
    /// is not shared when one was given back (see ``giveBackRowValues(_:)``), so that filling it
    /// copies nothing.
    package func takeRowValues() -> [PropertyValue] {
        guard rowValues.count == defaults.count else { return defaults }
        var values: [PropertyValue] = []
        swap(&values, &rowValues)
        return values
    }

    /// Gives back an array that ``takeRowValues()`` gave, once its row is inserted: its values
    /// are set back to the defaults (it keeps none of the object's) and the next new row takes it.
    package func giveBackRowValues(_ values: inout [PropertyValue]) {
        guard values.count == defaults.count else { return }
        defaults.withUnsafeBufferPointer { defaults in
            for p in defaults.indices { values[p] = defaults[p] }
        }
        swap(&values, &rowValues)
    }

    /// The index of the property with a name, as `propertyIndex` gives it, found without
    /// hashing the name when the type has few properties (comparing a short name with a few
    /// others is cheaper than hashing it): for lookups on every query.
    @inlinable package func position(ofProperty name: String) -> Int? {
        guard propertyNames.count <= 16 else { return propertyIndex[name] }
        return propertyNames.withUnsafeBufferPointer { names in names.firstIndex(of: name) }
    }

    /// The name of the object type.
    @inlinable package var name: String { schema.name }

    /// The number of slots, live or free.
    @inlinable package var rowCount: Int { slotStates.count }

    /// The generation of a slot.
    @inlinable @inline(__always)
    package func generation(_ row: Int32) -> UInt32 { slotStates[Int(row)] >> 1 }

    /// The generation of a slot known to hold a live object: 0 without reading the slot's
    /// state while no live object has a later generation (a slot reused after a deletion), as
    /// in a table that was only ever added to.
    @inlinable @inline(__always)
    package func generation(ofLiveRow row: Int32) -> UInt32 {
        liveLaterGenerations == 0 ? 0 : slotStates.element(at: Int(row)) >> 1
    }

    /// The generation a slot state holds (a state from ``withSlotStates(_:)``).
    @inlinable @inline(__always)
    package static func generation(ofSlotState state: UInt32) -> UInt32 { state >> 1 }

    /// Whether a slot state holds a live object (a state from ``withSlotStates(_:)``).
    @inlinable @inline(__always)
    package static func isLive(slotState state: UInt32) -> Bool { state & 1 != 0 }

    /// Whether a slot holds a live object.
    @inlinable @inline(__always)
    package func isLive(_ row: Int32) -> Bool { slotStates[Int(row)] & 1 != 0 }

    /// Whether a slot's bit in ``liveBits`` is set (the same answer as ``isLive(_:)``).
    @inlinable @inline(__always)
    func hasLiveBit(_ row: Int) -> Bool {
        liveBits[row >> 6] & (1 << UInt64(row & 63)) != 0
    }

    /// Whether the slot bookkeeping agrees with the slot states: a live bit per live slot and
    /// nothing more, and the count of live slots of later generations. For invariant checks.
    package var slotBookkeepingIsConsistent: Bool {
        let rows = (0..<Int32(rowCount))
        return liveBits.count == (rowCount + 63) >> 6
            && rows.allSatisfy { hasLiveBit(Int($0)) == isLive($0) }
            && liveBits.last.map { rowCount & 63 == 0 || $0 >> UInt64(rowCount & 63) == 0 } ?? true
            && liveLaterGenerations == rows.count(where: { isLive($0) && generation($0) != 0 })
    }

    private func setLiveBit(_ row: Int, _ live: Bool) {
        let bit: UInt64 = 1 << UInt64(row & 63)
        if live { liveBits[row >> 6] |= bit } else { liveBits[row >> 6] &= ~bit }
    }

    /// Adds a slot's state at the end (with its word of live bits when it starts one).
    private func appendSlotState(generation: UInt32, live: Bool) {
        if slotStates.count & 63 == 0 { liveBits.append(0) }
        slotStates.append(generation << 1 | (live ? 1 : 0))
        if live {
            setLiveBit(slotStates.count - 1, true)
            if generation != 0 { liveLaterGenerations += 1 }
        }
    }

    /// The key of the object in a slot.
    @inlinable package func key(_ row: Int32) -> ObjectKey {
        ObjectKey(row: UInt32(bitPattern: row), generation: generation(row))
    }

    /// The slot of a key, if it names a live object.
    @inlinable package func row(for key: ObjectKey) -> Int32? {
        let row = Int32(truncatingIfNeeded: key.row)
        guard row >= 0, isValid(row, generation: key.generation) else { return nil }
        return row
    }

    /// Whether every slot holds a live object of generation 0 (as in a table never deleted
    /// from): then a key names an object exactly when its generation is 0 and its row in range.
    var hasOnlyFirstGenerationObjects: Bool {
        liveCount == rowCount && slotStates.chunks.allSatisfy { $0.allSatisfy { $0 == 1 } }
    }

    /// Whether a slot holds a live object of the given generation.
    @inlinable @inline(__always)
    package func isValid(_ row: Int32, generation: UInt32) -> Bool {
        let r = Int(row)
        return r < slotStates.count && slotStates[r] == generation << 1 | 1
    }

    /// Whether a slot holds a live object of the given generation, as ``isValid(_:generation:)``
    /// says, but without reading the slot's state while no live object has a later generation:
    /// then the table's counts answer (every slot live), or else the slot's live bit, which
    /// lies in an array 32 times smaller than the states. For checks of objects met in random
    /// order (the target of each link an insert is given), where the state is a cache miss.
    @inlinable @inline(__always)
    package func isValidFromLiveBits(_ row: Int32, generation: UInt32) -> Bool {
        let r = Int(row)
        guard r >= 0, r < slotStates.count else { return false }
        guard liveLaterGenerations == 0 else { return slotStates[r] == generation << 1 | 1 }
        // No live slot has a later generation: a key of a later one names no live object.
        return generation == 0 && (liveCount == slotStates.count || hasLiveBit(r))
    }

    /// The live rows in slot order.
    package var liveRows: [Int32] {
        if let cache = liveRowsCache, cache.version == structureVersion { return cache.rows }
        var rows: [Int32] = []
        rows.reserveCapacity(liveCount)
        if liveCount == rowCount {
            rows.append(contentsOf: 0..<Int32(rowCount))
        } else {
            for r in 0..<rowCount where slotStates[r] & 1 != 0 { rows.append(Int32(r)) }
        }
        liveRowsCache = (structureVersion, rows)
        return rows
    }

    /// The row of the object with a primary key.
    @inlinable package func row(forPrimaryKey key: PropertyValue) -> Int32? {
        if indexesAreStale { rebuildIndexes() }
        return primaryKeyIndex?.row(for: key)
    }

    /// The row and generation of the object with an integer primary key.
    @inlinable @inline(__always)
    package func entry(forPrimaryKey key: Int64) -> (row: Int32, generation: UInt32)? {
        if indexesAreStale { rebuildIndexes() }
        guard let index = primaryKeyIndex else { return nil }
        if let row = index.ints.alignedRow(for: key) {
            // Every live row holds the key its position gives, so the row's state answers on
            // its own; and reads of the object's columns need not wait for an index read.
            guard row < UInt64(slotStates.count) else { return nil }
            if liveLaterGenerations == 0 {
                return hasLiveBit(Int(row)) ? (Int32(row), 0) : nil
            }
            let state = slotStates[Int(row)]
            return state & 1 == 0 ? nil : (Int32(row), state >> 1)
        }
        return index.ints.entry(for: key)
    }

    /// Starts loading the values of a row's first four properties (other than the primary key,
    /// which a lookup already knows) into the cache, so that reading several of them waits
    /// about as long as reading one (their cache misses overlap).
    @inlinable package func prefetch(row: Int32) {
        var left = 4
        for i in 0..<unretainedColumns.count where left > 0 && i != primaryKeyProperty {
            guard let column = unretainedColumns[i] else { continue }
            column._withUnsafeGuaranteedRef { $0.prefetch(row: Int(row)) }
            left -= 1
        }
    }

    /// Starts loading what reading an element of a collection at a row waits for: the values
    /// of the row's first four properties (the primary key included) and, when the handle
    /// needs it, the slot's state. Iterators call it a few elements ahead of the one they
    /// return, so that the cache misses of successive elements overlap.
    @inlinable @inline(__always)
    package func prefetchElement(row: Int32) {
        if liveLaterGenerations != 0 { slotStates.prefetch(Int(row)) }
        let n = Swift.min(unretainedColumns.count, 4)
        for i in 0..<n {
            guard let column = unretainedColumns[i] else { continue }
            column._withUnsafeGuaranteedRef { $0.prefetch(row: Int(row)) }
        }
    }

    /// Starts loading the value of one property of a row into the cache.
    @inlinable @inline(__always)
    package func prefetch(row: Int32, property: Int) {
        guard let column = unretainedColumns[property] else { return }
        column._withUnsafeGuaranteedRef { $0.prefetch(row: Int(row)) }
    }

    /// Marks the hash indexes as out of date (frozen copies start that way).
    package func markIndexesStale() {
        indexesAreStale = true
        derivedIndexes = [:]
    }

    /// Rebuilds the hash indexes from the data, if they are out of date, and waits for the
    /// value indexes that a load left building (``finishValueIndexBuild()``).
    package func ensureIndexes() {
        finishValueIndexBuild()
        if indexesAreStale { rebuildIndexes() }
    }

    /// Builds the value indexes of the rows loaded: at once for a small table, else on a
    /// thread of their own, so that opening a large file does not wait for them (they are about
    /// a quarter of a load); the first query that uses one and the first write wait for them.
    /// Until then, nothing may change the table (every change is inside a write, and
    /// ``Store/beginWrite()`` waits first).
    func buildValueIndexes(rows: [Int32]) {
        derivedIndexes = [:]
        guard !valueIndexes.isEmpty else { return }
        if rows.count < ValueIndexBuild.minimumRows {
            for (p, index) in valueIndexes { index.insertAll(column(p), rows: rows) }
        } else {
            valueIndexBuild = ValueIndexBuild(indexes: valueIndexes.map { ($0.value, column($0.key)) }, rows: rows)
        }
    }

    /// Waits for the value indexes that ``buildValueIndexes(rows:)`` left building, if any.
    package func finishValueIndexBuild() {
        guard let build = valueIndexBuild else { return }
        build.wait()
        valueIndexBuild = nil
    }

    @usableFromInline func rebuildIndexes() {
        indexesAreStale = false
        let rows = liveRows
        if let pk = primaryKeyProperty {
            for row in rows {
                primaryKeyIndex?.insert(column(pk).value(at: Int(row)), row: row, generation: generation(row))
            }
        }
        // Each value's span made once at its size, as a load makes them.
        for (p, index) in valueIndexes { index.insertAll(column(p), rows: rows) }
    }

    /// The primary key of a row.
    @inlinable package func primaryKey(of row: Int32) -> PropertyValue? {
        primaryKeyProperty.map { column($0).value(at: Int(row)) }
    }

    /// The current value of a stored property.
    @inlinable package func value(_ row: Int32, _ property: Int) -> PropertyValue {
        if let column = columns[property] { return column.value(at: Int(row)) }
        guard let source = linkingObjectsSources[property] else { return .list([]) }
        return .list(source.rows[Int(row)].map { .object(source.source.key($0)) })
    }

    /// All values of a row, in property order (`LinkingObjects` included).
    package func values(_ row: Int32) -> [PropertyValue] {
        (0..<schema.properties.count).map { value(row, $0) }
    }

    /// The source rows linking to `row` through every incoming link property.
    @inlinable package func linkCount(to row: Int32) -> Int {
        incoming.reduce(0) { $0 + $1.rows[Int(row)].count }
    }

    // MARK: Raw slot operations (no logging; used by the store's logged primitives).

    func appendSlot(_ values: [PropertyValue]) -> Int32 {
        fillIncomingRows()
        let row = Int32(rowCount)
        // The columns borrowed rather than retained: a retain and a release per column and
        // object (each an atomic operation) were about 5 % of a bulk insert's time.
        let columns = unretainedColumns
        for i in 0..<columns.count {
            columns[i]?._withUnsafeGuaranteedRef { $0.append(values[i]) }
        }
        appendSlotState(generation: appendGeneration, live: false)
        for b in incoming { b.rows.append([]) }
        return row
    }

    /// Adds a live slot at the end for an object whose values are already appended to every
    /// column (the snapshot loader's fast path). The incoming backlink columns get their
    /// (empty) entries for such slots all at once, in ``fillIncomingRows()``, which must run
    /// before they are read or appended to.
    func appendLoadedSlot(generation: UInt32) -> Int32 {
        let row = Int32(rowCount)
        appendSlotState(generation: generation, live: true)
        liveCount += 1
        structureVersion &+= 1
        return row
    }

    /// ``appendLoadedSlot(generation:)`` for a run of objects: their slots' states appended a
    /// chunk at a time and their live bits a word at a time.
    func appendLoadedSlots(generations: UnsafeBufferPointer<UInt32>) {
        let start = slotStates.count
        let end = start + generations.count
        var later = 0
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: generations.count) { states in
            for (i, generation) in generations.enumerated() {
                states[i] = generation << 1 | 1
                later += generation == 0 ? 0 : 1
            }
            slotStates.append(contentsOf: UnsafeBufferPointer(states))
        }
        var row = start
        while row < end {
            if row & 63 == 0 { liveBits.append(0) }
            let last = min(end, (row | 63) + 1)
            // The bits of rows `row..<last`, all in the word of `row`.
            let width = UInt64(last - row)
            let bits: UInt64 = (width == 64 ? ~0 : (1 << width) - 1) << UInt64(row & 63)
            liveBits[row >> 6] |= bits
            row = last
        }
        liveLaterGenerations += later
        liveCount += generations.count
        structureVersion &+= 1
    }

    /// Gives every incoming backlink column an empty entry for each slot it lacks one for
    /// (those added by ``appendLoadedSlot(generation:)``).
    func fillIncomingRows() {
        for b in incoming where b.rows.count < rowCount {
            b.rows.append(repeating: [], count: rowCount - b.rows.count)
        }
    }

    func removeLastSlot() {
        for column in columns { column?.removeLast() }
        let last = Int32(slotStates.count - 1)
        if isLive(last) && generation(last) != 0 { liveLaterGenerations -= 1 }
        setLiveBit(Int(last), false)
        slotStates.removeLast()
        if slotStates.count & 63 == 0 { liveBits.removeLast() }
        for b in incoming { b.rows.removeLast() }
    }

    package func reserve(_ capacity: Int) {
        for column in columns { column?.reserve(capacity) }
        slotStates.reserveCapacity(capacity)
        liveBits.reserveCapacity((capacity + 63) >> 6)
        if let pk = primaryKeyProperty { primaryKeyIndex?.reserve(capacity, for: schema.properties[pk].type) }
    }

    func markLive(_ row: Int32, _ live: Bool) {
        if live { slotStates[Int(row)] |= 1 } else { slotStates[Int(row)] &= ~1 }
        setLiveBit(Int(row), live)
        if generation(row) != 0 { liveLaterGenerations += live ? 1 : -1 }
        liveCount += live ? 1 : -1
        structureVersion &+= 1
    }

    func setGeneration(_ row: Int32, _ generation: UInt32) {
        if isLive(row) {
            liveLaterGenerations += (generation != 0 ? 1 : 0) - (self.generation(row) != 0 ? 1 : 0)
        }
        slotStates[Int(row)] = generation << 1 | (slotStates[Int(row)] & 1)
    }

    /// Copies slot bookkeeping from another table (for frozen copies).
    package func copySlots(from other: Table) {
        slotStates = other.slotStates
        liveBits = other.liveBits
        liveLaterGenerations = other.liveLaterGenerations
        freeRows = other.freeRows
        liveCount = other.liveCount
        structureVersion = other.structureVersion
    }

    /// Retires a generation of appended slots (their insertion was rolled back).
    func raiseAppendGeneration(above generation: UInt32) {
        appendGeneration = max(appendGeneration, generation &+ 1)
    }

    func popFreeRow() -> Int32? { freeRows.popLast() }
    func pushFreeRow(_ row: Int32) { freeRows.append(row) }

    func indexInsert(_ row: Int32, values: [PropertyValue]) {
        if let pk = primaryKeyProperty { primaryKeyIndex?.insert(values[pk], row: row, generation: generation(row)) }
        // The column holds the row's values: a value index reads them when it next needs them.
        for index in valueIndexes.values { index.insertLater(row) }
        for (p, index) in derivedIndexes { index.insert(values[p], row: row) }
    }

    /// The slot states (generation and live bit per slot), for readers that walk every row.
    @inlinable package func withSlotStates<R, E: Error>(_ body: (ChunkedArray<UInt32>) throws(E) -> R) throws(E) -> R {
        try body(slotStates)
    }

    func indexRemove(_ row: Int32) {
        if let pk = primaryKeyProperty {
            primaryKeyIndex?.remove(column(pk).value(at: Int(row)))
        }
        for (p, index) in valueIndexes { index.remove(column(p).value(at: Int(row)), row: row) }
        for (p, index) in derivedIndexes { index.remove(column(p).value(at: Int(row)), row: row) }
    }

    package func setColumns(_ columns: [Column?]) {
        derivedIndexes = [:]
        self._columns = columns
        unretainedColumns.deallocate()
        _unretainedColumns = .allocate(capacity: columns.count)
        _ = unretainedColumns.initialize(from: columns.map { $0.map(Unmanaged.passUnretained) })
    }

    /// The secondary index of property `p`, borrowed for `body` (nil when there is none).
    @inlinable @inline(__always)
    package func withValueIndex<Result>(_ p: Int, _ body: (ValueIndex) -> Result) -> Result? {
        guard let index = unretainedValueIndexes[p] else { return nil }
        return index._withUnsafeGuaranteedRef(body)
    }

    deinit {
        // A build still running reads this table's columns (through the indexes' unowned
        // reference to it): it must end before they go.
        valueIndexBuild?.wait()
        unretainedColumns.deallocate()
        unretainedValueIndexes.deallocate()
        fieldKeys.deallocate()
    }
    /// Attaches what the layer above knows of the model class, and the defaults of its
    /// properties.
    package func setModel(_ model: AnyObject?, defaults: [PropertyValue]?) {
        self.model = model
        if let defaults { self.defaults = defaults }
    }
    func addIncoming(_ b: BacklinkColumn) {
        b.rows = ChunkedArray(repeating: [], count: rowCount)
        incoming.append(b)
    }
    func setOutgoing(_ property: Int, _ b: BacklinkColumn) { outgoing[property] = b }
    func setLinkingObjectsSource(_ property: Int, _ b: BacklinkColumn) {
        linkingObjectsSources[property] = b
    }
}

/// An index of one property that a layer above the store builds from its column and the
/// store keeps in step with every change of a live row's value (``Table/derivedIndexes``):
/// an insertion, a change, a removal, and their rollbacks.
package protocol DerivedIndex: AnyObject {
    /// A live row now holds `value` (created, restored, or changed to it).
    func insert(_ value: PropertyValue, row: Int32)
    /// A live row no longer holds `value` (removed, or changed from it).
    func remove(_ value: PropertyValue, row: Int32)
}

/// Value indexes filled from their columns on a thread of their own, after a load.
final class ValueIndexBuild: @unchecked Sendable {
    // @unchecked: from `init` until `wait()` returns, the thread reads the columns, which nothing
    // changes meanwhile (changes are made in writes, which wait first), and fills the indexes,
    // which nothing reads before `wait()` (queries wait first).

    /// Tables with fewer rows build their indexes at once: a thread costs more than it saves.
    static let minimumRows = 20_000

    private let indexes: [(index: ValueIndex, column: Column)]
    private let rows: [Int32]
    private let finished = DispatchSemaphore(value: 0)
    /// The number of rows of each build whose thread has not finished filling its indexes, for
    /// tests: a table let go waits for its build.
    package static let unfinished = Mutex<[Int]>([])

    init(indexes: [(index: ValueIndex, column: Column)], rows: [Int32]) {
        self.indexes = indexes
        self.rows = rows
        Self.unfinished.withLock { $0.append(rows.count) }
        // A thread of its own rather than a dispatch queue: the waiting thread may be one of
        // the concurrency runtime's, which a queue's work could be waiting for.
        Thread.detachNewThread { [self] in run() }
    }

    private func run() {
        for (index, column) in indexes { index.insertAll(column, rows: rows) }
        Self.unfinished.withLock { _ = $0.remove(at: $0.firstIndex(of: rows.count)!) }
        finished.signal()
    }

    func wait() { finished.wait() }
}
