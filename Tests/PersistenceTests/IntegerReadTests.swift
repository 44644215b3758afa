import LiveObjects
import LiveObjectsJSON
import LiveObjectsTestSupport
import Testing

@testable import Persistence

/// `JSONReader.readInt64()` reads an integer of fewer than eight digits from one 8-byte load
/// when eight bytes remain (the byte after the digits checked in the word), longer ones eight
/// bytes at a time, the last bytes of a text one at a time: integers of every width, at every
/// distance from the end of the text, with leading zeros, signs and every kind of byte after
/// them read as `Int64(_:)` reads the same digits, or refused when JSON or `Int64` refuses them
/// (seeded; the seed and the text are in the message).
@Suite struct IntegerReadTests {
    /// The seeds; `LIVEOBJECTS_INTEGER_SEED` replays one.
    static let seeds: [UInt64] = TestEnvironment.seed("LIVEOBJECTS_INTEGER_SEED").map { [$0] } ?? [1, 2, 3, 4]

    /// The digits of an integer: at a width boundary (9…9 and 10…0 for each width, the ends of
    /// `Int64` and one past them), or random digits of 1 to 21, sometimes with leading zeros.
    static func digits(_ rng: inout SeededRandomNumberGenerator) -> String {
        switch rng.below(4) {
        case 0:
            let width = rng.int(in: 1...20)
            return rng.below(2) == 0
                ? String(repeating: "9", count: width) : "1" + String(repeating: "0", count: width - 1)
        case 1:
            return ["9223372036854775807", "9223372036854775808", "9223372036854775809", "18446744073709551616"][
                rng.below(4)]
        default:
            let width = rng.int(in: 1...21)
            var text = String(rng.int(in: 1...9))
            for _ in 1..<width { text += String(rng.below(10)) }
            if rng.below(8) == 0 { text = String(repeating: "0", count: rng.int(in: 1...3)) + text }
            return text
        }
    }

    @Test(arguments: seeds)
    func integersReadAsInt64ReadsThem(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let afters = ["", ",", "}", "]", " ", "\n", ".5", "e3", "E3", "x", "\"", "-"]
        var (read, refused) = (0, 0)
        for step in 0..<3_000 {
            let sign = rng.below(3) == 0 ? "-" : ""
            let digits = Self.digits(&rng)
            let after = afters[rng.below(afters.count)]
            // 0 to 9 bytes more, so that the integer ends at every distance from the text's end.
            let padding = String(repeating: " ", count: rng.below(10))
            let text = sign + digits + after + padding
            let wellFormed = (digits.count == 1 || digits.first != "0") && !".eE".contains(after.first ?? " ")
            let expected = wellFormed ? Int64(sign + digits) : nil
            let bytes = Array(text.utf8)
            let got: Int64? = bytes.withUnsafeBytes { raw in
                var reader = JSONReader(raw)
                do throws(LiveObjectsError) {
                    let value = try reader.readInt64()
                    // The reader stops right after the digits.
                    return reader.offset == sign.utf8.count + digits.utf8.count ? value : nil
                } catch {
                    return nil
                }
            }
            guard got == expected else {
                Issue.record(
                    "seed \(seed) (LIVEOBJECTS_INTEGER_SEED), step \(step): '\(text)' read as \(got.map { "\($0)" } ?? "an error"), expected \(expected.map { "\($0)" } ?? "an error")"
                )
                return
            }
            if expected == nil { refused += 1 } else { read += 1 }
        }
        #expect(read > 500 && refused > 500, "seed \(seed): \(read) read, \(refused) refused")
    }
}
