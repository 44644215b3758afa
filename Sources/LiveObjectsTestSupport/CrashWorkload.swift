import Foundation
import LiveObjects

/// The workload of the persistence crash test: a child process runs its steps in a loop and is
/// killed; the test checks that the reopened file holds exactly the state after some step.
///
/// Step `n` upserts `Item` `n % 20` (value `n`, score `n / 7`, a tag, a set of two labels given
/// with a duplicate, a map of two entries given out of order, an `AnyValue` whose kind turns with
/// `n`: a decimal, a string, a double, a date), points the counter at it
/// and sets its value to `n`; every fifth step also deletes item `(n + 7) % 20`.
package enum CrashWorkload {
    /// The schema: a counter with a link, and items with a list, a set, a map and an `AnyValue`.
    package static let schema = Schema([
        ObjectSchema(
            name: "Counter",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "value", type: .int),
                .link("last", to: "Item"),
            ]),
        ObjectSchema(
            name: "Item",
            properties: [
                Property(name: "id", type: .int, isPrimaryKey: true),
                Property(name: "value", type: .int),
                Property(name: "score", type: .double),
                Property(name: "tags", type: .string, isList: true),
                Property(name: "labels", type: .string, isSet: true),
                Property(name: "notes", type: .int, isOptional: true, isMap: true),
                Property(name: "payload", type: .mixed),
            ]),
    ])

    /// Runs step `n` inside a write.
    package static func step(_ n: Int64, in realm: isolated Realm) throws {
        let item = try realm.dynamicCreate(
            "Item",
            value: [
                "id": .int(n % 20), "value": .int(n), "score": .double(Double(n) / 7),
                "tags": .list([.string("t\(n)")]),
                "labels": .list([.string("l\(n)"), .string("even"), .string("l\(n)")]),
                "notes": .list([.list([.string("z"), .null]), .list([.string("a\(n)"), .int(Int64(n))])]),
                "payload": payload(n),
            ],
            update: .modified)
        try realm.dynamicCreate(
            "Counter", value: ["id": 0, "value": .int(n), "last": .object(item.key)], update: .modified)
        if n % 5 == 0, let doomed = try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int((n + 7) % 20)) {
            try realm.delete(doomed)
        }
    }

    /// The `AnyValue` of the item step `n` writes: its kind turns with `n`.
    package static func payload(_ n: Int64) -> PropertyValue {
        switch n % 4 {
        case 0: .decimal(Decimal(n) / 100)
        case 1: .string("p\(n)")
        case 2: .double(Double(n) + 0.5)
        default: .date(Date(timeIntervalSinceReferenceDate: Double(n)))
        }
    }

    /// The items (id to value) after steps `1...n`.
    package static func expectedItems(after n: Int64) -> [Int64: Int64] {
        var items: [Int64: Int64] = [:]
        if n >= 1 {
            for k in 1...n {
                items[k % 20] = k
                if k % 5 == 0 { items[(k + 7) % 20] = nil }
            }
        }
        return items
    }

    /// The counter's value, the items (id to value) and the id the counter links to, as stored.
    package static func state(of realm: isolated Realm) throws -> (counter: Int64, items: [Int64: Int64], last: Int64?)
    {
        let counter = try realm.dynamicObject(ofType: "Counter", forPrimaryKey: 0)
        var items: [Int64: Int64] = [:]
        for item in try realm.dynamicObjects("Item") {
            guard let id = item["id"].intValue, let value = item["value"].intValue else { continue }
            guard item["score"] == .double(Double(value) / 7), item["tags"] == .list([.string("t\(value)")]),
                item["labels"] == .list([.string("l\(value)"), .string("even")]),
                item["notes"] == .list([.list([.string("a\(value)"), .int(value)]), .list([.string("z"), .null])]),
                item["payload"] == payload(value)
            else {
                items[id] = -1
                continue
            }
            items[id] = value
        }
        let last = try counter?.linkedObject("last")?.value("id").intValue
        return (counter?["value"].intValue ?? 0, items, last)
    }
}

/// An entry of the shared-file workload: each write of a process adds one, with a unique id.
package final class SharedEntry: Object {
    @Persisted(primaryKey: true) package var id = ""
    @Persisted package var value = 0
}

/// The tally of the shared-file workload: every write adds one to it in the write that adds
/// an entry, so that it equals the number of entries unless an update was lost.
package final class SharedTally: Object {
    @Persisted(primaryKey: true) package var id = 0
    @Persisted package var value = 0
}

/// The workload of the multi-process test: processes share one file realm, each adding
/// entries (and bumping the tally, a read-modify-write) and reading, while following the
/// entries' change sets.
package enum SharedWorkload {
    /// The model types.
    package static let types: [Object.Type] = [SharedEntry.self, SharedTally.self]

    /// One write: adds entry `id` and adds one to the tally.
    package static func step(_ id: String, _ value: Int, in realm: isolated Realm) throws {
        try realm.dynamicCreate("SharedEntry", value: ["id": .string(id), "value": .int(Int64(value))])
        let tally = try realm.dynamicObject(ofType: "SharedTally", forPrimaryKey: 0)?["value"].intValue ?? 0
        try realm.dynamicCreate("SharedTally", value: ["id": 0, "value": .int(tally + 1)], update: .modified)
    }

    /// The entries' ids and keys, and the tally.
    package static func state(of realm: isolated Realm) throws -> (ids: [String], keys: [ObjectKey], tally: Int64) {
        let entries = try realm.dynamicObjects("SharedEntry")
        let tally = try realm.dynamicObject(ofType: "SharedTally", forPrimaryKey: 0)?["value"].intValue ?? 0
        return (entries.map { $0["id"].stringValue ?? "" }, entries.map(\.key), tally)
    }

    /// A digest of a set of keys (FNV-1a over their sorted descriptions).
    package static func digest(_ keys: [ObjectKey]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for key in keys.sorted() {
            for byte in "\(key);".utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
        }
        return hash
    }
}
