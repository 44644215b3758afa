import LiveObjects
import Testing

@testable import LiveObjectsJSON
@testable import Persistence

@Suite struct JSONWriterTests {
    @Test func writesCompactJSON() {
        let text = written { w in
            w.beginObject()
            w.key("id"); w.int(7)
            w.key("name"); w.string("Rex")
            w.key("score"); w.double(2.5)
            w.key("ratio"); w.float(0.1)
            w.key("good"); w.bool(true)
            w.key("bad"); w.bool(false)
            w.key("owner"); w.null()
            w.key("tags"); w.beginArray(); w.string("a"); w.int(-1); w.beginArray(); w.endArray(); w.endArray()
            w.key("empty"); w.beginObject(); w.endObject()
            w.endObject()
        }
        #expect(
            text
                == #"{"id":7,"name":"Rex","score":2.5,"ratio":0.1,"good":true,"bad":false,"owner":null,"tags":["a",-1,[]],"empty":{}}"#
        )
    }

    @Test func escapesExactlyWhatJSONRequires() throws {
        #expect(written { $0.string("say \"hi\" \\ /") } == #""say \"hi\" \\ /""#)
        #expect(written { $0.string("\u{8}\u{C}\n\r\t") } == #""\b\f\n\r\t""#)
        #expect(written { $0.string("\u{0}\u{1}\u{1F}\u{7F}") } == "\"\\u0000\\u0001\\u001f\u{7F}\"")
        #expect(written { $0.string("Жучка 🐕 é\u{2028}") } == "\"Жучка 🐕 é\u{2028}\"")
        #expect(written { $0.string("") } == #""""#)
        // Every control character, escaped, and read back.
        let controls = String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) })
        let text = written { $0.string(controls) }
        #expect(!text.utf8.contains { $0 < 0x20 })
        #expect(try parse(text) == .string(controls))
    }

    @Test func writesNonFiniteNumbersAsStrings() throws {
        let text = written { w in
            w.beginArray()
            w.double(.nan); w.double(.infinity); w.double(-.infinity); w.float(.nan); w.float(-.infinity)
            w.endArray()
        }
        #expect(text == #"["NaN","Infinity","-Infinity","NaN","-Infinity"]"#)
        let back = try read(text) { (reader) throws(LiveObjectsError) -> [Double] in
            try reader.beginArray()
            var values: [Double] = []
            for _ in 0..<3 {
                _ = try reader.nextElement()
                values.append(try reader.readDouble())
            }
            _ = try reader.nextElement()
            let nanFloat = try reader.readFloat()
            _ = try reader.nextElement()
            let infinity = try reader.readFloat()
            let more = try reader.nextElement()
            #expect(nanFloat.isNaN && infinity == -.infinity && !more)
            return values
        }
        #expect(back[0].isNaN && back[1] == .infinity && back[2] == -.infinity)
        // Refused when the option is off, and other strings are never numbers.
        let strict = JSONReader.Options(acceptsNonFiniteStrings: false)
        expectFailure(at: 0, "expected a number, found a string") { () throws(LiveObjectsError) in
            _ = try JSONReader.withReader(Array(#""NaN""#.utf8), options: strict) { (r) throws(LiveObjectsError) in
                try r.readDouble()
            }
        }
        expectFailure(at: 0, "other than") { () throws(LiveObjectsError) in
            _ = try read(#""nan""#) { (r) throws(LiveObjectsError) in try r.readDouble() }
        }
        #expect(JSONValue.double(.infinity) == .string("Infinity"))
        #expect(JSONValue.string("-Infinity").doubleValue == -.infinity)
    }

    @Test func prettyLayoutIndentsEveryMember() {
        var w = JSONWriter(options: .pretty)
        w.value(["a": 1, "b": [true, nil], "c": [:], "d": []])
        #expect(
            String(decoding: w.takeBytes(), as: UTF8.self) == """
                {
                  "a": 1,
                  "b": [
                    true,
                    null
                  ],
                  "c": {},
                  "d": []
                }
                """)
    }

    @Test func recordsLayoutPutsOneRecordPerLine() throws {
        var w = JSONWriter(options: .records)
        w.beginObject()
        w.key("version"); w.int(1)
        w.key("Dog")
        w.beginArray()
        for (id, name) in [(1, "Rex"), (2, "Fido")] {
            w.beginObject()
            w.key("id"); w.int(Int64(id))
            w.key("name"); w.string(name)
            w.key("toys"); w.beginArray(); w.int(3); w.int(4); w.endArray()
            w.endObject()
        }
        w.endArray()
        w.key("Person"); w.beginArray(); w.endArray()
        w.key("meta"); w.beginObject(singleLine: true); w.key("x"); w.int(1); w.key("y"); w.int(2); w.endObject()
        w.endObject()
        let text = String(decoding: w.takeBytes(), as: UTF8.self)
        #expect(
            text == """
                {
                  "version": 1,
                  "Dog": [
                    {"id": 1, "name": "Rex", "toys": [3, 4]},
                    {"id": 2, "name": "Fido", "toys": [3, 4]}
                  ],
                  "Person": [],
                  "meta": {"x": 1, "y": 2}
                }
                """)
        // All layouts read back to the same value.
        let compact = try parse(text).jsonBytes()
        #expect(String(decoding: compact, as: UTF8.self).hasPrefix(#"{"version":1,"Dog":[{"id":1,"#))
    }

    @Test func preEncodedKeysMatchPlainKeys() {
        let keys: [JSONKey] = ["id", "na\"me", "ключ"]
        let a = written { w in
            w.beginObject()
            for key in keys { w.key(key); w.int(1) }
            w.endObject()
        }
        let b = written { w in
            w.beginObject()
            for key in keys { w.key(key.name); w.int(1) }
            w.endObject()
        }
        #expect(a == b && a == #"{"id":1,"na\"me":1,"ключ":1}"#)
    }

    @Test func bytesCanBeTakenInChunksAndLinesWritten() throws {
        var w = JSONWriter()
        var output: [UInt8] = []
        w.beginArray()
        for i in 0..<1000 {
            w.int(Int64(i))
            if i % 100 == 0 { output += w.takeBytes() }
        }
        w.endArray()
        let complete = w.isComplete
        #expect(complete)
        output += w.takeBytes()
        #expect(try parse(output).arrayValue?.count == 1000)

        // JSON Lines.
        w = JSONWriter()
        for i in 0..<3 {
            w.beginObject(); w.key("n"); w.int(Int64(i)); w.endObject()
            w.finishLine()
        }
        let lines = w.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        #expect(lines == "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n")
        let values = try JSONReader.withReader(w.takeBytes()) { (reader) throws(LiveObjectsError) -> [JSONValue] in
            var values: [JSONValue] = []
            if !reader.isAtEnd() {
                repeat { values.append(try reader.readValue()) } while try reader.nextLine()
            }
            return values
        }
        #expect(values == [["n": 0], ["n": 1], ["n": 2]])
        expectFailure(at: 3, "a line break") { () throws(LiveObjectsError) in
            try JSONReader.withReader(Array("{} {}".utf8)) { (reader) throws(LiveObjectsError) in
                _ = try reader.readValue()
                _ = try reader.nextLine()
            }
        }
    }

    @Test func largeOutputGrowsTheBuffer() throws {
        var w = JSONWriter(options: .records, capacity: 16)
        let long = String(repeating: "x\u{1}", count: 50_000)
        w.beginArray()
        w.string(long)
        for i in 0..<20_000 { w.beginArray(); w.double(Double(i) / 7); w.endArray() }
        w.endArray()
        let value = try parse(w.takeBytes())
        #expect(value[0] == .string(long))
        #expect(value[20_000]?[0]?.doubleValue == 19_999.0 / 7)
    }
}
