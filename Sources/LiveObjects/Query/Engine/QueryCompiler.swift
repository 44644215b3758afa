import Foundation
import LiveObjectsStore

/// Binds a ``PredicateSyntax`` tree to a table: resolves key paths, checks that the two sides
/// of each comparison can be compared, folds string constants, and picks the fast paths
/// (index lookups and column scans).
struct QueryCompiler {
    let store: Store
    let root: Table
    /// The predicate text, when the predicate came from a string: errors then point at it.
    let text: String?
    private var scopes: [String: (slot: Int, table: Table)] = [:]
    private(set) var slotCount = 0
    /// The memos the evaluation keeps (``EvaluationContext/memos``).
    private(set) var memoCount = 0
    /// The subquery variables (their slots) that the key paths bound so far start from; `-1`
    /// for the object being tested. What tells a `SUBQUERY` whose predicate reads only its own
    /// variable.
    private var variablesRead = Set<Int>()

    init(store: Store, root: Table, text: String?) {
        self.store = store
        self.root = root
        self.text = text
    }

    /// Binds a whole predicate.
    static func bind(_ predicate: PredicateSyntax, to table: Table, store: Store, text: String?)
        throws(LiveObjectsError) -> BoundQuery
    {
        var compiler = QueryCompiler(store: store, root: table, text: text)
        let bound = try compiler.bind(predicate)
        return BoundQuery(predicate: bound, slotCount: compiler.slotCount, memoCount: compiler.memoCount)
    }

    /// Binds a predicate that is a single equality between a property of the table and a
    /// constant, when the property is the primary key or indexed: the common lookup by value.
    /// Such a predicate cannot fail to bind, and binding it needs none of the general
    /// compiler's work. Nil for any other predicate.
    static func bindIndexedEquality(_ predicate: PredicateSyntax, to table: Table, store: Store) -> BoundQuery? {
        guard case .comparison(let c) = predicate, c.quantifier == .direct, c.op == .equal, c.options.isEmpty
        else { return nil }
        // The key path on either side, the value on the other (matched side by side rather
        // than as a pair, which would copy both).
        let path: KeyPathSyntax
        let value: PropertyValue
        if case .keyPath(let k) = c.lhs, case .value(let v) = c.rhs {
            path = k
            value = v
        } else if case .value(let v) = c.lhs, case .keyPath(let k) = c.rhs {
            path = k
            value = v
        } else {
            return nil
        }
        guard path.variable == nil, path.components.count == 1,
            let p = table.position(ofProperty: path.components[0])
        else { return nil }
        return bindIndexedEquality(property: p, value: value, in: table)
    }

    /// Binds the equality of property `p` of the table with a value, when the property is the
    /// primary key or indexed; nil otherwise. What ``bindIndexedEquality(_:to:store:)`` gives
    /// for a predicate that says so.
    static func bindIndexedEquality(property p: Int, value: PropertyValue, in table: Table) -> BoundQuery? {
        canLookUp(property: p, value: value, in: table) ? indexedEquality(property: p, value: value, in: table) : nil
    }

    /// Whether the equality of property `p` with a value can be answered from an index.
    static func canLookUp(property p: Int, value: PropertyValue, in table: Table) -> Bool {
        // `accepts` takes only a value of the property's own type (never for a list or a link),
        // which checking against the property leaves as it is. The check could only refuse a
        // string or data longer than allowed, which no stored value is: the general path then
        // looks up no key, and looking it up finds nothing, the same empty result.
        !value.isNull && (table.unretainedValueIndexes[p] != nil || p == table.primaryKeyProperty)
            && table.accepts(value, p)
    }

    /// The equality of property `p` with a value, answered from an index (see ``canLookUp``).
    static func indexedEquality(property p: Int, value: PropertyValue, in table: Table) -> BoundQuery {
        BoundQuery(predicate: .index(IndexLookup(table: table, property: p, key: value)), slotCount: 0)
    }

    private func fail(_ failure: QueryBindingFailure, at offset: Int) -> LiveObjectsError {
        if let text {
            var error = PredicateParser.error(failure.code, failure.message, at: offset, in: text)
            error.objectType = failure.objectType
            error.property = failure.property
            return error
        }
        return LiveObjectsError(
            failure.code, failure.message, objectType: failure.objectType ?? root.name,
            property: failure.property)
    }

    private func fail(_ message: String, at offset: Int) -> LiveObjectsError {
        fail(QueryBindingFailure(message, objectType: root.name), at: offset)
    }

    /// Binds a predicate. `NOT`, `AND` and `OR` are walked with an explicit stack
    /// (``walkPredicateGroups(_:_:)``), so that the depth of the tree (up to the nesting limit)
    /// costs no stack; only `SUBQUERY` recurses, at most ``PredicateParser/maxSubqueryDepth`` deep.
    mutating func bind(_ predicate: PredicateSyntax) throws(LiveObjectsError) -> BoundPredicate {
        var fold = BindFold(compiler: consume self)
        defer { self = fold.compiler }
        return try walkPredicateGroups(predicate, &fold)
    }

    // MARK: Comparisons

    fileprivate mutating func bind(_ c: ComparisonSyntax) throws(LiveObjectsError) -> BoundPredicate {
        var lhs = try bind(c.lhs, at: c.offset)
        var rhs = try bind(c.rhs, at: c.offset)
        var op = c.op
        // Keep the constant on the right.
        if case .constant = lhs.expression, !(rhs.expression.isConstant), op != .in, op != .between,
            let flipped = op.flipped
        {
            swap(&lhs, &rhs)
            op = flipped
        }
        try check(lhs, op, rhs, c)
        if case .path(let path, _) = lhs.expression, path.terminal?.type == .mixed,
            case .constant(.object) = rhs.expression
        {
            // An object argument is a key without its type, which a mixed value's link has.
            throw fail(
                "compare an AnyValue with AnyValue.object(object) as the argument, which names the object's type",
                at: c.offset)
        }
        if case .path(let path, _) = lhs.expression, path.steps.last?.readsKind == true {
            return try bindKindTest(lhs, op, rhs, c)
        }
        var matcher: StringMatcher?
        if op == .text {
            matcher = try fullTextMatcher(rhs, c)
        } else if case .constant(.string(let pattern)) = rhs.expression,
            [.beginsWith, .endsWith, .contains, .like].contains(op)
                || ((op == .equal || op == .notEqual) && !c.options.isEmpty)
        {
            matcher = StringMatcher(
                operator: op == .notEqual ? .equal : op, pattern: pattern, options: c.options)
        }
        var comparison = BoundComparison(
            quantifier: c.quantifier, lhs: lhs.expression, op: op, options: c.options,
            rhs: rhs.expression, matcher: matcher)
        if let fast = fastPath(comparison) { return fast }
        if comparison.canMemoize, case .path(let path, _) = comparison.lhs {
            comparison.memo = memoCount
            memoCount += path.steps.count
        }
        return .comparison(comparison)
    }

    /// `payload.@type == 'string'`, `!=`, `IN {…}`: the kind names (any case, with `numeric`
    /// for the four kinds of numbers) checked and spelled as ``AnyValue/kindName`` reads them, the
    /// comparison made an `IN` of them.
    private func bindKindTest(_ lhs: Bound, _ op: ComparisonOperator, _ rhs: Bound, _ c: ComparisonSyntax)
        throws(LiveObjectsError) -> BoundPredicate
    {
        var names: [PropertyValue] = []
        switch rhs.expression {
        case .constant(.string(let name)) where op == .equal || op == .notEqual:
            names = [.string(name)]
        case .constant(.list(let items)) where op == .in:
            names = items
        default:
            throw fail("@type is compared with ==, != or IN and kind names such as 'string' or 'numeric'", at: c.offset)
        }
        var kinds: [PropertyValue] = []
        for name in names {
            guard case .string(let text) = name, let matching = AnyValue.kindNames(matching: text) else {
                throw fail(
                    "\(name) is not a kind of AnyValue (\(AnyValue.kindNames.joined(separator: ", ")), numeric)",
                    at: c.offset)
            }
            kinds += matching.map { .string($0) }
        }
        let comparison = BoundComparison(
            quantifier: c.quantifier, lhs: lhs.expression, op: .in, options: [], rhs: .constant(.list(kinds)),
            matcher: nil)
        return op == .notEqual ? .not(.comparison(comparison)) : .comparison(comparison)
    }

    /// The matcher of `TEXT`, whose right-hand side must be a string constant holding a valid
    /// full-text query (``FullTextQuery``).
    private func fullTextMatcher(_ rhs: Bound, _ c: ComparisonSyntax) throws(LiveObjectsError) -> StringMatcher {
        guard case .constant(.string(let text)) = rhs.expression else {
            throw fail("TEXT takes a string constant (the full-text query), not \(rhs.name)", at: c.offset)
        }
        do {
            return StringMatcher(fullText: try FullTextQuery(text))
        } catch {
            throw fail(error.message, at: c.offset)
        }
    }

    /// The index lookup or column scan for a comparison, when it has that shape.
    private func fastPath(_ c: BoundComparison) -> BoundPredicate? {
        guard c.quantifier == .direct || c.quantifier == .any,
            case .path(let path, nil) = c.lhs, path.steps.count == 1, !path.isToMany,
            path.steps[0].target == nil, path.steps[0].mapAccess == nil, path.steps[0].mixedAccess.isEmpty,
            case .constant(let constant) = c.rhs
        else { return nil }
        let p = path.steps[0].property
        let property = root.schema.properties[p]
        // A mixed column holds values of every kind: compared value by value.
        if property.type == .mixed { return nil }
        // Index lookups: equality or IN on the primary key or an indexed property.
        if c.options.isEmpty, property.isPrimaryKey || property.isIndexed {
            var keys: [PropertyValue]?
            if c.op == .equal { keys = [constant] }
            if c.op == .in, case .list(let items) = constant { keys = items }
            if let keys {
                let checked = keys.compactMap { try? store.check($0, for: property, in: root) }
                return .index(IndexLookup(table: root, property: p, keys: checked))
            }
        }
        // Ranges on an indexed property: a sorted index, built on first use and kept until the
        // column changes.
        if c.options.isEmpty, property.isIndexed, constant.tag != .null, constant.tag != .list,
            [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual].contains(c.op)
        {
            return .range(RangeLookup(table: root, property: p, op: c.op, bound: constant))
        }
        if c.options.isEmpty, property.isIndexed, c.op == .between, case .list(let bounds) = constant,
            bounds.count == 2
        {
            return .and([
                .range(RangeLookup(table: root, property: p, op: .greaterThanOrEqual, bound: bounds[0])),
                .range(RangeLookup(table: root, property: p, op: .lessThanOrEqual, bound: bounds[1])),
            ])
        }
        let test: ColumnScan.Test
        switch constant {
        case .null where c.op == .equal || c.op == .notEqual:
            test = .isNull(c.op == .equal)
        case _ where c.matcher != nil:
            test = .string(c.matcher!, negated: c.op == .notEqual)
        case .string(let s) where c.options.isEmpty && c.op.isOrdering:
            test = .exactString(c.op, s)
        case .int(let i) where c.op.isOrdering && property.type.isInteger:
            test = .int(c.op, i)
        case .int(let i) where c.op.isOrdering && (property.type == .double || property.type == .float):
            test = .double(c.op, Double(i))
        case .double(let d) where c.op.isOrdering && property.type != .date && property.type != .decimal:
            test = .double(c.op, d)
        case .float(let f) where c.op.isOrdering && property.type != .decimal:
            test = .double(c.op, Double(f))
        case .date(let d) where c.op.isOrdering:
            test = .date(c.op, d)
        case .bool(let b) where c.op == .equal || c.op == .notEqual:
            test = .bool(c.op, b)
        default:
            return nil
        }
        let scan = ColumnScan(table: root, property: p, test: test)
        return .scan(scan, fallback: c)
    }

    /// Refuses comparisons whose sides cannot be compared.
    private func check(_ lhs: Bound, _ op: ComparisonOperator, _ rhs: Bound, _ c: ComparisonSyntax)
        throws(LiveObjectsError)
    {
        if op.isStringOperation {
            guard lhs.kind == .string || lhs.kind == .unknown || lhs.kind == .null,
                rhs.kind == .string || rhs.kind == .unknown || rhs.kind == .null
            else {
                throw fail(
                    "\(op.rawValue) compares strings, not \(lhs.kind.rawValue) and \(rhs.kind.rawValue)", at: c.offset)
            }
        }
        if op == .between {
            guard case .constant(.list(let bounds)) = rhs.expression, bounds.count == 2 else {
                throw fail("BETWEEN needs two bounds: {lower, upper}", at: c.offset)
            }
            for bound in bounds where !lhs.kind.accepts(Kind(bound)) {
                throw fail("cannot compare \(lhs.name) (\(lhs.kind.rawValue)) with \(bound)", at: c.offset)
            }
            return
        }
        if op == .in {
            if case .constant(.list(let items)) = rhs.expression {
                for item in items where !lhs.kind.accepts(Kind(item)) {
                    throw fail("cannot compare \(lhs.name) (\(lhs.kind.rawValue)) with \(item)", at: c.offset)
                }
                return
            }
            guard lhs.kind.accepts(rhs.kind) else {
                throw fail("cannot compare \(lhs.kind.rawValue) with \(rhs.kind.rawValue)", at: c.offset)
            }
            return
        }
        guard lhs.kind.accepts(rhs.kind) else {
            throw fail(
                "cannot compare \(lhs.name) (\(lhs.kind.rawValue)) with \(rhs.name) (\(rhs.kind.rawValue))",
                at: c.offset)
        }
        if op.isOrdering && op != .equal && op != .notEqual {
            for kind in [lhs.kind, rhs.kind] where kind == .object || kind == .bool || kind == .uuid {
                throw fail("\(kind.rawValue) values cannot be ordered with \(op.rawValue)", at: c.offset)
            }
        }
    }

    // MARK: Expressions

    /// What kind of value an expression yields, for type checks.
    enum Kind: String {
        case null = "nil", bool = "Bool", number = "number", string = "String", date = "Date"
        case data = "Data", uuid = "UUID", objectID = "ObjectID", object = "object", list = "list"
        case unknown = "value"

        init(_ value: PropertyValue) {
            switch value {
            case .null: self = .null
            case .bool: self = .bool
            case .int, .float, .double, .decimal: self = .number
            case .string: self = .string
            case .date: self = .date
            case .data: self = .data
            case .uuid: self = .uuid
            case .objectID: self = .objectID
            case .object: self = .object
            case .list: self = .list
            }
        }

        init(_ type: PropertyType) {
            switch type {
            case .bool: self = .bool
            case .int, .int8, .int16, .int32, .int64, .float, .double, .decimal: self = .number
            case .string: self = .string
            case .date: self = .date
            case .data: self = .data
            case .uuid: self = .uuid
            case .objectID: self = .objectID
            case .object, .linkingObjects: self = .object
            case .mixed: self = .unknown
            }
        }

        func accepts(_ other: Kind) -> Bool {
            self == other || self == .null || other == .null || self == .unknown || other == .unknown
        }
    }

    struct Bound {
        var expression: BoundExpression
        var kind: Kind
        var name: String
    }

    private mutating func bind(_ e: ExpressionSyntax, at offset: Int) throws(LiveObjectsError) -> Bound {
        switch e {
        case .value(let value):
            return Bound(expression: .constant(value), kind: Kind(value), name: value.description)
        case .keyPath(let keyPath):
            let (path, slot) = try resolve(keyPath)
            let kind: Kind = path.terminal.map { Kind($0.type) } ?? .object
            return Bound(expression: .path(path, variable: slot), kind: kind, name: keyPath.description)
        case .collectionOperation(let op, let collection, let property):
            switch collection {
            case .keyPath(let keyPath):
                let (path, slot) = try resolve(keyPath)
                var element: BoundPath?
                if !property.isEmpty {
                    guard let table = path.objectTable, path.terminal?.type != nil || path.steps.isEmpty else {
                        throw fail(
                            "\(keyPath) holds no objects, so @\(op.rawValue).\(property.joined(separator: ".")) has no meaning",
                            at: keyPath.offset)
                    }
                    do throws(QueryBindingFailure) {
                        if path.steps.count + property.count > BoundPath.maximumLength {
                            throw BoundPath.tooLong(path.steps.count + property.count, objectType: root.name)
                        }
                        element = try BoundPath.resolve(property, from: table, store: store)
                    } catch {
                        throw fail(error, at: keyPath.offset)
                    }
                }
                let countsAnyValue =
                    (op == .count || op == .size) && path.terminal?.type == .mixed
                    && path.steps.last?.readsKind == false
                if op != .size && !path.isToMany && !countsAnyValue {
                    throw fail("@\(op.rawValue) needs a list, and \(keyPath) is not one", at: keyPath.offset)
                }
                let kind: Kind =
                    switch op {
                    case .count, .size, .sum, .avg: .number
                    case .min, .max: (element ?? path).terminal.map { Kind($0.type) } ?? .unknown
                    }
                return Bound(
                    expression: .aggregate(op, collection: path, variable: slot, element: element),
                    kind: kind, name: "\(keyPath).@\(op.rawValue)")
            case .subquery(let keyPath, let variable, let predicate):
                guard op == .count else {
                    throw fail("SUBQUERY results only support @count", at: keyPath.offset)
                }
                let (path, slot) = try resolve(keyPath)
                guard let table = path.objectTable, path.isToMany else {
                    throw fail("SUBQUERY needs a list of objects, and \(keyPath) is not one", at: keyPath.offset)
                }
                let newSlot = slotCount
                slotCount += 1
                let saved = scopes[variable]
                scopes[variable] = (newSlot, table)
                defer { scopes[variable] = saved }
                let outerRead = variablesRead
                variablesRead = []
                let bound = try bind(predicate)
                // A predicate that reads only its own variable answers the same for an element
                // from every object: kept per element.
                let innerRead = variablesRead.subtracting([newSlot])
                variablesRead = outerRead.union(innerRead)
                var memo: Int?
                if innerRead.isEmpty {
                    memo = memoCount
                    memoCount += 1
                }
                return Bound(
                    expression: .subqueryCount(
                        collection: path, variable: slot, slot: newSlot, predicate: bound, memo: memo),
                    kind: .number, name: "SUBQUERY(\(keyPath)).@count")
            default:
                throw fail("a collection operator needs a key path or a SUBQUERY", at: offset)
            }
        case .subquery(let keyPath, _, _):
            throw fail("a SUBQUERY must be followed by @count", at: keyPath.offset)
        }
    }

    private mutating func resolve(_ keyPath: KeyPathSyntax) throws(LiveObjectsError) -> (BoundPath, Int?) {
        var table = root
        var slot: Int?
        if let variable = keyPath.variable {
            guard let scope = scopes[variable] else {
                throw fail("$\(variable) is not a SUBQUERY variable here", at: keyPath.offset)
            }
            table = scope.table
            slot = scope.slot
        }
        variablesRead.insert(slot ?? -1)
        do {
            return (try BoundPath.resolve(keyPath.components, from: table, store: store), slot)
        } catch {
            throw fail(error, at: keyPath.offset)
        }
    }
}

extension BoundExpression {
    var isConstant: Bool {
        if case .constant = self { return true }
        return false
    }
}

extension ComparisonOperator {
    /// The operator with its sides swapped (`3 < age` is `age > 3`).
    var flipped: ComparisonOperator? {
        switch self {
        case .equal, .notEqual: self
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        default: nil
        }
    }

    /// `==`, `!=`, `<`, `<=`, `>`, `>=`.
    var isOrdering: Bool {
        switch self {
        case .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual: true
        default: false
        }
    }

    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`.
    var isStringOperation: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like, .text: true
        default: false
        }
    }
}

/// Rows from a primary-key or secondary index: `property == key` or `property IN keys`.
struct IndexLookup {
    let table: Table
    let property: Int
    let keys: Keys

    /// The keys looked up: usually one, held without an array.
    enum Keys {
        case one(PropertyValue)
        case several([PropertyValue])
    }

    init(table: Table, property: Int, key: PropertyValue) {
        self.table = table
        self.property = property
        self.keys = .one(key)
    }

    init(table: Table, property: Int, keys: [PropertyValue]) {
        self.table = table
        self.property = property
        self.keys = keys.count == 1 ? .one(keys[0]) : .several(keys)
    }

    /// Whether a value is one of the keys.
    func contains(_ value: PropertyValue) -> Bool {
        switch keys {
        case .one(let key): key == value
        case .several(let keys): keys.contains(value)
        }
    }

    func rows() -> [Int32] {
        let keys: [PropertyValue]
        switch self.keys {
        case .one(let key): return table.lookUp(property, key)
        case .several(let several): keys = several
        }
        table.ensureIndexes()
        var rows: [Int32] = []
        if property == table.primaryKeyProperty {
            for key in keys { if let row = table.row(forPrimaryKey: key) { rows.append(row) } }
        } else if let index = table.valueIndexByProperty[property] {
            for key in keys { rows += index.rows(of: key) ?? [] }
        }
        rows.sort()
        var unique: [Int32] = []
        for row in rows where unique.last != row { unique.append(row) }
        return unique
    }

    /// The number of rows a lookup of one key finds, without collecting them; nil for a lookup
    /// of several keys.
    func count() -> Int? {
        guard case .one(let key) = keys else { return nil }
        return table.lookUpCount(property, key)
    }

    func filter(_ candidates: [Int32]?) -> [Int32] {
        let found = rows()
        guard let candidates else { return found }
        let set = Set(found)
        return candidates.filter { set.contains($0) }
    }
}

extension Table {
    /// The rows whose property `p`, indexed or the primary key, equals `key`, ascending.
    func lookUp(_ p: Int, _ key: PropertyValue) -> [Int32] {
        ensureIndexes()
        // A secondary index's rows as they are (the index keeps them in order).
        if let index = valueIndexByProperty[p] { return index.rows(of: key) ?? [] }
        guard p == primaryKeyProperty, let row = row(forPrimaryKey: key) else { return [] }
        return [row]
    }

    /// The number of rows whose property `p`, indexed or the primary key, equals `key`,
    /// without collecting them.
    func lookUpCount(_ p: Int, _ key: PropertyValue) -> Int {
        ensureIndexes()
        if let count = withValueIndex(p, { $0.count(of: key) }) { return count }
        return p == primaryKeyProperty && row(forPrimaryKey: key) != nil ? 1 : 0
    }
}

/// Rows whose indexed property lies on one side of a bound, from the table's sorted index.
struct RangeLookup {
    let table: Table
    let property: Int
    let op: ComparisonOperator
    let bound: PropertyValue

    func matches(_ value: PropertyValue) -> Bool {
        guard !value.isNull, let c = compareValues(value, bound) else { return false }
        return ColumnScan.apply(op, c, 0)
    }

    func filter(_ candidates: [Int32]?) -> [Int32] {
        let index = table.sortedIndex(property)
        // First position whose value is >= bound (or > bound).
        func partition(_ strict: Bool) -> Int {
            index.values.partitioningIndex { value in
                let c = compareValues(value, bound) ?? -1
                return !(c < 0 || (strict && c == 0))
            }
        }
        let range: Range<Int>
        switch op {
        case .lessThan: range = index.firstNonNull..<partition(false)
        case .lessThanOrEqual: range = index.firstNonNull..<partition(true)
        case .greaterThan: range = partition(true)..<index.values.count
        default: range = partition(false)..<index.values.count
        }
        var rows = Array(
            index.rows[
                Swift.max(range.lowerBound, index.firstNonNull)..<Swift.max(range.upperBound, index.firstNonNull)])
        rows.sort()
        guard let candidates else { return rows }
        let set = Set(rows)
        return candidates.filter { set.contains($0) }
    }
}

/// A column's values in ascending order with their rows (nils first), for range lookups.
final class SortedIndex {
    let version: UInt64
    let values: [PropertyValue]
    let rows: [Int32]
    /// The position of the first non-nil value.
    let firstNonNull: Int

    init(table: Table, property: Int, version: UInt64) {
        let column = table.columns[property]!
        self.version = version
        // Each value's sort key made once (strings that are not ASCII are normalized once).
        var pairs = table.liveRows.map { (RowSorter.key(column.value(at: Int($0)), .exact), $0) }
        pairs.sort { a, b in
            let c = RowSorter.compare(a.0, b.0)
            return c != 0 ? c < 0 : a.1 < b.1
        }
        rows = pairs.map(\.1)
        values = rows.map { column.value(at: Int($0)) }
        firstNonNull = values.firstIndex { !$0.isNull } ?? values.count
    }
}

extension Table {
    /// The sorted index of an indexed property, rebuilt when the column has changed.
    func sortedIndex(_ property: Int) -> SortedIndex {
        let version = columns[property]!.version &+ structureVersion
        let queries = store!.queries
        if let sorted = queries.sortedIndexes[index][property], sorted.version == version { return sorted }
        let sorted = SortedIndex(table: self, property: property, version: version)
        queries.sortedIndexes[index][property] = sorted
        return sorted
    }
}

/// A bound predicate and how many subquery variables its evaluation needs.
struct BoundQuery {
    let predicate: BoundPredicate
    let slotCount: Int
    /// The memos its evaluation keeps (``EvaluationContext/memos``).
    var memoCount = 0

    /// A context for one evaluation, with the work it may still do.
    func makeContext(budget: Int = .max) -> EvaluationContext {
        EvaluationContext(variables: Array(repeating: -1, count: slotCount), memoCount: memoCount, budget: budget)
    }

    /// The rows among `candidates` (every live row when nil) that match, in candidate order
    /// (slot order when nil).
    ///
    /// - Parameter budget: The most work the evaluation may do, in units (rows and list
    ///   elements visited; ``Realm/Configuration/maximumQueryWork``).
    /// - Throws: ``QueryStop`` when the evaluation went past the budget or its task was
    ///   cancelled.
    func filter(_ candidates: [Int32]?, table: Table, budget: Int = .max) throws(QueryStop) -> [Int32] {
        var spent = 0
        return try filter(candidates, table: table, budget: budget, work: &spent)
    }

    /// ``filter(_:table:budget:)``, adding the work done to `work`.
    func filter(_ candidates: [Int32]?, table: Table, budget: Int, work: inout Int) throws(QueryStop) -> [Int32] {
        try filter(predicate, candidates, table, depth: 0, budget: budget, spent: &work)
    }

    /// Tests rows one by one with one context (whose memos serve every row), counting its work
    /// into `spent`.
    private func filterRows(
        _ p: BoundPredicate, _ rows: [Int32], depth: Int, budget: Int, spent: inout Int
    ) throws(QueryStop) -> [Int32] {
        var context = makeContext(budget: budget - spent)
        let result = rows.filter { p.matches($0, &context, depth: depth) }
        spent += context.work
        if let stop = context.stop { throw QueryStop(reason: stop, work: spent, budget: budget) }
        return result
    }

    private func filter(
        _ p: BoundPredicate, _ candidates: [Int32]?, _ table: Table, depth: Int, budget: Int, spent: inout Int
    ) throws(QueryStop) -> [Int32] {
        if depth >= maximumRecursionDepth && p.isGroup {
            // Deeper groups row by row (which walks them without recursion): the same rows.
            return try filterRows(p, candidates ?? table.liveRows, depth: depth, budget: budget, spent: &spent)
        }
        switch p {
        case .constant(let value):
            return value ? (candidates ?? table.liveRows) : []
        case .scan(let scan, _):
            return scan.filter(candidates)
        case .index(let lookup):
            return lookup.filter(candidates)
        case .range(let lookup):
            return lookup.filter(candidates)
        case .and(let operands):
            // Index lookups first, then column scans, then the rest row by row.
            let ordered = operands.sorted { $0.cost < $1.cost }
            var rows = candidates
            for operand in ordered {
                rows = try filter(operand, rows, table, depth: depth + 1, budget: budget, spent: &spent)
                if rows!.isEmpty { break }
            }
            return rows ?? table.liveRows
        case .or(let operands):
            var matched = Set<Int32>()
            for operand in operands {
                matched.formUnion(
                    try filter(operand, candidates, table, depth: depth + 1, budget: budget, spent: &spent))
            }
            return (candidates ?? table.liveRows).filter { matched.contains($0) }
        case .not(let operand):
            let excluded = Set(
                try filter(operand, candidates, table, depth: depth + 1, budget: budget, spent: &spent))
            return (candidates ?? table.liveRows).filter { !excluded.contains($0) }
        case .comparison:
            return try filterRows(p, candidates ?? table.liveRows, depth: depth, budget: budget, spent: &spent)
        }
    }

    /// The number of rows that match, when the predicate is an index lookup of one key and
    /// so counts without collecting them; nil for any other predicate.
    func indexCount() -> Int? {
        guard case .index(let lookup) = predicate else { return nil }
        return lookup.count()
    }

    /// Whether one row matches, in an evaluation whose context is `context` (made by
    /// ``makeContext(budget:)``; one for many rows shares its memos and budget). Check
    /// `context.stop` after: a stopped evaluation answers `false`.
    func matches(_ row: Int32, _ context: inout EvaluationContext) -> Bool {
        predicate.matches(row, &context)
    }
}

/// Why an evaluation stopped before its end: the work it did, past its budget, or the
/// cancellation of its task.
struct QueryStop: Error {
    let reason: EvaluationContext.Stop
    /// The work done, in units.
    let work: Int
    let budget: Int

    /// The error a caller throws, naming the query (its text, when known) and the table.
    func error(query text: String?, table: Table) -> LiveObjectsError {
        let query = text.map { "the query '\($0.count > 200 ? String($0.prefix(200)) + "…" : $0)'" } ?? "the query"
        switch reason {
        case .budget:
            return LiveObjectsError(
                .limitExceeded,
                "\(query) on \(table.name) was stopped after \(work) units of work, more than the "
                    + "\(budget) allowed (Realm.Configuration.maximumQueryWork)", objectType: table.name)
        case .cancelled:
            return LiveObjectsError(
                .cancelled, "\(query) on \(table.name) was cancelled after \(work) units of work",
                objectType: table.name)
        }
    }
}

extension BoundPredicate {
    /// A rough cost, to order the operands of `AND`.
    var cost: Int { cost(depth: 0) }

    /// The cost, looking at most ``maximumRecursionDepth`` levels deep (deeper groups count as
    /// row-by-row comparisons).
    private func cost(depth: Int) -> Int {
        if depth >= maximumRecursionDepth && isGroup { return 10 }
        return switch self {
        case .constant: 0
        case .index: 1
        case .range: 2
        case .scan: 2
        case .and(let ops), .or(let ops): 3 + ops.map { $0.cost(depth: depth + 1) }.reduce(0, +)
        case .not(let op): 3 + op.cost(depth: depth + 1)
        case .comparison: 10
        }
    }
}

extension PredicateSyntax: PredicateGroupTree {
    var group: (kind: PredicateGroupKind, operands: [PredicateSyntax])? {
        switch self {
        case .not(let operand): (.not, [operand])
        case .and(let operands): (.and, operands)
        case .or(let operands): (.or, operands)
        case .constant, .comparison: nil
        }
    }
}

/// Binds a parsed predicate group by group: each leaf through the compiler, each group from its
/// bound operands.
private struct BindFold: PredicateGroupFold {
    var compiler: QueryCompiler

    mutating func leaf(_ node: PredicateSyntax) throws(LiveObjectsError) -> BoundPredicate {
        switch node {
        case .constant(let value): .constant(value)
        case .comparison(let comparison): try compiler.bind(comparison)
        case .not, .and, .or: preconditionFailure("a group is not a leaf")
        }
    }
    func start(_ kind: PredicateGroupKind) -> [BoundPredicate] { [] }
    func add(_ result: BoundPredicate, to partial: inout [BoundPredicate], of kind: PredicateGroupKind)
        -> BoundPredicate?
    {
        if kind == .not { return .not(result) }
        partial.append(result)
        return nil
    }
    func finish(_ partial: [BoundPredicate], of kind: PredicateGroupKind) -> BoundPredicate {
        kind == .and ? .and(partial) : .or(partial)
    }
}
