import Foundation
import LiveObjects

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 client over POSIX sockets, for `http://` URLs: what ``HTTPSyncTransport``
/// uses on Linux, where FoundationNetworking's `URLSession` keeps a core busy while it waits for
/// an answer (BENCHMARKS.md, "Waiting for the sync server").
///
/// One connection per request (`Connection: close`). The connection, the write and the read run
/// on a thread of their own that sleeps in `poll()` on the socket and on a pipe that a
/// cancellation writes to: waiting costs no processor time. Every failure is a
/// ``SyncHTTPError``: `.network` when the server cannot be reached, times out or closes the
/// connection early, `.invalidResponse` when its bytes are not HTTP or exceed the size limit.
struct SocketHTTPClient: Sendable {
    /// One request.
    struct Request: Sendable {
        var method: String
        var url: URL
        /// Sent as they are, after `Host`, `Content-Length` and `Connection`.
        var headers: [(name: String, value: String)]
        var body: Data?
        /// The most time from the start of the connection to the end of the answer.
        var timeout: Duration
    }

    /// An answer.
    struct Response: Sendable, Equatable {
        var status: Int
        /// Names in lowercase, in the order they came.
        var headers: [Header]
        var body: [UInt8]

        struct Header: Sendable, Equatable {
            var name: String
            var value: String
        }

        /// The first header of a name (case-insensitive).
        func header(_ name: String) -> String? {
            let lower = name.lowercased()
            return headers.first { $0.name == lower }?.value
        }
    }

    /// How long to wait for a connection. Default: 10 s.
    var connectTimeout: Duration = .seconds(10)
    /// How long the server may stay silent once connected (a long poll's wait included).
    /// Default: none beyond the request's timeout.
    var idleTimeout: Duration?
    /// The largest answer body accepted. Default: 64 MiB.
    var maxResponseBytes = 64 << 20

    /// Sends a request and reads its answer.
    ///
    /// - Throws: ``SyncHTTPError``; `CancellationError` when the task is cancelled (the
    ///   connection is closed at once).
    func send(_ request: Request, name: String) async throws -> Response {
        let exchange = try Exchange()
        let client = self
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Response, any Error>) in
                let thread = Thread {
                    let result: Result<Response, any Error>
                    do {
                        result = .success(try exchange.run(request, client: client, name: name))
                    } catch {
                        result = .failure(error)
                    }
                    exchange.close()
                    continuation.resume(with: result)
                }
                thread.name = "LiveObjectsSync HTTP"
                thread.start()
            }
        } onCancel: {
            exchange.cancel()
        }
    }
}

/// The sockets of one request: the connection and the pipe a cancellation writes to. The
/// descriptors are closed under the lock, so a late cancellation never writes to a reused one.
private final class Exchange: Sendable {
    private struct State {
        var wakeRead: Int32
        var wakeWrite: Int32
        var isCancelled = false
        var isClosed = false
    }

    private let state: Locked<State>

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw SyncHTTPError(.network, "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        state = Locked(State(wakeRead: fds[0], wakeWrite: fds[1]))
    }

    var wakeDescriptor: Int32 { state.withLock { $0.wakeRead } }
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    func cancel() {
        state.withLock { state in
            state.isCancelled = true
            guard !state.isClosed else { return }
            var byte: UInt8 = 1
            _ = write(state.wakeWrite, &byte, 1)
        }
    }

    func close() {
        state.withLock { state in
            guard !state.isClosed else { return }
            state.isClosed = true
            _ = closeDescriptor(state.wakeRead)
            _ = closeDescriptor(state.wakeWrite)
        }
    }

    /// Connects, writes the request and reads the answer, blocking the calling thread.
    func run(_ request: SocketHTTPClient.Request, client: SocketHTTPClient, name: String) throws
        -> SocketHTTPClient.Response
    {
        let start = ContinuousClock.now
        let deadline = start + request.timeout
        guard let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false),
            components.scheme?.lowercased() == "http", var host = components.host, !host.isEmpty
        else {
            throw SyncHTTPError(.network, "not an http:// URL: \(request.url.absoluteString)", request: name)
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? 80
        var target = components.percentEncodedPath
        if target.isEmpty { target = "/" }
        if let query = components.percentEncodedQuery { target += "?" + query }

        let socket = try connect(host: host, port: port, deadline: min(deadline, start + client.connectTimeout), name)
        defer { _ = closeDescriptor(socket) }

        var head = "\(request.method) \(target) HTTP/1.1\r\n"
        head += "Host: \(host.contains(":") ? "[\(host)]" : host)\(components.port.map { ":\($0)" } ?? "")\r\n"
        for header in request.headers {
            // A line break in a header (a token, say) would end it and start another one.
            guard !(header.name + header.value).utf8.contains(where: { $0 == 13 || $0 == 10 }) else {
                throw SyncHTTPError(.badRequest, "the header \(header.name) holds a line break", request: name)
            }
            head += "\(header.name): \(header.value)\r\n"
        }
        if let body = request.body {
            head += "Content-Length: \(body.count)\r\n"
        } else if request.method == "POST" || request.method == "PUT" {
            head += "Content-Length: 0\r\n"
        }
        head += "Connection: close\r\n\r\n"
        var bytes = Array(head.utf8)
        if let body = request.body { bytes += body }
        try send(bytes, on: socket, deadline: deadline, name)

        var parser = HTTPResponseParser(maxBodyBytes: client.maxResponseBytes, isHead: request.method == "HEAD")
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let idleDeadline = client.idleTimeout.map { ContinuousClock.now + $0 } ?? deadline
            try wait(for: socket, events: Int16(POLLIN), until: min(deadline, idleDeadline), name) {
                idleDeadline < deadline ? "the server sent nothing for \(client.idleTimeout!)" : nil
            }
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                throw SyncHTTPError(
                    .network, "the connection failed: \(String(cString: strerror(errno)))", request: name)
            }
            do {
                if count == 0 { return try parser.finish() }
                if let response = try parser.feed(buffer[0..<count]) { return response }
            } catch let error as HTTPResponseParser.Failure {
                throw SyncHTTPError(error.isNetwork ? .network : .invalidResponse, error.message, request: name)
            }
        }
    }

    /// Sleeps in `poll()` until the socket is ready, the request is cancelled or the deadline
    /// passes.
    private func wait(
        for socket: Int32, events: Int16, until deadline: ContinuousClock.Instant, _ name: String,
        idleMessage: () -> String? = { nil }
    ) throws {
        while true {
            if isCancelled { throw CancellationError() }
            let left = deadline - ContinuousClock.now
            if left <= .zero {
                throw SyncHTTPError(.network, idleMessage() ?? "the request timed out", request: name)
            }
            let (seconds, attoseconds) = left.components
            let milliseconds = min(Int64(Int32.max), seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var fds = [
                pollfd(fd: socket, events: events, revents: 0),
                pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, Int32(milliseconds))
            if ready < 0 {
                if errno == EINTR { continue }
                throw SyncHTTPError(.network, "poll failed: \(String(cString: strerror(errno)))", request: name)
            }
            if fds[1].revents != 0 || isCancelled { throw CancellationError() }
            if fds[0].revents != 0 { return }
        }
    }

    private func connect(host: String, port: Int, deadline: ContinuousClock.Instant, _ name: String) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if os(Linux)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SyncHTTPError(
                .network, "cannot resolve \(host): \(String(cString: gai_strerror(status)))", request: name)
        }
        defer { freeaddrinfo(first) }
        var failure = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next?.pointee {
            next = info.ai_next
            let fd = socket(info.ai_family, info.ai_socktype, info.ai_protocol)
            guard fd >= 0 else {
                failure = String(cString: strerror(errno))
                continue
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            #if canImport(Darwin)
                var one: Int32 = 1
                _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            do {
                if Foundation.connect(fd, info.ai_addr, info.ai_addrlen) != 0 {
                    guard errno == EINPROGRESS || errno == EINTR else {
                        throw SyncHTTPError(.network, String(cString: strerror(errno)), request: name)
                    }
                    try wait(for: fd, events: Int16(POLLOUT), until: deadline, name) {
                        "cannot connect to \(host):\(port) in time"
                    }
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    guard error == 0 else {
                        throw SyncHTTPError(.network, String(cString: strerror(error)), request: name)
                    }
                }
                return fd
            } catch let error as SyncHTTPError {
                _ = closeDescriptor(fd)
                failure = error.message
            } catch {
                _ = closeDescriptor(fd)
                throw error
            }
        }
        throw SyncHTTPError(.network, "cannot connect to \(host):\(port): \(failure)", request: name)
    }

    private func send(_ bytes: [UInt8], on socket: Int32, deadline: ContinuousClock.Instant, _ name: String) throws {
        var offset = 0
        #if os(Linux)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        while offset < bytes.count {
            try wait(for: socket, events: Int16(POLLOUT), until: deadline, name)
            let written = bytes.withUnsafeBytes {
                Foundation.send(socket, $0.baseAddress! + offset, $0.count - offset, flags)
            }
            if written < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                throw SyncHTTPError(
                    .network, "the request could not be sent: \(String(cString: strerror(errno)))", request: name)
            }
            offset += written
        }
    }
}

private func closeDescriptor(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(fd)
    #elseif canImport(Musl)
        Musl.close(fd)
    #else
        Darwin.close(fd)
    #endif
}

/// Reads an HTTP/1.1 answer from the bytes of a connection the client closes after it: the
/// status line, the headers, and a body by `Content-Length`, chunked, or up to the end of the
/// connection. It never traps on any input: bytes that are not HTTP are a ``Failure``.
struct HTTPResponseParser {
    /// Why the bytes are not an answer.
    struct Failure: Error, Equatable {
        var message: String
        /// The connection ended early (a network failure), rather than sent what is not HTTP.
        var isNetwork = false
    }

    /// The largest status line and headers accepted.
    static let maxHeadBytes = 64 << 10

    let maxBodyBytes: Int
    /// An answer to HEAD has no body, whatever its headers say.
    let isHead: Bool
    private var buffer: [UInt8] = []

    init(maxBodyBytes: Int, isHead: Bool = false) {
        self.maxBodyBytes = maxBodyBytes
        self.isHead = isHead
    }

    /// Adds bytes; the answer once they hold all of it.
    mutating func feed(_ bytes: some Collection<UInt8>) throws -> SocketHTTPClient.Response? {
        buffer.append(contentsOf: bytes)
        if buffer.count > Self.maxHeadBytes + maxBodyBytes + maxBodyBytes / 8 + 64 {
            throw Failure(message: "the answer is larger than \(maxBodyBytes) bytes")
        }
        return try parse(atEnd: false)
    }

    /// The answer when the connection ended.
    mutating func finish() throws -> SocketHTTPClient.Response {
        guard let response = try parse(atEnd: true) else {
            throw Failure(message: "the connection closed before the answer was complete", isNetwork: true)
        }
        return response
    }

    private func parse(atEnd: Bool) throws -> SocketHTTPClient.Response? {
        var start = 0
        while true {
            guard let headEnd = find([13, 10, 13, 10], from: start) else {
                if buffer.count - start > Self.maxHeadBytes {
                    throw Failure(message: "the answer's headers are larger than \(Self.maxHeadBytes) bytes")
                }
                if atEnd && buffer.count == start {
                    throw Failure(message: "the server closed the connection without answering", isNetwork: true)
                }
                return nil
            }
            if headEnd - start > Self.maxHeadBytes {
                throw Failure(message: "the answer's headers are larger than \(Self.maxHeadBytes) bytes")
            }
            let (status, headers) = try head(buffer[start..<headEnd])
            let bodyStart = headEnd + 4
            if (100..<200).contains(status) {
                start = bodyStart  // an interim answer (100 Continue): the real one follows
                continue
            }
            var response = SocketHTTPClient.Response(status: status, headers: headers, body: [])
            if isHead || status == 204 || status == 304 { return response }
            let encoding = response.header("transfer-encoding")?.lowercased()
            if let encoding, encoding != "identity" {
                guard encoding.split(separator: ",").last?.trimmingCharacters(in: .whitespaces) == "chunked" else {
                    throw Failure(message: "unsupported transfer encoding \(encoding)")
                }
                // The message ends with an empty line; parse the chunks once the bytes end with one.
                guard atEnd || buffer.count >= bodyStart + 5 && buffer.suffix(4).elementsEqual([13, 10, 13, 10])
                else { return nil }
                guard let body = try chunks(from: bodyStart) else {
                    if atEnd {
                        throw Failure(message: "the connection closed in the middle of the answer", isNetwork: true)
                    }
                    return nil
                }
                response.body = body
                return response
            }
            let lengths = headers.filter { $0.name == "content-length" }.map(\.value)
            if let first = lengths.first {
                guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.utf8.count <= 18,
                    first.utf8.allSatisfy({ (48...57).contains($0) }), let length = Int(first)
                else { throw Failure(message: "the answer's Content-Length is not a length: \(lengths)") }
                if length > maxBodyBytes { throw Failure(message: "the answer is larger than \(maxBodyBytes) bytes") }
                if buffer.count - bodyStart < length {
                    if atEnd {
                        throw Failure(message: "the connection closed in the middle of the answer", isNetwork: true)
                    }
                    return nil
                }
                response.body = Array(buffer[bodyStart..<(bodyStart + length)])
                return response
            }
            if buffer.count - bodyStart > maxBodyBytes {
                throw Failure(message: "the answer is larger than \(maxBodyBytes) bytes")
            }
            guard atEnd else { return nil }
            response.body = Array(buffer[bodyStart...])
            return response
        }
    }

    private func head(_ bytes: ArraySlice<UInt8>) throws -> (Int, [SocketHTTPClient.Response.Header]) {
        let lines = bytes.split(separator: 10, omittingEmptySubsequences: false).map { line in
            line.last == 13 ? line.dropLast() : line
        }
        guard let statusLine = lines.first, statusLine.count >= 12,
            statusLine.starts(with: Array("HTTP/1.".utf8)),
            statusLine[statusLine.startIndex + 8] == 32
        else {
            throw Failure(message: "not an HTTP/1 answer: \(Self.text(lines.first ?? []))")
        }
        let digits = statusLine[(statusLine.startIndex + 9)..<(statusLine.startIndex + 12)]
        guard digits.allSatisfy({ (48...57).contains($0) }),
            statusLine.count == 12 || statusLine[statusLine.startIndex + 12] == 32,
            let status = Int(String(decoding: digits, as: UTF8.self)), (100...599).contains(status)
        else { throw Failure(message: "not an HTTP status line: \(Self.text(statusLine))") }
        var headers: [SocketHTTPClient.Response.Header] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 58), colon > line.startIndex,
                !line[..<colon].contains(where: { $0 == 32 || $0 == 9 })
            else { throw Failure(message: "not a header line: \(Self.text(line))") }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            headers.append(.init(name: name, value: value))
        }
        return (status, headers)
    }

    /// The body of a chunked answer starting at `offset`; nil when its bytes are incomplete.
    private func chunks(from offset: Int) throws -> [UInt8]? {
        var body: [UInt8] = []
        var position = offset
        while true {
            guard let lineEnd = find([13, 10], from: position) else { return nil }
            let line = buffer[position..<lineEnd]
            let sizeText = line.prefix { $0 != 59 }.filter { $0 != 32 && $0 != 9 }  // chunk extensions after ';'
            guard !sizeText.isEmpty, sizeText.count <= 15,
                let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16), size >= 0
            else { throw Failure(message: "not a chunk size: \(Self.text(line))") }
            position = lineEnd + 2
            if size == 0 {
                // Trailers, then an empty line.
                while true {
                    guard let end = find([13, 10], from: position) else { return nil }
                    if end == position { return body }
                    position = end + 2
                }
            }
            if body.count + size > maxBodyBytes {
                throw Failure(message: "the answer is larger than \(maxBodyBytes) bytes")
            }
            guard buffer.count - position >= size + 2 else { return nil }
            guard buffer[position + size] == 13, buffer[position + size + 1] == 10 else {
                throw Failure(message: "a chunk does not end where its size says")
            }
            body.append(contentsOf: buffer[position..<(position + size)])
            position += size + 2
        }
    }

    private func find(_ pattern: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= pattern.count, start <= buffer.count - pattern.count else { return nil }
        var index = start
        while index <= buffer.count - pattern.count {
            if buffer[index] == pattern[0] && buffer[index..<(index + pattern.count)].elementsEqual(pattern) {
                return index
            }
            index += 1
        }
        return nil
    }

    private static func text(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes.prefix(80), as: UTF8.self)
    }
}
