import Foundation
import LiveObjects

/// The value of an `AnyValue` in a change, as the server sees it: an `AnyValue`'s shape, with a
/// link named by its target's type and primary key (``reference(_:)``) rather than by a key of
/// this device's realm.
///
/// The engine writes a link of an `AnyValue` as a reference when it pushes, and sets a pulled
/// reference as a link to the object it names (docs/SYNC-PROTOCOL.md, "Mixed values"). On the
/// wire a reference is `{"ref": {"type": …, "id": …}}`, as a plain link's.
///
/// ```swift
/// import LiveObjectsSync
///
/// let holder = SyncObjectID(typeName: "Holder", primaryKey: .string("h1"))
/// let value: SyncMixedValue = ["rex", 3, .reference(SyncReference(object: holder))]
/// assert(value.references.map(\.object) == [holder])
/// assert(value.anyValue == nil)  // a reference has no AnyValue of its own
/// ```
public enum SyncMixedValue: Hashable, Sendable, CustomStringConvertible {
    /// No value.
    case null
    /// A `Bool`.
    case bool(Bool)
    /// An integer.
    case int(Int)
    /// A `Float`.
    case float(Float)
    /// A `Double`.
    case double(Double)
    /// A `String`.
    case string(String)
    /// A `Date`.
    case date(Date)
    /// A `Data`.
    case data(Data)
    /// A `UUID`.
    case uuid(UUID)
    /// A Foundation `Decimal`, kept exact.
    case decimal(Decimal)
    /// An `ObjectID`.
    case objectID(ObjectID)
    /// A list of values, each of any kind (a list or a dictionary too).
    indirect case list([SyncMixedValue])
    /// A dictionary of values by string key, each of any kind.
    indirect case dictionary([String: SyncMixedValue])
    /// A link to an object, named by its type and primary key (and its server id, when known).
    case reference(SyncReference)

    /// The value of an `AnyValue` that holds no link; nil when it holds one at any depth (the
    /// engine names a link's target by its primary key, which only the realm knows).
    public init?(_ value: AnyValue) {
        guard let mixed = try? SyncMixedValue(value, reference: { _ in throw LinkFound() }) else { return nil }
        self = mixed
    }

    /// The `AnyValue` this value is when it holds no reference; nil when it holds one.
    public var anyValue: AnyValue? {
        try? anyValue(link: { _ in throw LinkFound() })
    }

    /// The references the value holds, in the order of its lists and of its dictionaries'
    /// sorted keys.
    public var references: [SyncReference] {
        var found: [SyncReference] = []
        collectReferences(&found)
        return found
    }

    /// The value as `AnyValue` describes one, a link as `ref` and its target.
    public var description: String {
        switch self {
        case .reference(let target): "ref \(target.object)"
        case .list(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let entries):
            entries.isEmpty
                ? "[:]"
                : "["
                    + entries.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ")
                    + "]"
        default: anyValue?.description ?? ""
        }
    }

    /// Whether the value is a reference or holds one at any depth.
    var holdsReference: Bool {
        switch self {
        case .reference: true
        case .list(let items): items.contains { $0.holdsReference }
        case .dictionary(let entries): entries.values.contains { $0.holdsReference }
        default: false
        }
    }

    private func collectReferences(_ found: inout [SyncReference]) {
        switch self {
        case .reference(let target): found.append(target)
        case .list(let items): for item in items { item.collectReferences(&found) }
        case .dictionary(let entries):
            for key in entries.keys.sorted() { entries[key]!.collectReferences(&found) }
        default: break
        }
    }

    /// The value of an `AnyValue`, each link named by `reference`.
    init(_ value: AnyValue, reference: (AnyValue.Link) throws -> SyncMixedValue) rethrows {
        switch value {
        case .null: self = .null
        case .bool(let v): self = .bool(v)
        case .int(let v): self = .int(v)
        case .float(let v): self = .float(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .date(let v): self = .date(v)
        case .data(let v): self = .data(v)
        case .uuid(let v): self = .uuid(v)
        case .decimal(let v): self = .decimal(v)
        case .objectID(let v): self = .objectID(v)
        case .link(let link): self = try reference(link)
        case .list(let items): self = .list(try items.map { try SyncMixedValue($0, reference: reference) })
        case .dictionary(let entries):
            self = .dictionary(try entries.mapValues { try SyncMixedValue($0, reference: reference) })
        }
    }

    /// The `AnyValue` of this value, each reference made a link by `link` (nil: ``null``).
    func anyValue(link: (SyncReference) throws -> AnyValue.Link?) rethrows -> AnyValue {
        switch self {
        case .null: .null
        case .bool(let v): .bool(v)
        case .int(let v): .int(v)
        case .float(let v): .float(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .date(let v): .date(v)
        case .data(let v): .data(v)
        case .uuid(let v): .uuid(v)
        case .decimal(let v): .decimal(v)
        case .objectID(let v): .objectID(v)
        case .reference(let target): try link(target).map(AnyValue.link) ?? .null
        case .list(let items): .list(try items.map { try $0.anyValue(link: link) })
        case .dictionary(let entries): .dictionary(try entries.mapValues { try $0.anyValue(link: link) })
        }
    }

    /// The value with each reference its target names replaced by `transform` (nil: ``null``).
    package func mappingReferences(_ transform: (SyncReference) throws -> SyncReference?) rethrows -> SyncMixedValue {
        switch self {
        case .reference(let target): try transform(target).map(SyncMixedValue.reference) ?? .null
        case .list(let items): .list(try items.map { try $0.mappingReferences(transform) })
        case .dictionary(let entries): .dictionary(try entries.mapValues { try $0.mappingReferences(transform) })
        default: self
        }
    }
}

extension AnyValue {
    /// The links in the stored value of an `AnyValue` property, or of a list, set or map of
    /// them, at any depth.
    static func links(inStored stored: PropertyValue, of property: Property) -> [AnyValue.Link] {
        var found: [AnyValue.Link] = []
        func collect(_ value: AnyValue) {
            switch value {
            case .link(let link): found.append(link)
            case .list(let items): items.forEach(collect)
            case .dictionary(let entries): entries.values.forEach(collect)
            default: break
            }
        }
        guard property.isList, case .list(let items) = stored else {
            AnyValue(stored).map(collect)
            return found
        }
        for item in items {
            if property.isMap {
                guard case .list(let entry) = item, entry.count == 2 else { continue }
                AnyValue(entry[1]).map(collect)
            } else {
                AnyValue(item).map(collect)
            }
        }
        return found
    }
}

/// Thrown to stop a conversion at the first link or reference.
private struct LinkFound: Error {}

extension SyncMixedValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// A list.
    public init(arrayLiteral elements: SyncMixedValue...) { self = .list(elements) }
    /// A dictionary; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, SyncMixedValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
    /// ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// A `Bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A `Double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A `String`.
    public init(stringLiteral value: String) { self = .string(value) }
}
