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

/// The advisory lock of file realms across processes, explicit closing, and reopening right
/// after a realm is released. The other process is the crash test's child in its `hold` and
/// `try` modes.
@Suite(.serialized) struct FileLockTests {
    /// A started child with a pipe on its standard input and output.
    struct Child {
        let process: Process
        let input: Pipe
        let output: Pipe

        init(file: URL, mode: String, arguments extra: [String] = []) throws {
            let executable = try #require(CrashTests.childURL, "the persistence-crash-child executable was not built")
            process = Process()
            input = Pipe()
            output = Pipe()
            process.executableURL = executable
            process.arguments = [file.path, mode] + extra
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        /// The next line the child prints, or nil when its output ends.
        func line() -> String? {
            var bytes: [UInt8] = []
            while true {
                let chunk = output.fileHandleForReading.readData(ofLength: 1)
                guard let byte = chunk.first else {
                    return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
                }
                if byte == 0x0A { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
        }
    }

    /// Runs the child in `try` mode and returns what it printed.
    func tryOpening(_ file: URL, mode: String = "try") throws -> String? {
        let child = try Child(file: file, mode: mode)
        try child.input.fileHandleForWriting.close()
        let line = child.line()
        child.process.waitUntilExit()
        return line
    }

    func configuration(_ url: URL, _ options: FileStorage.Options = .init()) -> Realm.Configuration {
        Realm.Configuration(file: url, schema: CrashWorkload.schema, options: options)
    }

    /// Without the journal a realm keeps its file to itself.
    static let alone = FileStorage.Options(savePolicy: .coalesced(.seconds(3600)), journal: false)

    @Test func anotherProcessCannotOpenAFileThisProcessHasOpenWithoutTheJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("held.json")
        let realm = try await Realm.open(configuration(url, Self.alone))
        try await realm.write { try CrashWorkload.step(1, in: $0) }
        let snapshot = fileBytes(url)
        #expect(try tryOpening(url, mode: "try-alone") == "error fileLocked")
        // With the journal too: the file is kept to itself by this process.
        #expect(try tryOpening(url) == "error fileLocked")
        #expect(fileBytes(url) == snapshot)
        try await realm.close()
        #expect(try tryOpening(url, mode: "try-alone") == "opened")
        // Open with the journal here, the file is shared with processes that use it too.
        let shared = try await Realm.open(configuration(url))
        #expect(try tryOpening(url) == "opened")
        #expect(try tryOpening(url, mode: "try-alone") == "error fileLocked")
        try await shared.close()
    }

    @Test func aFileAnotherProcessHasOpenWithoutTheJournalIsRefusedUntilThatProcessEnds() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("child.json")
        // Closed by the child: its realm closes and releases the file when its input ends.
        let polite = try Child(file: url, mode: "hold-alone")
        #expect(polite.line() == "open")
        let bytes = fileBytes(url)
        do {
            _ = try await Realm.open(configuration(url, Self.alone))
            Issue.record("the second open succeeded")
        } catch {
            #expect(error.code == .fileLocked)
            #expect(error.file == url.standardizedFileURL.path)
            #expect(error.message.contains("another process"))
        }
        #expect(fileBytes(url) == bytes)
        #expect(!FileStorage.isOpen(configuration(url, Self.alone)))
        try polite.input.fileHandleForWriting.close()
        #expect(polite.line() == "closed")
        polite.process.waitUntilExit()
        try await withRealm(configuration(url)) { realm in try await realm.write { try CrashWorkload.step(1, in: $0) } }

        // Killed: the system releases the lock with the process.
        let killed = try Child(file: url, mode: "hold-alone")
        #expect(killed.line() == "open")
        await #expect(throws: LiveObjectsError.self) { _ = try await Realm.open(configuration(url, Self.alone)) }
        kill(killed.process.processIdentifier, SIGKILL)
        killed.process.waitUntilExit()
        #expect(killed.process.terminationReason == .uncaughtSignal)
        let counter = try await withRealm(configuration(url)) { realm in
            try await realm.read { try CrashWorkload.state(of: $0).counter }
        }
        #expect(counter == 1)
    }

    @Test func closeSavesReleasesTheFileAndRefusesWrites() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("close.json")
        // Coalesced saves with a long interval and no journal: only the close saves.
        let options = FileStorage.Options(savePolicy: .coalesced(.seconds(3600)), journal: false)
        let realm = try await Realm.open(configuration(url, options))
        try await realm.write { try CrashWorkload.step(1, in: $0) }
        try await realm.write { try CrashWorkload.step(2, in: $0) }
        #expect(await !realm.isClosed)
        try await realm.close()
        #expect(await realm.isClosed)
        #expect(!FileStorage.isOpen(configuration(url, options)))
        await #expect(throws: LiveObjectsError.self) { try await realm.write { try CrashWorkload.step(3, in: $0) } }
        do {
            try await realm.write { try CrashWorkload.step(3, in: $0) }
        } catch let error as LiveObjectsError {
            #expect(error.code == .invalidOperation)
        }
        // Reads still see the last state; closing again does nothing.
        #expect(try await realm.read { try CrashWorkload.state(of: $0).counter } == 2)
        try await realm.close()
        // The file is free at once, in this process and in others; the identifier gives a new realm.
        #expect(try tryOpening(url) == "opened")
        let again = try await Realm.open(configuration(url, options))
        #expect(again !== realm)
        #expect(try await again.read { try CrashWorkload.state(of: $0).counter } == 2)
        try await again.close()
    }

    @Test func closingDuringAWriteIsRefused() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("busy.json")
        let realm = try await Realm.open(configuration(url))
        let code = await realm.closeDuringWrite()
        #expect(code == .alreadyInWriteTransaction)
        #expect(await !realm.isClosed)
        try await realm.close()
    }

    @Test func reopeningRightAfterReleasingARealmWaitsForItsClose() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("reopen.json")
        // Saves only at close (no journal): a reopen that did not wait would miss the last step.
        let options = FileStorage.Options(savePolicy: .coalesced(.seconds(3600)), journal: false)
        for step in Int64(1)...30 {
            var realm: Realm? = try await Realm.open(configuration(url, options))
            let counter = try await realm!.read { try CrashWorkload.state(of: $0).counter }
            #expect(counter == step - 1, "step \(step)")
            try await realm!.write { try CrashWorkload.step(step, in: $0) }
            realm = nil
            _ = realm
        }
        let counter = try await withRealm(configuration(url, options)) { realm in
            try await realm.read { try CrashWorkload.state(of: $0).counter }
        }
        #expect(counter == 30)
    }
}

extension FileLockTests {
    /// A write waits a bounded time for another process's write lock (a write transaction
    /// left open in a shell), then fails with `fileInUse` and changes nothing; once the lock
    /// is free, writes go on. The other holder is a descriptor of its own on the lock file:
    /// `flock` locks belong to open files, so it counts as another process.
    @Test func aWriteLockHeldElsewhereTimesOutWithFileInUseAndChangesNothing() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("held.json")
        let options = FileStorage.Options(writeLockTimeout: .milliseconds(50))
        let realm = try await Realm.open(configuration(url, options))
        try await realm.write { try CrashWorkload.step(1, in: $0) }
        // Close-on-exec, as the library's own descriptors: a child another test spawns meanwhile
        // would otherwise inherit the descriptor, and its lock with it, past the close below.
        let holder = open(url.path + ".write-lock", O_RDWR | O_CLOEXEC)
        #expect(holder >= 0)
        #expect(flock(holder, LOCK_EX) == 0)
        let journal = fileBytes(URL(fileURLWithPath: url.path + ".journal"))
        var code: LiveObjectsError.Code?
        do {
            try await realm.write { try CrashWorkload.step(2, in: $0) }
        } catch let error as LiveObjectsError {
            code = error.code
        }
        #expect(code == .fileInUse)
        #expect(fileBytes(URL(fileURLWithPath: url.path + ".journal")) == journal)
        #expect(try await realm.read { try CrashWorkload.state(of: $0).counter } == 1)
        _ = close(holder)
        try await realm.write { try CrashWorkload.step(2, in: $0) }
        #expect(try await realm.read { try CrashWorkload.state(of: $0).counter } == 2)
        try await realm.close()
    }

    /// A realm released by the app while a task of its storage (a catch-up after another
    /// process's commit, a deferred save) still holds it: opening the file again, even with
    /// another schema version, waits for that task and the close instead of finding the old
    /// realm open.
    @Test func reopeningWithAnotherVersionWaitsWhileTheStoragesOwnTaskHoldsTheReleasedRealm() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("visit.json")
        var realm: Realm? = try await Realm.open(configuration(url))
        try await realm!.write { try CrashWorkload.step(1, in: $0) }
        let storage = try #require(configuration(url).storage.backend as? FileStorage)
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        let (gate, gateContinuation) = AsyncStream<Void>.makeStream()
        let visit = Task {
            await storage.visitRealm { _ in
                enteredContinuation.yield()
                for await _ in gate {}
            }
        }
        for await _ in entered { break }
        realm = nil
        _ = realm
        // Ends the visit once the open below waits for it.
        let opener = Task {
            while !Task.isCancelled,
                FileStorage.openPaths.withLock({ $0[storage.path]?.waiters.isEmpty ?? true })
            {
                await Task.yield()
            }
            gateContinuation.finish()
        }
        let version2 = Realm.Configuration(file: url, schema: CrashWorkload.schema, schemaVersion: 2)
        let reopened: Result<Realm, LiveObjectsError>
        do {
            reopened = .success(try await Realm.open(version2))
        } catch {
            reopened = .failure(error)
        }
        opener.cancel()
        gateContinuation.finish()
        await visit.value
        let again = try reopened.get()
        #expect(again.configuration.schemaVersion == 2)
        #expect(try await again.read { try CrashWorkload.state(of: $0).counter } == 1)
        try await again.close()
    }
}

extension Realm {
    /// Tries to close inside an open write; returns the error code.
    fileprivate func closeDuringWrite() -> LiveObjectsError.Code? {
        defer { cancelWrite() }
        do {
            try beginWrite()
            try close()
            return nil
        } catch {
            return error.code
        }
    }
}

extension FileLockTests {
    @Test func writingASnapshotOverAFileAnotherRealmHasOpenIsRefused() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("target.json")
        let memory = try await Realm.open(
            Realm.Configuration(identifier: "memory-\(UUID())", schema: CrashWorkload.schema))
        try await memory.write { try CrashWorkload.step(1, in: $0) }
        // Held by another process.
        let holder = try Child(file: url, mode: "hold")
        #expect(holder.line() == "open")
        let bytes = fileBytes(url)
        do {
            try await FileStorage.writeSnapshot(of: memory, to: url, schemaVersion: 0)
            Issue.record("the snapshot replaced a file another process has open")
        } catch {
            #expect(error.code == .fileLocked)
        }
        #expect(fileBytes(url) == bytes)
        try holder.input.fileHandleForWriting.close()
        #expect(holder.line() == "closed")
        holder.process.waitUntilExit()
        // Free again: written.
        try await FileStorage.writeSnapshot(of: memory, to: url, schemaVersion: 0)
        let counter = try await withRealm(configuration(url)) { realm in
            try await realm.read { try CrashWorkload.state(of: $0).counter }
        }
        #expect(counter == 1)
    }
}
