import Foundation
import LiveObjects
import LiveObjectsShell
import Testing

/// Exact-output tests of the shell's commands on the demo realm, in the manner of
/// swift-argument-parser's example tests: run the tool with arguments, compare standard output,
/// standard error and the exit code with what is expected, character for character.
@Suite struct ShellCommandTests {
    @Test func types() async {
        expectRun(
            await liveobj(["--demo", "-c", "types"]),
            stdout: lines(
                """
                type     objects  kind
                -------  -------  --------
                Person   6
                Dog      7
                DogToy   6
                DogClub  3
                Address  5        embedded
                """))
    }

    @Test func schemaOfOneType() async {
        expectRun(
            await liveobj(["--demo", "-c", "schema Dog"]),
            stdout: lines(
                """
                Dog {
                  id: Int primary
                  name: String indexed
                  age: Int
                  owner: Person?
                  toys: [DogToy] cascade
                  walkers: <- Person.dogs
                }
                """))
    }

    @Test func queryWithPredicateSortAndLimit() async {
        expectRun(
            await liveobj(["--demo", "-c", "query Person where age > 30 sort by age desc limit 3"]),
            stdout: lines(
                """
                id  name            age  dogs    address
                --  --------------  ---  ------  ---------------------------------------------
                6   Zoë Ng          52   [7]     null
                2   Bob Martin      41   [3, 7]  {"street": "5 rue des Lilas", "city": "Lyon"}
                4   Дмитрий Иванов  37   [5]     {"street": "ул. Ленина, 7", "city": "Москва"}
                (3 objects)
                """))
    }

    @Test func tablesAlignWideCharacters() async {
        expectRun(
            await liveobj(["--demo", "-c", "query Dog where id IN {5, 6, 7} sort by name"]),
            stdout: lines(
                """
                id  name   age  owner  toys
                --  -----  ---  -----  ----
                7   Luna   4    null   []
                5   Шарик  9    4      [5]
                6   ポチ   2    5      [6]
                (3 objects)
                """))
    }

    @Test func emptyQuery() async {
        expectRun(await liveobj(["--demo", "-c", "find DogToy where name == 'nothing'"]), stdout: "(0 objects)\n")
    }

    @Test func getShowsInverseLinks() async {
        expectRun(
            await liveobj(["--demo", "-c", "get Person 5"]),
            stdout: lines(
                """
                id:       5
                name:     田中さくら
                age:      25
                dogs:     [6]
                address:  {"street": "千代田1-1", "city": "東京"}
                clubs:    ["朝の散歩"]
                """))
        expectRun(
            await liveobj(["--demo", "-c", "get DogClub 'Собачники'"]),
            stdout: lines(
                """
                name:       Собачники
                members:    [4, 6]
                president:  null
                """))
    }

    @Test func count() async {
        expectRun(
            await liveobj(["--demo", "-c", "count Dog; count Dog where owner.address.city == 'Dublin'"]),
            stdout: "7\n2\n")
    }

    @Test func createWithLinksAndEmbeddedObject() async {
        expectRun(
            await liveobj([
                "--demo", "-c",
                #"create Person {"id": 7, "name": "Eve", "age": 30, "dogs": [7, 3], "address": {"street": "1 Main St", "city": "Oslo"}}"#,
                "-c", "get Person 7", "-c", "count Address",
            ]),
            stdout: lines(
                """
                Created Person 7.
                id:       7
                name:     Eve
                age:      30
                dogs:     [7, 3]
                address:  {"street": "1 Main St", "city": "Oslo"}
                clubs:    []
                6
                """))
    }

    @Test func updateOneObjectAndByPredicate() async {
        expectRun(
            await liveobj([
                "--demo", "-c",
                #"update Dog 7 {"owner": 6, "toys": [1]}; update Person where age < 30 set age = 30, name = 'Young'"#,
                "-c", "query Dog where id == 7; query Person where age == 30",
            ]),
            stdout: lines(
                """
                Updated Dog 7.
                Updated 2 Person objects.
                id  name  age  owner  toys
                --  ----  ---  -----  ----
                7   Luna  4    6      [1]
                (1 object)
                id  name   age  dogs  address
                --  -----  ---  ----  --------------------------------------------------
                3   Young  30   [4]   {"street": "9 quai Saint-Michel", "city": "Paris"}
                5   Young  30   [6]   {"street": "千代田1-1", "city": "東京"}
                (2 objects)
                """))
    }

    @Test func deleteCascadesToToys() async {
        expectRun(
            await liveobj(["--demo", "-c", "delete Dog 1; delete Dog where age > 4; count Dog; count DogToy"]),
            stdout: lines(
                """
                Deleted Dog 1.
                Deleted 3 Dog objects.
                3
                1
                """))
    }

    @Test func helpListsCommandsAndShowsOne() async {
        let all = await liveobj(["--demo", "-c", "help"])
        #expect(all.code == 0 && all.stdout.hasPrefix("COMMANDS:\n  help [COMMAND]      Show the commands"))
        for doc in [
            "types", "schema", "define", "create", "get", "query", "count", "update", "delete", "begin",
            "commit", "rollback", "watch", "unwatch", "watches", "import", "export", "save", "stats", "quit",
        ] {
            #expect(all.stdout.contains("\n  \(doc)"), "help lists \(doc)")
        }
        expectRun(
            await liveobj(["--demo", "-c", "help count"]),
            stdout: lines(
                """
                OVERVIEW: Count the objects of a type.

                USAGE: count TYPE [where PREDICATE]
                """))
        expectRun(
            await liveobj(["--demo", "-c", "help rm"]),
            stdout: lines(
                """
                OVERVIEW: Delete one object, or every object matching a predicate.

                USAGE: delete TYPE KEY | delete TYPE where PREDICATE

                ALIASES: rm

                Delete rules apply: cascade deletes linked objects too, deny refuses and changes nothing.
                """))
    }

    @Test func stats() async {
        expectRun(
            await liveobj(["--demo", "-c", "delete Dog 3", "-c", "stats"]),
            stdout: lines(
                """
                Deleted Dog 3.
                type     objects
                -------  -------
                Person   6
                Dog      6
                DogToy   6
                DogClub  3
                Address  5

                version:         2
                schema version:  0
                storage:         in memory
                """))
    }

    @Test func jsonOutput() async {
        expectRun(
            await liveobj([
                "--demo", "--json", "-c",
                "query Dog where age > 4 sort by age limit 2; count Dog; get DogToy 5; delete Dog 2; begin; rollback; types",
            ]),
            stdout: lines(
                """
                [{"id":4,"name":"Max","age":5,"owner":3,"toys":[4]},{"id":2,"name":"Fido","age":7,"owner":1,"toys":[3]}]
                7
                {"id":5,"name":"мячик","dogs":[5]}
                {"deleted":"Dog","count":1}
                {"transaction":"open"}
                {"transaction":"rolled back"}
                [{"name":"Person","objects":6,"embedded":false},{"name":"Dog","objects":6,"embedded":false},{"name":"DogToy","objects":5,"embedded":false},{"name":"DogClub","objects":3,"embedded":false},{"name":"Address","objects":5,"embedded":true}]
                """))
    }

    @Test func defineAFullTextIndexedStringAndQueryIt() async {
        expectRun(
            await liveobj([
                "--demo", "-c", "define Note { id: Int primary, body: String fulltext, title: String? fulltext }",
                "-c",
                #"create Note {"id": 1, "body": "Café crème in Москва"}; create Note {"id": 2, "body": "東京のコーヒー"}"#,
                "-c", #"query Note where body TEXT 'cafe* -decaf'; query Note where body TEXT '"東京"'; schema Note"#,
                "-c", "define Note { n: Int fulltext }",
            ]),
            stdout: lines(
                """
                Defined Note (schema version 1).
                Created Note 1.
                Created Note 2.
                id  body                  title
                --  --------------------  -----
                1   Café crème in Москва  null
                (1 object)
                id  body            title
                --  --------------  -----
                2   東京のコーヒー  null
                (1 object)
                Note {
                  id: Int primary
                  body: String fulltext
                  title: String? fulltext
                }
                """),
            stderr:
                "Error: the definition is not valid: Note.n: only a String or String? property can have a full-text index, not n: Int fulltext\n",
            code: 1)
    }

    @Test func defineNewTypeAndPropertiesKeepsData() async {
        expectRun(
            await liveobj([
                "--demo", "-c",
                "define Vet { id: Int primary, name: String, patients: [Dog] }",
                "-c",
                "define DogClub { vet: Vet? }; define Vet { clubs: <- DogClub.vet }; define Dog { chip: String? indexed, born: Date? }",
                "-c",
                #"create Vet {"id": 1, "name": "Dr. Ōta", "patients": [1, 5]}; update DogClub Barkers {"vet": 1}"#,
                "-c",
                #"update Dog 1 {"chip": "A-1", "born": "2021-04-01T00:00:00Z"}; get Dog 1; get Vet 1; query Dog where chip == nil AND walkers.@count > 0 limit 1"#,
                "-c", "stats",
            ]),
            stdout: lines(
                """
                Defined Vet (schema version 1).
                Added vet to DogClub (schema version 2).
                Added clubs to Vet (schema version 3).
                Added chip, born to Dog (schema version 4).
                Created Vet 1.
                Updated DogClub "Barkers".
                Updated Dog 1.
                id:       1
                name:     Rex
                age:      3
                owner:    1
                toys:     [1, 2]
                walkers:  [1]
                chip:     A-1
                born:     2021-04-01T00:00:00Z
                id:        1
                name:      Dr. Ōta
                patients:  [1, 5]
                clubs:     ["Barkers"]
                id  name  age  owner  toys  chip  born
                --  ----  ---  -----  ----  ----  ----
                2   Fido  7    1      [3]   null  null
                (1 object)
                type     objects
                -------  -------
                Person   6
                Dog      7
                DogToy   6
                DogClub  3
                Address  5
                Vet      1

                version:         4
                schema version:  4
                """) + "storage:         in memory\n")
    }

    @Test func defineRefusesChangesAndBadSchemas() async {
        expectRun(
            await liveobj(["--demo", "-c", "define Dog { age: String }"]),
            stdout: "", stderr: "Error: Dog.age exists as 'age: Int'; define only adds properties\n", code: 1)
        expectRun(
            await liveobj(["--demo", "-c", "define Cat { owner: Human? }"]),
            stdout: "",
            stderr:
                "Error: the definition is not valid: Cat.owner: links to 'Human', which is not an object type of this realm\n",
            code: 1)
    }

    @Test func importAndExportRoundTrip() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("liveobj-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let all = dir.appendingPathComponent("all.json").path
        let again = dir.appendingPathComponent("again.json").path
        expectRun(await liveobj(["--demo", "-c", "export '\(all)'"]), stdout: "Exported 22 objects to \(all).\n")

        // Into an empty realm with the demo schema: every object and link comes back.
        let realm = try await Realm.open(.init(identifier: "import-\(UUID())", schema: Demo.schema))
        let out = Capture()
        let err = Capture()
        let shell = Shell(realm: realm, io: ShellIO(output: out.write, errorOutput: err.write))
        #expect(await shell.run("import '\(all)'; export '\(again)'; get Dog 6") == .succeeded)
        #expect(err.text == "")
        #expect(
            out.text
                == lines(
                    """
                    Imported 22 objects.
                    Exported 22 objects to \(again).
                    id:       6
                    name:     ポチ
                    age:      2
                    owner:    5
                    toys:     [6]
                    walkers:  [5]
                    """))
        #expect(try String(contentsOfFile: all, encoding: .utf8) == String(contentsOfFile: again, encoding: .utf8))

        // A type's array; a failure imports nothing.
        let dogs = dir.appendingPathComponent("dogs.json").path
        try #"[{"id": 20, "name": "Nova"}, {"id": 21, "owner": 99}]"#.write(
            toFile: dogs, atomically: true, encoding: .utf8)
        expectRun(
            await liveobj(["--demo", "-c", "import Dog '\(dogs)'"]),
            stdout: "", stderr: "Error: Dog.owner: there is no Person with primary key 99\n", code: 1)
        try #"[{"id": 20, "name": "Nova"}]"#.write(toFile: dogs, atomically: true, encoding: .utf8)
        expectRun(
            await liveobj(["--demo", "-c", "import Dog '\(dogs)'; count Dog"]), stdout: "Imported 1 object.\n8\n")
    }

    /// `import` reads at most its maximum size, in chunks: an endless device or a larger file is
    /// refused with a clear error and nothing is imported.
    @Test func importRefusesEndlessAndOversizedFiles() async throws {
        expectRun(
            await liveobj(["--demo", "-c", "import Dog /dev/zero; count Dog"]),
            stdout: "",
            stderr: "Error: /dev/zero is larger than the 268435456 bytes import reads; nothing was imported\n", code: 1)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let big = dir.appendingPathComponent("big.json").path
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: big))
        try handle.truncate(atOffset: UInt64(256 << 20) + 1)  // sparse: no disk used
        try handle.close()
        expectRun(
            await liveobj(["--demo", "-c", "import Dog '\(big)'"]),
            stdout: "", stderr: "Error: \(big) is larger than the 268435456 bytes import reads; nothing was imported\n",
            code: 1)
        try FileManager.default.removeItem(at: dir)
    }

    @Test func objectsWithoutPrimaryKeyAreNamedByKey() async {
        expectRun(
            await liveobj([
                "-c",
                "define Note { text: String }; create Note {\"text\": \"hi\"}; update Note #0 {\"text\": \"hello\"}; query Note; delete Note #0; count Note",
            ]),
            stdout: lines(
                """
                Defined Note (schema version 1).
                Created Note #0.
                Updated Note #0.
                text
                -----
                hello
                (1 object)
                Deleted Note #0.
                0
                """))
    }
}

/// `MutableSet` properties in the shell: `{Type}` in `define` and `schema`, members given twice
/// kept once, queries as on lists.
@Suite struct ShellSetTests {
    @Test func defineCreateAndQueryASet() async {
        expectRun(
            await liveobj([
                "-c",
                #"define Post { id: Int primary, tags: {String}, likes: {Post} }; schema Post; create Post {"id": 1, "tags": ["a", "b", "a"]}; create Post {"id": 2, "tags": ["b"], "likes": [1, 1]}; query Post where ANY tags == 'a'; count Post where likes.@count == 1"#,
            ]),
            stdout: lines(
                """
                Defined Post (schema version 1).
                Post {
                  id: Int primary
                  tags: {String}
                  likes: {Post}
                }
                Created Post 1.
                Created Post 2.
                id  tags        likes
                --  ----------  -----
                1   ["a", "b"]  []
                (1 object)
                1
                """))
    }
}

extension ShellSetTests {
    @Test func swiftSpellingsOfListsAndSets() async {
        expectRun(
            await liveobj([
                "-c",
                "define Post { id: Int primary, tags: MutableSet<String>, likes: List<Post>, scores: Set<Int?>, names: Array<String> }; schema Post",
            ]),
            stdout: lines(
                """
                Defined Post (schema version 1).
                Post {
                  id: Int primary
                  tags: {String}
                  likes: [Post]
                  scores: {Int?}
                  names: [String]
                }
                """))
        let map = await liveobj(["-c", "define Q { id: Int primary, m: Map<String, String> }"])
        #expect(map.code != 0)
        #expect(map.stderr.contains("write a map as '[String: Type]'"), "\(map.stderr)")
    }
}

/// `Map` properties in the shell: `[String: Type]` in `define` and `schema`, JSON objects in
/// create and update, queries by key.
@Suite struct ShellMapTests {
    @Test func defineCreateUpdateAndQueryAMap() async {
        expectRun(
            await liveobj([
                "-c",
                #"define Player { id: Int primary, settings: [String: String], scores: [String: Int?] }; schema Player; create Player {"id": 1, "settings": {"theme": "dark", "font": "serif"}}; create Player {"id": 2, "settings": {"theme": "light"}, "scores": {"a": null}}; update Player 2 {"scores": {"b": 3, "a": 1}}; query Player where settings['theme'] == 'dark'; count Player where ANY settings.@keys == 'theme'; get Player 2"#,
            ]),
            stdout: lines(
                """
                Defined Player (schema version 1).
                Player {
                  id: Int primary
                  settings: [String: String]
                  scores: [String: Int?]
                }
                Created Player 1.
                Created Player 2.
                Updated Player 2.
                id  settings                            scores
                --  ----------------------------------  ------
                1   {"font": "serif", "theme": "dark"}  {}
                (1 object)
                2
                id:        2
                settings:  {"theme": "light"}
                scores:    {"a": 1, "b": 3}
                """))
    }

    @Test func aMapOfEmbeddedObjectsTakesAndShowsNestedObjects() async {
        expectRun(
            await liveobj([
                "-c",
                #"define embedded Place { city: String }; define Trip { id: Int primary, stops: [String: Place?] }; create Trip {"id": 1, "stops": {"b": {"city": "Rome"}, "a": {"city": "Oslo"}, "c": null}}; get Trip 1; update Trip 1 {"stops": {"a": {"city": "Nice"}}}; query Trip where stops['a'].city == 'Nice'; count Place"#,
            ]),
            stdout: lines(
                """
                Defined embedded Place (schema version 1).
                Defined Trip (schema version 2).
                Created Trip 1.
                id:     1
                stops:  {"a": {"city": "Oslo"}, "b": {"city": "Rome"}, "c": null}
                Updated Trip 1.
                id  stops
                --  -----------------------
                1   {"a": {"city": "Nice"}}
                (1 object)
                1
                """))
    }

    @Test func aMapOfObjectsTakesAndShowsPrimaryKeys() async {
        expectRun(
            await liveobj([
                "-c",
                #"define Dog { id: Int primary, name: String }; define Owner { id: Int primary, friends: [String: Dog?] }; schema Owner; create Dog {"id": 1, "name": "Rex"}; create Dog {"id": 2, "name": "Max"}; create Owner {"id": 1, "friends": {"b": 2, "a": 1, "c": null}}; update Owner 1 {"friends": {"a": 2}}; create Owner {"id": 2, "friends": {"x": 1}}; query Owner where friends['x'].name == 'Rex'; delete Dog 2; get Owner 1"#,
            ]),
            stdout: lines(
                """
                Defined Dog (schema version 1).
                Defined Owner (schema version 2).
                Owner {
                  id: Int primary
                  friends: [String: Dog?]
                }
                Created Dog 1.
                Created Dog 2.
                Created Owner 1.
                Updated Owner 1.
                Created Owner 2.
                id  friends
                --  --------
                2   {"x": 1}
                (1 object)
                Deleted Dog 2.
                id:       1
                friends:  {"a": null}
                """))
    }
}
