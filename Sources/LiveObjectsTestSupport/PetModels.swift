import Foundation
import LiveObjects

// The "PetSchema" models of the source documents, shared by tests, walkthroughs and benchmarks.

/// A person who owns dogs.
package final class Person: Object {
    @Persisted(primaryKey: true) package var id = 0
    @Persisted package var name = ""
    @Persisted package var age = 0
    @Persisted package var dogs: List<Dog>
    @Persisted package var address: Address?
    @Persisted(originProperty: "members") package var clubs: LinkingObjects<DogClub>
}

/// A dog, owned by a person.
package final class Dog: Object {
    @Persisted(primaryKey: true) package var id = 0
    @Persisted(indexed: true) package var name = ""
    @Persisted package var age = 0
    @Persisted package var owner: Person?
    @Persisted(deleteRule: .cascade) package var toys: List<DogToy>
    @Persisted(originProperty: "dogs") package var walkers: LinkingObjects<Person>
    /// Not stored.
    var isSelected = false
}

/// A toy; deleted with the dog that owns it (cascade).
package final class DogToy: Object {
    @Persisted(primaryKey: true) package var id = 0
    @Persisted package var name = ""
    @Persisted(originProperty: "toys") package var dogs: LinkingObjects<Dog>
}

/// A club of people. A club cannot be deleted while it has a president (deny).
package final class DogClub: Object {
    @Persisted(primaryKey: true) package var name = ""
    @Persisted package var members: List<Person>
    @Persisted(deleteRule: .deny) package var president: Person?
}

/// A postal address, embedded in a person.
package final class Address: EmbeddedObject {
    @Persisted package var street = ""
    @Persisted package var city = ""
}

/// Every pet model type.
package let petModelTypes: [Object.Type] = [Person.self, Dog.self, DogToy.self, DogClub.self, Address.self]
