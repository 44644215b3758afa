import Foundation
import LiveObjects
import Testing

/// The shell reproductions of the query-safety issue: strings in different normalization
/// forms, flags, and long key paths (which once crashed or hung `liveobj`).
@Suite struct ShellQuerySafetyTests {
    @Test func stringsInDifferentNormalizationFormsHaveOneOrder() async {
        let script = """
            define Dog { id: Int primary, name: String }
            create Dog {"id": 1, "name": "\\u00e9 "}
            create Dog {"id": 2, "name": "e\\u0301"}
            count Dog where name > "e\\u0301"
            count Dog where name >= "e\\u0301"
            count Dog where name < "\\u00e9 "
            query Dog sort by name
            query Dog sort by name desc
            """
        let run = await liveobj([], stdin: script)
        #expect(run.code == 0 && run.stderr.isEmpty, "\(run)")
        // The counts, then the ids of the two sorts (the table trims trailing spaces).
        let output = run.stdout.split(separator: "\n").map(String.init)
        #expect(Array(output[3...5]) == ["1", "2", "1"], "\(run)")
        let ids = output.filter { $0.first == "1" || $0.first == "2" }.dropFirst(3).map { $0.prefix(1) }
        #expect(ids == ["2", "1", "1", "2"], "\(run)")
    }

    @Test func aFlagIsOneCharacter() async {
        let script = """
            define Dog { id: Int primary, name: String }
            create Dog {"id": 1, "name": "🇫🇷"}
            count Dog where name LIKE '?'
            count Dog where name LIKE '??'
            count Dog where name ENDSWITH '🇷'
            count Dog where name BEGINSWITH '🇫'
            count Dog where name CONTAINS[cd] '🇷'
            count Dog where name CONTAINS[cd] '🇫🇷'
            """
        expectRun(
            await liveobj([], stdin: script),
            stdout: lines(
                """
                Defined Dog (schema version 1).
                Created Dog 1.
                1
                0
                0
                0
                0
                1
                """))
    }

    @Test func aLongPathThroughListsIsRefusedNotACrash() async {
        let path = String(repeating: "kids.", count: 20_000)
        let script = """
            define Node { id: Int primary, kids: [Node] }
            create Node {"id": 1}
            update Node 1 {"kids": [1]}
            count Node where \(String(repeating: "kids.", count: 255))id > 0
            count Node where \(path)id > 0
            """
        let run = await liveobj([], stdin: script)
        #expect(run.stdout.hasSuffix("1\n"), "\(run)")
        #expect(run.stderr.contains("expected at most 256 property names in a key path"), "\(run)")
    }

    @Test func theDemoAnswersLongPathsAndRefusesLongerOnes() async {
        let answered = await liveobj([
            "--demo", "-c", "count Dog where " + String(repeating: "owner.dogs.", count: 25) + "age > 3",
            "-c", "count Dog where " + String(repeating: "owner.dogs.", count: 127) + "age > 3",
        ])
        expectRun(answered, stdout: "5\n5\n")
        let refused = await liveobj([
            "--demo", "-c", "count Dog where " + String(repeating: "owner.dogs.", count: 8_000) + "age > 3",
        ])
        #expect(refused.code != 0)
        #expect(refused.stderr.contains("expected at most 256 property names in a key path"), "\(refused)")
    }
}
