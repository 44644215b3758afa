import Foundation
import LiveObjects

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A tiny HTTP server on loopback for the tests and the measurements of the sync transport: it
/// reads each request and plays the steps its handler gives (bytes, pauses, a close), so that a
/// test can script a slow server, one that closes mid-body, or one that sends garbage.
///
/// Each connection runs on a thread of its own with blocking sockets; a pause sleeps in
/// `poll()` on a pipe that ``stop()`` wakes, so a stopped server leaves no thread waiting.
package final class ScriptedHTTPServer: Sendable {
    /// A request as the server read it.
    package struct Request: Sendable {
        /// `GET`, `POST`, …
        package var method: String
        /// The path and query, as sent.
        package var target: String
        /// Header names in lowercase.
        package var headers: [String: String]
        package var body: [UInt8]
    }

    /// What the server does next on a connection.
    package enum Step: Sendable {
        /// Writes bytes.
        case send([UInt8])
        /// Waits (woken early by ``ScriptedHTTPServer/stop()``).
        case pause(Duration)
        /// Sends nothing more until the client closes the connection (or the server stops); a
        /// close seen this way is counted in ``ScriptedHTTPServer/closesSeen``.
        case awaitClientClose
        /// Closes the connection (the end of the steps closes it too).
        case close
    }

    /// Gives the steps of the answer to a request.
    package typealias Handler = @Sendable (Request) -> [Step]

    /// The loopback port the server listens on.
    package let port: Int
    private let listener: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let handler: Handler
    private let received = Locked<[Request]>([])
    private let stopped = Locked(false)
    private let clientCloses = Locked(0)

    /// The requests read so far.
    package var requests: [Request] { received.withLock { $0 } }

    /// How many connections the client closed while an ``Step/awaitClientClose`` waited.
    package var closesSeen: Int { clientCloses.withLock { $0 } }

    /// Starts a server on a free loopback port.
    package init(handler: @escaping Handler) throws {
        self.handler = handler
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
        stopPipe = (fds[0], fds[1])
        #if os(Linux)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "ScriptedHTTPServer"
        thread.start()
    }

    /// Stops accepting, and wakes every pause.
    package func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
    }

    /// The answer `status` with a body and its `Content-Length`.
    package static func answer(status: Int = 200, _ body: String, headers: [String] = []) -> [UInt8] {
        var head = "HTTP/1.1 \(status) Status\r\nContent-Type: application/json\r\n"
        for header in headers { head += header + "\r\n" }
        head += "Content-Length: \(body.utf8.count)\r\n\r\n"
        return Array((head + body).utf8)
    }

    private var isStopped: Bool { stopped.withLock { $0 } }

    private func acceptLoop() {
        while !isStopped {
            var fds = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&fds, 2, -1) > 0 else { continue }
            if fds[1].revents != 0 { break }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
        _ = closeSocket(listener)
    }

    private func serve(_ connection: Int32) {
        defer { _ = closeSocket(connection) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        var request: Request?
        while request == nil {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            buffer += chunk[0..<count]
            request = Self.parse(buffer)
        }
        guard let request else { return }
        received.withLock { $0.append(request) }
        #if os(Linux)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        for step in handler(request) {
            switch step {
            case .send(let bytes):
                var offset = 0
                while offset < bytes.count {
                    let written = bytes.withUnsafeBytes {
                        send(connection, $0.baseAddress! + offset, bytes.count - offset, flags)
                    }
                    guard written > 0 else { return }
                    offset += written
                }
            case .pause(let duration):
                let (seconds, attoseconds) = duration.components
                var fds = [pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
                _ = poll(&fds, 1, Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000))
            case .awaitClientClose:
                if awaitClientClose(on: connection) { clientCloses.withLock { $0 += 1 } }
                return
            case .close:
                return
            }
        }
    }

    /// Reads and drops what the client sends until it closes the connection (true) or the
    /// server stops (false).
    private func awaitClientClose(on connection: Int32) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4 << 10)
        while true {
            var fds = [
                pollfd(fd: connection, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&fds, 2, -1) > 0 else { continue }
            if fds[1].revents != 0 { return false }
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0, errno != EINTR, errno != EAGAIN { return true }
        }
    }

    /// A complete request in the bytes read, or nil.
    private static func parse(_ bytes: [UInt8]) -> Request? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4,
            let end = (0...(bytes.count - 4)).first(where: { bytes[$0..<($0 + 4)].elementsEqual(separator) })
        else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let first = lines[0].split(separator: " ")
        guard first.count >= 2 else { return Request(method: "", target: "", headers: [:], body: []) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        guard bytes.count - (end + 4) >= length else { return nil }
        return Request(
            method: String(first[0]), target: String(first[1]), headers: headers,
            body: Array(bytes[(end + 4)..<(end + 4 + length)]))
    }

    deinit { stop() }
}

private func closeSocket(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(fd)
    #elseif canImport(Musl)
        Musl.close(fd)
    #else
        Darwin.close(fd)
    #endif
}
