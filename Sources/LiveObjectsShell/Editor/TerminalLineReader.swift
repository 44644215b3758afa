import Dispatch
import Foundation
import LiveObjects
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What reading a line at the terminal gave.
package enum TerminalRead: Equatable, Sendable {
    case line(String)
    /// Ctrl-C: the line was abandoned.
    case interrupted
    /// Ctrl-D on an empty line, or the terminal went away.
    case ended
}

/// A flag raised by Ctrl-C while a command runs; the command's loops check it and stop, rolling
/// back what they did.
package final class InterruptFlag: Sendable {
    let raised = Atomic<Bool>(false)

    package init() {}

    /// Whether Ctrl-C was pressed since the last ``clear()``.
    var isRaised: Bool { raised.load(ordering: .relaxed) }

    func raise() { raised.store(true, ordering: .relaxed) }

    package func clear() { raised.store(false, ordering: .relaxed) }

    /// Throws when Ctrl-C was pressed.
    ///
    /// - Throws: `ShellError` saying that the command was interrupted.
    package func check() throws(ShellError) {
        if isRaised { throw ShellError("interrupted; the command changed nothing") }
    }
}

/// The terminal's settings before raw mode, and whether raw mode is on: read by the handlers of
/// the signals that end the process, which put the terminal back before dying.
nonisolated(unsafe) private var savedAttributes = termios()
nonisolated(unsafe) private var isRawModeOn: sig_atomic_t = 0

private func restoreTerminalAndDie(_ number: Int32) {
    if isRawModeOn != 0 {
        tcsetattr(STDIN_FILENO, TCSANOW, &savedAttributes)
        let end: [UInt8] = Array("\u{1B}[?2004l\r\n".utf8)
        _ = end.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }
    signal(number, SIG_DFL)
    raise(number)
}

/// Writes all of `bytes` to a file descriptor, retrying interrupted writes.
private func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
        if n < 0 {
            if errno == EINTR { continue }
            return  // a full wake-up pipe already wakes the reader
        }
        done += n
    }
}

/// Text to print while a line is read (a watch's change set from another process's commit):
/// queued by any task, printed by the reader above the line being edited, which it then draws
/// again as it was.
final class TerminalNotices: Sendable {
    let queue = Locked<[String]>([])
    let wake: Int32

    init(wake: Int32) { self.wake = wake }

    /// Queues `text` (one or more lines) and wakes the reader.
    func post(_ text: String) {
        queue.withLock { $0.append(text) }
        writeAll(wake, [1])
    }

    func take() -> [String] {
        queue.withLock { texts in
            defer { texts = [] }
            return texts
        }
    }
}

/// Stops the process as the terminal's Ctrl-Z would (raw mode turns that key into a byte): by
/// SIGTSTP with its default action, sent to this thread with SIGTSTP unblocked on it. The threads
/// that run Swift's tasks block signals, and a signal raised on a thread that blocks it only
/// stays pending. Returns when the process is continued (`fg`, SIGCONT); at once when SIGTSTP is
/// ignored (a process started without job control is not stopped).
private func stopProcess() {
    var tstp = sigset_t()
    var previous = sigset_t()
    sigemptyset(&tstp)
    sigaddset(&tstp, SIGTSTP)
    pthread_sigmask(SIG_UNBLOCK, &tstp, &previous)
    raise(SIGTSTP)
    pthread_sigmask(SIG_SETMASK, &previous, nil)
}

private func restoreTerminalAtExit() {
    if isRawModeOn != 0 { tcsetattr(STDIN_FILENO, TCSANOW, &savedAttributes) }
}

/// Reads lines at a terminal with a ``LineEditor``: raw mode only while a line is read, bracketed
/// paste, history, completion, redrawing on resize (SIGWINCH), and Ctrl-C turned into an
/// ``InterruptFlag`` while commands run, and Ctrl-Z suspending the process. The terminal's
/// settings are restored after every line, while the process is suspended, at exit, and by the
/// signals that end the process (SIGTERM, SIGHUP, SIGQUIT).
package final class TerminalLineReader {
    let input = STDIN_FILENO
    let output = STDOUT_FILENO
    var decoder = KeyDecoder()
    var editor = LineEditor()
    var renderer = LineRenderer(columns: 80)
    /// The commands typed, kept in a file.
    package var history: LineHistory
    /// Whether the terminal went away (end of file or an error reading it).
    package var isClosed: Bool {
        reading.lock()
        defer { reading.unlock() }
        return terminalWentAway
    }
    /// ``isClosed``, written while a line is read (under ``reading``).
    private var terminalWentAway = false
    /// Raised by Ctrl-C while no line is being read (a command is running).
    let interruption = InterruptFlag()
    /// Completes the word before the cursor.
    package var completer: ((String, Int) -> CompletionCandidates)? {
        get { editor.completer }
        set { editor.completer = newValue }
    }
    /// Written by the SIGWINCH handler and by ``notices`` to wake the reader up.
    let wakeRead: Int32
    let wakeWrite: Int32
    /// Text printed above the line being edited, or before the next prompt when no line is
    /// being read.
    let notices: TerminalNotices
    var sources: [any DispatchSourceSignal] = []
    /// Held while a line is read. One thread reads at a time (the shell waits for each line), but
    /// successive lines are read on different threads (a thread of its own for a command, the
    /// task's thread for a yes/no question); the lock makes each read see the previous one's
    /// writes, which a continuation's resumption alone does not show the thread sanitizer.
    let reading = NSLock()

    /// A reader on standard input and output, or nil when either is not a terminal.
    package init?(history: LineHistory.Configuration) {
        guard isatty(input) == 1, isatty(output) == 1 else { return nil }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        _ = fcntl(wakeRead, F_SETFL, O_NONBLOCK)
        _ = fcntl(wakeWrite, F_SETFL, O_NONBLOCK)
        notices = TerminalNotices(wake: wakeWrite)
        self.history = LineHistory(history)
        guard tcgetattr(input, &savedAttributes) == 0 else { return nil }
        atexit { restoreTerminalAtExit() }
        for number in [SIGTERM, SIGHUP, SIGQUIT] { signal(number, restoreTerminalAndDie) }
        // SIGINT and SIGWINCH become dispatch sources (which need them ignored).
        signal(SIGINT, SIG_IGN)
        signal(SIGWINCH, SIG_IGN)
        let flag = interruption
        let winch = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
        let wake = wakeWrite
        winch.setEventHandler { writeAll(wake, [1]) }
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler {
            flag.raise()
            writeAll(STDOUT_FILENO, Array("\n".utf8))  // after the terminal's ^C
        }
        winch.resume()
        interrupt.resume()
        sources = [winch, interrupt]
    }

    deinit {
        for source in sources { source.cancel() }
        close(wakeRead)
        close(wakeWrite)
    }

    /// Records a command in the history (and its file).
    package func record(_ command: String) {
        history.add(command)
    }

    // MARK: Reading a line

    /// Reads one line, showing `prompt`. With `usesHistory` false (a yes/no question), Up and
    /// Down do not go through the history.
    package func readLine(prompt: String, usesHistory: Bool = true) -> TerminalRead {
        reading.lock()
        defer { reading.unlock() }
        enterRawMode()
        defer { leaveRawMode() }
        // In raw mode Ctrl-C is a key, not a signal: a Ctrl-C from now on is for this line, one
        // from before was for the commands run since the last line, which ended.
        interruption.clear()
        if decoder.isEmpty && editor.isPasting { _ = editor.handle(.pasteEnd) }
        editor.history = usesHistory ? history.entries : []
        editor.reset()
        renderer.columns = Self.columns(of: output)
        renderer.reset()
        printNotices()
        draw(prompt)
        while true {
            while let key = decoder.next() {
                if let result = apply(key, prompt: prompt) { return result }
            }
            var fds = [
                pollfd(fd: input, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, decoder.isWaitingAfterEscape ? 100 : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                terminalWentAway = true
                return finish(.ended)
            }
            if ready == 0 {
                if let key = decoder.flushEscape(), let result = apply(key, prompt: prompt) { return result }
                continue
            }
            if fds[1].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &drain, drain.count) > 0 {}
                let columns = Self.columns(of: output)
                if columns != renderer.columns {
                    renderer.resize(columns: columns)
                    draw(prompt)
                }
                if printNotices() { draw(prompt) }
            }
            if fds[0].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 4096)
                let n = read(input, &bytes, bytes.count)
                if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if n <= 0 {
                    terminalWentAway = true
                    return finish(.ended)
                }
                decoder.feed(bytes[..<n])
            }
        }
    }

    /// Acts on one key; a result when the line is done.
    func apply(_ key: EditorKey, prompt: String) -> TerminalRead? {
        switch editor.handle(key) {
        case .redraw:
            draw(prompt)
        case .bell:
            draw(prompt)
            write("\u{07}")
        case .submit(let line):
            return finish(.line(line), prompt: prompt)
        case .endOfInput:
            return finish(.ended, prompt: prompt)
        case .interrupt:
            return finish(.interrupted, prompt: prompt)
        case .clearScreen:
            write("\u{1B}[H\u{1B}[2J")
            renderer.reset()
            draw(prompt)
        case .suspend:
            // As a terminal shows it: ^Z after the line, the terminal's settings restored, then
            // stopped; once continued, raw mode again and the line drawn afresh below.
            let shown = editor.display(prompt: prompt)
            write(renderer.draw(prompt: prompt, text: shown.text, cursor: shown.text.count) + "^Z")
            leaveRawMode()
            write(renderer.finish())
            stopProcess()
            enterRawMode()
            renderer.columns = Self.columns(of: output)
            renderer.reset()
            draw(prompt)
        case .list(let candidates):
            moveBelow(prompt)
            write(Self.columnsText(candidates, width: renderer.columns))
            draw(prompt)
        }
        return nil
    }

    func draw(_ prompt: String) {
        let shown = editor.display(prompt: prompt)
        write(renderer.draw(prompt: shown.prompt, text: shown.text, cursor: shown.cursor))
    }

    /// Prints the queued notices where the line is drawn (erasing it), after which the line is
    /// drawn afresh below them; whether there were any.
    @discardableResult
    func printNotices() -> Bool {
        let texts = notices.take()
        guard !texts.isEmpty else { return false }
        var out = renderer.cursorRow > 0 ? "\u{1B}[\(renderer.cursorRow)A" : ""
        out += "\r\u{1B}[J"
        for text in texts {
            out += text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n") + "\r\n"
        }
        write(out)
        renderer.reset()
        return true
    }

    /// Draws the line with the cursor at its end and goes to a new line.
    func moveBelow(_ prompt: String) {
        let shown = editor.display(prompt: prompt)
        write(renderer.draw(prompt: prompt, text: shown.text, cursor: shown.text.count) + renderer.finish())
    }

    func finish(_ result: TerminalRead, prompt: String? = nil) -> TerminalRead {
        if let prompt {
            let shown = editor.display(prompt: prompt)
            var text = renderer.draw(prompt: prompt, text: shown.text, cursor: shown.text.count)
            if result == .interrupted { text += "^C" }
            write(text)
        }
        // Out of raw mode before the newline: once it shows, Ctrl-C is a signal again.
        leaveRawMode()
        write(renderer.finish())
        return result
    }

    /// Candidates in columns, as wide as the terminal allows.
    static func columnsText(_ candidates: [String], width: Int) -> String {
        let cell = (candidates.map(DisplayWidth.of).max() ?? 0) + 2
        let perRow = max(1, width / cell)
        let rows = (candidates.count + perRow - 1) / perRow
        var text = ""
        for row in 0..<rows {
            var line = ""
            for column in 0..<perRow {
                let i = column * rows + row
                guard i < candidates.count else { break }
                let candidate = candidates[i]
                line += candidate
                if (column + 1) * rows + row < candidates.count {
                    line += String(repeating: " ", count: cell - DisplayWidth.of(candidate))
                }
            }
            text += line + "\r\n"
        }
        return text
    }

    // MARK: The terminal

    func write(_ text: String) {
        writeAll(output, Array(text.utf8))
    }

    func enterRawMode() {
        guard isRawModeOn == 0 else { return }
        var raw = termios()
        guard tcgetattr(input, &raw) == 0 else { return }
        savedAttributes = raw
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        isRawModeOn = 1
        guard tcsetattr(input, TCSANOW, &raw) == 0 else {
            isRawModeOn = 0
            return
        }
        write("\u{1B}[?2004h")
    }

    func leaveRawMode() {
        guard isRawModeOn != 0 else { return }
        tcsetattr(input, TCSANOW, &savedAttributes)
        isRawModeOn = 0
        write("\u{1B}[?2004l")
    }

    /// The width of standard output when it is a terminal, else nil.
    package static func outputWidth() -> Int? {
        isatty(STDOUT_FILENO) == 1 ? columns(of: STDOUT_FILENO) : nil
    }

    static func columns(of fd: Int32) -> Int {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
