import Foundation
import LiveObjects
import LiveObjectsShell
import Testing

/// `query … section by KEYPATH`: objects grouped by the value of a to-one key path, sections in
/// the order of their first object (the query's sort decides).
@Suite struct SectionShellTests {
    @Test func sectionsFollowTheFirstObjectOfEach() async {
        let run = await liveobj(["--demo", "-c", "query Dog where age < 4 sort by age section by owner.name"])
        #expect(run.code == 0, "\(run.stderr)")
        // Ages 1 (Bella, Bob), 2 (Pochi, Sakura), 3 (Rex, Ann): one section each, in that order.
        let headers = run.stdout.split(separator: "\n").filter { $0.hasPrefix("owner.name: ") }
        #expect(headers == ["owner.name: Bob Martin", "owner.name: 田中さくら", "owner.name: Ann Lee"], "\(run.stdout)")
        #expect(run.stdout.hasSuffix("(3 sections)\n"), "\(run.stdout)")
    }

    @Test func aSectionHoldsEveryObjectOfItsKeyInResultOrder() async {
        let run = await liveobj(["--demo", "--json", "-c", "query Dog sort by age desc section by owner.name"])
        #expect(run.code == 0, "\(run.stderr)")
        // Ann's dogs: Fido (7) before Rex (3); Luna has no owner: her section's key is null.
        #expect(run.stdout.contains(#"{"key":"Ann Lee","objects":[{"id":2,"#), "\(run.stdout)")
        #expect(run.stdout.contains(#""name":"Fido","age":7,"owner":1,"toys":[3]},{"id":1,"name":"Rex""#))
        #expect(run.stdout.contains(#"{"key":null,"objects":[{"id":7,"name":"Luna""#), "\(run.stdout)")
        #expect(run.stdout.components(separatedBy: #""key":"#).count - 1 == 6, "\(run.stdout)")
    }

    @Test func keyPathsThatDoNotNameOneValueAreRefused() async {
        for (command, message) in [
            ("query Dog section by toys", "Dog.toys is a list"),
            ("query Dog section by name.length", "Dog.name is not a link"),
            ("query Dog section by owner.nickname", "Person has no stored property 'nickname'"),
            ("query Dog section by", "the section clause needs a key path"),
            ("watch w = Dog section by age", "only query groups objects into sections"),
        ] {
            let run = await liveobj(["--demo", "-c", command])
            #expect(run.code != 0, "\(command)")
            #expect(run.stderr.contains(message), "\(command): \(run.stderr)")
        }
    }
}
