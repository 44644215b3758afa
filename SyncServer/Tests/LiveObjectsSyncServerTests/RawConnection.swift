import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP connection to a loopback port that sends bytes as given, for what an HTTP client would
/// never send: half a request head, or nothing at all.
final class RawConnection: @unchecked Sendable {
    // @unchecked: each test uses a connection from one task at a time.
    private let descriptor: Int32
    private var isOpen = true

    init(port: Int) throws {
        #if canImport(Glibc)
            let kind = Int32(SOCK_STREAM.rawValue)
        #else
            let kind = SOCK_STREAM
        #endif
        descriptor = socket(AF_INET, kind, 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            hangUp()
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { hangUp() }

    /// Closes the connection (once).
    func hangUp() {
        guard isOpen else { return }
        isOpen = false
        #if canImport(Glibc)
            _ = Glibc.close(descriptor)
        #else
            _ = Darwin.close(descriptor)
        #endif
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// What the server sends until it closes the connection; nil when it is still open after
    /// `limit` (a bound for a failing test, not a figure the test checks).
    func readUntilClosed(limit: Duration = .seconds(30)) async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.blockingRead(limit: limit)) }
        }
    }

    private func blockingRead(limit: Duration) -> String? {
        let deadline = ContinuousClock.now + limit
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) >= 0 else { return nil }
            guard entry.revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { return String(decoding: received, as: UTF8.self) }
            received += buffer[0..<count]
        }
        return nil
    }
}
