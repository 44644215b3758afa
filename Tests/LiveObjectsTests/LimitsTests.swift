import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// The documented limits (docs/LIMITS.md): each is enforced with `limitExceeded`, changes
/// nothing, and the value at the limit itself is accepted.
@Suite struct LimitsTests {
    static let schema = Schema([
        ObjectSchema(
            name: "Blob",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "text", type: .string),
                Property(name: "bytes", type: .data),
                Property(name: "texts", type: .string, isList: true),
            ])
    ])

    func openBlobs(maximumSubscriptions: Int? = nil) async throws -> Realm {
        var configuration = Realm.Configuration(identifier: "limits-\(UUID())", schema: Self.schema)
        if let maximumSubscriptions { configuration.maximumSubscriptions = maximumSubscriptions }
        return try await Realm.open(configuration)
    }

    @Test func stringsUpToTheLimitAreStoredLongerOnesRefused() async throws {
        let realm = try await openBlobs()
        let limit = Realm.Limits.maximumStringLength
        let atLimit = String(repeating: "é", count: limit / 2)  // 2 UTF-8 bytes each
        try await realm.write { r in _ = try r.dynamicCreate("Blob", value: ["id": .int(1), "text": .string(atLimit)]) }
        let tooLong = atLimit + "x"
        for attempt in ["create", "set", "list element"] {
            await #expect(throws: LiveObjectsError.self, "\(attempt)") {
                try await realm.write { r in
                    switch attempt {
                    case "create": _ = try r.dynamicCreate("Blob", value: ["id": .int(2), "text": .string(tooLong)])
                    case "set":
                        try r.dynamicObject(ofType: "Blob", forPrimaryKey: .int(1))!.set("text", to: .string(tooLong))
                    default:
                        try r.dynamicObject(ofType: "Blob", forPrimaryKey: .int(1))!.append(
                            .string(tooLong), to: "texts")
                    }
                }
            }
            do {
                try await realm.write { r in
                    _ = try r.dynamicCreate("Blob", value: ["id": .int(2), "text": .string(tooLong)])
                }
            } catch let error as LiveObjectsError {
                #expect(error.code == .limitExceeded)
                #expect(error.property == "text")
                #expect(error.message.contains("\(limit)"))
            }
        }
        let (count, length, texts) = try await realm.read { r in
            let blob = try r.dynamicObject(ofType: "Blob", forPrimaryKey: .int(1))!
            return (
                try r.dynamicObjects("Blob").count, try blob.value("text").stringValue?.utf8.count,
                try blob.value("texts")
            )
        }
        #expect(count == 1)
        #expect(length == limit)
        #expect(texts == .list([]))
    }

    @Test func dataUpToTheLimitIsStoredLargerRefused() async throws {
        let realm = try await openBlobs()
        let limit = Realm.Limits.maximumDataLength
        try await realm.write { r in
            _ = try r.dynamicCreate("Blob", value: ["id": .int(1), "bytes": .data(Data(count: limit))])
        }
        do {
            try await realm.write { r in
                try r.dynamicObject(ofType: "Blob", forPrimaryKey: .int(1))!.set(
                    "bytes", to: .data(Data(count: limit + 1)))
            }
            Issue.record("data past the limit was stored")
        } catch let error as LiveObjectsError {
            #expect(error.code == .limitExceeded)
            #expect(error.property == "bytes")
        }
        let size = try await realm.read { r in
            try r.dynamicObject(ofType: "Blob", forPrimaryKey: .int(1))!.value("bytes")
        }
        #expect(size == .data(Data(count: limit)))
    }

    @Test func predicateNestingAndLengthLimits() async throws {
        let realm = try await openBlobs()
        let depth = Realm.Limits.maximumPredicateNesting
        func nested(_ n: Int) -> String {
            String(repeating: "(", count: n) + "id == 1" + String(repeating: ")", count: n)
        }
        let deepest = nested(depth)
        let ok = try await realm.read { r in try r.dynamicResults("Blob").filter(deepest).count }
        #expect(ok == 0)
        for text in [
            nested(depth + 1), String(repeating: "NOT ", count: depth + 1) + "id == 1",
            "text == '" + String(repeating: "a", count: Realm.Limits.maximumPredicateLength) + "'",
        ] {
            do {
                _ = try await realm.read { r in try r.dynamicResults("Blob").filter(text).count }
                Issue.record("a predicate past the limits was accepted: \(text.prefix(40))…")
            } catch let error as LiveObjectsError {
                #expect(error.code == .limitExceeded, "\(error)")
            }
        }
    }

    @Test func subscriptionsPastTheMaximumAreRefusedUntilOneEnds() async throws {
        let realm = try await openBlobs(maximumSubscriptions: 3)
        let first = try await realm.read { r in try r.dynamicResults("Blob").changes() }
        let second = try await realm.read { r in try r.dynamicResults("Blob").filter("id > 1").changes() }
        let third = try await realm.changes()

        // A fourth, of each kind: refused with a typed error; its sequence ends at once.
        do {
            _ = try await realm.changes()
            Issue.record("a fourth subscription was accepted")
        } catch {
            #expect(error.code == .limitExceeded)
            #expect(error.message.contains("3 live subscriptions"))
        }
        do {
            let refused = try await realm.read { r in try r.dynamicResults("Blob").changes() }
            Issue.record("a fourth collection subscription was accepted")
            for await _ in refused {}
        } catch let error as LiveObjectsError {
            #expect(error.code == .limitExceeded)
        }

        // The three accepted ones work; ending one makes room for another.
        try await realm.write { r in _ = try r.dynamicCreate("Blob", value: ["id": .int(2)]) }
        var iterator = first.makeAsyncIterator()
        #expect(await iterator.next()?.isInitial == true)
        #expect(await iterator.next()?.snapshot.count == 1)
        let watcher = Task { for await _ in second {} }
        watcher.cancel()
        await watcher.value
        _ = third
        let fourth = try await realm.read { r in try r.dynamicResults("Blob").changes() }
        var fourthIterator = fourth.makeAsyncIterator()
        #expect(await fourthIterator.next()?.snapshot.count == 1)
    }

    @Test func defaultMaximumSubscriptions() {
        #expect(
            Realm.Configuration(identifier: "x", objectTypes: []).maximumSubscriptions
                == Realm.Limits.defaultMaximumSubscriptions)
    }
}
