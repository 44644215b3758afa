/// A small, fast, deterministic random number generator (SplitMix64), so that every run and
/// every system sees exactly the same data.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The generated data set, shared by the three systems.
///
/// Dogs have ids `1...dogCount`, persons `1...personCount` (`personCount` = `dogCount / 10`).
/// Every dog has an owner. Dog names are drawn from a pool of about `dogCount / 10` distinct
/// names, so an exact-name lookup finds about ten dogs; about half of the names contain an
/// `a` or `A`, and ages are uniform in `0..<20`, so `age > 10 AND name CONTAINS[c] 'a'` keeps
/// about a fifth of the dogs.
struct Dataset: Sendable {
    static let seed: UInt64 = 0x5EED_0006

    let dogCount: Int
    let personCount: Int
    /// Indexed by `id - 1`.
    let dogNames: [String]
    let dogAges: [Int]
    let dogOwners: [Int]
    let personNames: [String]
    let personAges: [Int]

    /// The inputs of the lookup workloads, drawn from the same seed.
    let pkLookupIds: [Int]  // 100,000 random dog ids
    let eqLookupNames: [String]  // 10,000 names of random dogs
    let toManyPersonIds: [Int]  // 10,000 random person ids
    let inverseDogIds: [Int]  // 10,000 random dog ids
    let notifyDogIds: [Int]  // 1,000 random dog ids, updated one per transaction

    static let pkLookupCount = 100_000
    static let relationLookupCount = 10_000
    static let notifyUpdateCount = 1_000

    init(n: Int) {
        var rng = SplitMix64(seed: Self.seed)
        let personCount = max(1, n / 10)
        dogCount = n
        self.personCount = personCount

        let dogNamePool = Self.namePool(count: max(1, n / 10), rng: &rng)
        let personNamePool = Self.namePool(count: max(1, personCount / 2), rng: &rng)

        var dogNames: [String] = []
        var dogAges: [Int] = []
        var dogOwners: [Int] = []
        dogNames.reserveCapacity(n)
        dogAges.reserveCapacity(n)
        dogOwners.reserveCapacity(n)
        for _ in 0..<n {
            dogNames.append(dogNamePool[Int.random(in: 0..<dogNamePool.count, using: &rng)])
            dogAges.append(Int.random(in: 0..<20, using: &rng))
            dogOwners.append(Int.random(in: 1...personCount, using: &rng))
        }
        var personNames: [String] = []
        var personAges: [Int] = []
        for _ in 0..<personCount {
            personNames.append(personNamePool[Int.random(in: 0..<personNamePool.count, using: &rng)])
            personAges.append(Int.random(in: 18..<90, using: &rng))
        }
        self.dogNames = dogNames
        self.dogAges = dogAges
        self.dogOwners = dogOwners
        self.personNames = personNames
        self.personAges = personAges

        pkLookupIds = (0..<Self.pkLookupCount).map { _ in Int.random(in: 1...n, using: &rng) }
        eqLookupNames = (0..<Self.relationLookupCount).map { _ in
            dogNames[Int.random(in: 0..<n, using: &rng)]
        }
        toManyPersonIds = (0..<Self.relationLookupCount).map { _ in
            Int.random(in: 1...personCount, using: &rng)
        }
        inverseDogIds = (0..<Self.relationLookupCount).map { _ in Int.random(in: 1...n, using: &rng) }
        notifyDogIds = (0..<Self.notifyUpdateCount).map { _ in Int.random(in: 1...n, using: &rng) }
    }

    /// Pronounceable names of two to four syllables, capitalized, e.g. "Bamoku".
    static func namePool(count: Int, rng: inout SplitMix64) -> [String] {
        let consonants = Array("bdfghklmnprstvz".utf8)
        let vowels = Array("aeiou".utf8)
        var pool: [String] = []
        pool.reserveCapacity(count)
        for _ in 0..<count {
            var bytes: [UInt8] = []
            let syllables = Int.random(in: 2...4, using: &rng)
            for _ in 0..<syllables {
                bytes.append(consonants[Int.random(in: 0..<consonants.count, using: &rng)])
                bytes.append(vowels[Int.random(in: 0..<vowels.count, using: &rng)])
            }
            bytes[0] -= 32  // ASCII upper case
            pool.append(String(decoding: bytes, as: UTF8.self))
        }
        return pool
    }
}
