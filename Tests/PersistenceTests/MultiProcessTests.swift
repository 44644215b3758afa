import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Observation
import Testing

@testable import Persistence

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One file realm, several processes: the others are the crash child in its `shared` mode
/// (the multi-process workload), `hold` and `try` modes.
@Suite(.serialized) struct MultiProcessTests {
    typealias Child = FileLockTests.Child

    /// A child whose output lines are collected on a thread of their own.
    final class Running: @unchecked Sendable {
        // @unchecked: `lines` is touched under `lock`; the rest is immutable.
        let child: Child
        let tag: String
        private let lock = NSLock()
        private var lines: [String] = []
        private var ended = false

        init(file: URL, seed: UInt64, steps: Int, tag: String) throws {
            child = try Child(file: file, mode: "shared", arguments: ["\(seed)", "\(steps)", tag])
            self.tag = tag
            let thread = Thread { [self] in
                while let line = child.line() {
                    lock.lock()
                    lines.append(line)
                    lock.unlock()
                }
                lock.lock()
                ended = true
                lock.unlock()
            }
            thread.start()
        }

        var output: (lines: [String], ended: Bool) {
            lock.lock()
            defer { lock.unlock() }
            return (lines, ended)
        }

        var acks: [String] { output.lines.filter { $0.hasPrefix("ack ") }.map { String($0.dropFirst(4)) } }

        /// Waits (up to `seconds`) for a line that starts with `prefix`.
        func wait(for prefix: String, seconds: Double = 600) async -> String? {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let (lines, ended) = output
                if let line = lines.last(where: { $0.hasPrefix(prefix) }) { return line }
                if ended { return nil }
                try? await Task.sleep(for: .milliseconds(2))
            }
            return nil
        }

        func send(_ line: String) {
            child.input.fileHandleForWriting.write(Data((line + "\n").utf8))
        }

        func kill() {
            _ = Glibc_kill(child.process.processIdentifier, SIGKILL)
            child.process.waitUntilExit()
        }
    }

    /// Waits until `condition` holds, or gives up after a deadline far beyond any expected
    /// wait (the machines that run the suite are shared and slow under the thread sanitizer):
    /// the assertion after it says what was expected.
    func eventually(_ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(600)
        while !condition() && Date() < deadline { try await Task.sleep(for: .milliseconds(1)) }
    }

    static func configuration(_ url: URL, readOnly: Bool = false) -> Realm.Configuration {
        Realm.Configuration(
            file: url, objectTypes: SharedWorkload.types,
            options: FileStorage.Options(journalFoldThreshold: 4 << 10, readOnly: readOnly))
    }

    /// What the entries' change sets showed in this process.
    final class Mirror: @unchecked Sendable {
        private let lock = NSLock()
        private var keys: [ObjectKey] = []
        private(set) var bad = 0
        private var seen = 0

        func apply(_ change: CollectionChange<SharedEntry>) {
            lock.lock()
            defer { lock.unlock() }
            let next = change.isInitial ? change.snapshot.keys : change.applied(to: keys)
            if next != change.snapshot.keys { bad += 1 }
            keys = next
            seen += 1
        }

        var state: (keys: [ObjectKey], bad: Int, seen: Int) {
            lock.lock()
            defer { lock.unlock() }
            return (keys, bad, seen)
        }
    }

    @Test func anotherProcessSeesEveryCommitWithItsChangeSetsAndWritesOnTheLatestState() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("shared.json")
        let realm = try await Realm.open(Self.configuration(url))
        try await realm.write { try SharedWorkload.step("here-0", 0, in: $0) }
        let changes = try await realm.read { $0.objects(SharedEntry.self).changes() }
        let mirror = Mirror()
        let following = Task { for await change in changes { mirror.apply(change) } }
        let child = try Running(file: url, seed: 1, steps: 30, tag: "there")
        #expect(await child.wait(for: "done") != nil)
        // Told by the watch, without a read: the change sets arrive on their own.
        try await eventually { mirror.state.keys.count >= 31 }
        #expect(mirror.state.keys.count == 31 && mirror.state.bad == 0)
        // A write here starts from the child's commits (the tally counts them all).
        try await realm.write { try SharedWorkload.step("here-1", 1, in: $0) }
        let state = try await realm.read { try SharedWorkload.state(of: $0) }
        #expect(state.keys.count == 32 && state.tally == 32)
        try await eventually { mirror.state.keys.count >= 32 }
        #expect(SharedWorkload.digest(mirror.state.keys) == SharedWorkload.digest(state.keys))
        child.send("dump")
        let dump = await child.wait(for: "state ")
        #expect(
            dump?.split(separator: " ").dropFirst().prefix(3) == ["32", "32", "\(SharedWorkload.digest(state.keys))"])
        try child.child.input.fileHandleForWriting.close()
        child.child.process.waitUntilExit()
        following.cancel()
        try await realm.close()
        let reopened = try await withRealm(Self.configuration(url)) { realm in
            try await realm.read { try SharedWorkload.state(of: $0) }
        }
        #expect(reopened.tally == 32 && Set(reopened.ids).count == 32)
    }

    @Test func observationHearsTheCommitsOfAnotherProcess() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("observed.json")
        let realm = try await Realm.open(Self.configuration(url))
        try await realm.write { try SharedWorkload.step("here-0", 0, in: $0) }
        let child = try Running(file: url, seed: 4, steps: 1, tag: "there")
        let (before, after, changes) = try await realm.read { r -> (Int, Int, Int) in
            let tally = r.objects(SharedTally.self).first!
            let changes = Locked(0)
            withObservationTracking {
                _ = tally.value
            } onChange: {
                changes.withLock { $0 += 1 }
            }
            let before = tally.value
            // The realm is busy here: the child's commit arrives when it catches up.
            let deadline = Date().addingTimeInterval(600)
            while tally.value == before && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.001)
                r.catchUpWithStorage()
            }
            return (before, tally.value, changes.withLock { $0 })
        }
        #expect(before == 1 && after == 2 && changes == 1)
        #expect(await child.wait(for: "done") != nil)
        try child.child.input.fileHandleForWriting.close()
        child.child.process.waitUntilExit()
        try await realm.close()
    }

    /// Key-path filters hold for another process's commits as for this process's own: the
    /// child changes the tally's `value` at each step, so a subscription filtered on `value`
    /// hears each step as a modification and one filtered on `id` hears none of them.
    @Test func keyPathFiltersHoldForAnotherProcessesCommits() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("filtered.json")
        let realm = try await Realm.open(Self.configuration(url))
        try await realm.write { try SharedWorkload.step("here-0", 0, in: $0) }
        let (byValue, byID) = try await realm.read { r in
            let tallies = r.objects(SharedTally.self)
            return (tallies.changes(keyPaths: ["value"]), tallies.changes(keyPaths: ["id"]))
        }
        let heardByValue = Locked<[CollectionChange<SharedTally>]>([])
        let heardByID = Locked<[CollectionChange<SharedTally>]>([])
        let followingValue = Task { for await change in byValue { heardByValue.withLock { $0.append(change) } } }
        let followingID = Task { for await change in byID { heardByID.withLock { $0.append(change) } } }
        let child = try Running(file: url, seed: 5, steps: 6, tag: "there")
        #expect(await child.wait(for: "done") != nil)
        try await eventually { heardByValue.withLock { $0.count } >= 7 }
        // A fence: a new tally here is an insertion for both; once the id filter hears it, it
        // has heard everything before it.
        try await realm.write { _ = try $0.dynamicCreate("SharedTally", value: ["id": 1, "value": 0]) }
        try await eventually { heardByID.withLock { $0.last?.insertions == [1] } }
        let valueChanges = heardByValue.withLock { $0 }
        let idChanges = heardByID.withLock { $0 }
        #expect(valueChanges.first?.isInitial == true)
        #expect(valueChanges.dropFirst().prefix(6).allSatisfy { $0.modifications == [0] && $0.insertions.isEmpty })
        #expect(idChanges.count == 2 && idChanges.first?.isInitial == true)
        #expect(idChanges.last.map { $0.modifications.isEmpty && $0.insertions == [1] } == true)
        followingValue.cancel()
        followingID.cancel()
        try child.child.input.fileHandleForWriting.close()
        child.child.process.waitUntilExit()
        try await realm.close()
    }

    @Test func aReadOnlyOpenChangesNoFileSeesOthersCommitsAndRefusesWrites() async throws {
        let directory = try makeTemporaryDirectory()
        let url = directory.appendingPathComponent("read.json")
        // No file: refused, and nothing is made.
        await #expect(throws: LiveObjectsError.self) {
            _ = try await Realm.open(Self.configuration(url, readOnly: true))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        try await withRealm(Self.configuration(url)) { realm in
            try await realm.write { try SharedWorkload.step("first", 0, in: $0) }
        }
        try? FileManager.default.removeItem(atPath: url.path + ".lock")
        try? FileManager.default.removeItem(atPath: url.path + ".write-lock")
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let bytes = (fileBytes(url), fileBytes(URL(fileURLWithPath: url.path + ".journal")))
        let reader = try await Realm.open(Self.configuration(url, readOnly: true))
        #expect(try await reader.read { try SharedWorkload.state(of: $0).tally } == 1)
        do {
            try await reader.write { try SharedWorkload.step("refused", 1, in: $0) }
            Issue.record("a read-only realm wrote")
        } catch let error as LiveObjectsError {
            #expect(error.code == .readOnly)
        }
        await #expect(throws: LiveObjectsError.self) { try await reader.save() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
        #expect(fileBytes(url) == bytes.0 && fileBytes(URL(fileURLWithPath: url.path + ".journal")) == bytes.1)
        // A writer in another process: the read-only realm follows it, with change sets.
        let changes = try await reader.read { $0.objects(SharedEntry.self).changes() }
        let mirror = Mirror()
        let following = Task { for await change in changes { mirror.apply(change) } }
        let child = try Running(file: url, seed: 2, steps: 20, tag: "w")
        #expect(await child.wait(for: "done") != nil)
        try await eventually { mirror.state.keys.count >= 21 }
        #expect(mirror.state.keys.count == 21 && mirror.state.bad == 0)
        #expect(try await reader.read { try SharedWorkload.state(of: $0).tally } == 21)
        try child.child.input.fileHandleForWriting.close()
        child.child.process.waitUntilExit()
        following.cancel()
        try await reader.close()
    }

    @Test func migratingAFileOtherProcessesHaveOpenIsRefused() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("migrate.json")
        let holder = try Child(file: url, mode: "hold")
        #expect(holder.line() == "open")
        let bytes = fileBytes(url)
        do {
            _ = try await Realm.open(
                Realm.Configuration(file: url, schema: CrashWorkload.schema, schemaVersion: 1))
            Issue.record("the migration went ahead")
        } catch {
            #expect(error.code == .fileInUse)
            #expect(error.message.contains("another process"))
        }
        #expect(fileBytes(url) == bytes)
        try holder.input.fileHandleForWriting.close()
        #expect(holder.line() == "closed")
        holder.process.waitUntilExit()
        // Alone, it migrates.
        try await withRealm(Realm.Configuration(file: url, schema: CrashWorkload.schema, schemaVersion: 1)) { _ in }
    }

    @Test func aFailingDiskInOneProcessLeavesTheOthersWorking() async throws {
        let directory = try makeTemporaryDirectory()
        let url = directory.appendingPathComponent("faults.json")
        let realm = try await Realm.open(Self.configuration(url))
        try await realm.write { try SharedWorkload.step("here-0", 0, in: $0) }
        // Every write of this process fails for a while (the plan counts this process's calls).
        for call in [FileFaults.Call.write, .sync] {
            let plan = FileFaults.install(
                FileFaults.Plan(
                    directory: directory.path, failing: (call, 1, call == .write ? ENOSPC : EIO), times: .max))
            await #expect(throws: LiveObjectsError.self) {
                try await realm.write { try SharedWorkload.step("here-lost-\(call)", 1, in: $0) }
            }
            FileFaults.remove(plan)
        }
        let child = try Running(file: url, seed: 3, steps: 10, tag: "other")
        #expect(await child.wait(for: "done") != nil)
        try await realm.write { try SharedWorkload.step("here-1", 1, in: $0) }
        let state = try await realm.read { try SharedWorkload.state(of: $0) }
        #expect(
            state.tally == 12 && state.keys.count == 12 && !state.ids.contains { $0.hasPrefix("here-lost") },
            "\(state.tally) \(state.ids.sorted())")
        try child.child.input.fileHandleForWriting.close()
        child.child.process.waitUntilExit()
        try await realm.close()
    }

    @Test func aRealmThatMissedSeveralFoldsCatchesUpWithTheFile() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("folds.json")
        let realm = try await Realm.open(Realm.Configuration(file: url, schema: CrashWorkload.schema))
        try await realm.write { try CrashWorkload.step(1, in: $0) }
        let changes = try await realm.changes()
        let heard = Task { () -> Int in
            var count = 0
            for await _ in changes { count += 1 }
            return count
        }
        // Every commit of the child saves the snapshot and starts the journal again.
        let child = try Child(file: url, mode: "save-shared")
        #expect(child.line() == "2")
        // Busy while the child commits (and folds) several times: the journal this realm
        // follows is then several folds old.
        try await realm.read { _ in Thread.sleep(forTimeInterval: 0.3) }
        _ = Glibc_kill(child.process.processIdentifier, SIGKILL)
        child.process.waitUntilExit()
        let state = try await realm.read { try CrashWorkload.state(of: $0) }
        #expect(state.counter >= 3)
        #expect(state.items == CrashWorkload.expectedItems(after: state.counter))
        let disk = try FileStorage.decode(
            snapshot: [UInt8](Data(contentsOf: url)),
            journal: fileBytes(URL(fileURLWithPath: url.path + ".journal")).map { [UInt8]($0) })
        let counters = disk.store.tablesByName["Counter"]!
        #expect(counters.row(forPrimaryKey: 0).map { counters.value($0, 1).intValue } == state.counter)
        // Writes go on from the file's state.
        try await realm.write { try CrashWorkload.step(state.counter + 1, in: $0) }
        let after = try await realm.read { try CrashWorkload.state(of: $0) }
        #expect(after.items == CrashWorkload.expectedItems(after: state.counter + 1))
        try await realm.close()
        #expect(await heard.value >= 2)
    }

    /// Several processes, each a seeded workload of writes and reads following the entries'
    /// change sets, killed (SIGKILL) at random points and started again. At the end: every
    /// acknowledged commit is in the file once, the tally counts every entry (no update lost),
    /// every surviving process holds what a fresh open of the file holds, and every change
    /// set a process received took it exactly from one state to the next.
    @Test func processesKilledAtRandomLoseNothingAcknowledgedAndAgreeWithTheFile() async throws {
        let seed = TestEnvironment.seed("PERSISTENCE_SEED") ?? 0x5EED_0026
        var random = SeededRandomNumberGenerator(seed: seed)
        let slots = TestEnvironment.isLong ? 4 : 3
        let runs = TestEnvironment.isLong ? 5 : 2
        let steps = TestEnvironment.isLong ? 80 : 25
        let url = try makeTemporaryDirectory().appendingPathComponent("many.json")
        var log: [String] = []
        var acknowledged: Set<String> = []
        var killedTags: Set<String> = []
        var survivors: [Running] = []

        // Each slot: runs that are killed after a random number of acknowledged writes, then
        // a last one that is not.
        var current: [(running: Running, killAfter: Int?, run: Int)] = []
        func start(_ slot: Int, _ run: Int) throws -> (Running, Int?, Int) {
            let childSeed = UInt64.random(in: 0...UInt64.max, using: &random)
            let killAfter = run < runs - 1 ? Int.random(in: 0..<steps, using: &random) : nil
            let tag = "s\(slot)r\(run)"
            log.append("start \(tag) seed \(childSeed) kill after \(killAfter.map(String.init) ?? "never")")
            return (try Running(file: url, seed: childSeed, steps: steps, tag: tag), killAfter, run)
        }
        for slot in 0..<slots { current.append(try start(slot, 0)) }
        var failure: String?
        let deadline = Date().addingTimeInterval(600)
        while failure == nil {
            var allDone = true
            for slot in current.indices {
                let (running, killAfter, run) = current[slot]
                let output = running.output
                if let killAfter {
                    allDone = false
                    if running.acks.count >= killAfter {
                        if Bool.random(using: &random) {
                            try await Task.sleep(for: .microseconds(Int.random(in: 0..<3000, using: &random)))
                        }
                        running.kill()
                        acknowledged.formUnion(running.acks)
                        killedTags.insert(running.tag)
                        log.append("killed \(running.tag) after \(running.acks.count) acknowledged")
                        current[slot] = try start(slot, run + 1)
                    } else if output.ended {
                        failure = "\(running.tag) ended before it was killed: \(output.lines.suffix(3))"
                    }
                } else if !output.lines.contains("done") {
                    allDone = false
                    if output.ended { failure = "\(running.tag) ended early: \(output.lines.suffix(3))" }
                }
            }
            if allDone { break }
            if Date() > deadline { failure = "the processes did not finish in time" }
            try await Task.sleep(for: .milliseconds(1))
        }
        survivors = current.map(\.running)
        for survivor in survivors { acknowledged.formUnion(survivor.acks) }

        var problems: [String] = failure.map { [$0] } ?? []
        if failure == nil {
            let fresh = try await withRealm(Self.configuration(url)) { realm in
                try await realm.read { try SharedWorkload.state(of: $0) }
            }
            let ids = Set(fresh.ids)
            if ids.count != fresh.ids.count { problems.append("an entry is in the file twice") }
            let missing = acknowledged.subtracting(ids)
            if !missing.isEmpty { problems.append("acknowledged commits missing: \(missing.sorted())") }
            // Not acknowledged but present: only the last write of a killed run can be.
            for id in ids.subtracting(acknowledged) {
                let tag = String(id.split(separator: "-")[0])
                if !killedTags.contains(tag) { problems.append("\(id) is in the file but was never acknowledged") }
            }
            if fresh.tally != Int64(fresh.ids.count) {
                problems.append("the tally is \(fresh.tally) for \(fresh.ids.count) entries: an update was lost")
            }
            let expected = "\(fresh.keys.count) \(fresh.tally) \(SharedWorkload.digest(fresh.keys))"
            for survivor in survivors {
                survivor.send("dump")
                guard let line = await survivor.wait(for: "state ") else {
                    problems.append("\(survivor.tag) did not answer")
                    continue
                }
                let fields = line.split(separator: " ").map(String.init)
                if fields[1...3].joined(separator: " ") != expected {
                    problems.append("\(survivor.tag) holds \(fields[1...3]), the file \(expected)")
                }
                if "\(fields[4]) \(fields[5])" != "\(fresh.keys.count) \(SharedWorkload.digest(fresh.keys))" {
                    problems.append("\(survivor.tag)'s change sets end at \(fields[4]) entries (\(fields[5]))")
                }
                if fields[7] != "0" { problems.append("\(survivor.tag) received \(fields[7]) inexact change sets") }
            }
            log.append("acknowledged \(acknowledged.count), in the file \(ids.count)")
        }
        for survivor in survivors {
            try? survivor.child.input.fileHandleForWriting.close()
            survivor.child.process.waitUntilExit()
        }
        if !problems.isEmpty {
            Issue.record(
                Comment(
                    rawValue: "multi-process run failed, seed \(seed) (PERSISTENCE_SEED=\(seed) replays it):\n"
                        + problems.joined(separator: "\n") + "\noperations:\n" + log.joined(separator: "\n")))
        }
    }
}

#if canImport(Glibc)
    private func Glibc_kill(_ pid: Int32, _ signal: Int32) -> Int32 { Glibc.kill(pid, signal) }
#elseif canImport(Darwin)
    private func Glibc_kill(_ pid: Int32, _ signal: Int32) -> Int32 { Darwin.kill(pid, signal) }
#endif
