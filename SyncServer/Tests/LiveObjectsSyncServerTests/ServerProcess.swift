import Foundation
import LiveObjectsSyncServer
import Synchronization
import Testing

/// The built `liveobjects-sync-server serve --port 0` as a child process, over the database of
/// the environment; stopped (SIGTERM, then waited for) by ``stop()``.
final class ServerProcess: Sendable {
    let baseURL: URL
    private let process: Process
    private let output: Output

    final class Output: Sendable {
        let text = Mutex("")
    }

    /// The executable: next to the test bundle (`swift build` and `swift test` build it), or
    /// LIVEOBJECTS_SYNC_SERVER_EXECUTABLE.
    static var executable: URL? {
        if let path = ProcessInfo.processInfo.environment["LIVEOBJECTS_SYNC_SERVER_EXECUTABLE"] {
            return URL(fileURLWithPath: path)
        }
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ]
        for directory in candidates.compactMap({ $0 }) {
            for folder in [directory, directory.deletingLastPathComponent()] {
                let url = folder.appendingPathComponent("liveobjects-sync-server")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
        }
        return nil
    }

    /// Starts a server process and returns once it listens.
    static func start() async throws -> ServerProcess {
        try await offThePool { try startWaiting() }
    }

    private static func startWaiting() throws -> ServerProcess {
        guard let executable else {
            Issue.record(
                "liveobjects-sync-server was not found next to the tests: run swift build --package-path SyncServer")
            throw SyncServerError(.internal, "no server executable")
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", "--port", "0"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe  // the log
        let output = Output()
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            output.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        var port: Int?
        for _ in 0..<1200 where port == nil && process.isRunning {
            let text = output.text.withLock { $0 }
            if let range = text.range(of: "listening on http://127.0.0.1:") {
                port = Int(text[range.upperBound...].prefix(while: \.isNumber))
            } else {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        guard let port else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            pipe.fileHandleForReading.readabilityHandler = nil
            throw SyncServerError(
                .internal, "the server process did not start: \(output.text.withLock { $0 })")
        }
        return ServerProcess(baseURL: URL(string: "http://127.0.0.1:\(port)")!, process: process, output: output)
    }

    /// Runs a command of the executable to its end: its exit status, standard output and error.
    static func command(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
        try await offThePool { try commandWaiting(arguments) }
    }

    private static func commandWaiting(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        guard let executable else {
            Issue.record(
                "liveobjects-sync-server was not found next to the tests: run swift build --package-path SyncServer")
            throw SyncServerError(.internal, "no server executable")
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Both pipes are read to their end before waiting, so that a full pipe cannot block the
        // child.
        let errorText = Output()
        let errorRead = DispatchSemaphore(value: 0)
        Thread {
            let data = error.fileHandleForReading.readDataToEndOfFile()
            errorText.text.withLock { $0 = String(decoding: data, as: UTF8.self) }
            errorRead.signal()
        }.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        errorRead.wait()
        return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), errorText.text.withLock { $0 })
    }

    private init(baseURL: URL, process: Process, output: Output) {
        self.baseURL = baseURL
        self.process = process
        self.output = output
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Sends SIGTERM and waits for the process: its exit status and everything it printed.
    func terminate() async throws -> (status: Int32, output: String) {
        try await offThePool { self.terminateWaiting() }
    }

    private func terminateWaiting() -> (status: Int32, output: String) {
        process.terminate()
        process.waitUntilExit()
        // What the pipe still holds after the process ended.
        if let pipe = process.standardOutput as? Pipe {
            pipe.fileHandleForReading.readabilityHandler = nil
            let rest = pipe.fileHandleForReading.readDataToEndOfFile()
            output.text.withLock { $0 += String(decoding: rest, as: UTF8.self) }
        }
        return (process.terminationStatus, output.text.withLock { $0 })
    }
}

/// Runs work that blocks (starting a process and polling its output, waiting for it to end) on a
/// thread of its own. Tests run on Swift's concurrency pool, two threads on a 2-core machine:
/// a test blocking one of them while another did the same stalled every other test of the run,
/// the in-process servers' handlers included.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
