// Measures what the sync transport costs while it waits: a long poll against a loopback server
// that answers after a pause, with the process's processor time (getrusage) per wall second;
// then sequential pulls per second. Both for URLSession and for the socket client.
//
//     swift run -c release sync-wait-bench [wait seconds, default 5] [runs, default 5] [pulls, default 300]
import Foundation
import LiveObjectsSync
import LiveObjectsTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let waitSeconds = arguments.first ?? 5
let runs = arguments.dropFirst().first ?? 5
let pulls = arguments.dropFirst(2).first ?? 300
let emptyPull = #"{"changes":[],"cursor":null,"hasMore":false}"#

let server = try ScriptedHTTPServer { request in
    if request.target.contains("wait=") {
        return [.pause(.seconds(waitSeconds)), .send(ScriptedHTTPServer.answer(emptyPull))]
    }
    return [.send(ScriptedHTTPServer.answer(emptyPull))]
}

func processorSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func format(_ value: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", value) }

print("long poll of \(waitSeconds) s, \(runs) runs; \(pulls) sequential pulls, \(runs) runs")
for client in [HTTPSyncTransport.Configuration.Client.urlSession, .sockets] {
    let transport = HTTPSyncTransport(
        configuration: .init(
            baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, space: "bench",
            longPollWait: .seconds(waitSeconds), client: client
        ) { _ in "token" })
    _ = try await transport.pull(after: nil)  // warm up
    var perSecond: [Double] = []
    for _ in 0..<runs {
        let cpu = processorSeconds()
        let start = ContinuousClock.now
        _ = try await transport.waitForChanges(after: nil)
        let wall = ContinuousClock.now - start
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        perSecond.append((processorSeconds() - cpu) / seconds)
    }
    var rates: [Double] = []
    var cpuPerRequest: [Double] = []
    for _ in 0..<runs {
        let cpu = processorSeconds()
        let start = ContinuousClock.now
        for _ in 0..<pulls { _ = try await transport.pull(after: nil) }
        let wall = ContinuousClock.now - start
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        rates.append(Double(pulls) / seconds)
        cpuPerRequest.append((processorSeconds() - cpu) / Double(pulls) * 1e6)
    }
    print(
        "\(client): waiting \(format(median(perSecond))) CPU-s/s (runs \(perSecond.map { format($0) }.joined(separator: " ")));"
            + " pulls \(format(median(rates), 0))/s, \(format(median(cpuPerRequest), 0)) µs CPU each (medians)")
}
server.stop()
