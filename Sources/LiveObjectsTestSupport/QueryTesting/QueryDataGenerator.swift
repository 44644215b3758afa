import Foundation
import LiveObjects

/// Random data sets: the realm and its reference copy (`RefWorld`) filled and changed together,
/// from the same draws.
enum QueryWorld {
    static func date(_ i: Int) -> Date { Date(timeIntervalSinceReferenceDate: Double(i) * 86_400 + 0.25) }

    static let codes = ["a", "A", "b", "é", "E\u{301}", "ё", "Ё", "10", "9"]

    /// Decimals that `Double` cannot tell apart (0.3 and 0.3 + 1e-29), long ones, tiny ones,
    /// equal values in different spellings (2.5 and 2.50), zero of both signs, and NaN (which
    /// sorts before every number and equals only NaN).
    static let decimals: [Decimal] =
        [
            "0", "-0", "0.3", "0.30000000000000000000000000001", "0.29999999999999999999999999999", "2.5", "2.50",
            "-1.25", "10", "12345678901234567890123456789.5", "-98765432109876543210", "1e-20", "-0.000001",
        ].map { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX"))! } + [Decimal.nan]

    /// Object ids: a few, so that equal ids are common; their hex order is their byte order.
    static let objectIDs: [ObjectID] = [
        "000000000000000000000000", "507f1f77bcf86cd799439011", "507f1f77bcf86cd799439012", "5f0000000000000000000001",
        "ffffffffffffffffffffffff",
    ].map { ObjectID(hex: $0)! }

    /// A value of a random kind for an `AnyValue`: numbers equal across int, double and
    /// decimal (3, 3.0, 3 as a decimal), strings that look like numbers ("3"), booleans, dates,
    /// object ids and null. (No NaN: it is no number to compare; no data nor UUID, which have
    /// no text literal.)
    static func mixed(_ rng: inout SeededRandomNumberGenerator) -> PropertyValue {
        switch rng.int(0...8) {
        case 0: .null
        case 1: .bool(rng.chance(0.5))
        case 2: .int(Int64(rng.int(-3...12)))
        case 3: .double(Double(rng.int(-12...40)) / 4)
        case 4: .decimal(rng.element(of: decimals.dropLast().map { $0 }))
        case 5: .string(rng.chance(0.3) ? String(rng.int(0...3)) : QueryText.string(&rng, maxFragments: 2))
        case 6: .date(date(rng.int(0...6)))
        case 7: .objectID(rng.element(of: objectIDs))
        default: .int(3)
        }
    }

    static func decimal(_ rng: inout SeededRandomNumberGenerator) -> Decimal {
        rng.chance(0.05) ? Decimal.nan : rng.element(of: decimals.dropLast().map { $0 })
    }

    static func randomItem(_ id: Int, _ rng: inout SeededRandomNumberGenerator, _ world: RefWorld) -> RefItem {
        var item = RefItem(
            id: id, int: rng.int(-3...12), optInt: rng.chance(0.3) ? nil : rng.int(-3...12),
            double: Double(rng.int(-12...40)) / 4, string: QueryText.string(&rng),
            optString: rng.chance(0.3) ? nil : QueryText.string(&rng, maxFragments: 3), flag: rng.chance(0.5),
            date: date(rng.int(0...6)), code: rng.element(of: codes), price: decimal(&rng),
            optPrice: rng.chance(0.3) ? nil : decimal(&rng), ref: rng.element(of: objectIDs),
            owner: rng.chance(0.25) || world.owners.isEmpty ? nil : rng.element(of: world.owners.keys.sorted()),
            tags: world.tags.isEmpty ? [] : (0..<rng.int(0...4)).map { _ in rng.element(of: world.tags.keys.sorted()) })
        // A map of up to two of `theme` and `font`, its values strings like the others.
        for key in ["theme", "font"] where rng.chance(0.6) {
            item.settings[key] = QueryText.string(&rng, maxFragments: 2)
        }
        // A map of objects: `lead` and `back`, each an owner or nil when present.
        for key in ["lead", "back"] where !world.owners.isEmpty && rng.chance(0.6) {
            item.pals[key] = .some(rng.chance(0.2) ? nil : rng.element(of: world.owners.keys.sorted()))
        }
        item.payload = mixed(&rng)
        // A map of AnyValues: up to two of `level` and `note`, each of a random kind.
        for key in ["level", "note"] where rng.chance(0.6) { item.extras[key] = mixed(&rng) }
        return item
    }

    static func randomOwner(_ id: Int, _ rng: inout SeededRandomNumberGenerator) -> RefOwner {
        RefOwner(
            id: id, name: QueryText.string(&rng, maxFragments: 3), score: rng.chance(0.3) ? nil : rng.int(-2...9),
            favorite: nil)
    }

    static func randomTag(_ id: Int, _ rng: inout SeededRandomNumberGenerator) -> RefTag {
        RefTag(
            id: id, label: QueryText.string(&rng, maxFragments: 2), weight: rng.int(-2...9),
            rating: rng.chance(0.3) ? nil : Double(rng.int(-4...12)) / 4)
    }

    static func values(_ item: RefItem) -> [String: Any] {
        [
            "id": item.id, "int": item.int, "optInt": item.optInt as Any, "double": item.double,
            "string": item.string, "optString": item.optString as Any, "flag": item.flag, "date": item.date,
            "code": item.code, "payload": AnyValue(item.payload)!, "price": item.price,
            "optPrice": item.optPrice as Any, "ref": item.ref,
            "owner": item.owner as Any, "settings": item.settings,
            "pals": item.pals.mapValues { $0.map { $0 as Any } },
            "extras": item.extras.mapValues { AnyValue($0)! },
        ]
    }

    /// Fills a realm and its reference copy.
    static func populate(_ realm: Realm, _ world: inout RefWorld, _ rng: inout SeededRandomNumberGenerator) async throws
    {
        for _ in 0..<rng.int(0...5) {
            let id = world.newID()
            world.owners[id] = randomOwner(id, &rng)
        }
        for _ in 0..<rng.int(0...6) {
            let id = world.newID()
            world.tags[id] = randomTag(id, &rng)
        }
        for _ in 0..<(rng.chance(0.1) ? rng.int(0...2) : rng.int(3...18)) {
            let id = world.newID()
            world.items[id] = randomItem(id, &rng, world)
        }
        for id in world.owners.keys.sorted() where !world.items.isEmpty && rng.chance(0.6) {
            world.owners[id]!.favorite = rng.element(of: world.items.keys.sorted())
        }
        let snapshot = world
        try await realm.write { r in
            for owner in snapshot.owners.values.sorted(by: { $0.id < $1.id }) {
                _ = try r.create(
                    QPOwner.self, value: ["id": owner.id, "name": owner.name, "score": owner.score as Any])
            }
            for tag in snapshot.tags.values.sorted(by: { $0.id < $1.id }) {
                _ = try r.create(
                    QPTag.self,
                    value: [
                        "id": tag.id, "label": tag.label, "weight": tag.weight, "rating": tag.rating as Any,
                    ])
            }
            for item in snapshot.items.values.sorted(by: { $0.id < $1.id }) {
                let object = try r.create(QPItem.self, value: values(item))
                for tag in item.tags { object.tags.append(r.object(ofType: QPTag.self, forPrimaryKey: tag)!) }
            }
            for owner in snapshot.owners.values {
                r.object(ofType: QPOwner.self, forPrimaryKey: owner.id)!.favorite =
                    owner.favorite.flatMap { r.object(ofType: QPItem.self, forPrimaryKey: $0) }
            }
        }
    }

    /// Random changes, made to the realm and to the reference copy.
    enum Change: Sendable {
        case item(RefItem), newItem(RefItem), deleteItem(Int)
        case owner(RefOwner), deleteOwner(Int)
        case tag(RefTag), deleteTag(Int)
    }

    static func mutate(_ realm: Realm, _ world: inout RefWorld, _ rng: inout SeededRandomNumberGenerator) async throws {
        var changes: [Change] = []
        for _ in 0..<rng.int(1...6) {
            switch rng.int(0...9) {
            case 0...3 where !world.items.isEmpty:
                var item = world.items[rng.element(of: world.items.keys.sorted())]!
                let fresh = randomItem(item.id, &rng, world)
                switch rng.int(0...6) {
                case 0: item.int = fresh.int; item.optInt = fresh.optInt
                case 1: item.string = fresh.string; item.optString = fresh.optString
                case 2: item.code = fresh.code; item.flag = fresh.flag
                case 3: item.owner = fresh.owner
                case 4:
                    item.tags = fresh.tags
                    item.settings = fresh.settings
                    item.pals = fresh.pals
                case 5: item.double = fresh.double; item.date = fresh.date
                case 6 where rng.chance(0.5):
                    item.payload = fresh.payload
                    item.extras = fresh.extras
                    item.price = fresh.price
                    item.optPrice = fresh.optPrice
                    item.ref = fresh.ref
                default: item = fresh
                }
                world.items[item.id] = item
                changes.append(.item(item))
            case 4:
                let id = world.newID()
                let item = randomItem(id, &rng, world)
                world.items[id] = item
                changes.append(.newItem(item))
            case 5 where !world.items.isEmpty:
                let id = rng.element(of: world.items.keys.sorted())
                world.items[id] = nil
                for (o, owner) in world.owners where owner.favorite == id { world.owners[o]!.favorite = nil }
                changes.append(.deleteItem(id))
            case 6 where !world.owners.isEmpty:
                var owner = world.owners[rng.element(of: world.owners.keys.sorted())]!
                let fresh = randomOwner(owner.id, &rng)
                owner.name = rng.chance(0.5) ? fresh.name : owner.name
                owner.score = fresh.score
                owner.favorite =
                    world.items.isEmpty || rng.chance(0.3) ? nil : rng.element(of: world.items.keys.sorted())
                world.owners[owner.id] = owner
                changes.append(.owner(owner))
            case 7 where !world.owners.isEmpty && rng.chance(0.5):
                let id = rng.element(of: world.owners.keys.sorted())
                world.owners[id] = nil
                for (i, item) in world.items where item.owner == id { world.items[i]!.owner = nil }
                // A deleted owner leaves the keys of the maps that held it, with nil.
                for (i, item) in world.items {
                    for (key, value) in item.pals where value == id { world.items[i]!.pals[key] = .some(nil) }
                }
                changes.append(.deleteOwner(id))
            case 8 where !world.tags.isEmpty:
                var tag = randomTag(rng.element(of: world.tags.keys.sorted()), &rng)
                if rng.chance(0.5) { tag.label = world.tags[tag.id]!.label }
                world.tags[tag.id] = tag
                changes.append(.tag(tag))
            case 9 where !world.tags.isEmpty:
                let id = rng.element(of: world.tags.keys.sorted())
                world.tags[id] = nil
                for (i, item) in world.items { world.items[i]!.tags = item.tags.filter { $0 != id } }
                changes.append(.deleteTag(id))
            default:
                break
            }
        }
        try await apply(changes, to: realm)
    }

    /// Makes the changes drawn by ``mutate(_:_:_:)`` to the realm, in one write.
    static func apply(_ batch: [Change], to realm: Realm) async throws {
        try await realm.write { r in
            for change in batch {
                switch change {
                case .item(let item):
                    let object = r.object(ofType: QPItem.self, forPrimaryKey: item.id)!
                    object.int = item.int
                    object.optInt = item.optInt
                    object.double = item.double
                    object.string = item.string
                    object.optString = item.optString
                    object.flag = item.flag
                    object.date = item.date
                    object.code = item.code
                    object.price = item.price
                    object.optPrice = item.optPrice
                    object.ref = item.ref
                    object.payload = AnyValue(item.payload)!
                    object.owner = item.owner.flatMap { r.object(ofType: QPOwner.self, forPrimaryKey: $0) }
                    object.tags.removeAll()
                    for tag in item.tags { object.tags.append(r.object(ofType: QPTag.self, forPrimaryKey: tag)!) }
                    for key in object.settings.keys where item.settings[key] == nil { object.settings[key] = nil }
                    object.settings.merge(item.settings)
                    for key in object.pals.keys where item.pals[key] == nil { object.pals.removeObject(for: key) }
                    for (key, id) in item.pals {
                        object.pals[key] = .some(id.flatMap { r.object(ofType: QPOwner.self, forPrimaryKey: $0) })
                    }
                    for key in object.extras.keys where item.extras[key] == nil { object.extras[key] = nil }
                    for (key, value) in item.extras { object.extras[key] = AnyValue(value)! }
                case .newItem(let item):
                    let object = try r.create(QPItem.self, value: values(item))
                    for tag in item.tags { object.tags.append(r.object(ofType: QPTag.self, forPrimaryKey: tag)!) }
                case .deleteItem(let id):
                    try r.delete(r.object(ofType: QPItem.self, forPrimaryKey: id)!)
                case .owner(let owner):
                    let object = r.object(ofType: QPOwner.self, forPrimaryKey: owner.id)!
                    object.name = owner.name
                    object.score = owner.score
                    object.favorite = owner.favorite.flatMap { r.object(ofType: QPItem.self, forPrimaryKey: $0) }
                case .deleteOwner(let id):
                    try r.delete(r.object(ofType: QPOwner.self, forPrimaryKey: id)!)
                case .tag(let tag):
                    let object = r.object(ofType: QPTag.self, forPrimaryKey: tag.id)!
                    object.label = tag.label
                    object.weight = tag.weight
                    object.rating = tag.rating
                case .deleteTag(let id):
                    try r.delete(r.object(ofType: QPTag.self, forPrimaryKey: id)!)
                }
            }
        }
    }
}
