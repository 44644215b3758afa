/// The documentation of one shell command: what `help` and `help COMMAND` print.
struct CommandDoc: Sendable {
    var name: String
    var aliases: [String] = []
    var usage: String
    var abstract: String
    var discussion: String = ""

    static func named(_ name: String) -> CommandDoc? {
        let lower = name.lowercased()
        return all.first { $0.name == lower || $0.aliases.contains(lower) }
    }

    /// `help COMMAND`, in the layout of swift-argument-parser's help.
    var help: String {
        var text = "OVERVIEW: \(abstract)\n\nUSAGE: \(usage)"
        if !aliases.isEmpty { text += "\n\nALIASES: " + aliases.joined(separator: ", ") }
        if !discussion.isEmpty { text += "\n\n" + discussion }
        return text
    }

    /// `help`: every command with its abstract.
    static var overview: String {
        let width = all.map { $0.summary.count }.max()!
        let lines = all.map { doc in
            "  " + doc.summary + String(repeating: " ", count: width - doc.summary.count + 2) + doc.abstract
                + (doc.aliases.isEmpty ? "" : " Alias: " + doc.aliases.joined(separator: ", ") + ".")
        }
        return """
            COMMANDS:
            \(lines.joined(separator: "\n"))

              Commands are separated by new lines or ';'; a line ending inside quotes or brackets
              continues on the next; '#' starts a comment. Type 'help COMMAND' for details.
            """
    }

    /// The short form shown by `help`.
    var summary: String {
        switch name {
        case "help": "help [COMMAND]"
        case "schema": "schema [TYPE]"
        case "define": "define TYPE {…}"
        case "create": "create TYPE {json}"
        case "get": "get TYPE KEY"
        case "query": "query TYPE …"
        case "count": "count TYPE …"
        case "update": "update TYPE …"
        case "delete": "delete TYPE …"
        case "watch": "watch NAME = QUERY"
        case "unwatch": "unwatch NAME"
        case "import": "import [TYPE] FILE"
        case "export": "export [TYPE] FILE"
        case "mode": "mode [MODE]"
        default: name
        }
    }

    static let all: [CommandDoc] = [
        CommandDoc(
            name: "help", aliases: ["?"], usage: "help [COMMAND]",
            abstract: "Show the commands, or the help of one command."),
        CommandDoc(
            name: "types", aliases: ["ls"], usage: "types", abstract: "List the object types and their counts."),
        CommandDoc(
            name: "schema", usage: "schema [TYPE]", abstract: "Show the schema of one or every type.",
            discussion:
                "Properties read 'name: Type' with '?' for optional, '[Type]' for lists, '{Type}' for sets,\n'[String: Type]' for maps, '<- Type.property' for inverse links, and 'primary', 'indexed', 'fulltext', 'cascade' or 'deny' after the type."
        ),
        CommandDoc(
            name: "define", usage: "define [embedded] TYPE { NAME: TYPE [primary|indexed|fulltext|cascade|deny], ... }",
            abstract: "Add an object type, or add properties to one.",
            discussion: """
                Types: Bool, Int, Int8, Int16, Int32, Int64, Float, Double, String, Date, Data, UUID,
                Decimal, ObjectID, AnyValue, or an object type; 'Type?' is optional, '[Type]' (or List<Type>) a list,
                '{Type}' (or MutableSet<Type>) a set, '[String: Type]' a map (a JSON object in create and update),
                '<- Type.property' the objects linking here. Existing objects get default values for new properties.
                An AnyValue holds null, a bool, a number, a string, or a kind JSON lacks as an object of one member:
                {"decimal": "9.99"}, {"date": "2024-05-01T10:00:00Z"}, {"uuid": …}, {"objectID": …}, {"data": …}, {"float": 1.5};
                or a list (a JSON array) or a dictionary (any other JSON object, or {"dictionary": {…}}, as it prints) of such values.

                A realm's schema is fixed when it opens, so define raises the schema version and moves
                every object to the extended schema: a file realm is closed and opened again with it
                (the file's migration, written before define returns), a realm in memory is copied into
                a new one. It needs no open transaction, and a failure (a bad schema, the file taken by
                another process in between) changes nothing.

                Example: define Toy { id: Int primary, name: String, dog: Dog? }
                """),
        CommandDoc(
            name: "create", aliases: ["insert"], usage: "create TYPE {JSON}",
            abstract: "Create an object from JSON.",
            discussion: """
                Links are given by the target's primary key ({"owner": 7, "dogs": [1, 2]}), embedded
                objects as nested JSON objects, dates as ISO 8601 strings, data as base64, NaN and
                the infinities of Float and Double as "NaN", "Infinity" and "-Infinity".
                """),
        CommandDoc(
            name: "get", usage: "get TYPE KEY", abstract: "Show one object by primary key.",
            discussion:
                "KEY is a number, a quoted string, a word or an object id (24 hex digits or oid(…));\n'#ROW' names an object of a type without a primary key. The objects linking to it are\nshown too."
        ),
        CommandDoc(
            name: "query", aliases: ["find"],
            usage:
                "query TYPE [where PREDICATE] [sort by KEYPATH [asc|desc] [natural|nocase|binary], ...] "
                + "[section by KEYPATH] [limit N]",
            abstract: "List the objects of a type, filtered, sorted, grouped into sections and limited.",
            discussion: """
                PREDICATE is in the query language: age > 3 AND name BEGINSWITH[c] 'r',
                owner.name == "Ann", ANY toys.name CONTAINS "ball", dogs.@count > 1.
                Strings sort for people by default (natural: case and accents ignored, digits by
                value, "file2" before "file10"); nocase ignores case only; binary is code point
                order ("Zoe" before "adam").
                section by groups the objects by the value of a to-one key path, sections in the
                order of their first object (sort by the same key path for sections in order).
                Example: query Dog where age >= 3 sort by owner.name, age desc limit 5
                Example: query Dog sort by age section by owner.name
                """),
        CommandDoc(
            name: "count", usage: "count TYPE [where PREDICATE]", abstract: "Count the objects of a type."),
        CommandDoc(
            name: "update",
            usage: "update TYPE KEY {JSON} | update TYPE where PREDICATE set PROPERTY = VALUE, ...",
            abstract: "Change one object, or every object matching a predicate.",
            discussion: "VALUE is JSON (a number, \"text\", true, null, [1, 2]) or a 'single-quoted' string."),
        CommandDoc(
            name: "delete", aliases: ["rm"], usage: "delete TYPE KEY | delete TYPE where PREDICATE",
            abstract: "Delete one object, or every object matching a predicate.",
            discussion: "Delete rules apply: cascade deletes linked objects too, deny refuses and changes nothing."),
        CommandDoc(
            name: "begin", usage: "begin",
            abstract: "Open a transaction spanning several commands.",
            discussion:
                "Without one, every command is its own transaction. A failed command inside a transaction\nchanges nothing and leaves the transaction open."
        ),
        CommandDoc(name: "commit", usage: "commit", abstract: "Commit the open transaction."),
        CommandDoc(
            name: "rollback", aliases: ["abort"], usage: "rollback",
            abstract: "Discard the open transaction's changes."),
        CommandDoc(
            name: "watch", usage: "watch NAME = TYPE [where PREDICATE] [sort by ...] [limit N]",
            abstract: "Print a query's changes as they happen, until 'unwatch'.",
            discussion:
                "Each change set lists the deleted rows (old indices), then the inserted, modified and\nmoved rows (new indices): at most 20 rows ('watches rows N'), then '… and N more'. A command's changes\nare printed after its output; on a file, the commits of other processes (another shell,\nan app) are printed as they arrive: at a terminal above the line being typed, which is\nthen drawn again as it was; otherwise before the next command's output."
        ),
        CommandDoc(name: "unwatch", usage: "unwatch NAME", abstract: "Stop a watch."),
        CommandDoc(
            name: "watches", usage: "watches [rows N]",
            abstract: "List the watches, or set how many rows a change set prints (default 20).",
            discussion:
                "'watches rows 0' prints the counts only; past the limit a change set ends with\n'… and N more'."
        ),
        CommandDoc(
            name: "import", usage: "import [TYPE] FILE",
            abstract: "Create objects from a JSON file, in one transaction.",
            discussion: """
                With TYPE the file holds a JSON array of objects of that type; without, an object
                whose keys are type names and whose values are such arrays (what 'export FILE' writes).
                Links between the imported objects are set after all of them exist.
                """),
        CommandDoc(
            name: "export", usage: "export [TYPE] FILE",
            abstract: "Write the objects of a type, or of every type, to a JSON file."),
        CommandDoc(
            name: "save", usage: "save", abstract: "Fold the file's journal into its snapshot.",
            discussion: """
                A file realm holds its file while the shell runs: every command's changes are appended
                to the file's journal (FILE.journal) and synced before the command returns, so they
                are kept even if the shell is killed. save writes them into the snapshot file and
                empties the journal, as quitting does.
                """),
        CommandDoc(
            name: "stats", usage: "stats", abstract: "Show objects per type, version and storage."),
        CommandDoc(
            name: "mode", usage: "mode [table|vertical|json|csv]",
            abstract: "Set how results are printed (without a mode: show it).",
            discussion: """
                table: aligned columns, control characters escaped, values cut with … to fit the
                terminal (get, vertical, json and csv show them in full); vertical: one block of
                'name | value' lines per object; json: one JSON document per result (NaN and the
                infinities as the strings "NaN", "Infinity" and "-Infinity"); csv: a header line and
                one line per object. 'liveobj --mode MODE' starts in a mode.
                """),
        CommandDoc(name: "quit", aliases: ["exit"], usage: "quit", abstract: "Leave the shell."),
    ]
}
