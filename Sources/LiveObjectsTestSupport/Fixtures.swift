import Foundation
import LiveObjects

// The realms the tests open, in one place: a fresh in-memory realm of any models, and the small
// data sets several test files query.

/// Opens a fresh in-memory realm of `objectTypes`: its identifier is `name` followed by a UUID,
/// so no other realm shares it.
///
/// - Parameters:
///   - name: The start of the identifier; the calling function's name by default.
///   - objectTypes: The model types of the realm.
/// - Returns: The open realm, empty.
/// - Throws: `LiveObjectsError` when the models do not make a valid schema.
package func openFreshRealm(_ name: String = #function, objectTypes: [Object.Type]) async throws(LiveObjectsError)
    -> Realm
{
    try await Realm.open(.init(identifier: "\(name)-\(UUID())", objectTypes: objectTypes))
}

/// Opens a fresh, empty in-memory realm of the pet models (``petModelTypes``).
///
/// - Parameter name: The start of the identifier; the calling function's name by default.
/// - Returns: The open realm, empty.
/// - Throws: `LiveObjectsError` when the realm cannot be opened.
package func openPets(_ name: String = #function) async throws(LiveObjectsError) -> Realm {
    try await openFreshRealm(name, objectTypes: petModelTypes)
}

/// Opens a fresh realm of the pet models holding a small data set for query tests: people 1…4
/// (`Ann`, `bob`, `Émile`, `Дмитрий`) and dogs 1…8 with Cyrillic, accented and numbered names,
/// six of them owned (and in their owner's `dogs`).
///
/// - Returns: The open realm, filled.
/// - Throws: `LiveObjectsError` when the realm cannot be opened or filled.
package func openQueryRealm() async throws -> Realm {
    let realm = try await openPets("query")
    try await realm.write { realm in
        let people: [(Int, String, Int)] = [(1, "Ann", 30), (2, "bob", 25), (3, "Émile", 41), (4, "Дмитрий", 35)]
        for (id, name, age) in people {
            _ = try realm.create(Person.self, value: ["id": id, "name": name, "age": age])
        }
        let dogs: [(Int, String, Int, Int?)] = [
            (1, "Rex", 3, 1), (2, "fido", 11, 1), (3, "Пятёрочка", 7, 2), (4, "Crème Brûlée", 12, 3),
            (5, "file10", 1, nil), (6, "file2", 2, nil), (7, "apple", 5, 4), (8, "Banana", 14, 4),
        ]
        for (id, name, age, owner) in dogs {
            let dog = try realm.create(Dog.self, value: ["id": id, "name": name, "age": age, "owner": owner as Any])
            dog.owner?.dogs.append(dog)
        }
    }
    return realm
}

/// Opens a fresh realm of the query models (``queryPropertyModelTypes``) holding a small data
/// set of `QPItem`s with nils, links, lists and non-Latin strings: owners 1…3, tags 1…3 and
/// items 1…5; owners 1 and 2 have item 3 as their favorite.
///
/// - Returns: The open realm, filled.
/// - Throws: `LiveObjectsError` when the realm cannot be opened or filled.
package func openFoundationRealm() async throws -> Realm {
    let realm = try await openFreshRealm("foundation", objectTypes: queryPropertyModelTypes)
    try await realm.write { r in
        let owners = [(1, "Ann", 10 as Int?), (2, "Émile", nil), (3, "Дмитрий", 3)]
        for (id, name, score) in owners {
            _ = try r.create(QPOwner.self, value: ["id": id, "name": name, "score": score as Any])
        }
        let tags = [(1, "red", 1, 0.5 as Double?), (2, "Grün", 5, nil), (3, "ΣΊΣΥΦΟΣ", 9, 2.5)]
        for (id, label, weight, rating) in tags {
            _ = try r.create(QPTag.self, value: ["id": id, "label": label, "weight": weight, "rating": rating as Any])
        }
        let items: [(Int, Int, Int?, Double, String, String?, Bool, Int?, [Int])] = [
            (1, 5, 7, 1.5, "apple", "x", true, 1, [1, 2]),
            (2, -3, nil, 0.0, "Crème Brûlée", nil, false, 1, []),
            (3, 12, 12, -2.25, "пятёрочка", "кот", true, 2, [3]),
            (4, 0, 0, 9.75, "file10", "", false, nil, [2, 3, 1]),
            (5, 7, nil, 3.0, "😀 emoji", "Ωμέγα", true, 3, [2]),
        ]
        for (id, int, optInt, double, string, optString, flag, owner, tagIDs) in items {
            let item = try r.create(
                QPItem.self,
                value: [
                    "id": id, "int": int, "optInt": optInt as Any, "double": double, "string": string,
                    "optString": optString as Any, "flag": flag, "code": "c\(id % 3)",
                    "date": Date(timeIntervalSinceReferenceDate: Double(id) * 1000),
                    "owner": owner as Any,
                ])
            for tag in tagIDs { item.tags.append(r.object(ofType: QPTag.self, forPrimaryKey: tag)!) }
        }
        r.object(ofType: QPOwner.self, forPrimaryKey: 1)!.favorite = r.object(ofType: QPItem.self, forPrimaryKey: 3)
        r.object(ofType: QPOwner.self, forPrimaryKey: 2)!.favorite = r.object(ofType: QPItem.self, forPrimaryKey: 3)
    }
    return realm
}
