import LiveObjectsTestSupport
import Testing

@testable import LiveObjects

/// The storage of integer columns (`PackedIntArray`) against a plain `[Int64]`.
@Suite struct PackedIntArrayTests {
    /// A value of a random width class: mostly 1-byte values, so that chunks start narrow and
    /// widen later, and the extremes of every width.
    static func draw(_ rng: inout SeededRandomNumberGenerator) -> Int64 {
        switch rng.below(10) {
        case 0...4: Int64(rng.int(in: -128...127))
        case 5: Int64(rng.int(in: -40_000...40_000))
        case 6: Int64(rng.int(in: -3_000_000_000...3_000_000_000))
        case 7:
            [Int64.min, .max, Int64(Int32.min), Int64(Int32.max), Int64(Int16.min) - 1, 128, -129, 32_768][
                rng.below(8)]
        default: Int64(bitPattern: rng.next())
        }
    }

    /// Random appends, writes, removals and copies agree with an array, through every reader
    /// (seeded; the seed and the operations are in the message).
    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func agreesWithArray(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var packed = PackedIntArray()
        var model: [Int64] = []
        var copies: [(PackedIntArray, [Int64])] = []
        var operations: [String] = []
        func fail(_ what: String) {
            Issue.record("seed \(seed): \(what); operations: \(operations.suffix(40).joined(separator: ", "))")
        }
        for step in 0..<600 {
            switch rng.below(20) {
            case 0...2:
                // A run of consecutive values (as auto-incremented keys), continuing the last
                // value or not, one by one or as a buffer, sometimes past a chunk's end, now
                // and then up to Int64.max.
                let n = rng.below(rng.below(4) == 0 ? 9_000 : 60) + 1
                let first =
                    rng.below(3) == 0
                    ? (model.last ?? 0) &+ 1
                    : rng.below(8) == 0 ? Int64.max - Int64(rng.below(5_000)) : Int64(rng.int(in: -200...5_000_000))
                let values = (0..<Int64(n)).map { first.addingReportingOverflow($0).partialValue }
                let buffered = rng.below(2) == 0
                operations.append("sequence \(n) from \(first)\(buffered ? " buffered" : "")")
                if buffered {
                    values.withUnsafeBufferPointer { packed.append(contentsOf: $0) }
                } else {
                    for v in values { packed.append(v) }
                }
                model += values
            case 3...8:
                // A run of appends, sometimes past a chunk's end.
                let n = rng.below(rng.below(8) == 0 ? 5_000 : 50)
                let narrow = rng.below(2) == 0
                operations.append("append \(n)\(narrow ? " narrow" : "")")
                for _ in 0..<n {
                    let v = narrow ? Int64(rng.int(in: -100...100)) : Self.draw(&rng)
                    packed.append(v)
                    model.append(v)
                }
            case 9...15 where !model.isEmpty:
                let i = rng.below(model.count)
                // Sometimes the value the position's neighbour in a run would give it.
                let v = rng.below(3) == 0 && i > 0 ? model[i - 1] &+ 1 : Self.draw(&rng)
                operations.append("set [\(i)] = \(v)")
                packed[i] = v
                model[i] = v
            case 16...17 where !model.isEmpty:
                let n = rng.below(min(model.count, 300)) + 1
                operations.append("removeLast \(n)")
                for _ in 0..<n {
                    packed.removeLast()
                    model.removeLast()
                }
            case 18:
                operations.append("copy")
                copies = copies.suffix(3) + [(packed, model)]
            default:
                operations.append("reserve")
                packed.reserveCapacity(model.count + 10_000)
            }
            guard packed.count == model.count else { return fail("count \(packed.count), expected \(model.count)") }
            if step % 100 == 0 || step == 599 {
                if let problem = Self.disagreement(packed, model) { return fail("step \(step): \(problem)") }
                for (n, (copy, expected)) in copies.enumerated() {
                    if let problem = Self.disagreement(copy, expected) { return fail("copy \(n): \(problem)") }
                }
            }
        }
    }

    /// The first difference between a packed array and an array, read every way a reader can.
    static func disagreement(_ packed: PackedIntArray, _ model: [Int64]) -> String? {
        guard packed.count == model.count else { return "count \(packed.count) != \(model.count)" }
        for i in model.indices {
            packed.prefetch(i)
            guard packed.element(at: i) == model[i], packed[i] == model[i] else {
                return "value [\(i)] is \(packed[i]), expected \(model[i])"
            }
        }
        var scanned: [Int64] = []
        packed.forEachChunk { base, chunk in
            guard base == scanned.count else { return }
            switch chunk {
            case .int8(let b): scanned += b.map(Int64.init)
            case .int16(let b): scanned += b.map(Int64.init)
            case .int32(let b): scanned += b.map(Int64.init)
            case .int64(let b): scanned += b
            }
        }
        guard scanned == model else { return "forEachChunk gives \(scanned.count) values that differ" }
        for c in packed.chunks.indices {
            let wide = packed.withWideChunk(c) { Array($0) }
            let start = c << PackedIntArray.shift
            let expected = model[start..<min(model.count, start + 4_096)]
            guard wide.count == 4_096, wide.prefix(expected.count).elementsEqual(expected) else {
                return "withWideChunk(\(c)) differs"
            }
            let widest = expected.map(PackedIntChunk.widthShift(of:)).max() ?? 0
            guard packed.chunks[c].widthShift >= widest else { return "chunk \(c) is too narrow" }
        }
        return nil
    }

    /// Appending a buffer at once (as a load does) gives what appending its values one by one
    /// gives, chunk widths included, for packed and plain chunked arrays, whatever the lengths
    /// of the buffers and where they start in a chunk (seeded; the seed and the lengths are in
    /// the message).
    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func bufferAppendsAgreeWithSingleAppends(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var bulk = PackedIntArray()
        var single = PackedIntArray()
        var strings = ChunkedArray<String>()
        var model: [Int64] = []
        var lengths: [Int] = []
        for _ in 0..<40 {
            let n = [0, 1, rng.below(100), rng.below(5_000), 4_096 - model.count % 4_096][rng.below(5)]
            let narrow = rng.below(2) == 0
            var values = (0..<n).map { _ in narrow ? Int64(rng.int(in: -100...100)) : Self.draw(&rng) }
            if rng.below(3) == 0 {
                // Consecutive values, continuing the last one or not, sometimes broken once.
                let first = rng.below(2) == 0 ? (model.last ?? 0) &+ 1 : Int64(rng.int(in: -300...300))
                values = (0..<n).map { first &+ Int64($0) }
                if n > 1 && rng.below(2) == 0 { values[rng.below(n)] = Self.draw(&rng) }
            }
            lengths.append(n)
            values.withUnsafeBufferPointer { bulk.append(contentsOf: $0) }
            for v in values { single.append(v) }
            values.map { "s\($0)" }.withUnsafeBufferPointer { strings.append(contentsOf: $0) }
            model += values
            let widths = (bulk.chunks.map(\.widthShift), single.chunks.map(\.widthShift))
            guard bulk.count == model.count, widths.0 == widths.1, Self.disagreement(bulk, model) == nil,
                strings.count == model.count, strings.chunks.allSatisfy({ $0.count <= 4_096 }),
                strings.elementsEqual(model.lazy.map { "s\($0)" })
            else {
                Issue.record(
                    "seed \(seed), buffers of \(lengths): \(Self.disagreement(bulk, model) ?? "") widths \(widths)")
                return
            }
        }
    }

    /// A chunk filled by appends takes the width its widest value needs, no more.
    @Test func appendedChunksTakeTheWidthTheirValuesNeed() {
        var packed = PackedIntArray()
        let widest: [Int64] = [100, -30_000, 2_000_000_000, -5_000_000_000]
        for (c, top) in widest.enumerated() {
            for i in 0..<4_096 { packed.append(i == 2_000 ? top : Int64(i % 100)) }
            #expect(packed.chunks[c].widthShift == c)
            #expect(packed.chunks[c].bytes.count == 4_096 << c)
        }
        #expect(packed.element(at: 3 * 4_096 + 2_000) == -5_000_000_000)
        // A write wider than the chunk widens it and keeps the other values.
        packed[5] = .min
        #expect(packed.chunks[0].widthShift == 3)
        #expect(packed[5] == .min && packed[6] == 6 && packed[2_000] == 100)
    }

    /// `prefetch` reads a chunk's width beside its storage address: the layout it assumes.
    @Test func chunkLayoutIsWhatPrefetchReads() {
        #expect(MemoryLayout<PackedIntChunk>.offset(of: \PackedIntChunk.widthShift) == MemoryLayout<Int>.stride)
        #expect(MemoryLayout<PackedIntChunk>.stride == 3 * MemoryLayout<Int>.stride)
    }

    /// Consecutive values keep no bytes until one breaks the run; then the chunk takes the
    /// width its values need, not the width the run would have reached by the chunk's end.
    @Test func consecutiveValuesKeepNoBytes() {
        var packed = PackedIntArray()
        for k in Int64(1)...10_000 { packed.append(k) }
        #expect(packed.chunks.allSatisfy { $0.isSequence && $0.bytes.isEmpty })
        #expect(packed[0] == 1 && packed[4_096] == 4_097 && packed[9_999] == 10_000)
        // A value equal to what the run holds there changes nothing.
        packed[5_000] = 5_001
        #expect(packed.chunks[1].isSequence)
        // One that breaks the run writes the chunk out: values 4,097...8,192 need two bytes.
        packed[5_000] = 7
        #expect(!packed.chunks[1].isSequence && packed.chunks[1].widthShift == 1)
        #expect(packed[5_000] == 7 && packed[5_001] == 5_002 && packed[4_096] == 4_097)
        #expect(packed.chunks[0].isSequence && packed.chunks[2].isSequence)
        // Small values in a run broken early stay one byte wide (the run would reach 4,195).
        var ages = PackedIntArray()
        for a: Int64 in [100, 101, 102, 3] { ages.append(a) }
        #expect(ages.chunks[0].widthShift == 0 && Array((0..<4).map { ages[$0] }) == [100, 101, 102, 3])
        // A run that would pass Int64.max within its chunk is stored as bytes.
        var top = PackedIntArray()
        top.append(.max - 10)
        #expect(!top.chunks[0].isSequence && top[0] == .max - 10)
    }
}
