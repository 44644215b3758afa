import Foundation
import LiveObjects

// The "PetSchema" models of the source documents, shared by tests, walkthroughs and benchmarks.

/// A person who owns dogs.
public final class Person: Object {
    @Persisted(primaryKey: true) public var id = 0
    @Persisted public var name = ""
    @Persisted public var age = 0
    @Persisted public var dogs: List<Dog>
    @Persisted public var address: Address?
    @Persisted(originProperty: "members") public var clubs: LinkingObjects<DogClub>
}

/// A dog, owned by a person.
public final class Dog: Object {
    @Persisted(primaryKey: true) public var id = 0
    @Persisted(indexed: true) public var name = ""
    @Persisted public var age = 0
    @Persisted public var owner: Person?
    @Persisted(deleteRule: .cascade) public var toys: List<DogToy>
    @Persisted(originProperty: "dogs") public var walkers: LinkingObjects<Person>
    /// Not stored.
    public var isSelected = false
}

/// A toy; deleted with the dog that owns it (cascade).
public final class DogToy: Object {
    @Persisted(primaryKey: true) public var id = 0
    @Persisted public var name = ""
    @Persisted(originProperty: "toys") public var dogs: LinkingObjects<Dog>
}

/// A club of people. A club cannot be deleted while it has a president (deny).
public final class DogClub: Object {
    @Persisted(primaryKey: true) public var name = ""
    @Persisted public var members: List<Person>
    @Persisted(deleteRule: .deny) public var president: Person?
}

/// A postal address, embedded in a person.
public final class Address: EmbeddedObject {
    @Persisted public var street = ""
    @Persisted public var city = ""
}

/// Every pet model type.
public let petModelTypes: [Object.Type] = [Person.self, Dog.self, DogToy.self, DogClub.self, Address.self]
