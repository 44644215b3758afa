import LiveObjects
import Testing

@testable import LiveObjectsJSON
@testable import Persistence

/// The JSON library's own error: its kind and position, and the `LiveObjectsError` Persistence
/// and the shell make of it (the code and message users saw before the library had its own).
@Suite struct JSONErrorTests {
    func failure(_ text: String, options: JSONReaderOptions = .init()) -> JSONError? {
        do {
            _ = try JSONValue(parsing: text, options: options, errors: JSONError.self)
            return nil
        } catch {
            return error
        }
    }

    @Test func aSyntaxErrorSaysWhereAndWhatWasExpected() throws {
        let error = try #require(failure("{\"a\": 1,\n  \"b\" 2}"))
        #expect(error.kind == .syntax)
        #expect(error.offset == 15)
        #expect(error.line == 2)
        #expect(error.column == 7)
        #expect(error.expected == "':' after an object key")
        #expect(error.reason == "expected ':' after an object key, found '2'")
        #expect(error.message == "invalid JSON at byte 15 (line 2, column 7): \(error.reason)")
    }

    @Test func positionsCountFromWhereTheBytesStartInTheirFile() throws {
        let options = JSONReaderOptions(fileName: "realm.json.journal", startOffset: 100, startLine: 5)
        let error = try #require(failure("[1,\n]", options: options))
        #expect(error.offset == 104)
        #expect(error.line == 6)
        #expect(error.column == 1)
        #expect(error.fileName == "realm.json.journal")
        #expect(error.description == "realm.json.journal: \(error.message)")
    }

    @Test func nestingTooDeepIsItsOwnKind() throws {
        let error = try #require(failure("[[[[]]]]", options: .init(maxDepth: 3)))
        #expect(error.kind == .nesting)
        #expect(error.offset == 3)
        #expect(error.message == "JSON nesting deeper than 3 levels at byte 3 (line 1, column 4)")
    }

    @Test func aReaderUsedOutOfTurnIsAMisuse() throws {
        let thrown = #expect(throws: JSONError.self) {
            try LiveObjectsJSON.JSONReader<JSONError>.withReader(Array("[1]".utf8)) { (reader) throws(JSONError) in
                _ = try reader.nextKey()
            }
        }
        let error = try #require(thrown)
        #expect(error.kind == .misuse)
        #expect(error.message.hasPrefix("JSONReader: "))
    }

    /// The same input read as Persistence reads it: the code, message, file and input location
    /// come from the JSON error.
    @Test func persistenceSeesTheSameErrorAsALiveObjectsError() throws {
        let options = JSONReaderOptions(fileName: "realm.json")
        let json = try #require(failure("[1,]", options: options))
        let thrown = #expect(throws: LiveObjectsError.self) {
            _ = try JSONValue(parsing: "[1,]", options: options, errors: LiveObjectsError.self)
        }
        let error = try #require(thrown)
        #expect(error == LiveObjectsError(json))
        #expect(error.code == .corruptFile)
        #expect(error.message == json.message)
        #expect(error.file == "realm.json")
        #expect(error.inputLocation == InputErrorLocation(offset: 3, expected: json.expected, reason: json.reason))
        let deep = try #require(failure("[[[[]]]]", options: .init(maxDepth: 3)))
        #expect(LiveObjectsError(deep).code == .limitExceeded)
        #expect(
            LiveObjectsError(JSONError(.misuse, message: "m", reason: "r", offset: 0, line: 1, column: 1)).code
                == .invalidOperation)
        #expect(
            LiveObjectsError(JSONError(.misuse, message: "m", reason: "r", offset: 0, line: 1, column: 1)).inputLocation
                == nil)
    }
}
