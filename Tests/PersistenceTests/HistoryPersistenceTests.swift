import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import Persistence

@Suite("Change history in files")
struct HistoryPersistenceTests {
    func configuration(_ url: URL, history: Bool = true, journal: Bool = true, version: UInt64 = 0)
        -> Realm.Configuration
    {
        var configuration = Realm.Configuration(
            file: url, objectTypes: petModelTypes, schemaVersion: version, options: .init(journal: journal))
        configuration.keepsHistory = history
        return configuration
    }

    func makeChanges(_ realm: Realm) async throws {
        try await realm.write { r in
            _ = try r.create(Dog.self, value: ["id": 1, "name": "Rex"])
            _ = try r.create(Dog.self, value: ["id": 2, "name": "Fido"])
            _ = try r.create(DogToy.self, value: ["id": 7, "name": "Ball"])
        }
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.age = 3 }
        try await realm.write { r in try r.delete(r.object(ofType: DogToy.self, forPrimaryKey: 7)!) }
        try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 2)!.name = "Fido II" }
    }

    func expectChanges(_ realm: Realm) async throws {
        #expect(await realm.currentHistoryToken == HistoryToken(rawValue: 4))
        let sinceFirst = try await realm.read { try $0.changes(since: HistoryToken(rawValue: 1)) }
        #expect(sinceFirst[Dog.self].updated == [.int(1): ["age"], .int(2): ["name"]])
        #expect(sinceFirst[DogToy.self].deleted == [.int(7)])
        let all = try await realm.read { try $0.changes(since: .initial) }
        #expect(all[Dog.self].inserted == [.int(1), .int(2)])
        #expect(all[DogToy.self].isEmpty)
    }

    @Test(arguments: [true, false])
    func historySurvivesReopeningFromTheSnapshot(journal: Bool) async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("h.liveobjects")
        try await withRealm(configuration(url, journal: journal)) { realm in
            try await makeChanges(realm)
            try await realm.save()
        }
        let text = String(decoding: fileBytes(url)!, as: UTF8.self)
        #expect(text.contains("\"history\""))
        try await withRealm(configuration(url, journal: journal)) { realm in
            try await expectChanges(realm)
            // Tokens keep going up after a reopen.
            try await realm.write { _ = try $0.create(Dog.self, value: ["id": 3]) }
            #expect(await realm.currentHistoryToken == HistoryToken(rawValue: 5))
        }
    }

    @Test func historySurvivesReplayingTheJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("h.liveobjects")
        let config = configuration(url)
        // A snapshot with the first commit, the rest only in the journal: copy the files
        // before the realm closes (closing folds the journal).
        let copy = url.deletingLastPathComponent().appendingPathComponent("copy.liveobjects")
        try await withRealm(config) { realm in
            try await makeChanges(realm)
            try FileManager.default.copyItem(at: url, to: copy)
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: url.path + ".journal"), to: URL(fileURLWithPath: copy.path + ".journal"))
        }
        try await withRealm(configuration(copy)) { realm in try await expectChanges(realm) }
    }

    @Test func trimIsKeptBySaving() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("h.liveobjects")
        try await withRealm(configuration(url)) { realm in
            try await makeChanges(realm)
            try await realm.trimHistory(upTo: HistoryToken(rawValue: 2))
            try await realm.save()
        }
        try await withRealm(configuration(url)) { realm in
            #expect(await realm.oldestHistoryToken == HistoryToken(rawValue: 2))
            let rest = try await realm.read { try $0.changes(since: HistoryToken(rawValue: 2)) }
            #expect(rest[Dog.self].updated == [.int(2): ["name"]])
            #expect(rest[DogToy.self].deleted == [.int(7)])
        }
    }

    @Test func filesWithoutHistoryStillLoadAndStartAHistory() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("h.liveobjects")
        try await withRealm(configuration(url, history: false)) { realm in
            try await makeChanges(realm)
            try await realm.save()
        }
        #expect(!String(decoding: fileBytes(url)!, as: UTF8.self).contains("\"history\""))
        try await withRealm(configuration(url)) { realm in
            #expect(await realm.currentHistoryToken == .initial)
            #expect(try await realm.read { $0.objects(Dog.self).count } == 2)
            try await realm.write { r in r.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "R" }
            let history = try await realm.read { try $0.changes(since: .initial) }
            #expect(history[Dog.self].updated == [.int(1): ["name"]])
        }
        // And a file with history opens without it (the history is dropped at the next save).
        let count = try await withRealm(configuration(url, history: false)) { realm in
            try await realm.read { $0.objects(Dog.self).count }
        }
        #expect(count == 2)
    }

    @Test func remoteWritesStayRemoteAcrossTheJournal() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("h.liveobjects")
        let copy = url.deletingLastPathComponent().appendingPathComponent("copy.liveobjects")
        try await withRealm(configuration(url)) { realm in
            try await realm.write { _ = try $0.create(Dog.self, value: ["id": 1]) }
            try await realm.writeRemote { _ = try $0.create(Dog.self, value: ["id": 2]) }
            try FileManager.default.copyItem(at: url, to: copy)
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: url.path + ".journal"), to: URL(fileURLWithPath: copy.path + ".journal"))
        }
        let journal = String(decoding: fileBytes(URL(fileURLWithPath: copy.path + ".journal"))!, as: UTF8.self)
        #expect(journal.contains("\"remote\":true"))
        for file in [copy, url] {
            try await withRealm(configuration(file)) { realm in
                let local = try await realm.read { try Set($0.localChanges("Dog", since: .initial).keys) }
                #expect(local == [.int(1)])
                let all = try await realm.read { try $0.changes(since: .initial) }
                #expect(all[Dog.self].inserted == [.int(1), .int(2)])
            }
        }
    }

    @Test func corruptHistoryIsATypedErrorAndTheFileIsUntouched() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("h.liveobjects")
        try await withRealm(configuration(url, journal: false)) { realm in
            try await makeChanges(realm)
            try await realm.save()
        }
        let good = String(decoding: fileBytes(url)!, as: UTF8.self)
        let bad = good.replacingOccurrences(of: "\"u\"", with: "\"x\"")
        #expect(bad != good)
        try Data(bad.utf8).write(to: url)
        // The edit breaks the file's checksum first.
        let checksumError = await #expect(throws: LiveObjectsError.self) {
            _ = try await Realm.open(configuration(url, journal: false))
        }
        #expect(checksumError?.message.contains("verifiesChecksum") == true, "\(String(describing: checksumError))")
        // Opened as a file edited by hand, the history is still checked.
        var unchecked = configuration(url, journal: false)
        unchecked.storage = .file(url, options: .init(journal: false, verifiesChecksum: false))
        let error = await #expect(throws: LiveObjectsError.self) {
            _ = try await Realm.open(unchecked)
        }
        #expect(error?.code == .corruptFile)
        #expect(error?.message.contains("history") == true)
        #expect(fileBytes(url) == Data(bad.utf8))
    }

    @Test func aMigrationRestartsTheHistoryAfterTheFilesToken() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("m.liveobjects")
        let v1 = Schema([
            ObjectSchema(
                name: "Item",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "name", type: .string),
                ])
        ])
        let v2 = Schema([
            ObjectSchema(
                name: "Item",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true), Property(name: "name", type: .string),
                    Property(name: "note", type: .string),
                ])
        ])
        var first = Realm.Configuration(file: url, schema: v1, schemaVersion: 1)
        first.keepsHistory = true
        try await withRealm(first) { realm in
            try await realm.write { _ = try $0.dynamicCreate("Item", value: ["id": .int(1), "name": .string("a")]) }
            try await realm.write { _ = try $0.dynamicCreate("Item", value: ["id": .int(2), "name": .string("b")]) }
        }
        var second = Realm.Configuration(file: url, schema: v2, schemaVersion: 2)
        second.keepsHistory = true
        try await withRealm(second) { realm in
            #expect(await realm.currentHistoryToken == HistoryToken(rawValue: 3))
            #expect(await realm.oldestHistoryToken == HistoryToken(rawValue: 3))
            #expect(try await realm.read { try $0.changes(since: HistoryToken(rawValue: 3)) }.isEmpty)
            let error = await #expect(throws: LiveObjectsError.self) {
                try await realm.read { _ = try $0.changes(since: HistoryToken(rawValue: 2)) }
            }
            #expect(error?.code == .historyTrimmed)
            try await realm.write { r in
                try r.dynamicObject(ofType: "Item", forPrimaryKey: .int(1))!.set("note", to: .string("n"))
            }
            let history = try await realm.read { try $0.changes(since: HistoryToken(rawValue: 3)) }
            #expect(history["Item"].updated == [.int(1): ["note"]])
        }
    }
}
