import LiveObjects

// The subscriptions of the notification scenario: what each watches (`SubSpec`), how it is
// started on a realm, and what it produced, copied out of the change values.

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

package struct CollectionObservation: Sendable {
    package let version: UInt64
    package let isInitial: Bool
    package let deletions: [Int]
    package let insertions: [Int]
    package let modifications: [Int]
    package let modificationsInNewIndices: [Int]
    package let moves: [(from: Int, to: Int)]
    package let keys: [ObjectKey]
    let snapshotVersion: UInt64
    /// The stored values of objects of the snapshot, read from the frozen snapshot, by position:
    /// the inserted and modified ones and a few more (reading all of a large snapshot for every
    /// element would dominate the run).
    package let values: [Int: [String: PropertyValue]]
    package let apply: @Sendable ([ObjectKey]) -> [ObjectKey]
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
///
/// - Parameters:
///   - sequence: A change sequence whose elements were already yielded (a commit yields them
///     synchronously).
///   - transform: What to keep of each element.
/// - Returns: The transformed elements, in order.
package func drainBuffered<S: AsyncSequence & Sendable, T: Sendable>(
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
    /// Copies what the checks need out of a collection change.
    package init<T: Object>(_ change: CollectionChange<T>, schema: ObjectSchema) {
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
            return NotificationModel.keys(try object.value(property))
        default:
            return []
        }
    }
}
