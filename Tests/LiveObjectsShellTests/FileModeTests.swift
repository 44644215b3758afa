import Foundation
import LiveObjects
import LiveObjectsShell
import Testing

/// Every file the shell writes is created with mode 0600, whatever the umask.
@Suite struct FileModeTests {
    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func exportWritesPrivateFilesAtomically() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("liveobj-mode-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fresh = dir.appendingPathComponent("fresh.json").path
        expectRun(await liveobj(["--demo", "-c", "export '\(fresh)'"]), stdout: "Exported 22 objects to \(fresh).\n")
        #expect(try Self.mode(fresh) == 0o600)

        // A file that was readable by others is replaced by a private one.
        let shared = dir.appendingPathComponent("shared.json").path
        #expect(FileManager.default.createFile(atPath: shared, contents: Data("old".utf8)))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: shared)
        expectRun(
            await liveobj(["--demo", "-c", "export Dog '\(shared)'"]),
            stdout: "Exported 7 objects to \(shared).\n")
        #expect(try Self.mode(shared) == 0o600)
        #expect(try String(contentsOfFile: shared, encoding: .utf8).hasPrefix("[\n"))
        // No temporary file is left behind.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["fresh.json", "shared.json"])

        // A file the shell cannot write names itself.
        let missing = dir.appendingPathComponent("no/such/dir/x.json").path
        let run = await liveobj(["--demo", "-c", "export '\(missing)'"])
        #expect(run.code != 0 && run.stderr.contains(missing), "\(run)")
    }

    @Test func savedSnapshotsArePrivate() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("liveobj-mode-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("new.liveobjects").path
        let run = await liveobj(
            [file, "--create", "-c", #"define Note { text: String }; create Note {"text": "a"}; save"#],
            fileStore: PersistenceFileStore())
        #expect(run.code == 0, "\(run)")
        #expect(try Self.mode(file) == 0o600)
    }
}

/// Errors of files the shell opens name the file and the byte.
@Suite struct FileErrorTests {
    @Test func schemaErrorsNameTheFileAndTheByte() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("liveobj-errors-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("twice.liveobjects").path
        let text =
            #"{"format": "LiveObjects", "formatVersion": 1, "schemaVersion": 0, "commit": 0, "schema": "#
            + #"[{"name": "Person", "properties": []}, {"name": "Person", "properties": []}], "objects": {}}"# + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let run = await liveobj([file, "-c", "types"], fileStore: PersistenceFileStore())
        #expect(run.code != 0)
        #expect(
            run.stderr
                == "Error: \(file): Person: the file's schema is not valid: the type is declared twice "
                + "(at byte 128, line 1, column 129)\n", "\(run)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == text)
    }
}
