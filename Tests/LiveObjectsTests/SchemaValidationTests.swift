import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

final class TwoKeys: Object {
    @Persisted(primaryKey: true) var a = 0
    @Persisted(primaryKey: true) var b = 0
}

final class FloatKey: Object {
    @Persisted(primaryKey: true) var a: Float = 0
}

final class KeyedEmbedded: EmbeddedObject {
    @Persisted(primaryKey: true) var a = 0
}

final class BadInverse: Object {
    @Persisted(originProperty: "nope") var owners: LinkingObjects<Person>
}

final class WrongInverse: Object {
    @Persisted(originProperty: "name") var owners: LinkingObjects<Person>
}

final class NonOptionalLink: Object {
    @Persisted var person: Person
}

final class LinksOutside: Object {
    @Persisted var dog: Dog?
}

@Suite struct SchemaValidationTests {
    func openError(_ types: [Object.Type]) async -> LiveObjectsError? {
        do {
            _ = try await openFreshRealm("invalid", objectTypes: types)
            return nil
        } catch {
            return error
        }
    }

    @Test func twoPrimaryKeys() async {
        let error = await openError([TwoKeys.self])
        #expect(error?.code == .invalidSchema && error?.objectType == "TwoKeys" && error?.property == "b")
    }

    @Test func unsupportedPrimaryKeyType() async {
        let error = await openError([FloatKey.self])
        #expect(error?.code == .invalidSchema && error?.objectType == "FloatKey" && error?.property == "a")
    }

    @Test func primaryKeyOnEmbedded() async {
        let error = await openError([KeyedEmbedded.self])
        #expect(error?.code == .invalidSchema && error?.objectType == "KeyedEmbedded")
    }

    @Test func linkingObjectsToMissingProperty() async {
        let error = await openError(petModelTypes + [BadInverse.self])
        #expect(error?.code == .invalidSchema && error?.objectType == "BadInverse" && error?.property == "owners")
        #expect(error?.message.contains("does not exist") == true)
    }

    @Test func linkingObjectsToNonLink() async {
        let error = await openError(petModelTypes + [WrongInverse.self])
        #expect(error?.code == .invalidSchema && error?.message.contains("not a link") == true)
    }

    @Test func nonOptionalToOneLink() async {
        let error = await openError(petModelTypes + [NonOptionalLink.self])
        #expect(error?.code == .invalidSchema && error?.property == "person")
    }

    @Test func linkToTypeOutsideTheRealm() async {
        let error = await openError([LinksOutside.self])
        #expect(error?.code == .invalidSchema && error?.objectType == "LinksOutside" && error?.property == "dog")
        #expect(error?.description.contains("LinksOutside.dog") == true)
    }

    @Test func dynamicSchemaRules() {
        let bad = Schema([
            ObjectSchema(
                name: "A",
                properties: [
                    Property(name: "x", type: .double, isIndexed: false, deleteRule: .cascade)
                ])
        ])
        #expect(throws: LiveObjectsError.self) { try bad.validate() }
        let good = Schema([
            ObjectSchema(
                name: "A",
                properties: [
                    Property(name: "id", type: .int, isPrimaryKey: true),
                    .link("b", to: "B", deleteRule: .cascade),
                ]),
            ObjectSchema(name: "B", properties: [.linkingObjects("as", from: "A", property: "b")]),
        ])
        #expect(throws: Never.self) { try good.validate() }
    }

    @Test func reopeningWithAnotherSchemaFails() async throws {
        let id = "reopen-\(UUID())"
        let realm = try await Realm.open(.init(identifier: id, objectTypes: petModelTypes))
        await #expect(throws: LiveObjectsError.self) {
            _ = try await Realm.open(.init(identifier: id, objectTypes: [StringKeyed.self]))
        }
        _ = realm
    }
}
