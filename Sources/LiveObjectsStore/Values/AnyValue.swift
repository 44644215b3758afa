import Foundation

/// A value of any kind a mixed property holds: `@Persisted var payload: AnyValue`.
///
/// Each object's value has a kind of its own, which queries read with `payload.@type`. Equality
/// of two `AnyValue`s is by kind and payload (`.int(1) != .double(1)`); queries compare numbers
/// across kinds by value (`payload == 1` matches `.int(1)`, `.double(1)` and `.decimal(1)`),
/// and never a string with a number. `.null` is the property's nil: the property itself is not
/// optional.
///
/// ```swift
/// var value: AnyValue = "hello"
/// value = 42
/// value = .decimal(Decimal(string: "9.99")!)
/// assert(value.kindName == "decimal")
/// ```
///
/// A value can also be a list of values (``list(_:)``) or a dictionary of values by string key
/// (``dictionary(_:)``), nested to ``maximumNestingDepth`` levels: a value of its own, stored
/// whole, so that changing an element is setting the property to a new value.
///
/// ```swift
/// let value: AnyValue = ["rex", 3, ["color": "brown", "tags": ["good", "dog"]]]
/// assert(value.kindName == "list" && value[2]?["color"] == "brown")
/// ```
///
/// A value can also be a link to an object of any type (``link(_:)``, kind name `"object"`),
/// at the top or inside a nested list or dictionary; `LiveObjects` makes one from a managed
/// object with `AnyValue.object(_:)` and reads its object back with `Realm.object(ofType:for:)`.
/// Deleting the object makes the link ``null``.
public enum AnyValue: Hashable, Sendable, CustomStringConvertible {
    /// No value.
    case null
    case bool(Bool)
    case int(Int)
    case float(Float)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    /// A Foundation `Decimal`, kept exact.
    case decimal(Decimal)
    case objectID(ObjectID)
    /// A list of values, each of any kind (a list or a dictionary too).
    indirect case list([AnyValue])
    /// A dictionary of values by string key, each of any kind (a list or a dictionary too).
    indirect case dictionary([String: AnyValue])
    /// A link to an object: its type's name and its key. A mixed property holds it only while
    /// the object exists; deleting the object makes the value ``null``.
    case link(Link)

    /// A link to an object of any type, held in an ``AnyValue``: the name of the object's type
    /// and its key in that type's table.
    public struct Link: Hashable, Sendable, CustomStringConvertible {
        /// The name of the object's type (its schema's name).
        public var objectType: String
        /// The object's key in its type's table.
        public var key: ObjectKey

        /// Makes a link to the object of a type with a key.
        public init(objectType: String, key: ObjectKey) {
            self.objectType = objectType
            self.key = key
        }

        public var description: String { "\(objectType)\(key)" }
    }

    /// The names of the kinds, as `@type` reads them in queries, in sort order: `"null"`,
    /// `"bool"`, `"int"`, `"float"`, `"double"`, `"decimal"`, `"string"`, `"data"`, `"date"`,
    /// `"objectId"`, `"uuid"`, `"list"`, `"dictionary"`, `"object"` (a ``link(_:)``).
    public static let kindNames = [
        "null", "bool", "int", "float", "double", "decimal", "string", "data", "date", "objectId", "uuid", "list",
        "dictionary", "object",
    ]

    /// How deep lists and dictionaries nest in one value: a list in a list in a list is 3 deep.
    /// A deeper value is refused with `typeMismatch` when it is written.
    public static let maximumNestingDepth = 100

    /// The element at a position of a list; nil for another kind or a position outside it.
    public subscript(index: Int) -> AnyValue? {
        guard case .list(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    /// The value of a key of a dictionary; nil for another kind or a missing key.
    public subscript(key: String) -> AnyValue? {
        guard case .dictionary(let values) = self else { return nil }
        return values[key]
    }

    /// The name of the value's kind (one of ``kindNames``).
    public var kindName: String { AnyValue.kindName(of: propertyValue) }

    /// Whether the value is ``null``.
    public var isNull: Bool { self == .null }

    /// The link, if the value is a ``link(_:)``.
    public var link: Link? {
        if case .link(let link) = self { return link }
        return nil
    }

    /// The boolean, if the value is a ``bool(_:)`` (Realm's `boolValue`).
    public var boolValue: Bool? {
        if case .bool(let v) = self { return v }
        return nil
    }

    /// The integer, if the value is an ``int(_:)``: a double is not converted.
    public var intValue: Int? {
        if case .int(let v) = self { return v }
        return nil
    }

    /// The float, if the value is a ``float(_:)``.
    public var floatValue: Float? {
        if case .float(let v) = self { return v }
        return nil
    }

    /// The double, if the value is a ``double(_:)``: an integer is not converted.
    public var doubleValue: Double? {
        if case .double(let v) = self { return v }
        return nil
    }

    /// The string, if the value is a ``string(_:)``.
    public var stringValue: String? {
        if case .string(let v) = self { return v }
        return nil
    }

    /// The date, if the value is a ``date(_:)``.
    public var dateValue: Date? {
        if case .date(let v) = self { return v }
        return nil
    }

    /// The bytes, if the value is a ``data(_:)``.
    public var dataValue: Data? {
        if case .data(let v) = self { return v }
        return nil
    }

    /// The UUID, if the value is a ``uuid(_:)``.
    public var uuidValue: UUID? {
        if case .uuid(let v) = self { return v }
        return nil
    }

    /// The decimal, if the value is a ``decimal(_:)`` (Realm's `decimal128Value`).
    public var decimalValue: Decimal? {
        if case .decimal(let v) = self { return v }
        return nil
    }

    /// The object id, if the value is an ``objectID(_:)`` (Realm's `objectIdValue`).
    public var objectIDValue: ObjectID? {
        if case .objectID(let v) = self { return v }
        return nil
    }

    /// The elements, if the value is a ``list(_:)``.
    public var listValue: [AnyValue]? {
        if case .list(let v) = self { return v }
        return nil
    }

    /// The entries, if the value is a ``dictionary(_:)``.
    public var dictionaryValue: [String: AnyValue]? {
        if case .dictionary(let v) = self { return v }
        return nil
    }

    public var description: String {
        switch self {
        case .string(let v): "\"\(v)\""
        case .link(let link): link.description
        case .list(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let values):
            values.isEmpty
                ? "[:]"
                : "["
                    + values.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ")
                    + "]"
        default: propertyValue.description
        }
    }

    /// The stored form of the value.
    public var propertyValue: PropertyValue {
        switch self {
        case .null: .null
        case .bool(let v): .bool(v)
        case .int(let v): .int(Int64(v))
        case .float(let v): .float(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .date(let v): .date(v)
        case .data(let v): .data(v)
        case .uuid(let v): .uuid(v)
        case .decimal(let v): .decimal(v)
        case .objectID(let v): .objectID(v)
        case .link(let link): MixedContainer.storedLink(link)
        case .list(let items): .list([MixedContainer.list.marker] + items.map(\.propertyValue))
        case .dictionary(let values):
            .list(
                [MixedContainer.dictionary.marker]
                    + values.sorted { $0.key < $1.key }.flatMap {
                        [PropertyValue.string($0.key), $0.value.propertyValue]
                    })
        }
    }

    /// The value of a stored value; nil for a link, or a list that is not the stored form of a
    /// nested list or dictionary (``propertyValue``).
    public init?(_ value: PropertyValue) {
        switch value {
        case .null: self = .null
        case .bool(let v): self = .bool(v)
        case .int(let v): self = .int(Int(v))
        case .float(let v): self = .float(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .date(let v): self = .date(v)
        case .data(let v): self = .data(v)
        case .uuid(let v): self = .uuid(v)
        case .decimal(let v): self = .decimal(v)
        case .objectID(let v): self = .objectID(v)
        case .object: return nil
        case .list(let stored):
            switch MixedContainer(stored) {
            case .list:
                var items: [AnyValue] = []
                items.reserveCapacity(stored.count - 1)
                for item in stored.dropFirst() {
                    guard let v = AnyValue(item) else { return nil }
                    items.append(v)
                }
                self = .list(items)
            case .dictionary:
                guard stored.count % 2 == 1 else { return nil }
                var values: [String: AnyValue] = [:]
                values.reserveCapacity(stored.count / 2)
                for i in stride(from: 1, to: stored.count, by: 2) {
                    guard case .string(let key) = stored[i], let v = AnyValue(stored[i + 1]) else { return nil }
                    values[key] = v
                }
                self = .dictionary(values)
            case .link:
                guard let link = MixedContainer.link(of: stored) else { return nil }
                self = .link(link)
            case nil: return nil
            }
        }
    }

    /// The kind name of a stored value (``kindNames``); `"object"` for a link (a mixed
    /// property's, or a plain link), `"list"` for a list in no stored form of a nested value.
    package static func kindName(of value: PropertyValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .double: "double"
        case .decimal: "decimal"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .objectID: "objectId"
        case .uuid: "uuid"
        case .object: "object"
        case .list(let stored):
            switch MixedContainer(stored) {
            case .dictionary: "dictionary"
            case .link: "object"
            default: "list"
            }
        }
    }

    /// The kind names a query's `@type` test accepts for a name (any case): a kind name, the
    /// aliases `binary` (data), `timestamp` (date) and `link` (object), and `numeric` (int,
    /// float, double and decimal); nil for an unknown name.
    package static func kindNames(matching name: String) -> [String]? {
        switch name.lowercased() {
        case "numeric": ["int", "float", "double", "decimal"]
        case "binary": ["data"]
        case "timestamp": ["date"]
        case "link": ["object"]
        case let lower: kindNames.first { $0.lowercased() == lower }.map { [$0] }
        }
    }

    /// The place of a stored value's kind in the order of a sort over mixed values: null,
    /// bools, numbers (compared by value across kinds), strings, data, dates, object ids, UUIDs,
    /// links, lists, dictionaries (links by type name and key; lists and dictionaries in no order
    /// among themselves).
    package static func sortRank(of value: PropertyValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int, .float, .double, .decimal: 2
        case .string: 3
        case .data: 4
        case .date: 5
        case .objectID: 6
        case .uuid: 7
        case .object: 8
        case .list(let stored):
            switch MixedContainer(stored) {
            case .dictionary: 10
            case .link: 8
            default: 9
            }
        }
    }
}

extension PropertyValue {
    /// What a set of ``AnyValue``s compares its members by: a number by its value, whatever its
    /// kind (`1`, `1.0`, `Float(1)` and the decimal `1` are one member; a double or a float by its
    /// shortest text, so `0.1` is the decimal `0.1`), as queries compare them and as Realm's sets
    /// of mixed values do; every other value as it is.
    package var mixedMemberKey: PropertyValue {
        switch self {
        case .int(let i): .decimal(Decimal(i))
        case .double(let d): Self.numberKey(d, text: "\(d)")
        case .float(let f): Self.numberKey(Double(f), text: "\(f)")
        default: self
        }
    }

    private static func numberKey(_ d: Double, text: String) -> PropertyValue {
        guard d.isFinite else { return .double(d) }
        if let i = Int64(exactly: d) { return .decimal(Decimal(i)) }
        return Decimal(exactText: text).map { .decimal($0) } ?? .double(d)
    }
}

/// The stored form of a nested list or dictionary of an ``AnyValue``: a `PropertyValue.list`
/// whose first element is the marker of the kind, then a list's elements, or a dictionary's
/// keys (`.string`) and values in turn, by key in ascending order. Each element is itself in
/// its stored form. The marker is a link to no object (`.object` with row `UInt32.max`, the
/// kind in its generation), which no other value of a mixed column holds: a list without it is
/// refused, never taken for a nested value.
///
/// A link (``AnyValue/link(_:)``) is stored the same way, as three elements: the marker of
/// ``link``, the target type's name (`.string`) and the target's key (`.object`). A mixed value
/// holds no bare `.object`, so every link in it, at any depth, is found by its marker.
package enum MixedContainer: UInt32, Sendable {
    case list = 0
    case dictionary = 1
    case link = 2

    /// The first element of the stored form.
    package var marker: PropertyValue { .object(ObjectKey(row: .max, generation: rawValue)) }

    /// The kind of a stored list; nil when it starts with no marker.
    package init?(_ stored: [PropertyValue]) {
        guard case .object(let key) = stored.first, key.row == .max else { return nil }
        self.init(rawValue: key.generation)
    }

    /// The stored form of a link.
    package static func storedLink(_ link: AnyValue.Link) -> PropertyValue {
        .list([MixedContainer.link.marker, .string(link.objectType), .object(link.key)])
    }

    /// The link a stored list is the form of; nil for another list.
    package static func link(of stored: [PropertyValue]) -> AnyValue.Link? {
        guard stored.count == 3, MixedContainer(stored) == .link, case .string(let type) = stored[1],
            case .object(let key) = stored[2]
        else { return nil }
        return AnyValue.Link(objectType: type, key: key)
    }

    /// The link a stored mixed value is; nil for another value.
    package static func link(ofValue value: PropertyValue) -> AnyValue.Link? {
        guard case .list(let stored) = value else { return nil }
        return link(of: stored)
    }

    /// Calls `body` with every link of a stored mixed value, at any depth.
    package static func forEachLink(in value: PropertyValue, _ body: (AnyValue.Link) -> Void) {
        guard case .list(let stored) = value else { return }
        switch MixedContainer(stored) {
        case .link: if let link = link(of: stored) { body(link) }
        case .list, .dictionary: for element in elements(of: stored) { forEachLink(in: element, body) }
        case nil: return
        }
    }

    /// The stored mixed value with every link for which `isGone` holds replaced by `.null`, at
    /// any depth; nil when no link was replaced.
    package static func clearingLinks(in value: PropertyValue, where isGone: (AnyValue.Link) -> Bool)
        -> PropertyValue?
    {
        guard case .list(let stored) = value else { return nil }
        switch MixedContainer(stored) {
        case .link:
            guard let link = link(of: stored), isGone(link) else { return nil }
            return .null
        case .list, .dictionary:
            var result = stored
            var changed = false
            let first = MixedContainer(stored) == .list ? 1 : 2
            for i in stride(from: first, to: stored.count, by: first) {
                if let cleared = clearingLinks(in: stored[i], where: isGone) {
                    result[i] = cleared
                    changed = true
                }
            }
            return changed ? .list(result) : nil
        case nil: return nil
        }
    }

    /// The elements of a stored list's value (a list's elements, a dictionary's values): what
    /// `[*]` reads.
    package static func elements(of stored: [PropertyValue]) -> [PropertyValue] {
        switch MixedContainer(stored) {
        case .list: Array(stored.dropFirst())
        case .dictionary: stride(from: 2, to: stored.count, by: 2).map { stored[$0] }
        case .link, nil: []
        }
    }

    /// The number of elements of a stored value that is a nested list or dictionary; nil for
    /// another value.
    package static func count(of value: PropertyValue) -> Int? {
        guard case .list(let stored) = value, let kind = MixedContainer(stored), kind != .link else { return nil }
        return kind == .list ? stored.count - 1 : (stored.count - 1) / 2
    }

    /// The element at a position of a stored nested list; nil for another value or a position
    /// outside it.
    package static func element(of value: PropertyValue, at index: Int) -> PropertyValue? {
        guard case .list(let stored) = value, MixedContainer(stored) == .list, index >= 0, index < stored.count - 1
        else { return nil }
        return stored[index + 1]
    }

    /// The value of a key of a stored nested dictionary (keys in ascending order: a binary
    /// search); nil for another value or a missing key.
    package static func value(of value: PropertyValue, forKey key: String) -> PropertyValue? {
        guard case .list(let stored) = value, MixedContainer(stored) == .dictionary else { return nil }
        var low = 0
        var high = (stored.count - 1) / 2
        while low < high {
            let mid = (low + high) / 2
            guard case .string(let k) = stored[1 + 2 * mid] else { return nil }
            if k < key { low = mid + 1 } else { high = mid }
        }
        guard low < (stored.count - 1) / 2, case .string(let k) = stored[1 + 2 * low], k == key else { return nil }
        return stored[2 + 2 * low]
    }
}

extension AnyValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(arrayLiteral elements: AnyValue...) { self = .list(elements) }
    /// A dictionary; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, AnyValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
}

/// `Codable` as JSON reads it: null, a bool, an integer (``AnyValue/int(_:)``), a string, and a
/// number with a fraction or exponent (``AnyValue/double(_:)``) are themselves; the other kinds
/// are an object of one member that names the kind: `{"float": 1.5}`, `{"double": 2}` (a double
/// whose value is an integer, or `"NaN"`, `"Infinity"`, `"-Infinity"`), `{"date": seconds since
/// 2001-01-01T00:00:00Z}`, `{"data": "base64"}`, `{"uuid": "…"}`, `{"decimal": "exact text"}`,
/// `{"objectID": "24 hex digits"}`, `{"link": {"type": "Dog", "row": 3, "generation": 0}}`. A
/// list is an array; a dictionary is written `{"dictionary": {…}}`. Every value reads back as the kind and payload it was written with; a
/// string that looks like a date stays a string.
///
/// Reading also takes a list as `{"list": […]}`, and a dictionary as a bare object when it is
/// not an object of one member named as a kind (`{"a": 1, "b": 2}`, `{}`, `{"name": "Rex"}`):
/// a dictionary of one key that is a kind name must be wrapped, as the writer does.
extension AnyValue: Codable {
    /// The member names of the kinds written as an object of one member.
    enum TaggedKey: String, CodingKey, CaseIterable {
        case float, double, date, data, uuid, decimal, objectID, list, dictionary, link
    }

    /// The members of a link's object.
    enum LinkKey: String, CodingKey {
        case type, row, generation
    }

    /// Any member name, for a bare dictionary.
    struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Whether a double is written bare: a finite value that is no integer (which reads back
    /// as a double, not an int).
    package static func writesBare(_ value: Double) -> Bool {
        value.isFinite && Int64(exactly: value) == nil
    }

    /// The text of a non-finite double or float; nil for a finite one.
    package static func nonFiniteText(_ value: Double) -> String? {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return nil
    }

    /// A non-finite number's text read back.
    package static func nonFinite(_ text: String) -> Double? {
        switch text {
        case "NaN": .nan
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        default: nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        func tagged<T: Encodable>(_ key: TaggedKey, _ payload: T) throws {
            var c = encoder.container(keyedBy: TaggedKey.self)
            try c.encode(payload, forKey: key)
        }
        switch self {
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .int(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .string(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .double(let v) where Self.writesBare(v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .double(let v):
            if let text = Self.nonFiniteText(v) { try tagged(.double, text) } else { try tagged(.double, v) }
        case .float(let v):
            if let text = Self.nonFiniteText(Double(v)) { try tagged(.float, text) } else { try tagged(.float, v) }
        case .date(let v): try tagged(.date, v.timeIntervalSinceReferenceDate)
        case .data(let v): try tagged(.data, v.base64EncodedString())
        case .uuid(let v): try tagged(.uuid, v.uuidString)
        case .decimal(let v): try tagged(.decimal, v.exactText)
        case .objectID(let v): try tagged(.objectID, v.hexString)
        case .link(let link):
            var c = encoder.container(keyedBy: TaggedKey.self)
            var members = c.nestedContainer(keyedBy: LinkKey.self, forKey: .link)
            try members.encode(link.objectType, forKey: .type)
            try members.encode(link.key.row, forKey: .row)
            try members.encode(link.key.generation, forKey: .generation)
        case .list(let items):
            var c = encoder.unkeyedContainer()
            for item in items { try c.encode(item) }
        case .dictionary(let values):
            var c = encoder.container(keyedBy: TaggedKey.self)
            var members = c.nestedContainer(keyedBy: MemberKey.self, forKey: .dictionary)
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                try members.encode(value, forKey: MemberKey(stringValue: key))
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        if let members = try? decoder.container(keyedBy: MemberKey.self) {
            if members.allKeys.count == 1, TaggedKey(rawValue: members.allKeys[0].stringValue) != nil {
                self = try Self.decodeTagged(try decoder.container(keyedBy: TaggedKey.self))
            } else {
                self = .dictionary(try Self.decodeMembers(members))
            }
            return
        }
        if var items = try? decoder.unkeyedContainer() {
            self = .list(try Self.decodeItems(&items))
            return
        }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let v = try? c.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? c.decode(String.self) {
            self = .string(v)
        } else if let v = try? c.decode(Int.self) {
            self = .int(v)
        } else if let v = try? c.decode(Double.self) {
            self = .double(v)
        } else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath,
                    debugDescription:
                        "an AnyValue is null, a bool, a number, a string, an array or an object"))
        }
    }

    private static func decodeMembers(_ c: KeyedDecodingContainer<MemberKey>) throws -> [String: AnyValue] {
        var values: [String: AnyValue] = [:]
        for key in c.allKeys { values[key.stringValue] = try c.decode(AnyValue.self, forKey: key) }
        return values
    }

    private static func decodeItems(_ c: inout any UnkeyedDecodingContainer) throws -> [AnyValue] {
        var items: [AnyValue] = []
        while !c.isAtEnd { items.append(try c.decode(AnyValue.self)) }
        return items
    }

    private static func decodeTagged(_ c: KeyedDecodingContainer<TaggedKey>) throws -> AnyValue {
        func corrupt(_ why: String) -> DecodingError {
            .dataCorrupted(.init(codingPath: c.codingPath, debugDescription: why))
        }
        guard c.allKeys.count == 1, let key = c.allKeys.first else {
            throw corrupt(
                "an AnyValue object has one member, naming its kind: "
                    + TaggedKey.allCases.map(\.rawValue).joined(separator: ", "))
        }
        func number() throws -> Double {
            if let text = try? c.decode(String.self, forKey: key) {
                guard let v = nonFinite(text) else { throw corrupt("'\(text)' is not a number") }
                return v
            }
            return try c.decode(Double.self, forKey: key)
        }
        switch key {
        case .float: return .float(Float(try number()))
        case .double: return .double(try number())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try c.decode(Double.self, forKey: key)))
        case .data:
            let text = try c.decode(String.self, forKey: key)
            guard let data = Data(base64Encoded: text) else { throw corrupt("'\(text)' is not base64") }
            return .data(data)
        case .uuid:
            let text = try c.decode(String.self, forKey: key)
            guard let uuid = UUID(uuidString: text) else { throw corrupt("'\(text)' is not a UUID") }
            return .uuid(uuid)
        case .decimal:
            let text = try c.decode(String.self, forKey: key)
            guard let d = Decimal(exactText: text) else { throw corrupt("'\(text)' is not a decimal number") }
            return .decimal(d)
        case .objectID:
            let text = try c.decode(String.self, forKey: key)
            guard let id = ObjectID(hex: text) else { throw corrupt("'\(text)' is not an ObjectID (24 hex digits)") }
            return .objectID(id)
        case .list:
            var items = try c.nestedUnkeyedContainer(forKey: key)
            return .list(try decodeItems(&items))
        case .dictionary:
            return .dictionary(try decodeMembers(try c.nestedContainer(keyedBy: MemberKey.self, forKey: key)))
        case .link:
            let members = try c.nestedContainer(keyedBy: LinkKey.self, forKey: key)
            let row = try members.decode(UInt32.self, forKey: .row)
            let generation = try members.decode(UInt32.self, forKey: .generation)
            guard row != .max else { throw corrupt("\(row) is not the row of an object") }
            return .link(
                Link(
                    objectType: try members.decode(String.self, forKey: .type),
                    key: ObjectKey(row: row, generation: generation)))
        }
    }
}
