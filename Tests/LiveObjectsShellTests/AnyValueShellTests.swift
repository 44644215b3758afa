import Foundation
import LiveObjects
import LiveObjectsShell
import Testing

/// `AnyValue` properties in the shell: `define` reads `AnyValue` (and `Any`), input takes any
/// JSON value or an object naming the kind, display shows the kind where JSON has none, and
/// queries compare by value and by `@type`.
@Suite struct AnyValueShellTests {
    static let script = [
        "define Note { id: Int primary, payload: AnyValue, extra: Any }",
        #"create Note {"id": 1, "payload": 3}"#,
        #"create Note {"id": 2, "payload": "3"}"#,
        #"create Note {"id": 3, "payload": {"decimal": "3.00"}}"#,
        #"create Note {"id": 4, "payload": {"date": "2024-05-01T10:00:00Z"}, "extra": 2.5}"#,
        #"create Note {"id": 5, "payload": null, "extra": true}"#,
    ]

    @Test func defineCreateShowAndQuery() async {
        let run = await liveobj(
            [
                "-c",
                (Self.script + [
                    "schema Note", "query Note where payload == 3", "query Note where payload.@type == 'string'",
                    "query Note where payload.@type IN {'date', 'null'} sort by id",
                ]).joined(separator: "; "),
            ])
        #expect(run.code == 0, "\(run.stderr)")
        #expect(run.stdout.contains("payload: AnyValue"), "\(run.stdout)")
        #expect(run.stdout.contains("extra: AnyValue"), "\(run.stdout)")
        #expect(run.stdout.contains("(2 objects)"), "3 and 3.00, not \"3\": \(run.stdout)")
        #expect(run.stdout.contains(#"{"decimal": "3"}"#), "\(run.stdout)")
        #expect(run.stdout.contains(#"{"date": "2024-05-01T10:00:00Z"}"#), "\(run.stdout)")
        #expect(run.stdout.contains("(1 object)"), "\(run.stdout)")
    }

    @Test func jsonOutputNamesTheKind() async {
        let run = await liveobj(["--json", "-c", (Self.script + ["query Note where id >= 3"]).joined(separator: "; ")])
        #expect(run.code == 0, "\(run.stderr)")
        #expect(run.stdout.contains(#""payload":{"decimal":"3"}"#), "\(run.stdout)")
        #expect(run.stdout.contains(#""extra":2.5"#), "\(run.stdout)")
        #expect(run.stdout.contains(#""payload":null"#), "\(run.stdout)")
    }

    /// A JSON array is a list, an object that names no kind a dictionary; both print back
    /// (a dictionary wrapped), and queries read into them.
    @Test func nestedListsAndDictionariesInAndOut() async {
        let run = await liveobj(
            [
                "--json", "-c",
                (Self.script.prefix(1) + [
                    #"create Note {"id": 1, "payload": [1, {"decimal": "2.5"}, ["x"]]}"#,
                    #"create Note {"id": 2, "payload": {"name": "Rex", "tags": ["good"]}}"#,
                    #"create Note {"id": 3, "payload": {"dictionary": {"date": 1}}}"#,
                    "query Note where payload[2][0] == 'x' OR payload['tags'][*] == 'good' sort by id",
                    "query Note where payload['date'] == 1",
                ]).joined(separator: "; "),
            ])
        #expect(run.code == 0, "\(run.stderr)")
        let first = #"[{"id":1,"payload":[1,{"decimal":"2.5"},["x"]],"extra":null},"#
        #expect(
            run.stdout.contains(
                first + #"{"id":2,"payload":{"dictionary":{"name":"Rex","tags":["good"]}},"extra":null}]"#),
            "\(run.stdout)")
        // The dictionary of one key named like a kind, not a date.
        #expect(run.stdout.contains(#"[{"id":3,"payload":{"dictionary":{"date":1}},"extra":null}]"#), "\(run.stdout)")
    }

    @Test func badValuesAreRefusedWithAMessage() async {
        for bad in [
            #"{"id": 9, "payload": {"list": 1}}"#, #"{"id": 9, "payload": {"dictionary": [1]}}"#,
            #"{"id": 9, "payload": {"uuid": "x"}}"#, #"{"id": 9, "payload": [{"uuid": "x"}]}"#,
        ] {
            let run = await liveobj(["-c", (Self.script.prefix(1) + ["create Note \(bad)"]).joined(separator: "; ")])
            #expect(run.code != 0, "\(bad)")
            #expect(run.stderr.contains("Note.payload"), "\(bad): \(run.stderr)")
        }
    }

    /// A link prints as `{"link": {"type": …, "key": "#…"}}`, is read back in that form, is
    /// null once its object is deleted, and a link to no object is refused.
    @Test func linksInAndOut() async {
        let run = await liveobj(
            [
                "--json", "-c",
                (Self.script.prefix(1) + [
                    "define Dog { name: String primary }", #"create Dog {"name": "Rex"}"#,
                    ##"create Note {"id": 1, "payload": {"link": {"type": "Dog", "key": "#0"}}}"##,
                    ##"create Note {"id": 2, "payload": [{"link": {"type": "Dog", "key": "#0.0"}}]}"##,
                    "query Note where payload.@type == 'object'", "delete Dog where name == 'Rex'",
                    "query Note sort by id",
                ]).joined(separator: "; "),
            ])
        #expect(run.code == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains(##"[{"id":1,"payload":{"link":{"type":"Dog","key":"#0"}},"extra":null}]"##),
            "\(run.stdout)")
        #expect(run.stdout.contains(#"{"id":1,"payload":null,"extra":null},{"id":2,"payload":[null]"#), "\(run.stdout)")
        let bad = await liveobj(
            [
                "-c",
                (Self.script.prefix(1) + [
                    "define Dog { name: String primary }",
                    ##"create Note {"id": 1, "payload": {"link": {"type": "Dog", "key": "#0"}}}"##,
                ]).joined(separator: "; "),
            ])
        #expect(bad.code != 0 && bad.stderr.contains("does not exist"), "\(bad.stderr)")
    }

    /// Lists, sets and maps of AnyValue: defined in Swift's spellings, each element read and
    /// printed as an AnyValue, queried by element and kind, a link in one null after its delete.
    @Test func collectionsOfAnyValues() async {
        let run = await liveobj(
            [
                "--json", "-c",
                [
                    "define Pet { id: Int primary }",
                    "define Bag { id: Int primary, items: [AnyValue], fields: [String: AnyValue], tags: Set<AnyValue> }",
                    #"create Pet {"id": 1}"#,
                    ##"create Bag {"id": 1, "items": [1, "a", {"x": [1]}, {"link": {"type": "Pet", "key": "#0"}}], "##
                        + #""fields": {"k": {"decimal": "2.5"}}, "tags": [1, 1, "1"]}"#,
                    #"create Bag {"id": 2, "items": [], "fields": {"k": "2.5"}}"#,
                    "query Bag where ANY items.@type == 'object'",
                    "query Bag where fields['k'] == 2.5",
                    "query Bag where fields['k'].@type == 'string'",
                    "delete Pet 1",
                    "query Bag where id == 1",
                    "schema Bag",
                ].joined(separator: "; "),
            ])
        #expect(run.code == 0, "\(run.stderr)")
        let bag =
            ##"{"id":1,"items":[1,"a",{"dictionary":{"x":[1]}},{"link":{"type":"Pet","key":"#0"}}],"fields":{"k":{"decimal":"2.5"}},"##
            + #""tags":[1,"1"]}"#
        #expect(run.stdout.contains("[\(bag)]\n[\(bag)]\n"), "\(run.stdout)")
        #expect(run.stdout.contains(#"[{"id":2,"items":[],"fields":{"k":"2.5"},"tags":[]}]"#), "\(run.stdout)")
        #expect(
            run.stdout.contains(
                #"[{"id":1,"items":[1,"a",{"dictionary":{"x":[1]}},null],"fields":{"k":{"decimal":"2.5"}},"#),
            "\(run.stdout)")
        // The schema in JSON says which lists are a set and a map.
        #expect(run.stdout.contains(#"{"name":"items","type":"mixed","optional":false,"list":true}"#), "\(run.stdout)")
        #expect(
            run.stdout.contains(#"{"name":"fields","type":"mixed","optional":false,"list":true,"map":true}"#),
            "\(run.stdout)")
        #expect(
            run.stdout.contains(#"{"name":"tags","type":"mixed","optional":false,"list":true,"set":true}"#),
            "\(run.stdout)")
    }
}
