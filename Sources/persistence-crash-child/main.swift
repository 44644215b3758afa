// The child process of the persistence crash and lock tests.
//
// Usage: persistence-crash-child FILE journal|save|hold|try
//
// - journal, save: opens a file realm and commits in a loop, printing each step number
//   (flushed) after its write returns, until it is killed.
// - hold: opens the file realm, prints "open", and keeps it open until its standard input
//   ends (then closes the realm and prints "closed") or it is killed.
// - try: tries to open the file realm once and prints "opened" (and closes it) or
//   "error CODE".
// - save-shared: as save, with the journal (the file shared; every commit folds it).
// - hold-alone, try-alone: as hold and try, without the journal (the file to itself).
// - shared SEED STEPS TAG: the multi-process workload (SharedWorkload) on a file other
//   processes share: prints "open", then runs STEPS seeded writes (entry TAG-k) and reads,
//   printing "ack TAG-k" when a write returns, then "done"; it follows the entries' change
//   sets all along. Each line "dump" on its standard input prints
//   "state ENTRIES TALLY DIGEST MIRROR-COUNT MIRROR-DIGEST NOTIFICATIONS BAD" once its
//   change sets have caught up with its realm.
// - follow: opens the shared workload's file and prints "seen ENTRIES NANOSECONDS" each time
//   the entries change (the monotonic clock, the same in every process).
// - pace STEPS: writes STEPS entries of the shared workload 10 ms apart, printing
//   "ack ID NANOSECONDS" when each write returns. With follow: the latency figure.
// - reads COUNT: prints the median time of COUNT empty `realm.read` calls (in 20 rounds) on the
//   file shared (journal on, each read checks the journal) and on FILE.alone (journal off).
import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Persistence

let arguments = CommandLine.arguments
let modes = [
    "journal", "save", "save-shared", "hold", "try", "hold-alone", "try-alone", "shared", "follow", "pace", "reads",
]
guard arguments.count >= 3, modes.contains(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: persistence-crash-child FILE \(modes.joined(separator: "|"))\n".utf8))
    exit(2)
}
let options =
    arguments[2] == "save"
    ? FileStorage.Options(savePolicy: .afterEveryCommit, journal: false)
    : arguments[2] == "save-shared"
        ? FileStorage.Options(savePolicy: .afterEveryCommit)
        : arguments[2].hasSuffix("-alone")
            ? FileStorage.Options(savePolicy: .coalesced(.seconds(3600)), journal: false)
            : FileStorage.Options(savePolicy: .manual, journal: true, journalFoldThreshold: 8 << 10)
// A child must not outlive the test process that started it: killed or crashed, the parent
// leaves this process looping on its pipes, and whoever waits for those pipes to close (the
// test runner's caller) waits forever. The watch compares the parent with the one at start.
let parentAtStart = getppid()
Thread.detachNewThread { [parentAtStart] in
    while getppid() == parentAtStart { Thread.sleep(forTimeInterval: 0.2) }
    FileHandle.standardError.write(Data("persistence-crash-child: the test process is gone; stopping\n".utf8))
    exit(3)
}

let configuration = Realm.Configuration(
    file: URL(fileURLWithPath: arguments[1]), schema: CrashWorkload.schema, options: options)

/// Unbuffered: the line is out of the process when the call returns.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    switch arguments[2] {
    case "shared":
        try await runShared(seed: UInt64(arguments[3])!, steps: Int(arguments[4])!, tag: arguments[5])
    case "follow":
        try await follow()
    case "pace":
        try await pace(steps: Int(arguments[3])!)
    case "reads":
        try await measureReads(count: Int(arguments[3])!)
    case "try", "try-alone":
        do {
            let realm = try await Realm.open(configuration)
            say("opened")
            try await realm.close()
        } catch {
            say("error \(error.code)")
        }
    case "hold", "hold-alone":
        let realm = try await Realm.open(configuration)
        say("open")
        _ = FileHandle.standardInput.readDataToEndOfFile()
        try await realm.close()
        say("closed")
    default:
        let realm = try await Realm.open(configuration)
        var n = try await realm.read { try CrashWorkload.state(of: $0).counter }
        while true {
            n += 1
            let step = n
            try await realm.write { try CrashWorkload.step(step, in: $0) }
            say("\(step)")
        }
    }
} catch {
    FileHandle.standardError.write(Data("persistence-crash-child: \(error)\n".utf8))
    exit(1)
}

/// The shared workload's configuration: small folds, so that they happen.
func sharedConfiguration() -> Realm.Configuration {
    Realm.Configuration(
        file: URL(fileURLWithPath: arguments[1]), objectTypes: SharedWorkload.types,
        options: FileStorage.Options(journalFoldThreshold: 4 << 10))
}

/// What the change sets of the entries showed so far.
final class Mirror: @unchecked Sendable {
    // @unchecked: every member is touched under `lock`.
    private let lock = NSLock()
    private var keys: [ObjectKey] = []
    private var version: UInt64 = 0
    private var count = 0
    private var bad = 0

    func apply(_ change: CollectionChange<SharedEntry>) {
        lock.lock()
        defer { lock.unlock() }
        let next = change.isInitial ? change.snapshot.keys : change.applied(to: keys)
        if next != change.snapshot.keys || (!change.isInitial && change.version <= version) { bad += 1 }
        keys = next
        version = change.version
        count += 1
    }

    var state: (keys: [ObjectKey], version: UInt64, count: Int, bad: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (keys, version, count, bad)
    }
}

func runShared(seed: UInt64, steps: Int, tag: String) async throws {
    var random = SeededRandomNumberGenerator(seed: seed)
    let realm = try await Realm.open(sharedConfiguration())
    let changes = try await realm.read { $0.objects(SharedEntry.self).changes() }
    let mirror = Mirror()
    let following = Task {
        for await change in changes { mirror.apply(change) }
    }
    say("open")
    for k in 1...max(steps, 1) {
        if Int.random(in: 0..<4, using: &random) == 0 {
            _ = try await realm.read { try SharedWorkload.state(of: $0).tally }
        }
        let id = "\(tag)-\(k)"
        try await realm.write { try SharedWorkload.step(id, k, in: $0) }
        say("ack \(id)")
        let pause = Int.random(in: 0..<3, using: &random)
        if pause > 0 { try await Task.sleep(for: .milliseconds(pause)) }
    }
    say("done")
    while let line = readLine() {
        guard line == "dump" else { continue }
        let state = try await realm.read { try SharedWorkload.state(of: $0) }
        let version = await realm.version
        for _ in 0..<2000 where mirror.state.version < version { try await Task.sleep(for: .milliseconds(1)) }
        let seen = mirror.state
        say(
            "state \(state.keys.count) \(state.tally) \(SharedWorkload.digest(state.keys)) \(seen.keys.count) "
                + "\(SharedWorkload.digest(seen.keys)) \(seen.count) \(seen.bad)")
    }
    following.cancel()
    try await realm.close()
}

func follow() async throws {
    let realm = try await Realm.open(sharedConfiguration())
    let changes = try await realm.read { $0.objects(SharedEntry.self).changes() }
    say("open")
    for await change in changes { say("seen \(change.snapshot.count) \(monotonicNanoseconds())") }
}

func pace(steps: Int) async throws {
    let realm = try await Realm.open(sharedConfiguration())
    for k in 1...max(steps, 1) {
        let id = "pace-\(k)-\(getpid())"
        try await realm.write { try SharedWorkload.step(id, k, in: $0) }
        say("ack \(id) \(monotonicNanoseconds())")
        try await Task.sleep(for: .milliseconds(10))
    }
    try await realm.close()
}

/// The monotonic clock, in nanoseconds: comparable between processes of one machine.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func measureReads(count: Int) async throws {
    let shared = try await Realm.open(sharedConfiguration())
    let alone = try await Realm.open(
        Realm.Configuration(
            file: URL(fileURLWithPath: arguments[1] + ".alone"), objectTypes: SharedWorkload.types,
            options: FileStorage.Options(journal: false)))
    for (name, realm) in [("shared", shared), ("alone", alone)] {
        var rounds: [Double] = []
        for _ in 0..<20 {
            let start = monotonicNanoseconds()
            for _ in 0..<count { _ = try await realm.read { _ in 0 } }
            rounds.append(Double(monotonicNanoseconds() - start) / Double(count))
        }
        rounds.sort()
        say("\(name): median \(rounds[rounds.count / 2]) ns per read")
    }
}
