import Foundation

/// Peak resident memory, each system alone in a child process: the benchmark binary runs
/// itself again with `--memory-child SYSTEM --n N`. The child generates the data set, loads it
/// into the system (as `insert_all` does, keeping the store), and reports its peak and current
/// resident memory. A `baseline` child holds only the generated data; its peak is subtracted.
enum MemoryProbe {
    struct Report: Decodable {
        var peak: Double
        var resident: Double
        var load_s: Double
    }

    static func measure(n: Int, runs: Int, systems: [String]) throws -> [Measurement] {
        let objects = Double(n + max(1, n / 10))
        var perObject = [String: [Double]]()
        var residentPerObject = [String: [Double]]()
        var loadTimes = [String: [Double]]()
        var baselinePeaks: [Double] = []
        for run in 0..<runs {
            let baseline = try spawn("baseline", n: n)
            baselinePeaks.append(baseline.peak)
            for k in 0..<systems.count {
                let system = systems[(run + k) % systems.count]
                let report = try spawn(system, n: n)
                perObject[system, default: []].append((report.peak - baseline.peak) / objects)
                residentPerObject[system, default: []].append((report.resident - baseline.resident) / objects)
                loadTimes[system, default: []].append(report.load_s)
            }
        }
        return systems.map { system in
            Measurement(
                workload: "memory", system: system, n: n, samples: loadTimes[system]!,
                bytesPerObject: percentile(perObject[system]!, 0.5),
                extra: [
                    ("resident_bytes_per_object", String(format: "%.1f", percentile(residentPerObject[system]!, 0.5))),
                    ("baseline_peak_bytes", String(format: "%.0f", percentile(baselinePeaks, 0.5))),
                ])
        }
    }

    static func spawn(_ system: String, n: Int) throws -> Report {
        let process = Process()
        process.executableURL = Bundle.main.executableURL
        process.arguments = ["--memory-child", system, "--n", "\(n)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let line = String(decoding: output, as: UTF8.self).split(separator: "\n").last
        else {
            throw UsageError(description: "the memory child for \(system) failed (status \(process.terminationStatus))")
        }
        return try JSONDecoder().decode(Report.self, from: Data(line.utf8))
    }

    /// The child side: load, then print `{"peak":…,"resident":…,"load_s":…}` (bytes, seconds).
    static func child(arguments: [String], at index: Int) async throws {
        let system = arguments[index + 1]
        let options = try Options(Array(arguments[(index + 2)...]))
        let data = Dataset(n: options.n)
        let clock = ContinuousClock()
        let start = clock.now
        let variant = try await MemoryBreakdown.load(system, data)
        let store: (any BenchSystem)? =
            switch system {
            case "baseline": nil
            case "liveobjects": LiveObjectsSystem()
            case "grdb": GRDBSystem()
            case "raw": RawSystem()
            case _ where variant != nil: nil
            default: throw UsageError(description: "unknown system '\(system)'")
            }
        try await store?.load(data)
        let loadTime = seconds(start.duration(to: clock.now))
        let (peak, resident) = residentMemory()
        withExtendedLifetime((data, store, variant)) {
            print("{\"peak\":\(peak),\"resident\":\(resident),\"load_s\":\(loadTime)}")
        }
    }

    /// Peak and current resident set size of this process, in bytes.
    static func residentMemory() -> (peak: Int, current: Int) {
        #if os(Linux)
            var peak = 0
            var current = 0
            if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) {
                for line in status.split(separator: "\n") {
                    let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                    guard parts.count >= 2, let kB = Int(parts[1]) else { continue }
                    if parts[0] == "VmHWM:" { peak = kB * 1024 }
                    if parts[0] == "VmRSS:" { current = kB * 1024 }
                }
            }
            return (peak, current)
        #else
            var usage = rusage()
            getrusage(RUSAGE_SELF, &usage)
            // ru_maxrss is in bytes on Darwin; the current size is not available here.
            return (Int(usage.ru_maxrss), Int(usage.ru_maxrss))
        #endif
    }
}
