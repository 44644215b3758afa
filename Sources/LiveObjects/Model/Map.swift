import LiveObjectsStore

/// The type of a ``Map``'s keys: `String`.
public protocol _MapKey: Hashable, Comparable, Sendable {
    init(_mapKey: String)
    var _mapKey: String { get }
}

extension String: _MapKey {
    public init(_mapKey: String) { self = _mapKey }
    public var _mapKey: String { self }
}

/// A dictionary from `String` keys to primitive values or to optional model objects, held by a
/// model property.
///
/// ```swift
/// final class Player: Object {
///     @Persisted var settings: Map<String, String>
///     @Persisted var scores: Map<String, Int?>
///     @Persisted var friends: Map<String, Player?>
/// }
/// try await realm.write { realm in
///     player.settings["theme"] = "dark"
///     player.settings["theme"] = nil  // removes the key
///     player.scores["round 1"] = .some(nil)  // keeps the key, with nil as its value
/// }
/// ```
///
/// A map holds each key once and iterates its entries in the order of their keys (Unicode
/// scalar order). A key is not empty, holds no `.` and does not start with `$` (queries read
/// `a.b` as a path and `$0` as an argument); a bad key makes the enclosing `Realm.write` throw
/// `typeMismatch`. Setting a key to nil removes it; a map of optional values stores nil with
/// `.some(nil)`. On an unmanaged object the map holds its entries; on a managed object it is a
/// live view of the stored map, and changes must happen inside a write. Like property setters,
/// a mutation that fails (outside a write, a deleted object) changes nothing and makes the
/// enclosing `Realm.write` throw. Queries read a map's values as they read a list
/// (`ANY settings == 'dark'`, `settings.@count`).
///
/// A map of objects (`Map<String, Dog?>`, the value optional as in Realm) holds an object or nil
/// per key. An unmanaged object set as a value is added with its owner; one of another realm or
/// a deleted one makes the enclosing write throw (`wrongRealm`, `objectInvalidated`). Deleting
/// an object keeps every key that held it, with nil as its value. Queries go on through its
/// objects (`friends['a'].name == 'Rex'`, `ANY friends.@values.age > 3`).
///
/// An object's change of a map property tells which keys changed: ``MapChange/init(_:)``.
public final class Map<Key: _MapKey, Value: _Persistable>: Sequence, CustomStringConvertible {
    private var entries: [String: Value] = [:]
    private var context: _AccessContext?
    /// The managed map's object and property (nil unmanaged): what ``changes()`` observes.
    var accessContext: _AccessContext? { context }

    /// Creates an empty, unmanaged map.
    public init() {}

    /// Creates an unmanaged map holding the entries of a dictionary.
    public init(_ dictionary: [Key: Value]) {
        for (key, value) in dictionary { entries[key._mapKey] = value }
    }

    init(context: _AccessContext) {
        self.context = context
    }

    /// Whether the map belongs to a managed object.
    public var isManaged: Bool { context != nil }

    /// Whether the map's object was deleted.
    public var isInvalidated: Bool { context.map { !$0.handle.isValid } ?? false }

    /// The stored keys of a managed map whose object is valid, sorted.
    private var storedKeys: [String] {
        guard let context, context.handle.isValid else { return [] }
        let h = context.handle
        return h.store.mapKeys(h.table, h.row, context.property) ?? []
    }

    /// The stored value of entry `index` of a managed map whose object is valid.
    private func storedValue(at index: Int, _ context: _AccessContext) -> Value {
        let h = context.handle
        return Value._decode(h.store.mapValue(at: index, h.table, h.row, context.property), context)
    }

    /// The number of entries.
    ///
    /// - Complexity: O(1).
    public var count: Int {
        guard context != nil else { return entries.count }
        return storedKeys.count
    }

    /// Whether the map has no entry.
    public var isEmpty: Bool { count == 0 }

    /// The keys, in order.
    public var keys: [Key] {
        guard context != nil else { return entries.keys.sorted().map { Key(_mapKey: $0) } }
        return storedKeys.map { Key(_mapKey: $0) }
    }

    /// The values, in the order of their keys.
    public var values: [Value] {
        guard let context else { return entries.keys.sorted().map { entries[$0]! } }
        return storedKeys.indices.map { storedValue(at: $0, context) }
    }

    /// The value of a key, nil when the map lacks the key. Setting nil removes the key.
    ///
    /// - Complexity: O(log n) to read, O(n) to change a managed map.
    public subscript(key: Key) -> Value? {
        get {
            guard let context else { return entries[key._mapKey] }
            guard context.handle.isValid else { return nil }
            let (index, found) = context.handle.store.mapPosition(
                of: key._mapKey, context.handle.table, context.handle.row, context.property)
            return found ? storedValue(at: index, context) : nil
        }
        set {
            guard let newValue else {
                removeObject(for: key)
                return
            }
            guard let context else {
                entries[key._mapKey] = newValue
                return
            }
            mutate(context) { h, store, p throws(LiveObjectsError) in
                try store.mapSet(
                    newValue._encode().input, for: key._mapKey, h.table, h.row, p,
                    context: AddContext(update: .error))
            }
        }
    }

    /// Whether the map has an entry for `key`.
    public func contains(key: Key) -> Bool {
        guard let context else { return entries[key._mapKey] != nil }
        guard context.handle.isValid else { return false }
        return context.handle.store.mapPosition(
            of: key._mapKey, context.handle.table, context.handle.row, context.property
        ).found
    }

    /// Removes the entry of a key, if the map has one.
    public func removeObject(for key: Key) {
        guard let context else {
            entries[key._mapKey] = nil
            return
        }
        mutate(context) { h, store, p throws(LiveObjectsError) in
            try store.mapRemove(key._mapKey, h.table, h.row, p)
        }
    }

    /// Removes every entry.
    public func removeAll() {
        guard let context else {
            entries.removeAll()
            return
        }
        mutate(context) { h, store, p throws(LiveObjectsError) in
            for i in stride(from: store.listCount(h.table, h.row, p) - 1, through: 0, by: -1) {
                try store.removeElement(h.table, h.row, p, at: i)
            }
        }
    }

    /// Sets the value of every key of `other` (the keys it lacks keep their values).
    public func merge<S: Sequence>(_ other: S) where S.Element == (key: Key, value: Value) {
        for (key, value) in other { self[key] = value }
    }

    /// Sets the value of every key of `dictionary` (the keys it lacks keep their values).
    public func merge(_ dictionary: [Key: Value]) {
        for key in dictionary.keys.sorted() { self[key] = dictionary[key] }
    }

    /// The entries, in the order of their keys.
    public func makeIterator() -> IndexingIterator<[(key: Key, value: Value)]> {
        Array(zip(keys, values)).map { (key: $0, value: $1) }.makeIterator()
    }

    /// The entries as a dictionary.
    public var dictionary: [Key: Value] {
        Dictionary(uniqueKeysWithValues: zip(keys, values))
    }

    private func mutate(
        _ context: _AccessContext, _ body: (ObjectHandle, Store, Int) throws(LiveObjectsError) -> Void
    ) {
        context.mutateCollection { h, store, context throws(LiveObjectsError) in try body(h, store, context.property) }
    }

    public var description: String {
        "Map<\(Key.self), \(Value.self)>[" + map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

extension Map: _Persistable {
    public static var _propertyTemplate: _PropertyTemplate {
        var t = Value._propertyTemplate
        t.isList = true
        t.isMap = true
        return t
    }
    public static var _defaultValue: Map<Key, Value> { Map() }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> Map<Key, Value> {
        Map(context: context)
    }
    public static func _get(_ context: _AccessContext) -> Map<Key, Value> {
        Map(context: context)
    }
    public func _encode() -> _Input {
        if Value._propertyTemplate.type == .object {
            // A map of objects: each value an object (added when unmanaged) or null.
            var items: [String: Input] = [:]
            for (key, value) in self { items[key._mapKey] = value._encode().input }
            return _Input(.dictionary(items))
        }
        var pairs: [PropertyValue] = []
        for (key, value) in self {
            guard case .value(let v) = value._encode().input else { continue }
            pairs.append(.list([.string(key._mapKey), v]))
        }
        return _Input(.value(.list(pairs)))
    }
}

extension Map: _DetachableCollection {
    public func _detachedCollection(_ copies: inout [Object: Object]) -> Any {
        var result: [Key: Value] = [:]
        for (key, value) in self { result[key] = value._detached(&copies) }
        return Map(result)
    }
}

extension Map: _LinkedTypeProviding where Value: _LinkedTypeProviding {
    static var _linkedObjectType: Object.Type { Value._linkedObjectType }
}

extension Map: _UnmanagedMapFilling {
    func _replaceEntries(with items: [String: Any?]) -> Bool {
        guard context == nil else { return false }
        var result: [String: Value] = [:]
        for (key, item) in items {
            if let item {
                guard let value = _persistedCast(item, to: Value.self) else { return false }
                result[key] = value
            } else {
                guard Value._propertyTemplate.isOptional else { return false }
                result[key] = Value._defaultValue
            }
        }
        entries = result
        return true
    }
}

/// A map whose entries can be set from type-erased values (decoding, `Object(value:)`).
protocol _UnmanagedMapFilling {
    func _replaceEntries(with items: [String: Any?]) -> Bool
}
