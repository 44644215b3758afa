import LiveObjects

// The checks of the notification scenario: every element a subscription produced against what
// the reference model expected after each write.

/// Checks what subscriptions produced against the reference; every check returns the problems
/// it found, one line each (empty when all is well).
package enum NotificationChecker {
    static func checkSubscription(
        _ sub: ActiveSub, _ elements: [SubElement], _ outcomes: [NotificationWriteOutcome], schema: Schema
    )
        -> [String]
    {
        var failures: [String] = []
        var remaining = elements[...]
        var previousVersion: UInt64?
        for element in elements {
            if let v = element.version {
                if let p = previousVersion, v <= p { failures.append("versions do not increase: \(p) then \(v)") }
                previousVersion = v
            }
        }
        // The initial element.
        let startState: SubExpectation?
        let startVersion: UInt64
        if let initial = sub.initial {
            startState = initial
            startVersion = sub.initialVersion
        } else {
            startState = outcomes.first { $0.index == sub.firstWrite - 1 }?.expectations[sub.id]
            startVersion = sub.initialVersion
        }
        guard let startState else { return ["no start state"] }
        switch sub.spec.kind {
        case .realm:
            break
        default:
            guard let first = remaining.popFirst() else { return ["no initial element"] }
            failures += checkInitial(first, startState, startVersion)
        }
        var state = startState
        for outcome in outcomes where outcome.index >= sub.firstWrite {
            guard let expected = outcome.expectations[sub.id] else { continue }
            defer { state = expected }
            switch (state, expected) {
            case (.collection(let oldKeys, _, _), .collection(let newKeys, let modified, let values)):
                failures += checkCollectionWrite(
                    sub, outcome, old: oldKeys, new: newKeys, modified: modified, values: values, &remaining)
            case (.object(let oldValues), .object(let newValues)):
                guard oldValues != nil else { continue }  // already deleted
                failures += checkObjectWrite(sub, outcome, newValues: newValues, &remaining, schema: schema)
            case (.realm, .realm):
                failures += checkRealmWrite(sub, outcome, &remaining, schema: schema)
            default:
                failures.append("write #\(outcome.index): mismatched expectation kinds")
            }
        }
        if !remaining.isEmpty {
            failures.append("extra elements: \(remaining.map { $0.version.map { "v\($0)" } ?? "deleted" })")
        }
        return failures
    }

    /// Checks the element a collection subscription produced for one write, if any, taking it
    /// from `remaining`.
    static func checkCollectionWrite(
        _ sub: ActiveSub, _ outcome: NotificationWriteOutcome, old oldKeys: [ObjectKey], new newKeys: [ObjectKey],
        modified: Set<ObjectKey>, values: [ObjectKey: [String: PropertyValue]],
        _ remaining: inout ArraySlice<SubElement>
    ) -> [String] {
        var failures: [String] = []
        let silenced = outcome.silenced.contains(sub.id)
        let changed = oldKeys != newKeys || newKeys.contains { modified.contains($0) }
        if !outcome.committed && oldKeys != newKeys {
            failures.append("keys changed in \(outcome.index) without a commit: \(oldKeys) -> \(newKeys)")
        }
        let arrives = outcome.committed && !silenced && changed
        let next = remaining.first
        if case .collection(let c)? = next, c.version == outcome.versionAfter, outcome.committed {
            remaining.removeFirst()
            if !arrives {
                failures.append(
                    "write #\(outcome.index): unexpected element \(describe(c)) (keys unchanged: \(oldKeys == newKeys), modified: \(modified))"
                )
                return failures
            }
            failures += checkCollectionChange(
                c, old: oldKeys, new: newKeys, modified: modified, values: values,
                unique: sub.spec.hasUniqueKeys
            )
            .map {
                "write #\(outcome.index): \($0) in \(describe(c)); old \(oldKeys) new \(newKeys) modified \(modified)"
            }
        } else if arrives {
            failures.append(
                "write #\(outcome.index): missing element (old \(oldKeys) new \(newKeys) modified \(modified))")
        }
        return failures
    }

    /// Checks the element an object subscription produced for one write, if any, taking it from
    /// `remaining` (all of it after the object's deletion).
    static func checkObjectWrite(
        _ sub: ActiveSub, _ outcome: NotificationWriteOutcome, newValues: [String: PropertyValue]?,
        _ remaining: inout ArraySlice<SubElement>, schema: Schema
    ) -> [String] {
        var failures: [String] = []
        let silenced = outcome.silenced.contains(sub.id)
        let ref: ObjRef
        guard case .object(let type, let key) = sub.spec.kind else { return failures }
        ref = ObjRef(type: type, key: key)
        let next = remaining.first
        if outcome.record.deleted.contains(ref) && outcome.committed {
            if !silenced {
                if case .object(.deleted)? = next {
                    remaining.removeFirst()
                } else {
                    failures.append(
                        "write #\(outcome.index): expected .deleted, got \(String(describing: next))")
                }
            }
            if let extra = remaining.first {
                failures.append("elements after deletion: \(extra)")
                remaining.removeAll()
            }
            return failures
        }
        guard let newValues else { return failures }
        let schemaOrder = schema[type]!.properties.map(\.name)
        var names = Set(outcome.record.effectiveTouches.filter { $0.object == ref }.map(\.property))
        if let paths = sub.spec.keyPaths { names.formIntersection(paths) }
        let arrives = outcome.committed && !silenced && !names.isEmpty
        if case .object(.changed(let version, let values, let changes))? = next,
            version == outcome.versionAfter,
            outcome.committed
        {
            remaining.removeFirst()
            guard arrives else {
                failures.append("write #\(outcome.index): unexpected object change \(changes)")
                return failures
            }
            let expectedNames = schemaOrder.filter { names.contains($0) }
            if changes.map(\.name) != expectedNames {
                failures.append(
                    "write #\(outcome.index): changed properties \(changes.map(\.name)), expected \(expectedNames)"
                )
            }
            let valuesBefore = outcome.valuesBefore[sub.id] ?? [:]
            for change in changes {
                if change.oldValue != valuesBefore[change.name] {
                    failures.append(
                        "write #\(outcome.index): old value of \(change.name) is \(change.oldValue), expected \(String(describing: valuesBefore[change.name]))"
                    )
                }
                if change.newValue != newValues[change.name] {
                    failures.append(
                        "write #\(outcome.index): new value of \(change.name) is \(change.newValue), expected \(String(describing: newValues[change.name]))"
                    )
                }
            }
            if values != newValues {
                failures.append(
                    "write #\(outcome.index): frozen object \(values) differs from the live one \(newValues)")
            }
        } else if arrives {
            failures.append(
                "write #\(outcome.index): missing object change for \(names.sorted()), next is \(String(describing: next))"
            )
        }
        return failures
    }

    /// Checks the change set a realm subscription produced for one write, if any, taking it from
    /// `remaining`.
    static func checkRealmWrite(
        _ sub: ActiveSub, _ outcome: NotificationWriteOutcome, _ remaining: inout ArraySlice<SubElement>,
        schema: Schema
    ) -> [String] {
        var failures: [String] = []
        let silenced = outcome.silenced.contains(sub.id)
        let arrives = outcome.committed && !silenced
        if case .realm(let changes)? = remaining.first, changes.version == outcome.versionAfter,
            outcome.committed
        {
            remaining.removeFirst()
            if !arrives {
                failures.append("write #\(outcome.index): unexpected changeset")
                return failures
            }
            failures += checkChangeSet(changes, outcome.record, schema: schema).map {
                "write #\(outcome.index): \($0)"
            }
        } else if arrives {
            failures.append("write #\(outcome.index): missing changeset")
        }
        return failures
    }

    static func describe(_ c: CollectionObservation) -> String {
        "v\(c.version) del \(c.deletions) ins \(c.insertions) mod \(c.modifications)/\(c.modificationsInNewIndices) moves \(c.moves.map { "\($0.from)->\($0.to)" }) keys \(c.keys)"
    }

    static func checkInitial(_ element: SubElement, _ state: SubExpectation, _ version: UInt64) -> [String] {
        switch (element, state) {
        case (.collection(let c), .collection(let keys, _, let values)):
            var failures: [String] = []
            if !c.isInitial { failures.append("first element is not initial") }
            if c.version != version || c.snapshotVersion != version {
                failures.append("initial version \(c.version)/\(c.snapshotVersion), expected \(version)")
            }
            if c.keys != keys { failures.append("initial keys \(c.keys), expected \(keys)") }
            if !(c.deletions.isEmpty && c.insertions.isEmpty && c.modifications.isEmpty && c.moves.isEmpty) {
                failures.append("initial element has changes")
            }
            for (i, value) in c.values where value != values[c.keys[i]] {
                failures.append(
                    "initial snapshot object \(c.keys[i]) is \(value), expected \(String(describing: values[c.keys[i]]))"
                )
            }
            return failures
        case (.object(.initial(let v, let values)), .object(let expected?)):
            var failures: [String] = []
            if v != version { failures.append("initial object version \(v), expected \(version)") }
            if values != expected { failures.append("initial object \(values), expected \(expected)") }
            return failures
        case (.object(.deleted), .object(nil)):
            return []
        default:
            return ["unexpected initial element \(element) for \(state)"]
        }
    }

    static func isStrictlyAscending(_ indices: [Int]) -> Bool {
        zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }
    }

    /// Checks one collection change against the keys before and after and the modified objects.
    package static func checkCollectionChange(
        _ c: CollectionObservation, old: [ObjectKey], new: [ObjectKey], modified: Set<ObjectKey>,
        values: [ObjectKey: [String: PropertyValue]], unique: Bool
    ) -> [String] {
        var failures: [String] = []
        if c.isInitial { failures.append("isInitial on a change") }
        if c.snapshotVersion != c.version { failures.append("snapshot version \(c.snapshotVersion)") }
        if c.keys != new { failures.append("snapshot keys differ from a fresh query") }
        if c.apply(old) != new { failures.append("applied(to:) gives \(c.apply(old))") }
        for (name, list) in [
            ("deletions", c.deletions), ("insertions", c.insertions), ("modifications", c.modifications),
            ("modificationsInNewIndices", c.modificationsInNewIndices), ("move destinations", c.moves.map(\.to)),
        ] {
            if name != "modificationsInNewIndices" && !isStrictlyAscending(list) {
                failures.append("\(name) not strictly ascending")
            }
        }
        if Set(c.modificationsInNewIndices).count != c.modificationsInNewIndices.count {
            failures.append("modificationsInNewIndices repeat")
        }
        let oldRange = 0..<old.count
        let newRange = 0..<new.count
        if !(c.deletions + c.modifications + c.moves.map(\.from)).allSatisfy(oldRange.contains) {
            failures.append("old index out of range")
        }
        if !(c.insertions + c.modificationsInNewIndices + c.moves.map(\.to)).allSatisfy(newRange.contains) {
            failures.append("new index out of range")
        }
        if c.modifications.count != c.modificationsInNewIndices.count {
            failures.append("modification lists differ in length")
        }
        guard failures.isEmpty else { return failures }
        let deleted = Set(c.deletions)
        let inserted = Set(c.insertions)
        let movedFrom = Set(c.moves.map(\.from))
        let movedTo = Set(c.moves.map(\.to))
        if !deleted.isDisjoint(with: movedFrom) || !inserted.isDisjoint(with: movedTo) {
            failures.append("a move is also a deletion or insertion")
        }
        if Set(c.moves.map(\.from)).count != c.moves.count { failures.append("move sources repeat") }
        for move in c.moves where old[move.from] != new[move.to] { failures.append("move \(move) changes the object") }
        for (o, n) in zip(c.modifications, c.modificationsInNewIndices) {
            if old[o] != new[n] { failures.append("modification \(o)->\(n) pairs different objects") }
            if deleted.contains(o) || inserted.contains(n) {
                failures.append("modification \(o)->\(n) is also deleted or inserted")
            }
            if !modified.contains(old[o]) {
                failures.append("\(old[o]) reported modified, but its observed properties did not change")
            }
        }
        let modifiedNew = Set(c.modificationsInNewIndices)
        for (j, key) in new.enumerated()
        where modified.contains(key) && !inserted.contains(j) && !modifiedNew.contains(j) {
            failures.append("\(key) at \(j) changed but is not reported")
        }
        if old == new && !(c.deletions.isEmpty && c.insertions.isEmpty && c.moves.isEmpty) {
            failures.append("keys are unchanged but the change has deletions, insertions or moves")
        }
        if unique {
            let oldSet = Set(old)
            let newSet = Set(new)
            for i in c.deletions where newSet.contains(old[i]) {
                failures.append("\(old[i]) deleted but still present")
            }
            for j in c.insertions where oldSet.contains(new[j]) {
                failures.append("\(new[j]) inserted but was present")
            }
            // A move must change the order of the moved object relative to another kept object.
            let kept = old.filter(newSet.contains)
            let newPosition = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($1, $0) })
            let oldPosition = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1, $0) })
            for move in c.moves {
                let key = old[move.from]
                let flipped = kept.contains { other in
                    other != key && (oldPosition[other]! < move.from) != (newPosition[other]! < move.to)
                }
                if !flipped {
                    failures.append(
                        "move \(move.from)->\(move.to) of \(key) does not change its order relative to any other object"
                    )
                }
            }
        }
        for (i, value) in c.values where value != values[c.keys[i]] {
            failures.append(
                "snapshot object \(c.keys[i]) is \(value), expected \(String(describing: values[c.keys[i]]))")
        }
        return failures
    }

    static func checkChangeSet(_ changes: ChangeSet, _ record: WriteRecord, schema: Schema) -> [String] {
        var failures: [String] = []
        for object in schema.objectSchemas {
            let type = object.name
            let table = changes.tables[type]
            let inserted = record.inserted.subtracting(record.deleted).filter { $0.type == type }.map(\.key).sorted()
            let deleted = Set(record.deleted.subtracting(record.inserted).filter { $0.type == type }.map(\.key))
            var modified: [ObjectKey: Set<Int>] = [:]
            for touch in record.effectiveTouches where touch.object.type == type {
                let p = object.properties.firstIndex { $0.name == touch.property }!
                if object.properties[p].isStored { modified[touch.object.key, default: []].insert(p) }
            }
            let insertions = Array(table?.insertions ?? [])
            let deletions = Set(table?.deletions.keys ?? [:].keys)
            let modifications = table?.modifications ?? [:]
            if insertions != inserted { failures.append("\(type) insertions \(insertions), expected \(inserted)") }
            if deletions != deleted {
                failures.append("\(type) deletions \(deletions.sorted()), expected \(deleted.sorted())")
            }
            if modifications != modified {
                failures.append("\(type) modifications \(modifications), expected \(modified)")
            }
        }
        return failures
    }
}
