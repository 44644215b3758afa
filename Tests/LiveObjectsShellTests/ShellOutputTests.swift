import Foundation
import LiveObjects
import Testing

@testable import LiveObjectsShell

/// Sort modes, output modes, escaping and cutting of table values, structured schemas.
@Suite struct ShellOutputTests {
    /// Runs commands on a demo shell whose output is a terminal `width` columns wide.
    static func run(_ commands: String, width: Int? = nil) async -> (output: String, errors: String) {
        let realm = try! await Demo.open()
        let out = Capture()
        let err = Capture()
        let shell = Shell(realm: realm, io: ShellIO(output: out.write, errorOutput: err.write, width: { width }))
        _ = await shell.run(commands)
        return (out.text, err.text)
    }

    @Test func stringsSortForPeopleByDefault() async {
        let setup =
            #"create DogToy {"id": 10, "name": "ball 10"}; create DogToy {"id": 11, "name": "ball 9"}; "#
            + #"create DogToy {"id": 12, "name": "Ball 2"}; "#
        let natural = await Self.run(setup + "mode csv; query DogToy where name BEGINSWITH[c] 'ball' sort by name")
        #expect(natural.output.hasSuffix("id,name\n12,Ball 2\n11,ball 9\n10,ball 10\n"))
        let binary = await Self.run(
            setup + "mode csv; query DogToy where name BEGINSWITH[c] 'ball' sort by name binary")
        #expect(binary.output.hasSuffix("id,name\n12,Ball 2\n10,ball 10\n11,ball 9\n"))
        let descending = await Self.run(
            setup + "mode csv; query DogToy where name BEGINSWITH[c] 'ball' sort by name nocase desc")
        #expect(descending.output.hasSuffix("id,name\n11,ball 9\n12,Ball 2\n10,ball 10\n"))
    }

    @Test func tablesEscapeControlCharactersAndCutWideValues() async {
        let (output, _) = await Self.run(
            #"create DogToy {"id": 10, "name": "red\u001b[31m\u0007\ttab"}; query DogToy where id == 10"#)
        #expect(output.contains(#"10  red\u001B[31m\u0007\ttab"#))
        #expect(!output.contains("\u{1B}"))
        let (cut, _) = await Self.run("query Person where id == 4", width: 60)
        let lines = cut.split(separator: "\n")
        #expect(lines.allSatisfy { TextTable.width(String($0)) <= 60 }, "\(cut)")
        #expect(cut.contains("…"))
        // get shows values in full.
        let (full, _) = await Self.run("get Person 4", width: 30)
        #expect(!full.contains("…"))
    }

    @Test func outputModes() async {
        let (vertical, _) = await Self.run("mode vertical; query Dog where id == 1")
        #expect(
            vertical == """
                Output mode: vertical.
                -[ RECORD 1 ]--
                id    | 1
                name  | Rex
                age   | 3
                owner | 1
                toys  | [1, 2]
                (1 object)

                """)
        let (csv, _) = await Self.run("mode csv; query Dog where id <= 2")
        #expect(csv == "Output mode: csv.\nid,name,age,owner,toys\n1,Rex,3,1,\"[1,2]\"\n2,Fido,7,1,[3]\n")
        let (json, _) = await Self.run("mode json; count Dog")
        #expect(json == "{\"mode\":\"json\"}\n7\n")
        let (_, errors) = await Self.run("mode yaml")
        #expect(errors.hasPrefix("Error: unknown output mode 'yaml'; the modes are table, vertical, json and csv"))
        expectRun(
            await liveobj(["--demo", "--mode", "csv", "-c", "query Dog where id == 2"]),
            stdout: "id,name,age,owner,toys\n2,Fido,7,1,[3]\n")
    }

    /// NaN and the infinities are written as the strings "NaN", "Infinity" and "-Infinity" (the
    /// snapshot's spelling) in JSON output and cells, and read back from them.
    @Test func nonFiniteNumbersAreSpelledAsInSnapshots() async {
        let setup =
            "define Reading { id: Int primary, value: Double, values: [Float] }; "
            + #"create Reading {"id": 1, "value": "NaN", "values": ["Infinity", "-Infinity", 1.5]}; "#
            + #"create Reading {"id": 2, "value": 1e400, "values": []}; "#
        let (json, jsonErrors) = await Self.run(setup + "mode json; query Reading; get Reading 1")
        #expect(jsonErrors.isEmpty, "\(jsonErrors)")
        #expect(
            json.hasSuffix(
                #"[{"id":1,"value":"NaN","values":["Infinity","-Infinity",1.5]},{"id":2,"value":"Infinity","values":[]}]"#
                    + "\n" + #"{"id":1,"value":"NaN","values":["Infinity","-Infinity",1.5]}"# + "\n"),
            "\(json)")
        let (csv, _) = await Self.run(setup + "mode csv; query Reading where id == 1")
        #expect(csv.hasSuffix("id,value,values\n1,NaN,\"[\"\"Infinity\"\",\"\"-Infinity\"\",1.5]\"\n"), "\(csv)")
        // Any other string is refused, as before.
        let (_, errors) = await Self.run(setup + #"update Reading 2 {"value": "nan"}"#)
        #expect(errors.hasPrefix(#"Error: Reading.value: expected a number, got "nan""#), "\(errors)")
    }

    @Test func schemaInJSONHasFields() async {
        expectRun(
            await liveobj(["--demo", "--json", "-c", "schema DogToy"]),
            stdout:
                #"[{"name":"DogToy","embedded":false,"properties":[{"name":"id","type":"int","optional":false,"list":false,"primaryKey":true},{"name":"name","type":"string","optional":false,"list":false},{"name":"dogs","type":"linkingObjects","optional":false,"list":true,"objectType":"Dog","originProperty":"toys"}]}]"#
                + "\n")
    }

    @Test func completion() async {
        let realm = try! await Demo.open()
        let shell = Shell(realm: realm, io: ShellIO(output: { _ in }, errorOutput: { _ in }))
        func complete(_ line: String) -> [String] {
            shell.completions(line, cursor: line.count).candidates
        }
        #expect(complete("qu") == ["query", "quit"])
        #expect(complete("count Do") == ["Dog", "DogToy", "DogClub"])
        #expect(complete("query Dog where owner.na") == ["owner.name"])
        #expect(complete("query Dog where ow") == ["owner."])
        #expect(complete("query Dog where age > 3 AN") == ["AND", "ANY"])
        #expect(complete("query Dog sort by age d") == ["desc"])
        #expect(complete("query Dog ") == ["where", "sort", "section", "limit"])
        #expect(complete("watch w = Dog ") == ["where", "sort", "limit"])
        #expect(complete("query Dog sort by age section ") == ["by"])
        #expect(complete("update Dog where age > 3 set na") == ["name"])
        #expect(complete("mode c") == ["csv"])
        // MATCHES is not offered: the query language refuses it (no regular expressions).
        #expect(complete("query Dog where name MA") == [])
        #expect(complete("query Dog where name L") == ["LIKE", "limit"])
        #expect(shell.completions("query Dog where owner.na", cursor: 24).start == 16)
    }
}
