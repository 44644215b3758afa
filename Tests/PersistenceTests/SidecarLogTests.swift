import Foundation
import LiveObjects
import Testing

@testable import Persistence

/// The sidecar log (the sync engine's state beside a realm) follows the journal's rules: only a
/// torn last append is ignored; every other damage is `corruptFile` at its byte, the file left
/// as it is.
@Suite("Sidecar log damage")
struct SidecarLogTests {
    let path: String

    init() throws {
        path = try makeTemporaryDirectory().appendingPathComponent("realm.json.sync").path
    }

    static let objects: [[UInt8]] = [
        #"{"device":"D-1","format":"sample","cursor":"15"}"#, #"{"cursor":"16","keys":["a","b"]}"#,
        #"{"cursor":"17"}"#, #"{"cursor":"18","objects":[{"id":"J\u00e9"}]}"#,
    ].map { Array($0.utf8) }

    /// A log of the sample lines, as the engine writes it: the first by a rewrite, the others
    /// appended. Returns its bytes and where each line ends (after its line break).
    func writeSample() throws -> (bytes: [UInt8], ends: [Int]) {
        let log = SidecarLog(path: path, syncs: false)
        _ = try log.read()
        try log.replace(with: [Self.objects[0]])
        var ends = [log.size]
        for object in Self.objects.dropFirst() {
            try log.append(object)
            ends.append(log.size)
        }
        return (Array(try Data(contentsOf: URL(fileURLWithPath: path))), ends)
    }

    func write(_ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
    func contents() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test func theSampleReadsBack() throws {
        let (_, ends) = try writeSample()
        let lines = try SidecarLog(path: path, syncs: false).read()
        #expect(lines.map(\.bytes) == Self.objects)
        #expect(lines.map(\.offset) == [0] + ends.dropLast())
    }

    @Test func everyTruncationIsATornAppendOrAnError() throws {
        let (bytes, ends) = try writeSample()
        for length in 0...bytes.count {
            let cut = Array(bytes[..<length])
            try write(cut)
            let log = SidecarLog(path: path, syncs: false)
            let complete = ends.filter { $0 <= length }.count
            if complete == 0 {
                // Inside the first line (written only by a rename): the device's id is lost.
                let error = #expect(throws: LiveObjectsError.self, "length \(length)") { try log.read() }
                #expect(error?.code == .corruptFile, "length \(length): \(String(describing: error))")
                #expect(error?.inputLocation?.offset == length, "length \(length): \(String(describing: error))")
                #expect(try contents() == cut, "length \(length): the file changed")
                continue
            }
            let lines = try log.read()
            #expect(lines.map(\.bytes) == Array(Self.objects.prefix(complete)), "length \(length)")
            #expect(log.size == ends[complete - 1], "length \(length)")
            // The next append cuts the torn line off.
            try log.append(Array(#"{"cursor":"next"}"#.utf8))
            let again = try SidecarLog(path: path, syncs: false).read()
            #expect(
                again.map(\.bytes) == Array(Self.objects.prefix(complete)) + [Array(#"{"cursor":"next"}"#.utf8)],
                "length \(length)")
        }
    }

    @Test func everyBitFlipIsAnErrorAtItsLine() throws {
        let (bytes, ends) = try writeSample()
        let starts = [0] + ends.dropLast()
        for index in bytes.indices {
            let line = try #require(ends.firstIndex { index < $0 })
            // A damaged last line break is reported at itself, any other damage at its line.
            let expected = index == bytes.count - 1 ? index : starts[line]
            for bit in 0..<8 {
                var damaged = bytes
                damaged[index] ^= UInt8(1 << bit)
                try write(damaged)
                let error = #expect(throws: LiveObjectsError.self, "byte \(index) bit \(bit)") {
                    try SidecarLog(path: path, syncs: false).read()
                }
                #expect(error?.code == .corruptFile, "byte \(index) bit \(bit): \(String(describing: error))")
                #expect(
                    error?.inputLocation?.offset == expected, "byte \(index) bit \(bit): \(String(describing: error))")
                #expect(error?.file == path)
                #expect(try contents() == damaged, "byte \(index) bit \(bit): the file changed")
            }
        }
    }

    @Test func aTornLineAfterADamagedLineBreakIsStillAnError() throws {
        // A whole last line whose line break became another byte is told apart from a torn one.
        let (bytes, _) = try writeSample()
        var damaged = bytes
        damaged[damaged.count - 1] = UInt8(ascii: " ")
        try write(damaged)
        let error = #expect(throws: LiveObjectsError.self) { try SidecarLog(path: path, syncs: false).read() }
        #expect(error?.message.contains("instead of a line break") == true, "\(String(describing: error))")
    }
}
