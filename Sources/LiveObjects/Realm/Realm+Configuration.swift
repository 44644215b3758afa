import LiveObjectsStore

extension Realm {
    /// Where a realm keeps its data.
    ///
    /// ``inMemory`` is built in; the `Persistence` module adds file storage
    /// (`.file(...)`, JSON snapshots and a journal).
    public struct Storage: Sendable {
        /// The engine that loads and saves the store; nil for memory only.
        package let backend: (any StorageBackend)?

        /// Storage backed by an engine from another module.
        package init(backend: (any StorageBackend)?) {
            self.backend = backend
        }

        /// In memory only: the data lives while the realm is open. Opening the same identifier
        /// again while it is open gives the same data.
        public static var inMemory: Storage { Storage(backend: nil) }
    }

    /// Everything needed to open a realm.
    ///
    /// ```swift
    /// let pets = try await Realm.open(.init(identifier: "pets", objectTypes: [Dog.self, Person.self]))
    /// ```
    public struct Configuration: Sendable {
        /// The realm's name. Realms with different identifiers are fully independent; opening an
        /// identifier that is already open returns the open realm.
        public var identifier: String
        /// The model classes the realm holds. Every class a model links to must be listed.
        /// Empty for a realm opened with ``schema`` only (the dynamic API).
        public var objectTypes: [Object.Type]
        /// The schema, for realms opened without model classes. Ignored when ``objectTypes`` is
        /// not empty (the schema is then discovered from the classes).
        public var schema: Schema?
        /// The schema version. Default: 0.
        public var schemaVersion: UInt64
        /// Where the data lives. Default: ``Storage/inMemory``.
        public var storage: Storage
        /// Whether the realm records a change history (``Realm/changes(since:)``), kept in
        /// memory and, for a file realm, in the snapshot and journal. Off costs nothing.
        /// Default: `false`.
        public var keepsHistory = false
        /// The most subscriptions (`changes()` sequences not yet ended) the realm keeps at once.
        /// Subscribing past it gives a sequence that ends at once, and the enclosing
        /// ``Realm/read(_:)`` or ``Realm/write(_:)`` throws `limitExceeded` (``Realm/changes()``
        /// throws it itself). Default: ``Realm/Limits/defaultMaximumSubscriptions``.
        public var maximumSubscriptions: Int = Realm.Limits.defaultMaximumSubscriptions

        /// The most work one evaluation of a query may do, in units: each object tested, and
        /// each object or list element a key path, `SUBQUERY` or collection operator visits.
        ///
        /// A query past it stops: the enclosing ``Realm/read(_:)`` or ``Realm/write(_:)``
        /// throws `limitExceeded` naming the query and the budget (a `write` is rolled back),
        /// and the results read as empty meanwhile. A subscription whose re-evaluation after a
        /// commit goes past it ends its sequence. The same check stops an evaluation whose task
        /// is cancelled, with `cancelled`. Default: ``Realm/Limits/defaultMaximumQueryWork``.
        public var maximumQueryWork: Int = Realm.Limits.defaultMaximumQueryWork

        /// A configuration for model classes.
        public init(
            identifier: String, objectTypes: [Object.Type], schemaVersion: UInt64 = 0,
            storage: Storage = .inMemory
        ) {
            self.identifier = identifier
            self.objectTypes = objectTypes
            self.schema = nil
            self.schemaVersion = schemaVersion
            self.storage = storage
        }

        /// A configuration for a schema given as data (no model classes).
        public init(
            identifier: String, schema: Schema, schemaVersion: UInt64 = 0,
            storage: Storage = .inMemory
        ) {
            self.identifier = identifier
            self.objectTypes = []
            self.schema = schema
            self.schemaVersion = schemaVersion
            self.storage = storage
        }

        /// The schema this configuration describes.
        ///
        /// - Throws: `invalidSchema` naming the type and property at fault.
        public func resolvedSchema() throws(LiveObjectsError) -> Schema {
            if objectTypes.isEmpty {
                let schema = schema ?? Schema([])
                try schema.validate()
                return schema
            }
            var schemas: [ObjectSchema] = []
            for type in objectTypes { schemas.append(try ModelInfo.info(for: type).schema) }
            let schema = Schema(schemas)
            try schema.validate()
            return schema
        }
    }
}
