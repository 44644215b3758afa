import LiveObjects

/// The workload of the persistence crash test: a child process runs its steps in a loop and is
/// killed; the test checks that the reopened file holds exactly the state after some step.
///
/// Step `n` upserts `Item` `n % 20` (value `n`, score `n / 7`, a tag), points the counter at it
/// and sets its value to `n`; every fifth step also deletes item `(n + 7) % 20`.
public enum CrashWorkload {
    /// The schema: a counter with a link, and items with a list.
    public static let schema = Schema([
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
            ]),
    ])

    /// Runs step `n` inside a write.
    public static func step(_ n: Int64, in realm: isolated Realm) throws {
        let item = try realm.dynamicCreate(
            "Item",
            value: [
                "id": .int(n % 20), "value": .int(n), "score": .double(Double(n) / 7),
                "tags": .list([.string("t\(n)")]),
            ],
            update: .modified)
        try realm.dynamicCreate(
            "Counter", value: ["id": 0, "value": .int(n), "last": .object(item.key)], update: .modified)
        if n % 5 == 0, let doomed = try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int((n + 7) % 20)) {
            try realm.delete(doomed)
        }
    }

    /// The items (id to value) after steps `1...n`.
    public static func expectedItems(after n: Int64) -> [Int64: Int64] {
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
    public static func state(of realm: isolated Realm) throws -> (counter: Int64, items: [Int64: Int64], last: Int64?) {
        let counter = try realm.dynamicObject(ofType: "Counter", forPrimaryKey: 0)
        var items: [Int64: Int64] = [:]
        for item in try realm.dynamicObjects("Item") {
            guard let id = item["id"].intValue, let value = item["value"].intValue else { continue }
            guard item["score"] == .double(Double(value) / 7), item["tags"] == .list([.string("t\(value)")]) else {
                items[id] = -1
                continue
            }
            items[id] = value
        }
        let last = try counter?.linkedObject("last")?.value("id").intValue
        return (counter?["value"].intValue ?? 0, items, last)
    }
}
