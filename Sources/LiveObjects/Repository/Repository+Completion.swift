import Foundation
import LiveObjectsStore

/// Completion-handler forms of the ``Repository`` operations, for callers without `async`.
///
/// Each starts the operation in a new task and calls `completion` exactly once, with the
/// operation's result or its ``RepositoryError``, from that task (not on the main thread: hop to
/// it yourself for UI work).
///
/// ```swift
/// teams.findAll { result in
///     switch result {
///     case .success(let teams): print(teams.count)
///     case .failure(.searchFailed(_, let underlying)): print("query failed: \(underlying)")
///     case .failure(let error): print(error)
///     }
/// }
/// ```
extension Repository {
    /// Runs any repository operation and reports its result to a completion handler.
    ///
    /// ```swift
    /// teams.perform({ (teams) throws(RepositoryError) in try await teams.count() }) { print($0) }
    /// ```
    public func perform<T>(
        _ operation: @escaping @Sendable (Self) async throws(RepositoryError) -> sending T,
        completion: @escaping @Sendable (sending Result<T, RepositoryError>) -> Void
    ) {
        Task {
            do throws(RepositoryError) {
                completion(.success(try await operation(self)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Saves an item; see ``save(_:update:)-(Self.Item,_)``.
    public func save(
        _ item: sending Item, update: UpdatePolicy = .modified,
        completion: @escaping @Sendable (Result<Void, RepositoryError>) -> Void
    ) {
        let transfer = Transfer(value: item)
        Task {
            do throws(RepositoryError) {
                try await save(transfer.take(), update: update)
                completion(.success(()))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Saves objects given as JSON; see ``save(json:update:dateDecodingStrategy:)``.
    public func save(
        json: Data, update: UpdatePolicy = .modified,
        completion: @escaping @Sendable (sending Result<[Item], RepositoryError>) -> Void
    ) {
        perform(
            { repository throws(RepositoryError) in try await repository.save(json: json, update: update) },
            completion: completion)
    }

    /// Finds the item with a primary key; see ``find(primaryKey:)``.
    public func find<Key: _PrimitivePersistable & Sendable>(
        primaryKey: Key, completion: @escaping @Sendable (sending Result<Item?, RepositoryError>) -> Void
    ) {
        perform(
            { repository throws(RepositoryError) in try await repository.find(primaryKey: primaryKey) },
            completion: completion)
    }

    /// Finds every item; see ``findAll(sortedBy:)``.
    public func findAll(
        sortedBy: [SortField] = [], completion: @escaping @Sendable (sending Result<[Item], RepositoryError>) -> Void
    ) {
        perform(
            { repository throws(RepositoryError) in try await repository.findAll(sortedBy: sortedBy) },
            completion: completion)
    }

    /// Finds the items matching a predicate; see ``find(where:_:sortedBy:)``.
    public func find(
        where predicate: String, arguments: [any Sendable] = [], sortedBy: [SortField] = [],
        completion: @escaping @Sendable (sending Result<[Item], RepositoryError>) -> Void
    ) {
        perform(
            { repository throws(RepositoryError) in
                try await repository.search(predicate: predicate, arguments: arguments, sortedBy: sortedBy)
            }, completion: completion)
    }

    /// Deletes the object with a primary key; see ``delete(primaryKey:)``.
    public func delete<Key: _PrimitivePersistable & Sendable>(
        primaryKey: Key, completion: @escaping @Sendable (Result<Bool, RepositoryError>) -> Void
    ) {
        perform(
            { repository throws(RepositoryError) in try await repository.delete(primaryKey: primaryKey) },
            completion: completion)
    }

    /// Deletes the objects matching a predicate; see ``delete(where:_:)-(String,_)``.
    public func delete(
        where predicate: String, arguments: [any Sendable] = [],
        completion: @escaping @Sendable (Result<Int, RepositoryError>) -> Void
    ) {
        perform(
            { repository throws(RepositoryError) in
                try await repository.deleteMatching(predicate: predicate, arguments: arguments)
            }, completion: completion)
    }
}

/// Moves a `sending` argument into the task that uses it.
///
/// @unchecked: the value was passed as `sending`, so nothing else references it; the one task
/// it is moved into takes it once.
private struct Transfer<T>: @unchecked Sendable {
    let value: T
    func take() -> sending T { value }
}
