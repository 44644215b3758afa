import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Random writes of `AnyValue`s of every kind (through the model, the dynamic API, and writes
/// that are cancelled) against a dictionary: after every step the stored values, a random
/// query by value or by kind, and a subscription to sorted results must match the reference.
/// `LIVEOBJECTS_MIXED_SEED` (a number, or `random`) replays one run; a failure prints the seed
/// and the operations.
@Suite struct AnyValueRandomTests {
    @Test func randomWritesQueriesAndNotificationsMatchTheReference() async throws {
        let failure = try await SeededRun.run(
            "AnyValueRandomTests", variable: "LIVEOBJECTS_MIXED_SEED", seed: 0x4D1C_ED, steps: (80, 400)
        ) { steps, rng, log in try await Self.run(steps: steps, &rng, &log) ? "the values differ" : nil }
        #expect(failure == nil)
    }

    static func randomValue(_ rng: inout SeededRandomNumberGenerator) -> AnyValue {
        switch rng.int(0...11) {
        case 0: .null
        case 1: .bool(rng.chance(0.5))
        case 2: .int(rng.int(-3...5))
        case 3: .double(rng.chance(0.1) ? .nan : Double(rng.int(-12...20)) / 4)
        case 4: .float(Float(rng.int(-4...8)) / 2)
        case 5: .decimal(Decimal(rng.int(-3...5)) / 2)
        case 6: .string(rng.element(of: ["a", "b", "3", "", "ab"]))
        case 7: .date(Date(timeIntervalSinceReferenceDate: Double(rng.int(0...3))))
        case 8: .data(Data(rng.element(of: [[], [1], [1, 2], [0]])))
        case 9:
            .uuid(
                UUID(
                    uuidString: rng.element(of: [
                        "00000000-0000-0000-0000-000000000001", "F0000000-0000-0000-0000-000000000000",
                    ]))!)
        case 10: .objectID(ObjectID(hex: rng.element(of: ["000000000000000000000001", "ff0000000000000000000000"]))!)
        default: .int(1)
        }
    }

    // MARK: The reference, written from docs/QUERIES.md

    static func exact(_ v: AnyValue) -> Decimal? {
        switch v {
        case .int(let i): Decimal(i)
        case .double(let d): d.isFinite ? Decimal(string: "\(d)", locale: Locale(identifier: "en_US_POSIX")) : nil
        case .float(let f): f.isFinite ? Decimal(string: "\(f)", locale: Locale(identifier: "en_US_POSIX")) : nil
        case .decimal(let d): d.isNaN ? nil : d
        default: nil
        }
    }

    static func isNumber(_ v: AnyValue) -> Bool { ["int", "float", "double", "decimal"].contains(v.kindName) }

    /// Equal in a query: numbers by value across kinds (NaN equals nothing), others by kind and value.
    static func queryEqual(_ a: AnyValue, _ b: AnyValue) -> Bool {
        if isNumber(a) || isNumber(b) { return exact(a) != nil && exact(a) == exact(b) }
        return a == b
    }

    static func rank(_ v: AnyValue) -> Int {
        [
            "null": 0, "bool": 1, "int": 2, "float": 2, "double": 2, "decimal": 2, "string": 3, "data": 4, "date": 5,
            "objectId": 6, "uuid": 7,
        ][v.kindName]!
    }

    /// Whether `a` may come before `b` in an ascending sort.
    static func sortsBefore(_ a: AnyValue, _ b: AnyValue) -> Bool {
        if rank(a) != rank(b) { return rank(a) < rank(b) }
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return !x || y
        case (.string(let x), .string(let y)): return x <= y
        case (.data(let x), .data(let y)): return !y.lexicographicallyPrecedes(x)
        case (.date(let x), .date(let y)): return x <= y
        case (.objectID(let x), .objectID(let y)): return x.hexString <= y.hexString
        case (.uuid(let x), .uuid(let y)): return x.uuidString <= y.uuidString
        default:
            // Numbers: NaN first.
            guard let y = exact(b) else { return exact(a) == nil }
            guard let x = exact(a) else { return true }
            return x <= y
        }
    }

    /// The same number as another kind (an int as a double, a double as a decimal, ...), or
    /// the value itself.
    static func twin(of v: AnyValue) -> AnyValue {
        switch v {
        case .int(let i): .double(Double(i))
        case .double(let d) where d.isFinite: exact(v).map { .decimal($0) } ?? v
        case .float(let f): .double(Double(f))
        case .decimal(let d): Int(exactly: NSDecimalNumber(decimal: d).doubleValue).map { .int($0) } ?? v
        default: v
        }
    }

    static func same(_ a: AnyValue, _ b: AnyValue) -> Bool {
        if case .double(let x) = a, case .double(let y) = b, x.isNaN { return y.isNaN }
        return a == b
    }

    // MARK: The run

    struct Stop: Error {}

    /// Runs the steps; records issues, and returns whether any failed.
    static func run(steps: Int, _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]) async throws -> Bool {
        let realm = try await openFreshRealm(objectTypes: [Payload.self])
        var reference: [Int: AnyValue] = [:]
        var nextID = 0
        var failed = false
        // A sentinel object whose value every step changes, so that the subscription yields after
        // every step and its last element can be waited for without a timeout.
        let sentinel = 1_000_000
        try await realm.write { r in _ = try r.create(Payload.self, value: ["id": sentinel, "value": 1000]) }
        reference[sentinel] = .int(1000)
        let changes = try await realm.read { r in
            try r.objects(Payload.self).filter("value.@type != 'null'").sorted(byKeyPath: "value").changes()
        }
        var iterator = changes.makeAsyncIterator()
        _ = await iterator.next()
        for step in 1...steps {
            let value = randomValue(&rng)
            let ids = reference.keys.sorted().filter { $0 != sentinel }
            switch rng.int(0...9) {
            case 1...2 where !ids.isEmpty:
                let id = rng.element(of: ids)
                log.append("set \(id) = \(value)")
                try await realm.write { r in r.object(ofType: Payload.self, forPrimaryKey: id)!.value = value }
                reference[id] = value
            case 3 where !ids.isEmpty:
                let id = rng.element(of: ids)
                log.append("delete \(id)")
                try await realm.write { r in try r.delete(r.object(ofType: Payload.self, forPrimaryKey: id)!) }
                reference[id] = nil
            case 4 where !ids.isEmpty:
                let id = rng.element(of: ids)
                log.append("cancelled set \(id) = \(value)")
                do {
                    try await realm.write { r in
                        r.object(ofType: Payload.self, forPrimaryKey: id)!.value = value
                        throw Stop()
                    }
                } catch is Stop {}
            case 5 where !ids.isEmpty:
                let id = rng.element(of: ids)
                log.append("dynamic set \(id) = \(value)")
                try await realm.write { r in
                    try r.dynamicObject(ofType: "Payload", forPrimaryKey: .int(Int64(id)))!.set(
                        "value", to: value.propertyValue)
                }
                reference[id] = value
            default:
                let id = nextID
                log.append("create \(id) = \(value)")
                try await realm.write { r in _ = try r.create(Payload.self, value: ["id": id, "value": value]) }
                reference[id] = value
                nextID += 1
            }
            let marker = AnyValue.int(1000 + step)
            try await realm.write { r in r.object(ofType: Payload.self, forPrimaryKey: sentinel)!.value = marker }
            reference[sentinel] = marker
            var last: CollectionChange<Payload>?
            while let element = await iterator.next() {
                last = element
                if element.snapshot.contains(where: { $0.id == sentinel && $0[dynamicMember: \Payload.value] == marker }
                ) {
                    break
                }
            }
            failed = try await check(realm, reference, last, &rng, &log) || failed
            if failed { break }
        }
        return failed
    }

    /// Compares the realm with the reference; returns whether something differed.
    static func check(
        _ realm: Realm, _ reference: [Int: AnyValue], _ change: CollectionChange<Payload>?,
        _ rng: inout SeededRandomNumberGenerator, _ log: inout [String]
    ) async throws -> Bool {
        // Often a stored value, or the same number as another kind.
        var drawn = randomValue(&rng)
        if rng.chance(0.6), let id = reference.keys.sorted().randomElement(using: &rng) {
            drawn = twin(of: reference[id]!)
        }
        let constant = drawn
        let kind = rng.element(of: ["string", "numeric", "null", "date", "bool", "objectId", "data", "uuid"])
        let stored = try await realm.read { r in
            Dictionary(uniqueKeysWithValues: r.objects(Payload.self).map { ($0.id, $0.value) })
        }
        let byValue = try await realm.read { r in
            try r.objects(Payload.self).filter("value == $0", arguments: [constant.propertyValue]).map(\.id).sorted()
        }
        let byKind = try await realm.read { r in
            try r.objects(Payload.self).filter("value.@type == $0", arguments: [.string(kind)]).map(\.id).sorted()
        }
        // A frozen object's own `value(_:)` would hide the property: read it by key path.
        let shown = change?.snapshot.map { ($0.id, $0[dynamicMember: \Payload.value]) }
        var failed = false
        func fail(_ what: String) {
            Issue.record("\(what) after \(log.last ?? "")")
            failed = true
        }
        if stored.keys.sorted() != reference.keys.sorted()
            || !reference.allSatisfy({ id, v in stored[id].map { same($0, v) } ?? false })
        {
            fail("stored \(stored) != reference \(reference)")
        }
        let expectedByValue = reference.filter { queryEqual($0.value, constant) }.keys.sorted()
        if byValue != expectedByValue { fail("value == \(constant): \(byValue) != \(expectedByValue)") }
        let expectedByKind = reference.filter {
            kind == "numeric" ? isNumber($0.value) : $0.value.kindName == kind
        }.keys.sorted()
        if byKind != expectedByKind { fail("value.@type == '\(kind)': \(byKind) != \(expectedByKind)") }
        if shown == nil { fail("the subscription yielded nothing") }
        if let last = shown {
            let live = reference.filter { !$0.value.isNull }.keys.sorted()
            if last.map(\.0).sorted() != live { fail("subscription holds \(last.map(\.0)), not \(live)") }
            for (a, b) in zip(last, last.dropFirst()) where !sortsBefore(a.1, b.1) {
                fail("subscription sorts \(a.1) before \(b.1)")
            }
        }
        return failed
    }
}
