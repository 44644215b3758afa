import LiveObjectsJSON
import Testing

@testable import LiveObjectsSyncServer

/// The server reads pushed JSON into LiveObjectsJSON's tree in a canonical form: what
/// Foundation's decoder made of it before (a dictionary, an integer or a double) compares,
/// hashes, checks and stores the same. No database.
@Suite("Pushed changes in canonical JSON")
struct PushedChangeTests {
    func canonical(_ text: String) throws -> JSONValue { try JSONValue.canonical(parsing: text, "the test's JSON") }

    @Test func membersAreSortedAndTheFirstOfARepeatedNameKept() throws {
        #expect(
            try canonical(#"{"b":1,"a":{"y":[true,null],"x":"s"},"b":2}"#).text
                == #"{"a":{"x":"s","y":[true,null]},"b":1}"#)
        #expect(try canonical(#"{"type":"Card","id":{"int":1}}"#) == canonical(#"{"id":{"int":1},"type":"Card"}"#))
    }

    @Test func aNumberOfAnIntegerValueIsThatInteger() throws {
        for (text, integer) in [("1.0", "1"), ("1e2", "100"), ("2.50e1", "25"), ("-0", "0"), ("100e-2", "1")] {
            let value = try canonical(text)
            #expect(value.text == integer && value.isInteger, "\(text) -> \(value.text)")
        }
        #expect(try canonical("1.5").text == "1.5")
        #expect(try !canonical("1.5").isInteger)
        // Past Int64: a double, as Foundation's decoder read it.
        #expect(try !canonical("9223372036854775808").isInteger)
        #expect(throws: SyncServerError.self) { try canonical("1e400") }
        #expect(throws: SyncServerError.self) { try canonical(#"{"a":"#) }
    }

    @Test func theShapeOfValuesIsCheckedAsBefore() throws {
        let plain = [
            (#"{"int":1}"#, true), (#"{"int":1.0}"#, true), (#"{"int":1.5}"#, false), (#"{"int":"1"}"#, false),
            (#"{"double":1}"#, true), (#"{"double":"NaN"}"#, true), (#"{"double":"nan"}"#, true),
            (#"{"double":"big"}"#, false), (#"{"date":-1.25}"#, true), (#"{"null":true}"#, true),
            (#"{"int":1,"bool":true}"#, false), (#"{"uuid":"nope"}"#, false), (#"{"data":"*"}"#, false),
            (#"{"list":[{"int":1},{"string":"a"}]}"#, true), (#"{"list":[1]}"#, false),
            (#"{"decimal":"12.50"}"#, true), (#"{"decimal":"-0.000000000000000000000000000001"}"#, true),
            (#"{"decimal":"NaN"}"#, true), (#"{"decimal":"1.5e-7"}"#, true), (#"{"decimal":1.5}"#, false),
            (#"{"decimal":"1e5000"}"#, false), (#"{"decimal":"1e200"}"#, false), (#"{"decimal":"1e-150"}"#, false),
            (#"{"decimal":"1e127"}"#, true), (#"{"decimal":"1e-128"}"#, true), (#"{"decimal":"1.5.1"}"#, false),
            (#"{"decimal":".5"}"#, false),
            (#"{"decimal":"\#(String(repeating: "1", count: 39))"}"#, false),
            (#"{"decimal":"\#(String(repeating: "1", count: 38))000"}"#, true),
            (#"{"objectID":"507f1f77bcf86cd799439011"}"#, true), (#"{"objectID":"507F1F77BCF86CD799439011"}"#, true),
            (#"{"objectID":"507f1f77bcf86cd79943901"}"#, false), (#"{"objectID":"zz7f1f77bcf86cd799439011"}"#, false),
        ]
        for (text, valid) in plain {
            #expect(try PushedChange.isPlainValue(canonical(text)) == valid, "\(text)")
        }
        #expect(
            try PushedChange.isSyncValue(canonical(#"{"ref":{"type":"Holder","id":{"string":"h"},"serverID":null}}"#)))
        #expect(try PushedChange.isSyncValue(canonical(#"{"ref":null}"#)))
        #expect(try !PushedChange.isSyncValue(canonical(#"{"ref":{"type":"Holder","id":{"string":"h"},"extra":1}}"#)))
        // Two spellings of one id name one object.
        #expect(
            try SpaceObjectName(type: "Card", id: canonical(#"{"int":7}"#))
                == SpaceObjectName(type: "Card", id: canonical(#"{"int":7.0}"#)))
    }

    @Test func aPushRequestIsReadAsFoundationsDecoderReadIt() throws {
        let body = #"""
            {"changes":[{"kind":"update","key":"k","serverID":null,"unknown":[1],
            "object":{"id":{"string":"c1"},"type":"Card"},"values":{"price":{"double":3.0}},"bases":null}]}
            """#
        let change = try #require(try PushRequest(bytes: Array(body.utf8)).changes.first)
        #expect(change.key == "k" && change.kind == "update" && change.serverID == nil && change.bases == nil)
        #expect(change.object.type == "Card" && change.object.id.text == #"{"string":"c1"}"#)
        #expect(change.values?["price"]?.text == #"{"double":3}"#)
        for bad in [
            #"{"changes":{}}"#, #"{"changes":[{"key":"k","kind":"create"}]}"#,
            #"{"changes":[{"key":1,"kind":"create","object":{"type":"T","id":{"int":1}}}]}"#,
            #"{"changes":[{"key":"k","kind":"create","object":{"type":"T","id":{"int":1}},"values":[]}]}"#,
        ] {
            #expect(throws: SyncServerError.self, "\(bad)") { try PushRequest(bytes: Array(bad.utf8)) }
        }
    }
}
