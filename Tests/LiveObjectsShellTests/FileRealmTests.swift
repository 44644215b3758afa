import Foundation
import LiveObjectsShell
import Synchronization
import Testing

/// The shell on real snapshot files, through the Persistence module.
@Suite struct FileRealmTests {
    /// Runs the tool on lines of input; returns (exit code, output, errors).
    func run(_ arguments: [String], _ lines: [String]) async -> (Int32, [String], [String]) {
        let input = Mutex(lines)
        let output = Mutex<[String]>([])
        let errors = Mutex<[String]>([])
        let environment = CommandLineTool.Environment(
            arguments: arguments,
            readLine: { input.withLock { $0.isEmpty ? nil : $0.removeFirst() } },
            isInteractive: false,
            output: { line in output.withLock { $0.append(line) } },
            errorOutput: { line in errors.withLock { $0.append(line) } },
            fileStore: PersistenceFileStore())
        let code = await CommandLineTool.run(environment)
        return (code, output.withLock { $0 }, errors.withLock { $0 })
    }

    @Test func createReopenAndKeepEveryCommand() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("liveobj-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("shop.json").path

        let missing = await run([file], ["types"])
        #expect(missing.0 == 1 && missing.2.first?.contains("does not exist") == true)
        #expect(!FileManager.default.fileExists(atPath: file))

        let created = await run(
            [file, "--create"],
            [
                "define Product { id: Int primary, name: String, price: Double }",
                #"create Product {"id": 1, "name": "Пятёрочка tea", "price": 2.5}"#, "save",
            ])
        #expect(created.0 == 0, "\(created.2)")

        let reopened = await run([file], ["count Product where name CONTAINS[c] 'пятёр'"])
        #expect(reopened.0 == 0 && reopened.1 == ["1"])

        // Without 'save': the change is kept all the same (journaled, folded when the shell ends).
        let unsaved = await run([file], [#"update Product 1 {"price": 3}"#])
        #expect(unsaved.0 == 0 && unsaved.2.isEmpty, "\(unsaved)")
        let again = await run([file, "--json"], ["get Product 1"])
        #expect(again.0 == 0 && again.1.first?.contains(#""price":3"#) == true, "\(again)")
        // The file is opened as a realm opens it: with its lock and journal beside it.
        #expect(FileManager.default.fileExists(atPath: file + ".journal"))
    }
}
