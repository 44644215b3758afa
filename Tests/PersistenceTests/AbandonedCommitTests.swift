import Foundation
import LiveObjects
import Testing

@testable import Persistence

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A commit that a listener after the durability step refuses is abandoned by the file
/// storage: the journal line or snapshot it wrote for it is taken back, so that the file never
/// holds a write that threw, also when a file call fails on the way (the next commit's write
/// replaces what could not be taken back).
@Suite struct AbandonedCommitTests {
    typealias Model = FaultInjectionTests.Model

    /// Refuses the commits it is armed for, after the durability step. Unchecked: the test
    /// arms it only between writes, and the realm calls it inside its own isolation.
    final class Refuser: CommitListener, @unchecked Sendable {
        let stage = CommitStage.external
        var armed = false

        func prepare(_ commit: Commit) throws(LiveObjectsError) {
            if armed { throw LiveObjectsError(.invalidOperation, "refused by the test") }
        }

        func abandon(_ commit: Commit) {}

        func committed(_ commit: Commit) {}

        func cancelled() {}
    }

    static let scenarios: [FaultInjectionTests.Scenario] = [
        .init(name: "journal", options: .init()),
        .init(name: "afterEveryCommit, no journal", options: .init(savePolicy: .afterEveryCommit, journal: false)),
        .init(name: "afterEveryCommit with journal", options: .init(savePolicy: .afterEveryCommit)),
    ]

    @Test(arguments: scenarios)
    func aRefusedCommitLeavesNothingInTheFile(_ scenario: FaultInjectionTests.Scenario) async throws {
        let clean = try await run(scenario, fault: nil)
        #expect(clean)
        // Every kind of file call failing once, as the first or second of its kind from the
        // refused write on: the cut, the snapshot saved again, the writes after.
        for call in FileFaults.Call.allCases {
            for n in 1...2 { #expect(try await run(scenario, fault: (call, n, EIO))) }
        }
    }

    /// Writes a seed, then a refused write, then three ordinary writes, with the fault counted
    /// from the refused write on; checks memory and disk after each step and the file reopened.
    /// Returns whether the refused write threw.
    func run(
        _ scenario: FaultInjectionTests.Scenario, fault: (call: FileFaults.Call, n: Int, code: Int32)?
    ) async throws -> Bool {
        let directory = try FaultInjectionTests.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("data.liveobjects")
        let label = "\(scenario.name), fault \(fault.map { "\($0.call) #\($0.n)" } ?? "none")"
        let configuration = Realm.Configuration(
            file: url, schema: FaultInjectionTests.schema, options: scenario.options)
        let checker = FaultInjectionTests()
        let realm = try await Realm.open(configuration)
        try await realm.write { realm in
            try realm.dynamicCreate("Item", value: ["id": 0, "name": "seed"])
            try realm.dynamicCreate("Counter", value: ["id": 1, "n": 0])
        }
        var model = Model(items: [0: "seed"], counter: 0)
        let refuser = Refuser()
        try await realm.read { realm in realm.store.addCommitListener(refuser) }

        let plan = FileFaults.install(FileFaults.Plan(directory: directory.path, failing: fault, times: 1))
        refuser.armed = true
        var refusedThrew = false
        do {
            try await realm.write { realm in
                try realm.dynamicCreate("Item", value: ["id": 100, "name": "refused"])
                try realm.dynamicObject(ofType: "Counter", forPrimaryKey: 1)!.set("n", to: 100)
            }
        } catch {
            refusedThrew = true
        }
        refuser.armed = false
        #expect(refusedThrew, "\(label): the refused write returned")
        #expect(try await FaultInjectionTests.contents(of: realm) == model, "\(label), in memory after the refusal")
        if fault == nil { try checker.checkDisk(url, model, label + ", after the refusal") }

        for k in Int64(1)...3 {
            do {
                try await realm.write { realm in
                    try realm.dynamicCreate("Item", value: ["id": .int(k), "name": .string("item \(k)")])
                    try realm.dynamicObject(ofType: "Counter", forPrimaryKey: 1)!.set("n", to: .int(k))
                }
                model.items[k] = "item \(k)"
                model.counter = k
                try checker.checkDisk(url, model, label + ", after write \(k)")
            } catch let error as LiveObjectsError {
                #expect(error.code == .io, "\(label): write \(k) threw \(error)")
            }
            #expect(try await FaultInjectionTests.contents(of: realm) == model, "\(label), in memory after write \(k)")
        }
        try? await realm.close()
        _ = FileFaults.remove(plan)
        let reopened = try await withRealm(configuration) { realm in try await FaultInjectionTests.contents(of: realm) }
        #expect(reopened == model, "\(label), reopened")
        return refusedThrew
    }
}
