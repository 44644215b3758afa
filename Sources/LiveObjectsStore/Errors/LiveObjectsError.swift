/// The one error type that LiveObjects throws.
///
/// An error carries a ``Code`` you can switch on, a human-readable message, and, where relevant,
/// the object type, primary key, property and file involved. Its description reads like
/// `LiveObjects error duplicatePrimaryKey: Dog.id: an object with primary key 7 already exists`.
///
/// ```swift
/// do {
///     try await realm.write { try $0.create(Dog.self, value: ["id": 7]) }
/// } catch let error as LiveObjectsError where error.code == .duplicatePrimaryKey {
///     print("already there: \(error.primaryKey ?? .null)")
/// }
/// ```
public struct LiveObjectsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure happened. Extensible: new codes may be added in later versions.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The schema is not valid (unsupported property type, two primary keys, a bad
        /// `LinkingObjects` declaration, a link to a type the realm does not hold…).
        public static let invalidSchema = Code(rawValue: "invalidSchema")
        /// A realm with this identifier is already open with a different schema.
        public static let schemaMismatch = Code(rawValue: "schemaMismatch")
        /// The named object type is not part of the realm's schema.
        public static let unknownType = Code(rawValue: "unknownType")
        /// The named property does not exist on the object type.
        public static let unknownProperty = Code(rawValue: "unknownProperty")
        /// A value does not fit the property's type (wrong type, out of range, nil for a
        /// non-optional property).
        public static let typeMismatch = Code(rawValue: "typeMismatch")
        /// An object with the same primary key already exists.
        public static let duplicatePrimaryKey = Code(rawValue: "duplicatePrimaryKey")
        /// The primary key of an existing object cannot be changed.
        public static let primaryKeyChange = Code(rawValue: "primaryKeyChange")
        /// A value needed to create an object is missing (for example its primary key).
        public static let missingValue = Code(rawValue: "missingValue")
        /// A managed object, list or realm was modified outside a write transaction.
        public static let notInWriteTransaction = Code(rawValue: "notInWriteTransaction")
        /// A write was started while another write of the same realm was open.
        public static let alreadyInWriteTransaction = Code(rawValue: "alreadyInWriteTransaction")
        /// The object was deleted (or its write rolled back); its handle is no longer valid.
        public static let objectInvalidated = Code(rawValue: "objectInvalidated")
        /// The object belongs to another realm.
        public static let wrongRealm = Code(rawValue: "wrongRealm")
        /// A deletion was refused because a `deny` delete rule still links to the object.
        public static let deleteDenied = Code(rawValue: "deleteDenied")
        /// An embedded object would get a second parent.
        public static let embeddedObjectAlreadyOwned = Code(rawValue: "embeddedObjectAlreadyOwned")
        /// An index is outside the bounds of a list.
        public static let indexOutOfBounds = Code(rawValue: "indexOutOfBounds")
        /// The operation is not allowed on this kind of object or property.
        public static let invalidOperation = Code(rawValue: "invalidOperation")
        /// Reading or writing a file failed.
        public static let io = Code(rawValue: "io")
        /// A file is locked by another process that has it open for writing (a file realm
        /// opened twice).
        public static let fileLocked = Code(rawValue: "fileLocked")
        /// A change that needs a file to itself (a migration, deleting its data for a new
        /// schema) was asked for while other processes have the file open.
        public static let fileInUse = Code(rawValue: "fileInUse")
        /// A write, or a save, was asked of a realm opened read-only.
        public static let readOnly = Code(rawValue: "readOnly")
        /// A file or input is malformed.
        public static let corruptFile = Code(rawValue: "corruptFile")
        /// The schema version of a file is higher than the one asked for, or the schema changed
        /// without a new version.
        public static let schemaVersionMismatch = Code(rawValue: "schemaVersionMismatch")
        /// A query or predicate could not be parsed or evaluated.
        public static let invalidQuery = Code(rawValue: "invalidQuery")
        /// A documented limit (size, depth, count, the work of a query) was exceeded.
        public static let limitExceeded = Code(rawValue: "limitExceeded")
        /// The task running the operation (a query's evaluation) was cancelled.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The change history asked for is no longer kept (trimmed, or restarted by a
        /// migration), or the token is not one of this realm's.
        public static let historyTrimmed = Code(rawValue: "historyTrimmed")
    }

    /// What kind of failure happened.
    public var code: Code
    /// A sentence saying what went wrong.
    public var message: String
    /// The object type involved, if any.
    public var objectType: String?
    /// The property involved, if any.
    public var property: String?
    /// The primary key of the object involved, if any.
    public var primaryKey: PropertyValue?
    /// The file involved, if any.
    public var file: String?
    /// Where in a query's text the problem is, for errors about a query (``Code/invalidQuery``,
    /// or ``Code/limitExceeded`` from the query parser).
    package var queryLocation: QueryErrorLocation?
    /// Where in a parsed input the problem is, for the errors of the JSON reader and of loading
    /// a file (the byte the message names): for callers that show the position their own way
    /// (the shell's caret) and for tests.
    package var inputLocation: InputErrorLocation?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, objectType: String? = nil, property: String? = nil,
        primaryKey: PropertyValue? = nil, file: String? = nil
    ) {
        self.code = code
        self.message = message
        self.objectType = objectType
        self.property = property
        self.primaryKey = primaryKey
        self.file = file
    }

    public var description: String {
        var location = ""
        if let objectType {
            location = objectType
            if let property { location += ".\(property)" }
            if let primaryKey { location += "[\(primaryKey)]" }
        } else if let property {
            location = property
        }
        if let file { location = location.isEmpty ? file : "\(file): \(location)" }
        return location.isEmpty
            ? "LiveObjects error \(code): \(message)"
            : "LiveObjects error \(code): \(location): \(message)"
    }
}

/// The position of an error in a parsed input, apart from the message that also gives it.
package struct InputErrorLocation: Hashable, Sendable {
    /// The byte offset of the problem (in the file, when the input is a part of one): for an
    /// error about a value, the byte after it, as "(before byte N, …)" in the message.
    package var offset: Int
    /// For a syntax error, what was expected there, as the message says it (`"':' after an
    /// object key"`).
    package var expected: String?
    /// The message without the position.
    package var reason: String

    /// Creates a location.
    package init(offset: Int, expected: String? = nil, reason: String) {
        self.offset = offset
        self.expected = expected
        self.reason = reason
    }
}
