/// A random number generator whose whole output is fixed by a 64-bit seed, on every platform and
/// Swift version: the property-based harness needs a seed to replay a sequence exactly.
///
/// The state is four 64-bit words filled from the seed by SplitMix64; each draw is one step of
/// xoshiro256**.
package struct SeededRandomNumberGenerator: RandomNumberGenerator, Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// Creates a generator from a seed. Equal seeds give equal sequences.
    package init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix()
        s1 = splitMix()
        s2 = splitMix()
        s3 = splitMix()
    }

    package mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotateLeft(s3, 45)
        return result
    }

    private func rotateLeft(_ x: UInt64, _ k: UInt64) -> UInt64 {
        (x << k) | (x >> (64 - k))
    }

    /// A uniformly drawn integer in `0..<upperBound`, computed the same way on every platform
    /// (the standard library's `random(in:using:)` does not promise a fixed algorithm).
    package mutating func below(_ upperBound: Int) -> Int {
        precondition(upperBound > 0)
        let bound = UInt64(upperBound)
        let limit = UInt64.max - UInt64.max % bound
        while true {
            let x = next()
            if x < limit { return Int(x % bound) }
        }
    }

    /// A uniformly drawn integer in a closed range.
    package mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    /// True with the given probability, in percent.
    package mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }

    /// A uniformly drawn element of a non-empty collection.
    package mutating func element<C: RandomAccessCollection>(of collection: C) -> C.Element
    where C.Index == Int {
        collection[collection.startIndex + below(collection.count)]
    }
}
