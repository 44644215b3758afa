import Foundation
import LiveObjectsSyncServer
import Logging
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `sync-test-device` process: a realm file, an engine and the HTTP transport, driven by
/// commands on its standard input (see its main.swift).
final class DeviceProcess: Sendable {
    let name: String
    let process: Process
    private let input: FileHandle
    private let lines = LineQueue()

    static var executable: URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = directory.appendingPathComponent("sync-test-device")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// Starts a device and waits until it is ready.
    init(
        name: String, realm: URL, server: URL, space: String, token: String, log: URL? = nil,
        extra: [String] = []
    ) async throws {
        self.name = name
        let executable = try #require(Self.executable, "the sync-test-device executable was not built")
        process = Process()
        process.executableURL = executable
        var arguments = [
            "--realm", realm.path, "--server", server.absoluteString, "--space", space, "--token", token, "--name",
            name,
        ]
        if let log { arguments += ["--log", log.path] }
        process.arguments = arguments + extra
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        input = stdin.fileHandleForWriting
        let lines = lines
        let reader = stdout.fileHandleForReading
        try process.run()
        // A thread of its own reads the answers: a blocking read must not hold a task's thread.
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let end = pending.firstIndex(of: 0x0A) {
                    lines.push(String(decoding: pending[pending.startIndex..<end], as: UTF8.self))
                    pending = Data(pending[(end + 1)...])
                }
            }
            lines.finish()
        }
        let ready = try await nextLine()
        try #require(ready == "ready", "device \(name) did not start: \(ready ?? "no answer")")
    }

    /// The next line the device writes, or nil when it ended. A device that says nothing for
    /// two minutes is taken as hung (a bound that keeps a failing test from hanging, not a
    /// measure).
    func nextLine() async throws -> String? {
        await lines.next(patience: .seconds(120))
    }

    /// Sends a command; returns its answer lines (`dump` gives several, ending before `end`).
    @discardableResult
    func send(_ command: String) async throws -> [String] {
        input.write(Data((command + "\n").utf8))
        var answer: [String] = []
        while let line = try await nextLine() {
            if line == "end" || line.hasPrefix("ok") || line.hasPrefix("error") || line == "bye" {
                if line != "end" { answer.append(line) }
                return answer
            }
            answer.append(line)
        }
        return answer
    }

    /// Sends a command without waiting for its answer.
    func start(_ command: String) {
        input.write(Data((command + "\n").utf8))
    }

    /// Sends a command the device dies of; returns once it is gone.
    func sendAndExpectDeath(_ command: String) async throws -> (lines: [String], signal: Int32?) {
        input.write(Data((command + "\n").utf8))
        var answer: [String] = []
        while let line = try await nextLine() { answer.append(line) }
        process.waitUntilExit()
        return (answer, process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil)
    }

    func quit() async throws {
        _ = try await send("quit")
        process.waitUntilExit()
    }

    /// Kills the device (SIGKILL), if it still runs.
    func terminate() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// The lines a process writes, handed from the thread that reads them to the test.
final class LineQueue: Sendable {
    private struct State {
        var lines: [String] = []
        var finished = false
        var waiter: CheckedContinuation<String?, Never>?
        var waits = 0
    }

    private let state = Mutex(State())

    func push(_ line: String) {
        let waiter = state.withLock { state -> CheckedContinuation<String?, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.lines.append(line)
            return nil
        }
        waiter?.resume(returning: line)
    }

    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<String?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next line; nil when the process ended, or when none came for `patience` (a bound
    /// that keeps a failing test from hanging, not a measure).
    func next(patience: Duration) async -> String? {
        await withCheckedContinuation { continuation in
            let wait = state.withLock { state -> Int? in
                if !state.lines.isEmpty {
                    continuation.resume(returning: state.lines.removeFirst())
                    return nil
                }
                if state.finished {
                    continuation.resume(returning: nil)
                    return nil
                }
                state.waiter = continuation
                state.waits += 1
                return state.waits
            }
            guard let wait else { return }
            Task {
                try? await Task.sleep(for: patience)
                let waiter = self.state.withLock { state -> CheckedContinuation<String?, Never>? in
                    guard state.waits == wait, let waiter = state.waiter else { return nil }
                    state.waiter = nil
                    return waiter
                }
                waiter?.resume(returning: nil)
            }
        }
    }
}

/// A sync server this test can stop and start again on the same port.
actor RestartableServer {
    let database: DatabaseConfiguration
    private(set) var port = 0
    private var task: Task<Void, any Error>?

    init(database: DatabaseConfiguration) {
        self.database = database
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func start() async throws {
        let listening = PortBox()
        // Its restarts cut long polls and requests on purpose: the errors logged for them are
        // expected, so only critical ones are shown.
        var logger = ServerHarness.logger
        logger.logLevel = .critical
        let service = SyncServerService(database: database, port: port, logger: logger)
        task = Task { try await service.run { bound in listening.value.withLock { $0 = bound } } }
        let started = await eventually { listening.value.withLock { $0 } != nil }
        try #require(started, "the server did not start")
        port = listening.value.withLock { $0 }!
    }

    func stop() async {
        task?.cancel()
        _ = try? await task?.value
        task = nil
    }

    func restart() async throws {
        await stop()
        try await start()
    }
}

/// The events a device wrote to its log, in order.
struct DeviceEvents {
    enum Event: Equatable {
        case push([String])
        case acknowledged([String])
        case pull(String?)
        /// What a pushed change does to one list: the elements it adds and removes.
        case list(key: String, property: String, added: [String], removed: [String])
        /// A pushed deletion of a card.
        case deleted(String)
    }

    var events: [Event] = []

    init(_ url: URL, from offset: Int = 0) throws {
        let text = try String(contentsOf: url, encoding: .utf8)
        for line in text.split(separator: "\n").dropFirst(offset) {
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "push": events.append(.push(Array(words.dropFirst())))
            case "ack": events.append(.acknowledged(Array(words.dropFirst())))
            case "pull": events.append(.pull(words.count > 1 && words[1] != "-" ? words[1] : nil))
            case "delete" where words.count == 3 && words[1] == "Card": events.append(.deleted(words[2]))
            case "list" where words.count >= 3:
                let elements = words.dropFirst(3)
                events.append(
                    .list(
                        key: words[1], property: words[2],
                        added: elements.filter { $0.hasPrefix("+") }.map { String($0.dropFirst()) },
                        removed: elements.filter { $0.hasPrefix("-") }.map { String($0.dropFirst()) }))
            default: break
            }
        }
    }

    static func lineCount(_ url: URL) -> Int {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return 0 }
        return text.split(separator: "\n").count
    }

    var pushedKeys: [String] {
        var keys: [String] = []
        for case .push(let batch) in events { keys += batch }
        return keys
    }

    var acknowledgedBatches: [[String]] {
        var batches: [[String]] = []
        for case .acknowledged(let batch) in events { batches.append(batch) }
        return batches
    }

    var listEdits: [(key: String, property: String, added: [String], removed: [String])] {
        var edits: [(key: String, property: String, added: [String], removed: [String])] = []
        for case .list(let key, let property, let added, let removed) in events {
            edits.append((key, property, added, removed))
        }
        return edits
    }

    /// The cards whose deletion was pushed.
    var deletedCards: Set<String> {
        var ids = Set<String>()
        for case .deleted(let id) in events { ids.insert(id) }
        return ids
    }

    var pullCursors: [String?] {
        var cursors: [String?] = []
        for case .pull(let cursor) in events { cursors.append(cursor) }
        return cursors
    }
}
