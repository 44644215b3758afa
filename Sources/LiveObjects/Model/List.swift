import LiveObjectsStore

/// An ordered list of model objects or primitive values, held by a model property.
///
/// ```swift
/// final class Person: Object {
///     @Persisted var dogs: List<Dog>
///     @Persisted var nicknames: List<String>
/// }
/// try await realm.write { realm in
///     person.dogs.append(rex)
///     person.dogs.move(from: 0, to: 2)
/// }
/// ```
///
/// A list is ordered and allows duplicates. On an unmanaged object it holds its elements; on a
/// managed object it is a live view of the stored list, and changes must happen inside a write.
/// Like property setters, a mutation that fails (outside a write, index out of bounds, an
/// embedded object that already has a parent) changes nothing and makes the enclosing
/// `Realm.write` throw. Removing an embedded object from a list deletes it.
public final class List<Element: _Persistable>: RandomAccessCollection, CustomStringConvertible {
    private var elements: [Element] = []
    private var context: _AccessContext?

    /// Creates an empty, unmanaged list.
    public init() {}

    /// Creates an unmanaged list holding the given elements.
    public init<S: Sequence>(_ elements: S) where S.Element == Element {
        self.elements = Array(elements)
    }

    init(context: _AccessContext) {
        self.context = context
    }

    /// Where a managed list lives.
    var accessContext: _AccessContext? { context }

    /// Whether the list belongs to a managed object.
    public var isManaged: Bool { context != nil }

    /// Whether the list's object was deleted.
    public var isInvalidated: Bool { context.map { !$0.handle.isValid } ?? false }

    public var startIndex: Int { 0 }

    /// - Complexity: O(1).
    public var endIndex: Int {
        guard let context else { return elements.count }
        guard context.handle.isValid else { return 0 }
        return context.handle.store.listCount(context.handle.table, context.handle.row, context.property)
    }

    /// The element at a position.
    ///
    /// - Complexity: O(1).
    public subscript(position: Int) -> Element {
        get {
            guard let context else { return elements[position] }
            precondition(context.handle.isValid, "the list's object was deleted")
            let h = context.handle
            switch h.table.columns[context.property] {
            case let c as LinkListColumn:
                return Element._decode(.object(c.target.key(c.lists[Int(h.row)][position])), context)
            case let c as ValueListColumn:
                return Element._decode(c.lists[Int(h.row)][position], context)
            default:
                preconditionFailure("not a list")
            }
        }
        set {
            guard let context else {
                elements[position] = newValue
                return
            }
            mutate(context) { h, store, context throws(LiveObjectsError) in
                try store.replaceElement(
                    newValue._encode().input, h.table, h.row, context.property, at: position,
                    context: AddContext(update: .error))
            }
        }
    }

    /// Adds an element at the end.
    ///
    /// - Complexity: O(1) amortized.
    public func append(_ element: Element) {
        insert(element, at: count)
    }

    /// Adds elements at the end.
    public func append<S: Sequence>(contentsOf newElements: S) where S.Element == Element {
        for element in newElements { append(element) }
    }

    /// Adds elements at the end: ``append(contentsOf:)`` under Realm's name.
    public func append<S: Sequence>(objectsIn newElements: S) where S.Element == Element {
        append(contentsOf: newElements)
    }

    /// Inserts an element at a position.
    ///
    /// - Complexity: O(n).
    public func insert(_ element: Element, at index: Int) {
        guard let context else {
            elements.insert(element, at: index)
            return
        }
        mutate(context) { h, store, context throws(LiveObjectsError) in
            try store.insertElement(
                element._encode().input, h.table, h.row, context.property, at: index,
                context: AddContext(update: .error))
        }
    }

    /// Removes the element at a position.
    ///
    /// - Complexity: O(n).
    public func remove(at index: Int) {
        guard let context else {
            elements.remove(at: index)
            return
        }
        mutate(context) { h, store, context throws(LiveObjectsError) in
            try store.removeElement(h.table, h.row, context.property, at: index)
        }
    }

    /// Removes every element.
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

    /// Removes the last element.
    public func removeLast() {
        remove(at: count - 1)
    }

    /// Moves the element at `from` so that it ends at `to`.
    ///
    /// - Complexity: O(n).
    public func move(from: Int, to: Int) {
        guard let context else {
            let e = elements.remove(at: from)
            elements.insert(e, at: to)
            return
        }
        mutate(context) { h, store, context throws(LiveObjectsError) in
            try store.moveElement(h.table, h.row, context.property, from: from, to: to)
        }
    }

    /// Replaces the element at a position.
    public func replace(index: Int, object: Element) {
        self[index] = object
    }

    /// Exchanges two elements.
    public func swapAt(_ i: Int, _ j: Int) {
        guard i != j else { return }
        let (low, high) = (Swift.min(i, j), Swift.max(i, j))
        move(from: low, to: high)
        move(from: high - 1, to: low)
    }

    private func mutate(
        _ context: _AccessContext,
        _ body: (ObjectHandle, Store, _AccessContext) throws(LiveObjectsError) -> Void
    ) {
        context.mutateCollection(body)
    }

    public var description: String {
        "List<\(Element.self)>[" + map { "\($0)" }.joined(separator: ", ") + "]"
    }
}

extension List: _Persistable {
    public static var _propertyTemplate: _PropertyTemplate {
        var t = Element._propertyTemplate
        t.isList = true
        return t
    }
    public static var _defaultValue: List<Element> { List() }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> List<Element> {
        List(context: context)
    }
    public static func _get(_ context: _AccessContext) -> List<Element> {
        List(context: context)
    }
    public func _encode() -> _Input {
        _Input(.array(map { $0._encode().input }))
    }
}

extension List: _DetachableCollection {
    public func _detachedCollection(_ copies: inout [Object: Object]) -> Any {
        var result: [Element] = []
        for element in self { result.append(element._detached(&copies)) }
        return List(result)
    }
}

extension List: _LinkedTypeProviding where Element: Object {
    static var _linkedObjectType: Object.Type { Element.self }
}

extension List: _UnmanagedListFilling {
    func _replaceElements(with items: [Any?]) -> Bool {
        guard context == nil else { return false }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items {
            if let item {
                guard let element = _persistedCast(item, to: Element.self) else { return false }
                result.append(element)
            } else {
                guard Element._propertyTemplate.isOptional else { return false }
                result.append(Element._defaultValue)
            }
        }
        elements = result
        return true
    }
}
