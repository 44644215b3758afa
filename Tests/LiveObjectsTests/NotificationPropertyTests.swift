import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Synchronization
import Testing

// A randomized, seeded property test of change notifications.
//
// Each scenario opens a fresh realm of the pet models, fills it, starts several subscriptions
// (query results filtered and sorted in many ways, sliced results, lists, `LinkingObjects`,
// single objects, the whole realm), runs a random sequence of writes, and then checks every
// element every subscription produced against what the test itself recorded about each write.
//
// Environment: `LIVEOBJECTS_NOTIFY_SEED` (decimal, `0x` hex or `random`; fixed by default),
// `LIVEOBJECTS_NOTIFY_ITERATIONS` (scenarios, 60), `LIVEOBJECTS_NOTIFY_WRITES` (writes per
// scenario, 14). A failure records the seed, the failing iteration, every subscription and every
// write's operations.
//
// Reading the elements never waits: a commit yields its elements synchronously, so after the
// last write every element is already buffered. The streams are then drained by a task that is
// cancelled at once: a cancelled `AsyncStream` iterator still returns the buffered elements and
// then ends. Each element carries the version of its commit, which ties it to a write.
//
// Semantics the checks encode (decided here where the documentation leaves room):
// - A property is "changed" by a write when an operation gave it a different value, even if a
//   later operation of the same write set it back (the changeset records the operation). For a
//   list: any insert, remove, move or replace. For a `LinkingObjects` property: a link to the
//   object was made or removed (a move inside the origin list does not change it).
// - Objects inserted or deleted by the write are not "modified".
// - Default collection subscriptions are deep one level: an element is modified when one of its
//   own properties changed, or any property of an object it links to directly (to-one link,
//   list, `LinkingObjects`) after the write.
// - A key-path-filtered subscription reports exactly the named paths: `"owner.name"` counts
//   changes of the element's `owner` link and of the name of its owner; `"owner"` alone counts
//   only the link itself, not the owner's properties.
// - Paths used only by the predicate, the sort or `distinct` decide membership and order, but do
//   not make an element "modified".
// - A move is an element whose order relative to another element present before and after
//   changed; with unique keys no element present before and after is reported as deleted or
//   inserted.
// - Object subscriptions observe the object's own properties (not deep); their old values are the
//   values before the write, `LinkingObjects` included.
// - `withoutNotifying` silences the named subscriptions for that commit; their next element
//   applies to the state after it. A silenced object subscription whose object is deleted ends
//   without a `.deleted` element.

// MARK: - Configuration

/// Seed and size of the run, overridable with environment variables.
struct NotifyPropertyConfig {
    var seed: UInt64
    var iterations: Int
    var writes: Int

    static func fromEnvironment() -> NotifyPropertyConfig {
        // A fixed seed by default, so that runs repeat; `random` for a new one each run.
        let seed = TestEnvironment.seed("LIVEOBJECTS_NOTIFY_SEED") ?? 0x4E07_1F1E_5EED
        let iterations = TestEnvironment.int("LIVEOBJECTS_NOTIFY_ITERATIONS") ?? 60
        let writes = TestEnvironment.int("LIVEOBJECTS_NOTIFY_WRITES") ?? 14
        return NotifyPropertyConfig(seed: seed, iterations: iterations, writes: writes)
    }
}

// MARK: - What a write did, as recorded by the test

struct ObjRef: Hashable, Sendable, CustomStringConvertible {
    let type: String
    let key: ObjectKey
    var description: String { "\(type)\(key)" }
}

struct Touch: Hashable, Sendable {
    let object: ObjRef
    let property: String
}

/// The test's own account of one write.
struct WriteRecord: Sendable {
    var touches = Set<Touch>()
    var inserted = Set<ObjRef>()
    var deleted = Set<ObjRef>()
    var log: [String] = []
    /// Operations that did not behave as the test predicted.
    var problems: [String] = []

    /// Touches of objects that existed before and after the write.
    var effectiveTouches: Set<Touch> {
        touches.filter { !inserted.contains($0.object) && !deleted.contains($0.object) }
    }

    /// Whether the write changed nothing that a changeset reports.
    var isNoOp: Bool {
        effectiveTouches.isEmpty && inserted.subtracting(deleted).isEmpty && deleted.subtracting(inserted).isEmpty
    }
}

/// Accumulates the record inside a write.
final class WriteRecorder {
    var record = WriteRecord()
    let schema: Schema
    /// For each link property (`Type.property`), the `LinkingObjects` properties inverting it.
    let inverses: [String: [(type: String, property: String)]]

    init(schema: Schema) {
        self.schema = schema
        var inverses: [String: [(String, String)]] = [:]
        for object in schema.objectSchemas {
            for p in object.properties where p.type == .linkingObjects {
                inverses["\(p.objectType!).\(p.originProperty!)", default: []].append((object.name, p.name))
            }
        }
        self.inverses = inverses
    }

    func log(_ text: String) { record.log.append(text) }
    func problem(_ text: String) { record.problems.append(text) }
    func touch(_ object: ObjRef, _ property: String) {
        record.touches.insert(Touch(object: object, property: property))
    }

    /// A link from `source.property` to `target` was made or removed: the target's inverse
    /// `LinkingObjects` changed.
    func linkChanged(_ source: ObjRef, _ property: String, _ target: ObjRef) {
        for inverse in inverses["\(source.type).\(property)"] ?? [] where inverse.type == target.type {
            touch(target, inverse.property)
        }
    }
}

// MARK: - Subscriptions

/// What a subscription watches.
struct SubSpec: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case results(type: String, filter: String?, sorts: [SortField], distinct: [String], limit: Int?, offset: Int)
        /// A list or `LinkingObjects` property of one object (by key).
        case list(ownerType: String, owner: ObjectKey, property: String, elementType: String)
        case object(type: String, key: ObjectKey)
        case realm
    }

    var kind: Kind
    var keyPaths: [String]?

    var elementType: String? {
        switch kind {
        case .results(let type, _, _, _, _, _): type
        case .list(_, _, _, let elementType): elementType
        case .object(let type, _): type
        case .realm: nil
        }
    }

    var isCollection: Bool {
        switch kind {
        case .results, .list: true
        default: false
        }
    }

    /// Whether keys in the collection are unique (lists can hold an object twice).
    var hasUniqueKeys: Bool {
        if case .list = kind { return false }
        return true
    }

    var description: String {
        let paths = keyPaths.map { " keyPaths \($0)" } ?? ""
        switch kind {
        case .results(let type, let filter, let sorts, let distinct, let limit, let offset):
            let sort = sorts.map { "\($0.keyPath) \($0.ascending ? "asc" : "desc") \($0.comparison)" }
            return
                "results \(type) filter \(filter ?? "-") sort \(sort) distinct \(distinct) limit \(limit.map(String.init) ?? "-") offset \(offset)\(paths)"
        case .list(let ownerType, let owner, let property, _):
            return "list \(ownerType)\(owner).\(property)\(paths)"
        case .object(let type, let key):
            return "object \(type)\(key)\(paths)"
        case .realm:
            return "realm"
        }
    }
}

/// One element a subscription produced, with everything the checks need.
enum SubElement: Sendable {
    case collection(CollectionObservation)
    case object(ObjectObservation)
    case realm(ChangeSet)

    var version: UInt64? {
        switch self {
        case .collection(let c): c.version
        case .object(let o): o.version
        case .realm(let c): c.version
        }
    }
}

struct CollectionObservation: Sendable {
    let version: UInt64
    let isInitial: Bool
    let deletions: [Int]
    let insertions: [Int]
    let modifications: [Int]
    let modificationsInNewIndices: [Int]
    let moves: [(from: Int, to: Int)]
    let keys: [ObjectKey]
    let snapshotVersion: UInt64
    /// The stored values of each object of the snapshot, read from the frozen snapshot.
    /// The stored values of objects of the snapshot, read from the frozen snapshot, by position:
    /// the inserted and modified ones and a few more (reading all of a large snapshot for every
    /// element would dominate the run).
    let values: [Int: [String: PropertyValue]]
    let apply: @Sendable ([ObjectKey]) -> [ObjectKey]
}

enum ObjectObservation: Sendable {
    case initial(version: UInt64, values: [String: PropertyValue])
    case changed(version: UInt64, values: [String: PropertyValue], changes: [PropertyChange])
    case deleted

    var version: UInt64? {
        switch self {
        case .initial(let v, _), .changed(let v, _, _): v
        case .deleted: nil
        }
    }
}

/// A started subscription: its token and how to collect what it produced.
struct SubHandle: Sendable {
    let token: SubscriptionToken
    let drain: @Sendable () async -> [SubElement]
}

/// Collects every buffered element of a sequence without waiting for more: the collecting task
/// is cancelled at once, and a cancelled stream still hands out what it buffered, then ends.
func drainBuffered<S: AsyncSequence & Sendable, T: Sendable>(
    _ sequence: S, _ transform: @escaping @Sendable (S.Element) -> T
) async -> [T] where S.Failure == Never {
    let task = Task {
        var out: [T] = []
        for await element in sequence { out.append(transform(element)) }
        return out
    }
    task.cancel()
    return await task.value
}

/// The stored property values of a frozen object, by name (`LinkingObjects` included).
func frozenValues<T: Object>(_ object: FrozenObject<T>, schema: ObjectSchema) -> [String: PropertyValue] {
    var values: [String: PropertyValue] = [:]
    for p in schema.properties { values[p.name] = (try? object.value(forKey: p.name)) ?? .null }
    return values
}

extension CollectionObservation {
    init<T: Object>(_ change: CollectionChange<T>, schema: ObjectSchema) {
        version = change.version
        isInitial = change.isInitial
        deletions = change.deletions
        insertions = change.insertions
        modifications = change.modifications
        modificationsInNewIndices = change.modificationsInNewIndices
        moves = change.moves.map { ($0.from, $0.to) }
        keys = change.snapshot.keys
        snapshotVersion = change.snapshot.version
        var positions = Set(change.insertions + change.modificationsInNewIndices + change.moves.map(\.to))
        positions.formUnion(change.snapshot.indices.prefix(6))
        positions.formUnion(change.snapshot.indices.suffix(2))
        values = Dictionary(
            uniqueKeysWithValues: positions.map { ($0, frozenValues(change.snapshot[$0], schema: schema)) })
        apply = { change.applied(to: $0) }
    }
}

enum SubscriptionFactory {
    static func results<T: Object>(_ r: isolated Realm, _ type: T.Type, _ spec: SubSpec) throws -> Results<T> {
        guard case .results(_, let filter, let sorts, let distinct, let limit, let offset) = spec.kind else {
            preconditionFailure()
        }
        var results = r.objects(T.self)
        if let filter { results = try results.filter(filter) }
        if !sorts.isEmpty { results = try results.sorted(by: sorts) }
        if !distinct.isEmpty { results = try results.distinct(byKeyPaths: distinct) }
        if offset > 0 { results = results.offset(offset) }
        if let limit { results = results.limit(limit) }
        return results
    }

    static func collection<T: Object>(_ changes: CollectionChanges<T>, _ schema: ObjectSchema) -> SubHandle {
        SubHandle(
            token: changes.token,
            drain: { await drainBuffered(changes) { .collection(CollectionObservation($0, schema: schema)) } })
    }

    static func resultsSubscription<T: Object>(_ r: isolated Realm, _ type: T.Type, _ spec: SubSpec) throws -> SubHandle
    {
        collection(try results(r, type, spec).changes(keyPaths: spec.keyPaths), r.schema[T.className]!)
    }

    static func objectSubscription<T: Object>(
        _ r: isolated Realm, _ type: T.Type, _ key: ObjectKey, _ keyPaths: [PartialKeyPath<T>]?
    ) -> SubHandle {
        let schema = r.schema[T.className]!
        let object = r.objects(T.self).first { $0.objectKey == key }
        // A deleted object cannot be subscribed to; such specs are not generated.
        let changes = object!.changes(keyPaths: keyPaths)
        return SubHandle(
            token: changes.token,
            drain: {
                await drainBuffered(changes) { change -> SubElement in
                    switch change {
                    case .initial(let frozen):
                        return .object(.initial(version: frozen.version, values: frozenValues(frozen, schema: schema)))
                    case .changed(let frozen, let properties):
                        return .object(
                            .changed(
                                version: frozen.version, values: frozenValues(frozen, schema: schema),
                                changes: properties))
                    case .deleted:
                        return .object(.deleted)
                    }
                }
            })
    }

    static func keyPaths<T: Object>(_ names: [String]?, _ table: [String: PartialKeyPath<T>]) -> [PartialKeyPath<T>]? {
        names.map { $0.map { table[$0]! } }
    }

    /// Starts a subscription (inside or outside a write).
    static func start(_ r: isolated Realm, _ spec: SubSpec) throws -> SubHandle {
        switch spec.kind {
        case .results(let type, _, _, _, _, _):
            switch type {
            case "Dog": return try resultsSubscription(r, Dog.self, spec)
            case "Person": return try resultsSubscription(r, Person.self, spec)
            case "DogToy": return try resultsSubscription(r, DogToy.self, spec)
            default: return try resultsSubscription(r, DogClub.self, spec)
            }
        case .list(let ownerType, let owner, let property, let elementType):
            let schema = r.schema[elementType]!
            switch (ownerType, property) {
            case ("Person", "dogs"):
                return collection(
                    r.objects(Person.self).first { $0.objectKey == owner }!.dogs.changes(keyPaths: spec.keyPaths),
                    schema)
            case ("Dog", "toys"):
                return collection(
                    r.objects(Dog.self).first { $0.objectKey == owner }!.toys.changes(keyPaths: spec.keyPaths), schema)
            case ("DogClub", "members"):
                return collection(
                    r.objects(DogClub.self).first { $0.objectKey == owner }!.members.changes(keyPaths: spec.keyPaths),
                    schema)
            case ("Dog", "walkers"):
                return collection(
                    r.objects(Dog.self).first { $0.objectKey == owner }!.walkers.changes(keyPaths: spec.keyPaths),
                    schema)
            case ("DogToy", "dogs"):
                return collection(
                    r.objects(DogToy.self).first { $0.objectKey == owner }!.dogs.changes(keyPaths: spec.keyPaths),
                    schema)
            default:
                return collection(
                    r.objects(Person.self).first { $0.objectKey == owner }!.clubs.changes(keyPaths: spec.keyPaths),
                    schema)
            }
        case .object(let type, let key):
            switch type {
            case "Dog":
                let table: [String: PartialKeyPath<Dog>] = [
                    "name": \Dog.name, "age": \Dog.age, "owner": \Dog.owner, "toys": \Dog.toys, "walkers": \Dog.walkers,
                ]
                return objectSubscription(r, Dog.self, key, keyPaths(spec.keyPaths, table))
            case "Person":
                let table: [String: PartialKeyPath<Person>] = [
                    "name": \Person.name, "age": \Person.age, "dogs": \Person.dogs, "address": \Person.address,
                    "clubs": \Person.clubs,
                ]
                return objectSubscription(r, Person.self, key, keyPaths(spec.keyPaths, table))
            case "DogToy":
                let table: [String: PartialKeyPath<DogToy>] = ["name": \DogToy.name, "dogs": \DogToy.dogs]
                return objectSubscription(r, DogToy.self, key, keyPaths(spec.keyPaths, table))
            default:
                let table: [String: PartialKeyPath<DogClub>] = [
                    "members": \DogClub.members, "president": \DogClub.president,
                ]
                return objectSubscription(r, DogClub.self, key, keyPaths(spec.keyPaths, table))
            }
        case .realm:
            let changes = try r.changes()
            return SubHandle(token: changes.token, drain: { await drainBuffered(changes) { .realm($0) } })
        }
    }

    /// The keys a fresh evaluation gives now (collections only).
    static func freshKeys(_ r: isolated Realm, _ spec: SubSpec, deadOwners: Set<ObjRef>) throws -> [ObjectKey] {
        switch spec.kind {
        case .results(let type, _, _, _, _, _):
            switch type {
            case "Dog": return try results(r, Dog.self, spec).freeze().keys
            case "Person": return try results(r, Person.self, spec).freeze().keys
            case "DogToy": return try results(r, DogToy.self, spec).freeze().keys
            default: return try results(r, DogClub.self, spec).freeze().keys
            }
        case .list(let ownerType, let owner, let property, _):
            guard !deadOwners.contains(ObjRef(type: ownerType, key: owner)),
                let object = try r.dynamicObject(ofType: ownerType, key: owner)
            else { return [] }
            return Model.keys(try object.value(property))
        default:
            return []
        }
    }
}

// MARK: - Reading the live state

enum Model {
    static func keys(_ value: PropertyValue) -> [ObjectKey] {
        switch value {
        case .object(let key): [key]
        case .list(let items): items.compactMap(\.objectKey)
        default: []
        }
    }

    static func live(_ r: isolated Realm, _ type: String) -> [ObjRef] {
        (try? r.dynamicObjects(type))?.map { ObjRef(type: type, key: $0.key) } ?? []
    }

    static func object(_ r: isolated Realm, _ ref: ObjRef) -> DynamicObject? {
        (try? r.dynamicObject(ofType: ref.type, key: ref.key)) ?? nil
    }

    /// The objects `ref` links to through `property` (with repetition), after the write.
    static func linked(_ r: isolated Realm, _ ref: ObjRef, _ property: String) -> [ObjRef] {
        guard let object = object(r, ref), let target = r.schema[ref.type]?[property]?.objectType else { return [] }
        return keys(object[property]).map { ObjRef(type: target, key: $0) }
    }

    /// Every link into `target`: source object, property, and how many times.
    static func incoming(_ r: isolated Realm, _ target: ObjRef) -> [(source: ObjRef, property: String)] {
        var result: [(ObjRef, String)] = []
        for schema in r.schema.objectSchemas {
            for p in schema.properties where p.type == .object && p.objectType == target.type {
                for source in live(r, schema.name) where linked(r, source, p.name).contains(target) {
                    result.append((source, p.name))
                }
            }
        }
        return result
    }

    /// Whether the element's observed properties changed, per the semantics at the top of the
    /// file.
    static func isModified(
        _ r: isolated Realm, _ element: ObjRef, keyPaths: [String]?, touched: [ObjRef: Set<String>]
    ) -> Bool {
        guard let keyPaths else {
            if touched[element] != nil { return true }
            for p in r.schema[element.type]!.properties where p.objectType != nil {
                if linked(r, element, p.name).contains(where: { touched[$0] != nil }) { return true }
            }
            return false
        }
        for path in keyPaths {
            var frontier = [element]
            for name in path.split(separator: ".").map(String.init) {
                if frontier.contains(where: { touched[$0]?.contains(name) == true }) { return true }
                frontier = frontier.flatMap { linked(r, $0, name) }
            }
        }
        return false
    }

    static func values(_ r: isolated Realm, _ ref: ObjRef) -> [String: PropertyValue]? {
        object(r, ref)?.values
    }
}

// MARK: - Random data and operations

enum Gen {
    static let names = ["Rex", "rex", "Fido", "ball", "Bone", "apple", "Zed", "émile", "Emile", "bob"]
    static let cities = ["Oslo", "oslo", "Rome", "Lima"]
    static let clubNames = ["c1", "c2", "c3"]

    static func populate(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator) throws -> Int {
        var id = 1
        var people: [Person] = []
        for _ in 0..<rng.int(3...5) {
            let person = try r.create(
                Person.self, value: ["id": id, "name": rng.pick(names)!, "age": rng.int(0...6)])
            if rng.chance(0.6) {
                let address = Address()
                address.city = rng.pick(cities)!
                address.street = "s\(id)"
                person.address = address
            }
            people.append(person)
            id += 1
        }
        var toys: [DogToy] = []
        for _ in 0..<rng.int(3...6) {
            toys.append(try r.create(DogToy.self, value: ["id": id, "name": rng.pick(names)!]))
            id += 1
        }
        for _ in 0..<rng.int(4...9) {
            let dog = try r.create(Dog.self, value: ["id": id, "name": rng.pick(names)!, "age": rng.int(0...6)])
            id += 1
            if rng.chance(0.7) { dog.owner = rng.pick(people) }
            for _ in 0..<rng.int(0...2) { dog.toys.append(rng.pick(toys)!) }
            for _ in 0..<rng.int(0...2) { rng.pick(people)!.dogs.append(dog) }
        }
        for name in clubNames where rng.chance(0.8) {
            let club = try r.create(DogClub.self, value: ["name": name])
            for _ in 0..<rng.int(0...3) { club.members.append(rng.pick(people)!) }
            if rng.chance(0.4) { club.president = rng.pick(people) }
        }
        return id
    }

    static func randomSpec(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator) -> SubSpec? {
        let roll = rng.int(0...99)
        if roll < 40 {
            return SubSpec(
                kind: .results(
                    type: "Dog", filter: rng.pick(dogFilters)!, sorts: rng.pick(dogSorts)!,
                    distinct: [], limit: nil, offset: 0), keyPaths: rng.chance(0.5) ? nil : rng.pick(dogKeyPaths)!)
        } else if roll < 50 {
            return SubSpec(
                kind: .results(
                    type: "Person", filter: rng.pick(personFilters)!, sorts: rng.pick(personSorts)!,
                    distinct: [], limit: nil, offset: 0), keyPaths: rng.chance(0.5) ? nil : rng.pick(personKeyPaths)!)
        } else if roll < 55 {
            let type = rng.chance(0.5) ? "DogToy" : "DogClub"
            let filter =
                type == "DogToy"
                ? rng.pick([nil, "name BEGINSWITH[c] 'b'", "dogs.@count > 1"])!
                : rng.pick([nil, "members.@count > 1", "president != nil"])!
            let sorts = rng.chance(0.5) ? [] : [SortField("name", ascending: rng.chance(0.5))]
            let paths: [String]? =
                rng.chance(0.5)
                ? nil
                : (type == "DogToy"
                    ? rng.pick([["name"], ["dogs.name"], ["dogs"]])! : rng.pick([["members.name"], ["president"]])!)
            return SubSpec(
                kind: .results(type: type, filter: filter, sorts: sorts, distinct: [], limit: nil, offset: 0),
                keyPaths: paths)
        } else if roll < 65 {
            // Sliced or distinct results: re-evaluated.
            let distinct: [String] = rng.chance(0.3) ? [rng.pick(["age", "owner.name", "name"])!] : []
            let limit: Int? = rng.chance(0.6) ? rng.int(1...4) : nil
            let offset = rng.chance(0.4) ? rng.int(1...3) : 0
            return SubSpec(
                kind: .results(
                    type: "Dog", filter: rng.pick(dogFilters)!, sorts: rng.pick(dogSorts)!,
                    distinct: distinct, limit: distinct.isEmpty && limit == nil && offset == 0 ? 2 : limit,
                    offset: offset),
                keyPaths: rng.chance(0.5) ? nil : rng.pick(dogKeyPaths)!)
        } else if roll < 82 {
            let choices: [(String, String, String)] = [
                ("Person", "dogs", "Dog"), ("Dog", "toys", "DogToy"), ("DogClub", "members", "Person"),
                ("Dog", "walkers", "Person"), ("DogToy", "dogs", "Dog"), ("Person", "clubs", "DogClub"),
            ]
            let (ownerType, property, elementType) = rng.pick(choices)!
            guard let owner = rng.pick(Model.live(r, ownerType)) else { return nil }
            var paths: [String]?
            if !rng.chance(0.6) {
                switch elementType {
                case "Dog": paths = rng.pick(dogKeyPaths)!
                case "Person": paths = rng.pick(personKeyPaths)!
                case "DogToy": paths = rng.pick([["name"], ["dogs.name"]])!
                default: paths = rng.pick([["members.name"], ["president"], ["name"]])!
                }
            }
            return SubSpec(
                kind: .list(ownerType: ownerType, owner: owner.key, property: property, elementType: elementType),
                keyPaths: paths)
        } else if roll < 95 {
            let type = rng.pick(["Dog", "Dog", "Person", "Person", "DogToy", "DogClub"])!
            guard let object = rng.pick(Model.live(r, type)) else { return nil }
            let properties: [String] =
                switch type {
                case "Dog": ["name", "age", "owner", "toys", "walkers"]
                case "Person": ["name", "age", "dogs", "address", "clubs"]
                case "DogToy": ["name", "dogs"]
                default: ["members", "president"]
                }
            let paths: [String]? = rng.chance(0.5) ? nil : properties.filter { _ in rng.chance(0.4) }
            return SubSpec(kind: .object(type: type, key: object.key), keyPaths: paths)
        } else {
            return SubSpec(kind: .realm, keyPaths: nil)
        }
    }

    static let dogFilters: [String?] = [
        nil, nil, "age > 3", "age <= 2 OR name BEGINSWITH[c] 'r'", "owner.age > 3", "owner == nil",
        "ANY toys.name == 'ball'", "walkers.@count > 0", "ANY walkers.clubs.name == 'c1'",
        "owner.address.city ==[c] 'oslo'", "toys.@count >= 1 AND age < 5", "name == 'Rex'",
        "SUBQUERY(toys, $t, $t.name BEGINSWITH[c] 'b').@count > 0", "NOT (age BETWEEN {2, 4})",
    ]
    static let dogSorts: [[SortField]] = [
        [], [SortField("age")], [SortField("age", ascending: false)], [SortField("name", comparison: .caseInsensitive)],
        [SortField("age"), SortField("name")],
        [SortField("name", ascending: false, comparison: .natural), SortField("age")],
        [SortField("owner.name")],
        [SortField("owner.age", ascending: false), SortField("name", comparison: .caseInsensitive)],
        [SortField("age", ascending: false), SortField("owner.name", ascending: false)],
    ]
    static let dogKeyPaths: [[String]] = [
        ["name"], ["age"], ["owner"], ["owner.name"], ["toys"], ["toys.name"], ["walkers"], ["walkers.name"],
        ["name", "owner.age"], ["walkers.clubs.name"], ["owner.address.city"],
    ]
    static let personFilters: [String?] = [
        nil, "age > 3", "ANY dogs.age > 4", "address.city == 'Oslo'", "clubs.@count > 0", "dogs.@count == 0",
    ]
    static let personSorts: [[SortField]] = [
        [], [SortField("name")], [SortField("age", ascending: false), SortField("name")], [SortField("address.city")],
    ]
    static let personKeyPaths: [[String]] = [
        ["name"], ["dogs"], ["dogs.name"], ["address.city"], ["address"], ["clubs"], ["clubs.name"],
        ["age", "dogs.age"],
    ]

    // MARK: Operations

    /// Runs one random operation, recording what it changes. Throws only when the test decided
    /// to let an operation's error end the write.
    static func operation(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, nextId: inout Int,
        propagateErrors: Bool
    ) throws {
        let roll = rng.int(0...99)
        switch roll {
        case 0..<10: try createObject(r, &rng, rec, nextId: &nextId)
        case 10..<20: try deleteObject(r, &rng, rec, propagate: propagateErrors)
        case 20..<40: setScalar(r, &rng, rec)
        case 40..<48: setLink(r, &rng, rec)
        case 48..<80: try listOperation(r, &rng, rec, propagate: propagateErrors)
        case 80..<86: setAndReset(r, &rng, rec)
        case 86..<92: typedOperation(r, &rng, rec)
        case 92..<99: setAddress(r, &rng, rec)
        default:
            if Model.live(r, "Dog").count > 60 {
                try deleteDogs(r, &rng, rec)
            } else {
                try createDogs(r, &rng, rec, nextId: &nextId)
            }
        }
    }

    static func createObject(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, nextId: inout Int
    )
        throws
    {
        let id = nextId
        nextId += 1
        switch rng.int(0...3) {
        case 0, 1:
            var value: [String: PropertyValue] = [
                "id": .int(Int64(id)), "name": .string(rng.pick(names)!), "age": .int(Int64(rng.int(0...6))),
            ]
            let owner = rng.chance(0.6) ? rng.pick(Model.live(r, "Person")) : nil
            if let owner { value["owner"] = .object(owner.key) }
            let toys = (0..<rng.int(0...2)).compactMap { _ in rng.pick(Model.live(r, "DogToy")) }
            value["toys"] = .list(toys.map { .object($0.key) })
            let dog = try r.dynamicCreate("Dog", value: value)
            let ref = ObjRef(type: "Dog", key: dog.key)
            rec.record.inserted.insert(ref)
            for toy in toys { rec.linkChanged(ref, "toys", toy) }
            rec.log("create \(ref) \(value)")
            if rng.chance(0.5), let walker = rng.pick(Model.live(r, "Person")) {
                try r.dynamicObject(ofType: "Person", key: walker.key)!.append(.object(dog.key), to: "dogs")
                rec.touch(walker, "dogs")
                rec.linkChanged(walker, "dogs", ref)
                rec.log("append \(ref) to \(walker).dogs")
            }
        case 2:
            let person = try r.dynamicCreate(
                "Person",
                value: ["id": .int(Int64(id)), "name": .string(rng.pick(names)!), "age": .int(Int64(rng.int(0...6)))])
            let ref = ObjRef(type: "Person", key: person.key)
            rec.record.inserted.insert(ref)
            rec.log("create \(ref)")
            if rng.chance(0.5) {
                let address = try person.setEmbedded("address", values: ["city": .string(rng.pick(cities)!)])
                rec.record.inserted.insert(ObjRef(type: "Address", key: address.key))
                rec.log("  with address \(address.key)")
            }
            if rng.chance(0.5), let club = rng.pick(Model.live(r, "DogClub")) {
                try Model.object(r, club)!.append(.object(person.key), to: "members")
                rec.touch(club, "members")
                rec.linkChanged(club, "members", ref)
                rec.log("  member of \(club)")
            }
        default:
            let toy = try r.dynamicCreate("DogToy", value: ["id": .int(Int64(id)), "name": .string(rng.pick(names)!)])
            let ref = ObjRef(type: "DogToy", key: toy.key)
            rec.record.inserted.insert(ref)
            rec.log("create \(ref)")
            if rng.chance(0.6), let dog = rng.pick(Model.live(r, "Dog")) {
                try Model.object(r, dog)!.append(.object(toy.key), to: "toys")
                rec.touch(dog, "toys")
                rec.linkChanged(dog, "toys", ref)
                rec.log("  into \(dog).toys")
            }
        }
    }

    /// Deletes an object, predicting delete rules: embedded children and cascade targets go too;
    /// a deny link from outside refuses everything.
    static func deleteObject(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, propagate: Bool
    )
        throws
    {
        let type = rng.pick(["Dog", "Dog", "Person", "DogToy", "DogClub"])!
        guard let root = rng.pick(Model.live(r, type)) else { return }
        try delete(r, [root], rec, propagate: propagate) { () throws(LiveObjectsError) in
            try r.delete(Model.object(r, root)!)
        }
    }

    /// Deletes most dogs at once: a bulk change for the collections of dogs.
    static func deleteDogs(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) throws {
        let age = rng.int(0...1)
        let dogs = r.objects(Dog.self).filter { $0.age >= age }
        guard !dogs.isEmpty else { return }
        try delete(r, dogs.map { ObjRef(type: "Dog", key: $0.objectKey!) }, rec, propagate: false) {
            () throws(LiveObjectsError) in
            try r.delete(dogs)
        }
    }

    /// Runs a deletion of `roots`, recording what the delete rules predict: embedded children and
    /// cascade targets go too; links to the doomed objects are removed; a deny link from outside
    /// refuses everything.
    static func delete(
        _ r: isolated Realm, _ roots: [ObjRef], _ rec: WriteRecorder, propagate: Bool,
        _ perform: () throws(LiveObjectsError) -> Void
    ) throws {
        var doomed = Set<ObjRef>()
        var stack = roots
        while let ref = stack.popLast() {
            guard doomed.insert(ref).inserted else { continue }
            for p in r.schema[ref.type]!.properties where p.type == .object {
                if r.schema[p.objectType!]!.isEmbedded || p.deleteRule == .cascade {
                    stack += Model.linked(r, ref, p.name)
                }
            }
        }
        var denied = false
        var incomingLinks: [(ObjRef, String)] = []
        for ref in doomed {
            for (source, property) in Model.incoming(r, ref) where !doomed.contains(source) {
                if r.schema[source.type]![property]!.deleteRule == .deny { denied = true }
                incomingLinks.append((source, property))
            }
        }
        var outgoingLinks: [(ObjRef, String, ObjRef)] = []
        for ref in doomed {
            for p in r.schema[ref.type]!.properties where p.type == .object {
                for target in Model.linked(r, ref, p.name) where !doomed.contains(target) {
                    outgoingLinks.append((ref, p.name, target))
                }
            }
        }
        let names = roots.count > 3 ? "\(roots.count) objects" : "\(roots)"
        rec.log(
            "delete \(names) (doomed \(doomed.count > 6 ? "\(doomed.count) objects" : "\(doomed.sorted { $0.description < $1.description })"), denied \(denied))"
        )
        do {
            try perform()
            if denied { rec.problem("deleting \(names) should have been denied") }
        } catch {
            if !denied || error.code != .deleteDenied { rec.problem("deleting \(names) failed unexpectedly: \(error)") }
            if propagate { throw error }
            return
        }
        for (source, property) in incomingLinks { rec.touch(source, property) }
        for (source, property, target) in outgoingLinks { rec.linkChanged(source, property, target) }
        rec.record.deleted.formUnion(doomed)
    }

    /// Creates many dogs at once: a bulk change for the collections of dogs.
    static func createDogs(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, nextId: inout Int
    )
        throws
    {
        let people = Model.live(r, "Person")
        let count = rng.int(65...80)
        for _ in 0..<count {
            var value: [String: PropertyValue] = [
                "id": .int(Int64(nextId)), "name": .string(rng.pick(names)!), "age": .int(Int64(rng.int(0...6))),
            ]
            nextId += 1
            if let owner = rng.pick(people), rng.chance(0.7) { value["owner"] = .object(owner.key) }
            let dog = try r.dynamicCreate("Dog", value: value)
            rec.record.inserted.insert(ObjRef(type: "Dog", key: dog.key))
        }
        rec.log("create \(count) dogs")
    }

    static func scalarTargets(_ r: isolated Realm) -> [(ObjRef, String, [PropertyValue])] {
        let nameValues = names.map { PropertyValue.string($0) }
        let ages = (0...6).map { PropertyValue.int(Int64($0)) }
        var targets: [(ObjRef, String, [PropertyValue])] = []
        for dog in Model.live(r, "Dog") { targets += [(dog, "name", nameValues), (dog, "age", ages)] }
        for person in Model.live(r, "Person") { targets += [(person, "name", nameValues), (person, "age", ages)] }
        for toy in Model.live(r, "DogToy") { targets.append((toy, "name", nameValues)) }
        for address in Model.live(r, "Address") {
            targets.append((address, "city", cities.map { .string($0) }))
        }
        return targets
    }

    static func setScalar(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        guard let (ref, property, values) = rng.pick(scalarTargets(r)) else { return }
        let object = Model.object(r, ref)!
        let value = rng.pick(values)!
        if object[property] != value { rec.touch(ref, property) }
        rec.log("set \(ref).\(property) = \(value) (was \(object[property]))")
        do { try object.set(property, to: value) } catch { rec.problem("set failed: \(error)") }
    }

    /// Sets a property to another value and back: the changeset still reports it.
    static func setAndReset(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        guard let (ref, property, values) = rng.pick(scalarTargets(r)) else { return }
        let object = Model.object(r, ref)!
        let old = object[property]
        guard let other = rng.pick(values.filter { $0 != old }) else { return }
        rec.touch(ref, property)
        rec.log("set \(ref).\(property) = \(other) and back to \(old)")
        do {
            try object.set(property, to: other)
            try object.set(property, to: old)
        } catch { rec.problem("set failed: \(error)") }
    }

    static func setLink(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        let (type, property) = rng.chance(0.7) ? ("Dog", "owner") : ("DogClub", "president")
        guard let source = rng.pick(Model.live(r, type)) else { return }
        let target = rng.chance(0.2) ? nil : rng.pick(Model.live(r, "Person"))
        let object = Model.object(r, source)!
        let old = Model.linked(r, source, property).first
        if old != target {
            rec.touch(source, property)
            if let old { rec.linkChanged(source, property, old) }
            if let target { rec.linkChanged(source, property, target) }
        }
        rec.log(
            "set \(source).\(property) = \(target.map(\.description) ?? "nil") (was \(old.map(\.description) ?? "nil"))"
        )
        do { try object.set(property, to: target.map { .object($0.key) } ?? .null) } catch {
            rec.problem("link failed: \(error)")
        }
    }

    static func setAddress(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        guard let person = rng.pick(Model.live(r, "Person")) else { return }
        let object = Model.object(r, person)!
        let old = Model.linked(r, person, "address").first
        do {
            if rng.chance(0.3) {
                rec.log("clear \(person).address (was \(old.map(\.description) ?? "nil"))")
                try object.set("address", to: .null)
                if let old {
                    rec.touch(person, "address")
                    rec.record.deleted.insert(old)
                }
            } else {
                let address = try object.setEmbedded(
                    "address", values: ["city": .string(rng.pick(cities)!), "street": "x"])
                let new = ObjRef(type: "Address", key: address.key)
                rec.log("new address \(new) for \(person) (was \(old.map(\.description) ?? "nil"))")
                rec.touch(person, "address")
                rec.record.inserted.insert(new)
                if let old { rec.record.deleted.insert(old) }
            }
        } catch { rec.problem("address failed: \(error)") }
    }

    static func listOperation(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, propagate: Bool
    )
        throws
    {
        let (type, property, elementType) = rng.pick([
            ("Person", "dogs", "Dog"), ("Person", "dogs", "Dog"), ("Dog", "toys", "DogToy"),
            ("DogClub", "members", "Person"),
        ])!
        guard let owner = rng.pick(Model.live(r, type)) else { return }
        let object = Model.object(r, owner)!
        let elements = Model.linked(r, owner, property)
        let candidates = Model.live(r, elementType)
        let count = elements.count
        do {
            switch rng.int(0...9) {
            case 0, 1, 2:
                guard let element = rng.pick(elements.isEmpty || rng.chance(0.7) ? candidates : elements) else {
                    return
                }
                let index = rng.int(0...count)
                rec.log("insert \(element) into \(owner).\(property) at \(index) of \(count)")
                try object.insert(.object(element.key), into: property, at: index)
                rec.touch(owner, property)
                rec.linkChanged(owner, property, element)
            case 3, 4:
                guard count > 0 else { return }
                let index = rng.int(0...count - 1)
                rec.log("remove \(owner).\(property)[\(index)] (\(elements[index]))")
                try object.remove(from: property, at: index)
                rec.touch(owner, property)
                rec.linkChanged(owner, property, elements[index])
            case 5, 6:
                guard count > 1 else { return }
                let from = rng.int(0...count - 1)
                let to = rng.int(0...count - 1)
                rec.log("move \(owner).\(property) \(from) -> \(to)")
                try object.move(in: property, from: from, to: to)
                if from != to { rec.touch(owner, property) }
            case 7:
                guard count > 0, let element = rng.pick(candidates) else { return }
                let index = rng.int(0...count - 1)
                rec.log("replace \(owner).\(property)[\(index)] (\(elements[index])) with \(element)")
                try object.replace(in: property, at: index, with: .object(element.key))
                if elements[index] != element {
                    rec.touch(owner, property)
                    rec.linkChanged(owner, property, elements[index])
                    rec.linkChanged(owner, property, element)
                }
            case 8:
                // Replace the whole list.
                let new = (0..<rng.int(0...3)).compactMap { _ in rng.pick(candidates) }
                rec.log("set \(owner).\(property) = \(new) (was \(elements))")
                try object.set(property, to: .list(new.map { .object($0.key) }))
                if new != elements {
                    rec.touch(owner, property)
                    for element in elements + new { rec.linkChanged(owner, property, element) }
                }
            default:
                // Out of bounds: fails and changes nothing.
                rec.log("remove \(owner).\(property)[\(count)] (out of bounds)")
                try object.remove(from: property, at: count)
                rec.problem("an out-of-bounds removal succeeded")
            }
        } catch {
            if error.code != .indexOutOfBounds { rec.problem("list operation failed: \(error)") }
            if propagate { throw error }
        }
    }

    /// Operations through the typed API.
    static func typedOperation(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        switch rng.int(0...2) {
        case 0:
            guard let ref = rng.pick(Model.live(r, "Person")) else { return }
            let person = r.objects(Person.self).first { $0.objectKey == ref.key }!
            guard person.dogs.count > 1 else { return }
            let i = rng.int(0...person.dogs.count - 1)
            let j = rng.int(0...person.dogs.count - 1)
            rec.log("swap \(ref).dogs \(i) <-> \(j)")
            person.dogs.swapAt(i, j)
            if i != j { rec.touch(ref, "dogs") }
        case 1:
            guard let ref = rng.pick(Model.live(r, "Dog")) else { return }
            let dog = r.objects(Dog.self).first { $0.objectKey == ref.key }!
            let age = rng.int(0...6)
            rec.log("typed \(ref).age = \(age) (was \(dog.age))")
            if dog.age != age { rec.touch(ref, "age") }
            dog.age = age
        default:
            guard let ref = rng.pick(Model.live(r, "Dog")) else { return }
            let dog = r.objects(Dog.self).first { $0.objectKey == ref.key }!
            guard !dog.toys.isEmpty else { return }
            let elements = Model.linked(r, ref, "toys")
            rec.log("typed removeAll \(ref).toys (\(elements))")
            dog.toys.removeAll()
            rec.touch(ref, "toys")
            for toy in elements { rec.linkChanged(ref, "toys", toy) }
        }
    }
}

// MARK: - The run

/// What the test expects of one subscription after one write.
enum SubExpectation: Sendable {
    case collection(keys: [ObjectKey], modified: Set<ObjectKey>, values: [ObjectKey: [String: PropertyValue]])
    case object(values: [String: PropertyValue]?)
    case realm
}

struct WriteOutcome: Sendable {
    let index: Int
    let kind: String
    let versionBefore: UInt64
    let versionAfter: UInt64
    let rolledBack: Bool
    let silenced: Set<Int>
    let record: WriteRecord
    var expectations: [Int: SubExpectation] = [:]
    var valuesBefore: [Int: [String: PropertyValue]] = [:]

    var committed: Bool { versionAfter > versionBefore }
    var summary: String {
        "write #\(index) [\(kind)] v\(versionBefore)->v\(versionAfter)\(rolledBack ? " rolled back" : "")"
            + (silenced.isEmpty ? "" : " silencing subs \(silenced.sorted())") + "\n      "
            + record.log.joined(separator: "\n      ")
    }
}

struct ActiveSub: Sendable {
    let id: Int
    let spec: SubSpec
    let handle: SubHandle
    /// The first write whose changes the subscription reports.
    let firstWrite: Int
    /// For subscriptions started between writes: the state they start from.
    let initial: SubExpectation?
    let initialVersion: UInt64
}

struct RollbackError: Error {}

/// A value shared with a `@Sendable` closure.
final class LockedBox<T: Sendable>: Sendable {
    private let mutex: Locked<T>
    init(_ value: T) { mutex = Locked(value) }
    func set(_ value: T) { mutex.withLock { $0 = value } }
    func get() -> T { mutex.withLock { $0 } }
}

/// One random scenario; returns the failures found.
func runNotificationScenario(seed: UInt64, writes: Int) async throws -> [String] {
    var rng = SeededRandomNumberGenerator(seed: seed)
    let realm = try await Realm.open(.init(identifier: "notify-property-\(UUID())", objectTypes: petModelTypes))
    let schema = realm.schema
    let populateSeed = rng.next()
    var nextId = try await realm.write { r in
        var local = SeededRandomNumberGenerator(seed: populateSeed)
        return try Gen.populate(r, &local)
    }
    var failures: [String] = []
    var subs: [ActiveSub] = []
    var outcomes: [WriteOutcome] = []
    /// Owners of lists that no longer exist (deleted, or created by a rolled-back write).
    var deadOwners = Set<ObjRef>()

    func startSubscriptions(count: Int, firstWrite: Int) async throws {
        for _ in 0..<count {
            let specSeed = rng.next()
            let id = subs.count
            let dead = deadOwners
            let started: (SubSpec, SubHandle, SubExpectation, UInt64)? = try await realm.read { r in
                var local = SeededRandomNumberGenerator(seed: specSeed)
                guard let spec = Gen.randomSpec(r, &local) else { return nil }
                let handle = try SubscriptionFactory.start(r, spec)
                let expectation = try expectationNow(r, spec, record: nil, deadOwners: dead)
                return (spec, handle, expectation, r.version)
            }
            guard let (spec, handle, expectation, version) = started else { continue }
            subs.append(
                ActiveSub(
                    id: id, spec: spec, handle: handle, firstWrite: firstWrite, initial: expectation,
                    initialVersion: version))
        }
    }

    try await startSubscriptions(count: rng.int(3...7), firstWrite: 0)

    for w in 0..<writes {
        if rng.chance(0.15) { try await startSubscriptions(count: 1, firstWrite: w) }
        // Values before the write, for object subscriptions' old values.
        let objectSubs = subs.compactMap { sub -> (Int, ObjRef)? in
            if case .object(let type, let key) = sub.spec.kind { return (sub.id, ObjRef(type: type, key: key)) }
            return nil
        }
        let before: [Int: [String: PropertyValue]] = try await realm.read { r in
            var values: [Int: [String: PropertyValue]] = [:]
            for (id, ref) in objectSubs { values[id] = Model.values(r, ref) }
            return values
        }
        let versionBefore = await realm.version
        let roll = rng.int(0...99)
        let kind =
            roll < 62
            ? "write"
            : roll < 74
                ? "throwing" : roll < 90 ? "withoutNotifying" : roll < 95 ? "begin/commit with subscription" : "empty"
        var silenced = Set<Int>()
        if kind == "withoutNotifying" {
            for sub in subs where rng.chance(0.6) { silenced.insert(sub.id) }
        }
        let tokens = subs.filter { silenced.contains($0.id) }.map(\.handle.token)
        let opCount = kind == "empty" ? 0 : rng.int(1...4)
        let opSeed = rng.next()
        let subscribeInside = kind == "begin/commit with subscription" || (kind != "empty" && rng.chance(0.25))
        let insideSeed = rng.next()
        let box = LockedBox<(WriteRecord, SubSpec?, SubHandle?, Int)?>(nil)
        let idBefore = nextId
        let body: @Sendable (isolated Realm) throws -> sending Void = { r in
            var local = SeededRandomNumberGenerator(seed: opSeed)
            let rec = WriteRecorder(schema: schema)
            var id = idBefore
            var spec: SubSpec?
            var handle: SubHandle?
            let subscribeAt = subscribeInside ? local.int(0...opCount) : -1
            var failure: Error?
            for i in 0...opCount {
                if i == subscribeAt {
                    var specRng = SeededRandomNumberGenerator(seed: insideSeed)
                    if let s = Gen.randomSpec(r, &specRng) {
                        spec = s
                        handle = try? SubscriptionFactory.start(r, s)
                        rec.log("subscribe inside the write: \(s)")
                    }
                }
                guard i < opCount else { break }
                do {
                    try Gen.operation(
                        r, &local, rec, nextId: &id, propagateErrors: kind == "throwing" && local.chance(0.3))
                } catch {
                    failure = error
                    break
                }
            }
            box.set((rec.record, spec, handle, id))
            if let failure { throw failure }
            if kind == "throwing" { throw RollbackError() }
        }
        var rolledBack = false
        do {
            switch kind {
            case "withoutNotifying":
                try await realm.write(withoutNotifying: tokens, body)
            case "begin/commit with subscription":
                try await realm.beginWrite()
                do {
                    try await realm.read(body)
                    try await realm.commitWrite()
                } catch {
                    await realm.cancelWrite()
                    throw error
                }
            default:
                try await realm.write(body)
            }
        } catch {
            rolledBack = true
            if kind != "throwing" { failures.append("write #\(w) [\(kind)] threw \(error)") }
        }
        guard let (record, insideSpec, insideHandle, idAfter) = box.get() else {
            failures.append("write #\(w) recorded nothing")
            break
        }
        nextId = idAfter
        let effectiveRecord = rolledBack ? WriteRecord(log: record.log, problems: record.problems) : record
        if rolledBack {
            // Objects created by a rolled-back write are gone (their slots may be reused).
            deadOwners.formUnion(record.inserted)
        } else {
            deadOwners.formUnion(record.deleted)
        }
        let versionAfter = await realm.version
        var outcome = WriteOutcome(
            index: w, kind: kind, versionBefore: versionBefore, versionAfter: versionAfter, rolledBack: rolledBack,
            silenced: silenced, record: effectiveRecord)
        outcome.valuesBefore = before
        for problem in record.problems { failures.append("write #\(w): \(problem)") }
        if outcome.committed == effectiveRecord.isNoOp {
            failures.append(
                "write #\(w): version went \(versionBefore) -> \(versionAfter), but the test recorded \(effectiveRecord.isNoOp ? "no" : "some") change"
            )
        }
        if let insideSpec, let insideHandle {
            subs.append(
                ActiveSub(
                    id: subs.count, spec: insideSpec, handle: insideHandle, firstWrite: w + 1, initial: nil,
                    initialVersion: versionAfter))
        }
        // What every subscription should show now.
        let specs = subs.map { ($0.id, $0.spec) }
        let deadNow = deadOwners
        outcome.expectations = try await realm.read { r in
            var result: [Int: SubExpectation] = [:]
            for (id, spec) in specs {
                result[id] = try expectationNow(r, spec, record: effectiveRecord, deadOwners: deadNow)
            }
            return result
        }
        outcomes.append(outcome)
        if !failures.isEmpty { break }
    }

    // Collect and check.
    for sub in subs {
        let elements = await sub.handle.drain()
        failures += checkSubscription(sub, elements, outcomes, schema: schema).map {
            "sub \(sub.id) (\(sub.spec)): \($0)"
        }
    }
    if !failures.isEmpty {
        failures.append(
            "subscriptions:\n    "
                + subs.map { "\($0.id): \($0.spec) from write #\($0.firstWrite)" }.joined(separator: "\n    "))
        failures.append("writes:\n    " + outcomes.map(\.summary).joined(separator: "\n    "))
    }
    return failures
}

/// The expected state of a subscription now; `record` is the write just made (nil at start).
func expectationNow(_ r: isolated Realm, _ spec: SubSpec, record: WriteRecord?, deadOwners: Set<ObjRef>) throws
    -> SubExpectation
{
    switch spec.kind {
    case .results, .list:
        let keys = try SubscriptionFactory.freshKeys(r, spec, deadOwners: deadOwners)
        var modified = Set<ObjectKey>()
        var values: [ObjectKey: [String: PropertyValue]] = [:]
        let type = spec.elementType!
        var touched: [ObjRef: Set<String>] = [:]
        for touch in record?.effectiveTouches ?? [] { touched[touch.object, default: []].insert(touch.property) }
        for key in Set(keys) {
            let ref = ObjRef(type: type, key: key)
            values[key] = Model.values(r, ref)
            if !touched.isEmpty && Model.isModified(r, ref, keyPaths: spec.keyPaths, touched: touched) {
                modified.insert(key)
            }
        }
        return .collection(keys: keys, modified: modified, values: values)
    case .object(let type, let key):
        let ref = ObjRef(type: type, key: key)
        return .object(values: deadOwners.contains(ref) ? nil : Model.values(r, ref))
    case .realm:
        return .realm
    }
}

// MARK: - Checks

func checkSubscription(_ sub: ActiveSub, _ elements: [SubElement], _ outcomes: [WriteOutcome], schema: Schema)
    -> [String]
{
    var failures: [String] = []
    var remaining = elements[...]
    var previousVersion: UInt64?
    for element in elements {
        if let v = element.version {
            if let p = previousVersion, v <= p { failures.append("versions do not increase: \(p) then \(v)") }
            previousVersion = v
        }
    }
    // The initial element.
    let startState: SubExpectation?
    let startVersion: UInt64
    if let initial = sub.initial {
        startState = initial
        startVersion = sub.initialVersion
    } else {
        startState = outcomes.first { $0.index == sub.firstWrite - 1 }?.expectations[sub.id]
        startVersion = sub.initialVersion
    }
    guard let startState else { return ["no start state"] }
    switch sub.spec.kind {
    case .realm:
        break
    default:
        guard let first = remaining.popFirst() else { return ["no initial element"] }
        failures += checkInitial(first, startState, startVersion)
    }
    var state = startState
    for outcome in outcomes where outcome.index >= sub.firstWrite {
        guard let expected = outcome.expectations[sub.id] else { continue }
        defer { state = expected }
        let silenced = outcome.silenced.contains(sub.id)
        switch (state, expected) {
        case (.collection(let oldKeys, _, _), .collection(let newKeys, let modified, let values)):
            let changed = oldKeys != newKeys || newKeys.contains { modified.contains($0) }
            if !outcome.committed && oldKeys != newKeys {
                failures.append("keys changed in \(outcome.index) without a commit: \(oldKeys) -> \(newKeys)")
            }
            let arrives = outcome.committed && !silenced && changed
            let next = remaining.first
            if case .collection(let c)? = next, c.version == outcome.versionAfter, outcome.committed {
                remaining.removeFirst()
                if !arrives {
                    failures.append(
                        "write #\(outcome.index): unexpected element \(describe(c)) (keys unchanged: \(oldKeys == newKeys), modified: \(modified))"
                    )
                    continue
                }
                failures += checkCollectionChange(
                    c, old: oldKeys, new: newKeys, modified: modified, values: values, unique: sub.spec.hasUniqueKeys
                )
                .map {
                    "write #\(outcome.index): \($0) in \(describe(c)); old \(oldKeys) new \(newKeys) modified \(modified)"
                }
            } else if arrives {
                failures.append(
                    "write #\(outcome.index): missing element (old \(oldKeys) new \(newKeys) modified \(modified))")
            }
        case (.object(let oldValues), .object(let newValues)):
            guard oldValues != nil else { continue }  // already deleted
            let ref: ObjRef
            guard case .object(let type, let key) = sub.spec.kind else { continue }
            ref = ObjRef(type: type, key: key)
            let next = remaining.first
            if outcome.record.deleted.contains(ref) && outcome.committed {
                if !silenced {
                    if case .object(.deleted)? = next {
                        remaining.removeFirst()
                    } else {
                        failures.append("write #\(outcome.index): expected .deleted, got \(String(describing: next))")
                    }
                }
                if let extra = remaining.first {
                    failures.append("elements after deletion: \(extra)")
                    remaining.removeAll()
                }
                continue
            }
            guard let newValues else { continue }
            let schemaOrder = schema[type]!.properties.map(\.name)
            var names = Set(outcome.record.effectiveTouches.filter { $0.object == ref }.map(\.property))
            if let paths = sub.spec.keyPaths { names.formIntersection(paths) }
            let arrives = outcome.committed && !silenced && !names.isEmpty
            if case .object(.changed(let version, let values, let changes))? = next, version == outcome.versionAfter,
                outcome.committed
            {
                remaining.removeFirst()
                guard arrives else {
                    failures.append("write #\(outcome.index): unexpected object change \(changes)")
                    continue
                }
                let expectedNames = schemaOrder.filter { names.contains($0) }
                if changes.map(\.name) != expectedNames {
                    failures.append(
                        "write #\(outcome.index): changed properties \(changes.map(\.name)), expected \(expectedNames)")
                }
                let valuesBefore = outcome.valuesBefore[sub.id] ?? [:]
                for change in changes {
                    if change.oldValue != valuesBefore[change.name] {
                        failures.append(
                            "write #\(outcome.index): old value of \(change.name) is \(change.oldValue), expected \(String(describing: valuesBefore[change.name]))"
                        )
                    }
                    if change.newValue != newValues[change.name] {
                        failures.append(
                            "write #\(outcome.index): new value of \(change.name) is \(change.newValue), expected \(String(describing: newValues[change.name]))"
                        )
                    }
                }
                if values != newValues {
                    failures.append(
                        "write #\(outcome.index): frozen object \(values) differs from the live one \(newValues)")
                }
            } else if arrives {
                failures.append(
                    "write #\(outcome.index): missing object change for \(names.sorted()), next is \(String(describing: next))"
                )
            }
        case (.realm, .realm):
            let arrives = outcome.committed && !silenced
            if case .realm(let changes)? = remaining.first, changes.version == outcome.versionAfter, outcome.committed {
                remaining.removeFirst()
                if !arrives {
                    failures.append("write #\(outcome.index): unexpected changeset")
                    continue
                }
                failures += checkChangeSet(changes, outcome.record, schema: schema).map {
                    "write #\(outcome.index): \($0)"
                }
            } else if arrives {
                failures.append("write #\(outcome.index): missing changeset")
            }
        default:
            failures.append("write #\(outcome.index): mismatched expectation kinds")
        }
    }
    if !remaining.isEmpty {
        failures.append("extra elements: \(remaining.map { $0.version.map { "v\($0)" } ?? "deleted" })")
    }
    return failures
}

func describe(_ c: CollectionObservation) -> String {
    "v\(c.version) del \(c.deletions) ins \(c.insertions) mod \(c.modifications)/\(c.modificationsInNewIndices) moves \(c.moves.map { "\($0.from)->\($0.to)" }) keys \(c.keys)"
}

func checkInitial(_ element: SubElement, _ state: SubExpectation, _ version: UInt64) -> [String] {
    switch (element, state) {
    case (.collection(let c), .collection(let keys, _, let values)):
        var failures: [String] = []
        if !c.isInitial { failures.append("first element is not initial") }
        if c.version != version || c.snapshotVersion != version {
            failures.append("initial version \(c.version)/\(c.snapshotVersion), expected \(version)")
        }
        if c.keys != keys { failures.append("initial keys \(c.keys), expected \(keys)") }
        if !(c.deletions.isEmpty && c.insertions.isEmpty && c.modifications.isEmpty && c.moves.isEmpty) {
            failures.append("initial element has changes")
        }
        for (i, value) in c.values where value != values[c.keys[i]] {
            failures.append(
                "initial snapshot object \(c.keys[i]) is \(value), expected \(String(describing: values[c.keys[i]]))")
        }
        return failures
    case (.object(.initial(let v, let values)), .object(let expected?)):
        var failures: [String] = []
        if v != version { failures.append("initial object version \(v), expected \(version)") }
        if values != expected { failures.append("initial object \(values), expected \(expected)") }
        return failures
    case (.object(.deleted), .object(nil)):
        return []
    default:
        return ["unexpected initial element \(element) for \(state)"]
    }
}

func isStrictlyAscending(_ indices: [Int]) -> Bool { zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 } }

/// Checks one collection change against the keys before and after and the modified objects.
func checkCollectionChange(
    _ c: CollectionObservation, old: [ObjectKey], new: [ObjectKey], modified: Set<ObjectKey>,
    values: [ObjectKey: [String: PropertyValue]], unique: Bool
) -> [String] {
    var failures: [String] = []
    if c.isInitial { failures.append("isInitial on a change") }
    if c.snapshotVersion != c.version { failures.append("snapshot version \(c.snapshotVersion)") }
    if c.keys != new { failures.append("snapshot keys differ from a fresh query") }
    if c.apply(old) != new { failures.append("applied(to:) gives \(c.apply(old))") }
    for (name, list) in [
        ("deletions", c.deletions), ("insertions", c.insertions), ("modifications", c.modifications),
        ("modificationsInNewIndices", c.modificationsInNewIndices), ("move destinations", c.moves.map(\.to)),
    ] {
        if name != "modificationsInNewIndices" && !isStrictlyAscending(list) {
            failures.append("\(name) not strictly ascending")
        }
    }
    if Set(c.modificationsInNewIndices).count != c.modificationsInNewIndices.count {
        failures.append("modificationsInNewIndices repeat")
    }
    let oldRange = 0..<old.count
    let newRange = 0..<new.count
    if !(c.deletions + c.modifications + c.moves.map(\.from)).allSatisfy(oldRange.contains) {
        failures.append("old index out of range")
    }
    if !(c.insertions + c.modificationsInNewIndices + c.moves.map(\.to)).allSatisfy(newRange.contains) {
        failures.append("new index out of range")
    }
    if c.modifications.count != c.modificationsInNewIndices.count {
        failures.append("modification lists differ in length")
    }
    guard failures.isEmpty else { return failures }
    let deleted = Set(c.deletions)
    let inserted = Set(c.insertions)
    let movedFrom = Set(c.moves.map(\.from))
    let movedTo = Set(c.moves.map(\.to))
    if !deleted.isDisjoint(with: movedFrom) || !inserted.isDisjoint(with: movedTo) {
        failures.append("a move is also a deletion or insertion")
    }
    if Set(c.moves.map(\.from)).count != c.moves.count { failures.append("move sources repeat") }
    for move in c.moves where old[move.from] != new[move.to] { failures.append("move \(move) changes the object") }
    for (o, n) in zip(c.modifications, c.modificationsInNewIndices) {
        if old[o] != new[n] { failures.append("modification \(o)->\(n) pairs different objects") }
        if deleted.contains(o) || inserted.contains(n) {
            failures.append("modification \(o)->\(n) is also deleted or inserted")
        }
        if !modified.contains(old[o]) {
            failures.append("\(old[o]) reported modified, but its observed properties did not change")
        }
    }
    let modifiedNew = Set(c.modificationsInNewIndices)
    for (j, key) in new.enumerated() where modified.contains(key) && !inserted.contains(j) && !modifiedNew.contains(j) {
        failures.append("\(key) at \(j) changed but is not reported")
    }
    if old == new && !(c.deletions.isEmpty && c.insertions.isEmpty && c.moves.isEmpty) {
        failures.append("keys are unchanged but the change has deletions, insertions or moves")
    }
    if unique {
        let oldSet = Set(old)
        let newSet = Set(new)
        for i in c.deletions where newSet.contains(old[i]) { failures.append("\(old[i]) deleted but still present") }
        for j in c.insertions where oldSet.contains(new[j]) { failures.append("\(new[j]) inserted but was present") }
        // A move must change the order of the moved object relative to another kept object.
        let kept = old.filter(newSet.contains)
        let newPosition = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($1, $0) })
        let oldPosition = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1, $0) })
        for move in c.moves {
            let key = old[move.from]
            let flipped = kept.contains { other in
                other != key && (oldPosition[other]! < move.from) != (newPosition[other]! < move.to)
            }
            if !flipped {
                failures.append(
                    "move \(move.from)->\(move.to) of \(key) does not change its order relative to any other object")
            }
        }
    }
    for (i, value) in c.values where value != values[c.keys[i]] {
        failures.append("snapshot object \(c.keys[i]) is \(value), expected \(String(describing: values[c.keys[i]]))")
    }
    return failures
}

func checkChangeSet(_ changes: ChangeSet, _ record: WriteRecord, schema: Schema) -> [String] {
    var failures: [String] = []
    for object in schema.objectSchemas {
        let type = object.name
        let table = changes.tables[type]
        let inserted = record.inserted.subtracting(record.deleted).filter { $0.type == type }.map(\.key).sorted()
        let deleted = Set(record.deleted.subtracting(record.inserted).filter { $0.type == type }.map(\.key))
        var modified: [ObjectKey: Set<Int>] = [:]
        for touch in record.effectiveTouches where touch.object.type == type {
            let p = object.properties.firstIndex { $0.name == touch.property }!
            if object.properties[p].isStored { modified[touch.object.key, default: []].insert(p) }
        }
        let insertions = table?.insertions ?? []
        let deletions = Set(table?.deletions.keys ?? [:].keys)
        let modifications = table?.modifications ?? [:]
        if insertions != inserted { failures.append("\(type) insertions \(insertions), expected \(inserted)") }
        if deletions != deleted {
            failures.append("\(type) deletions \(deletions.sorted()), expected \(deleted.sorted())")
        }
        if modifications != modified { failures.append("\(type) modifications \(modifications), expected \(modified)") }
    }
    return failures
}

// MARK: - The test

@Suite struct NotificationPropertyTests {
    @Test func randomWritesProduceExactNotifications() async throws {
        let config = NotifyPropertyConfig.fromEnvironment()
        var master = SeededRandomNumberGenerator(seed: config.seed)
        for iteration in 0..<config.iterations {
            let scenarioSeed = master.next()
            let failures = try await runNotificationScenario(seed: scenarioSeed, writes: config.writes)
            if !failures.isEmpty {
                Issue.record(
                    """
                    notification property failed: LIVEOBJECTS_NOTIFY_SEED=\(config.seed), iteration \(iteration) \
                    (scenario seed \(scenarioSeed)); rerun with LIVEOBJECTS_NOTIFY_SEED=\(config.seed)
                    \(failures.prefix(40).joined(separator: "\n"))
                    """)
                print("LIVEOBJECTS_NOTIFY_SEED=\(config.seed) failed at iteration \(iteration)")
                return
            }
        }
    }
}
