import LiveObjects

/// `live`: a subscription to a query's results, printing each change set while another task writes.
enum LiveWalkthrough: Walkthrough {
    static let name = "live"
    static let summary = "a subscription printing a query's change sets while another task writes"

    final class Dog: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var age = 0
    }

    /// A change set as the walkthrough expects it: index lists and the results after it.
    struct Expected: Equatable, Sendable, CustomStringConvertible {
        var insertions: [Int] = []
        var deletions: [Int] = []
        var modifications: [Int] = []
        var moves: [String] = []
        var results: [String]

        init(_ change: CollectionChange<Dog>) {
            insertions = change.insertions
            deletions = change.deletions
            modifications = change.modificationsInNewIndices
            moves = change.moves.map { "\($0.from)→\($0.to)" }
            results = change.snapshot.map { "\($0.name) (\($0.age))" }
        }

        init(
            insertions: [Int] = [], deletions: [Int] = [], modifications: [Int] = [], moves: [String] = [],
            results: [String]
        ) {
            self.insertions = insertions
            self.deletions = deletions
            self.modifications = modifications
            self.moves = moves
            self.results = results
        }

        /// The index changes, e.g. "deleted [1], inserted [0]".
        var changeSummary: String {
            var parts: [String] = []
            if !deletions.isEmpty { parts.append("deleted \(deletions)") }
            if !insertions.isEmpty { parts.append("inserted \(insertions)") }
            if !modifications.isEmpty { parts.append("modified \(modifications)") }
            if !moves.isEmpty { parts.append("moved \(moves.joined(separator: ", "))") }
            return parts.isEmpty ? "no index changes" : parts.joined(separator: ", ")
        }

        /// The results, e.g. "Bella (5), Rex (3)".
        var resultsSummary: String { results.isEmpty ? "(none)" : results.joined(separator: ", ") }

        var description: String { "\(changeSummary); results: \(resultsSummary)" }
    }

    /// One write of the writer task, and the change set the subscription should yield for it
    /// (nil when the write does not touch the results).
    struct Step: Sendable {
        var text: String
        var write: @Sendable (isolated Realm) throws -> Void
        var expected: Expected?
    }

    static let steps: [Step] = [
        Step(
            text: "Writer: add Rex (3), Bella (5) and Puppy (1).",
            write: { realm in
                _ = try realm.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 3])
                _ = try realm.create(Dog.self, value: ["id": 2, "name": "Bella", "age": 5])
                _ = try realm.create(Dog.self, value: ["id": 3, "name": "Puppy", "age": 1])
            },
            expected: Expected(insertions: [0, 1], results: ["Bella (5)", "Rex (3)"])),
        Step(
            text: "Writer: Puppy turns 2.",
            write: { realm in realm.object(ofType: Dog.self, forPrimaryKey: 3)?.age = 2 },
            expected: Expected(insertions: [1], results: ["Bella (5)", "Puppy (2)", "Rex (3)"])),
        Step(
            text: "Writer: Rex turns 4.",
            write: { realm in realm.object(ofType: Dog.self, forPrimaryKey: 1)?.age = 4 },
            expected: Expected(modifications: [2], results: ["Bella (5)", "Puppy (2)", "Rex (4)"])),
        Step(
            text: "Writer: rename Bella to Zelda.",
            write: { realm in realm.object(ofType: Dog.self, forPrimaryKey: 2)?.name = "Zelda" },
            expected: Expected(
                modifications: [2], moves: ["0→2"], results: ["Puppy (2)", "Rex (4)", "Zelda (5)"])),
        Step(
            text: "Writer: add Tiny (0). Too young for the query: no change set is expected.",
            write: { realm in _ = try realm.create(Dog.self, value: ["id": 4, "name": "Tiny", "age": 0]) },
            expected: nil),
        Step(
            text: "Writer: delete Rex.",
            write: { realm in
                if let rex = realm.object(ofType: Dog.self, forPrimaryKey: 1) { try realm.delete(rex) }
            },
            expected: Expected(deletions: [1], results: ["Puppy (2)", "Zelda (5)"])),
    ]

    static func run(_ narrator: Narrator) async throws {
        let realm = try await Realm.open(.init(identifier: "playground.live", objectTypes: [Dog.self]))

        narrator.step("Subscribe to the dogs aged 2 or more, sorted by name.")
        narrator.code(
            """
            let changes = try await realm.read { realm in
                realm.objects(Dog.self).where { $0.age >= 2 }.sorted(by: \\.name).changes()
            }
            for await change in changes {        // in the watcher task
                print(change.deletions, change.insertions, change.modificationsInNewIndices, change.moves)
            }
            """)
        let changes = try await realm.read { realm in
            realm.objects(Dog.self).where { $0.age >= 2 }.sorted(by: \.name).changes()
        }
        narrator.say(
            """
            A watcher task prints each change set; a writer task writes, and after each write that
            should reach the watcher it waits until the watcher has printed it, so this output is
            always the same. Indices: deletions in the old results, insertions and modifications in
            the new ones.
            """)

        let (printed, acknowledge) = AsyncStream<Void>.makeStream(bufferingPolicy: .unbounded)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await watch(changes, narrator, acknowledge: acknowledge) }
            group.addTask { try await write(realm, narrator, waitingFor: printed) }
            // The first error ends the group (waitForAll would wait for the other task first).
            while try await group.next() != nil {}
        }
        let version = await realm.version
        try narrator.expect(version, UInt64(steps.count), "the realm is at version \(steps.count), one per write")
    }

    /// The watcher: prints and checks the initial state and every change set, then stops.
    static func watch(
        _ changes: CollectionChanges<Dog>, _ narrator: Narrator, acknowledge: AsyncStream<Void>.Continuation
    ) async throws {
        // However the watcher ends, the writer stops waiting for it.
        defer { acknowledge.finish() }
        var expectations = steps.enumerated().compactMap { index, step in
            step.expected.map { (version: UInt64(index + 1), expected: $0) }
        }[...]
        var keys: [ObjectKey] = []
        var lastVersion: UInt64 = 0
        for await change in changes {
            if change.version > lastVersion + 1 && !change.isInitial {
                let skipped = (lastVersion + 1..<change.version).map(String.init).joined(separator: ", ")
                narrator.say("Watcher: nothing came for version \(skipped): that write did not touch the results.")
            }
            lastVersion = change.version
            if change.isInitial {
                narrator.say("Watcher: the first element is the current state, at version \(change.version):")
                narrator.say("  results: " + (change.snapshot.isEmpty ? "(none)" : "\(change.snapshot.count) dogs"))
                try narrator.check(change.snapshot.isEmpty, "the subscription starts with no dogs")
            } else {
                guard let (version, expected) = expectations.popFirst() else {
                    throw CheckFailure(
                        message: "no more change sets are expected (got one at version \(change.version))")
                }
                let actual = Expected(change)
                narrator.say("Watcher: change set at version \(change.version): \(actual.changeSummary)")
                narrator.say("  results: \(actual.resultsSummary)")
                try narrator.expect(change.version, version, "it is the change of version \(version)")
                try narrator.expect(actual, expected, "the change set is as expected")
                try narrator.check(
                    change.applied(to: keys) == change.snapshot.keys,
                    "applied to the previous results, it gives the new ones")
            }
            keys = change.snapshot.keys
            acknowledge.yield()
            if expectations.isEmpty { break }
        }
        try narrator.check(expectations.isEmpty, "every expected change set arrived")
    }

    /// The writer: runs the steps, waiting for the watcher after each one it should see.
    static func write(_ realm: Realm, _ narrator: Narrator, waitingFor printed: AsyncStream<Void>) async throws {
        var printed = printed.makeAsyncIterator()
        // The initial state is printed first.
        guard await printed.next() != nil else { return }
        for step in steps {
            narrator.step(step.text)
            try await realm.write { realm in try step.write(realm) }
            if step.expected != nil, await printed.next() == nil { return }
        }
    }
}
