import LiveObjectsStore

/// The one error a ``Repository`` throws: what kind of operation failed, with the error that
/// caused it.
///
/// ```swift
/// do {
///     try await teams.save(team, update: .error)
/// } catch .insertFailed(let type, let underlying) {
///     print("could not save a \(type): \(underlying)")
/// } catch {
///     print(error)
/// }
/// ```
public enum RepositoryError: Error, CustomStringConvertible {
    /// The storage could not be opened (the underlying error is usually a ``LiveObjectsError``
    /// such as `schemaMismatch`, `invalidSchema` or a file error).
    case openFailed(underlying: any Error)
    /// Saving objects failed: a duplicate primary key under ``UpdatePolicy/error``, a value of
    /// the wrong type, malformed JSON, or an error thrown by the repository's conversion to the
    /// storage model. Nothing was saved.
    case insertFailed(objectType: String, underlying: any Error)
    /// Deleting failed, for example because a `deny` delete rule still links to the object.
    /// Nothing was deleted.
    case deleteFailed(objectType: String, underlying: any Error)
    /// A query could not run (a bad predicate, an unknown property or sort key), or the
    /// conversion of a found object to the caller's type threw.
    case searchFailed(objectType: String, underlying: any Error)
    /// Data that an object needs is missing: a primary key absent from a saved object or JSON,
    /// or a link to a primary key that does not exist. `property` names what is missing when
    /// known. Nothing was saved.
    case missingRequiredData(objectType: String, property: String?, underlying: (any Error)?)

    /// The object type involved, if any.
    public var objectType: String? {
        switch self {
        case .openFailed: nil
        case .insertFailed(let type, _), .deleteFailed(let type, _), .searchFailed(let type, _),
            .missingRequiredData(let type, _, _):
            type
        }
    }

    /// The error that caused this one, if any.
    public var underlying: (any Error)? {
        switch self {
        case .openFailed(let error), .insertFailed(_, let error), .deleteFailed(_, let error),
            .searchFailed(_, let error):
            error
        case .missingRequiredData(_, _, let error): error
        }
    }

    public var description: String {
        let cause = underlying.map { ": \($0)" } ?? ""
        switch self {
        case .openFailed: return "Repository error openFailed\(cause)"
        case .insertFailed(let type, _): return "Repository error insertFailed: \(type)\(cause)"
        case .deleteFailed(let type, _): return "Repository error deleteFailed: \(type)\(cause)"
        case .searchFailed(let type, _): return "Repository error searchFailed: \(type)\(cause)"
        case .missingRequiredData(let type, let property, _):
            return "Repository error missingRequiredData: \(type)\(property.map { ".\($0)" } ?? "")\(cause)"
        }
    }

    /// The kind of operation an error is reported for.
    enum Operation {
        case insert, delete, search
    }

    /// Wraps an error raised while performing an operation on objects of a type. A
    /// `RepositoryError` is kept as is; a ``LiveObjectsError/Code-swift.struct/missingValue``
    /// becomes ``missingRequiredData(objectType:property:underlying:)``.
    static func wrapping(_ error: any Error, _ operation: Operation, objectType: String) -> RepositoryError {
        if let error = error as? RepositoryError { return error }
        if let error = error as? LiveObjectsError, error.code == .missingValue {
            return .missingRequiredData(
                objectType: error.objectType ?? objectType, property: error.property, underlying: error)
        }
        switch operation {
        case .insert: return .insertFailed(objectType: objectType, underlying: error)
        case .delete: return .deleteFailed(objectType: objectType, underlying: error)
        case .search: return .searchFailed(objectType: objectType, underlying: error)
        }
    }
}
