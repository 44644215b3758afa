import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class PricedItem: Object {
    @Persisted(primaryKey: true) var _id = ObjectID()
    @Persisted(indexed: true) var price: Decimal = 0
    @Persisted var discount: Decimal?
    @Persisted var history: List<Decimal>
    @Persisted var related: List<ObjectID>
    @Persisted var parent: ObjectID?
}

private func decimal(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))! }

@Suite struct ObjectIDTests {
    @Test func hexRoundTripAndParts() throws {
        let id = try #require(ObjectID(hex: "507f1f77bcf86cd799439011"))
        #expect(id.hexString == "507f1f77bcf86cd799439011")
        #expect(id.description == "507f1f77bcf86cd799439011")
        #expect(ObjectID(hex: "507F1F77BCF86CD799439011") == id)
        #expect(id.timestamp == Date(timeIntervalSince1970: 0x507f_1f77))
        for bad in ["", "507f1f77bcf86cd79943901", "507f1f77bcf86cd7994390111", "507f1f77bcf86cd79943901g"] {
            #expect(ObjectID(hex: bad) == nil, "\(bad)")
        }
    }

    @Test func idsOfOneProcessSortByCreation() {
        let before = Date().timeIntervalSince1970.rounded(.down)
        let ids = (0..<1000).map { _ in ObjectID() }
        let after = Date().timeIntervalSince1970
        #expect(Set(ids).count == ids.count)
        #expect(ids == ids.sorted())
        // The timestamp is the creation's second.
        #expect(ids.allSatisfy { (before...after).contains($0.timestamp.timeIntervalSince1970) })
        // The five process bytes are the same in every id.
        #expect(Set(ids.map { $0.byteArray[4..<9] }).count == 1)
    }

    @Test func codableAsHexString() throws {
        let id = try #require(ObjectID(hex: "000102030405060708090a0b"))
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == #"["000102030405060708090a0b"]"#)
        #expect(try JSONDecoder().decode([ObjectID].self, from: data) == [id])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([ObjectID].self, from: Data(#"["xyz"]"#.utf8)) }
    }
}

@Suite struct DecimalPropertyTests {
    func open(_ name: String = #function) async throws -> Realm {
        try await openFreshRealm(name, objectTypes: [PricedItem.self])
    }

    @Test func schemaDiscoversTheTypes() async throws {
        let realm = try await open()
        let schema = try #require(realm.schema["PricedItem"])
        let byName = Dictionary(uniqueKeysWithValues: schema.properties.map { ($0.name, $0) })
        #expect(byName["_id"]?.type == .objectID && byName["_id"]?.isPrimaryKey == true)
        #expect(byName["price"]?.type == .decimal && byName["price"]?.isIndexed == true)
        #expect(byName["discount"]?.type == .decimal && byName["discount"]?.isOptional == true)
        #expect(byName["history"]?.type == .decimal && byName["history"]?.isList == true)
        #expect(byName["related"]?.type == .objectID && byName["related"]?.isList == true)
        #expect(byName["price"]?.description == "price: Decimal indexed")
        #expect(byName["_id"]?.description == "_id: ObjectID primary")
    }

    @Test func decimalIsNotAPrimaryKey() {
        let schema = ObjectSchema(
            name: "T", properties: [Property(name: "d", type: .decimal, isPrimaryKey: true)])
        #expect(throws: LiveObjectsError.self) { try Schema([schema]).validate() }
    }

    @Test func valuesStayExact() async throws {
        let realm = try await open()
        let id = try #require(ObjectID(hex: "507f1f77bcf86cd799439011"))
        try await realm.write { r in
            let item = PricedItem()
            item._id = id
            item.price = decimal("0.1000000000000000000000001")
            item.history.append(objectsIn: [decimal("1.10"), decimal("-2.5e-3")])
            item.related.append(id)
            try r.add(item)
        }
        try await realm.read { r in
            guard let item = r.object(ofType: PricedItem.self, forPrimaryKey: id),
                let dynamic = try r.dynamicObject(ofType: "PricedItem", forPrimaryKey: .objectID(id))
            else {
                Issue.record("no object with primary key \(id)")
                return
            }
            #expect(item.price == decimal("0.1000000000000000000000001"))
            #expect(item.price.description == "0.1000000000000000000000001")
            #expect(item.discount == nil)
            #expect(Array(item.history) == [decimal("1.1"), decimal("-0.0025")])
            #expect(Array(item.related) == [id])
            #expect(dynamic["price"] == .decimal(decimal("0.1000000000000000000000001")))
            #expect(dynamic["_id", as: ObjectID.self] == id)
        }
    }

    @Test func dynamicInputConvertsExactly() async throws {
        let realm = try await open()
        let id = "507f1f77bcf86cd799439011"
        try await realm.write { r in
            _ = try r.create(
                PricedItem.self, value: ["_id": id, "price": 9.99, "discount": "0.05", "history": [1, "2.50"]])
        }
        try await realm.read { r in
            guard let item = r.objects(PricedItem.self).first else {
                Issue.record("no object")
                return
            }
            #expect(item._id.hexString == id)
            #expect(item.price == decimal("9.99"))
            #expect(item.discount == decimal("0.05"))
            #expect(Array(item.history) == [1, decimal("2.5")])
        }
        let bad: [PropertyValue] = [.string("12abc"), .string("1.2.3"), .double(.nan), .string("")]
        for value in bad {
            await #expect(throws: LiveObjectsError.self, "\(value)") {
                try await realm.write { r in _ = try r.create(PricedItem.self, value: ["price": value]) }
            }
        }
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { r in _ = try r.create(PricedItem.self, value: ["_id": "nothex"]) }
        }
        // 39 significant digits do not fit a Decimal: refused, not rounded.
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { r in
                _ = try r.create(PricedItem.self, value: ["price": "123456789012345678901234567890123456789"])
            }
        }
        #expect(try await realm.read { r in r.objects(PricedItem.self).count } == 1)
    }

    @Test func jsonImportAndExport() async throws {
        let realm = try await open()
        let json = Data(
            #"{"_id": "507f1f77bcf86cd799439011", "price": 0.1000000000000000000000001, "discount": "2.50", "history": [1.5, "3"], "related": ["507f1f77bcf86cd799439011"], "parent": null}"#
                .utf8)
        let exported = try await realm.write { r in
            let item = try r.create(PricedItem.self, json: json)
            return String(decoding: try JSONEncoder().encode(item), as: UTF8.self)
        }
        #expect(exported.contains(#""price":"0.1000000000000000000000001""#), "\(exported)")
        #expect(exported.contains(#""discount":"2.5""#), "\(exported)")
        #expect(exported.contains(#""_id":"507f1f77bcf86cd799439011""#), "\(exported)")
        // The export reads back as the same values.
        let again = try await openFreshRealm(objectTypes: [PricedItem.self])
        let price = try await again.write { r in try r.create(PricedItem.self, json: Data(exported.utf8)).price }
        #expect(price == decimal("0.1000000000000000000000001"))
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { r in
                _ = try r.create(
                    PricedItem.self, json: Data(#"{"_id": "507f1f77bcf86cd799439012", "price": "1,5"}"#.utf8))
            }
        }
    }

    @Test func objectIDPrimaryKeyIsUnique() async throws {
        let realm = try await open()
        let id = ObjectID()
        try await realm.write { r in _ = try r.create(PricedItem.self, value: ["_id": id]) }
        await #expect(throws: LiveObjectsError.self) {
            try await realm.write { r in _ = try r.create(PricedItem.self, value: ["_id": id]) }
        }
    }

    func fill(_ realm: Realm, _ prices: [String]) async throws -> [ObjectID] {
        try await realm.write { r in
            try prices.map { text in
                let item = PricedItem()
                item.price = decimal(text)
                item.discount = text.hasPrefix("-") ? nil : decimal(text) / 10
                try r.add(item)
                return item._id
            }
        }
    }

    func prices(_ realm: Realm, _ query: String, _ args: [PropertyValue] = []) async throws -> [String] {
        try await realm.read { r in
            try r.objects(PricedItem.self).filter(query, arguments: args).sorted(by: \.price).map(\.price.description)
        }
    }

    @Test func queriesCompareExactly() async throws {
        let realm = try await open()
        let ids = try await fill(
            realm, ["9.99", "10", "0.1", "0.30000000000000000000000000001", "-5", "100.5", "9.990"])
        #expect(try await prices(realm, "price == 9.99") == ["9.99", "9.99"])
        #expect(try await prices(realm, "price > 9.99") == ["10", "100.5"])
        #expect(try await prices(realm, "price <= 0.3") == ["-5", "0.1"])
        #expect(
            try await prices(realm, "price > 0.3") == [
                "0.30000000000000000000000000001", "9.99", "9.99", "10", "100.5",
            ])
        #expect(
            try await prices(realm, "price BETWEEN {0.1, 10}") == [
                "0.1", "0.30000000000000000000000000001", "9.99", "9.99", "10",
            ])
        #expect(try await prices(realm, "price IN {10, -5}") == ["-5", "10"])
        #expect(
            try await prices(realm, "price != 9.99 AND price < 1") == ["-5", "0.1", "0.30000000000000000000000000001"])
        #expect(try await prices(realm, "price == %@", [.decimal(decimal("100.50"))]) == ["100.5"])
        #expect(try await prices(realm, "discount == nil") == ["-5"])
        #expect(try await prices(realm, "_id == %@", [.objectID(ids[1])]) == ["10"])
        let typed = try await realm.read { r in
            r.objects(PricedItem.self).where { $0.price > decimal("9.99") }.sorted(by: \.price).map(\.price)
        }
        #expect(typed == [10, decimal("100.5")])
        let descending = try await realm.read { r in
            r.objects(PricedItem.self).sorted(by: \.price, ascending: false).map(\.price.description)
        }
        #expect(descending.first == "100.5" && descending.last == "-5")
    }

    /// An integer literal longer than 64 bits is a decimal literal: exact against a Decimal
    /// property, up to the 38 digits a Decimal keeps; longer ones are refused as before.
    @Test func longIntegerLiteralsAreDecimals() async throws {
        let realm = try await open()
        _ = try await fill(realm, ["12345678901234567890", "-98765432109876543210987", "1"])
        #expect(try await prices(realm, "price == 12345678901234567890") == ["12345678901234567890"])
        #expect(try await prices(realm, "price == 12345678901234567891") == [])
        #expect(try await prices(realm, "price < -98765432109876543210986") == ["-98765432109876543210987"])
        #expect(try await prices(realm, "price > 9223372036854775809") == ["12345678901234567890"])
        #expect(try await prices(realm, "price == 1") == ["1"])
        let tooLong = "price == " + String(repeating: "9", count: 45)
        await #expect(throws: LiveObjectsError.self) { try await prices(realm, tooLong) }
    }

    @Test func objectIDLiteralAndOrdering() async throws {
        let realm = try await open()
        let low = try #require(ObjectID(hex: "000000000000000000000001"))
        let high = try #require(ObjectID(hex: "507f1f77bcf86cd799439011"))
        try await realm.write { r in
            for (id, price) in [(high, 2), (low, 1)] {
                _ = try r.create(PricedItem.self, value: ["_id": id, "price": price])
            }
        }
        #expect(try await prices(realm, "_id == oid(507f1f77bcf86cd799439011)") == ["2"])
        #expect(try await prices(realm, "_id < oid(507f1f77bcf86cd799439011)") == ["1"])
        #expect(
            try await prices(realm, "_id IN {oid(000000000000000000000001), oid(507F1F77BCF86CD799439011)}") == [
                "1", "2",
            ])
        let sorted = try await realm.read { r in r.objects(PricedItem.self).sorted(by: \._id).map(\._id) }
        #expect(sorted == [low, high])
        await #expect(throws: LiveObjectsError.self) { try await prices(realm, "_id == oid(12)") }
    }

    @Test func aggregatesAreExact() async throws {
        let realm = try await open()
        _ = try await fill(realm, ["0.1", "0.2", "0.3"])
        let (sum, avg, min, max) = try await realm.read { r in
            let all = r.objects(PricedItem.self)
            return (all.sum(of: \.price), all.average(of: \.price), all.min(of: \.price), all.max(of: \.price))
        }
        #expect(sum == decimal("0.6"))
        #expect(avg == decimal("0.2"))
        #expect(min == decimal("0.1"))
        #expect(max == decimal("0.3"))
        try await realm.write { r in
            let item = r.objects(PricedItem.self).sorted(by: \.price).first
            item?.history.append(objectsIn: [decimal("0.1"), decimal("0.2")])
        }
        #expect(try await prices(realm, "history.@sum == 0.3") == ["0.1"])
        #expect(try await prices(realm, "history.@avg == 0.15") == ["0.1"])
        #expect(try await prices(realm, "history.@max == 0.2") == ["0.1"])
        #expect(try await prices(realm, "ANY history == 0.1") == ["0.1"])
    }

    @Test func distinctTreatsEqualDecimalsAsOne() async throws {
        let realm = try await open()
        _ = try await fill(realm, ["1", "1.0", "1.00", "2"])
        let distinct = try await realm.read { r in
            try r.objects(PricedItem.self).distinct(byKeyPaths: ["price"]).count
        }
        #expect(distinct == 2)
        #expect(try await prices(realm, "price == 1") == ["1", "1", "1"])
    }
}

/// Random decimals and random comparisons with number literals: the query's answer is the one
/// Foundation's `Decimal` comparison gives, whatever the digits (seeded; the seed and the
/// failing query are printed).
@Suite struct DecimalDifferentialTests {
    static func randomDecimalText(_ rng: inout SeededRandomNumberGenerator) -> String {
        let digits = rng.int(1...30)
        var text = rng.int(0...1) == 0 ? "-" : ""
        text += String(rng.int(0...9))
        // An integer literal has at most 18 digits (a longer one is refused as not fitting 64
        // bits): longer ones get a point.
        let point = digits > 18 ? rng.int(1...digits - 1) : rng.int(0...digits)
        for i in 1..<max(digits, 2) {
            if i == point { text += "." }
            text += String(rng.int(0...9))
        }
        return text
    }

    @Test func queriesAgreeWithDecimalComparison() async throws {
        let seed = TestEnvironment.seed("LIVEOBJECTS_DECIMAL_SEED") ?? 0xDEC1_4A15
        var rng = SeededRandomNumberGenerator(seed: seed)
        let realm = try await openFreshRealm(objectTypes: [PricedItem.self])
        var texts: [String] = []
        for _ in 0..<60 { texts.append(Self.randomDecimalText(&rng)) }
        // Values equal to others but written differently, and literals among the values.
        texts += texts.prefix(5).map { $0.contains(".") ? $0 + "00" : $0 + ".0" }
        let values = texts.map { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX"))! }
        let stored = values
        try await realm.write { r in
            for value in stored {
                let item = PricedItem()
                item.price = value
                try r.add(item)
            }
        }
        let ops: [(String, (Decimal, Decimal) -> Bool)] = [
            ("==", { $0 == $1 }), ("!=", { $0 != $1 }), ("<", { $0 < $1 }), ("<=", { $0 <= $1 }),
            (">", { $0 > $1 }), (">=", { $0 >= $1 }),
        ]
        for round in 0..<150 {
            let literal = rng.int(0...2) == 0 ? texts[rng.int(0...texts.count - 1)] : Self.randomDecimalText(&rng)
            let bound = Decimal(string: literal, locale: Locale(identifier: "en_US_POSIX"))!
            let (op, compare) = ops[rng.int(0...ops.count - 1)]
            let query = "price \(op) \(literal)"
            let expected = values.filter { compare($0, bound) }.sorted()
            let actual = try await realm.read { r in
                try r.objects(PricedItem.self).filter(query).map(\.price).sorted()
            }
            #expect(actual == expected, "seed \(seed), round \(round): \(query)")
            if actual != expected { break }
        }
    }
}
