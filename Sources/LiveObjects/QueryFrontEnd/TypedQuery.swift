import Foundation
import LiveObjectsStore
import Synchronization

/// A typed, key-path based query expression, for ``Results/where(_:)``.
///
/// ```swift
/// realm.objects(Dog.self).where {
///     $0.age > 3 && $0.name.contains("fi", options: .caseInsensitive) && $0.owner.name == "Ann"
/// }
/// realm.objects(Person.self).where { $0.dogs.age > 10 }            // any dog older than 10
/// realm.objects(Person.self).where { $0.dogs.count >= 2 }
/// realm.objects(Person.self).where { $0.dogs.where { $0.age > 3 }.count > 1 }
/// ```
///
/// Member access follows persisted properties, through optional links (`$0.owner.name`) and
/// lists (`$0.dogs.age`, which holds when any element matches). A `Query<Bool>` combines with
/// `&&`, `||` and `!`.
///
/// An expression belongs to the `where(_:)` whose closure it was made in. One kept in a
/// variable past that closure and used again, alone or with another condition's expressions,
/// or extended inside the closure of another `where(_:)` run within its own, builds nothing:
/// the condition it ends up in gives no results and makes the enclosing realm call throw
/// `invalidQuery`.
@dynamicMemberLookup
public struct Query<Value> {
    /// What the expression holds: the same for every `Value`, so that building one runs in
    /// code that is not generic (the generic parts are inlined into the caller, where `Value`
    /// is known).
    @usableFromInline let core: QueryCore

    @inlinable init(_ core: QueryCore) {
        self.core = core
    }

    init(_ context: QueryContext, _ form: QueryCore.Form) {
        core = QueryCore(context, form)
    }

    var context: QueryContext { core.context }
    var predicate: PredicateSyntax { core.predicate }
    var expression: ExpressionSyntax { core.expression }
    var table: Table? { core.table }

    func comparison<V>(_ op: ComparisonOperator, _ rhs: ExpressionSyntax, options: ComparisonOptions = []) -> Query<V> {
        Query<V>(core.comparison(op, rhs, options: options))
    }

    /// A comparison with another expression, which must belong to the same condition.
    func comparison<V, W>(_ op: ComparisonOperator, _ rhs: Query<W>) -> Query<V> {
        Query<V>(core.comparison(op, rhs.expression).detached(from: rhs.context))
    }
}

/// A typed query expression without its phantom type (see ``Query``).
///
/// A key path (`$0.owner.name`) is held in fields of its own, which building the next step
/// reads in place; anything else in ``form``. It holds no counted reference for a path of one
/// property: the store is reached through its ``QueryContext`` (not retained), tables are held
/// by position and a path of one property of the object being tested by that property's
/// position, so that making and dropping one (several per condition built) costs no retain
/// or release.
@usableFromInline
struct QueryCore {
    let context: QueryContext
    /// For a key path: the position in the store of the table it leads to. -1 for anything else.
    let tableIndex: Int
    /// For a key path: the property names, link by link (none for the object itself, and none
    /// held for one property of the object being tested: see ``components``).
    private let storedComponents: [String]
    /// For a key path from a subquery variable: the variable (nil: the object being tested).
    let variable: String?
    /// For a path that is one property of the object being tested (`$0.name`), and for that
    /// property's equality with a value (the usual lookup), the property's position in its
    /// table: what binding the lookup needs, without looking at its predicate.
    let property: Int?
    /// For a path that is one property of the object being tested, and for its equality with a
    /// value: the position of the tested object's table, whose schema names the property. -1
    /// for anything else.
    private let root: Int
    /// What the expression is when it is not a key path.
    let form: Form?

    enum Form {
        case expression(ExpressionSyntax)
        case predicate(PredicateSyntax)
        /// `property == value` on the object being tested (the usual lookup), where the
        /// property is the one of the path it was made from (its name `components[0]`, its
        /// position ``property``): its ``predicate`` is made only when something needs it.
        case equality(PropertyValue)
    }

    /// The object being tested, an object of table `table`, as a condition begins (its
    /// context is the condition's own).
    init(root context: QueryContext, table: Int) {
        self.context = context
        tableIndex = table
        storedComponents = []
        variable = nil
        property = nil
        root = -1
        form = nil
    }

    /// A key path.
    init(context: QueryContext, variable: String?, components: [String], table: Int) {
        self.context = context.checked
        tableIndex = table
        storedComponents = components
        self.variable = variable
        property = nil
        root = -1
        form = nil
    }

    /// Property `property` of the object being tested, an object of table `root`, leading to
    /// table `table` (`root` itself unless the property is a link), found through `context`'s
    /// store (so while its condition is the one being built).
    private init(context: QueryContext, property: Int, of root: Int, leadingTo table: Int) {
        self.context = context
        tableIndex = table
        storedComponents = []
        variable = nil
        self.property = property
        self.root = root
        form = nil
    }

    init(_ context: QueryContext, _ form: Form) {
        self.context = context.checked
        tableIndex = -1
        storedComponents = []
        variable = nil
        property = nil
        root = -1
        self.form = form
    }

    /// `components[0] == value`, the usual lookup on property `property` of table `root` (made
    /// from positions alone, without the store, so right whatever condition is being built).
    private init(context: QueryContext, equality value: PropertyValue, property: Int, of root: Int) {
        self.context = context
        tableIndex = -1
        storedComponents = []
        variable = nil
        self.property = property
        self.root = root
        form = .equality(value)
    }

    /// For a key path: the table it leads to. Nil for anything else, and for an expression
    /// used outside the condition it was made for.
    var table: Table? {
        guard tableIndex >= 0 else { return nil }
        return context.withStore { $0.tables[tableIndex] }
    }

    /// For a key path: the property names, link by link (none for the object itself, and none
    /// for a property of an expression used outside the condition it was made for).
    var components: [String] {
        guard root >= 0, let property else { return storedComponents }
        return context.withStore { [$0.tables[root].schema.properties[property].name] } ?? []
    }

    /// This expression, marked as belonging to no condition: what combining it with an
    /// expression of another condition gives (``QueryContext/detached``).
    func detached(from other: QueryContext) -> QueryCore {
        other.condition == context.condition ? self : QueryCore(context.detached, .predicate(.constant(false)))
    }

    /// Whether this is the object being tested itself (the root of the condition).
    private var isTestedObject: Bool { tableIndex >= 0 && root < 0 && variable == nil && storedComponents.isEmpty }

    var expression: ExpressionSyntax {
        switch form {
        case nil: .keyPath(KeyPathSyntax(variable: variable, components))
        case .expression(let e): e
        case .predicate, .equality: .value(.null)
        }
    }

    var predicate: PredicateSyntax {
        switch form {
        case .predicate(let p): p
        case .equality(let value): QuerySpec.Filter(equality: components[0], value: value).syntax
        // A Bool property used as a condition.
        default: .comparison(ComparisonSyntax(.direct, expression, .equal, [], .value(.bool(true))))
        }
    }

    func comparison(_ op: ComparisonOperator, _ rhs: ExpressionSyntax, options: ComparisonOptions = []) -> QueryCore {
        QueryCore(context, .predicate(.comparison(ComparisonSyntax(.direct, expression, op, options, rhs))))
    }

    /// A persisted property of the object the path leads to, read by a key path from `root`.
    @usableFromInline
    func member(_ keyPath: AnyKeyPath, root: Object.Type) -> QueryCore {
        guard tableIndex >= 0 else {
            context.fail("a key path can only follow a property")
            return QueryCore(context, .predicate(.constant(false)))
        }
        // The usual path, `$0.name`, traced before: its property without copying the names.
        if isTestedObject, let (property, target) = context.recentProperty(keyPath, fromTable: tableIndex) {
            return QueryCore(context: context, property: property, of: tableIndex, leadingTo: target)
        }
        guard let traced = context.trace(keyPath, root: root, fromTable: tableIndex) else {
            // The error noted; or no store, outside the condition being built.
            return context.isCurrent ? self : QueryCore(context.detached, .predicate(.constant(false)))
        }
        if isTestedObject {
            // One property of the object being tested: held by its position.
            if traced.names.count == 1, let property = traced.firstProperty {
                return QueryCore(context: context, property: property, of: tableIndex, leadingTo: traced.target)
            }
            // A longer path: the traced names as they are, not a copy.
            return QueryCore(context: context, variable: nil, components: traced.names, table: traced.target)
        }
        return QueryCore(
            context: context, variable: variable, components: components + traced.names, table: traced.target)
    }

    /// `self == value`. A property of the object itself compared with a value is the usual
    /// lookup, built without making its predicate.
    @usableFromInline
    func equal(_ value: PropertyValue) -> QueryCore {
        if let property, form == nil, self.root >= 0 {
            return QueryCore(context: context, equality: value, property: property, of: self.root)
        }
        return comparison(.equal, .value(value))
    }

    @usableFromInline
    func and(_ other: QueryCore) -> QueryCore {
        QueryCore(context, .predicate(.and([predicate, other.predicate]))).detached(from: other.context)
    }

    @usableFromInline
    func or(_ other: QueryCore) -> QueryCore {
        QueryCore(context, .predicate(.or([predicate, other.predicate]))).detached(from: other.context)
    }

    @usableFromInline
    func not() -> QueryCore {
        QueryCore(context, .predicate(.not(predicate)))
    }
}

/// Where a typed query is built: the store, which traces key paths and holds the state of
/// the condition being built (``TypedQueryState``), so that building one allocates nothing.
///
/// The store is not retained (a retain and a release per expression made and dropped were
/// most of a typed lookup's cost): a context reaches it only while its condition is the one
/// being built on the current thread (``TypedCondition``), when the results building it hold
/// the store. An expression kept past its `where(_:)`, or used in another condition, finds no
/// store: it builds nothing, and a condition that ends with it gives no results and the error
/// `invalidQuery`.
struct QueryContext {
    /// The store, not counted: read only while ``condition`` is being built on this thread.
    private let unmanagedStore: Unmanaged<Store>
    /// The condition this context belongs to (``TypedCondition``); 0 for none.
    let condition: UInt

    init(store: Store, condition: UInt) {
        unmanagedStore = Unmanaged.passUnretained(store)
        self.condition = condition
    }

    /// This context, belonging to no condition: for an expression made of two conditions'.
    var detached: QueryContext {
        QueryContext(unmanagedStore: unmanagedStore, condition: 0)
    }

    /// This context for an expression made now: itself while its condition is the one being
    /// built, else ``detached``. An expression made from one of a condition that is not being
    /// built (kept past it, or used inside the closure of a `where(_:)` built within it) read
    /// no store, so what it holds may be wrong: it must belong to no condition.
    @inline(__always)
    var checked: QueryContext { isCurrent ? self : detached }

    private init(unmanagedStore: Unmanaged<Store>, condition: UInt) {
        self.unmanagedStore = unmanagedStore
        self.condition = condition
    }

    /// Whether this context's condition is the one being built on this thread.
    var isCurrent: Bool { condition != 0 && TypedCondition.current == condition }

    /// Runs `body` with the store, borrowed, when this context's condition is the one being
    /// built on this thread; nil (and `body` not run) otherwise.
    @inline(__always)
    func withStore<Result>(_ body: (Store) -> Result) -> Result? {
        guard isCurrent else { return nil }
        return unmanagedStore._withUnsafeGuaranteedRef(body)
    }

    /// Notes an error, unless one was met before.
    func note(_ error: LiveObjectsError) {
        withStore { store in
            store.withQueries { queries in
                if queries.typedQueryState.errors.isEmpty { queries.typedQueryState.errors.append(error) }
            }
        }
    }

    func fail(_ message: String) {
        note(LiveObjectsError(.invalidQuery, message))
    }

    func names<Root: Object>(_ keyPath: PartialKeyPath<Root>, from table: Table) -> [String] {
        trace(keyPath, root: Root.self, fromTable: table.index)?.names ?? []
    }

    /// For a key path traced recently from table `table` that reads one of its properties:
    /// the property's position and the table it leads to (nil for anything else: then
    /// ``trace(_:root:fromTable:)``).
    func recentProperty(_ keyPath: AnyKeyPath, fromTable table: Int) -> (property: Int, target: Int)? {
        let id = ObjectIdentifier(keyPath)
        return withStore { $0.withQueries { $0.recentProperty(id, table: table) } } ?? nil
    }

    /// The names a key path reads and the table they lead to; nil (and the error noted) when
    /// it reads no persisted property.
    func trace(_ keyPath: AnyKeyPath, root: Object.Type, fromTable table: Int) -> TracedKeyPath? {
        let traced = withStore { store -> Result<TracedKeyPath, LiveObjectsError> in
            do throws(LiveObjectsError) {
                return .success(try store.trace(keyPath, root: root, fromTable: table))
            } catch {
                return .failure(error)
            }
        }
        switch traced {
        case .success(let traced)?: return traced
        case .failure(let error)?:
            note(error)
            return nil
        case nil: return nil
        }
    }

    func newVariable() -> String {
        let count = withStore { store in
            store.withQueries { queries in
                queries.typedQueryState.variableCount += 1
                return queries.typedQueryState.variableCount
            }
        }
        return "v\(count ?? 0)"
    }
}

/// Which typed condition is being built on the current thread: the number of the innermost
/// `where(_:)` whose closure runs, 0 outside all.
///
/// A ``QueryContext`` holds its condition's number and reaches its store only while that
/// number is this thread's: the store is then held by the results whose `where(_:)` runs, so
/// the context needs no reference of its own. Numbers come from one counter for the process,
/// so that an expression kept past its condition never matches a later one, on any thread
/// and for any store.
enum TypedCondition {
    /// The thread-specific slot holding the number.
    private static let slot: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "no thread-specific slot for typed conditions (error \(status))")
        return key
    }()
    /// The last number given.
    private static let numbers = Atomic<UInt>(0)

    /// The number of the condition being built on this thread (0 for none).
    @inline(__always)
    static var current: UInt { UInt(bitPattern: pthread_getspecific(slot)) }

    /// Makes a new condition this thread's: returns its number and the one it replaces, which
    /// ``end(restoring:)`` gives back.
    static func begin() -> (condition: UInt, outer: UInt) {
        let outer = current
        let condition = numbers.wrappingAdd(1, ordering: .relaxed).newValue
        pthread_setspecific(slot, UnsafeRawPointer(bitPattern: condition))
        return (condition, outer)
    }

    /// Gives the thread back the condition that ``begin()`` replaced.
    static func end(restoring outer: UInt) {
        pthread_setspecific(slot, UnsafeRawPointer(bitPattern: outer))
    }
}

extension Store {
    /// Starts building a typed condition: afresh, keeping the state of any condition being
    /// built around it. Returns the new condition's number (``TypedCondition``).
    func beginTypedQuery() -> UInt {
        let (condition, outer) = TypedCondition.begin()
        withQueries { queries in
            if queries.typedQueryDepth > 0 {
                queries.outerTypedQueryStates.append(queries.typedQueryState)
                queries.typedQueryState = TypedQueryState()
            } else if !queries.typedQueryState.errors.isEmpty || queries.typedQueryState.variableCount != 0 {
                queries.typedQueryState = TypedQueryState()
            }
            queries.typedQueryState.outerCondition = outer
            queries.typedQueryDepth += 1
        }
        return condition
    }

    /// Ends building a typed condition: the state of the condition around it comes back
    /// (outside all, a fresh state), and the thread's condition with it.
    func endTypedQuery() {
        withQueries { queries in
            TypedCondition.end(restoring: queries.typedQueryState.outerCondition)
            queries.typedQueryDepth -= 1
            if queries.typedQueryDepth > 0 {
                queries.typedQueryState = queries.outerTypedQueryStates.removeLast()
            } else if !queries.typedQueryState.errors.isEmpty || queries.typedQueryState.variableCount != 0 {
                queries.typedQueryState = TypedQueryState()
            }
        }
    }
}

// MARK: Member access

extension Query where Value: Object {
    /// A persisted property of the object.
    @inlinable
    public subscript<V>(dynamicMember keyPath: KeyPath<Value, V>) -> Query<V> {
        Query<V>(core.member(keyPath, root: Value.self))
    }
}

/// Lets queries look inside optional links.
public protocol _OptionalObject2 {
    associatedtype _Wrapped: Object
}

extension Optional: _OptionalObject2 where Wrapped: Object {
    public typealias _Wrapped = Wrapped
}

extension Query where Value: _OptionalObject2 {
    /// A persisted property of the linked object (nil when the link is nil).
    @inlinable
    public subscript<V>(dynamicMember keyPath: KeyPath<Value._Wrapped, V>) -> Query<V> {
        Query<V>(core.member(keyPath, root: Value._Wrapped.self))
    }
}

/// Lets queries look inside lists and `LinkingObjects`.
public protocol _ObjectCollection: _QueryCollection {
    associatedtype _Element: Object
}

extension List: _ObjectCollection where Element: Object {
    public typealias _Element = Element
}

extension LinkingObjects: _ObjectCollection {
    public typealias _Element = Element
}

extension MutableSet: _ObjectCollection where Element: Object {
    public typealias _Element = Element
}

extension Query where Value: _ObjectCollection {
    /// A property of the elements: a comparison on it holds when any element matches.
    @inlinable
    public subscript<V>(dynamicMember keyPath: KeyPath<Value._Element, V>) -> Query<V> {
        Query<V>(core.member(keyPath, root: Value._Element.self))
    }

    /// The elements that match a condition, to count: `$0.dogs.where { $0.age > 3 }.count > 1`.
    public func `where`(_ condition: (Query<Value._Element>) -> Query<Bool>) -> QuerySubquery {
        guard core.tableIndex >= 0 else {
            context.fail("where(_:) needs a list property")
            return QuerySubquery(context: context, expression: .value(.int(0)))
        }
        let (variable, components) = (core.variable, core.components)
        let name = context.newVariable()
        let element = Query<Value._Element>(
            QueryCore(context: context, variable: name, components: [], table: core.tableIndex))
        let built = condition(element).core
        guard built.context.condition == context.condition else {
            return QuerySubquery(context: context.detached, expression: .value(.int(0)))
        }
        let predicate = built.predicate
        let expression = ExpressionSyntax.collectionOperation(
            .count,
            collection: .subquery(
                collection: KeyPathSyntax(variable: variable, components), variable: name,
                predicate: predicate),
            property: [])
        return QuerySubquery(context: context, expression: expression)
    }
}

/// The result of `where(_:)` on a list in a query; compare its ``count``.
public struct QuerySubquery {
    let context: QueryContext
    let expression: ExpressionSyntax

    /// The number of matching elements.
    public var count: Query<Int> { Query<Int>(context, .expression(expression)) }
}

// MARK: Collection aggregates

/// Lists of values and of objects in a query.
public protocol _QueryCollection {}
extension List: _QueryCollection {}
extension LinkingObjects: _QueryCollection {}
extension MutableSet: _QueryCollection {}
extension Map: _QueryCollection {}

extension Query where Value: _QueryCollection {
    /// The number of elements.
    public var count: Query<Int> { aggregate(.count) }

    /// The smallest element (of a list of values).
    public var min: Query<Double> { aggregate(.min) }
    /// The largest element (of a list of values).
    public var max: Query<Double> { aggregate(.max) }
    /// The sum of the elements (of a list of values).
    public var sum: Query<Double> { aggregate(.sum) }
    /// The average of the elements (of a list of values).
    public var avg: Query<Double> { aggregate(.avg) }

    func aggregate<V>(_ op: CollectionOperator, _ property: [String] = []) -> Query<V> {
        Query<V>(context, .expression(.collectionOperation(op, collection: expression, property: property)))
    }
}

/// Maps in a query.
public protocol _QueryMap: _QueryCollection {
    associatedtype _MapValue: _Persistable
}

extension Map: _QueryMap {
    public typealias _MapValue = Value
}

extension Query where Value: _QueryMap {
    /// The value of a key (`settings['theme']`), nil when the map lacks the key.
    public subscript(key: String) -> Query<Value._MapValue?> { mapStep(KeyPathSyntax.mapKeyComponent(key)) }

    /// The keys (`settings.@keys`): a comparison on them holds when any key matches.
    public var keys: Query<List<String>> { mapStep("@keys") }

    /// The values (`settings.@values`): a comparison on them holds when any value matches.
    public var values: Query<List<Value._MapValue>> { mapStep("@values") }

    func mapStep<V>(_ component: String) -> Query<V> {
        guard core.tableIndex >= 0, core.form == nil else {
            context.fail("a map's key, keys or values can only follow a map property")
            return Query<V>(context, .predicate(.constant(false)))
        }
        return Query<V>(
            QueryCore(
                context: context, variable: core.variable, components: core.components + [component],
                table: core.tableIndex))
    }
}

/// A map of objects (`Map<String, Dog?>`) in a query is also a collection of its objects: a
/// property of them holds when any object matches (`$0.friends.age > 3`, `ANY friends.age > 3`),
/// and `where(_:)` counts the objects that match.
extension Map: _ObjectCollection where Value: _OptionalObject2 {
    public typealias _Element = Value._Wrapped
}

extension Query where Value: _QueryMap, Value._MapValue: _OptionalObject2 {
    /// The object of a key (`friends['a']`), nil when the map lacks the key or holds nil for it;
    /// its properties follow (`$0.friends["a"].name == "Rex"`).
    public subscript(key: String) -> Query<Value._MapValue> { mapStep(KeyPathSyntax.mapKeyComponent(key)) }
}

extension Query where Value: _QueryMap, Value._MapValue == AnyValue {
    /// The value of a key of a map of `AnyValue`s (`extras['level']`), `.null` when the map
    /// lacks the key; its kind follows (`$0.extras["level"].kind == "int"`).
    public subscript(key: String) -> Query<AnyValue> { mapStep(KeyPathSyntax.mapKeyComponent(key)) }
}

extension Query where Value == AnyValue {
    /// The name of the value's kind (`payload.@type`, one of ``AnyValue/kindNames``): compare
    /// it with a kind name, or `"numeric"` for the four kinds of numbers
    /// (`$0.payload.kind == "string"`, `$0.payload.kind.in(["int", "date"])`).
    public var kind: Query<String> {
        guard core.tableIndex >= 0, core.form == nil else {
            context.fail("kind can only follow an AnyValue property")
            return Query<String>(context, .predicate(.constant(false)))
        }
        return Query<String>(
            QueryCore(
                context: context, variable: core.variable, components: core.components + [KeyPathSyntax.typeStep],
                table: core.tableIndex))
    }

    /// The element at a position of a nested list (`payload[0]`), null when the value is no
    /// list or is shorter: `$0.payload[0] == 1`.
    public subscript(index: Int) -> Query<AnyValue> {
        guard index >= 0 else {
            context.fail("a position in an AnyValue list is 0 or more, not \(index)")
            return Query<AnyValue>(context, .predicate(.constant(false)))
        }
        return subscriptStep(KeyPathSyntax.indexComponent(index))
    }

    /// The value of a key of a nested dictionary (`payload['name']`), null when the value is
    /// no dictionary or lacks the key: `$0.payload["name"] == "Rex"`.
    public subscript(key: String) -> Query<AnyValue> { subscriptStep(KeyPathSyntax.mapKeyComponent(key)) }

    /// Every element of a nested list, every value of a nested dictionary (`payload[*]`;
    /// nothing for another value): `$0.payload.elements.contains("dog")`,
    /// `$0.payload.elements.count == 2`.
    public var elements: Query<List<AnyValue>> { subscriptStep(KeyPathSyntax.everyElementComponent) }

    /// The number of elements of a nested list or dictionary (`payload.@count`); null for
    /// another value, so that no comparison of it holds.
    public var count: Query<Int> {
        Query<Int>(context, .expression(.collectionOperation(.count, collection: expression, property: [])))
    }

    private func subscriptStep<V>(_ component: String) -> Query<V> {
        guard core.tableIndex >= 0, core.form == nil, core.components.last != KeyPathSyntax.typeStep else {
            context.fail("a subscript can only follow an AnyValue property")
            return Query<V>(context, .predicate(.constant(false)))
        }
        return Query<V>(
            QueryCore(
                context: context, variable: core.variable, components: core.components + [component],
                table: core.tableIndex))
    }
}

extension Query where Value: _QueryCollection {
    /// Whether any element equals `value` (`ANY tags == 'x'`).
    public func contains<V: _QueryValue>(_ value: V) -> Query<Bool> {
        comparison(.equal, .value(value._queryValue))
    }
}

extension Query where Value: _ObjectCollection {
    /// The smallest value of a property of the elements.
    public func min<V>(of keyPath: KeyPath<Value._Element, V>) -> Query<V> { elementAggregate(.min, keyPath) }
    /// The largest value of a property of the elements.
    public func max<V>(of keyPath: KeyPath<Value._Element, V>) -> Query<V> { elementAggregate(.max, keyPath) }
    /// The sum of a property of the elements.
    public func sum<V>(of keyPath: KeyPath<Value._Element, V>) -> Query<V> { elementAggregate(.sum, keyPath) }
    /// The average of a property of the elements.
    public func average<V>(of keyPath: KeyPath<Value._Element, V>) -> Query<Double> { elementAggregate(.avg, keyPath) }

    private func elementAggregate<V, R>(_ op: CollectionOperator, _ keyPath: KeyPath<Value._Element, V>) -> Query<R> {
        guard let table else { return aggregate(op) }
        return aggregate(op, context.names(keyPath, from: table))
    }
}

// MARK: Comparisons

extension Query {
    @inlinable
    public static func == <V: _QueryValue>(lhs: Query, rhs: V) -> Query<Bool> {
        Query<Bool>(lhs.core.equal(rhs._queryValue))
    }
    public static func != <V: _QueryValue>(lhs: Query, rhs: V) -> Query<Bool> {
        lhs.comparison(.notEqual, .value(rhs._queryValue))
    }
    public static func > <V: _QueryValue>(lhs: Query, rhs: V) -> Query<Bool> {
        lhs.comparison(.greaterThan, .value(rhs._queryValue))
    }
    public static func >= <V: _QueryValue>(lhs: Query, rhs: V) -> Query<Bool> {
        lhs.comparison(.greaterThanOrEqual, .value(rhs._queryValue))
    }
    public static func < <V: _QueryValue>(lhs: Query, rhs: V) -> Query<Bool> {
        lhs.comparison(.lessThan, .value(rhs._queryValue))
    }
    public static func <= <V: _QueryValue>(lhs: Query, rhs: V) -> Query<Bool> {
        lhs.comparison(.lessThanOrEqual, .value(rhs._queryValue))
    }
    public static func == <V>(lhs: Query, rhs: Query<V>) -> Query<Bool> { lhs.comparison(.equal, rhs) }
    public static func != <V>(lhs: Query, rhs: Query<V>) -> Query<Bool> { lhs.comparison(.notEqual, rhs) }
    public static func > <V>(lhs: Query, rhs: Query<V>) -> Query<Bool> { lhs.comparison(.greaterThan, rhs) }
    public static func >= <V>(lhs: Query, rhs: Query<V>) -> Query<Bool> {
        lhs.comparison(.greaterThanOrEqual, rhs)
    }
    public static func < <V>(lhs: Query, rhs: Query<V>) -> Query<Bool> { lhs.comparison(.lessThan, rhs) }
    public static func <= <V>(lhs: Query, rhs: Query<V>) -> Query<Bool> {
        lhs.comparison(.lessThanOrEqual, rhs)
    }

    /// Whether the value is one of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element: _QueryValue {
        comparison(.in, .value(.list(values.map(\._queryValue))))
    }

    /// Whether the value lies between two bounds, both included.
    public func contains<V: _QueryValue>(_ range: ClosedRange<V>) -> Query<Bool> {
        comparison(.between, .value(.list([range.lowerBound._queryValue, range.upperBound._queryValue])))
    }
}

/// How a string comparison in a query treats case and diacritics.
public struct StringOptions: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Case-insensitive, by Unicode rules in every script (`[c]`).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// Diacritic-insensitive (`[d]`).
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    var comparisonOptions: ComparisonOptions { ComparisonOptions(rawValue: rawValue) }
}

/// String operations in typed queries.
public protocol _QueryString {}
extension String: _QueryString {}
extension Optional: _QueryString where Wrapped == String {}
extension AnyValue: _QueryString {}

extension Query where Value: _QueryString {
    /// Whether the string contains `other`.
    public func contains(_ other: String, options: StringOptions = []) -> Query<Bool> {
        comparison(.contains, .value(.string(other)), options: options.comparisonOptions)
    }
    /// Whether the string starts with `prefix`.
    public func starts(with prefix: String, options: StringOptions = []) -> Query<Bool> {
        comparison(.beginsWith, .value(.string(prefix)), options: options.comparisonOptions)
    }
    /// Whether the string ends with `suffix`.
    public func ends(with suffix: String, options: StringOptions = []) -> Query<Bool> {
        comparison(.endsWith, .value(.string(suffix)), options: options.comparisonOptions)
    }
    /// Whether the string equals `other` under the options.
    public func equals(_ other: String, options: StringOptions = []) -> Query<Bool> {
        comparison(.equal, .value(.string(other)), options: options.comparisonOptions)
    }
    /// Whether the string matches a pattern with `*` (any run) and `?` (one character).
    public func like(_ pattern: String, options: StringOptions = []) -> Query<Bool> {
        comparison(.like, .value(.string(pattern)), options: options.comparisonOptions)
    }
}

// MARK: Logic

extension Query where Value == Bool {
    @inlinable
    public static func && (lhs: Query, rhs: Query) -> Query {
        Query(lhs.core.and(rhs.core))
    }
    @inlinable
    public static func || (lhs: Query, rhs: Query) -> Query {
        Query(lhs.core.or(rhs.core))
    }
    @inlinable
    public static prefix func ! (operand: Query) -> Query {
        Query(operand.core.not())
    }
}

extension Results {
    /// Results that also match a typed condition.
    ///
    /// A condition that cannot be used (a key path through a property that is not persisted)
    /// gives no results and makes the enclosing realm call throw `invalidQuery`.
    @inlinable
    public func `where`(_ condition: (Query<Element>) -> Query<Bool>) -> Results {
        Results(cache: cache.endCondition(condition(Query(cache.beginCondition())).core))
    }
}

extension ResultsCache {
    /// For the usual lookup, `all.where { $0.name == name }` on an indexed property or the
    /// primary key, built without an error: the condition ended and its results
    /// (``lookup(_:_:)``), with the table and the store borrowed, not retained (a retain and a
    /// release each, atomic operations, were a tenth of a typed lookup). Nil for any other
    /// condition, which ``endCondition(_:)`` ends.
    private func endLookup(_ built: borrowing QueryCore) -> ResultsCache? {
        guard isAll, case .equality(let value)? = built.form, let property = built.property,
            built.context.isCurrent, let table = unretainedTable
        else { return nil }
        return table._withUnsafeGuaranteedRef { table -> ResultsCache? in
            guard QueryCompiler.canLookUp(property: property, value: value, in: table) else { return nil }
            return unretainedStore._withUnsafeGuaranteedRef { store -> ResultsCache? in
                guard store.withQueries({ $0.typedQueryState.errors.isEmpty }) else { return nil }
                store.endTypedQuery()
                return lookup(property, value)
            }
        }
    }

    /// The error of a condition that ends with an expression of another condition (one kept
    /// past its `where(_:)`, or made in another one).
    static var foreignExpression: LiveObjectsError {
        LiveObjectsError(
            .invalidQuery, "a query expression can only be used inside the where(_:) whose closure it was given to")
    }

    /// Starts building a typed condition on these results: its root, the object being tested
    /// (for results of no table, whose type is not in the schema, a condition that refuses
    /// every member). ``endCondition(_:)`` ends it.
    @usableFromInline
    func beginCondition() -> QueryCore {
        let context = QueryContext(store: store, condition: store.beginTypedQuery())
        guard let table else { return QueryCore(context, .predicate(.constant(false))) }
        return QueryCore(root: context, table: table.index)
    }

    /// These results refined by the typed condition built since ``beginCondition()``.
    @usableFromInline
    func endCondition(_ built: consuming QueryCore) -> ResultsCache {
        if let lookup = endLookup(built) { return lookup }
        // Results of no table stay as they are (their type's error is already recorded).
        guard let table else {
            store.endTypedQuery()
            return self
        }
        // Ended last: until then the condition's expressions reach the store (its predicate
        // and the name of an equality's property are read from them below).
        defer { store.endTypedQuery() }
        let foreign = built.context.isCurrent ? nil : Self.foreignExpression
        if let error = store.withQueries({ $0.typedQueryState.errors.first }) ?? foreign {
            store.recordError(error)
            return (try? adding(QuerySpec.Filter(syntax: .constant(false), text: nil), bound: nil)) ?? self
        }
        do {
            if case .equality(let value)? = built.form {
                var bound: BoundQuery?
                if let property = built.property, QueryCompiler.canLookUp(property: property, value: value, in: table) {
                    // The usual lookup on all objects of a type: its results made directly.
                    if isAll { return lookup(property, value) }
                    bound = QueryCompiler.indexedEquality(property: property, value: value, in: table)
                }
                return try adding(QuerySpec.Filter(equality: built.components[0], value: value), bound: bound)
            }
            return try adding(QuerySpec.Filter(syntax: built.predicate, text: nil), bound: nil)
        } catch {
            store.recordError(error)
            return (try? adding(QuerySpec.Filter(syntax: .constant(false), text: nil), bound: nil)) ?? self
        }
    }
}
