import Dispatch
import GRDB
import LiveObjects

// The update_notify workload of each system: a subscription on "dogs with age > 10 sorted by
// name", then one-row updates, each its own transaction. The latency of an update runs from
// the end of its write (just before the commit) to the subscriber holding the new result.
//
// Every update moves a dog across the filter (`age = age > 10 ? 5 : 15`), so that every update
// changes the result: LiveObjects, rightly, notifies only when the result changes.
//
// A system that stops at its time budget then makes the updates it did not get to, untimed and
// unobserved, so that every store holds the same data for the workloads that follow (save and
// load compare what they read back).

extension LiveObjectsSystem {
    /// `Results.changes()`: an asynchronous sequence of `CollectionChange`s, each with a frozen
    /// snapshot of the new results. The subscriber is this task, awaiting the next change.
    func updateNotify(_ data: Dataset, budget: Duration) async throws -> Latencies {
        let realm = realm!
        let changes = try await realm.read { realm in
            try realm.objects(Dog.self).where { $0.age > 10 }.sorted(byKeyPath: "name").changes()
        }
        var iterator = changes.makeAsyncIterator()
        _ = await iterator.next()  // the initial state
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: budget)
        var result = Latencies()
        for id in data.notifyDogIds where clock.now < deadline {
            let committing = try await realm.write { realm in
                let dog = realm.object(ofType: Dog.self, forPrimaryKey: id)!
                dog.age = dog.age > 10 ? 5 : 15
                return ContinuousClock.now
            }
            guard let change = await iterator.next() else { break }
            let received = clock.now
            result.seconds.append(seconds(committing.duration(to: received)))
            result.resultCounts.append(change.snapshot.count)
        }
        let remaining = data.notifyDogIds.dropFirst(result.seconds.count)
        try await realm.write { realm in
            for id in remaining {
                let dog = realm.object(ofType: Dog.self, forPrimaryKey: id)!
                dog.age = dog.age > 10 ? 5 : 15
            }
        }
        return result
    }
}

extension GRDBSystem {
    /// `ValueObservation` of the sorted query, fetching `(id, name)` rows, started with
    /// `.async(onQueue:)` on a dedicated serial queue (`.immediate` differs only for the first
    /// value, and needs the main thread). Its `onChange` hands each value to this task.
    func updateNotify(_ data: Dataset, budget: Duration) async throws -> Latencies {
        let dbQueue = loadedQueue
        let (stream, continuation) = AsyncStream<(ContinuousClock.Instant, Int)>.makeStream()
        let observation = ValueObservation.tracking { db in
            try Row.fetchAll(db, sql: "SELECT id, name FROM dog WHERE age > 10 ORDER BY name")
                .map { row -> (id: Int, name: String) in (id: row[0], name: row[1]) }
        }
        let cancellable = observation.start(
            in: dbQueue, scheduling: .async(onQueue: DispatchQueue(label: "grdb-observer")),
            onError: { _ in continuation.finish() },
            onChange: { rows in continuation.yield((ContinuousClock.now, rows.count)) })
        defer { cancellable.cancel() }
        var iterator = stream.makeAsyncIterator()
        _ = await iterator.next()  // the initial value
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: budget)
        var result = Latencies()
        for id in data.notifyDogIds where clock.now < deadline {
            let committing = try updateAge(of: id, in: dbQueue)
            guard let (received, count) = await iterator.next() else { break }
            result.seconds.append(seconds(committing.duration(to: received)))
            result.resultCounts.append(count)
        }
        cancellable.cancel()
        try updateAges(of: Array(data.notifyDogIds.dropFirst(result.seconds.count)), in: dbQueue)
        return result
    }
}

/// The updates a pass did not get to, in one transaction (synchronous `write`).
private func updateAges(of ids: [Int], in dbQueue: DatabaseQueue) throws {
    try dbQueue.write { db in
        for id in ids { try db.execute(sql: updateAgeSQL, arguments: [id]) }
    }
}

private let updateAgeSQL = "UPDATE dog SET age = CASE WHEN age > 10 THEN 5 ELSE 15 END WHERE id = ?"

/// One update in its own transaction, through GRDB's synchronous `write`.
private func updateAge(of id: Int, in dbQueue: DatabaseQueue) throws -> ContinuousClock.Instant {
    try dbQueue.write { db in
        try db.execute(sql: updateAgeSQL, arguments: [id])
        return ContinuousClock.now
    }
}

extension RawSystem {
    /// Without a database: update the dictionary, recompute the filtered and sorted result,
    /// and call the subscriber's closure with it.
    func updateNotify(_ data: Dataset, budget: Duration) async throws -> Latencies {
        let clock = ContinuousClock()
        var received: (at: ContinuousClock.Instant, count: Int)?
        let subscriber: ([(id: Int, name: String)]) -> Void = { result in
            received = (clock.now, result.count)
        }
        func recompute(_ store: RawStore) -> [(id: Int, name: String)] {
            store.dogs.values.filter { $0.age > 10 }.sorted { $0.name < $1.name }.map { (id: $0.id, name: $0.name) }
        }
        subscriber(recompute(store!))
        let deadline = clock.now.advanced(by: budget)
        var result = Latencies()
        for id in data.notifyDogIds where clock.now < deadline {
            store!.dogs[id]!.age = store!.dogs[id]!.age > 10 ? 5 : 15
            let committing = clock.now
            subscriber(recompute(store!))
            result.seconds.append(seconds(committing.duration(to: received!.at)))
            result.resultCounts.append(received!.count)
        }
        for id in data.notifyDogIds.dropFirst(result.seconds.count) {
            store!.dogs[id]!.age = store!.dogs[id]!.age > 10 ? 5 : 15
        }
        return result
    }
}
