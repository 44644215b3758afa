import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Testing

/// Inputs the predicate fuzz target (Fuzz/) found wrong, kept so they stay fixed.
@Suite struct FuzzRegressionQueryTests {
    /// `owners == owners` crashed the query engine: the schema (read from a file) declared
    /// `LinkingObjects` without `list`, which validation let through and the engine read as a
    /// to-one link. Such a schema is now invalid.
    @Test func linkingObjectsThatIsNotAListIsAnInvalidSchema() async throws {
        for (isList, isOptional) in [(false, false), (false, true), (true, true)] {
            let schema = Schema([
                ObjectSchema(name: "Person", properties: [.list("dogs", of: "Dog")]),
                ObjectSchema(
                    name: "Dog",
                    properties: [
                        Property(
                            name: "owners", type: .linkingObjects, isOptional: isOptional, isList: isList,
                            objectType: "Person", originProperty: "dogs")
                    ]),
            ])
            do {
                _ = try await Realm.open(.init(identifier: "fuzz-\(UUID())", schema: schema))
                Issue.record("list \(isList), optional \(isOptional): the schema was accepted")
            } catch {
                #expect(error.code == .invalidSchema)
                #expect(error.property == "owners")
            }
        }
    }

    /// The same predicates on a valid schema: comparing a collection with itself, and a list
    /// of links with LinkingObjects, evaluate without crashing.
    @Test func comparingCollectionsWithThemselves() async throws {
        let realm = try await openPets("fuzz")
        try await realm.write { r in
            let ann = try r.create(Person.self, value: ["id": 1, "name": "Ann"])
            let rex = try r.create(Dog.self, value: ["id": 1, "name": "Rex"])
            ann.dogs.append(rex)
            _ = try r.create(Dog.self, value: ["id": 2, "name": "Fido"])
        }
        for (type, predicate) in [
            ("Dog", "walkers == walkers"), ("Dog", "walkers != walkers"), ("Person", "dogs == dogs"),
            ("Dog", "walkers == SELF"), ("Dog", "ANY walkers == walkers"),
        ] {
            let outcome: Result<Int, LiveObjectsError> = try await realm.read { r in
                do throws(LiveObjectsError) {
                    return .success(try r.dynamicResults(type).filter(predicate).count)
                } catch { return .failure(error) }
            }
            if case .failure(let error) = outcome {
                #expect(error.code == .invalidQuery, "\(predicate): \(error)")
            }
        }
    }
}
