import Foundation

/// Human-readable and Markdown reports.
enum Report {
    static func time(_ s: Double) -> String {
        if s >= 1 { return String(format: "%.2f s", s) }
        if s >= 1e-3 { return String(format: "%.1f ms", s * 1e3) }
        return String(format: "%.1f µs", s * 1e6)
    }

    static func bytes(_ b: Double) -> String { String(format: "%.0f B", b) }

    /// A ratio with two decimals, or two significant digits when it is tiny.
    static func ratioText(_ r: Double) -> String {
        r >= 0.1 ? String(format: "%.2f×", r) : String(format: "%.2g×", r)
    }

    static func fileSize(_ m: Measurement) -> Int? {
        m.extra.first { $0.0 == "file_bytes" }.flatMap { Int($0.1) }
    }

    static func p99(_ m: Measurement) -> String {
        time(m.extra.first { $0.0 == "p99_s" }.flatMap { Double($0.1) } ?? .nan)
    }

    /// The compared quantity: seconds, or bytes per object for memory.
    static func value(_ m: Measurement) -> Double { m.bytesPerObject ?? m.median }

    static func show(_ m: Measurement) -> String {
        m.bytesPerObject.map { bytes($0) + "/object" } ?? time(m.median)
    }

    static func ratio(_ workload: Workload, _ ms: [Measurement], vs system: String) -> (Double, String)? {
        guard let lo = ms.first(where: { $0.system == "liveobjects" }),
            let other = ms.first(where: { $0.system == system })
        else { return nil }
        let r = value(lo) / value(other)
        guard let limit = system == "grdb" ? workload.maxRatioVsGRDB : workload.maxRatioVsRaw else {
            return (r, "")
        }
        let met = system == "grdb" && workload.strictGRDB ? r < limit : r <= limit
        let bound = system == "grdb" && workload.strictGRDB ? "< " : "≤ "
        return (r, "target \(bound)\(String(format: "%.2f", limit))×: " + (met ? "met" : "MISSED"))
    }

    static func summaryLine(_ workload: Workload, _ ms: [Measurement]) -> String {
        var parts = ms.map { "\($0.system) \(show($0))" }
        for other in ["grdb", "raw"] {
            if let (r, verdict) = ratio(workload, ms, vs: other) {
                parts.append("LO/\(other) \(ratioText(r))" + (verdict.isEmpty ? "" : " (\(verdict))"))
            }
        }
        return "\(workload.name): " + parts.joined(separator: ", ")
    }

    static func text(options: Options, workloads: [Workload], results: [[Measurement]]) -> String {
        var out = "N = \(options.n), \(options.runs) runs per measurement (median; min-max)\n"
        var i = 0
        for workload in workloads {
            out += "\n\(workload.name): \(workload.description)\n"
            if case .pending(let needs) = workload.kind {
                out += "  pending: needs \(needs)\n"
                continue
            }
            let ms = results[i]
            i += 1
            for m in ms {
                out += "  \(m.system.padding(toLength: 12, withPad: " ", startingAt: 0)) \(show(m))"
                if let size = fileSize(m) { out += String(format: "  file %.1f MB", Double(size) / 1e6) }
                if case .latency = workload.kind {
                    out += "  (p99 \(p99(m)), \(m.samples.count) updates)"
                } else if m.bytesPerObject == nil {
                    out += "  (\(time(m.samples.min() ?? 0)) - \(time(m.samples.max() ?? 0)))"
                }
                out += "\n"
            }
            for other in ["grdb", "raw"] {
                if let (r, verdict) = ratio(workload, ms, vs: other) {
                    out += "  LiveObjects/\(other): \(ratioText(r))  \(verdict)\n"
                }
            }
        }
        return out
    }

    static func markdown(options: Options, workloads: [Workload], results: [[Measurement]]) -> String {
        var out =
            "N = \(options.n) dogs and \(max(1, options.n / 10)) persons; \(options.runs) timed runs per measurement.\n"
        out += "Ratios are LiveObjects / other: below 1 means LiveObjects is faster (or smaller).\n\n"
        out += "| workload | LiveObjects | GRDB | raw | LO/GRDB | target | LO/raw | target |\n"
        out += "|---|---:|---:|---:|---:|---|---:|---|\n"
        var i = 0
        var sections = ""
        for workload in workloads {
            if case .pending(let needs) = workload.kind {
                out += "| \(workload.name) | pending: needs \(needs) | | | | | | |\n"
                sections += "\n### \(workload.name)\n\n\(workload.description).\n\nPending: needs \(needs).\n"
                continue
            }
            let ms = results[i]
            i += 1
            func cell(_ system: String) -> String { ms.first { $0.system == system }.map(show) ?? "" }
            func ratioCells(_ system: String) -> String {
                guard let (r, verdict) = ratio(workload, ms, vs: system) else { return " | " }
                let target = verdict.isEmpty ? "none" : verdict.replacingOccurrences(of: "target ", with: "")
                return ratioText(r) + " | " + target
            }
            out +=
                "| \(workload.name) | \(cell("liveobjects")) | \(cell("grdb")) | \(cell("raw")) | \(ratioCells("grdb")) | \(ratioCells("raw")) |\n"

            sections += "\n### \(workload.name)\n\n\(workload.description).\n\n"
            if workload.name == "memory" {
                sections +=
                    "| system | peak bytes/object | resident bytes/object after loading | load time (median) | LiveObjects / system |\n"
                sections += "|---|---:|---:|---:|---:|\n"
                let lo = ms.first { $0.system == "liveobjects" }.map(value) ?? .nan
                for m in ms {
                    let resident = m.extra.first { $0.0 == "resident_bytes_per_object" }?.1 ?? ""
                    let r = m.system == "liveobjects" ? "" : ratioText(lo / value(m))
                    sections += "| \(m.system) | \(bytes(value(m))) | \(resident) B | \(time(m.median)) | \(r) |\n"
                }
                if let base = ms.first?.extra.first(where: { $0.0 == "baseline_peak_bytes" })?.1, let b = Double(base) {
                    sections +=
                        "\nBaseline process (generated data only): peak \(String(format: "%.0f", b / 1_048_576)) MiB, subtracted.\n"
                }
            } else if case .latency = workload.kind {
                sections += "| system | median | p99 | min | max | updates measured | LiveObjects / system (median) |\n"
                sections += "|---|---:|---:|---:|---:|---:|---:|\n"
                let lo = ms.first { $0.system == "liveobjects" }?.median ?? .nan
                for m in ms {
                    let r = m.system == "liveobjects" ? "" : ratioText(lo / m.median)
                    sections +=
                        "| \(m.system) | \(time(m.median)) | \(p99(m)) | \(time(m.samples.min() ?? 0)) | \(time(m.samples.max() ?? 0)) | \(m.samples.count) | \(r) |\n"
                }
            } else if ms.contains(where: { fileSize($0) != nil }) {
                sections += "| system | median | min | max | runs | file size | LiveObjects / system |\n"
                sections += "|---|---:|---:|---:|---:|---:|---:|\n"
                let lo = ms.first { $0.system == "liveobjects" }?.median ?? .nan
                for m in ms {
                    let r = m.system == "liveobjects" ? "" : ratioText(lo / m.median)
                    let size = fileSize(m).map { String(format: "%.1f MB", Double($0) / 1e6) } ?? ""
                    sections +=
                        "| \(m.system) | \(time(m.median)) | \(time(m.samples.min() ?? 0)) | \(time(m.samples.max() ?? 0)) | \(m.samples.count) | \(size) | \(r) |\n"
                }
            } else {
                sections += "| system | median | min | max | runs | LiveObjects / system |\n"
                sections += "|---|---:|---:|---:|---:|---:|\n"
                let lo = ms.first { $0.system == "liveobjects" }?.median ?? .nan
                for m in ms {
                    let r = m.system == "liveobjects" ? "" : ratioText(lo / m.median)
                    sections +=
                        "| \(m.system) | \(time(m.median)) | \(time(m.samples.min() ?? 0)) | \(time(m.samples.max() ?? 0)) | \(m.samples.count) | \(r) |\n"
                }
            }
        }
        return out + sections
    }
}
