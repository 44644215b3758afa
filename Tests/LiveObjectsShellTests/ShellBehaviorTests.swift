import Foundation
import LiveObjects
import LiveObjectsShell
import Testing

/// Errors and exit codes, transactions, watches, the command line and the file-store hook.
@Suite struct ShellBehaviorTests {
    // MARK: Errors and exit codes

    @Test func predicateErrorShowsTheLineWithACaret() async {
        expectRun(
            await liveobj(["--demo", "-c", "query Dog where age > > 3"]),
            stdout: "",
            stderr: lines(
                """
                Error: expected a value or key path after > but found '>' at column 23
                query Dog where age > > 3
                                      ^
                """),
            code: 1)
        expectRun(
            await liveobj(["--demo", "-c", "count Person where naem == 'Ann'"]),
            stdout: "",
            stderr: lines(
                """
                Error: Person.naem: Person has no property 'naem' at column 20; did you mean 'name'?
                count Person where naem == 'Ann'
                                   ^
                """),
            code: 1)
    }

    @Test func columnsInMessagesAreTheCaretsColumns() async {
        expectRun(
            await liveobj(["--demo", "-c", "query Dog where (age > 3 and name == 'x'"]),
            stdout: "",
            stderr: lines(
                """
                Error: expected AND, OR or ')' to close the '(' at column 17 but found end of input at column 41
                query Dog where (age > 3 and name == 'x'
                                                        ^
                """),
            code: 1)
    }

    @Test func commandsContinueOnTheNextLineInScriptsAndWithC() async {
        expectRun(
            await liveobj(
                ["--demo"],
                stdin: lines(
                    """
                    create Dog {"id": 20,   # a comment inside
                      "name": "Two lines"}
                    get Dog 20; count Dog where name == 'Two lines'
                    count Dog where (age >
                    """)),
            stdout: "Created Dog 20.\n"
                + "id:       20\nname:     Two lines\nage:      0\nowner:    null\ntoys:     []\nwalkers:  []\n1\n",
            stderr: lines(
                """
                Error: line 4: expected a value or key path after > but found end of input at column 23
                count Dog where (age >
                                      ^
                """),
            code: 1)
        expectRun(
            await liveobj(["--demo", "-c", "count Dog where name IN {\n'Rex',\n'Max'}"]), stdout: "2\n")
    }

    @Test func jsonErrorShowsACaret() async {
        expectRun(
            await liveobj(["--demo", "-c", #"create Dog {"id": 9, "name" "x"}"#]),
            stdout: "",
            stderr: lines(
                """
                Error: invalid JSON: expected ':' after the key
                create Dog {"id": 9, "name" "x"}
                                            ^
                """),
            code: 1)
    }

    @Test func commandErrors() async {
        let cases: [(String, String)] = [
            ("frob", "unknown command 'frob'; type 'help' for the list"),
            (
                "query",
                "usage: query TYPE [where PREDICATE] [sort by KEYPATH [asc|desc] [natural|nocase|binary], ...] "
                    + "[section by KEYPATH] [limit N]"
            ),
            ("count Dgo", "there is no object type named 'Dgo'; did you mean 'Dog'?"),
            ("count Cat", "there is no object type named 'Cat'; 'types' lists them"),
            ("qeury Dog", "unknown command 'qeury'; did you mean 'query'? type 'help' for the list"),
            ("query Dog where age > 3 limit", "the limit clause needs a number of objects: limit N"),
            ("query Dog sort by", "the sort clause needs a key path: sort by KEYPATH [asc|desc]"),
            ("get Dog 99", "there is no Dog with primary key 99"),
            (#"create Dog {"id": 1}"#, "Dog.id[1]: an object with this primary key already exists"),
            (#"create Dog {"id": 9, "owner": 42}"#, "Dog.owner: there is no Person with primary key 42"),
            (#"create Dog {"id": 9, "age": "old"}"#, #"Dog.age: expected an integer, got "old""#),
            (#"create Dog {"id": 9, "nmae": "Rex"}"#, "Dog has no property 'nmae'; did you mean 'name'?"),
            (#"update Dog 1 {"aeg": 4}"#, "Dog has no property 'aeg'; did you mean 'age'?"),
            (#"update Dog 1 {"id": 2}"#, "Dog.id[1]: the primary key of an existing object cannot be changed"),
            (#"update Dog 1 {"walkers": []}"#, "Dog.walkers: LinkingObjects cannot be set"),
            ("delete Person 5", "Person[5]: DogClub.president still links to it and denies its deletion"),
            ("commit", "no transaction is open; 'begin' opens one"),
            (
                "save",
                "this realm lives in memory; saving needs a file realm, and file realms need the Persistence module, not available yet"
            ),
            ("unwatch nothing", "there is no watch named 'nothing'"),
            ("define T { id: int primary }", "unknown type 'int'; property types are spelled as in Swift: 'Int'"),
            ("define T { tags: {string} }", "unknown type 'string'; property types are spelled as in Swift: 'String'"),
        ]
        for (command, message) in cases {
            let run = await liveobj(["--demo", "-c", command])
            #expect(run.stdout == "" && run.code == 1)
            #expect(run.stderr.hasPrefix("Error: \(message)\n"), "\(command): \(run.stderr)")
        }
    }

    /// psql, sqlite3 and SQL habits get the shell's spelling of the command.
    @Test func otherToolsHabitsGetTheShellsSpelling() async {
        let cases: [(String, String)] = [
            ("SELECT * FROM Dog", "query Dog"),
            ("select name from Dog where age > 3 order by name", "query Dog where PREDICATE"),
            ("SELECT COUNT(*) FROM Person", "count Person"),
            ("SELECT 1", "query TYPE"),
            (#"\d Dog"#, "schema Dog"),
            (#"\d"#, "schema"),
            (#"\dt"#, "types"),
            (#"\q"#, "quit"),
            (#"\?"#, "help"),
            (".tables", "types"),
            (".schema Person", "schema Person"),
            (".quit", "quit"),
            (".exit", "quit"),
            ("show tables", "types"),
            ("describe Dog", "schema Dog"),
        ]
        for (command, spelling) in cases {
            let name = String(command.prefix { !$0.isWhitespace })
            let run = await liveobj(["--demo", "-c", command])
            #expect(run.stdout == "" && run.code == 1)
            #expect(
                run.stderr
                    == "Error: unknown command '\(name)'; did you mean '\(spelling)'? type 'help' for the list\n",
                "\(command): \(run.stderr)")
        }
        // SQL's ORDER BY in a query.
        for command in ["query Dog order by name", "query Dog where age > 3 ORDER BY name desc"] {
            let run = await liveobj(["--demo", "-c", command])
            #expect(run.code == 1)
            #expect(
                run.stderr.hasPrefix(
                    "Error: the sort clause reads 'sort by KEYPATH [asc|desc]'; did you mean 'sort by'?\n"),
                "\(command): \(run.stderr)")
        }
        // `exit` is the shell's own (an alias of quit).
        expectRun(await liveobj(["--demo", "-c", "exit"]), stdout: "")
        // MATCHES, which Tab does not offer, is refused with what to use instead.
        let matches = await liveobj(["--demo", "-c", "query Dog where name MATCHES 'R.*'"])
        #expect(matches.code == 1 && matches.stderr.contains("LIKE takes * and ? wildcards"), "\(matches)")
    }

    @Test func aFailedCommandChangesNothing() async {
        // The second dog links to a missing person: neither dog is created, nor the first
        // update of the where-form (Rex) when a later object fails.
        expectRun(
            await liveobj(
                ["--demo"],
                stdin: lines(
                    """
                    begin
                    delete Dog 3
                    update Dog where id IN {1, 2} set owner = 99
                    count Dog where owner == nil
                    """)),
            stdout: "Transaction open.\nDeleted Dog 3.\n",
            stderr:
                "Error: line 3: Dog.owner: there is no Person with primary key 99\nThe open transaction was rolled back.\n",
            code: 1)
        // Inside an open transaction, interactive use continues after an error; the failed
        // command's partial changes are undone, the earlier ones kept.
        let realm = try! await Demo.open()
        let out = Capture()
        let err = Capture()
        let shell = Shell(realm: realm, io: ShellIO(output: out.write, errorOutput: err.write))
        #expect(await shell.run("begin; delete Dog 3") == .succeeded)
        #expect(await shell.run("update Dog where id IN {1, 2} set age = 0, owner = 99") == .failed)
        #expect(await shell.run("count Dog where age == 0; count Dog; commit; count Dog") == .succeeded)
        #expect(out.text == "Transaction open.\nDeleted Dog 3.\n0\n6\nCommitted.\n6\n")
        #expect(err.text == "Error: Dog.owner: there is no Person with primary key 99\n")
    }

    @Test func scriptStopsAtTheFirstFailure() async {
        expectRun(
            await liveobj(["--demo"], stdin: "count Dog  # seven\n# a comment\n\ncount Cat\ncount Person\n"),
            stdout: "7\n", stderr: "Error: line 4: there is no object type named 'Cat'; 'types' lists them\n", code: 1)
    }

    // MARK: Transactions

    @Test func rollbackChangesNothing() async {
        expectRun(
            await liveobj(
                ["--demo"],
                stdin: lines(
                    """
                    begin
                    create Dog {"id": 8, "name": "Pip"}
                    update Person 2 {"name": "Changed", "address": null}
                    delete DogClub where name != "朝の散歩"
                    count Dog
                    rollback
                    count Dog
                    get Person 2
                    count DogClub
                    count Address
                    """)),
            stdout: lines(
                """
                Transaction open.
                Created Dog 8.
                Updated Person 2.
                Deleted 2 DogClub objects.
                8
                Rolled back.
                7
                id:       2
                name:     Bob Martin
                age:      41
                dogs:     [3, 7]
                address:  {"street": "5 rue des Lilas", "city": "Lyon"}
                clubs:    ["Barkers"]
                3
                5
                """))
    }

    @Test func inputEndingInsideATransactionRollsBack() async {
        expectRun(
            await liveobj(["--demo", "-c", "begin; delete Dog 1"]),
            stdout: "Transaction open.\nDeleted Dog 1.\n",
            stderr: "Error: the input ended inside a transaction; its changes were rolled back\n", code: 1)
        expectRun(
            await liveobj(["--demo", "-c", "begin; quit"]),
            stdout: "Transaction open.\n",
            stderr:
                "Error: a transaction is open; 'commit' or 'rollback' it before quitting\nThe open transaction was rolled back.\n",
            code: 1)
    }

    // MARK: Watches

    @Test func watchesRowsSetsHowManyRowsAChangeSetPrints() async {
        expectRun(
            await liveobj(
                ["--demo"],
                stdin: lines(
                    """
                    watch all = Dog sort by id
                    watches rows 2
                    update Dog where age >= 0 set age = 1
                    watches rows 0
                    delete Dog where id >= 3
                    watches rows x
                    """)),
            stdout: lines(
                """
                Watching all: 7 Dog objects.
                A watch prints at most 2 rows per change.
                Updated 7 Dog objects.
                watch all: 6 modified
                  change    index  id  name  age  owner  toys
                  --------  -----  --  ----  ---  -----  ------
                  modified  0      1   Rex   1    1      [1, 2]
                  modified  1      2   Fido  1    1      [3]
                  … and 4 more
                A watch prints at most 0 rows per change.
                Deleted 5 Dog objects.
                watch all: 5 deleted
                """),
            stderr:
                "Error: line 6: watches rows needs a number of rows: watches rows N\nwatches rows x\n             ^\n",
            code: 1)
    }

    /// Every command's change sets are printed right after its own output, once, watch by
    /// watch in the order they were started, however many commands follow one another.
    @Test func eachCommandsChangeSetsFollowItOnce() async {
        let updates = (10..<40).map { "update Dog 1 {\"age\": \($0)}" }
        let reports = (10..<40).map { _ in "Updated Dog 1.\nwatch all: 1 modified\nwatch rex: 1 modified" }
        expectRun(
            await liveobj(
                ["--demo"],
                stdin: lines(
                    (["watch all = Dog sort by id", "watch rex = Dog where id == 1", "watches rows 0"] + updates
                        + ["update Dog 2 {\"age\": 3}"])
                        .joined(separator: "\n"))),
            stdout: lines(
                ([
                    "Watching all: 7 Dog objects.", "Watching rex: 1 Dog object.",
                    "A watch prints at most 0 rows per change.",
                ]
                    + reports + ["Updated Dog 2.", "watch all: 1 modified"])
                    .joined(separator: "\n")))
    }

    @Test func watchPrintsChangeSetsWithRows() async {
        expectRun(
            await liveobj(
                ["--demo"],
                stdin: lines(
                    """
                    watch old = Dog where age >= 5 sort by age desc
                    create Dog {"id": 8, "name": "Pip", "age": 6}
                    count Dog
                    update Person 1 {"age": 35}
                    delete Dog 5
                    begin
                    update Dog 2 {"name": "Fido II"}
                    update Dog 4 {"age": 2}
                    update Dog 3 {"age": 5}
                    commit
                    watches
                    unwatch old
                    delete Dog 2
                    watches
                    """)),
            stdout: lines(
                """
                Watching old: 3 Dog objects.
                Created Dog 8.
                watch old: 1 inserted
                  change    index  id  name  age  owner  toys
                  --------  -----  --  ----  ---  -----  ----
                  inserted  2      8   Pip   6    null   []
                8
                Updated Person 1.
                watch old: 1 modified
                  change    index  id  name  age  owner  toys
                  --------  -----  --  ----  ---  -----  ----
                  modified  1      2   Fido  7    1      [3]
                Deleted Dog 5.
                watch old: 1 deleted
                  change   index  id  name   age  owner  toys
                  -------  -----  --  -----  ---  -----  ----
                  deleted  0      5   Шарик  9    4      [5]
                Transaction open.
                Updated Dog 2.
                Updated Dog 4.
                Updated Dog 3.
                Committed.
                watch old: 1 deleted, 1 inserted, 1 modified
                  change    index  id  name     age  owner  toys
                  --------  -----  --  -------  ---  -----  ----
                  deleted   2      4   Max      5    3      [4]
                  inserted  2      3   Bella    5    2      []
                  modified  0      2   Fido II  7    1      [3]
                watch  query
                -----  -----------------------------------
                old    Dog where age >= 5 sort by age desc
                Stopped watching old.
                Deleted Dog 2.
                No watches.
                """))
    }

    @Test func watchInJSONAndRolledBackChangesAreSilent() async {
        expectRun(
            await liveobj([
                "--demo", "--json", "-c",
                #"watch young = Dog where age < 3; begin; delete Dog 3; rollback; update Dog 1 {"age": 1}"#,
            ]),
            stdout: lines(
                """
                {"watching":"young","count":2}
                {"transaction":"open"}
                {"deleted":"Dog","count":1}
                {"transaction":"rolled back"}
                {"updated":"Dog","count":1}
                {"watch":"young","version":2,"inserted":[{"index":0,"object":{"id":1,"name":"Rex","age":1,"owner":1,"toys":[1,2]}}]}
                """))
    }

    @Test func aLargeChangeSetPrintsItsFirstRowsAndHowManyMore() async throws {
        let creates = (100..<125).map { #"create Dog {"id": \#($0), "name": "d\#($0)", "age": 1}"# }
        let script =
            "watch young = Dog where age < 3 sort by id; begin; " + creates.joined(separator: "; ") + "; commit"
        let table = await liveobj(["--demo", "-c", script])
        #expect(table.code == 0, "\(table)")
        #expect(table.stdout.contains("watch young: 25 inserted\n"), "\(table)")
        let rows = table.stdout.split(separator: "\n").filter { $0.hasPrefix("  inserted") }
        #expect(rows.count == 20, "\(table)")
        #expect(table.stdout.hasSuffix("  … and 5 more\n"), "\(table)")

        let json = await liveobj(["--demo", "--json", "-c", script])
        let last = try #require(json.stdout.split(separator: "\n").last)
        #expect(last.hasPrefix(#"{"watch":"young","version":"#), "\(json)")
        #expect(last.hasSuffix(#""counts":{"inserted":25},"more":5}"#), "\(json)")
        #expect(last.components(separatedBy: #"{"index":"#).count - 1 == 20, "\(json)")
    }

    // MARK: Command line

    @Test func helpAndVersion() async {
        let help = await liveobj(["--help"])
        #expect(help.code == 0 && help.stderr == "")
        #expect(help.stdout.hasPrefix("OVERVIEW: An interactive shell for LiveObjects realms.\n"))
        #expect(
            help.stdout.contains(
                "\nUSAGE: liveobj [<file>] [--demo] [--create] [--command <command> ...] [--json] [--mode <mode>]\n"))
        #expect(help.stdout.contains("\nOPTIONS:\n  --demo "))
        expectRun(await liveobj(["--version"]), stdout: "0.1.0\n")
    }

    @Test func usageErrorsExit64() async {
        let usage =
            "Usage: liveobj [<file>] [--demo] [--create] [--command <command> ...] [--json] [--mode <mode>]\n  See 'liveobj --help' for more information.\n"
        expectRun(await liveobj(["--bogus"]), stdout: "", stderr: "Error: Unknown option '--bogus'\n" + usage, code: 64)
        expectRun(
            await liveobj(["--demo", "-c"]), stdout: "", stderr: "Error: Missing value for '-c <command>'\n" + usage,
            code: 64)
        expectRun(
            await liveobj(["a.json", "b.json"]), stdout: "", stderr: "Error: Unexpected argument 'b.json'\n" + usage,
            code: 64)
        expectRun(
            await liveobj(["--demo", "a.json"]), stdout: "",
            stderr: "Error: '--demo' cannot be used with a file\n" + usage, code: 64)
        expectRun(
            await liveobj(["--create"]), stdout: "", stderr: "Error: '--create' needs a <file>\n" + usage, code: 64)
    }

    @Test func fileRealmsNeedTheFileStore() async {
        let error = "Error: file realms need the Persistence module, not available yet\n"
        expectRun(await liveobj(["shop.json"]), stdout: "", stderr: error, code: 1)
        expectRun(await liveobj(["shop.json", "--create", "-c", "types"]), stdout: "", stderr: error, code: 1)
    }

    @Test func parsing() throws {
        #expect(
            try CommandParser.parse(
                #"query Dog where name == "a sort by b" AND age > 2 sort by owner.name desc, age limit 3"#)
                == .query(
                    QueryRequest(
                        type: "Dog", predicate: PredicateText(text: #"name == "a sort by b" AND age > 2"#, offset: 16),
                        sorts: [
                            SortField("owner.name", ascending: false, comparison: .natural),
                            SortField("age", comparison: .natural),
                        ], limit: 3)))
        #expect(
            try CommandParser.parse(#"update Dog where name == 'set x = 1' set age = 3, name = 'Rex'"#)
                == .updateWhere(
                    type: "Dog", predicate: PredicateText(text: "name == 'set x = 1'", offset: 17),
                    assignments: [Assignment(property: "age", value: 3), Assignment(property: "name", value: "Rex")]))
        #expect(
            try CommandParser.parse(#"create Dog {"a": {"b": [1, {"c": "}"}]}}"#)
                == .create(type: "Dog", values: ["a": ["b": [1, ["c": "}"]]]]))
        #expect(try CommandParser.parse("   # comment") == nil)
        #expect(
            CommandParser.split(#"count Dog; create Dog {"name": "a;b"}; query Dog where name == ';'"#) == [
                "count Dog", #"create Dog {"name": "a;b"}"#, "query Dog where name == ';'",
            ])
        guard
            case .define(let definition)? = try CommandParser.parse(
                "define embedded Tag { label: String indexed, scores: [Double], owner: Dog?, owners: <- Dog.tags }")
        else {
            Issue.record("not a define")
            return
        }
        #expect(definition.isEmbedded && definition.name == "Tag")
        #expect(
            definition.properties.map(\.description) == [
                "label: String indexed", "scores: [Double]", "owner: Dog?", "owners: <- Dog.tags",
            ])
    }

    // MARK: The file-store hook

    /// A file store that keeps "files" as demo realms in memory and counts saves.
    final class FakeFileStore: RealmFileStore, @unchecked Sendable {
        var saves: [String] = []
        func open(path: String, create: Bool) async throws -> Realm {
            guard create || path == "shop.json" else {
                throw LiveObjectsError(.io, "no such file", file: path)
            }
            return try await Demo.open()
        }
        func save(_ realm: Realm, to path: String) async throws { saves.append(path) }
        func fileSize(path: String) -> Int64? { 1234 }
    }

    @Test func fileRealmsThroughAFileStore() async {
        let store = FakeFileStore()
        expectRun(
            await liveobj(["shop.json", "-c", "delete Dog 1; save; stats"], fileStore: store),
            stdout: lines(
                """
                Deleted Dog 1.
                Saved shop.json.
                type     objects
                -------  -------
                Person   6
                Dog      6
                DogToy   4
                DogClub  3
                Address  5

                version:         2
                schema version:  0
                storage:         shop.json, 1234 bytes
                """))
        #expect(store.saves == ["shop.json"])
        // Quitting with unsaved changes is refused when nobody can be asked.
        expectRun(
            await liveobj(["shop.json"], stdin: "delete Dog 1\nquit\n", fileStore: store),
            stdout: "Deleted Dog 1.\n",
            stderr: "Error: the changes to shop.json are not saved; 'save' them before quitting\n", code: 1)
        expectRun(
            await liveobj(["shop.json"], stdin: "delete Dog 1\n", fileStore: store),
            stdout: "Deleted Dog 1.\n",
            stderr: "Error: the changes to shop.json were not saved; end with 'save' to keep them\n", code: 1)
        expectRun(
            await liveobj(["missing.json"], fileStore: store),
            stdout: "", stderr: "Error: missing.json: no such file\n", code: 1)
        #expect(store.saves == ["shop.json"])
    }
}
