import Foundation
import LiveObjects
import LiveObjectsShell
import Persistence
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `define` on a file (the realm closed, the file opened again with the larger schema) under
/// every file fault it can meet: a failed define is refused with a message, the shell goes on
/// with its file, and the file holds everything the shell said it did.
@Suite(.serialized) struct FileFaultTests {
    struct Outcome {
        var defined: Shell.Outcome
        var created: Shell.Outcome
        var errors: [String]
        var counts: [FileFaults.Call: Int]
    }

    /// A file with Shop 1; then a shell on it creates Shop 3, runs `define` under `fault`, and
    /// creates Shop 2.
    static func defineUnder(
        _ fault: (call: FileFaults.Call, n: Int, code: Int32)?, in directory: URL
    ) async throws -> Outcome {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("shop.lo").path
        let store = PersistenceFileStore()
        let errors = Capture()
        let io = ShellIO(output: { _ in }, errorOutput: errors.write)
        do {
            let shell = Shell(
                realm: try await store.open(path: file, create: true), storage: .file(path: file, store: store), io: io)
            let made = await shell.run(
                #"define Shop { id: Int primary, name: String }; create Shop {"id": 1, "name": "one"}"#)
            #expect(made == .succeeded, "\(errors.text)")
            try await shell.realm.close()
        }
        let shell = Shell(
            realm: try await store.open(path: file, create: false), storage: .file(path: file, store: store), io: io)
        // A commit in the journal, which closing the realm folds into the snapshot.
        let journaled = await shell.run(#"create Shop {"id": 3, "name": "three"}"#)
        #expect(journaled == .succeeded, "\(errors.text)")
        let plan = FileFaults.install(FileFaults.Plan(directory: directory.path, failing: fault))
        let defined = await shell.run("define Shop { city: String? }")
        let counts = FileFaults.remove(plan)
        let created = await shell.run(#"create Shop {"id": 2, "name": "two"}"#)
        try await shell.realm.close()
        return Outcome(
            defined: defined, created: created, errors: errors.text.split(separator: "\n").map(String.init),
            counts: counts)
    }

    /// The shops and whether the schema has `city`, read by a fresh realm.
    static func contents(of directory: URL) async throws -> (shops: [Int], hasCity: Bool) {
        let realm = try await PersistenceFileStore().open(
            path: directory.appendingPathComponent("shop.lo").path, create: false)
        let result = try await realm.read { realm in
            let shops = try realm.dynamicObjects("Shop").compactMap { $0["id"].intValue.map(Int.init) }.sorted()
            return (shops, realm.schema["Shop"]?["city"] != nil)
        }
        try await realm.close()
        return result
    }

    @Test func everyFaultDuringDefineLosesNothing() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("liveobj-faults-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let clean = try await Self.defineUnder(nil, in: root.appendingPathComponent("clean"))
        #expect(clean.defined == .succeeded && clean.created == .succeeded, "\(clean.errors)")
        let cleanContents = try await Self.contents(of: root.appendingPathComponent("clean"))
        #expect(cleanContents.shops == [1, 2, 3] && cleanContents.hasCity)

        var cases = 0
        for call in FileFaults.Call.allCases {
            for n in stride(from: 1, through: clean.counts[call, default: 0], by: 1) {
                cases += 1
                let directory = root.appendingPathComponent("\(call.rawValue)-\(n)")
                let outcome = try await Self.defineUnder((call, n, EIO), in: directory)
                let what = "\(call.rawValue) #\(n) failing: \(outcome.errors)"
                // The shell goes on with its file whatever define did.
                #expect(outcome.created == .succeeded, "\(what)")
                if outcome.defined == .failed {
                    #expect(outcome.errors.first?.hasPrefix("Error: ") == true, "\(what)")
                }
                let contents = try await Self.contents(of: directory)
                #expect(contents.shops == [1, 2, 3], "\(what)")
                #expect(contents.hasCity == (outcome.defined == .succeeded), "\(what)")
            }
        }
        #expect(cases > 20)
    }
}
