import Foundation

/// `liveobjects-bench`: LiveObjects against GRDB and plain Swift on the same generated data.
///
///     swift run -c release --package-path Benchmarks liveobjects-bench [--quick] [--n N]
///         [--runs R] [--filter WORKLOAD[,WORKLOAD…]] [--json | --markdown] [--list]
@main
struct Bench {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            if let index = arguments.firstIndex(of: "--memory-child") {
                try await MemoryProbe.child(arguments: arguments, at: index)
                return
            }
            if arguments.first == "--memory-breakdown" {
                let options = try Options(Array(arguments.dropFirst()))
                try MemoryBreakdown.run(n: options.n, runs: min(options.runs, 3))
                return
            }
            if arguments.first == "--fulltext" {
                let options = try Options(Array(arguments.dropFirst()))
                try await FullTextBench.run(n: options.quick ? 10_000 : options.n, runs: options.runs)
                return
            }
            if arguments.first == "--budget" {
                let options = try Options(Array(arguments.dropFirst()))
                try await Budget.run(n: options.n, runs: options.runs)
                return
            }
            let options = try Options(arguments)
            if options.help {
                print(Options.usage)
                return
            }
            if options.list {
                for w in Workload.all {
                    var line = "\(w.name.padding(toLength: 18, withPad: " ", startingAt: 0)) \(w.description)"
                    if case .pending(let needs) = w.kind { line += "  [pending: needs \(needs)]" }
                    print(line)
                }
                return
            }
            let ok = try await Runner(options: options).run()
            exit(ok ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("liveobjects-bench: \(error)\n".utf8))
            exit(2)
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
}

struct Options {
    var n = 1_000_000
    var runs = 7
    var quick = false
    var json = false
    var markdown = false
    var list = false
    var help = false
    var filter: [String]?
    var systems = ["liveobjects", "grdb", "raw"]

    /// update_notify stops a system after this long, even if it has not done its 1,000 updates
    /// (GRDB and raw re-fetch the whole sorted result after every update).
    var notifyBudget: Duration { quick ? .seconds(15) : .seconds(30) }

    static let usage = """
        usage: liveobjects-bench [options]
          --quick            N = 100,000 and 5 runs per measurement (well under 3 minutes)
          --n N              number of dogs (persons: N/10); default 1,000,000
          --runs R           timed runs per measurement (median reported); default 7
          --filter W[,W...]  only these workloads (see --list)
          --system S[,S...]  only these systems (liveobjects, grdb, raw), e.g. for profiling
          --json             one JSON object per line and measurement
          --markdown         Markdown tables (as in BENCHMARKS.md)
          --list             list the workloads
        liveobjects-bench --budget [--n N] [--runs R]: the Persistence speed budget (N objects
          saved and loaded by LiveObjects and by JSONEncoder/JSONDecoder)
        liveobjects-bench --fulltext [--n N] [--runs R]: full-text search, LiveObjects against
          SQLite FTS5 and a dictionary of sets (N documents; use --n 100000)
        liveobjects-bench --memory-breakdown [--n N] [--runs R]: LiveObjects' bytes per object,
          part by part (the model taken apart; at most 3 children per variant)
        """

    init(_ arguments: [String]) throws {
        var nGiven: Int?
        var runsGiven: Int?
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < arguments.count else { throw UsageError(description: "\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--quick": quick = true
            case "--json": json = true
            case "--markdown": markdown = true
            case "--list": list = true
            case "--help", "-h": help = true
            case "--n":
                let text = try value().replacingOccurrences(of: "_", with: "")
                guard let n = Int(text), n >= 10 else { throw UsageError(description: "--n needs an integer >= 10") }
                nGiven = n
            case "--runs":
                guard let r = Int(try value()), r >= 1 else {
                    throw UsageError(description: "--runs needs an integer >= 1")
                }
                runsGiven = r
            case "--filter":
                let names = try value().split(separator: ",").map { String($0) }
                for name in names where !Workload.all.contains(where: { $0.name == name }) {
                    throw UsageError(description: "unknown workload '\(name)' (see --list)")
                }
                filter = names
            case "--system":
                let names = try value().split(separator: ",").map { String($0) }
                for name in names where !["liveobjects", "grdb", "raw"].contains(name) {
                    throw UsageError(description: "unknown system '\(name)'")
                }
                systems = names
            default:
                throw UsageError(description: "unknown option '\(arguments[i])'\n\(Options.usage)")
            }
            i += 1
        }
        if quick {
            n = 100_000
            runs = 5
        }
        if let nGiven { n = nGiven }
        if let runsGiven { runs = runsGiven }
    }
}

/// The result of one workload on one system.
struct Measurement {
    var workload: String
    var system: String
    var n: Int
    var samples: [Double]
    var bytesPerObject: Double?
    var extra: [(String, String)] = []

    var median: Double { percentile(samples, 0.5) }

    var jsonLine: String {
        var fields: [(String, String)] = [
            ("workload", "\"\(workload)\""), ("system", "\"\(system)\""), ("n", "\(n)"),
            ("median_s", format(median)), ("runs", "\(samples.count)"),
            ("min_s", format(samples.min() ?? 0)), ("max_s", format(samples.max() ?? 0)),
        ]
        if let bytesPerObject { fields.append(("bytes_per_object", String(format: "%.1f", bytesPerObject))) }
        fields += extra
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    private func format(_ x: Double) -> String { String(format: "%.6g", x) }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    if p == 0.5 && sorted.count % 2 == 0 {
        return (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    let index = Int((Double(sorted.count - 1) * p).rounded())
    return sorted[index]
}

func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Runs the selected workloads and reports them.
struct Runner {
    let options: Options

    func run() async throws -> Bool {
        let selected = Workload.all.filter { options.filter?.contains($0.name) ?? true }
        let clock = ContinuousClock()
        let started = clock.now
        log(
            "liveobjects-bench: N = \(options.n) dogs, \(max(1, options.n / 10)) persons, \(options.runs) runs per measurement"
        )

        let genStart = clock.now
        let data = Dataset(n: options.n)
        log("generated the data set in \(String(format: "%.2f", seconds(genStart.duration(to: clock.now)))) s")

        let all: [any BenchSystem] = [LiveObjectsSystem(), GRDBSystem(), RawSystem()]
        let systems = all.filter { options.systems.contains(type(of: $0).name) }
        var results: [[Measurement]] = []
        var ok = true
        var loaded = false

        for workload in selected {
            var measurements: [Measurement] = []
            switch workload.kind {
            case .pending(let needs):
                log("\(workload.name): pending: needs \(needs)")
                continue
            case .memory:
                // Free the in-process stores first: memory is measured in child processes.
                for system in systems { system.unload() }
                loaded = false
                measurements = try MemoryProbe.measure(
                    n: options.n, runs: min(options.runs, 3), systems: options.systems)
            case .latency:
                if !loaded {
                    for system in systems { try await system.load(data) }
                    loaded = true
                }
                var passes: [Latencies] = []
                for system in systems {
                    // A subscriber that is never notified would wait forever: give up loudly.
                    let name = type(of: system).name
                    let watchdog = Task.detached { [budget = options.notifyBudget] in
                        try await Task.sleep(for: budget + .seconds(120))
                        log("ERROR: update_notify: \(name) stopped delivering changes")
                        exit(1)
                    }
                    passes.append(try await system.updateNotify(data, budget: options.notifyBudget))
                    watchdog.cancel()
                }
                // The systems may stop at different updates (time budget): compare what all did.
                let common = passes.map(\.resultCounts.count).min() ?? 0
                for s in systems.indices
                where passes[s].resultCounts.prefix(common) != passes[0].resultCounts.prefix(common) {
                    log(
                        "ERROR: \(workload.name): \(type(of: systems[s]).name) saw other result sizes than \(type(of: systems[0]).name)"
                    )
                    ok = false
                }
                measurements = systems.indices.map {
                    Measurement(
                        workload: workload.name, system: type(of: systems[$0]).name, n: options.n,
                        samples: passes[$0].seconds,
                        extra: [("p99_s", String(format: "%.6g", percentile(passes[$0].seconds, 0.99)))])
                }
            case .timed(let usesLoadedStore):
                if usesLoadedStore && !loaded {
                    for system in systems {
                        let s = clock.now
                        try await system.load(data)
                        log(
                            "loaded \(type(of: system).name) in \(String(format: "%.2f", seconds(s.duration(to: clock.now)))) s"
                        )
                    }
                    loaded = true
                }
                var samples = Array(repeating: [Double](), count: systems.count)
                var checksums = Array(repeating: [Int](), count: systems.count)
                var fileBytes = Array(repeating: Int?.none, count: systems.count)
                // A warm-up pass for the read workloads (caches, lazily built indexes).
                if usesLoadedStore {
                    for system in systems { _ = try await workload.run(system, data) }
                }
                for run in 0..<options.runs {
                    // Interleave the systems, starting each run with a different one.
                    for k in 0..<systems.count {
                        let s = (run + k) % systems.count
                        let sample = try await workload.run(systems[s], data)
                        samples[s].append(sample.seconds)
                        checksums[s].append(sample.checksum)
                        fileBytes[s] = sample.fileBytes ?? fileBytes[s]
                    }
                }
                for s in systems.indices where checksums[s] != checksums[0] {
                    log(
                        "ERROR: \(workload.name): \(type(of: systems[s]).name) checksums \(checksums[s]) differ from \(type(of: systems[0]).name) \(checksums[0])"
                    )
                    ok = false
                }
                measurements = systems.indices.map {
                    Measurement(
                        workload: workload.name, system: type(of: systems[$0]).name, n: options.n,
                        samples: samples[$0], extra: fileBytes[$0].map { [("file_bytes", "\($0)")] } ?? [])
                }
            }
            results.append(measurements)
            if options.json {
                for m in measurements { print(m.jsonLine) }
                fflush(nil)
            }
            log(Report.summaryLine(workload, measurements))
        }
        for system in systems { system.unload() }
        BenchFiles.removeAll()

        if options.markdown {
            print(Report.markdown(options: options, workloads: selected, results: results))
        } else if !options.json {
            print(Report.text(options: options, workloads: selected, results: results))
        }
        log("total \(String(format: "%.1f", seconds(started.duration(to: clock.now)))) s")
        return ok
    }
}
