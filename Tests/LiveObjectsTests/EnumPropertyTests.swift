import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

enum Position: String, PersistableEnum {
    case pitcher, catcher, shortstop
}

enum Level: Int, PersistableEnum {
    case rookie = 1
    case regular = 2
    case star = 3
}

final class Fielder: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var position = Position.catcher
    @Persisted var firstPosition: Position
    @Persisted var backup: Position?
    @Persisted var played: List<Position>
    @Persisted var level = Level.rookie
}

/// Enum properties: kept as their raw values, read and queried as cases.
@Suite struct EnumPropertyTests {
    func roster() async throws -> Realm {
        let realm = try await openFreshRealm(objectTypes: [Fielder.self])
        try await realm.write { realm in
            let ann = Fielder()
            ann.name = "Ann"
            ann.position = .pitcher
            ann.backup = .shortstop
            ann.played.append(objectsIn: [.pitcher, .catcher])
            ann.level = .star
            try realm.add(ann)
            let bob = Fielder()
            bob.name = "Bob"
            try realm.add(bob)
            _ = try realm.create(Fielder.self, value: ["name": "Cid", "position": "shortstop", "level": 2])
        }
        return realm
    }

    @Test func casesRoundTripAsRawValues() async throws {
        let realm = try await roster()
        let (ann, bob, cid) = try await realm.read { realm in
            guard let ann = realm.object(ofType: Fielder.self, forPrimaryKey: "Ann"),
                let bob = realm.object(ofType: Fielder.self, forPrimaryKey: "Bob"),
                let cid = realm.object(ofType: Fielder.self, forPrimaryKey: "Cid")
            else { return ([String](), [String](), [String]()) }
            return (
                [
                    ann.position.rawValue, ann.backup?.rawValue ?? "-",
                    ann.played.map(\.rawValue).joined(separator: ","),
                ],
                [bob.position.rawValue, bob.firstPosition.rawValue, bob.backup?.rawValue ?? "-"],
                [cid.position.rawValue, "\(cid.level.rawValue)"]
            )
        }
        #expect(ann == ["pitcher", "shortstop", "pitcher,catcher"])
        // The declared default, and the first case where there is none.
        #expect(bob == ["catcher", "pitcher", "-"])
        #expect(cid == ["shortstop", "2"])
        // The dynamic API (the shell, sync, migrations) sees the raw values.
        let stored = try await realm.read { realm in
            guard let ann = try realm.dynamicObject(ofType: "Fielder", forPrimaryKey: "Ann") else {
                return [PropertyValue]()
            }
            return [ann["position"], ann["level"], ann["played"]]
        }
        #expect(stored == [.string("pitcher"), .int(3), .list([.string("pitcher"), .string("catcher")])])
        let schema = try #require(realm.schema["Fielder"])
        #expect(schema["position"]?.type == .string && schema["level"]?.type == .int)
        #expect(schema["backup"]?.isOptional == true && schema["played"]?.isList == true)
    }

    @Test func typedAndStringQueriesMatchCases() async throws {
        let realm = try await roster()
        let answers = try await realm.read { realm in
            let players = realm.objects(Fielder.self)
            return [
                players.where { $0.position == .pitcher }.map(\.name),
                players.where { $0.position != .pitcher }.map(\.name),
                players.where { $0.backup == .shortstop }.map(\.name),
                players.where { $0.backup == nil }.map(\.name),
                players.where { $0.level == .regular }.map(\.name),
                try players.filter("position == 'shortstop'").map(\.name),
                try players.filter("ANY played == 'catcher'").map(\.name),
                try players.filter("level >= 2").map(\.name),
            ]
        }
        #expect(
            answers == [["Ann"], ["Bob", "Cid"], ["Ann"], ["Bob", "Cid"], ["Cid"], ["Cid"], ["Ann"], ["Ann", "Cid"]])
    }

    /// Untyped input (a dictionary, the dynamic API, JSON) is checked against the cases.
    @Test(arguments: [
        ["name": "Dee", "position": "goalie"] as [String: any Sendable],
        ["name": "Dee", "backup": "goalie"],
        ["name": "Dee", "played": ["pitcher", "goalie"]],
        ["name": "Dee", "level": 4],
    ])
    func aValueThatIsNoCaseIsRefused(_ value: [String: any Sendable]) async throws {
        let realm = try await roster()
        var error: LiveObjectsError?
        do {
            try await realm.write { realm in _ = try realm.create(Fielder.self, value: value) }
        } catch let thrown as LiveObjectsError {
            error = thrown
        }
        #expect(error?.code == .typeMismatch && error?.objectType == "Fielder", "\(String(describing: error))")
        #expect(error?.message.contains("is not the raw value of a case of") == true)
        #expect(try await realm.read { $0.objects(Fielder.self).count } == 3)
        var dynamicError: LiveObjectsError?
        do {
            try await realm.write { realm in
                try realm.dynamicObject(ofType: "Fielder", forPrimaryKey: "Bob")?.set("position", to: "goalie")
            }
        } catch let thrown as LiveObjectsError {
            dynamicError = thrown
        }
        #expect(dynamicError?.code == .typeMismatch)
        #expect(try await realm.read { $0.object(ofType: Fielder.self, forPrimaryKey: "Bob")?.position } == .catcher)
    }
}

extension EnumPropertyTests {
    /// `Object(value:)` takes an enum property's case or its raw value, as `create` does; a raw
    /// value that is no case is refused, naming the property.
    @Test func anUnmanagedObjectTakesRawValues() throws {
        let dee = try Fielder(
            value: [
                "name": "Dee", "position": "shortstop", "firstPosition": Position.pitcher, "backup": "catcher",
                "played": ["pitcher", Position.shortstop], "level": 3,
            ])
        #expect(dee.position == .shortstop && dee.firstPosition == .pitcher && dee.backup == .catcher)
        #expect(Array(dee.played) == [.pitcher, .shortstop] && dee.level == .star)
        let byOrder = try Fielder(value: ["Eve", "catcher", "pitcher", NSNull(), [] as [String], 1])
        #expect(byOrder.position == .catcher && byOrder.backup == nil && byOrder.level == .rookie)
        for bad in [["position": "goalie"], ["backup": "goalie"], ["played": ["goalie"]], ["level": 4]]
            as [[String: Any]]
        {
            #expect(throws: LiveObjectsError.self, "\(bad)") { _ = try Fielder(value: bad) }
        }
        // The same for an optional of a failable custom type: a refused value is not a nil.
        #expect(try Member(value: ["accent": 90]).accent?.degrees == 90)
        #expect(throws: LiveObjectsError.self) { _ = try Member(value: ["accent": 400]) }
    }
}
