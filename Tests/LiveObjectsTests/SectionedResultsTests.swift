import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@Suite struct SectionedResultsTests {
    /// The sections as ids: `[(age, [dog id])]`.
    typealias Sections = [(key: Int, ids: [Int])]

    static func sections(_ realm: isolated Realm, byFunction: Bool = false) -> Sections {
        sectioned(realm, byFunction: byFunction).map { ($0.key, $0.map(\.id)) }
    }

    /// The dogs by age (sections in age order), or by a function of the age (sections in the
    /// order of their first dog by name).
    static func sectioned(_ realm: isolated Realm, byFunction: Bool) -> SectionedResults<Int, Dog> {
        byFunction
            ? realm.objects(Dog.self).sectioned(by: { $0.age % 3 }, sortDescriptors: [SortField("name")])
            : realm.objects(Dog.self).sorted(by: \.name).sectioned(by: \.age)
    }

    static func describe(_ sections: Sections) -> String {
        sections.map { "\($0.key): \($0.ids)" }.joined(separator: "; ")
    }

    @Test func sectionsComeInKeyOrderWithTheEarlierSortWithinAndStayLive() async throws {
        let realm = try await openPets()
        let shown = try await realm.write { realm in
            for (id, name, age) in [(1, "Rex", 3), (2, "Ace", 5), (3, "Bo", 3), (4, "Cy", 1)] {
                _ = try realm.create(Dog.self, value: ["id": id, "name": name, "age": age])
            }
            let byAge = realm.objects(Dog.self).sorted(by: \.name).sectioned(by: \.age)
            let before = (byAge.allKeys, byAge.map { $0.map(\.name) }, byAge[3]?.count, byAge[7]?.count)
            // The same sectioned results after a change.
            realm.object(ofType: Dog.self, forPrimaryKey: 2)!.age = 3
            realm.object(ofType: Dog.self, forPrimaryKey: 4)!.age = 7
            let descending = realm.objects(Dog.self).sorted(by: \.name).sectioned(by: \.age, ascending: false)
            return (
                before, (byAge.allKeys, byAge.map { $0.map(\.name) }, byAge.first?.id),
                (descending.allKeys, descending.map { $0.map(\.name) })
            )
        }
        #expect(shown.0.0 == [1, 3, 5])
        #expect(shown.0.1 == [["Cy"], ["Bo", "Rex"], ["Ace"]])
        #expect(shown.0.2 == 2 && shown.0.3 == nil)
        #expect(shown.1.0 == [3, 7])
        #expect(shown.1.1 == [["Ace", "Bo", "Rex"], ["Cy"]])
        #expect(shown.1.2 == 3)
        #expect(shown.2.0 == [7, 3])
        #expect(shown.2.1 == [["Cy"], ["Ace", "Bo", "Rex"]])
    }

    @Test func aKeyPathThatIsNotPersistedOrNotSortedFirstIsRefused() async throws {
        let realm = try await openPets()
        try await realm.write { realm in _ = try realm.create(Dog.self, value: ["id": 1, "name": "Rex"]) }
        let notPersisted = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { realm in realm.objects(Dog.self).sectioned(by: \.kind).count }
        }
        #expect(notPersisted?.code == .invalidQuery, "\(String(describing: notPersisted))")
        let notFirst = await #expect(throws: LiveObjectsError.self) {
            try await realm.read { realm in
                realm.objects(Dog.self).sectioned(by: \.age, sortDescriptors: [SortField("name"), SortField("age")])
                    .count
            }
        }
        #expect(notFirst?.code == .invalidQuery, "\(String(describing: notFirst))")
        #expect(notFirst?.message.contains("'age' as the first sort field") == true, "\(String(describing: notFirst))")
        let keyFirst = try await realm.read { realm in
            realm.objects(Dog.self).sectioned(by: \.age, sortDescriptors: [SortField("age", ascending: false)]).allKeys
        }
        #expect(keyFirst == [0])
    }

    @Test func aComputedKeyPathSortsByThePropertyItReads() async throws {
        let realm = try await openPets()
        let sections = try await realm.write { realm in
            for (id, name) in [(1, "Bo"), (2, "Amy"), (3, "Ace"), (4, "Cy"), (5, "Ben")] {
                _ = try realm.create(Dog.self, value: ["id": id, "name": name])
            }
            return realm.objects(Dog.self).sectioned(by: \.initial, ascending: false).map { ($0.key, $0.map(\.name)) }
        }
        #expect(
            sections.map(\.0) == ["C", "B", "A"] && sections.map(\.1) == [["Cy"], ["Bo", "Ben"], ["Amy", "Ace"]])
    }

    @Test func aFunctionNamesTheSectionsLiveAndInTheirChanges() async throws {
        let realm = try await openPets()
        let initials = try await realm.write { realm in
            for (id, name) in [(1, "Bo"), (2, "Amy"), (3, "Cy"), (4, "Ace")] {
                _ = try realm.create(Dog.self, value: ["id": id, "name": name])
            }
            let byInitial = realm.objects(Dog.self).sectioned(sortDescriptors: [SortField("name")]) {
                String($0.name.prefix(1))
            }
            return (byInitial.allKeys, byInitial.map { $0.map(\.name) })
        }
        #expect(initials.0 == ["A", "B", "C"] && initials.1 == [["Ace", "Amy"], ["Bo"], ["Cy"]])

        let changes = try await realm.read { realm in
            realm.objects(Dog.self).sectioned(by: { String($0.name.prefix(1)) }, sortDescriptors: [SortField("name")])
                .changes()
        }
        var iterator = changes.makeAsyncIterator()
        let initial = try #require(await iterator.next())
        #expect(initial.sectionKeys == ["A", "B", "C"] && initial.sectionCounts == [2, 1, 1])
        // Bo becomes Abe: section B goes, and Abe comes first in A.
        try await realm.write { realm in realm.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "Abe" }
        let renamed = try #require(await iterator.next())
        #expect(renamed.sectionKeys == ["A", "C"] && renamed.sectionCounts == [3, 1], "\(renamed)")
        #expect(renamed.sectionsToDelete == [1] && renamed.sectionsToInsert.isEmpty, "\(renamed)")
        #expect(renamed.insertions == [IndexPath(indexes: [0, 0])] && renamed.deletions.isEmpty, "\(renamed)")
        // A new initial makes a new section; a change that keeps a row in place is a modification.
        try await realm.write { realm in
            _ = try realm.create(Dog.self, value: ["id": 5, "name": "Bea"])
            realm.object(ofType: Dog.self, forPrimaryKey: 3)!.age = 4
        }
        let added = try #require(await iterator.next())
        #expect(added.sectionKeys == ["A", "B", "C"] && added.sectionsToInsert == [1], "\(added)")
        #expect(added.modifications == [IndexPath(indexes: [2, 0])], "\(added)")
    }

    @Test func aModifiedRowThatStaysIsAModificationAndAKeyChangeMovesIt() async throws {
        let realm = try await openPets()
        try await realm.write { realm in
            _ = try realm.create(Person.self, value: ["id": 1, "name": "Ann"])
            for (id, name, age) in [(1, "Ace", 1), (2, "Bo", 1), (3, "Cy", 2)] {
                _ = try realm.create(Dog.self, value: ["id": id, "name": name, "age": age])
            }
        }
        let changes = try await realm.read { $0.objects(Dog.self).sorted(by: \.name).sectioned(by: \.age).changes() }
        var iterator = changes.makeAsyncIterator()
        let initial = try #require(await iterator.next())
        #expect(initial.isInitial && initial.sectionKeys == [1, 2] && initial.sectionCounts == [2, 1])

        try await realm.write { realm in
            realm.object(ofType: Dog.self, forPrimaryKey: 2)!.owner = realm.object(
                ofType: Person.self, forPrimaryKey: 1)
        }
        let modified = try #require(await iterator.next())
        #expect(modified.modifications == [IndexPath(indexes: [0, 1])], "\(modified)")
        #expect(modified.deletions.isEmpty && modified.insertions.isEmpty && modified.sectionsToInsert.isEmpty)

        // Bo moves to age 2 (after Cy? no: sorted by name, Bo comes first in its new section).
        try await realm.write { realm in realm.object(ofType: Dog.self, forPrimaryKey: 2)!.age = 2 }
        let moved = try #require(await iterator.next())
        #expect(moved.deletions == [IndexPath(indexes: [0, 1])], "\(moved)")
        #expect(moved.insertions == [IndexPath(indexes: [1, 0])], "\(moved)")
        #expect(moved.sectionCounts == [1, 2])

        // Every dog of age 1 goes: its section is deleted, its rows are not listed.
        try await realm.write { realm in realm.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 9 }
        let sectionMoved = try #require(await iterator.next())
        #expect(sectionMoved.sectionKeys == [2, 9], "\(sectionMoved)")
        #expect(sectionMoved.sectionsToDelete == [0] && sectionMoved.sectionsToInsert == [1], "\(sectionMoved)")
        #expect(sectionMoved.deletions.isEmpty && sectionMoved.insertions.isEmpty, "\(sectionMoved)")
    }

    /// Applies a change to the sections before it, as a table view does: rows and sections
    /// deleted by old indices, then sections and rows inserted by new indices (their contents
    /// read from the data source, here `now`).
    static func apply(_ change: SectionedResultsChange<Int>, to old: Sections, now: Sections) -> Sections {
        var sections = old
        for path in change.deletions.sorted(by: >) { sections[path[0]].ids.remove(at: path[1]) }
        for index in change.sectionsToDelete.sorted(by: >) { sections.remove(at: index) }
        for index in change.sectionsToInsert.sorted() where index <= sections.count && index < now.count {
            sections.insert(now[index], at: index)
        }
        for path in change.insertions.sorted() where path[0] < sections.count && path[0] < now.count {
            guard path[1] <= sections[path[0]].ids.count, path[1] < now[path[0]].ids.count else { continue }
            sections[path[0]].ids.insert(now[path[0]].ids[path[1]], at: path[1])
        }
        return sections
    }

    @Test(arguments: [false, true])
    func randomWritesGiveChangeSetsThatRebuildTheSections(byFunction: Bool) async throws {
        let seed = ProcessInfo.processInfo.environment["LIVEOBJECTS_SECTIONS_SEED"].flatMap(UInt64.init) ?? 20_261_128
        var random = SeededRandomNumberGenerator(seed: seed)
        let realm = try await openPets()
        let changes = try await realm.read { Self.sectioned($0, byFunction: byFunction).changes() }
        var iterator = changes.makeAsyncIterator()
        _ = try #require(await iterator.next())
        var shown: Sections = []
        var log: [String] = []
        var nextID = 1
        for step in 0..<150 {
            // Every write creates a dog, so that each one yields exactly one change.
            var operations: [(kind: Int, id: Int, value: Int)] = [(0, 0, Int.random(in: 0..<5, using: &random))]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                operations.append(
                    (
                        Int.random(in: 0..<4, using: &random), Int.random(in: 0..<nextID, using: &random),
                        Int.random(in: 0..<5, using: &random)
                    ))
            }
            let first = nextID
            let batch = operations
            nextID += operations.count
            log.append("\(step): \(operations)")
            try await realm.write { realm in
                for (offset, operation) in batch.enumerated() {
                    let dog = realm.object(ofType: Dog.self, forPrimaryKey: operation.id)
                    switch operation.kind {
                    case 0:
                        _ = try realm.create(
                            Dog.self,
                            value: [
                                "id": first + offset, "name": "d\(operation.value * 7 % 10)\(first + offset)",
                                "age": operation.value,
                            ])
                    case 1: if let dog { try realm.delete(dog) }
                    case 2: dog?.age = operation.value
                    default: dog?.name = "d\(operation.value)\(operation.id)"
                    }
                }
            }
            let now = try await realm.read { Self.sections($0, byFunction: byFunction) }
            let change = try #require(await iterator.next())
            let rebuilt = Self.apply(change, to: shown, now: now)
            let same = rebuilt.map(\.key) == now.map(\.key) && rebuilt.map(\.ids) == now.map(\.ids)
            #expect(
                same && change.sectionKeys == now.map(\.key) && change.sectionCounts == now.map(\.ids.count),
                """
                seed \(seed) (LIVEOBJECTS_SECTIONS_SEED), by function: \(byFunction), step \(step): \(change)
                before:  \(Self.describe(shown))
                rebuilt: \(Self.describe(rebuilt))
                now:     \(Self.describe(now))
                operations:
                \(log.joined(separator: "\n"))
                """)
            if !same { return }
            shown = now
        }
    }
}

extension Dog {
    /// Not persisted: computed from the name.
    fileprivate var initial: String { String(name.prefix(1)) }
    /// Not persisted, and reads no persisted property.
    fileprivate var kind: String { "dog" }
}
