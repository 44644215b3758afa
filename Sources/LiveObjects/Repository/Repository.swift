import Foundation
import LiveObjectsStore

/// A data-access layer over one model class of a realm: create, read, query and delete, with
/// every method implemented for you.
///
/// A conforming type names its storage class (`Model`), the realm, and how stored objects
/// become the values its callers see (`Item`). Callers never get live objects: by default an
/// item is a detached, unmanaged copy of the stored object (``Object/detached()``); a
/// repository can instead map those copies to app-model values, so that app code never sees
/// how data is stored:
///
/// ```swift
/// struct Team: Sendable { var id: Int; var name: String }       // the app's model
///
/// final class TeamRecord: Object {                                // the storage model
///     @Persisted(primaryKey: true) var id = 0
///     @Persisted var name = ""
/// }
///
/// struct TeamRepository: Repository {     // Model and Item inferred from the bridge
///     let realm: Realm
///     func item(from record: TeamRecord) -> Team { Team(id: record.id, name: record.name) }
///     func model(from team: Team) -> TeamRecord {
///         let record = TeamRecord()
///         record.id = team.id
///         record.name = team.name
///         return record
///     }
/// }
///
/// let teams = TeamRepository(realm: try await TeamRepository.openRealm(configuration))
/// try await teams.save(Team(id: 1, name: "Owls"))
/// let owls = try await teams.find(where: "name BEGINSWITH %@", "Ow")
/// ```
///
/// Every operation is `async`, runs in one read or write of the realm (a save or delete of
/// several objects is all or nothing), and throws only ``RepositoryError``. Each has a
/// completion-handler form for callers without `async` (see `Repository+Completion.swift`).
public protocol Repository: Sendable {
    /// The stored model class.
    associatedtype Model: Object
    /// What callers save and get back. Default: `Model` (detached copies).
    associatedtype Item = Model

    /// The realm that holds the objects.
    var realm: Realm { get }

    /// Converts a stored object to what callers get.
    ///
    /// `model` is a detached, unmanaged copy of the stored object (with the objects it links
    /// to), made in the realm's isolation and handed over: read it freely. Throw
    /// ``RepositoryError`` (or any error) when the object cannot be represented; a search then
    /// fails with ``RepositoryError/searchFailed(objectType:underlying:)``.
    func item(from model: Model) throws -> Item

    /// Converts what a caller saves to a new unmanaged object of the storage model.
    ///
    /// Throw ``RepositoryError/missingRequiredData(objectType:property:underlying:)`` when the
    /// item lacks something the storage needs; other errors make the save fail with
    /// ``RepositoryError/insertFailed(objectType:underlying:)``.
    func model(from item: Item) throws -> Model
}

extension Repository where Item == Model {
    /// The detached copy of the stored object (and of the objects it links to).
    public func item(from model: Model) -> Model { model }

    /// The object itself: saving adds it (and the unmanaged objects it links to).
    public func model(from item: Model) -> Model { item }
}

extension Repository {
    /// Opens a realm for a repository.
    ///
    /// - Throws: ``RepositoryError/openFailed(underlying:)`` with the realm's error.
    public static func openRealm(_ configuration: Realm.Configuration) async throws(RepositoryError) -> Realm {
        do {
            return try await Realm.open(configuration)
        } catch {
            throw .openFailed(underlying: error)
        }
    }

    private var typeName: String { Model.className }

    // MARK: Saving

    /// Saves an item: inserts it, or with an update policy other than ``UpdatePolicy/error``
    /// updates the stored object with the same primary key.
    ///
    /// - Parameters:
    ///   - item: The item to save.
    ///   - update: What to do when an object with the same primary key exists. Default:
    ///     ``UpdatePolicy/modified`` (insert or update); pass ``UpdatePolicy/error`` to insert
    ///     only.
    /// - Throws: ``RepositoryError/insertFailed(objectType:underlying:)`` (for example a
    ///   duplicate primary key with ``UpdatePolicy/error``), or
    ///   ``RepositoryError/missingRequiredData(objectType:property:underlying:)``. Nothing is
    ///   saved.
    public func save(_ item: sending Item, update: UpdatePolicy = .modified) async throws(RepositoryError) {
        try await save([item], update: update)
    }

    /// Saves several items in one write: all are saved or none; see ``save(_:update:)-(Self.Item,_)``.
    public func save(_ items: sending [Item], update: UpdatePolicy = .modified) async throws(RepositoryError) {
        var models: [Object] = []
        do {
            for item in items { models.append(try model(from: item)) }
        } catch {
            throw .wrapping(error, .insert, objectType: typeName)
        }
        do {
            try await realm.write(adding: models, update: update)
        } catch {
            throw .wrapping(error, .insert, objectType: typeName)
        }
    }

    /// Saves objects given as JSON: one JSON object, or an array of them, in one write (all or
    /// none). Links may be given by primary key or as nested objects; see
    /// ``Realm/create(_:json:update:decoder:)``.
    ///
    /// - Parameters:
    ///   - json: A JSON object or array, UTF-8.
    ///   - update: What to do when an object with the same primary key exists. Default:
    ///     ``UpdatePolicy/modified``.
    ///   - dateDecodingStrategy: How dates are written in the JSON. Default: the
    ///     `JSONDecoder` default (seconds since 2001-01-01).
    /// - Returns: The saved objects as items.
    /// - Throws: ``RepositoryError/insertFailed(objectType:underlying:)`` with a
    ///   ``LiveObjectsError`` naming the type and property (`corruptFile`, `typeMismatch`,
    ///   `unknownProperty`, `duplicatePrimaryKey`), or
    ///   ``RepositoryError/missingRequiredData(objectType:property:underlying:)`` for a missing
    ///   primary key or a link to one that does not exist.
    @discardableResult
    public func save(
        json: Data, update: UpdatePolicy = .modified,
        dateDecodingStrategy: JSONDecoder.DateDecodingStrategy = .deferredToDate
    ) async throws(RepositoryError) -> sending [Item] {
        let isArray = json.first(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) == UInt8(ascii: "[")
        let models: [Model]
        do {
            models = try await realm.write { realm in
                let decoder = JSONDecoder()
                decoder.dateDecodingStrategy = dateDecodingStrategy
                let objects =
                    isArray
                    ? try realm.create(Model.self, jsonArray: json, update: update, decoder: decoder)
                    : [try realm.create(Model.self, json: json, update: update, decoder: decoder)]
                return objects.detached()
            }
        } catch {
            throw .wrapping(error, .insert, objectType: typeName)
        }
        do {
            return try models.map(item(from:))
        } catch {
            throw .wrapping(error, .insert, objectType: typeName)
        }
    }

    // MARK: Finding

    /// The item with a primary key, or nil.
    ///
    /// - Throws: ``RepositoryError/searchFailed(objectType:underlying:)`` (a key of the wrong
    ///   type, a type without a primary key, or a failed conversion).
    public func find<Key: _PrimitivePersistable & Sendable>(primaryKey: Key) async throws(RepositoryError)
        -> sending Item?
    {
        do {
            let model = try await realm.read { realm -> Model? in
                try Self.object(realm, primaryKey: key(primaryKey))?.detached()
            }
            return try model.map(item(from:))
        } catch {
            throw .wrapping(error, .search, objectType: typeName)
        }
    }

    /// Every stored item, optionally sorted.
    ///
    /// - Parameter sortedBy: Sort criteria, the first deciding first; none keeps storage order.
    /// - Throws: ``RepositoryError/searchFailed(objectType:underlying:)``.
    /// - Complexity: O(*n* log *n*) to sort, plus one conversion per item.
    public func findAll(sortedBy: [SortField] = []) async throws(RepositoryError) -> sending [Item] {
        try await search(sortedBy: sortedBy) { $0 }
    }

    /// The items matching a predicate in the string query language, optionally sorted.
    ///
    /// ```swift
    /// let veterans = try await players.find(where: "age >= %@ AND team.name == %@", 30, "Owls",
    ///                                       sortedBy: [SortField("age", ascending: false)])
    /// ```
    ///
    /// - Parameters:
    ///   - predicate: The predicate (see the query language in the README).
    ///   - arguments: Values for `%@` and `$0`, `$1`, ….
    ///   - sortedBy: Sort criteria; none keeps storage order.
    /// - Throws: ``RepositoryError/searchFailed(objectType:underlying:)`` with the query error
    ///   (`invalidQuery` with the position of the problem, `unknownProperty`).
    public func find(where predicate: String, _ arguments: any Sendable..., sortedBy: [SortField] = [])
        async throws(RepositoryError) -> sending [Item]
    {
        try await search(predicate: predicate, arguments: arguments, sortedBy: sortedBy)
    }

    func search(predicate: String, arguments: [any Sendable], sortedBy: [SortField])
        async throws(RepositoryError) -> sending [Item]
    {
        try await search(sortedBy: sortedBy) { results in
            try results.filter(predicate, arguments: Self.values(arguments))
        }
    }

    /// The items matching a typed condition, optionally sorted.
    ///
    /// ```swift
    /// let young = try await players.find { $0.age < 20 && $0.team.name == "Owls" }
    /// ```
    ///
    /// - Throws: ``RepositoryError/searchFailed(objectType:underlying:)``.
    public func find(
        sortedBy: [SortField] = [], where condition: @escaping @Sendable (Query<Model>) -> Query<Bool>
    ) async throws(RepositoryError) -> sending [Item] {
        try await search(sortedBy: sortedBy) { $0.where(condition) }
    }

    /// The number of stored objects, or of those matching a predicate.
    ///
    /// - Throws: ``RepositoryError/searchFailed(objectType:underlying:)``.
    public func count(where predicate: String? = nil, _ arguments: any Sendable...) async throws(RepositoryError)
        -> Int
    {
        do {
            return try await realm.read { realm in
                let all = realm.objects(Model.self)
                guard let predicate else { return all.count }
                return try all.filter(predicate, arguments: Self.values(arguments)).count
            }
        } catch {
            throw .wrapping(error, .search, objectType: typeName)
        }
    }

    private func search(
        sortedBy: [SortField] = [], _ refine: @escaping @Sendable (Results<Model>) throws -> Results<Model>
    ) async throws(RepositoryError) -> sending [Item] {
        do {
            let models = try await realm.read { realm in
                var results = try refine(realm.objects(Model.self))
                if !sortedBy.isEmpty { results = try results.sorted(by: sortedBy) }
                return results.detached()
            }
            return try models.map(item(from:))
        } catch {
            throw .wrapping(error, .search, objectType: typeName)
        }
    }

    // MARK: Deleting

    /// Deletes the stored object with the same primary key as an item.
    ///
    /// - Returns: Whether an object was deleted.
    /// - Throws: ``RepositoryError/deleteFailed(objectType:underlying:)`` (a type without a
    ///   primary key, a `deny` delete rule).
    @discardableResult
    public func delete(_ item: Item) async throws(RepositoryError) -> Bool {
        let key: PropertyValue
        do {
            let model = try model(from: item)
            guard let pk = try ModelInfo.info(for: Model.self).schema.primaryKey else {
                throw LiveObjectsError(
                    .invalidOperation, "the type has no primary key: delete matching objects instead",
                    objectType: typeName)
            }
            key = try model.value(forKey: pk.name)
        } catch {
            throw .wrapping(error, .delete, objectType: typeName)
        }
        return try await delete(key: key)
    }

    /// Deletes the stored object with a primary key.
    ///
    /// - Returns: Whether an object was deleted.
    /// - Throws: ``RepositoryError/deleteFailed(objectType:underlying:)``.
    @discardableResult
    public func delete<Key: _PrimitivePersistable & Sendable>(primaryKey: Key) async throws(RepositoryError) -> Bool {
        try await delete(key: primaryKey._propertyValue)
    }

    private func delete(key: PropertyValue) async throws(RepositoryError) -> Bool {
        do {
            return try await realm.write { realm in
                guard let object = try Self.object(realm, primaryKey: key) else { return false }
                try realm.delete(object)
                return true
            }
        } catch {
            throw .wrapping(error, .delete, objectType: typeName)
        }
    }

    /// Deletes the stored objects matching a predicate in the string query language, in one
    /// write (all or none).
    ///
    /// - Returns: How many objects were deleted.
    /// - Throws: ``RepositoryError/deleteFailed(objectType:underlying:)`` (with the query error
    ///   for a bad predicate).
    @discardableResult
    public func delete(where predicate: String, _ arguments: any Sendable...) async throws(RepositoryError) -> Int {
        try await deleteMatching(predicate: predicate, arguments: arguments)
    }

    func deleteMatching(predicate: String, arguments: [any Sendable]) async throws(RepositoryError) -> Int {
        try await deleteMatching { try $0.filter(predicate, arguments: Self.values(arguments)) }
    }

    /// Deletes the stored objects matching a typed condition, in one write (all or none).
    ///
    /// - Returns: How many objects were deleted.
    /// - Throws: ``RepositoryError/deleteFailed(objectType:underlying:)``.
    @discardableResult
    public func delete(where condition: @escaping @Sendable (Query<Model>) -> Query<Bool>) async throws(RepositoryError)
        -> Int
    {
        try await deleteMatching { $0.where(condition) }
    }

    /// Deletes every stored object of the model class.
    ///
    /// - Returns: How many objects were deleted.
    /// - Throws: ``RepositoryError/deleteFailed(objectType:underlying:)``.
    @discardableResult
    public func deleteAll() async throws(RepositoryError) -> Int {
        try await deleteMatching { $0 }
    }

    private func deleteMatching(_ select: @escaping @Sendable (Results<Model>) throws -> Results<Model>)
        async throws(RepositoryError) -> Int
    {
        do {
            return try await realm.write { realm in
                let objects = Array(try select(realm.objects(Model.self)))
                try realm.delete(objects)
                return objects.count
            }
        } catch {
            throw .wrapping(error, .delete, objectType: typeName)
        }
    }

    // MARK: Helpers

    private func key<Key: _PrimitivePersistable>(_ key: Key) -> PropertyValue { key._propertyValue }

    /// The stored object with a primary key, checking the key's type.
    private static func object(_ realm: isolated Realm, primaryKey: PropertyValue) throws -> Model? {
        guard let dynamic = try realm.dynamicObject(ofType: Model.className, forPrimaryKey: primaryKey) else {
            return nil
        }
        let object = Model()
        object._handle = dynamic.handle
        return object
    }

    private static func values(_ arguments: [any Sendable]) throws(LiveObjectsError) -> [PropertyValue] {
        var values: [PropertyValue] = []
        for argument in arguments { values.append(try PropertyValue(argument: argument)) }
        return values
    }
}
