import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `liveobj` binary run on a pseudo-terminal, as a person at a terminal runs it: it is the
/// leader of a new session whose controlling terminal is the pseudo-terminal, so Ctrl-C and
/// resizes reach it as signals. Tests write keystrokes and read what it prints until an
/// expected text shows (with a generous timeout that only stops a hang).
final class PseudoTerminal {
    let master: Int32
    let pid: pid_t
    /// Everything the program wrote.
    private(set) var transcript = ""
    /// Where ``waitFor(_:)`` looks from: just after the last text it found.
    private(set) var mark: String.Index
    var screen: TerminalScreen
    private var bytes: [UInt8] = []
    private var exitStatus: Int32?

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `liveobj` (or `program`, a shell that runs it) with arguments and extra environment
    /// variables on a terminal of the given size.
    init(
        _ arguments: [String], program: URL? = nil, environment: [String: String] = [:], columns: Int = 100,
        rows: Int = 40
    ) throws {
        guard let binary = program ?? EndToEndTests.binary() else {
            throw Failure(description: "the liveobj binary was not found")
        }
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, &size) == 0 else { throw Failure(description: "openpty failed") }
        self.master = master
        // ttyname_r, not ttyname: ttyname fills one buffer for the whole process, and tests on
        // other threads open terminals at the same time (a half-written "/dev/pts/" made the
        // child's open fail with EISDIR).
        var name = [CChar](repeating: 0, count: 256)
        let named = ttyname_r(slave, &name, name.count)
        close(slave)
        guard named == 0 else {
            close(master)
            throw Failure(description: "ttyname_r failed: \(named)")
        }
        let slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, master)
        // Opened after setsid: the pseudo-terminal becomes the controlling terminal.
        posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        #if os(Linux)
            let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID, hidden behind _GNU_SOURCE
        #else
            let setsid: Int32 = 0x400
        #endif
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGWINCH, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE] { sigaddset(&defaults, number) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(setsid | Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)))

        var variables = ProcessInfo.processInfo.environment
        variables["TERM"] = "xterm-256color"
        variables["LIVEOBJ_NO_HISTORY"] = nil
        variables["LIVEOBJ_HISTORY"] = nil
        for (key, value) in environment { variables[key] = value }
        let argv = ([binary.path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var child: pid_t = 0
        let status = posix_spawn(&child, binary.path, &actions, &attributes, argv, envp)
        guard status == 0 else {
            close(master)
            throw Failure(description: "posix_spawn failed: \(status) (terminal \(slavePath))")
        }
        pid = child
        screen = TerminalScreen(columns: columns)
        mark = transcript.startIndex
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        close(master)
    }

    /// Written by the shell when it starts reading a line (bracketed paste on), and when it has
    /// read one (bracketed paste off).
    static let startsReading = "\u{1B}[?2004h"
    static let hasRead = "\u{1B}[?2004l"

    /// Types a command and Enter; returns what the shell printed until it reads the next line.
    @discardableResult
    func run(_ command: String) throws -> String {
        send(command + "\r")
        try waitFor(Self.hasRead)
        return try waitFor(Self.startsReading)
    }

    /// Types keys (text with escape sequences and control characters).
    func send(_ keys: String) {
        let data = Array(keys.utf8)
        var done = 0
        while done < data.count {
            let n = data.withUnsafeBytes { write(master, $0.baseAddress! + done, $0.count - done) }
            if n <= 0 { return }
            done += n
        }
    }

    /// Reads what the program wrote until `text` shows after the mark, then moves the mark past
    /// it; returns what was read from the old mark.
    @discardableResult
    func waitFor(_ text: String, timeout: Double = 120) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let range = transcript[mark...].range(of: text) {
                let read = String(transcript[mark..<range.upperBound])
                mark = range.upperBound
                return read
            }
            guard Date() < deadline, readSome() else {
                throw Failure(
                    description: "'\(text)' did not show; the terminal shows:\n\(screen.lines.joined(separator: "\n"))")
            }
        }
    }

    /// Reads what is available (waiting up to a second); false at the end of output.
    func readSome() -> Bool {
        var fds = [pollfd(fd: master, events: Int16(POLLIN), revents: 0)]
        let ready = poll(&fds, 1, 1000)
        if ready <= 0 { return ready == 0 }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(master, &buffer, buffer.count)
        if n <= 0 { return false }
        bytes += buffer[..<n]
        // Decode only whole UTF-8 sequences.
        var end = bytes.count
        var back = 0
        while back < 4, end - back - 1 >= 0, bytes[end - back - 1] & 0xC0 == 0x80 { back += 1 }
        if end - back - 1 >= 0 {
            let lead = bytes[end - back - 1]
            let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
            if length > back + 1 { end -= back + 1 }
        }
        let text = String(decoding: bytes[..<end], as: UTF8.self)
        bytes.removeFirst(end)
        let offset = transcript.distance(from: transcript.startIndex, to: mark)
        transcript += text
        mark = transcript.index(transcript.startIndex, offsetBy: offset)
        screen.feed(text)
        return true
    }

    /// Changes the terminal's size, as a terminal emulator does when its window is resized.
    func resize(columns: Int, rows: Int = 40) {
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        kill(pid, SIGWINCH)
        screen.columns = columns
    }

    /// Waits for the program to exit (reading its last output); returns its exit status.
    /// What the terminal shows, for the message of a failed expectation (a sanitizer's report
    /// included: a program it stopped exits with its own status).
    var shown: Comment { Comment(rawValue: "the terminal shows:\n" + screen.lines.joined(separator: "\n")) }

    func waitForExit(timeout: Double = 120) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var status: Int32 = 0
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid {
                while readSome(), hasInput() {}
                let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                exitStatus = code
                return code
            }
            _ = readSome()
        }
        throw Failure(description: "liveobj did not exit; the terminal shows:\n\(screen.lines.joined(separator: "\n"))")
    }

    /// The terminal's local modes (`ICANON`, `ECHO`, `ISIG`, …) as the program left them.
    var localModes: tcflag_t {
        var attributes = termios()
        tcgetattr(master, &attributes)
        return attributes.c_lflag
    }

    func hasInput() -> Bool {
        var fds = [pollfd(fd: master, events: Int16(POLLIN), revents: 0)]
        return poll(&fds, 1, 0) > 0
    }
}

/// Keys as a terminal sends them.
enum Keys {
    static let enter = "\r"
    static let up = "\u{1B}[A"
    static let down = "\u{1B}[B"
    static let right = "\u{1B}[C"
    static let left = "\u{1B}[D"
    static let home = "\u{1B}[H"
    static let end = "\u{1B}[F"
    static let delete = "\u{1B}[3~"
    static let backspace = "\u{7F}"
    static let tab = "\t"
    static let altB = "\u{1B}b"
    static let altF = "\u{1B}f"
    static let pasteBegin = "\u{1B}[200~"
    static let pasteEnd = "\u{1B}[201~"
    static func control(_ letter: Character) -> String {
        String(Character(Unicode.Scalar(letter.asciiValue! & 0x1F)))
    }
}
