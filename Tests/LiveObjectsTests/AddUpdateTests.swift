import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// `add(_:update:)` of an unmanaged object over an existing one sets every stored property,
/// links included: a nil link or an empty list clears what the existing object had. (Found by
/// the property-based harness: the fast path of `add` skipped nil links and empty lists, which
/// is right for a new object but left an existing object's links in place.)
@Suite struct AddUpdateTests {
    private func annWithDogsAndAddress(_ realm: Realm) async throws {
        try await realm.write { realm in
            let ann = try realm.create(Person.self, value: ["id": 1, "name": "Ann", "address": ["city": "Oslo"]])
            let rex = try realm.create(Dog.self, value: ["id": 10, "name": "Rex", "owner": ann])
            ann.dogs.append(rex)
        }
    }

    @Test(arguments: [UpdatePolicy.modified, .all])
    func addOverAnExistingObjectClearsItsLinks(update: UpdatePolicy) async throws {
        let realm = try await openPets("add-\(update)")
        try await annWithDogsAndAddress(realm)
        let ann = Person()
        ann.id = 1
        ann.name = "Ann B."
        let rex = Dog()
        rex.id = 10
        rex.name = "Rex"
        try await realm.write(adding: [ann, rex], update: update)
        let state = try await realm.read { realm -> String in
            let ann = realm.object(ofType: Person.self, forPrimaryKey: 1)!
            let rex = realm.object(ofType: Dog.self, forPrimaryKey: 10)!
            return "\(ann.name) dogs=\(ann.dogs.count) address=\(ann.address?.city ?? "nil") "
                + "addresses=\(realm.objects(Address.self).count) owner=\(rex.owner?.name ?? "nil") "
                + "walkers=\(rex.walkers.count)"
        }
        #expect(state == "Ann B. dogs=0 address=nil addresses=0 owner=nil walkers=0")
    }

    @Test func addOverAnExistingObjectReplacesItsLinks() async throws {
        let realm = try await openPets()
        try await annWithDogsAndAddress(realm)
        let max = Dog()
        max.id = 11
        max.name = "Max"
        let ann = Person()
        ann.id = 1
        ann.name = "Ann"
        ann.dogs.append(max)
        let address = Address()
        address.city = "Bergen"
        ann.address = address
        try await realm.write(adding: [ann], update: .modified)
        let state = try await realm.read { realm -> String in
            let ann = realm.object(ofType: Person.self, forPrimaryKey: 1)!
            return "\(ann.dogs.map(\.name)) \(ann.address?.city ?? "nil") \(realm.objects(Address.self).count)"
        }
        #expect(state == "[\"Max\"] Bergen 1")
    }
}
