// The store's public types (`Schema`, `Property`, `PropertyValue`, `ObjectKey`,
// `LiveObjectsError`, ...) are part of this module's API: `import LiveObjects` brings them.
@_exported import LiveObjectsStore

/// A realm: an actor that owns an object graph and runs every read and write inside its
/// isolation.
///
/// ```swift
/// let realm = try await Realm.open(.init(identifier: "pets", objectTypes: [Dog.self, Person.self]))
/// try await realm.write { realm in
///     let rex = try realm.create(Dog.self, value: ["id": 1, "name": "Rex"])
///     rex.age = 3
/// }
/// let count = try await realm.read { $0.objects(Dog.self).count }
/// ```
///
/// Live objects never leave the realm's isolation: the closures given to ``write(_:)`` and
/// ``read(_:)`` run inside it, and the compiler refuses to return a live object from them.
/// Return values, primary keys, or ``Object/detached()`` copies instead.
public actor Realm {
    /// The configuration the realm was opened with.
    public nonisolated let configuration: Configuration
    /// The realm's schema.
    public nonisolated let schema: Schema
    @usableFromInline package let store: Store
    /// The change history, when the configuration keeps one (a listener of the store's
    /// commits).
    let history: HistoryLog?
    /// The realm's live subscriptions (a listener of the store's commits).
    let subscriptions: SubscriptionRegistry

    private static let openRealms = Locked<[String: WeakRealm]>([:])

    /// The actor whose executor runs the realm's code: an actor of its own, or the actor it was
    /// opened on (``open(_:on:)``).
    private nonisolated let home: any Actor

    /// The realm's executor: its own, or that of the actor it was opened on.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { home.unownedExecutor }

    private init(configuration: Configuration, schema: Schema, on actor: (any Actor)?) throws(LiveObjectsError) {
        self.configuration = configuration
        self.schema = schema
        self.home = actor ?? RealmExecutor()
        let owned = try Store(schema: schema)
        self.store = owned
        store.isLive = true
        store.queries.maximumWork = max(configuration.maximumQueryWork, 0)
        for type in configuration.objectTypes {
            store.register(try ModelInfo.info(for: type))
        }
        self.history = configuration.keepsHistory ? HistoryLog() : nil
        if let history { store.addCommitListener(history) }
        self.subscriptions = NotificationListeners.install(
            on: store, maximumSubscriptions: configuration.maximumSubscriptions)
        try configuration.storage.backend?.open(store, configuration: configuration)
        do throws(LiveObjectsError) {
            try Self.checkEnumValues(store)
        } catch {
            configuration.storage.backend?.release(store)
            throw error
        }
        configuration.storage.backend?.attach(self)
        owned.owner = self
    }

    /// Checks that every value of an enum property (``PersistableEnum``) that storage loaded is
    /// the raw value of a case, and every value of a ``FailableCustomPersistable`` property
    /// one that its type accepts.
    ///
    /// - Throws: `typeMismatch` naming the first object and property that hold another value.
    private static func checkEnumValues(_ store: Store) throws(LiveObjectsError) {
        for table in store.tables {
            guard let info = table.modelInfo, !info.enumChecks.isEmpty || !info.valueChecks.isEmpty else { continue }
            for row in table.liveRows {
                try checkCustomValues(table, row, info)
                for check in info.enumChecks {
                    let value = table.value(row, check.propertyIndex)
                    let values: [PropertyValue] = if case .list(let elements) = value { elements } else { [value] }
                    for element in values where !element.isNull && !check.allowed.contains(element) {
                        throw LiveObjectsError(
                            .typeMismatch, "\(element) is not the raw value of a case of \(check.enumName)",
                            objectType: table.name, property: table.schema.properties[check.propertyIndex].name,
                            primaryKey: table.primaryKeyProperty.map { table.value(row, $0) })
                    }
                }
            }
        }
    }

    /// Checks the values of the ``FailableCustomPersistable`` properties of one loaded object.
    private static func checkCustomValues(_ table: Table, _ row: Int32, _ info: ModelInfo) throws(LiveObjectsError) {
        for check in info.valueChecks {
            let value = table.value(row, check.propertyIndex)
            let values: [PropertyValue] = if case .list(let elements) = value { elements } else { [value] }
            for element in values where !element.isNull && !check.accepts(element) {
                throw LiveObjectsError(
                    .typeMismatch, "\(element) does not make a \(check.typeName)",
                    objectType: table.name, property: table.schema.properties[check.propertyIndex].name,
                    primaryKey: table.primaryKeyProperty.map { table.value(row, $0) })
            }
        }
    }

    isolated deinit {
        if !store.isClosed { configuration.storage.backend?.release(store) }
        subscriptions.finishAll()
    }

    /// Closes the realm now instead of when it is released: a realm kept in a file saves what
    /// its save policy still owes the file and releases the file, so that this or another
    /// process can open it at once. The realm's subscriptions end, and writes to it are refused
    /// from then on (``write(_:)`` throws `invalidOperation`); reads still see its last state.
    /// Opening the identifier again gives a new realm. Closing a closed realm does nothing.
    ///
    /// - Throws: `alreadyInWriteTransaction` while a write is open; `io` when the last save
    ///   fails, in which case the realm stays open (nothing is lost: try again, or keep using
    ///   it).
    public func close() throws(LiveObjectsError) {
        guard !store.isClosed else { return }
        guard !store.isInWrite else {
            throw LiveObjectsError(.alreadyInWriteTransaction, "a realm cannot be closed while a write is open")
        }
        try configuration.storage.backend?.close(store)
        store.isClosed = true
        Self.openRealms.withLock { realms in
            if realms[configuration.identifier]?.realm === self { realms[configuration.identifier] = nil }
        }
        subscriptions.finishAll()
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { store.isClosed }

    /// Opens a realm, or returns the open realm with the same identifier.
    ///
    /// - Throws: `invalidSchema` when the schema breaks a rule (the error names the type and
    ///   property); `schemaMismatch` when the identifier is open with another schema or
    ///   schema version.
    public static func open(_ configuration: Configuration) async throws(LiveObjectsError) -> Realm {
        try await open(configuration, actor: nil)
    }

    /// Opens a realm whose code runs on `actor`'s executor (the main actor, for the realm a
    /// user interface shows), or returns the open realm with the same identifier.
    ///
    /// Code isolated to that actor reads and writes the realm synchronously through
    /// ``access``: a `@MainActor` view model keeps live objects and
    /// ``Results`` and reads them without `await`, and Observation tells it when they change.
    /// Other tasks use the realm as usual, with `await` (their reads and writes then run on the
    /// main actor, briefly).
    ///
    /// ```swift
    /// @MainActor @Observable final class DogList {
    ///     let dogs: Results<Dog>
    ///     init(realm: Realm) { dogs = realm.access { $0.objects(Dog.self).sorted(by: \.name) } }
    /// }
    /// let realm = try await Realm.open(configuration, on: MainActor.shared)
    /// ```
    ///
    /// - Throws: as ``open(_:)``; `schemaMismatch` also when the identifier is open on
    ///   another actor.
    public static func open(_ configuration: Configuration, on actor: some Actor) async throws(LiveObjectsError)
        -> Realm
    {
        try await open(configuration, actor: actor)
    }

    private static func open(_ configuration: Configuration, actor: (any Actor)?) async throws(LiveObjectsError)
        -> Realm
    {
        let schema = try configuration.resolvedSchema()
        await configuration.storage.backend?.prepareToOpen()
        return try openRealms.withLock { (realms) throws(LiveObjectsError) -> Realm in
            if let realm = realms[configuration.identifier]?.realm {
                guard realm.schema == schema,
                    realm.configuration.schemaVersion == configuration.schemaVersion
                else {
                    throw LiveObjectsError(
                        .schemaMismatch,
                        "the realm '\(configuration.identifier)' is already open with another schema or schema version")
                }
                if let actor, realm.home !== actor {
                    throw LiveObjectsError(
                        .schemaMismatch,
                        "the realm '\(configuration.identifier)' is already open on another actor")
                }
                return realm
            }
            let realm = try Realm(configuration: configuration, schema: schema, on: actor)
            realms = realms.filter { $0.value.realm != nil }
            realms[configuration.identifier] = WeakRealm(realm: realm)
            return realm
        }
    }

    // MARK: Transactions

    /// Runs `body` in a write transaction and commits it.
    ///
    /// All or nothing: if `body` throws, or an accessor inside it failed (a setter outside the
    /// write's realm, a deleted object), every change it made is rolled back and the error is
    /// thrown.
    ///
    /// `body` can be a function as well as a closure: `realm.write(addDefaults)` with
    /// `func addDefaults(_ realm: isolated Realm) throws -> Int`. A body that ends with an
    /// object it made (`realm.write { try $0.create(Dog.self, value: …) }`, as in Realm) is
    /// accepted too, and the write then returns nothing: the object stays in the realm.
    ///
    /// `body` cannot capture an object made before the write (the compiler says "capture of …
    /// with non-Sendable type … in a '@Sendable' closure"): hand such objects over with
    /// ``write(adding:update:)``. <doc:ComingFromRealm#When-the-compiler-says-no> lists the
    /// messages and what to write instead.
    ///
    /// - Returns: What `body` returns. It cannot be a live object (the compiler says "returning
    ///   … as a 'sending' result risks causing data races"); return a value, a key, a frozen
    ///   object (`freeze()`) or a detached copy (`detached()`).
    /// - Throws: `alreadyInWriteTransaction` if a write is open, or the error that ended `body`;
    ///   for a realm kept in a file, `io` when the commit cannot be made durable under the
    ///   storage's policy (the journal line or the save failed): the write is then rolled back,
    ///   as if `body` had thrown, and a later write tries the file again.
    public func write<T>(_ body: @Sendable (isolated Realm) throws -> sending T) throws -> sending T {
        try write(silencing: []) { realm in try body(realm) }
    }

    /// Runs `body`, a function whose result is `Sendable`, in a write transaction and commits
    /// it: `realm.write(addDefaults)` with `func addDefaults(_ realm: isolated Realm) throws -> Int`.
    /// (A function value converts to the `sending` result of the other form only when written
    /// as a closure; this form takes it as it is.)
    @_disfavoredOverload @_documentation(visibility: internal)
    public func write<T: Sendable>(_ body: @Sendable (isolated Realm) throws -> T) throws -> T {
        try write(silencing: []) { realm in try body(realm) }
    }

    /// Runs `body`, which ends with an object it created or changed, in a write transaction and
    /// commits it: `realm.write { try $0.create(Dog.self, value: ["id": 1]) }`, as Realm code
    /// writes it. The object stays in the realm; the write returns nothing (a live object cannot
    /// leave it).
    @_documentation(visibility: internal)
    public func write<T: Object>(_ body: @Sendable (isolated Realm) throws -> T) throws {
        try write(silencing: []) { realm in _ = try body(realm) }
    }

    /// Runs `body`, which returns nothing, in a write transaction and commits it. (Without this
    /// form, a body of several statements would be read as the form above and asked to return
    /// an object.)
    @_documentation(visibility: internal)
    public func write(_ body: @Sendable (isolated Realm) throws -> Void) throws {
        try write(silencing: []) { realm in try body(realm) }
    }

    /// Runs a write; the subscriptions named by `tokens` do not hear about its commit.
    func write<T>(
        silencing tokens: Set<SubscriptionToken>, _ body: @Sendable (isolated Realm) throws -> sending T
    ) throws -> sending T {
        try openWrite()
        subscriptions.silencedTokens = tokens
        return try finishWrite(body(self))
    }

    /// Ends the open write once its body has run: commits it, or, if the body threw (the
    /// autoclosure) or an accessor inside it recorded an error, rolls it back and throws.
    private func finishWrite<T>(_ body: @autoclosure () throws -> sending T) throws -> sending T {
        let result: T
        do {
            result = try body()
            if let error = store.takePendingError() { throw error }
        } catch {
            store.cancelWrite()
            throw error
        }
        // A commit that cannot be made durable rolls itself back before it throws.
        try store.commitWrite()
        return result
    }

    /// Runs `body` inside the realm's isolation without opening a write.
    ///
    /// - Returns: What `body` returns. It cannot be a live object (the compiler says "returning
    ///   … as a 'sending' result risks causing data races"): return values, a frozen object
    ///   (`freeze()`, readable anywhere) or a detached copy (`detached()`); see
    ///   <doc:ComingFromRealm#When-the-compiler-says-no>.
    /// - Throws: the error `body` throws, or the first error an accessor inside it recorded
    ///   (`notInWriteTransaction` for a setter, `objectInvalidated` for a deleted object).
    public func read<T>(_ body: @Sendable (isolated Realm) throws -> sending T) throws -> sending T {
        if !store.isInWrite && !store.isClosed { configuration.storage.backend?.catchUp(store) }
        let outer = store.takePendingError()
        let result = try body(self)
        if let error = store.takePendingError() ?? outer { throw error }
        return result
    }

    /// Runs `body`, a function whose result is `Sendable`, with the realm's latest state:
    /// `realm.read(countDogs)` with `func countDogs(_ realm: isolated Realm) -> Int`.
    @_disfavoredOverload @_documentation(visibility: internal)
    public func read<T: Sendable>(_ body: @Sendable (isolated Realm) throws -> T) throws -> T {
        try read { realm in try body(realm) }
    }

    /// Adds unmanaged objects in a write of their own: the way to hand objects made outside the
    /// realm to it.
    ///
    /// - Throws: the errors of ``add(_:update:)-(Object,_)``.
    public func write(adding objects: sending [Object], update: UpdatePolicy = .error) throws {
        try openWrite()
        try finishWrite(objects.forEach { try add($0, update: update) })
    }

    /// Opens a write that stays open until ``commitWrite()`` or ``cancelWrite()``.
    ///
    /// - Throws: `alreadyInWriteTransaction`.
    public func beginWrite() throws(LiveObjectsError) {
        try openWrite()
    }

    /// Opens a write on the store, after the storage has made ready for it (a file shared
    /// with other processes takes its write lock and applies their commits first, so that the
    /// write's body sees the latest state).
    private func openWrite() throws(LiveObjectsError) {
        if !store.isInWrite && !store.isClosed {
            try configuration.storage.backend?.willBeginWrite(store)
            store.releaseUnsharedFrozenCopy()
        }
        try store.beginWrite()
    }

    /// Applies the commits that other processes made to the realm's storage since this realm
    /// last looked (a file shared between processes), each as a commit of its own with its
    /// notifications. Does nothing during a write or once closed.
    package func catchUpWithStorage() {
        guard !store.isInWrite, !store.isClosed else { return }
        configuration.storage.backend?.catchUp(store)
    }

    /// Commits the write opened by ``beginWrite()``.
    ///
    /// - Throws: `notInWriteTransaction`; or, when an accessor failed during the write, its
    ///   error, after rolling the write back; or `io` when a realm kept in a file cannot make
    ///   the commit durable, after rolling the write back (see ``write(_:)``).
    public func commitWrite() throws(LiveObjectsError) {
        try store.requireWrite()
        if let error = store.takePendingError() {
            store.cancelWrite()
            throw error
        }
        try store.commitWrite()
    }

    /// Rolls back the write opened by ``beginWrite()``.
    public func cancelWrite() {
        if store.isInWrite { store.cancelWrite() }
    }

    /// Whether a write is open.
    public var isInWriteTransaction: Bool { store.isInWrite }

    /// The version of the last commit; 0 for a new realm.
    public var version: UInt64 { store.version }

    // MARK: Hooks for other modules

    /// Calls `observer` after every commit that changed something, last in the commit
    /// pipeline.
    package func addCommitObserver(_ observer: @escaping (ChangeSet, Store) -> Void) {
        store.addCommitListener(CommitObserver { commit in observer(commit.changes, commit.store) })
    }
}

/// An engine that keeps a store somewhere (a file): implemented by the `Persistence` module.
package protocol StorageBackend: Sendable {
    /// Fills the new, empty store from storage (creating it if needed, migrating if the schema
    /// version went up) and starts recording commits. Called once, before the realm is shared.
    ///
    /// - Throws: the error that makes `Realm.open` fail; storage must then be left untouched.
    func open(_ store: Store, configuration: Realm.Configuration) throws(LiveObjectsError)
    /// Called when the realm is closed or goes away: a last save or journal flush, then the
    /// storage is released. After an error the storage must still be open (the realm stays
    /// usable); errors are ignored when the realm goes away.
    func close(_ store: Store) throws(LiveObjectsError)
    /// Called when the realm goes away without ``close(_:)``: as ``close(_:)``, but the storage
    /// is released even when the last save fails (nothing can report the error; with a
    /// journal, the journal still holds every commit).
    func release(_ store: Store)
    /// Called by `Realm.open` before it makes a realm: waits while a realm of the same storage
    /// that was just released is still closing it (its deinit runs on its own executor). The
    /// default does nothing.
    func prepareToOpen() async
    /// Called once the realm is made, after ``open(_:configuration:)``: for work the engine
    /// schedules later on the realm (a deferred save). The default does nothing.
    func attach(_ realm: Realm)
    /// Called before a write opens (outside any write, on an open realm): storage shared with
    /// other processes takes its write lock, held until the write commits or is cancelled
    /// (the backend hears it in the commit pipeline), and applies the commits the others made.
    /// The default does nothing.
    ///
    /// - Throws: the error that makes the write fail (no write is then open, no lock held).
    func willBeginWrite(_ store: Store) throws(LiveObjectsError)
    /// Applies the commits other processes made, if any (cheap when there are none): called
    /// before a read and when the storage tells the realm that it changed. Errors are kept for
    /// the next write. The default does nothing.
    func catchUp(_ store: Store)
}

extension StorageBackend {
    package func attach(_ realm: Realm) {}
    package func willBeginWrite(_ store: Store) throws(LiveObjectsError) {}
    package func catchUp(_ store: Store) {}
    package func prepareToOpen() async {}
}

/// The actor whose executor a realm runs on when it is not opened on another actor.
private actor RealmExecutor {}

extension Realm {
    /// Synchronous access to the realm from code isolated to the actor it was opened on
    /// (``open(_:on:)``): `realm.access { realm in … }` runs its closure with the realm at
    /// once, and what the closure returns (live objects, ``Results``, a `List`) stays in that
    /// actor's isolation, to be read there without `await`.
    ///
    /// ```swift
    /// @MainActor func names(in realm: Realm) -> [String] {
    ///     realm.access { $0.objects(Dog.self).map(\.name) }
    /// }
    /// ```
    ///
    /// Calling it anywhere else (off the realm's executor) stops the program: use
    /// ``read(_:)`` there.
    public nonisolated var access: RealmAccess { RealmAccess(realm: self) }
}

/// The synchronous access of ``Realm/access``: call it with a closure.
public struct RealmAccess: Sendable {
    let realm: Realm

    /// Runs `body` with the realm, synchronously, on the caller's actor, which must be the
    /// actor the realm was opened on.
    ///
    /// - Precondition: the caller runs on the realm's executor.
    ///
    /// `body` is `@Sendable` (what it captures is `Sendable`: a primary key, not a live
    /// object): a closure that takes an `isolated` parameter and captures other values is
    /// beyond what Swift 6.3's region checker can follow here.
    public func callAsFunction<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: @Sendable (isolated Realm) throws -> T
    ) rethrows -> T {
        realm.preconditionIsolated(
            "Realm.access called off the realm's executor: open the realm on this actor with Realm.open(_:on:)")
        // The caller runs on the realm's executor (checked above), so running `body` here is
        // running it in the realm's isolation; the cast only drops what the compiler cannot
        // see. What it returns is used on that same executor.
        typealias Unchecked = (Realm) throws -> T
        return try withoutActuallyEscaping(body) { body in
            try unsafeBitCast(body, to: Unchecked.self)(realm)
        }
    }
}

/// A weak reference to an open realm, for the registry of open identifiers.
private struct WeakRealm {
    weak var realm: Realm?
}
