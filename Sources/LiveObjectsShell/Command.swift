import LiveObjects
import LiveObjectsJSON

/// A predicate as typed, with where it starts in its command line (for caret diagnostics).
package struct PredicateText: Hashable, Sendable {
    package var text: String
    /// The UTF-8 offset of the predicate in the command line.
    package var offset: Int

    package init(text: String, offset: Int) {
        self.text = text
        self.offset = offset
    }
}

/// What a query asks for: a type, an optional predicate, sort fields, the key path whose value
/// groups the objects into sections (`query` only), and a limit.
package struct QueryRequest: Hashable, Sendable {
    package var type: String
    package var predicate: PredicateText?
    package var sorts: [SortField] = []
    package var section: String?
    package var limit: Int?

    package init(type: String, predicate: PredicateText? = nil, sorts: [SortField] = [], limit: Int? = nil) {
        self.type = type
        self.predicate = predicate
        self.sorts = sorts
        self.limit = limit
    }

    /// The request as text, for `watches`.
    var text: String {
        var s = type
        if let predicate { s += " where " + predicate.text }
        if !sorts.isEmpty {
            s +=
                " sort by "
                + sorts.map { sort in
                    let mode = CommandParser.sortModes.first { $0.value == sort.comparison && $0.value != .natural }
                    return sort.keyPath + (sort.ascending ? "" : " desc") + (mode.map { " " + $0.key } ?? "")
                }.joined(separator: ", ")
        }
        if let section { s += " section by " + section }
        if let limit { s += " limit \(limit)" }
        return s
    }
}

/// How a command names one object: by primary key, or by object key (`#3`) for types without
/// one.
package enum ObjectReference: Hashable, Sendable {
    case primaryKey(JSONValue)
    case objectKey(ObjectKey)
}

/// `PROP = VALUE` in `update … set`.
package struct Assignment: Hashable, Sendable {
    package var property: String
    package var value: JSONValue

    package init(property: String, value: JSONValue) {
        self.property = property
        self.value = value
    }
}

/// A `define` command: a type (new or existing) and the properties to add.
package struct TypeDefinition: Hashable, Sendable {
    package var name: String
    package var isEmbedded: Bool
    package var properties: [Property]
}

/// A parsed shell command.
package enum Command: Hashable, Sendable {
    case help(String?)
    case types
    case schema(String?)
    case define(TypeDefinition)
    case create(type: String, values: JSONValue)
    case get(type: String, key: ObjectReference)
    case query(QueryRequest)
    case count(type: String, predicate: PredicateText?)
    case updateObject(type: String, key: ObjectReference, values: JSONValue)
    case updateWhere(type: String, predicate: PredicateText, assignments: [Assignment])
    case deleteObject(type: String, key: ObjectReference)
    case deleteWhere(type: String, predicate: PredicateText)
    case begin
    case commit
    case rollback
    case watch(name: String, query: QueryRequest)
    case unwatch(String)
    /// `watches [rows N]`: lists the watches, or sets how many rows a change set prints.
    case watches(rows: Int?)
    case importFile(type: String?, path: String)
    case export(type: String?, path: String)
    case save
    case stats
    /// `mode [table|vertical|json|csv]`: sets (or shows) the output mode.
    case mode(OutputMode?)
    case quit
}

/// A command that failed: the message for `Error: …`, and optionally a line with a caret under
/// the problem.
package struct ShellError: Error, Sendable, Equatable {
    package var message: String
    /// The text to show with a caret, and the UTF-8 offset of the caret in it.
    var caret: Caret?

    package struct Caret: Sendable, Equatable {
        package var line: String
        package var offset: Int
    }

    package init(_ message: String, caret: Caret? = nil) {
        self.message = message
        self.caret = caret
    }

    /// The message and, when there is a location, the line with the caret under the problem.
    package var text: String {
        var s = "Error: " + message
        if let caret {
            s += "\n" + QueryErrorLocation(text: caret.line, utf8Offset: caret.offset).caretDiagnostic
        }
        return s
    }
}

// MARK: - Parsing

/// Parses command lines into ``Command`` values.
///
/// The line is read left to right with a cursor: words, quoted strings (`"…"` with JSON
/// escapes, or `'…'`), JSON values with nested braces and brackets, and predicates, which run to
/// the next top-level clause keyword (`sort by`, `limit`, `set`) outside quotes and brackets.
package struct CommandParser {
    let line: String
    let bytes: [UInt8]
    var position = 0

    /// Parses one command line. Returns nil for a blank line or a `#` comment.
    package static func parse(_ line: String) throws(ShellError) -> Command? {
        var parser = CommandParser(line: line)
        return try parser.command()
    }

    init(line: String) {
        self.line = line
        self.bytes = Array(line.utf8)
    }

    /// Splits input into commands at newlines and at `;` outside quotes and brackets; a line
    /// ending inside quotes or brackets continues on the next (see ``CommandSplitter``).
    package static func split(_ text: String) -> [String] {
        CommandSplitter.split(text).map(\.text)
    }

    // MARK: Errors

    func usage(_ name: String) -> ShellError {
        let doc = CommandDoc.named(name)
        return ShellError("usage: \(doc?.usage ?? name)")
    }

    func error(_ message: String, at offset: Int? = nil) -> ShellError {
        ShellError(message, caret: .init(line: line, offset: offset ?? position))
    }

    // MARK: Cursor

    var atEnd: Bool {
        var p = position
        while p < bytes.count, isSpace(bytes[p]) { p += 1 }
        return p == bytes.count
    }

    func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }

    static let delimiters: Set<UInt8> = Set("{}[](),=:\"';".utf8)

    mutating func skipSpace() {
        while position < bytes.count, isSpace(bytes[position]) { position += 1 }
    }

    /// The next word (up to white space or a delimiter), or nil.
    mutating func word() -> String? {
        skipSpace()
        let start = position
        while position < bytes.count, !isSpace(bytes[position]), !Self.delimiters.contains(bytes[position]) {
            position += 1
        }
        return start == position ? nil : String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// The next word if it equals `keyword` (case-insensitive); otherwise the cursor stays.
    mutating func keyword(_ keyword: String) -> Bool {
        let saved = position
        if let w = word(), w.lowercased() == keyword { return true }
        position = saved
        return false
    }

    mutating func expect(_ byte: Character, for command: String) throws(ShellError) {
        skipSpace()
        guard position < bytes.count, bytes[position] == byte.asciiValue! else { throw usage(command) }
        position += 1
    }

    mutating func requireEnd(_ command: String) throws(ShellError) {
        guard atEnd else {
            skipSpace()
            throw ShellError(
                "unexpected '\(String(decoding: bytes[position...], as: UTF8.self))'; usage: \(CommandDoc.named(command)?.usage ?? command)",
                caret: .init(line: line, offset: position))
        }
    }

    /// A JSON value (object, array, string, number, literal), or a single-quoted string.
    mutating func json() throws(ShellError) -> JSONValue {
        skipSpace()
        guard position < bytes.count else { throw error("expected a JSON value") }
        if bytes[position] == UInt8(ascii: "'") { return .string(try singleQuoted()) }
        do {
            let (value, end) = try JSONValue.parsePrefix(of: bytes, at: position)
            position = end
            return value
        } catch {
            throw self.error("invalid JSON: \(error.message)", at: error.offset)
        }
    }

    mutating func singleQuoted() throws(ShellError) -> String {
        let start = position
        position += 1
        var result: [UInt8] = []
        while position < bytes.count {
            let b = bytes[position]
            position += 1
            if b == UInt8(ascii: "'") { return String(decoding: result, as: UTF8.self) }
            if b == UInt8(ascii: "\\"), position < bytes.count {
                result.append(bytes[position])
                position += 1
            } else {
                result.append(b)
            }
        }
        throw error("unterminated string", at: start)
    }

    /// A file path: a quoted string or a word.
    mutating func path(_ command: String) throws(ShellError) -> String {
        skipSpace()
        guard position < bytes.count else { throw usage(command) }
        if bytes[position] == UInt8(ascii: "'") { return try singleQuoted() }
        if bytes[position] == UInt8(ascii: "\"") {
            guard case .string(let s) = try json() else { throw usage(command) }
            return s
        }
        let start = position
        while position < bytes.count, !isSpace(bytes[position]) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// An object reference: `#3` (object key), an object id (`oid(…)` or 24 bare hex digits, as
    /// the shell shows ids), a JSON number or string, a single-quoted string, or a bare word (a
    /// string).
    mutating func reference(_ command: String) throws(ShellError) -> ObjectReference {
        skipSpace()
        guard position < bytes.count else { throw usage(command) }
        if let hex = objectIDWord() { return .primaryKey(.string(hex)) }
        let b = bytes[position]
        if b == UInt8(ascii: "#") {
            let start = position
            position += 1
            let text = word() ?? ""
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let row = UInt32(parts[0]),
                let generation = parts.count == 2 ? UInt32(parts[1]) : 0
            else { throw error("an object key is written #ROW or #ROW.GENERATION", at: start) }
            return .objectKey(ObjectKey(row: row, generation: generation))
        }
        if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") || b == UInt8(ascii: "-")
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
        {
            let value = try json()
            guard value.isInteger || value.stringValue != nil else {
                throw error("a primary key is an integer or a string")
            }
            return .primaryKey(value)
        }
        guard let w = word() else { throw usage(command) }
        return .primaryKey(.string(w))
    }

    /// The hex digits of an object id written `oid(HEX)` or as 24 bare hex digits (which would
    /// otherwise read as a number followed by a word), consumed; nil, consuming nothing, for
    /// anything else.
    private mutating func objectIDWord() -> String? {
        var end = position
        while end < bytes.count, !isSpace(bytes[end]) { end += 1 }
        var word = bytes[position..<end]
        if word.starts(with: "oid(".utf8), word.last == UInt8(ascii: ")") { word = word.dropFirst(4).dropLast() }
        guard word.count == 24, word.allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit }) else {
            return nil
        }
        position = end
        return String(decoding: word, as: UTF8.self)
    }

    /// A predicate: the text up to the next top-level clause keyword among `stops`.
    mutating func predicate(stoppingAt stops: [String]) throws(ShellError) -> PredicateText {
        skipSpace()
        let start = position
        var p = position
        var depth = 0
        var end = bytes.count
        scan: while p < bytes.count {
            let b = bytes[p]
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                p += 1
                while p < bytes.count, bytes[p] != b {
                    if bytes[p] == UInt8(ascii: "\\") { p += 1 }
                    p += 1
                }
                p += 1
                continue
            case UInt8(ascii: "("), UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            default:
                if depth <= 0, isSpace(b) {
                    // A clause keyword starts after white space at the top level.
                    var q = p
                    while q < bytes.count, isSpace(bytes[q]) { q += 1 }
                    var probe = self
                    probe.position = q
                    for stop in stops where probe.clause(stop) {
                        end = p
                        break scan
                    }
                }
            }
            p += 1
        }
        position = end
        var text = String(decoding: bytes[start..<end], as: UTF8.self)
        while text.last?.isWhitespace == true { text.removeLast() }
        guard !text.isEmpty else { throw error("expected a predicate after 'where'", at: start) }
        return PredicateText(text: text, offset: start)
    }

    /// Whether a clause begins at the cursor: `sort by`, `limit N`, `set NAME =`, or `order by`
    /// (SQL's spelling of `sort by`, refused with a suggestion).
    mutating func clause(_ stop: String) -> Bool {
        switch stop {
        case "sort": return keyword("sort") && keyword("by")
        case "order": return keyword("order") && keyword("by")
        case "section": return keyword("section") && keyword("by")
        case "limit":
            guard keyword("limit") else { return false }
            if atEnd { return true }
            guard let w = word(), Int(w) != nil else { return false }
            return atEnd || keyword("sort") || keyword("section")
        case "set":
            guard keyword("set"), word() != nil else { return false }
            skipSpace()
            return position < bytes.count && bytes[position] == UInt8(ascii: "=")
        default: return keyword(stop)
        }
    }

    // MARK: Commands

    mutating func command() throws(ShellError) -> Command? {
        skipSpace()
        if position == bytes.count || bytes[position] == UInt8(ascii: "#") { return nil }
        let nameStart = position
        guard let name = word() else { throw error("expected a command", at: nameStart) }
        guard let doc = CommandDoc.named(name) else { throw unknownCommand(name) }
        let result = try arguments(of: doc.name)
        try requireEnd(doc.name)
        return result
    }

    /// The error for a word that names no command, with the shell's own spelling of what was
    /// likely meant.
    func unknownCommand(_ name: String) -> ShellError {
        let names = CommandDoc.all.flatMap { [$0.name] + $0.aliases }
        let rest = String(decoding: bytes[position...], as: UTF8.self)
        let spelling =
            Suggestion.shellSpelling(
                of: name, arguments: rest.split(whereSeparator: \.isWhitespace).map(String.init))
            ?? Suggestion.closest(to: name, among: names)
        let suggestion = spelling.map { " did you mean '\($0)'?" } ?? ""
        return ShellError("unknown command '\(name)';\(suggestion) type 'help' for the list")
    }

    /// A type name, or the usage of `command`.
    mutating func typeName(_ command: String) throws(ShellError) -> String {
        guard let t = word() else { throw usage(command) }
        return t
    }

    /// The arguments of `command` (a command's name, not an alias), up to the end of the line.
    mutating func arguments(of command: String) throws(ShellError) -> Command {
        let result: Command
        switch command {
        case "help":
            let topic = word()
            result = .help(topic)
        case "types": result = .types
        case "schema": result = .schema(word())
        case "define": result = .define(try definition())
        case "create":
            let type = try typeName(command)
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "{") else { throw usage(command) }
            result = .create(type: type, values: try json())
        case "get":
            let type = try typeName(command)
            result = .get(type: type, key: try reference(command))
        case "query":
            result = .query(try queryRequest(command))
        case "count":
            let type = try typeName(command)
            var predicate: PredicateText?
            if keyword("where") { predicate = try self.predicate(stoppingAt: []) }
            result = .count(type: type, predicate: predicate)
        case "update":
            result = try update()
        case "delete":
            let type = try typeName(command)
            if keyword("where") {
                result = .deleteWhere(type: type, predicate: try predicate(stoppingAt: []))
            } else {
                result = .deleteObject(type: type, key: try reference(command))
            }
        case "begin": result = .begin
        case "commit": result = .commit
        case "rollback": result = .rollback
        case "watch":
            guard let name = word() else { throw usage(command) }
            try expect("=", for: command)
            _ = keyword("query")
            result = .watch(name: name, query: try queryRequest(command))
        case "unwatch":
            guard let name = word() else { throw usage(command) }
            result = .unwatch(name)
        case "watches":
            var rows: Int?
            if keyword("rows") {
                skipSpace()
                let start = position
                guard let w = word(), let n = Int(w), n >= 0 else {
                    throw error("watches rows needs a number of rows: watches rows N", at: start)
                }
                rows = n
            }
            result = .watches(rows: rows)
        case "import", "export":
            result = try transfer(command)
        case "save": result = .save
        case "stats": result = .stats
        case "mode": result = .mode(try outputMode())
        default: result = .quit
        }
        return result
    }

    /// `update TYPE KEY {JSON}` or `update TYPE where PREDICATE set PROPERTY = VALUE, ...`,
    /// after `update`.
    mutating func update() throws(ShellError) -> Command {
        let command = "update"
        let type = try typeName(command)
        guard keyword("where") else {
            let key = try reference(command)
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "{") else { throw usage(command) }
            return .updateObject(type: type, key: key, values: try json())
        }
        let predicate = try self.predicate(stoppingAt: ["set"])
        guard keyword("set") else { throw usage(command) }
        var assignments: [Assignment] = []
        repeat {
            guard let property = word() else { throw usage(command) }
            try expect("=", for: command)
            assignments.append(Assignment(property: property, value: try json()))
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ",") else { break }
            position += 1
        } while true
        return .updateWhere(type: type, predicate: predicate, assignments: assignments)
    }

    /// `import [TYPE] FILE` or `export [TYPE] FILE`, after the command's name.
    mutating func transfer(_ command: String) throws(ShellError) -> Command {
        let first = try path(command)
        let type: String?
        let file: String
        if atEnd {
            type = nil
            file = first
        } else {
            type = first
            file = try path(command)
        }
        return command == "import" ? .importFile(type: type, path: file) : .export(type: type, path: file)
    }

    /// The mode of `mode [MODE]`, or nil without one.
    mutating func outputMode() throws(ShellError) -> OutputMode? {
        let start = position
        guard let w = word() else { return nil }
        guard let mode = OutputMode(rawValue: w.lowercased()) else {
            throw error("unknown output mode '\(w)'; the modes are table, vertical, json and csv", at: start)
        }
        return mode
    }

    mutating func queryRequest(_ command: String) throws(ShellError) -> QueryRequest {
        guard let type = word() else { throw usage(command) }
        var request = QueryRequest(type: type)
        if keyword("where") { request.predicate = try predicate(stoppingAt: ["sort", "section", "limit", "order"]) }
        skipSpace()
        var probe = self
        if probe.clause("order") {
            // SQL's spelling.
            throw error("the sort clause reads 'sort by KEYPATH [asc|desc]'; did you mean 'sort by'?")
        }
        if keyword("sort") {
            guard keyword("by") else { throw error("the sort clause reads 'sort by KEYPATH [asc|desc]'") }
            repeat {
                let start = position
                guard let path = word() else {
                    throw error("the sort clause needs a key path: sort by KEYPATH [asc|desc]", at: start)
                }
                // Direction and string comparison, in either order; strings sort for people
                // (natural) unless told otherwise.
                var ascending = true
                var comparison = StringComparison.natural
                while true {
                    if keyword("desc") {
                        ascending = false
                    } else if keyword("asc") {
                        ascending = true
                    } else if let mode = Self.sortModes.first(where: { keyword($0.key) }) {
                        comparison = mode.value
                    } else {
                        break
                    }
                }
                request.sorts.append(SortField(path, ascending: ascending, comparison: comparison))
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ",") else { break }
                position += 1
            } while true
        }
        if keyword("section") {
            let start = position
            guard keyword("by"), let path = word() else {
                throw error("the section clause needs a key path: section by KEYPATH", at: start)
            }
            guard command == "query" || command == "find" else {
                throw error("only query groups objects into sections", at: start)
            }
            request.section = path
        }
        if keyword("limit") {
            let start = position
            guard let w = word(), let n = Int(w), n >= 0 else {
                throw error("the limit clause needs a number of objects: limit N", at: start)
            }
            request.limit = n
        }
        return request
    }

    /// `[embedded] TYPE { name: Type[?] [primary] [indexed] [fulltext] [cascade|deny], list: [Type],
    /// back: <- Type.property, … }`
    mutating func definition() throws(ShellError) -> TypeDefinition {
        let isEmbedded = keyword("embedded")
        guard let name = word() else { throw usage("define") }
        try expect("{", for: "define")
        var properties: [Property] = []
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return TypeDefinition(name: name, isEmbedded: isEmbedded, properties: [])
        }
        while true {
            let start = position
            guard let propertyName = word() else { throw error("expected a property name", at: start) }
            try expect(":", for: "define")
            properties.append(try propertyType(propertyName))
            skipSpace()
            guard position < bytes.count else { throw error("expected ',' or '}'") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                break
            }
            throw error("expected ',' or '}'")
        }
        return TypeDefinition(name: name, isEmbedded: isEmbedded, properties: properties)
    }

    /// The string comparisons of `sort by`.
    static let sortModes: KeyValuePairs<String, StringComparison> = [
        "natural": .natural, "nocase": .caseInsensitive, "binary": .exact,
    ]

    static let primitiveTypes: [String: PropertyType] = [
        "Bool": .bool, "Int": .int, "Int8": .int8, "Int16": .int16, "Int32": .int32, "Int64": .int64,
        "Float": .float, "Double": .double, "String": .string, "Date": .date, "Data": .data, "UUID": .uuid,
        "Decimal": .decimal, "ObjectID": .objectID, "AnyValue": .mixed,
        // Spellings of the Realm world.
        "decimal": .decimal, "objectid": .objectID, "ObjectId": .objectID, "Decimal128": .decimal,
        "Any": .mixed, "AnyRealmValue": .mixed, "mixed": .mixed,
    ]

    /// The collection and element of a Swift spelling of a list or set (`List<Dog>`,
    /// `MutableSet<String?>`), or nil.
    static func swiftCollection(_ word: String) -> (collection: String, element: String)? {
        for collection in ["List", "MutableSet", "Set", "Array"] where word.hasPrefix(collection + "<") {
            guard word.hasSuffix(">"), word.count > collection.count + 2 else { return nil }
            return (collection, String(word.dropFirst(collection.count + 1).dropLast()))
        }
        return nil
    }

    mutating func propertyType(_ name: String) throws(ShellError) -> Property {
        skipSpace()
        let start = position
        // <- Type.property
        if position + 1 < bytes.count, bytes[position] == UInt8(ascii: "<"), bytes[position + 1] == UInt8(ascii: "-") {
            position += 2
            guard let path = word() else { throw error("expected Type.property after '<-'") }
            let parts = path.split(separator: ".")
            guard parts.count == 2 else { throw error("expected Type.property after '<-'", at: start) }
            return .linkingObjects(name, from: String(parts[0]), property: String(parts[1]))
        }
        var isList = false
        var isSet = false
        var isSwiftSpelling = false
        if position < bytes.count, bytes[position] == UInt8(ascii: "[") || bytes[position] == UInt8(ascii: "{") {
            isSet = bytes[position] == UInt8(ascii: "{")
            position += 1
            isList = true
        }
        guard var typeWord = word() else { throw error("expected a type", at: start) }
        if !isList, let (collection, element) = Self.swiftCollection(typeWord) {
            // Swift's spellings: `List<T>`, `MutableSet<T>`, `Set<T>`, `Array<T>`.
            isList = true
            isSwiftSpelling = true
            isSet = collection == "MutableSet" || collection == "Set"
            typeWord = element
        } else if !isList, typeWord.hasPrefix("Map<") || typeWord.hasPrefix("Dictionary<") {
            throw error("write a map as '[String: Type]' (a Map<String, Type> in Swift)", at: start)
        }
        // `[String: T]`: a map from strings to T.
        var isMap = false
        skipSpace()
        if isList, !isSet, position < bytes.count, bytes[position] == UInt8(ascii: ":") {
            guard typeWord == "String" else { throw error("a map's keys are String", at: start) }
            position += 1
            guard let valueWord = word() else { throw error("expected the type of a map's values") }
            typeWord = valueWord
            isMap = true
        }
        var isOptional = false
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "?") {
            isOptional = true
            position += 1
        }
        var typeName = typeWord
        if typeName.hasSuffix("?") {
            typeName.removeLast()
            isOptional = true
        }
        if isList && !isSwiftSpelling {
            skipSpace()
            let close = isSet ? UInt8(ascii: "}") : UInt8(ascii: "]")
            guard position < bytes.count, bytes[position] == close else {
                throw error(isSet ? "expected '}'" : "expected ']'")
            }
            position += 1
        }
        // `int`, `string`…: Swift's names are capitalized; a link to a type named so is unlikely.
        if Self.primitiveTypes[typeName] == nil,
            let spelled = Self.primitiveTypes.keys.filter({ $0.lowercased() == typeName.lowercased() }).min()
        {
            throw error("unknown type '\(typeName)'; property types are spelled as in Swift: '\(spelled)'", at: start)
        }
        var property: Property
        if let primitive = Self.primitiveTypes[typeName] {
            property = Property(name: name, type: primitive, isOptional: isOptional, isList: isList)
        } else {
            property = Property(
                name: name, type: .object, isOptional: !isList && isOptional, isList: isList, objectType: typeName)
            if isList && isOptional {
                property.isOptional = true  // refused by schema validation, with its message
            }
        }
        property.isSet = isSet
        property.isMap = isMap
        // Modifiers.
        while true {
            let saved = position
            guard let modifier = word() else { break }
            switch modifier.lowercased() {
            case "primary": property.isPrimaryKey = true
            case "indexed": property.isIndexed = true
            case "fulltext": property.isFullTextIndexed = true
            case "cascade": property.deleteRule = .cascade
            case "deny": property.deleteRule = .deny
            case "nullify": property.deleteRule = .nullify
            default:
                throw error(
                    "unknown property modifier '\(modifier)' (primary, indexed, fulltext, cascade, deny)", at: saved)
            }
        }
        return property
    }
}
