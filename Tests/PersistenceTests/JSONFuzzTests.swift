import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import LiveObjectsJSON
@testable import Persistence

/// Seeded random and mutated inputs: the reader never crashes, fails only with
/// `.corruptFile`/`.limitExceeded` at an offset inside the input, and its tree reader and
/// skipper agree.
@Suite struct JSONFuzzTests {
    @Test func randomBytesNeverCrashTheReader() {
        var random = SeededRandomNumberGenerator(seed: 0xF022)
        // Bytes biased towards JSON's own, so that inputs get past the first few bytes.
        let alphabet =
            Array(#"{}[]:,"\/ntrufalse0123456789-+.eEu \#n\#t"#.utf8) + [
                0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xE2, 0xED, 0xF0, 0xF4, 0xFF,
            ]
        var accepted = 0
        for round in 0..<6_000 {
            let length = Int(random.next() % 48)
            let bytes = (0..<length).map { _ in
                round % 3 == 0
                    ? UInt8(truncatingIfNeeded: random.next()) : alphabet[Int(random.next() % UInt64(alphabet.count))]
            }
            if check(bytes) { accepted += 1 }
        }
        // Some random inputs are valid JSON (numbers, literals, small containers).
        #expect(accepted > 0)
    }

    @Test func mutatedDocumentsNeverCrashTheReader() throws {
        var random = SeededRandomNumberGenerator(seed: 0x3A7E)
        let seeds: [[UInt8]] = [
            Array(
                #"{"id": 1, "name": "Rex \u00e9\uD83D\uDE00", "age": -3.5e-7, "owner": null, "toys": [true, false, {"a": []}]}"#
                    .utf8),
            Array("[0, -0.0, 1e308, \"Жучка\", [[[[1]]]], {\"\": \"\\n\\\"\"}]".utf8),
            randomDocument(&random),
            randomDocument(&random),
        ]
        var accepted = 0
        for round in 0..<6_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<Int(random.next() % 4 + 1) {
                let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0 where !bytes.isEmpty: bytes[position] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
                case 2 where !bytes.isEmpty: bytes.remove(at: position)
                default: bytes = Array(bytes.prefix(position))
                }
            }
            if check(bytes) { accepted += 1 }
        }
        #expect(accepted > 0)
    }

    @Test func randomDocumentsRoundTripInEveryLayout() throws {
        var random = SeededRandomNumberGenerator(seed: 0xD0C)
        for _ in 0..<200 {
            let value = randomValue(&random, depth: 0)
            for options in [JSONWriter.Options.compact, .pretty, .records, .init(indentWidth: 1)] {
                let bytes = value.jsonBytes(options: options)
                #expect(try parse(bytes) == value)
                #expect(check(bytes))
            }
        }
    }

    /// Parses `bytes` both as a tree and by skipping; returns whether they were accepted.
    private func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        var tree: JSONValue?
        let treeError = liveObjectsError { () throws(LiveObjectsError) in tree = try parse(bytes) }
        let skipError = liveObjectsError { () throws(LiveObjectsError) in
            try JSONReader.withReader(bytes) { (reader) throws(LiveObjectsError) in
                try reader.skipValue()
                try reader.finish()
            }
        }
        #expect(treeError == skipError, "\(bytes)", sourceLocation: sourceLocation)
        if let error = treeError {
            #expect(
                error.code == .corruptFile || error.code == .limitExceeded, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains("at byte "), sourceLocation: sourceLocation)
            return false
        }
        // Accepted input is valid UTF-8 and reads back the same after writing.
        #expect(String(validating: bytes, as: UTF8.self) != nil, sourceLocation: sourceLocation)
        if let tree {
            #expect((try? parse(tree.jsonBytes())) == tree, sourceLocation: sourceLocation)
        }
        return true
    }

    private func randomDocument(_ random: inout SeededRandomNumberGenerator) -> [UInt8] {
        randomValue(&random, depth: 0).jsonBytes(options: .pretty)
    }

    private func randomValue(_ random: inout SeededRandomNumberGenerator, depth: Int) -> JSONValue {
        switch random.next() % (depth > 4 ? 6 : 8) {
        case 0: return .null
        case 1: return .bool(random.next() & 1 == 0)
        case 2: return .int(Int64(bitPattern: random.next()) >> (random.next() % 64))
        case 3: return .double(Double(bitPattern: random.next()))
        case 4: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: random.next())))
        case 5: return .string(randomString(&random))
        case 6: return .array((0..<Int(random.next() % 5)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            return .object(
                (0..<Int(random.next() % 5)).map { _ in
                    (key: randomString(&random), value: randomValue(&random, depth: depth + 1))
                })
        }
    }

    private func randomString(_ random: inout SeededRandomNumberGenerator) -> String {
        let pool: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "é", "Ж", "€", "😀", "\u{FFFF}",
        ]
        return String(
            String.UnicodeScalarView(
                (0..<Int(random.next() % 8)).map { _ in pool[Int(random.next() % UInt64(pool.count))] }))
    }
}
