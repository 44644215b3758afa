import LiveObjectsStore
import Synchronization

/// The objects whose link property points at this object: the automatically kept inverse of a
/// to-one link or a `List`.
///
/// ```swift
/// final class Dog: Object {
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
/// ```
///
/// It always holds exactly the objects (with repetition, if a list links twice) whose origin
/// property links here, served from a backlink index: reading it costs the number of links, not
/// the size of the origin table. The origins are in storage order, which does not depend on the
/// order in which the links were made. On an unmanaged object it is empty (and one instance
/// is shared by every unmanaged object's property of the same type and origin).
public final class LinkingObjects<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    /// The name of the link property on `Element` that this inverts.
    public let propertyName: String
    private let context: _AccessContext?

    /// Declares the inverse of `property` on `type`.
    public init(fromType type: Element.Type, property: String) {
        self.propertyName = property
        self.context = nil
    }

    init(property: String, context: _AccessContext) {
        self.propertyName = property
        self.context = context
    }

    /// Where a managed `LinkingObjects` lives.
    var accessContext: _AccessContext? { context }

    private var rows: [Int32] {
        guard let context, context.handle.isValid,
            let source = context.handle.table.linkingObjectsSources[context.property]
        else { return [] }
        return source.rows[Int(context.handle.row)]
    }

    public var startIndex: Int { 0 }

    /// - Complexity: O(1).
    public var endIndex: Int { rows.count }

    /// - Complexity: O(1).
    public subscript(position: Int) -> Element {
        let context = context!
        let source = context.handle.table.linkingObjectsSources[context.property]!
        let row = source.rows[Int(context.handle.row)][position]
        return ObjectRowIterator.object(context.handle.store, source.source, row)
    }

    /// Iterates over the linking objects as they are when iteration starts: their rows are
    /// read once, and the values of an element a few positions ahead start loading while one
    /// is handed out.
    public struct Iterator: IteratorProtocol {
        var rows: ObjectRowIterator<Element>

        public mutating func next() -> Element? { rows.next() }
    }

    /// An iterator over the linking objects as they are now.
    public func makeIterator() -> Iterator {
        guard let context, context.handle.isValid,
            let source = context.handle.table.linkingObjectsSources[context.property]
        else { return Iterator(rows: ObjectRowIterator(store: nil, table: nil, rows: [])) }
        return Iterator(
            rows: ObjectRowIterator(
                store: context.handle.store, table: source.source, rows: source.rows[Int(context.handle.row)]))
    }

    public var description: String {
        "LinkingObjects<\(Element.className)>[" + map { "\($0)" }.joined(separator: ", ") + "]"
    }
}

/// Lets schema discovery read a `LinkingObjects` declaration.
public protocol _LinkingObjectsProtocol {
    var _originProperty: String { get }
    init(_originProperty: String)
    /// The value an unmanaged object's property holds: shared, since it is empty and immutable.
    static func _unmanaged(originProperty: String) -> Self
}

extension LinkingObjects: _LinkingObjectsProtocol {
    public var _originProperty: String { propertyName }
    public convenience init(_originProperty: String) {
        self.init(fromType: Element.self, property: _originProperty)
    }
    /// The shared, empty `LinkingObjects` that unmanaged objects hold for `originProperty`.
    public static func _unmanaged(originProperty: String) -> LinkingObjects<Element> {
        unmanaged(property: originProperty)
    }

    /// The empty `LinkingObjects` of unmanaged objects, one per element type and origin
    /// property, made on first use. An unmanaged one never changes (it has no context, and
    /// neither of its stored properties can be set), so sharing it is not observable except by
    /// identity, and it spares every unmanaged model object a heap allocation of its own per
    /// `LinkingObjects` property, which it keeps for as long as it lives (as managed: adding an
    /// object leaves its unmanaged values in place).
    ///
    /// Every model object made runs this (a managed object made from a row too, before its
    /// handle is set), so finding one made before takes no lock (``UnmanagedLinkingObjects``).
    static func unmanaged(property: String) -> LinkingObjects<Element> {
        let type = ObjectIdentifier(Element.self)
        let shared =
            UnmanagedLinkingObjects.shared.find(type, property)
            ?? UnmanagedLinkingObjects.shared.add(type, property) {
                LinkingObjects(fromType: Element.self, property: property)
            }
        return unsafeDowncast(shared, to: LinkingObjects<Element>.self)
    }
}

/// The shared unmanaged `LinkingObjects` of every element type and origin property
/// (``LinkingObjects/unmanaged(property:)``), found without a lock: the ones made so far are in
/// a list that is never changed once published; adding one (under a lock) publishes a longer
/// copy. Every published list is kept, so that a reader that loaded an older one may still
/// read it: with k shared instances that is k lists of at most k entries, and k is the number
/// of `LinkingObjects` declarations of the program's model types.
private final class UnmanagedLinkingObjects: Sendable {
    /// One shared instance: its element type, origin property and the instance (immutable).
    struct Entry: @unchecked Sendable {
        // @unchecked: `object` is a `LinkingObjects` without a context, whose stored properties
        // are constants; nothing about it can change, so any thread may read it.
        let type: ObjectIdentifier
        let property: String
        let object: AnyObject
    }

    /// The instances made up to a point, never changed once published.
    final class List: Sendable {
        let entries: [Entry]
        init(_ entries: [Entry]) { self.entries = entries }
    }

    static let shared = UnmanagedLinkingObjects()

    /// The address of the latest list, unretained (``published`` keeps it), or 0 before the
    /// first is made.
    private let latest = Atomic<UInt>(0)
    /// Every list published, oldest first: it keeps them alive for readers of ``latest``.
    private let published = Locked<[List]>([])

    /// The instance for an element type and origin property, if one was made.
    func find(_ type: ObjectIdentifier, _ property: String) -> AnyObject? {
        guard let pointer = UnsafeRawPointer(bitPattern: latest.load(ordering: .acquiring)) else { return nil }
        return Unmanaged<List>.fromOpaque(pointer)._withUnsafeGuaranteedRef { list in
            for entry in list.entries where entry.type == type && entry.property == property { return entry.object }
            return nil
        }
    }

    /// The instance for an element type and origin property: the one another thread made
    /// meanwhile, or a new one made by `make` and published.
    func add(_ type: ObjectIdentifier, _ property: String, _ make: () -> AnyObject) -> AnyObject {
        published.withLock { lists in
            if let found = find(type, property) { return found }
            let object = make()
            let list = List((lists.last?.entries ?? []) + [Entry(type: type, property: property, object: object)])
            lists.append(list)
            latest.store(UInt(bitPattern: Unmanaged.passUnretained(list).toOpaque()), ordering: .releasing)
            return object
        }
    }
}

extension LinkingObjects: _Persistable {
    public static var _propertyTemplate: _PropertyTemplate {
        _PropertyTemplate(type: .linkingObjects, isList: true, objectType: Element.className)
    }
    public static var _defaultValue: LinkingObjects<Element> {
        unmanaged(property: "")
    }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext)
        -> LinkingObjects<Element>
    {
        LinkingObjects(property: context.schema.originProperty ?? "", context: context)
    }
    public static func _get(_ context: _AccessContext) -> LinkingObjects<Element> {
        LinkingObjects(property: context.schema.originProperty ?? "", context: context)
    }
    public static func _set(_ value: LinkingObjects<Element>, _ context: _AccessContext)
        throws(LiveObjectsError)
    {
        throw LiveObjectsError(
            .invalidOperation, "LinkingObjects is computed and cannot be set",
            objectType: context.handle.table.name, property: context.schema.name)
    }
    public func _encode() -> _Input { _Input(.value(.list([]))) }
}

extension Persisted where Value: _LinkingObjectsProtocol {
    /// Declares the inverse of the link property `originProperty` of `Value`'s element type.
    public init(originProperty: String) {
        self.init(wrappedValue: Value._unmanaged(originProperty: originProperty))
    }
}
