import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@Suite struct FoundationPredicateTests {
    /// The ids LiveObjects finds, and the ids Foundation's own evaluation finds object by object.
    func run(_ realm: Realm, _ predicate: Predicate<QPItem>) async throws -> (engine: [Int], foundation: [Int]) {
        try await realm.read { r in
            let all = r.objects(QPItem.self)
            let engine = try all.filter(predicate).map(\.id)
            var foundation: [Int] = []
            for item in all where try predicate.evaluate(item) { foundation.append(item.id) }
            return (engine, foundation)
        }
    }

    /// Checks that LiveObjects and Foundation agree, and returns the ids.
    func ids(_ realm: Realm, _ predicate: Predicate<QPItem>, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> [Int]
    {
        let (engine, foundation) = try await run(realm, predicate)
        #expect(engine == foundation, "LiveObjects and Foundation disagree", sourceLocation: sourceLocation)
        return engine
    }

    @Test func comparisonsAndLogic() async throws {
        let realm = try await openFoundationRealm()
        let limit = 4
        #expect(try await ids(realm, #Predicate { $0.int > 4 }) == [1, 3, 5])
        #expect(try await ids(realm, #Predicate { $0.int > limit && $0.flag }) == [1, 3, 5])
        #expect(try await ids(realm, #Predicate { $0.int <= 0 || $0.string == "apple" }) == [1, 2, 4])
        #expect(try await ids(realm, #Predicate { !($0.int >= 0) }) == [2])
        #expect(try await ids(realm, #Predicate { $0.int != 5 && $0.double < 3.0 }) == [2, 3])
        #expect(try await ids(realm, #Predicate { $0.flag == false }) == [2, 4])
        #expect(try await ids(realm, #Predicate { !$0.flag }) == [2, 4])
        #expect(try await ids(realm, #Predicate { $0.flag == ($0.int > 6) }) == [2, 3, 4, 5])
        #expect(try await ids(realm, #Predicate { _ in true }) == [1, 2, 3, 4, 5])
        #expect(try await ids(realm, #Predicate { _ in false }) == [])
        let date = Date(timeIntervalSinceReferenceDate: 2500)
        #expect(try await ids(realm, #Predicate { $0.date > date }) == [3, 4, 5])
        #expect(try await ids(realm, #Predicate { $0.code == "c1" }) == [1, 4])
        // Captured arithmetic is computed once.
        #expect(try await ids(realm, #Predicate { $0.int == limit + 1 }) == [1])
        #expect(try await ids(realm, #Predicate { $0.int > 3 ? $0.flag : $0.double > 5 }) == [1, 3, 4, 5])
    }

    @Test func optionals() async throws {
        let realm = try await openFoundationRealm()
        #expect(try await ids(realm, #Predicate { $0.optInt == nil }) == [2, 5])
        #expect(try await ids(realm, #Predicate { $0.optInt != nil }) == [1, 3, 4])
        #expect(try await ids(realm, #Predicate { $0.optInt == 7 }) == [1])
        #expect(try await ids(realm, #Predicate { $0.optInt != 7 }) == [2, 3, 4, 5])
        #expect(try await ids(realm, #Predicate { ($0.optInt ?? 0) > 5 }) == [1, 3])
        #expect(try await ids(realm, #Predicate { ($0.optInt ?? 100) > 5 }) == [1, 2, 3, 5])
        #expect(try await ids(realm, #Predicate { ($0.optInt ?? $0.int) < 1 }) == [2, 4])
        #expect(try await ids(realm, #Predicate { $0.optString?.contains("т") ?? false }) == [3])
        #expect(try await ids(realm, #Predicate { $0.optString?.contains("т") ?? true }) == [2, 3])
        #expect(try await ids(realm, #Predicate { $0.optString.flatMap { $0.isEmpty } == true }) == [4])
        #expect(try await ids(realm, #Predicate { $0.owner?.name == "Ann" }) == [1, 2])
        #expect(try await ids(realm, #Predicate { $0.owner?.name != "Ann" }) == [3, 4, 5])
        #expect(try await ids(realm, #Predicate { $0.owner == nil }) == [4])
        #expect(try await ids(realm, #Predicate { ($0.owner?.score ?? -1) >= 3 }) == [1, 2, 5])
        #expect(try await ids(realm, #Predicate { $0.owner?.score == nil }) == [3, 4])
        #expect(try await ids(realm, #Predicate { $0.owner?.favorite?.string == "пятёрочка" }) == [1, 2, 3])
        #expect(try await ids(realm, #Predicate { ($0.owner?.items.count ?? 0) == 2 }) == [1, 2])
        #expect(try await ids(realm, #Predicate { $0.owner?.items.count == nil }) == [4])
    }

    @Test func forcedUnwrapsFollowSwiftsShortCircuiting() async throws {
        let realm = try await openFoundationRealm()
        // Foundation would throw for items without an owner; they are left out.
        let (engine, _) = try await run(realm, #Predicate { $0.owner == nil || $0.owner!.name == "Ann" })
        #expect(engine == [1, 2, 4])
        let unwrap = #Predicate<QPItem> { $0.owner!.name != "Ann" }
        let found = try await realm.read { r in try r.objects(QPItem.self).filter(unwrap).map(\.id) }
        #expect(found == [3, 5])
        let negated = #Predicate<QPItem> { !($0.optInt! > 3) }
        let found2 = try await realm.read { r in try r.objects(QPItem.self).filter(negated).map(\.id) }
        #expect(found2 == [4])
        #expect(try await ids(realm, #Predicate { $0.optInt != nil && $0.optInt! > 3 }) == [1, 3])
        #expect(try await ids(realm, #Predicate { $0.optInt == nil ? $0.int > 5 : $0.optInt! > 5 }) == [1, 3, 5])
    }

    @Test func strings() async throws {
        let realm = try await openFoundationRealm()
        #expect(try await ids(realm, #Predicate { $0.string.contains("è") }) == [2])
        #expect(try await ids(realm, #Predicate { $0.string.contains("пятё") }) == [3])
        #expect(try await ids(realm, #Predicate { $0.string.contains("пяте") }) == [])
        #expect(try await ids(realm, #Predicate { $0.string.starts(with: "file") }) == [4])
        #expect(try await ids(realm, #Predicate { $0.string.starts(with: "") }) == [1, 2, 3, 4, 5])
        #expect(try await ids(realm, #Predicate { $0.string.contains("") }) == [1, 2, 3, 4, 5])
        #expect(try await ids(realm, #Predicate { "file10 and more".contains($0.string) }) == [4])
        #expect(try await ids(realm, #Predicate { $0.string.count == 5 }) == [1])
        #expect(try await ids(realm, #Predicate { $0.string.count > 7 }) == [2, 3])
        #expect(try await ids(realm, #Predicate { $0.optString?.isEmpty == true }) == [4])
        #expect(try await ids(realm, #Predicate { $0.string < "b" }) == [1, 2])
        #expect(try await ids(realm, #Predicate { $0.string >= "😀" }) == [5])
    }

    @Test func sequencesAndRanges() async throws {
        let realm = try await openFoundationRealm()
        let wanted = [3, 5, 99]
        let names: Set<String> = ["apple", "file10"]
        #expect(try await ids(realm, #Predicate { wanted.contains($0.id) }) == [3, 5])
        #expect(try await ids(realm, #Predicate { names.contains($0.string) }) == [1, 4])
        let optionals: [Int?] = [nil, 7]
        #expect(try await ids(realm, #Predicate { optionals.contains($0.optInt) }) == [1, 2, 5])
        #expect(try await ids(realm, #Predicate { (0...5).contains($0.int) }) == [1, 4])
        #expect(try await ids(realm, #Predicate { (0..<5).contains($0.int) }) == [4])
        let range = 1.0...3.0
        #expect(try await ids(realm, #Predicate { range.contains($0.double) }) == [1, 5])
        let from = 7...
        #expect(try await ids(realm, #Predicate { from.contains($0.int) }) == [3, 5])
        #expect(try await ids(realm, #Predicate { ($0.int...12).contains(7) }) == [1, 2, 4, 5])
        let words: [String?] = ["кот", "x"]
        #expect(try await ids(realm, #Predicate { item in words.contains { $0 == item.optString } }) == [1, 3])
        #expect(try await ids(realm, #Predicate { item in words.allSatisfy { $0 != item.optString } }) == [2, 4, 5])
    }

    @Test func lists() async throws {
        let realm = try await openFoundationRealm()
        #expect(try await ids(realm, #Predicate { $0.tags.count == 0 }) == [2])
        #expect(try await ids(realm, #Predicate { $0.tags.isEmpty }) == [2])
        #expect(try await ids(realm, #Predicate { !$0.tags.isEmpty && $0.tags.count < 2 }) == [3, 5])
        #expect(try await ids(realm, #Predicate { $0.tags.contains { $0.weight > 4 } }) == [1, 3, 4, 5])
        #expect(try await ids(realm, #Predicate { $0.tags.contains { $0.weight > 4 && $0.label == "red" } }) == [])
        #expect(try await ids(realm, #Predicate { $0.tags.allSatisfy { $0.weight > 4 } }) == [2, 3, 5])
        #expect(try await ids(realm, #Predicate { $0.tags.filter { $0.weight > 1 }.count == 2 }) == [4])
        #expect(try await ids(realm, #Predicate { $0.tags.filter { $0.weight > 1 }.isEmpty }) == [2])
        #expect(
            try await ids(realm, #Predicate { $0.tags.filter { $0.weight > 1 }.contains { $0.label == "red" } }) == [])
        #expect(try await ids(realm, #Predicate { $0.tags.contains { ($0.rating ?? 0) > 1 } }) == [3, 4])
        #expect(try await ids(realm, #Predicate { item in item.tags.contains { $0.weight > item.int } }) == [4])
        #expect(try await ids(realm, #Predicate { $0.fans.count > 1 }) == [3])
        #expect(try await ids(realm, #Predicate { $0.fans.contains { $0.name == "Émile" } }) == [3])
        #expect(try await ids(realm, #Predicate { $0.owner?.items.contains { $0.int < 0 } == true }) == [1, 2])
    }

    @Test func idsOfLinkedObjects() async throws {
        // Model objects are not Codable, so a #Predicate cannot hold one as a constant: compare
        // primary keys instead.
        let realm = try await openFoundationRealm()
        #expect(try await ids(realm, #Predicate { $0.tags.contains { $0.id == 1 } }) == [1, 4])
        #expect(try await ids(realm, #Predicate { $0.owner?.id == 1 }) == [1, 2])
        #expect(try await ids(realm, #Predicate { $0.fans.contains { $0.score == nil } }) == [3])
    }

    @Test func mapsMixedValuesAndDecimals() async throws {
        let realm = try await openFoundationRealm()
        try await realm.write { r in
            let items = try r.objects(QPItem.self).sorted(byKeyPath: "id").map { $0 }
            items[0].settings["theme"] = "dark"
            items[0].settings["font"] = "serif"
            items[2].settings["theme"] = "light"
            items[1].pals["a"] = r.object(ofType: QPOwner.self, forPrimaryKey: 1)
            items[1].pals["b"] = nil
            items[0].payload = 3
            items[1].payload = "3"
            items[2].payload = 3.0
            items[3].payload = [3]
            items[0].price = Decimal(string: "2.50")!
            items[1].price = Decimal(string: "2.5000000000000000000000000001")!
            items[4].price = Decimal(string: "-7")!
        }
        #expect(try await ids(realm, #Predicate { $0.settings.count == 2 }) == [1])
        #expect(try await ids(realm, #Predicate { !$0.settings.isEmpty }) == [1, 3])
        #expect(try await ids(realm, #Predicate { $0.pals.count > 0 }) == [2])
        let three = AnyValue.int(3)
        #expect(try await ids(realm, #Predicate { $0.payload == three }) == [1])
        #expect(try await ids(realm, #Predicate { $0.payload != three }) == [2, 3, 4, 5])
        let double = AnyValue.double(3)
        #expect(try await ids(realm, #Predicate { $0.payload == double }) == [3])
        let null = AnyValue.null
        #expect(try await ids(realm, #Predicate { $0.payload == null }) == [5])
        let list = AnyValue.list([3])
        await #expect(throws: LiveObjectsError.self) {
            try await realm.read { r in try r.objects(QPItem.self).filter(#Predicate { $0.payload == list }).count }
        }
        let price = Decimal(string: "2.5")!
        #expect(try await ids(realm, #Predicate { $0.price > price }) == [2])
        #expect(try await ids(realm, #Predicate { $0.price <= price && $0.price != 0 }) == [1, 5])
    }

    @Test func unsupportedNodesAreRefusedByName() async throws {
        let realm = try await openFoundationRealm()
        func message(_ predicate: Predicate<QPItem>) async -> String {
            do {
                _ = try await realm.read { r in try r.objects(QPItem.self).filter(predicate).count }
                return "no error"
            } catch let error as LiveObjectsError {
                #expect(error.code == .invalidQuery)
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(await message(#Predicate { $0.int + 1 > 3 }).contains("PredicateExpressions.Arithmetic"))
        #expect(await message(#Predicate { -$0.int > 3 }).contains("PredicateExpressions.UnaryMinus"))
        #expect(
            await message(#Predicate { $0.tags[0].weight > 3 }).contains(
                "PredicateExpressions.CollectionIndexSubscript"))
        #expect(await message(#Predicate { $0.scratch > 3 }).contains("does not read a persisted property"))
        let first = await message(#Predicate { $0.tags.first?.weight == 3 })
        #expect(first.contains("only count and isEmpty"), "\(first)")
    }

    @Test func readmeExample() async throws {
        let realm = try await openQueryRealm()
        let out = try await realm.read { r -> [[Int]] in
            let dogs = r.objects(Dog.self)
            return [
                try dogs.filter("age > %@ AND owner.name BEGINSWITH[c] %@", 3, "an").map(\.id),
                dogs.where { $0.age > 3 && $0.owner.name.starts(with: "an", options: .caseInsensitive) }.map(\.id),
                try dogs.filter(#Predicate { $0.age > 3 && $0.owner?.name.starts(with: "An") == true }).map(\.id),
                try dogs.sorted(using: [SortDescriptor(\.age, order: .reverse), SortDescriptor(\.name)]).prefix(2).map(
                    \.id),
            ]
        }
        #expect(out == [[2], [2], [2], [8, 4]])
    }

    @Test func sortDescriptors() async throws {
        let realm = try await openFoundationRealm()
        let out = try await realm.read { r -> [[Int]] in
            let items = r.objects(QPItem.self)
            return [
                try items.sorted(using: SortDescriptor(\.int)).map(\.id),
                try items.sorted(using: [SortDescriptor(\.optInt, order: .reverse), SortDescriptor(\.id)]).map(\.id),
                try items.sorted(using: [SortDescriptor(\.owner?.name), SortDescriptor(\.double, order: .reverse)]).map(
                    \.id),
                try items.sorted(using: SortDescriptor(\.string, comparator: .lexical)).map(\.id),
                try items.filter(#Predicate { $0.int > 0 }).sorted(using: SortDescriptor(\.date, order: .reverse)).map(
                    \.id),
            ]
        }
        #expect(out[0] == [2, 4, 1, 5, 3])
        #expect(out[1] == [3, 1, 4, 2, 5])
        #expect(out[2] == [4, 1, 2, 3, 5])
        #expect(out[3] == [2, 1, 4, 3, 5])
        #expect(out[4] == [5, 3, 1])
        // The same orders as Foundation's own sorting.
        let foundation = try await realm.read { r -> [[Int]] in
            let items = Array(r.objects(QPItem.self))
            return [
                items.sorted(using: SortDescriptor(\.int)).map(\.id),
                items.sorted(using: [SortDescriptor(\.optInt, order: .reverse), SortDescriptor(\.id)]).map(\.id),
                items.sorted(using: SortDescriptor(\.string, comparator: .lexical)).map(\.id),
            ]
        }
        #expect(foundation == [out[0], out[1], out[3]])
    }
}
