import LiveObjectsStore

/// A set of distinct model objects or primitive values, held by a model property.
///
/// ```swift
/// final class Person: Object {
///     @Persisted var tags: MutableSet<String>
///     @Persisted var friends: MutableSet<Person>
/// }
/// try await realm.write { realm in
///     person.tags.insert("climber")
///     person.tags.insert("climber")  // already a member: nothing changes
///     person.tags.formUnion(["runner", "cook"])
/// }
/// ```
///
/// A set holds each member once: strings are equal when they are the same text, numbers when
/// they have the same value, objects when they are the same object. Its members are iterated in
/// the order they were first inserted. On an unmanaged object it holds its members; on a managed
/// object it is a live view of the stored set, and changes must happen inside a write. Like
/// property setters, a mutation that fails (outside a write, a deleted object) changes nothing
/// and makes the enclosing `Realm.write` throw. Deleting an object removes it from every set
/// that holds it. Queries read a set as they read a list (`ANY tags == 'x'`, `tags.@count`).
public final class MutableSet<Element: _Persistable>: RandomAccessCollection, CustomStringConvertible {
    private var elements: [Element] = []
    private var context: _AccessContext?

    /// Creates an empty, unmanaged set.
    public init() {}

    /// Creates an unmanaged set holding the given members, each once.
    public init<S: Sequence>(_ members: S) where S.Element == Element {
        for member in members { insert(member) }
    }

    init(context: _AccessContext) {
        self.context = context
    }

    /// Where a managed set lives.
    var accessContext: _AccessContext? { context }

    /// Whether the set belongs to a managed object.
    public var isManaged: Bool { context != nil }

    /// Whether the set's object was deleted.
    public var isInvalidated: Bool { context.map { !$0.handle.isValid } ?? false }

    public var startIndex: Int { 0 }

    /// - Complexity: O(1).
    public var endIndex: Int {
        guard let context else { return elements.count }
        guard context.handle.isValid else { return 0 }
        return context.handle.store.listCount(context.handle.table, context.handle.row, context.property)
    }

    /// The member at a position of the iteration order.
    ///
    /// - Complexity: O(1).
    public subscript(position: Int) -> Element {
        guard let context else { return elements[position] }
        precondition(context.handle.isValid, "the set's object was deleted")
        let h = context.handle
        switch h.table.columns[context.property] {
        case let c as LinkListColumn:
            return Element._decode(.object(c.target.key(c.lists[Int(h.row)][position])), context)
        case let c as ValueListColumn:
            return Element._decode(c.lists[Int(h.row)][position], context)
        default:
            preconditionFailure("not a set")
        }
    }

    /// Whether the set holds a member equal to `member`.
    ///
    /// - Complexity: O(1) on average for a managed set of 16 members or more that nothing else
    ///   changed since its last lookup (the realm keeps the members of the set last looked up
    ///   in by value); O(n) for another set, an unmanaged or a frozen one.
    public func contains(_ member: Element) -> Bool {
        position(of: member) != nil
    }

    /// Adds a member, unless the set already holds it.
    ///
    /// - Complexity: as ``contains(_:)``: a run of inserts into one managed set costs O(1) on
    ///   average each.
    public func insert(_ member: Element) {
        guard let context else {
            if position(of: member) == nil { elements.append(member) }
            return
        }
        mutate(context) { h, store, context throws(LiveObjectsError) in
            try store.insertElement(
                member._encode().input, h.table, h.row, context.property,
                at: store.listCount(h.table, h.row, context.property), context: AddContext(update: .error))
        }
    }

    /// Adds the members of a sequence that the set does not hold yet.
    public func insert<S: Sequence>(objectsIn members: S) where S.Element == Element {
        for member in members { insert(member) }
    }

    /// Removes a member, if the set holds it.
    ///
    /// - Complexity: O(n).
    public func remove(_ member: Element) {
        guard let index = position(of: member) else { return }
        guard let context else {
            elements.remove(at: index)
            return
        }
        mutate(context) { h, store, context throws(LiveObjectsError) in
            try store.removeElement(h.table, h.row, context.property, at: index)
        }
    }

    /// Removes every member.
    ///
    /// - Complexity: O(n).
    public func removeAll() {
        guard let context else {
            elements.removeAll()
            return
        }
        mutate(context) { h, store, context throws(LiveObjectsError) in
            for i in stride(from: store.listCount(h.table, h.row, context.property) - 1, through: 0, by: -1) {
                try store.removeElement(h.table, h.row, context.property, at: i)
            }
        }
    }

    /// Adds every member of `other` that the set does not hold yet.
    public func formUnion<S: Sequence>(_ other: S) where S.Element == Element {
        insert(objectsIn: other)
    }

    /// Keeps only the members that `other` also holds.
    public func formIntersection<S: Sequence>(_ other: S) where S.Element == Element {
        let kept = Set(other.map(identity))
        removeMembers { !kept.contains($0) }
    }

    /// Removes every member that `other` holds.
    public func subtract<S: Sequence>(_ other: S) where S.Element == Element {
        let removed = Set(other.map(identity))
        removeMembers { removed.contains($0) }
    }

    /// Whether `other` holds every member of this set.
    public func isSubset<S: Sequence>(of other: S) -> Bool where S.Element == Element {
        let members = Set(other.map(identity))
        return allSatisfy { members.contains(identity($0)) }
    }

    /// Whether this set and `other` have a member in common.
    public func intersects<S: Sequence>(_ other: S) -> Bool where S.Element == Element {
        let members = Set(map(identity))
        return other.contains { members.contains(identity($0)) }
    }

    /// The position of `member`, if the set holds it.
    private func position(of member: Element) -> Int? {
        guard let context else {
            let wanted = identity(member)
            return elements.firstIndex { identity($0) == wanted }
        }
        let h = context.handle
        guard h.isValid, case .value(let value) = Self.storedForm(member, in: h.store) else { return nil }
        return h.store.indexOfMember(value, h.table, h.row, context.property)
    }

    /// Removes the members for which `shouldRemove` is true, in one step.
    private func removeMembers(where shouldRemove: (Identity) -> Bool) {
        guard let context else {
            elements.removeAll { shouldRemove(identity($0)) }
            return
        }
        let doomed = indices.filter { shouldRemove(identity(self[$0])) }
        guard !doomed.isEmpty else { return }
        mutate(context) { h, store, context throws(LiveObjectsError) in
            for i in doomed.reversed() { try store.removeElement(h.table, h.row, context.property, at: i) }
        }
    }

    /// What makes two members the same member.
    private enum Identity: Hashable {
        case value(PropertyValue)
        case storedObject(ObjectKey)
        case unmanagedObject(ObjectIdentifier)
    }

    private func identity(_ member: Element) -> Identity {
        switch member._encode().input {
        case .value(let value):
            // Numbers in a set of AnyValues are one member by value, as the store keeps them.
            return .value(Element._propertyTemplate.type == .mixed ? value.mixedMemberKey : value)
        case .object(let object):
            if let handle = object._handle, handle.isValid { return .storedObject(handle.key) }
            return .unmanagedObject(ObjectIdentifier(object))
        default: return .value(.null)  // members are values or objects
        }
    }

    /// A member as the store holds it: a value, or the key of a managed object of `store`
    /// (`.array` for an object the store does not hold, which no stored set contains).
    private static func storedForm(_ member: Element, in store: Store) -> Input {
        switch member._encode().input {
        case .object(let object):
            guard let handle = object._handle, handle.store === store, handle.isValid else { return .array([]) }
            return .value(.object(handle.key))
        case let input: return input
        }
    }

    private func mutate(
        _ context: _AccessContext,
        _ body: (ObjectHandle, Store, _AccessContext) throws(LiveObjectsError) -> Void
    ) {
        context.mutateCollection(body)
    }

    public var description: String {
        "MutableSet<\(Element.self)>[" + map { "\($0)" }.joined(separator: ", ") + "]"
    }
}

extension MutableSet: _Persistable {
    public static var _propertyTemplate: _PropertyTemplate {
        var t = Element._propertyTemplate
        t.isList = true
        t.isSet = true
        return t
    }
    public static var _defaultValue: MutableSet<Element> { MutableSet() }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> MutableSet<Element> {
        MutableSet(context: context)
    }
    public static func _get(_ context: _AccessContext) -> MutableSet<Element> {
        MutableSet(context: context)
    }
    public func _encode() -> _Input {
        _Input(.array(map { $0._encode().input }))
    }
}

extension MutableSet: _DetachableCollection {
    public func _detachedCollection(_ copies: inout [Object: Object]) -> Any {
        var result: [Element] = []
        for element in self { result.append(element._detached(&copies)) }
        return MutableSet(result)
    }
}

extension MutableSet: _LinkedTypeProviding where Element: Object {
    static var _linkedObjectType: Object.Type { Element.self }
}

extension MutableSet: ObjectCollection where Element: Object {}

extension MutableSet: _UnmanagedListFilling {
    func _replaceElements(with items: [Any?]) -> Bool {
        guard context == nil else { return false }
        elements = []
        for item in items {
            if let item {
                guard let element = _persistedCast(item, to: Element.self) else { return false }
                insert(element)
            } else {
                guard Element._propertyTemplate.isOptional else { return false }
                insert(Element._defaultValue)
            }
        }
        return true
    }
}
