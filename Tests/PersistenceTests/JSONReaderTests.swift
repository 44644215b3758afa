import LiveObjects
import LiveObjectsTestSupport
import Testing

@testable import LiveObjectsJSON
@testable import Persistence

@Suite struct JSONReaderTests {
    // MARK: Reading

    @Test func readsEveryKindOfValue() throws {
        let value = try parse(
            #" {"a": [1, -2.5e3, true, false, null, "x"], "b": {}, "c": [], "": {"d": "\u00e9\uD83D\uDE00\n"}} "#)
        #expect(
            value == [
                "a": [1, .number(JSONNumber(text: "-2.5e3")!), true, false, nil, "x"], "b": [:], "c": [],
                "": ["d": "é😀\n"],
            ])
        #expect(value["a"]?[1]?.doubleValue == -2500)
        #expect(value["a"]?[5]?.stringValue == "x" && value["a"]?[6] == nil && value["zz"] == nil)
        #expect(try parse("0") == 0 && parse("\"\"") == "" && parse("[[[]]]") == [[[]]])
    }

    @Test func objectMembersKeepDocumentOrderAndDuplicates() throws {
        let value = try parse(#"{"z": 1, "a": 2, "m": 3, "a": 4}"#)
        #expect(value.objectValue?.map(\.key) == ["z", "a", "m", "a"])
        #expect(value["a"] == 2)
        #expect(value.description == #"{"z":1,"a":2,"m":3,"a":4}"#)
    }

    @Test func decodesEveryEscape() throws {
        let text =
            #""\" \\ \/ \b \f \n \r \t \u0000 \u001F \u00E9 \u00e9 \u0416 \u20AC \uFFFF \uD800\uDC00 \uDBFF\uDFFF \uD83D\uDE00""#
        let expected = "\" \\ / \u{8} \u{C} \n \r \t \u{0} \u{1F} é é Ж € \u{FFFF} \u{10000} \u{10FFFF} 😀"
        #expect(try parse(text) == .string(expected))
    }

    @Test func stringsRoundTrip() throws {
        var strings = [
            "", "plain", "Жучка и кошка", "🐕🐈‍⬛👨‍👩‍👧", "e\u{301}", "\u{0}", "\u{10FFFF}",
            "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}",
            "quote \" backslash \\ slash /", String(repeating: "long ", count: 1000),
        ]
        strings.append(String((0..<128).map { Character(Unicode.Scalar(UInt8($0))) }))
        var random = SeededRandomNumberGenerator(seed: 5)
        for _ in 0..<500 {
            let scalars = (0..<Int(random.next() % 40)).compactMap { _ -> Unicode.Scalar? in
                switch random.next() % 4 {
                case 0: Unicode.Scalar(UInt32(random.next() % 0x80))
                case 1: Unicode.Scalar(UInt32(random.next() % 0x800))
                case 2: Unicode.Scalar(UInt32(random.next() % 0x10000))
                default: Unicode.Scalar(UInt32(random.next() % 0x110000))
                }
            }
            strings.append(String(String.UnicodeScalarView(scalars)))
        }
        var writer = JSONWriter()
        writer.beginObject()
        for (i, string) in strings.enumerated() {
            writer.key(string + String(i))
            writer.string(string)
        }
        writer.endObject()
        let value = try parse(writer.takeBytes())
        let members = try #require(value.objectValue)
        #expect(members.count == strings.count)
        for (i, member) in members.enumerated() {
            #expect(member.key == strings[i] + String(i))
            #expect(member.value == .string(strings[i]))
        }
    }

    @Test func cursorReadsRecordsWithoutATree() throws {
        let text = #"""
            {"version": 1, "dogs": [
              {"id": 1, "name": "Rex", "age": 3, "score": 0.5, "owner": null},
              {"owner": 7, "score": -1e-3, "name": "Фидо", "id": 2, "age": 9223372036854775807, "extra": {"x": [1, {"y": []}]}}
            ]}
            """#
        struct Dog: Equatable {
            var id: Int64 = 0, name = "", age: Int64 = 0, score = 0.0, owner: Int64?
        }
        let dogs = try read(text) { (reader) throws(LiveObjectsError) -> [Dog] in
            var dogs: [Dog] = []
            try reader.readObject { (reader, key) throws(LiveObjectsError) in
                switch key {
                case "dogs":
                    try reader.readArray { (reader) throws(LiveObjectsError) in
                        var dog = Dog()
                        try reader.beginObject()
                        while let key = try reader.nextKey() {
                            switch key {
                            case "id": dog.id = try reader.readInt64()
                            case "name": dog.name = try reader.readString()
                            case "age": dog.age = try reader.readInt64()
                            case "score": dog.score = try reader.readDouble()
                            case "owner": dog.owner = try reader.readNull() ? nil : try reader.readInt64()
                            default: try reader.skipValue()
                            }
                        }
                        dogs.append(dog)
                    }
                default:
                    #expect(try reader.peekKind() == .number)
                    try reader.skipValue()
                }
            }
            return dogs
        }
        #expect(
            dogs == [
                Dog(id: 1, name: "Rex", age: 3, score: 0.5, owner: nil),
                Dog(id: 2, name: "Фидо", age: .max, score: -0.001, owner: 7),
            ])
    }

    @Test func peekingAndMixingTreeAndCursor() throws {
        let kinds = try read(#"[null, true, 1, "s", [], {}]"#) {
            (reader) throws(LiveObjectsError) -> [JSONReader.Kind] in
            var kinds: [JSONReader.Kind] = []
            try reader.readArray { (reader) throws(LiveObjectsError) in
                kinds.append(try reader.peekKind())
                _ = try reader.readValue()
            }
            return kinds
        }
        #expect(kinds == [.null, .bool, .number, .string, .array, .object])
    }

    @Test func typeMismatchesNameWhatWasFound() {
        expectFailure(at: 0, "expected an integer, found a string") { () throws(LiveObjectsError) in
            _ = try read(#""1""#) { (r) throws(LiveObjectsError) in try r.readInt64() }
        }
        expectFailure(at: 1, "expected a string, found null") { () throws(LiveObjectsError) in
            _ = try read(" null") { (r) throws(LiveObjectsError) in try r.readString() }
        }
        expectFailure(at: 0, "expected a boolean, found a number") { () throws(LiveObjectsError) in
            _ = try read("1") { (r) throws(LiveObjectsError) in try r.readBool() }
        }
        expectFailure(at: 0, "expected an object, found an array") { () throws(LiveObjectsError) in
            try read("[]") { (r) throws(LiveObjectsError) in try r.beginObject() }
        }
        expectFailure(at: 0, "expected an integer, found the number 1.5") { () throws(LiveObjectsError) in
            _ = try read("1.5") { (r) throws(LiveObjectsError) in try r.readInt64() }
        }
        expectFailure(at: 0, "expected an integer, found the number 1e3") { () throws(LiveObjectsError) in
            _ = try read("1e3") { (r) throws(LiveObjectsError) in try r.readInt64() }
        }
    }

    @Test func misuseIsAnInvalidOperation() {
        expectFailure(.invalidOperation, at: 1, "nextKey()") { () throws(LiveObjectsError) in
            try read("[1]") { (r) throws(LiveObjectsError) in
                try r.beginArray()
                _ = try r.nextKey()
            }
        }
        expectFailure(.invalidOperation, at: 1, "a key or the end of a container is due") {
            () throws(LiveObjectsError) in
            try read(#"{"a": 1}"#) { (r) throws(LiveObjectsError) in
                try r.beginObject()
                _ = try r.readInt64()
            }
        }
        expectFailure(.invalidOperation, at: 1, "after the top-level value") { () throws(LiveObjectsError) in
            try read("1") { (r) throws(LiveObjectsError) in
                _ = try r.readInt64()
                _ = try r.readInt64()
            }
        }
    }

    // MARK: Strictness

    @Test func rejectsTrailingGarbage() {
        expectRejected(#"{"a": 1} x"#, at: 9, "expected the end of the input after the top-level value, found 'x'")
        expectRejected("[1]]", at: 3, "found ']'")
        expectRejected("1 2", at: 2)
        expectRejected("nullnull", at: 4)
        expectRejected(bytes: [0x31, 0x20, 0x00], at: 2, "found byte 0x00")
    }

    @Test func rejectsBrokenStructure() {
        expectRejected("", at: 0, "expected a value, found end of input")
        expectRejected("   ", at: 3, "expected a value, found end of input")
        expectRejected("[1,]", at: 3, "expected a value, found ']'")
        expectRejected(#"{"a":1,}"#, at: 7, "expected a string key after ','")
        expectRejected("{,}", at: 1, "expected a string key or '}'")
        expectRejected(#"{"a" 1}"#, at: 5, "expected ':' after an object key, found '1'")
        expectRejected(#"{"a":}"#, at: 5, "expected a value, found '}'")
        expectRejected("{1:2}", at: 1, "expected a string key or '}'")
        expectRejected("[1 2]", at: 3, "expected ',' or ']' after an array element, found '2'")
        expectRejected(#"{"a":1 "b":2}"#, at: 7, "expected ',' or '}' after an object member")
        expectRejected(#"{"a":1"#, at: 6, "found end of input")
        expectRejected("[", at: 1, "expected a value, found end of input")
        expectRejected("[1,", at: 3)
        expectRejected("]", at: 0, "expected a value, found ']'")
        expectRejected("tru", at: 3, "expected 'true', found end of input")
        expectRejected("trUe", at: 2, "expected 'true', found 'U'")
        expectRejected("nul", at: 3, "expected 'null'")
        expectRejected("fals", at: 4, "expected 'false'")
        expectRejected("// comment\n1", at: 0)
        expectRejected("'a'", at: 0, "expected a value, found '''")
        expectRejected("NaN", at: 0, "expected a value, found 'N'")
        expectRejected("Infinity", at: 0)
        expectRejected("-Infinity", at: 1, "expected a digit after '-'")
        expectRejected("\u{FEFF}1", at: 0, "found byte 0xEF")
    }

    @Test func rejectsMalformedNumbers() {
        expectRejected("01", at: 1, "no leading zeros")
        expectRejected("-01", at: 2, "no leading zeros")
        expectRejected("[00]", at: 2, "no leading zeros")
        expectRejected("0.1.2", at: 3)
        expectRejected("+1", at: 0, "expected a value, found '+'")
        expectRejected(".5", at: 0)
        expectRejected("1.", at: 2, "expected a digit after the decimal point, found end of input")
        expectRejected("1.e5", at: 2, "expected a digit after the decimal point, found 'e'")
        expectRejected("1e", at: 2, "expected a digit in the exponent")
        expectRejected("1e+", at: 3, "expected a digit in the exponent")
        expectRejected("1E-x", at: 3)
        expectRejected("-", at: 1, "expected a digit after '-'")
        expectRejected("--1", at: 1, "expected a digit after '-'")
        expectRejected("0x10", at: 1)
        expectRejected("1_000", at: 1)
        expectRejected("[1e5.5]", at: 4)
        // Too large for the type asked for.
        expectFailure(at: 0, "out of range for Double") { () throws(LiveObjectsError) in
            _ = try read("1e309") { (r) throws(LiveObjectsError) in try r.readDouble() }
        }
        expectFailure(at: 1, "out of range for Float") { () throws(LiveObjectsError) in
            _ = try read(" -3.5e38") { (r) throws(LiveObjectsError) in try r.readFloat() }
        }
        // Tiny magnitudes round to zero, keeping the sign.
        let tiny = try? read("-1e-400") { (r) throws(LiveObjectsError) in try r.readDouble() }
        #expect(tiny == 0 && tiny?.sign == .minus)
    }

    @Test func rejectsIntegersOutsideInt64() throws {
        let extremes = try read("[9223372036854775807, -9223372036854775808]") {
            (r) throws(LiveObjectsError) -> [Int64] in
            var values: [Int64] = []
            try r.readArray { (r) throws(LiveObjectsError) in values.append(try r.readInt64()) }
            return values
        }
        #expect(extremes == [.max, .min])
        for (text, offset) in [
            ("9223372036854775808", 0), ("-9223372036854775809", 0), ("[1, 99999999999999999999]", 4),
            ("18446744073709551616", 0), ("123456789012345678901234567890", 0),
        ] {
            expectFailure(at: offset, "out of range for Int64") { () throws(LiveObjectsError) in
                try read(text) { (r) throws(LiveObjectsError) in
                    if try r.peekKind() == .array {
                        try r.readArray { (r) throws(LiveObjectsError) in _ = try r.readInt64() }
                    } else {
                        _ = try r.readInt64()
                    }
                }
            }
        }
    }

    @Test func rejectsBrokenStrings() {
        expectRejected(#""abc"#, at: 4, "expected '\"' to close the string that starts at byte 0, found end of input")
        expectRejected(#"{"a": "b"#, at: 8, "string that starts at byte 6")
        expectRejected(#"["\"]"#, at: 5, "to close the string")
        expectRejected("\"a\nb\"", at: 2, "control character 0x0A must be escaped")
        expectRejected("\"\t\"", at: 1, "control character 0x09")
        expectRejected(bytes: [0x22, 0x00, 0x22], at: 1, "control character 0x00")
        expectRejected(#""\x""#, at: 2, "expected a valid escape")
        expectRejected(#""\'""#, at: 2, "expected a valid escape")
        expectRejected(#""\U0041""#, at: 2, "expected a valid escape")
        expectRejected(#""\u12G4""#, at: 5, #"expected 4 hex digits after \u, found 'G'"#)
        expectRejected(#""\u12"#, at: 5, "expected 4 hex digits")
        expectRejected(#""abc\"#, at: 5)
        // Lone surrogates.
        expectRejected(#""\uD800""#, at: 1, #"unpaired surrogate \uD800"#)
        expectRejected(#""a\uDBFFx""#, at: 2, #"unpaired surrogate \uDBFF"#)
        expectRejected(#""\uD800\u0041""#, at: 1, "unpaired surrogate")
        expectRejected(#""\uD800\uD800""#, at: 1, "unpaired surrogate")
        expectRejected(#""\uDC00""#, at: 1, "a low surrogate without a high one")
        expectRejected(#""\uDFFF\uD800""#, at: 1, "a low surrogate without a high one")
    }

    /// The 8-bytes-at-a-time string scan must notice special bytes at every position.
    @Test func findsSpecialBytesAtEveryPositionOfAString() throws {
        let filler = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        for position in 0..<20 {
            let before = Array(filler.prefix(position))
            let after = Array(filler.prefix(20 - position))
            let quote: [UInt8] = [0x22]
            #expect(
                try parse(quote + before + Array(#"\""#.utf8) + after + quote)
                    == .string(String(decoding: before + [0x22] + after, as: UTF8.self)))
            #expect(
                try parse(quote + before + Array("é".utf8) + after + quote)
                    == .string(String(decoding: before + Array("é".utf8) + after, as: UTF8.self)))
            expectRejected(bytes: quote + before + [0x01] + after + quote, at: position + 1, "control character 0x01")
            expectRejected(bytes: quote + before + [0xFF] + after + quote, at: position + 1, "invalid UTF-8")
            expectRejected(bytes: quote + before + quote + after + quote, at: position + 2, "the end of the input")
        }
    }

    @Test func rejectsInvalidUTF8() {
        let cases: [([UInt8], Int)] = [
            ([0x22, 0xC3, 0x28, 0x22], 1),  // bad continuation
            ([0x22, 0x61, 0x80, 0x22], 2),  // lone continuation
            ([0x22, 0xC0, 0x80, 0x22], 1),  // overlong NUL
            ([0x22, 0xC1, 0xBF, 0x22], 1),  // overlong
            ([0x22, 0xE0, 0x80, 0xAF, 0x22], 1),  // overlong 3-byte
            ([0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22], 1),  // overlong 4-byte
            ([0x22, 0xED, 0xA0, 0x80, 0x22], 1),  // encoded surrogate U+D800
            ([0x22, 0xED, 0xBF, 0xBF, 0x22], 1),  // encoded surrogate U+DFFF
            ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1),  // U+110000
            ([0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], 1),
            ([0x22, 0xFF, 0x22], 1),
            ([0x22, 0x61, 0x62, 0xE2, 0x82], 3),  // cut short by the end
            ([0x22, 0xE2, 0x82, 0x22], 1),  // cut short by the quote
            ([0x22, 0x5C, 0x6E, 0xF0, 0x9F, 0x98, 0x22], 3),  // after an escape
        ]
        for (bytes, offset) in cases {
            expectRejected(bytes: bytes, at: offset, "invalid UTF-8")
            // Also as a key, and when skipped.
            expectRejected(bytes: [0x7B] + bytes + Array(#":1}"#.utf8), at: offset + 1, "invalid UTF-8")
            expectFailure(at: offset + 1, "invalid UTF-8") { () throws(LiveObjectsError) in
                try JSONReader.withReader([0x5B] + bytes + [0x5D]) { (r) throws(LiveObjectsError) in try r.skipValue() }
            }
        }
        // The longest valid sequences pass.
        #expect(
            (try? parse([0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0xEF, 0xBF, 0xBF, 0xDF, 0xBF, 0x22]))
                == .string("\u{10FFFF}\u{FFFF}\u{7FF}"))
    }

    @Test func errorsNameLineAndColumn() {
        let text = "{\n  \"a\": 1,\n  \"b\": x\n}"
        expectRejected(text, at: 19, "(line 3, column 8): expected a value, found 'x'")
        let error = liveObjectsError { () throws(LiveObjectsError) in
            _ = try JSONValue(
                parsing: Array("[1,]".utf8), options: .init(fileName: "realm.json"), errors: LiveObjectsError.self)
        }
        #expect(error?.file == "realm.json")
        #expect(
            error?.description.hasPrefix(
                "LiveObjects error corruptFile: realm.json: invalid JSON at byte 3 (line 1, column 4)") == true)
    }

    // MARK: Depth

    @Test func enforcesTheNestingLimitWithoutRecursion() throws {
        let limit = JSONReader.Options.depthCeiling
        #expect(limit == 512)
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        var value = try parse(deepest)
        var levels = 0
        while case .array(let elements) = value {
            levels += 1
            value = elements.first ?? .null
        }
        #expect(levels == limit)
        expectRejected(
            String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1), at: limit,
            "nesting deeper than 512 levels", code: .limitExceeded)
        expectRejected(String(repeating: #"{"a":"#, count: limit + 1), at: 5 * limit, code: .limitExceeded)

        // A million open brackets: the tree reader, the skipper and a lowered limit all stop.
        let hostile = [UInt8](repeating: 0x5B, count: 1_000_000)
        expectRejected(bytes: hostile, at: limit, code: .limitExceeded)
        expectFailure(.limitExceeded, at: limit) { () throws(LiveObjectsError) in
            try JSONReader.withReader(hostile) { (r) throws(LiveObjectsError) in try r.skipValue() }
        }
        expectFailure(.limitExceeded, at: 3, "deeper than 3") { () throws(LiveObjectsError) in
            _ = try JSONValue(
                parsing: Array("[[[[]]]]".utf8), options: .init(maxDepth: 3), errors: LiveObjectsError.self)
        }
        #expect(try JSONValue(parsing: Array("[[[]]]".utf8), options: .init(maxDepth: 3)) == [[[]]])
    }

    @Test func deepValuesAreWrittenWithoutRecursion() throws {
        var value: JSONValue = 1
        for i in 0..<20_000 { value = i % 2 == 0 ? [value] : ["k": value] }
        let bytes = value.jsonBytes()
        #expect(bytes.count == 20_000 / 2 * 2 + 20_000 / 2 * 6 + 1)
        // The outermost level is an object: `{"k":[` takes 6 bytes per two levels.
        expectRejected(bytes: bytes, at: 256 * 6, code: .limitExceeded)
        // Unwind iteratively, so that releasing the tree does not recurse deeply either.
        while true {
            switch value {
            case .array(let elements): value = elements[0]
            case .object(let members): value = members[0].value
            default: return
            }
        }
    }
}

@Suite struct JSONKeySetTests {
    static let keys = JSONKeySet(["id", "name", "ключ", "id", "", "a\"b"])

    /// The indices `nextKey(in:)` gives for each member of the object `text`.
    func indices(_ text: String) throws(LiveObjectsError) -> [Int] {
        try read(text) { (reader) throws(LiveObjectsError) -> [Int] in
            var found: [Int] = []
            try reader.beginObject()
            while let index = try reader.nextKey(in: Self.keys) {
                found.append(index)
                try reader.skipValue()
            }
            return found
        }
    }

    @Test func matchesKeysByTheirBytes() throws {
        #expect(try indices(#"{"id": 1, "name": 2, "ключ": 3, "": 4, "a\"b": 5}"#) == [0, 1, 2, 4, 5])
        // Any order, repeated, unknown, and keys that are prefixes or extensions of known ones.
        #expect(
            try indices(#"{"name": 1, "id": 2, "name": 3, "i": 4, "ids": 5, "Name": 6, "other": 7}"#)
                == [1, 0, 1, -1, -1, -1, -1])
        // Escaped forms match the same keys; a duplicate in the set matches its first index.
        #expect(
            try indices(#"{"\u0069d": 1, "n\u0061me": 2, "\u043A\u043B\u044E\u0447": 3, "a\u0022b": 4}"#) == [
                0, 1, 2, 5,
            ])
        // Canonically equivalent but different code points do not match (JSON compares code points).
        let decomposed = JSONKeySet(["e\u{301}"])
        let matched = try JSONReader.withReader(Array(#"{"é": 1, "e\u0301": 2}"#.utf8)) {
            (reader) throws(LiveObjectsError) -> [Int] in
            var found: [Int] = []
            try reader.beginObject()
            while let index = try reader.nextKey(in: decomposed) {
                found.append(index)
                try reader.skipValue()
            }
            return found
        }
        #expect(matched == [-1, 0])
        #expect(Self.keys.count == 6 && Self.keys.keys[2] == "ключ")
    }

    @Test func keyErrorsAreReportedLikeOtherStrings() {
        expectFailure(at: 4, "control character") { () throws(LiveObjectsError) in
            _ = try indices("{\"id\n\": 1}")
        }
        expectFailure(at: 3, "invalid UTF-8") { () throws(LiveObjectsError) in
            try JSONReader.withReader([0x7B, 0x22, 0x61, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) {
                (reader) throws(LiveObjectsError) in
                try reader.beginObject()
                _ = try reader.nextKey(in: Self.keys)
            }
        }
        expectFailure(at: 5, "to close the string") { () throws(LiveObjectsError) in
            _ = try indices(#"{"nam"#)
        }
        expectFailure(at: 6, "expected ':' after an object key") { () throws(LiveObjectsError) in
            _ = try indices(#"{"id" 1}"#)
        }
        expectFailure(at: 2, "unpaired surrogate") { () throws(LiveObjectsError) in
            _ = try indices(#"{"\uD800": 1}"#)
        }
    }

    /// The seeds of the randomized record test; `LIVEOBJECTS_JSON_SEED` replays one.
    static let seeds: [UInt64] = TestEnvironment.seed("LIVEOBJECTS_JSON_SEED").map { [$0] } ?? [1, 2, 3, 4, 5, 6]

    /// Records as the snapshot writer writes them, then with spaces, members out of order,
    /// unknown and escaped keys, strings with escapes, control characters or non-ASCII bytes,
    /// a byte changed or the text cut short: read member by member with `nextKey(in:)`,
    /// `readString()`, `readInt64()` and `readNull()` (the paths the loader inlines), they give
    /// what the tree reader gives, or both readers refuse the text (seeded; the seed and the
    /// text are in the message).
    @Test(arguments: seeds)
    func recordsReadMemberByMemberAsTheTreeReadsThem(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let names = ["$id", "id", "name", "age", "owner"]
        let keys = JSONKeySet(names)
        // String values as JSON text and what they read as (nil: refused, a raw control
        // character): plain, escaped, non-ASCII.
        let strings: [(text: String, value: String?)] = [
            ("Bamoku", "Bamoku"), ("", ""), (#"a\"b"#, "a\"b"), (#"tab\there"#, "tab\there"), ("é", "é"),
            (#"\u0041"#, "A"), ("long name past eight", "long name past eight"), (#"back\\"#, "back\\"),
            ("bell\u{7}", nil),
        ]
        // Keys as JSON text and their index in the set.
        let otherKeys: [(text: String, index: Int)] = [(#"i\u0064"#, 1), ("nam", -1), ("other", -1), ("ownerX", -1)]
        var (read, refused) = (0, 0)
        for round in 0..<300 {
            var text = "["
            // What the unchanged text holds, as ``keyed(_:_:)`` gives it; nil if refused.
            var model: [JSONValue]? = []
            for r in 0..<(1 + rng.below(4)) {
                text += r == 0 ? "" : (rng.below(4) == 0 ? " , " : ", ")
                var members: [(text: String, member: (key: String, value: JSONValue)?)] = []
                for i in names.indices {
                    let key = rng.below(12) == 0 ? otherKeys[rng.below(otherKeys.count)] : (text: names[i], index: i)
                    let (valueText, value): (String, JSONValue?)
                    switch rng.below(4) {
                    case 0: (valueText, value) = ("null", .null)
                    case 1:
                        let string = strings[rng.below(strings.count)]
                        (valueText, value) = ("\"\(string.text)\"", string.value.map { .string($0) })
                    default:
                        let int = Int64(rng.below(2_000_000)) - 1_000_000
                        (valueText, value) = (String(int), .int(int))
                    }
                    members.append(("\"\(key.text)\": \(valueText)", value.map { (String(key.index), $0) }))
                }
                if rng.below(6) == 0 { members.shuffle(using: &rng) }
                if rng.below(6) == 0 { members.removeLast(rng.below(members.count)) }
                let separator = rng.below(8) == 0 ? " ,\n " : ", "
                text += "{" + members.map { $0.text }.joined(separator: separator) + (rng.below(8) == 0 ? " }" : "}")
                let record = members.compactMap { $0.member }
                model = record.count == members.count ? model.map { $0 + [.object(record)] } : nil
            }
            text += "]"
            var bytes = Array(text.utf8)
            switch rng.below(4) {
            case 0: bytes[rng.below(bytes.count)] = [0x22, 0x5C, 0x01, 0xFF, 0x7D, 0x2C, 0x20, 0x41][rng.below(8)]
            case 1: bytes.removeLast(1 + rng.below(bytes.count - 1))
            default: break
            }
            let tree = liveObjectsErrorOrValue { () throws(LiveObjectsError) in try parse(bytes) }
            let cursor = liveObjectsErrorOrValue { () throws(LiveObjectsError) in
                try JSONReader.withReader(bytes) { (reader) throws(LiveObjectsError) -> JSONValue in
                    let value = try Self.readRecords(&reader, keys)
                    try reader.finish()
                    return value
                }
            }
            // An unchanged text is read as it was made; a changed one as the tree reader reads it.
            let expected =
                bytes == Array(text.utf8) ? model.map { JSONValue.array($0) } : tree.value.map { Self.keyed($0, names) }
            guard expected == cursor.value, (expected == nil) == (cursor.error != nil) else {
                let treeRead: String = expected.map { "\($0)" } ?? tree.error.map { "\($0)" } ?? "refused"
                let cursorRead: String = cursor.value.map { "\($0)" } ?? cursor.error.map { "\($0)" } ?? "?"
                let text = String(decoding: bytes, as: UTF8.self)
                Issue.record(
                    "seed \(seed), round \(round): \(text)\ntree: \(treeRead)\nmember by member: \(cursorRead)")
                return
            }
            if tree.error == nil { read += 1 } else { refused += 1 }
        }
        #expect(read > 50 && refused > 50, "seed \(seed): \(read) texts read, \(refused) refused")
    }

    /// An array of records read with the key set; each key as its index in the set (an unknown
    /// one as -1), each value by its kind.
    static func readRecords(_ reader: inout JSONReader, _ keys: JSONKeySet) throws(LiveObjectsError)
        -> JSONValue
    {
        var records: [JSONValue] = []
        try reader.beginArray()
        while try reader.nextElement() {
            var members: [(key: String, value: JSONValue)] = []
            try reader.beginObject()
            while let index = try reader.nextKey(in: keys) {
                let value: JSONValue
                switch try reader.peekKind() {
                case .string: value = .string(try reader.readString())
                case .null:
                    _ = try reader.readNull()
                    value = .null
                case .number: value = .number(JSONNumber(try reader.readInt64()))
                default: value = try reader.readValue()
                }
                members.append((key: String(index), value: value))
            }
            records.append(.object(members))
        }
        return .array(records)
    }

    /// A tree of records with each key replaced by its index in `names` (-1 when not there),
    /// as ``readRecords(_:_:)`` gives it.
    static func keyed(_ value: JSONValue, _ names: [String]) -> JSONValue {
        .array(
            (value.arrayValue ?? []).map { record in
                .object(
                    (record.objectValue ?? []).map { member in
                        (key: String(names.firstIndex(of: member.key) ?? -1), value: member.value)
                    })
            })
    }

    /// What `body` returns, or the error it throws.
    func liveObjectsErrorOrValue(_ body: () throws(LiveObjectsError) -> JSONValue) -> (
        value: JSONValue?, error: LiveObjectsError?
    ) {
        do {
            return (try body(), nil)
        } catch {
            return (nil, error)
        }
    }

    @Test func integerFastPathAgreesWithTheFullScanner() throws {
        let good = [
            "0", "-0", "7", "-7", "123456789012345678", "-123456789012345678", "1234567890123456789",
            "9223372036854775807", "-9223372036854775808", "[5]", "[-5,6]",
        ]
        for text in good {
            let values = try read(text) { (reader) throws(LiveObjectsError) -> [Int64] in
                if try reader.peekKind() == .array {
                    var values: [Int64] = []
                    try reader.readArray { (reader) throws(LiveObjectsError) in values.append(try reader.readInt64()) }
                    return values
                }
                return [try reader.readInt64()]
            }
            #expect(values == (try parse(text).arrayValue ?? [try parse(text)]).map { $0.int64Value! }, "\(text)")
        }
        for (text, offset, fragment) in [
            ("00", 1, "no leading zeros"), ("-00", 2, "no leading zeros"), ("012", 1, "no leading zeros"),
            ("1.0", 0, "found the number 1.0"), ("1e2", 0, "found the number 1e2"), ("-", 1, "a digit after '-'"),
            ("-a", 1, "a digit after '-'"), ("12E1", 0, "found the number"), ("x", 0, "expected an integer, found 'x'"),
        ] {
            expectFailure(at: offset, fragment) { () throws(LiveObjectsError) in
                _ = try read(text) { (reader) throws(LiveObjectsError) in try reader.readInt64() }
            }
        }
    }

    /// Integers of every length from 1 to 20 digits, signed or not, with leading zeros, at the
    /// Int64 limits, followed by what ends them or makes them another number, placed so that
    /// their digits end within eight bytes of the text's end or further from it: `readInt64()`
    /// (which reads eight bytes at a time where it can) gives the number the digits spell, or
    /// refuses exactly those that are not JSON integers in Int64's range (seeded:
    /// `LIVEOBJECTS_JSON_SEED` replays one; the seed and the text are in the message).
    @Test(arguments: seeds)
    func integersReadEightBytesAtATimeAsTheirDigitsSpell(seed: UInt64) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        let limits = ["9223372036854775807", "9223372036854775808", "99999999", "100000000", "12345678", "0"]
        let endings = ["", "]", ", 1]", " ]", ".5]", "e3]", "E+1]", "x]", "-]", "\"]", "        ]", "}"]
        var (read, refused) = (0, 0)
        for round in 0..<4000 {
            let negative = rng.below(4) == 0
            var digits: String
            if rng.below(8) == 0 {
                digits = limits[rng.below(limits.count)]
            } else {
                let count = 1 + rng.below(20)
                digits = String(
                    (0..<count).map { i in
                        Character(String(i == 0 && rng.below(6) > 0 ? 1 + rng.below(9) : rng.below(10)))
                    })
            }
            let token = (negative ? "-" : "") + digits
            let ending = endings[rng.below(endings.count)]
            let lead = String(repeating: " ", count: rng.below(10))
            let text = lead + token + ending
            // A JSON integer: no leading zero, not followed by a fraction or an exponent, in range.
            let isInteger =
                (digits.count == 1 || digits.first != "0") && !ending.hasPrefix(".") && !ending.hasPrefix("e")
                && !ending.hasPrefix("E")
            let expected = isInteger ? Int64(token) : nil
            let got: Int64?
            do {
                got = try JSONReader.withReader(Array(text.utf8)) { (reader) throws(LiveObjectsError) in
                    try reader.readInt64()
                }
            } catch {
                got = nil
            }
            guard got == expected else {
                let gotText = got.map { String($0) } ?? "an error"
                let expectedText = expected.map { String($0) } ?? "an error"
                Issue.record("seed \(seed), round \(round): \(text): read \(gotText), expected \(expectedText)")
                return
            }
            if got == nil { refused += 1 } else { read += 1 }
        }
        #expect(read > 1000 && refused > 1000, "seed \(seed): \(read) read, \(refused) refused")
    }
}
