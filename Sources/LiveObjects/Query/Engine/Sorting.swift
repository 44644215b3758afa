import LiveObjectsStore

/// How strings compare when sorting.
public enum StringComparison: Sendable, Hashable {
    /// Unicode code point order of the canonical compositions (NFC), the order of `<` in
    /// queries (`"Banana" < "apple"`; see docs/QUERIES.md). Canonically equivalent strings
    /// (`"é"` written as one scalar or as `e` and a combining accent) are equal.
    case exact
    /// Case folded by Unicode rules, in every script (`"apple" < "Banana"`).
    case caseInsensitive
    /// For people: case and diacritics ignored first, digit runs by value
    /// (`"file2" < "file10"`, `"apple" < "Banana"`, `"cote" < "Côte" < "coter"`).
    case natural

    var order: StringSortOrder {
        switch self {
        case .exact: .exact
        case .caseInsensitive: .caseInsensitive
        case .natural: .natural
        }
    }
}

/// One sort criterion: a key path (through to-one links), a direction, and how strings compare.
///
/// `nil` values sort before every other value when ascending (after them when descending).
/// Sorting is stable: objects that compare equal keep their previous order.
public struct SortField: Sendable, Hashable {
    /// The key path, as property names joined by dots (`"owner.name"`).
    public var keyPath: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// How string values compare.
    public var comparison: StringComparison

    /// Creates a sort criterion.
    public init(_ keyPath: String, ascending: Bool = true, comparison: StringComparison = .exact) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.comparison = comparison
    }
}

/// Sorts rows by bound sort fields, computing each row's keys once.
struct RowSorter {
    struct Field {
        let path: BoundPath
        let ascending: Bool
        let comparison: StringComparison
    }

    let fields: [Field]

    static func bind(_ sorts: [SortField], table: Table, store: Store) throws(LiveObjectsError) -> RowSorter {
        var fields: [Field] = []
        for sort in sorts {
            let path: BoundPath
            do {
                path = try BoundPath.resolve(
                    sort.keyPath.split(separator: ".").map(String.init), from: table, store: store)
            } catch {
                throw LiveObjectsError(
                    error.code, "cannot sort by '\(sort.keyPath)': \(error.message)",
                    objectType: table.name, property: sort.keyPath)
            }
            guard !path.isToMany, let terminal = path.terminal, terminal.type != .object else {
                throw LiveObjectsError(
                    .invalidQuery, "cannot sort by '\(sort.keyPath)': it is not a single value",
                    objectType: table.name, property: sort.keyPath)
            }
            fields.append(Field(path: path, ascending: sort.ascending, comparison: sort.comparison))
        }
        return RowSorter(fields: fields)
    }

    enum Key {
        case value(PropertyValue)
        case string(StringSortKey)
        /// An ASCII string in exact order, with its first eight bytes as a big-endian number
        /// (zero-padded), which decides most comparisons, and its length.
        case ascii(prefix: UInt64, length: Int, String)
        case null
    }

    private static func key(_ field: Field, _ row: Int32) -> Key {
        key(field.path.value(from: row), field.comparison)
    }

    /// The key of a value, to sort by a string comparison.
    static func key(_ value: PropertyValue, _ comparison: StringComparison) -> Key {
        switch value {
        case .null: return .null
        case .string(let s) where comparison == .exact:
            // ASCII strings in exact order compare by their bytes; others by a key made once.
            var bytes = s
            let prefix: (UInt64, Int)? = bytes.withUTF8 { bytes in
                var high: UInt8 = 0
                var prefix: UInt64 = 0
                for (i, byte) in bytes.enumerated() {
                    high |= byte
                    if i < 8 { prefix |= UInt64(byte) << (56 - 8 * i) }
                }
                return high < 0x80 ? (prefix, bytes.count) : nil
            }
            guard let prefix else { return .string(StringSortKey(s, order: .exact)) }
            return .ascii(prefix: prefix.0, length: prefix.1, s)
        case .string(let s):
            return .string(StringSortKey(s, order: comparison.order))
        default: return .value(value)
        }
    }

    /// The sort keys of one row.
    func keys(for row: Int32) -> [Key] {
        fields.map { Self.key($0, row) }
    }

    /// Orders two rows by their keys, then by slot (a total order).
    func compare(_ a: [Key], _ rowA: Int32, _ b: [Key], _ rowB: Int32) -> Int {
        for (f, field) in fields.enumerated() {
            let c = Self.compare(a[f], b[f])
            if c != 0 { return field.ascending ? c : -c }
        }
        return rowA < rowB ? -1 : (rowA == rowB ? 0 : 1)
    }

    /// Orders two rows as ``compare(_:_:_:_:)``, the first one's keys read from `stored`, from
    /// `offset` on (a subscription's keys of every row in one array).
    func compare(
        _ stored: UnsafeBufferPointer<Key>, from offset: Int, _ rowA: Int32, _ b: [Key], _ rowB: Int32
    ) -> Int {
        for (f, field) in fields.enumerated() {
            let c = Self.compare(stored[offset + f], b[f])
            if c != 0 { return field.ascending ? c : -c }
        }
        return rowA < rowB ? -1 : (rowA == rowB ? 0 : 1)
    }

    func sort(_ rows: [Int32]) -> [Int32] {
        guard !fields.isEmpty, rows.count > 1 else { return rows }
        // Keys once per row and field.
        var keys: [[Key]] = fields.map { field in rows.map { Self.key(field, $0) } }
        var order = Array(rows.indices)
        order.sort { a, b in
            for (f, field) in fields.enumerated() {
                let c = Self.compare(keys[f][a], keys[f][b])
                if c != 0 { return field.ascending ? c < 0 : c > 0 }
            }
            return a < b
        }
        keys.removeAll()
        return order.map { rows[$0] }
    }

    /// Two numbers that do not compare (one is NaN): NaN sorts before every other number and
    /// with the other NaNs, so that the order stays total.
    static func nanFirst(_ a: PropertyValue, _ b: PropertyValue) -> Int {
        func isNaN(_ v: PropertyValue) -> Bool {
            switch v {
            case .double(let d): d.isNaN
            case .float(let f): f.isNaN
            case .decimal(let d): d.isNaN
            default: false
            }
        }
        let (x, y) = (isNaN(a), isNaN(b))
        return x == y ? 0 : (x ? -1 : 1)
    }

    /// The place of a key's kind in a sort over mixed values (``AnyValue/sortRank(of:)``).
    static func rank(_ key: Key) -> Int {
        switch key {
        case .null: AnyValue.sortRank(of: .null)
        case .string, .ascii: AnyValue.sortRank(of: .string(""))
        case .value(let v): AnyValue.sortRank(of: v)
        }
    }

    /// Orders two keys: nil first, then values of different kinds by ``rank(_:)`` (only a mixed
    /// property holds several), then as ``compareValues(_:_:_:)``.
    static func compare(_ a: Key, _ b: Key) -> Int {
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.string(let x), .string(let y)): return StringSortKey.compare(x, y)
        case (.value(let x), .value(let y)): return compareValues(x, y) ?? nanFirst(x, y)
        // Exact order: an ASCII string and another one's key.
        case (.ascii(let p, let m, let x), .ascii(let q, let n, let y)):
            if p != q { return p < q ? -1 : 1 }
            // The same first eight bytes: when both are that short, the shorter comes first.
            if m <= 8 && n <= 8 { return m == n ? 0 : (m < n ? -1 : 1) }
            return StringOrder.compare(x, y)
        case (.ascii(_, _, let x), .string(let y)): return StringSortKey.compare(exactASCII: x, y)
        case (.string(let x), .ascii(_, _, let y)): return -StringSortKey.compare(exactASCII: y, x)
        default: return 0
        }
    }
}
