import Foundation
import LiveObjects
import Testing

@testable import Persistence

#if canImport(Glibc)
    import Glibc
#endif

/// A small file system mounted for one test.
final class SmallFileSystem {
    let url: URL

    init?(bytes: Int) {
        #if os(Linux)
            guard let base = try? makeTemporaryDirectory() else { return nil }
            url = base
            guard mount("tmpfs", base.path, "tmpfs", 0, "size=\(bytes),mode=0700") == 0 else {
                try? FileManager.default.removeItem(at: base)
                return nil
            }
        #else
            return nil
        #endif
    }

    deinit {
        #if os(Linux)
            _ = umount2(url.path, Int32(MNT_DETACH))
            try? FileManager.default.removeItem(at: url)
        #endif
    }
}

/// A realm on a real file system that fills up: a 1 MiB `tmpfs`, where the system lets the
/// test mount one (Linux, with the right to mount; elsewhere the test does not run).
@Suite struct FullDiskTests {
    static let canMount = SmallFileSystem(bytes: 64 << 10) != nil

    @Test(
        .enabled(if: canMount, "mounting a tmpfs is not allowed here"),
        arguments: [
            FileStorage.Options(journalFoldThreshold: 64 << 10),
            FileStorage.Options(savePolicy: .afterEveryCommit, journal: false),
        ])
    func writesOnAFullDiskThrowAndWritesThatReturnedSurvive(_ options: FileStorage.Options) async throws {
        let disk = try #require(SmallFileSystem(bytes: 1 << 20))
        let url = disk.url.appendingPathComponent("full.liveobjects")
        let schema = FaultInjectionTests.schema
        let configuration = Realm.Configuration(file: url, schema: schema, options: options)
        var returned: [Int64] = []
        var threw = 0
        var firstFailure: Int64?
        // Room taken up front and freed after ten failed writes: the disk fills up, then has
        // room again for a while, then fills up again.
        let filler = disk.url.appendingPathComponent("filler")
        #expect(FileManager.default.createFile(atPath: filler.path, contents: Data(count: 256 << 10)))
        try await withRealm(configuration) { realm in
            for k in Int64(0)..<400 {
                if threw == 10, FileManager.default.fileExists(atPath: filler.path) {
                    try FileManager.default.removeItem(at: filler)
                }
                do {
                    try await realm.write { realm in
                        _ = try realm.dynamicCreate(
                            "Item", value: ["id": .int(k), "name": .string(String(repeating: "x", count: 4000))])
                    }
                    returned.append(k)
                } catch let error as LiveObjectsError {
                    #expect(error.code == .io, "write \(k): \(error)")
                    threw += 1
                    if firstFailure == nil { firstFailure = k }
                }
                let count = try await realm.read { try $0.dynamicObjects("Item").count }
                #expect(count == returned.count, "in memory after write \(k)")
            }
        }
        #expect(firstFailure != nil, "the disk never filled up")
        // Writes returned again once room was freed.
        #expect(returned.contains { $0 > firstFailure! + 10 })
        // Every write that returned is in the file; none that threw.
        let ids = try await withRealm(configuration) { realm in
            try await realm.read { try $0.dynamicObjects("Item").map { $0["id"].intValue! } }
        }
        #expect(ids.sorted() == returned)
        print(
            "full disk, \(options.savePolicy), journal \(options.journal): \(returned.count) writes returned, \(threw) threw"
        )
    }
}
