/// The plain-Swift baseline: what a developer would write without a database. Dictionaries
/// keyed by id, a name index and an owner index kept by hand; filters iterate the dictionary's
/// values; the case-insensitive match compares ASCII bytes.
struct RawPerson: Codable, Sendable {
    var id: Int
    var name: String
    var age: Int
}

struct RawDog: Codable, Sendable {
    var id: Int
    var name: String
    var age: Int
    var ownerId: Int
}

struct RawStore {
    var persons: [Int: RawPerson] = [:]
    var dogs: [Int: RawDog] = [:]
    /// Dog ids by name.
    var dogsByName: [String: [Int]] = [:]
    /// Dog ids by owner id.
    var dogsByOwner: [Int: [Int]] = [:]

    /// Everything inserted in one go (the counts are known, so the id dictionaries reserve
    /// their capacity up front).
    init(_ data: Dataset) {
        persons.reserveCapacity(data.personCount)
        for i in 0..<data.personCount {
            persons[i + 1] = RawPerson(id: i + 1, name: data.personNames[i], age: data.personAges[i])
        }
        dogs.reserveCapacity(data.dogCount)
        for i in 0..<data.dogCount {
            let dog = RawDog(id: i + 1, name: data.dogNames[i], age: data.dogAges[i], ownerId: data.dogOwners[i])
            dogs[dog.id] = dog
            dogsByName[dog.name, default: []].append(dog.id)
            dogsByOwner[dog.ownerId, default: []].append(dog.id)
        }
    }
}

/// Whether `haystack` contains `needle`, ignoring ASCII case (what `CONTAINS[c]` means for
/// ASCII text).
@inline(__always)
func asciiContainsIgnoringCase(_ haystack: String, _ needle: [UInt8]) -> Bool {
    @inline(__always) func lower(_ b: UInt8) -> UInt8 { b &- 65 < 26 ? b | 0x20 : b }
    var haystack = haystack
    return haystack.withUTF8 { h in
        let n = needle.count
        guard n <= h.count else { return false }
        if n == 0 { return true }
        for start in 0...(h.count - n) {
            var i = 0
            while i < n && lower(h[start + i]) == needle[i] { i += 1 }
            if i == n { return true }
        }
        return false
    }
}

final class RawSystem: BenchSystem {
    static let name = "raw"
    var store: RawStore?

    func insertAll(_ data: Dataset) async throws -> Sample {
        let clock = ContinuousClock()
        let start = clock.now
        let store = RawStore(data)
        let elapsed = seconds(start.duration(to: clock.now))
        return Sample(seconds: elapsed, checksum: store.dogs.count + store.persons.count)
    }

    func load(_ data: Dataset) async throws { store = RawStore(data) }

    func unload() { store = nil }

    func pkLookup(_ data: Dataset) async throws -> Sample {
        let store = store!
        let clock = ContinuousClock()
        let start = clock.now
        var checksum = 0
        for id in data.pkLookupIds {
            let dog = store.dogs[id]!
            checksum &+= dog.age &+ dog.name.utf8.count
        }
        return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
    }

    func filterUnindexed(_ data: Dataset) async throws -> Sample {
        let store = store!
        let clock = ContinuousClock()
        let start = clock.now
        let needle = Array("a".utf8)
        let matches = store.dogs.values.filter { $0.age > 10 && asciiContainsIgnoringCase($0.name, needle) }
        let count = matches.count
        let rows = matches.map { (id: $0.id, name: $0.name) }
        let elapsed = seconds(start.duration(to: clock.now))
        return Sample(seconds: elapsed, checksum: filterChecksum(count: count, rows))
    }

    func filterIndexedEq(_ data: Dataset) async throws -> Sample {
        let store = store!
        let clock = ContinuousClock()
        let start = clock.now
        var checksum = 0
        for name in data.eqLookupNames {
            for id in store.dogsByName[name] ?? [] { checksum &+= store.dogs[id]!.id }
        }
        return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
    }

    func indexedEqCount(_ data: Dataset) async throws -> Sample {
        let store = store!
        let clock = ContinuousClock()
        let start = clock.now
        var checksum = 0
        for name in data.eqLookupNames { checksum &+= store.dogsByName[name]?.count ?? 0 }
        return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
    }

    func toMany(_ data: Dataset) async throws -> Sample {
        let store = store!
        let clock = ContinuousClock()
        let start = clock.now
        var checksum = 0
        for id in data.toManyPersonIds {
            for dogId in store.dogsByOwner[id] ?? [] { checksum &+= store.dogs[dogId]!.age &+ 1 }
        }
        return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
    }

    func inverse(_ data: Dataset) async throws -> Sample {
        let store = store!
        let clock = ContinuousClock()
        let start = clock.now
        var checksum = 0
        for id in data.inverseDogIds {
            let owner = store.persons[store.dogs[id]!.ownerId]!
            checksum &+= owner.id &+ owner.name.utf8.count
        }
        return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: checksum)
    }

    /// A copy of the store: its dictionaries are copy-on-write values, so this is what a Swift
    /// developer would hand to another task.
    func freeze(_ data: Dataset) async throws -> Sample {
        let clock = ContinuousClock()
        let start = clock.now
        let snapshot = store!
        let count = await Task.detached { snapshot.dogs.count }.value
        return Sample(seconds: seconds(start.duration(to: clock.now)), checksum: count)
    }
}
