import LiveObjectsStore

/// A ready-made ``Repository`` of one model class whose callers get detached, unmanaged copies
/// of the stored objects.
///
/// ```swift
/// let dogs = try await ObjectRepository<Dog>.open(configuration)
/// try await dogs.save(json: Data(#"[{"id": 1, "name": "Rex"}, {"id": 2, "name": "Fido"}]"#.utf8))
/// let rex = try await dogs.find(primaryKey: 1)   // an unmanaged Dog
/// ```
public struct ObjectRepository<Model: Object>: Repository {
    public typealias Item = Model

    /// The realm that holds the objects.
    public let realm: Realm

    /// A repository over an open realm.
    public init(realm: Realm) {
        self.realm = realm
    }

    /// Opens the realm of a configuration and makes a repository over it.
    ///
    /// - Throws: ``RepositoryError/openFailed(underlying:)``, also when the realm does not hold
    ///   `Model` (`unknownType`).
    public static func open(_ configuration: Realm.Configuration) async throws(RepositoryError) -> Self {
        let realm = try await openRealm(configuration)
        guard realm.schema[Model.className] != nil else {
            throw .openFailed(
                underlying: LiveObjectsError(
                    .unknownType, "the realm '\(configuration.identifier)' does not hold this type",
                    objectType: Model.className))
        }
        return Self(realm: realm)
    }
}
