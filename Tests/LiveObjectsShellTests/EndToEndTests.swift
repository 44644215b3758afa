import Foundation
import Testing

/// Runs the built `liveobj` binary with a script on standard input.
@Suite struct EndToEndTests {
    /// The `liveobj` executable of this build: next to the test bundle (or its executable).
    static func binary() -> URL? {
        var directories: [URL] = []
        if let executable = Bundle.main.executableURL { directories.append(executable.deletingLastPathComponent()) }
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        directories.append(Bundle.main.bundleURL)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        directories.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for directory in directories {
            let candidate = directory.appendingPathComponent("liveobj")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    @Test func scriptOnStandardInput() throws {
        guard let binary = Self.binary() else {
            Issue.record("the liveobj binary was not found next to the test bundle (\(Bundle.main.bundleURL.path))")
            return
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--demo"]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(
            Data(
                """
                count Dog
                watch paris = Person where address.city == 'Paris'
                update Person 3 {"age": 29}
                query Dog where owner.name == 'Chloé Dubois'
                count Cat
                count Person

                """.utf8))
        try input.fileHandleForWriting.close()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(
            String(decoding: stdout, as: UTF8.self) == """
                7
                Watching paris: 1 Person object.
                Updated Person 3.
                watch paris: 1 modified
                  change    index  id  name          age  dogs  address
                  --------  -----  --  ------------  ---  ----  --------------------------------------------------
                  modified  0      3   Chloé Dubois  29   [4]   {"street": "9 quai Saint-Michel", "city": "Paris"}
                id  name  age  owner  toys
                --  ----  ---  -----  ----
                4   Max   5    3      [4]
                (1 object)

                """)
        #expect(
            String(decoding: stderr, as: UTF8.self)
                == "Error: line 5: there is no object type named 'Cat'; 'types' lists them\n")
    }

    @Test func demoWithEmptyInputExitsZero() throws {
        guard let binary = Self.binary() else {
            Issue.record("the liveobj binary was not found next to the test bundle (\(Bundle.main.bundleURL.path))")
            return
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--demo"]
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(stdout.isEmpty)
    }
}
