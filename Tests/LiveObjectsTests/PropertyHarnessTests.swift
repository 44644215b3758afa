import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Tests of the property-based harness itself: that it is deterministic, that its checks fail
/// when the store is wrong, and that it shrinks and prints failures that replay.
@Suite struct PropertyHarnessTests {
    // MARK: Generation

    @Test func seededGeneratorIsFixed() {
        // Replaying a printed seed needs the same numbers on every platform and Swift version.
        var rng = SeededRandomNumberGenerator(seed: 0)
        #expect(
            [rng.next(), rng.next(), rng.next()] == [
                11_091_344_671_253_066_420, 13_793_997_310_169_335_082, 1_900_383_378_846_508_768,
            ])
        var other = SeededRandomNumberGenerator(seed: PropertyTestConfiguration.defaultSeed)
        #expect((0..<8).map { _ in other.below(10) } == [7, 5, 9, 9, 3, 6, 4, 6])
    }

    @Test func operationsDependOnlyOnTheSeed() {
        let a = OperationGenerator.operations(seed: 42, count: 200)
        #expect(a.count == 200)
        #expect(a == OperationGenerator.operations(seed: 42, count: 200))
        #expect(a != OperationGenerator.operations(seed: 43, count: 200))
        // A shorter run of a seed is a prefix of a longer one.
        #expect(Array(a.prefix(50)) == OperationGenerator.operations(seed: 42, count: 50))
    }

    @Test func generatedSequencesCoverEveryOutcome() async {
        let report = await PropertyHarness.runSequences(
            PropertyTestConfiguration(sequences: 10, operations: 200, seed: 7))
        #expect(report.failure == nil)
        #expect(report.operationsRun == 2000)
        let outcomes = Set(report.outcomes.keys)
        for expected in [
            "committed", "cancelled", "failed with the user error", "failed with duplicatePrimaryKey",
            "failed with deleteDenied", "failed with missingValue", "failed with indexOutOfBounds",
            "failed with embeddedObjectAlreadyOwned",
        ] {
            #expect(outcomes.contains(expected), "no write \(expected)")
        }
    }

    // MARK: Printing and replaying

    @Test func descriptionsAreSwiftSource() {
        let op = PropertyOperation.throwingWrite([
            .createNode(
                id: 1, tag: "a", score: 2, next: nil, friends: [1], note: NoteValue("x", ref: 1, [NoteValue("y")]),
                api: .typed),
            .editNote(node: 1, path: NotePath(.notes(0), [1]), text: "z", api: .dynamic),
            .createPart(id: "p1", label: nil, sub: "p1", api: .dynamic),
        ])
        #expect(
            op.description
                == #".throwingWrite([.createNode(id: 1, tag: "a", score: 2, next: nil, friends: [1], note: NoteValue("x", ref: 1, [NoteValue("y")]), api: .typed), .editNote(node: 1, path: NotePath(.notes(0), [1]), text: "z", api: .dynamic), .createPart(id: "p1", label: nil, sub: "p1", api: .dynamic)])"#
        )
        #expect([op].swiftSource == "[\n    \(op),  // 0\n]")
    }

    @Test func aPrintedListReplays() async {
        // Pasted from a printed operation list: a cascade that a deny link refuses, then allows.
        let ops: [PropertyOperation] = [
            .write([.createPart(id: "p0", label: "red", sub: nil, api: .typed)]),  // 0
            .write([.createNode(id: 1, tag: "a", score: 0, next: nil, friends: [], note: nil, api: .typed)]),  // 1
            .write([
                .createNode(
                    id: 2, tag: "b", score: 0, next: 1, friends: [1, 1], note: NoteValue("x", ref: 1), api: .dynamic)
            ]),  // 2
            .write([.appendPart(node: 1, part: "p0", api: .typed), .setPinned(node: 2, to: "p0", api: .dynamic)]),  // 3
            .write([.deleteNodes(ids: [1], api: .typed)]),  // 4: denied
            .write([.deleteNodes(ids: [1, 2], api: .typed)]),  // 5: allowed, both doomed
        ]
        #expect(await PropertyHarness.run(ops) == nil)
        var model = ReferenceModel()
        let outcomes = ops.map { model.apply($0) }
        #expect(outcomes[4] == .failed(.code(.deleteDenied)))
        #expect(outcomes[5] == .committed)
        #expect(model.nodes.isEmpty && model.parts.isEmpty)
    }

    // MARK: Checks that must fail

    /// A realm of the harness models after a few operations.
    private func populatedRealm() async throws -> Realm {
        let realm = try await openFreshRealm("harness", objectTypes: propertyTestModelTypes)
        let ops: [PropertyOperation] = [
            .write([.createPart(id: "p0", label: "red", sub: nil, api: .typed)]),
            .write([.createNode(id: 1, tag: "a", score: 3, next: nil, friends: [], note: NoteValue("x"), api: .typed)]),
            .write([.createNode(id: 2, tag: "b", score: 3, next: 1, friends: [1], note: nil, api: .typed)]),
            .write([.appendPart(node: 2, part: "p0", api: .typed)]),
        ]
        #expect(await PropertyHarness.run(ops, on: realm) == nil)
        return realm
    }

    private func violations(_ realm: isolated Realm, _ corrupt: (Store) -> Void) -> [String] {
        #expect(StoreInvariants.violations(in: realm.store).isEmpty)
        corrupt(realm.store)
        return StoreInvariants.violations(in: realm.store)
    }

    @Test func checkerFindsWrongBacklinks() async throws {
        let realm = try await populatedRealm()
        let found = await violations(realm) { store in
            let nodes = store.tablesByName["PropNode"]!
            let next = nodes.incoming.first {
                $0.source === nodes && $0.source.schema.properties[$0.property].name == "next"
            }!
            next.rows[Int(nodes.row(forPrimaryKey: .int(1))!)].removeAll()
        }
        #expect(found.contains { $0.contains("backlinks of PropNode[1] from PropNode.next") })
    }

    @Test func checkerFindsLinkToDeletedObject() async throws {
        let realm = try await populatedRealm()
        let found = await violations(realm) { store in
            let nodes = store.tablesByName["PropNode"]!
            let next = nodes.columns[nodes.propertyIndex["next"]!] as! LinkColumn
            next.targets[Int(nodes.row(forPrimaryKey: .int(2))!)] = 7
        }
        #expect(found.contains { $0.contains("PropNode.next of PropNode[2] links to deleted PropNode#7") })
    }

    @Test func checkerFindsPrimaryKeyIndexDisagreeing() async throws {
        let realm = try await populatedRealm()
        let found = await violations(realm) { store in
            let nodes = store.tablesByName["PropNode"]!
            let ids = nodes.columns[nodes.primaryKeyProperty!] as! ScalarColumn<Int64>
            ids.values[Int(nodes.row(forPrimaryKey: .int(2))!)] = 1
        }
        #expect(found.contains { $0.contains("both have primary key 1") })
        #expect(found.contains { $0.contains("the primary-key index maps 2 to slot") })
    }

    @Test func checkerFindsSecondaryIndexDisagreeing() async throws {
        let realm = try await populatedRealm()
        let found = await violations(realm) { store in
            let nodes = store.tablesByName["PropNode"]!
            nodes.valueIndexes[nodes.propertyIndex["score"]!]!.rows[.int(3)]!.removeLast()
        }
        #expect(found.contains { $0.contains("PropNode.score: the index maps 3 to slots") })
    }

    @Test func checkerFindsSecondaryIndexOutOfOrder() async throws {
        let realm = try await populatedRealm()
        let found = await violations(realm) { store in
            let nodes = store.tablesByName["PropNode"]!
            let index = nodes.valueIndexes[nodes.propertyIndex["score"]!]!
            let value = index.rows.first { $0.value.count >= 2 }!.key
            index.rows[value]!.reverse()
        }
        #expect(found.contains { $0.contains("PropNode.score: the index's slots for") && $0.contains("not ascending") })
    }

    @Test func checkerFindsEmbeddedObjectWithTwoParents() async throws {
        let realm = try await populatedRealm()
        let found = await violations(realm) { store in
            let nodes = store.tablesByName["PropNode"]!
            let note = nodes.columns[nodes.propertyIndex["note"]!] as! LinkColumn
            let one = Int(nodes.row(forPrimaryKey: .int(1))!)
            let two = nodes.row(forPrimaryKey: .int(2))!
            note.targets[Int(two)] = note.targets[one]
            nodes.outgoing[nodes.propertyIndex["note"]!]!.rows[Int(note.targets[one])].append(two)
        }
        #expect(found.contains { $0.contains("embedded PropNote#0 has 2 parents") })
    }

    @Test func snapshotSeesEveryChange() async throws {
        let realm = try await populatedRealm()
        let changed = await snapshotDifferences(realm, .write([.updateNode(id: 1, tag: "c", score: nil, api: .typed)]))
        #expect(changed.contains { $0.hasPrefix("version") })
        #expect(changed.contains { $0.hasPrefix("PropNode column 1") })
        #expect(changed.contains { $0.hasPrefix("PropNode: secondary indexes") })
        let unchanged = await snapshotDifferences(realm, .throwingWrite([.deleteNodes(ids: [1, 2], api: .typed)]))
        #expect(unchanged.isEmpty)
    }

    private func snapshotDifferences(_ realm: isolated Realm, _ operation: PropertyOperation) -> [String] {
        let before = StoreSnapshot(realm.store)
        _ = RealmDriver.perform(operation, on: realm)
        return before.differences(from: StoreSnapshot(realm.store))
    }

    @Test func comparisonFindsWhatTheModelDoesNotHave() async throws {
        // The harness starts from an empty model: a realm that already holds objects fails the
        // comparison at the first operation.
        let realm = try await populatedRealm()
        let failure = await PropertyHarness.run([.write([.setLabel(part: "p0", label: nil, api: .typed)])], on: realm)
        #expect(failure?.index == 0)
        #expect(failure?.findings.contains { $0.hasPrefix("node[1]: expected absent") } == true)
    }

    @Test func comparisonSeesSetsMapsAndMixedValues() async throws {
        // Both readers compare the sets, the map and the mixed value: a change the model did not
        // make is found through the typed and the dynamic API alike.
        let built: [PropertyOperation] = [
            .write([
                .createNode(id: 1, tag: "a", score: 0, next: nil, friends: [], note: nil, api: .typed),
                .createNode(id: 2, tag: "b", score: 0, next: nil, friends: [], note: nil, api: .dynamic),
                .insertLabel(node: 1, label: "red", api: .typed), .insertAlly(node: 2, ally: 1, api: .dynamic),
                .setAttr(node: 1, key: "a", value: nil, api: .dynamic), .setPayload(node: 1, payload: 1, api: .typed),
            ])
        ]
        let behindTheModel: [(Step, String)] = [
            (.insertLabel(node: 1, label: "blue", api: .typed), "node[1]"),
            (.removeAttr(node: 1, key: "a", api: .typed), "node[1]"),
            (.setAttr(node: 1, key: "a", value: 0, api: .typed), "node[1]"),
            (.setPayload(node: 1, payload: "1", api: .typed), "node[1]"),
            (.setPayload(node: 1, payload: .decimal(2), api: .typed), "node[1]"),
            (.insertAlly(node: 1, ally: 1, api: .typed), "PropNode.admirers[1]"),
            (.setMate(node: 1, key: "m", to: 2, api: .typed), "PropNode.matedBy[2]"),
            (.setMate(node: 1, key: "m", to: nil, api: .typed), "node[1]"),
        ]
        for (step, expected) in behindTheModel {
            let realm = try await openFreshRealm("harness", objectTypes: propertyTestModelTypes)
            var model = ReferenceModel()
            for op in built { #expect(model.apply(op) == .committed) }
            #expect(await PropertyHarness.run(built, on: realm) == nil)
            #expect(await RealmDriver.perform(.write([step]), on: realm) == .committed)
            for api in [API.typed, .dynamic] {
                let differences = model.view.differences(from: await RealmDriver.observe(realm, through: api).view)
                #expect(differences.contains { $0.hasPrefix(expected) }, "\(step) through \(api): \(differences)")
            }
        }
    }

    @Test func rolledBackCollectionEditsLeaveTheStoreAsItWas() async throws {
        let realm = try await populatedRealm()
        let edits: [Step] = [
            .insertLabel(node: 1, label: "red", api: .typed), .insertAlly(node: 1, ally: 2, api: .dynamic),
            .setAttr(node: 2, key: "k", value: 3, api: .typed), .setPayload(node: 1, payload: 2.5, api: .dynamic),
        ]
        #expect(await snapshotDifferences(realm, .throwingWrite(edits)).isEmpty)
        let committed = await snapshotDifferences(realm, .write(edits))
        #expect(committed.contains { $0.hasPrefix("PropNode: backlinks") })
        #expect(committed.filter { $0.hasPrefix("PropNode column") }.count == 4)
    }

    // MARK: Shrinking

    @Test func shrinkerKeepsOnlyWhatTheFailureNeeds() async {
        // A failure that needs node 3 created and later deleted through the dynamic API.
        let ops =
            OperationGenerator.operations(seed: 5, count: 150)
            + [
                .write([
                    .createNode(
                        id: 3, tag: "d", score: 1, next: 2, friends: [1, 2], note: NoteValue("x", ref: 1), api: .typed)
                ]),
                .manualWrite([
                    .updateNode(id: 4, tag: nil, score: 2, api: .typed), .deleteNodes(ids: [3, 4], api: .dynamic),
                ]),
            ] + OperationGenerator.operations(seed: 6, count: 50)
        func fails(_ candidate: [PropertyOperation]) -> PropertyFailure? {
            var created = false
            for (i, op) in candidate.enumerated() {
                for step in op.steps {
                    if case .createNode(3, _, _, _, _, _, _) = step { created = true }
                    if case .deleteNodes(let ids, .dynamic) = step, created, ids.contains(3) {
                        return PropertyFailure(index: i, operation: op, findings: ["synthetic"])
                    }
                }
            }
            return nil
        }
        let failure = fails(ops)!
        let shrunk = await PropertyHarness.shrink(ops, failure: failure) { fails($0) }
        #expect(shrunk.failure.findings == ["synthetic"])
        #expect(shrunk.operations.count == 2)
        #expect(shrunk.operations.last == .write([.deleteNodes(ids: [3], api: .dynamic)]))
        // The create lost the links and the note the failure does not need.
        guard case .write(let steps) = shrunk.operations.first, steps.count == 1,
            case let .createNode(id, _, _, next, friends, note, _) = steps[0]
        else {
            Issue.record("expected a single create first: \(shrunk.operations)")
            return
        }
        #expect(id == 3 && next == nil && friends.isEmpty && note == nil)
    }

    @Test func failuresNameTheSeedAndAReplayCommand() {
        let configuration = PropertyTestConfiguration(sequences: 200, operations: 200, seed: 10)
        let failure = PropertyFailure(index: 0, operation: .write([.nestedWrite]), findings: ["synthetic"])
        let report = SequenceFailure(
            seed: 12, configuration: configuration, original: failure, originalCount: 200,
            shrunk: [.write([.nestedWrite])], failure: failure)
        #expect(report.description.contains("seed 12"))
        #expect(
            report.description.contains(
                "LIVEOBJECTS_PROPERTY_SEED=12 LIVEOBJECTS_PROPERTY_SEQUENCES=1 LIVEOBJECTS_PROPERTY_OPS=200 swift test --filter LiveObjectsTests.PropertyTests"
            ))
        #expect(report.description.contains(".write([.nestedWrite]),  // 0"))
    }

    @Test func configurationComesFromTheEnvironment() {
        let defaults = PropertyTestConfiguration.fromEnvironment([:])
        #expect(
            defaults
                == PropertyTestConfiguration(
                    sequences: 60, operations: 200, seed: PropertyTestConfiguration.defaultSeed))
        #expect(PropertyTestConfiguration.fromEnvironment(["LIVEOBJECTS_TESTS": "long"]).sequences == 200)
        let set = PropertyTestConfiguration.fromEnvironment([
            "LIVEOBJECTS_PROPERTY_SEQUENCES": "5000", "LIVEOBJECTS_PROPERTY_OPS": "50",
            "LIVEOBJECTS_PROPERTY_SEED": "0x1F",
        ])
        #expect(set == PropertyTestConfiguration(sequences: 5000, operations: 50, seed: 31))
        #expect(PropertyTestConfiguration.fromEnvironment(["LIVEOBJECTS_PROPERTY_SEED": "12"]).seed == 12)
    }
}
