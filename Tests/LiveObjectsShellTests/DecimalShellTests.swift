import Foundation
import LiveObjects
import LiveObjectsShell
import Testing

/// Decimal and ObjectID properties in the shell: `define`, input as JSON numbers, strings and
/// hex ids, display, queries with exact decimal and `oid(…)` literals, JSON output.
@Suite struct DecimalShellTests {
    static let script = [
        "define Item { _id: objectid primary, price: decimal, tax: Decimal?, parts: [Decimal] }",
        #"create Item {"_id": "507f1f77bcf86cd799439011", "price": 0.1000000000000000000000001, "parts": [1, "2.50"]}"#,
        #"create Item {"_id": "507f1f77bcf86cd799439012", "price": "9.99", "tax": 0.5}"#,
    ]

    @Test func defineCreateAndQuery() async {
        let run = await liveobj(
            [
                "-c",
                (Self.script + ["schema Item", "query Item where price < 1 sort by price"]).joined(separator: "; "),
            ])
        #expect(run.code == 0, "\(run.stderr)")
        #expect(run.stdout.contains("_id: ObjectID primary"), "\(run.stdout)")
        #expect(run.stdout.contains("price: Decimal"), "\(run.stdout)")
        #expect(run.stdout.contains("tax: Decimal?"), "\(run.stdout)")
        #expect(run.stdout.contains("0.1000000000000000000000001"), "\(run.stdout)")
        #expect(run.stdout.contains("507f1f77bcf86cd799439011"), "\(run.stdout)")
        #expect(
            run.stdout.contains("507f1f77bcf86cd799439011  0.1000000000000000000000001  null  [1, 2.5]"),
            "\(run.stdout)")
        #expect(run.stdout.hasSuffix("(1 object)\n"), "\(run.stdout)")
    }

    @Test func jsonOutputAndLiterals() async {
        let run = await liveobj(
            [
                "--json", "-c",
                (Self.script + ["query Item where _id == oid(507f1f77bcf86cd799439012)"]).joined(separator: "; "),
            ])
        #expect(run.code == 0, "\(run.stderr)")
        #expect(run.stdout.contains(#""price":9.99"#), "\(run.stdout)")
        #expect(run.stdout.contains(#""_id":"507f1f77bcf86cd799439012""#), "\(run.stdout)")
        #expect(run.stdout.contains(#""tax":0.5"#), "\(run.stdout)")
    }

    @Test func badValuesAreRefusedWithAMessage() async {
        let run = await liveobj(
            [
                "-c",
                (Self.script.prefix(1) + [#"create Item {"_id": "xyz", "price": 1}"#, #"create Item {"price": "abc"}"#])
                    .joined(separator: "; "),
            ])
        #expect(run.code != 0)
        #expect(run.stderr.contains("ObjectID"), "\(run.stderr)")
    }
}
