import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@Suite struct QueryTests {
    func ids(_ realm: Realm, _ predicate: String, _ args: [PropertyValue] = []) async throws -> [Int] {
        try await realm.read { r in try r.objects(Dog.self).filter(predicate, arguments: args).map(\.id) }
    }

    @Test func comparisonsAndLogic() async throws {
        let realm = try await openQueryRealm()
        #expect(try await ids(realm, "age > 10") == [2, 4, 8])
        #expect(try await ids(realm, "age > 10 AND name BEGINSWITH 'f'") == [2])
        #expect(try await ids(realm, "age <= 2 OR id == 7") == [5, 6, 7])
        #expect(try await ids(realm, "NOT (age > 2)") == [5, 6])
        #expect(try await ids(realm, "age BETWEEN {3, 7}") == [1, 3, 7])
        #expect(try await ids(realm, "id IN {8, 1, 99}") == [1, 8])
        #expect(try await ids(realm, "owner == nil") == [5, 6])
        #expect(try await ids(realm, "owner != nil AND owner.age > 33") == [4, 7, 8])
        #expect(try await ids(realm, "age > $0 && name != $1", [5, "fido"]) == [3, 4, 8])
        #expect(try await ids(realm, "TRUEPREDICATE").count == 8)
        #expect(try await ids(realm, "FALSEPREDICATE").isEmpty)
    }

    @Test func unicodeMatching() async throws {
        let realm = try await openQueryRealm()
        #expect(try await ids(realm, "name CONTAINS[c] 'пятёр'") == [3])
        #expect(try await ids(realm, "name CONTAINS 'пятёр'").isEmpty)
        #expect(try await ids(realm, "name CONTAINS[cd] 'пятер'") == [3])
        #expect(try await ids(realm, "name ==[cd] 'creme brulee'") == [4])
        #expect(try await ids(realm, "name ==[c] 'creme brulee'").isEmpty)
        #expect(try await ids(realm, "name LIKE 'file?'") == [6])
        #expect(try await ids(realm, "name LIKE[c] 'F*0'") == [5])
        #expect(try await ids(realm, "name ENDSWITH[c] 'NA'") == [8])
        #expect(try await ids(realm, "owner.name BEGINSWITH[cd] 'emi'") == [4])
    }

    @Test func collections() async throws {
        let realm = try await openQueryRealm()
        let people = { (predicate: String) async throws -> [Int] in
            try await realm.read { r in try r.objects(Person.self).filter(predicate).map(\.id) }
        }
        #expect(try await people("ANY dogs.age > 10") == [1, 3, 4])
        #expect(try await people("ALL dogs.age > 4") == [2, 3, 4])
        #expect(try await people("NONE dogs.age > 4") == [])
        #expect(try await people("dogs.@count == 2") == [1, 4])
        #expect(try await people("dogs.@max.age >= 12") == [3, 4])
        #expect(try await people("dogs.@sum.age == 19") == [4])
        #expect(try await people("dogs.@avg.age == 7") == [1, 2])
        #expect(
            try await people("SUBQUERY(dogs, $d, $d.age > 2 AND $d.name CONTAINS[c] 'e').@count >= 1") == [1, 3, 4])
        #expect(try await people("dogs.name CONTAINS[c] 'BAN'") == [4])
        let walkers = try await realm.read { r in try r.objects(Dog.self).filter("ANY walkers.name == 'Ann'").map(\.id)
        }
        #expect(walkers == [1, 2])
    }

    @Test func typedQueries() async throws {
        let realm = try await openQueryRealm()
        let result = try await realm.read { r -> [[Int]] in
            let dogs = r.objects(Dog.self)
            return [
                dogs.where { $0.age > 10 }.map(\.id),
                dogs.where { $0.age > 2 && $0.name.contains("E", options: [.caseInsensitive]) }.map(\.id),
                dogs.where { $0.owner.name == "Ann" }.map(\.id),
                dogs.where { $0.owner.name.starts(with: "emi", options: [.caseInsensitive, .diacriticInsensitive]) }
                    .map(\.id),
                dogs.where { !($0.age < 12) || $0.id.in([1, 2]) }.map(\.id),
                dogs.where { $0.age.contains(3...5) }.map(\.id),
                r.objects(Person.self).where { $0.dogs.age > 10 }.map(\.id),
                r.objects(Person.self).where { $0.dogs.count == 2 }.map(\.id),
                r.objects(Person.self).where { $0.dogs.where { $0.age > 2 }.count >= 2 }.map(\.id),
                r.objects(Person.self).where { $0.dogs.max(of: \.age) >= 12 }.map(\.id),
            ]
        }
        #expect(
            result == [
                [2, 4, 8], [1, 4, 7], [1, 2], [4], [1, 2, 4, 8], [1, 7], [1, 3, 4], [1, 4], [1, 4], [3, 4],
            ])
    }

    @Test func sorting() async throws {
        let realm = try await openQueryRealm()
        let names = try await realm.read { r -> [[String]] in
            let dogs = r.objects(Dog.self)
            return [
                dogs.sorted(by: \.name).map(\.name),
                dogs.sorted(by: \.name, comparison: .caseInsensitive).map(\.name),
                dogs.sorted(by: \.name, comparison: .natural).map(\.name),
                try dogs.filter("age < 10").sorted(byKeyPath: "age", ascending: false).map(\.name),
                dogs.sorted(by: \.owner?.name, ascending: true).map(\.name),
            ]
        }
        #expect(names[0] == ["Banana", "Crème Brûlée", "Rex", "apple", "fido", "file10", "file2", "Пятёрочка"])
        #expect(names[1] == ["apple", "Banana", "Crème Brûlée", "fido", "file10", "file2", "Rex", "Пятёрочка"])
        #expect(names[2] == ["apple", "Banana", "Crème Brûlée", "fido", "file2", "file10", "Rex", "Пятёрочка"])
        #expect(names[3] == ["Пятёрочка", "apple", "Rex", "file2", "file10"])
        // nil owners first, then by owner name (Ann, bob, Émile, Дмитрий); stable within an owner.
        #expect(names[4] == ["file10", "file2", "Rex", "fido", "Пятёрочка", "Crème Brûlée", "apple", "Banana"])
    }

    @Test func distinctLimitOffsetAggregates() async throws {
        let realm = try await openQueryRealm()
        let out = try await realm.read { r -> [String] in
            let dogs = r.objects(Dog.self)
            let owners = try dogs.filter("owner != nil").distinct(byKeyPaths: ["owner.name"]).map(\.id)
            let page = dogs.sorted(by: \.age).offset(2).limit(3).map(\.age)
            let ann = r.object(ofType: Person.self, forPrimaryKey: 1)!
            return [
                "\(owners)", "\(page)", "\(dogs.max(of: \.age)!)", "\(dogs.sum(of: \.age))",
                "\(dogs.average(of: \.age)!)", "\(ann.dogs.max(of: \.age)!)", "\(ann.dogs.min(of: \.name)!)",
                "\(dogs.count)", "\(try dogs.filter("age > 100").max(of: \.age) as Any)",
            ]
        }
        #expect(out == ["[1, 3, 4, 7]", "[3, 5, 7]", "14", "55", "6.875", "11", "Rex", "8", "nil"])
    }

    @Test func resultsAreLive() async throws {
        let realm = try await openQueryRealm()
        let counts = try await realm.write { r -> [Int] in
            let old = try r.objects(Dog.self).filter("age > 10")
            let before = old.count
            r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 20
            let after = old.count
            try r.delete(r.object(ofType: Dog.self, forPrimaryKey: 2)!)
            return [before, after, old.count]
        }
        #expect(counts == [3, 4, 3])
    }

    @Test func parseErrorsPointAtTheColumn() async throws {
        let realm = try await openQueryRealm()
        do {
            _ = try await realm.read { r in try r.objects(Dog.self).filter("age > > 3").count }
            Issue.record("expected an error")
        } catch let error as LiveObjectsError {
            #expect(error.code == .invalidQuery)
            #expect(error.message.contains("column 7"))
        }
        do {
            _ = try await realm.read { r in try r.objects(Dog.self).filter("age > 3 AND nmae == 'x'").count }
            Issue.record("expected an error")
        } catch let error as LiveObjectsError {
            #expect(error.code == .unknownProperty)
            #expect(error.message.contains("column 13"))
        }
        await #expect(throws: LiveObjectsError.self) {
            _ = try await realm.read { r in try r.objects(Dog.self).filter("name > 3").count }
        }
    }

    @Test func indexesGiveTheSameAnswers() async throws {
        let realm = try await openQueryRealm()
        // name is indexed on Dog, id is the primary key.
        #expect(try await ids(realm, "name == 'Rex' OR name == 'apple'") == [1, 7])
        #expect(try await ids(realm, "name IN {'fido', 'nope', 'Banana'} AND age > 12") == [8])
        #expect(try await ids(realm, "id == 3 AND name == 'Пятёрочка'") == [3])
        // Ranges on the indexed name use the sorted index.
        #expect(try await ids(realm, "name >= 'apple' AND name < 'file2'") == [2, 5, 7])
        #expect(try await ids(realm, "name BETWEEN {'Banana', 'Rex'}") == [1, 4, 8])
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "Max" }
        #expect(try await ids(realm, "name > 'M' AND name < 'N'") == [1])
        #expect(try await ids(realm, "name == 'Rex'") == [])
        #expect(try await ids(realm, "name == 'Max'") == [1])
    }
}

@Suite struct QueryRegressionTests {
    /// `!=` with `[c]`/`[d]` holds for nil, as `!=` without options does, both when the
    /// column is scanned and when the value is reached through a link (row by row).
    @Test func notEqualWithOptionsHoldsForNil() async throws {
        let realm = try await openQueryRealm()
        let ids = { (predicate: String) async throws -> [Int] in
            try await realm.read { r in try r.objects(Dog.self).filter(predicate).map(\.id) }
        }
        // Dogs 5 and 6 have no owner.
        #expect(try await ids("owner.name != 'Ann'") == [3, 4, 5, 6, 7, 8])
        #expect(try await ids("owner.name !=[c] 'ann'") == [3, 4, 5, 6, 7, 8])
        #expect(try await ids("owner.name !=[cd] 'EMILE'") == [1, 2, 3, 5, 6, 7, 8])
        #expect(try await ids("NOT (owner.name ==[c] 'ann')") == [3, 4, 5, 6, 7, 8])
        let typed = try await realm.read { r in
            r.objects(Dog.self).where { !$0.owner.name.equals("ann", options: .caseInsensitive) }.map(\.id)
        }
        #expect(typed == [3, 4, 5, 6, 7, 8])
    }
}
