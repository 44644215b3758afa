import Foundation
import LiveObjects
import Testing

// Models for the Codable tests: every property type, links, lists, embedded objects, cycles.

final class CodedEverything: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bool = false
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var data = Data()
    @Persisted var uuid = UUID()
    @Persisted var optInt: Int?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optDate: Date?
    @Persisted var optData: Data?
    @Persisted var optUUID: UUID?
    @Persisted var optBool: Bool?
    @Persisted var ints: List<Int>
    @Persisted var dates: List<Date>
    @Persisted var blobs: List<Data>
    @Persisted var maybeStrings: List<String?>
    @Persisted var friend: CodedNode?
    @Persisted var nodes: List<CodedNode>
    @Persisted var place: CodedPlace?
    @Persisted var stops: List<CodedPlace>
    var notStored = 5
}

/// A linked type with a primary key; links to itself to make cycles.
final class CodedNode: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var next: CodedNode?
    @Persisted var children: List<CodedNode>
    @Persisted(originProperty: "children") var parents: LinkingObjects<CodedNode>
}

final class CodedPlace: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var zip: Int?
}

/// No primary key: a cycle through it cannot be encoded.
final class CodedLoop: Object {
    @Persisted var label = ""
    @Persisted var other: CodedLoop?
}

/// A model that declares its own initializers still decodes (the decoding initializer is
/// inherited).
final class CodedWithInit: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""

    required init() {
        super.init()
        title = "untitled"
    }

    convenience init(id: Int, title: String) {
        self.init()
        self.id = id
        self.title = title
    }
}

/// A model with a designated initializer of its own besides `init()`.
final class CodedDesignated: Object {
    @Persisted(primaryKey: true) var code = ""
    @Persisted var tags: List<String>

    init(code: String) {
        super.init()
        self.code = code
    }

    required init() {
        super.init()
    }
}

private func encode(_ object: Object) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: try encoder.encode(object), as: UTF8.self)
}

private func filledEverything() -> CodedEverything {
    let o = CodedEverything()
    o.id = 7
    o.bool = true
    o.int8 = -8
    o.int16 = 1600
    o.int32 = -320_000
    o.int64 = Int64.max
    o.float = 1.5
    o.double = 0.1
    o.string = "héllo \"quoted\""
    o.date = Date(timeIntervalSinceReferenceDate: 123_456.75)
    o.data = Data([0, 1, 254, 255])
    o.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    o.optInt = 3
    o.optFloat = nil
    o.optDouble = -2.25
    o.optString = nil
    o.optDate = Date(timeIntervalSinceReferenceDate: -1)
    o.optData = Data([9])
    o.optUUID = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
    o.optBool = false
    o.ints.append(contentsOf: [3, 1, 2])
    o.dates.append(Date(timeIntervalSinceReferenceDate: 10))
    o.blobs.append(contentsOf: [Data(), Data([1, 2])])
    o.maybeStrings.append(contentsOf: ["a", nil, "c"])
    let ann = CodedNode()
    ann.name = "ann"
    let bob = CodedNode()
    bob.name = "bob"
    ann.next = bob
    o.friend = ann
    o.nodes.append(contentsOf: [ann, bob])
    let oslo = CodedPlace()
    oslo.city = "Oslo"
    oslo.zip = 150
    o.place = oslo
    let bergen = CodedPlace()
    bergen.city = "Bergen"
    o.stops.append(bergen)
    return o
}

@Suite struct CodableTests {
    private func open(_ name: String = #function) async throws -> Realm {
        try await Realm.open(
            .init(
                identifier: "codable-\(name)-\(UUID())",
                objectTypes: [
                    CodedEverything.self, CodedNode.self, CodedPlace.self, CodedLoop.self, CodedWithInit.self,
                ]
            ))
    }

    @Test func unmanagedObjectWithEveryPropertyTypeRoundTrips() throws {
        let original = filledEverything()
        let json = try encode(original)
        let decoded = try JSONDecoder().decode(CodedEverything.self, from: Data(json.utf8))
        #expect(!decoded.isManaged)
        #expect(decoded.id == 7 && decoded.bool && decoded.int8 == -8 && decoded.int16 == 1600)
        #expect(decoded.int32 == -320_000 && decoded.int64 == Int64.max)
        #expect(decoded.float == 1.5 && decoded.double == 0.1)
        #expect(decoded.string == "héllo \"quoted\"")
        #expect(decoded.date == original.date && decoded.data == Data([0, 1, 254, 255]))
        #expect(decoded.uuid == original.uuid)
        #expect(decoded.optInt == 3 && decoded.optFloat == nil && decoded.optDouble == -2.25)
        #expect(decoded.optString == nil && decoded.optDate == original.optDate && decoded.optData == Data([9]))
        #expect(decoded.optUUID == original.optUUID && decoded.optBool == false)
        #expect(Array(decoded.ints) == [3, 1, 2])
        #expect(Array(decoded.dates) == [Date(timeIntervalSinceReferenceDate: 10)])
        #expect(Array(decoded.blobs) == [Data(), Data([1, 2])])
        #expect(Array(decoded.maybeStrings) == ["a", nil, "c"])
        #expect(decoded.friend?.name == "ann" && decoded.friend?.next?.name == "bob")
        #expect(decoded.nodes.map(\.name) == ["ann", "bob"])
        // An object linked from two places comes back as one instance.
        #expect(decoded.friend === decoded.nodes[0] && decoded.friend?.next === decoded.nodes[1])
        #expect(decoded.place?.city == "Oslo" && decoded.place?.zip == 150)
        #expect(decoded.stops.map(\.city) == ["Bergen"] && decoded.stops[0].zip == nil)
        // Nothing lost: the copy encodes to the same text.
        #expect(try encode(decoded) == json)
    }

    @Test func otherCodersWorkToo() throws {
        let original = filledEverything()
        let encoder = PropertyListEncoder()
        let data = try encoder.encode(original)
        let decoded = try PropertyListDecoder().decode(CodedEverything.self, from: data)
        #expect(try encode(decoded) == encode(original))
    }

    @Test func encodedFormIsPlainJSON() throws {
        let node = CodedNode()
        node.name = "x"
        let child = CodedNode()
        child.name = "y"
        node.children.append(child)
        // LinkingObjects are not encoded; links nest.
        #expect(
            try encode(node)
                == #"{"children":[{"children":[],"name":"y","next":null}],"name":"x","next":null}"#)
        let place = CodedPlace()
        place.city = "Rome"
        #expect(try encode(place) == #"{"city":"Rome","zip":null}"#)
    }

    @Test func managedObjectEncodesFromItsLiveValues() async throws {
        let realm = try await open()
        let unmanagedJSON = try encode(filledEverything())
        let (managedJSON, changedJSON) = try await realm.write { realm in
            let object = filledEverything()
            try realm.add(object)
            let before = try encode(object)
            object.string = "changed"
            object.ints.append(4)
            object.place?.city = "Tromsø"
            return (before, try encode(object))
        }
        #expect(managedJSON == unmanagedJSON)
        let changed = try JSONDecoder().decode(CodedEverything.self, from: Data(changedJSON.utf8))
        #expect(changed.string == "changed" && Array(changed.ints) == [3, 1, 2, 4])
        #expect(changed.place?.city == "Tromsø")
        // Encoding in a read, outside any write.
        let read = try await realm.read { realm in
            try encode(realm.object(ofType: CodedEverything.self, forPrimaryKey: 7)!)
        }
        #expect(read == changedJSON)
    }

    @Test func decodedGraphCanBeAddedToARealm() async throws {
        let realm = try await open()
        let json = try encode(filledEverything())
        let names = try await realm.write { realm in
            let decoded = try JSONDecoder().decode(CodedEverything.self, from: Data(json.utf8))
            try realm.add(decoded)
            return realm.objects(CodedNode.self).map(\.name).sorted()
        }
        #expect(names == ["ann", "bob"])
        let reread = try await realm.read { realm in
            try encode(realm.object(ofType: CodedEverything.self, forPrimaryKey: 7)!)
        }
        #expect(reread == json)
    }

    @Test func cyclesAreEncodedByPrimaryKeyAndComeBack() async throws {
        let a = CodedNode()
        a.name = "a"
        let b = CodedNode()
        b.name = "b"
        a.next = b
        b.next = a
        a.children.append(a)
        let json = try encode(a)
        #expect(json == #"{"children":["a"],"name":"a","next":{"children":[],"name":"b","next":"a"}}"#)
        let decoded = try JSONDecoder().decode(CodedNode.self, from: Data(json.utf8))
        #expect(decoded.next?.next === decoded)
        #expect(decoded.children.count == 1 && decoded.children[0] === decoded)
        #expect(try encode(decoded) == json)

        // The same graph, managed.
        let realm = try await open()
        let managed = try await realm.write { realm in
            try realm.add(JSONDecoder().decode(CodedNode.self, from: Data(json.utf8)))
            return try encode(realm.object(ofType: CodedNode.self, forPrimaryKey: "a")!)
        }
        #expect(managed == json)
    }

    @Test func cycleWithoutPrimaryKeyThrowsInsteadOfRecursing() throws {
        let a = CodedLoop()
        a.label = "a"
        a.other = a
        #expect(throws: EncodingError.self) { try encode(a) }
        // A chain without a cycle is fine.
        let b = CodedLoop()
        b.other = CodedLoop()
        #expect(try encode(b) == #"{"label":"","other":{"label":"","other":null}}"#)
    }

    @Test func missingKeysKeepDefaultsAndUnknownKeysAreIgnored() throws {
        let decoded = try JSONDecoder().decode(
            CodedWithInit.self, from: Data(#"{"id": 4, "color": "red", "unused": [1]}"#.utf8))
        #expect(decoded.id == 4 && decoded.title == "untitled")
        let made = CodedWithInit(id: 1, title: "One")
        #expect(try encode(made) == #"{"id":1,"title":"One"}"#)
        let designated = CodedDesignated(code: "x")
        designated.tags.append("t")
        let copy = try JSONDecoder().decode(CodedDesignated.self, from: Data(try encode(designated).utf8))
        #expect(copy.code == "x" && Array(copy.tags) == ["t"])
    }

    @Test func longChainsAreEncodedInFull() throws {
        let head = CodedNode()
        head.name = "0"
        var tail = head
        for i in 1..<200 {
            let node = CodedNode()
            node.name = String(i)
            tail.next = node
            tail = node
        }
        tail.next = head  // and a cycle back to the start
        let decoded = try JSONDecoder().decode(CodedNode.self, from: Data(try encode(head).utf8))
        var node = decoded
        for _ in 1..<200 { node = try #require(node.next) }
        #expect(node.name == "199" && node.next === decoded)
    }

    @Test func decodingErrorsNameTypeAndProperty() throws {
        func error(_ json: String) -> LiveObjectsError? {
            do {
                _ = try JSONDecoder().decode(CodedEverything.self, from: Data(json.utf8))
                return nil
            } catch {
                return error as? LiveObjectsError
            }
        }
        let wrongType = try #require(error(#"{"id": 1, "int8": "eight"}"#))
        #expect(wrongType.code == .typeMismatch && wrongType.objectType == "CodedEverything")
        #expect(wrongType.property == "int8")
        let outOfRange = try #require(error(#"{"int8": 300}"#))
        #expect(outOfRange.code == .typeMismatch && outOfRange.property == "int8")
        let nullRequired = try #require(error(#"{"string": null}"#))
        #expect(nullRequired.code == .typeMismatch && nullRequired.property == "string")
        let nested = try #require(error(#"{"friend": {"name": 5}}"#))
        #expect(nested.code == .typeMismatch && nested.objectType == "CodedNode" && nested.property == "name")
        let dangling = try #require(error(#"{"friend": "zed"}"#))
        #expect(dangling.code == .missingValue && dangling.property == "friend")
        #expect(dangling.primaryKey == .string("zed"))
        let notAnObject = try #require(error("[1, 2]"))
        #expect(notAnObject.code == .typeMismatch && notAnObject.objectType == "CodedEverything")
    }

    @Test func dynamicObjectsEncodeFromTheSchema() async throws {
        let realm = try await open()
        let (typed, dynamic) = try await realm.write { realm in
            let decoded = try JSONDecoder().decode(
                CodedEverything.self, from: Data(try encode(filledEverything()).utf8))
            try realm.add(decoded)
            let typed = try encode(realm.object(ofType: CodedEverything.self, forPrimaryKey: 7)!)
            return (typed, try encode(realm.dynamicResults("CodedEverything")[0]))
        }
        #expect(dynamic == typed)

        // A realm opened from a schema alone, without model classes.
        let schema = Schema([
            ObjectSchema(
                name: "Item",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true),
                    Property(name: "tags", type: .string, isList: true),
                    Property(name: "parent", type: .object, isOptional: true, objectType: "Item"),
                ])
        ])
        let plain = try await Realm.open(.init(identifier: "codable-schema-\(UUID())", schema: schema))
        let json = try await plain.write { realm in
            let one = try realm.dynamicCreate("Item", value: ["id": .int(1), "tags": .list([.string("a")])])
            try one.set("parent", to: .int(1))
            return try encode(realm.dynamicResults("Item")[0])
        }
        #expect(json == #"{"id":1,"parent":1,"tags":["a"]}"#)
    }

    @Test func deletedObjectDoesNotEncode() async throws {
        let realm = try await open()
        let code = try await realm.write { realm -> LiveObjectsError.Code? in
            let node = try realm.create(CodedNode.self, value: ["name": "gone"])
            try realm.delete(node)
            do {
                _ = try encode(node)
                return nil
            } catch {
                return (error as? LiveObjectsError)?.code
            }
        }
        #expect(code == .objectInvalidated)
    }
}
