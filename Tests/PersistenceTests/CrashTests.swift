import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Kills a child process that commits in a loop (SIGKILL, at random moments) and checks that
/// the file always opens and holds a committed state: in journal mode and with saves after
/// every commit, every commit that returned before the kill.
///
/// The number of kills is 50, 200 with the long sizes (`LIVEOBJECTS_TESTS=long`), or
/// `PERSISTENCE_CRASH_KILLS`.
@Suite(.serialized) struct CrashTests {
    static var childURL: URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = directory.appendingPathComponent("persistence-crash-child")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    @Test func killedChildLeavesACommittedState() async throws {
        let child = try #require(Self.childURL, "the persistence-crash-child executable was not built")
        let kills = TestEnvironment.int("PERSISTENCE_CRASH_KILLS") ?? (TestEnvironment.isLong ? 200 : 50)
        let seed = TestEnvironment.seed("PERSISTENCE_SEED") ?? UInt64.random(in: 0...UInt64.max)
        print("killedChildLeavesACommittedState seed: \(seed), kills: \(kills)")
        var generator = SeededRandomNumberGenerator(seed: seed)
        let directory = try makeTemporaryDirectory()
        var highest: [String: Int64] = [:]
        var committedBeforeKill = 0
        for kill in 0..<kills {
            let mode = kill % 2 == 0 ? "journal" : "save"
            let file = directory.appendingPathComponent("\(mode).json")
            let output = directory.appendingPathComponent("out-\(kill).txt")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let outputHandle = try FileHandle(forWritingTo: output)
            let process = Process()
            process.executableURL = child
            process.arguments = [file.path, mode]
            process.standardOutput = outputHandle
            try process.run()
            // Mostly kill while it commits (after its first printed step, plus a random delay);
            // one time in eight, at a random moment of its start.
            if generator.next() % 8 != 0 {
                for _ in 0..<2000 {
                    if let size = try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? NSNumber,
                        size.intValue > 0 || !process.isRunning
                    {
                        break
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            try await Task.sleep(for: .milliseconds(Int(generator.next() % 40)))
            Glibc_kill(process.processIdentifier)
            process.waitUntilExit()
            try outputHandle.close()
            let printed = try String(decoding: Data(contentsOf: output), as: UTF8.self)
            try? FileManager.default.removeItem(at: output)
            // The last complete line is the last commit whose write returned.
            let lines = printed.split(separator: "\n", omittingEmptySubsequences: false)
            let complete = lines.dropLast().compactMap { Int64($0) }
            let lastReturned = complete.last ?? highest[mode] ?? 0
            if !complete.isEmpty { committedBeforeKill += 1 }
            #expect(
                process.terminationReason == .uncaughtSignal,
                "kill \(kill): the child exited by itself: \(printed.suffix(200))")
            guard FileManager.default.fileExists(atPath: file.path) else {
                // Killed before it created the file: nothing can have been committed.
                #expect(complete.isEmpty && highest[mode] == nil, "kill \(kill) (\(mode)): the file is gone")
                continue
            }
            // Check a copy, so that the next child starts from the files as the kill left them.
            let check = directory.appendingPathComponent("check-\(kill).json")
            try FileManager.default.copyItem(at: file, to: check)
            if FileManager.default.fileExists(atPath: file.path + ".journal") {
                try FileManager.default.copyItem(atPath: file.path + ".journal", toPath: check.path + ".journal")
            }
            let options =
                mode == "journal"
                ? FileStorage.Options(savePolicy: .manual, journal: true)
                : FileStorage.Options(savePolicy: .manual, journal: false)
            let state = try await withRealm(
                Realm.Configuration(file: check, schema: CrashWorkload.schema, options: options)
            ) { realm in
                try await realm.read { try CrashWorkload.state(of: $0) }
            }
            try? FileManager.default.removeItem(at: check)
            try? FileManager.default.removeItem(atPath: check.path + ".journal")
            // Every commit that returned is there; at most one more (committed, not yet printed).
            #expect(
                state.counter == lastReturned || state.counter == lastReturned + 1,
                "kill \(kill) (\(mode)): the file holds step \(state.counter), the child had finished step \(lastReturned)"
            )
            #expect(
                state.items == CrashWorkload.expectedItems(after: state.counter), "kill \(kill) (\(mode)): items differ"
            )
            if state.counter > 0 { #expect(state.last == state.counter % 20, "kill \(kill) (\(mode))") }
            highest[mode] = state.counter
        }
        print(
            "killedChildLeavesACommittedState: \(kills) kills, \(committedBeforeKill) after at least one commit, final steps \(highest)"
        )
        #expect(committedBeforeKill >= kills / 2, "too few kills happened after a commit to test anything")
        try? FileManager.default.removeItem(at: directory)
    }
}

private func Glibc_kill(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}
