import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The commands typed at the terminal, oldest first, bounded, and kept in a file between runs.
///
/// A command is not recorded when it starts with a space (to keep it out of the file) or when
/// it repeats the one before it. The file holds one command per line, is written with mode 0600
/// and replaced atomically after every command.
package struct LineHistory: Sendable {
    /// Where the history is kept, and how much of it.
    package struct Configuration: Equatable, Sendable {
        /// The file, or nil to keep the history in memory only. Default: `~/.liveobj_history`,
        /// `LIVEOBJ_HISTORY` when set, nil when `LIVEOBJ_NO_HISTORY` is set (to anything).
        package var file: String?
        /// The most commands kept. Default: 1000, or `LIVEOBJ_HISTORY_SIZE`.
        package var limit: Int

        package init(file: String?, limit: Int = 1000) {
            self.file = file
            self.limit = max(limit, 1)
        }

        /// The configuration read from environment variables.
        package static func fromEnvironment(_ environment: [String: String]) -> Configuration {
            let limit = environment["LIVEOBJ_HISTORY_SIZE"].flatMap { Int($0) } ?? 1000
            if environment["LIVEOBJ_NO_HISTORY"] != nil { return Configuration(file: nil, limit: limit) }
            if let file = environment["LIVEOBJ_HISTORY"], !file.isEmpty {
                return Configuration(file: file, limit: limit)
            }
            guard let home = environment["HOME"], !home.isEmpty else { return Configuration(file: nil, limit: limit) }
            return Configuration(file: home + "/.liveobj_history", limit: limit)
        }
    }

    let configuration: Configuration
    /// The commands, oldest first.
    package private(set) var entries: [String] = []

    /// Opens the history, reading its file when there is one (a missing or unreadable file is an
    /// empty history).
    package init(_ configuration: Configuration) {
        self.configuration = configuration
        if let file = configuration.file, let data = FileManager.default.contents(atPath: file) {
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            entries = Array(lines.suffix(configuration.limit))
        }
    }

    /// Records a command; returns whether it was recorded.
    @discardableResult
    package mutating func add(_ command: String) -> Bool {
        let line = command.replacingOccurrences(of: "\n", with: " ")
        guard !line.allSatisfy(\.isWhitespace), !line.hasPrefix(" "), entries.last != line else { return false }
        entries.append(line)
        if entries.count > configuration.limit { entries.removeFirst(entries.count - configuration.limit) }
        save()
        return true
    }

    /// Writes the file; a failure (a read-only home) only loses the history.
    func save() {
        guard let file = configuration.file else { return }
        try? PrivateFile.save(Array((entries.joined(separator: "\n") + "\n").utf8), to: file, sync: false)
    }
}
