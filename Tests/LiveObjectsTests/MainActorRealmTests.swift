import Foundation
import LiveObjects
import LiveObjectsTestSupport
import Observation
import Testing

/// A view model as a SwiftUI app writes one: on the main actor, holding live results.
@MainActor @Observable final class DogListModel {
    let dogs: Results<Dog>

    init(realm: Realm) {
        dogs = realm.access { $0.objects(Dog.self).sorted(by: \.id) }
    }

    var names: [String] { dogs.map(\.name) }
}

/// A realm opened on the main actor: main-actor code reads live objects and results without
/// `await`, and Observation tells it about the commits that other tasks make.
@Suite @MainActor struct MainActorRealmTests {
    func openOnMain(_ name: String = #function) async throws -> Realm {
        try await Realm.open(.init(identifier: "\(name)-\(UUID())", objectTypes: petModelTypes), on: MainActor.shared)
    }

    /// Waits for the next change that `read` tracks (the framework calls `onChange` once);
    /// records an issue if none comes within ten minutes (far beyond any expected wait: it
    /// only keeps a missing change from hanging the suite).
    func nextChange(of read: () -> Void, after write: @Sendable () async throws -> Void) async throws {
        let (told, continuation) = AsyncStream<Bool>.makeStream()
        withObservationTracking(read) { continuation.yield(true) }
        try await write()
        let watchdog = Task {
            try await Task.sleep(for: .seconds(600))
            continuation.yield(false)
        }
        var wasTold = false
        for await value in told {
            wasTold = value
            break
        }
        watchdog.cancel()
        #expect(wasTold, "Observation did not report the change")
    }

    @Test func aViewModelReadsLiveResultsAndIsToldOfAnotherTasksWrites() async throws {
        let realm = try await openOnMain()
        let model = DogListModel(realm: realm)
        #expect(model.names.isEmpty)
        try await nextChange(of: { _ = model.names }) {
            try await Task.detached {
                try await realm.write { realm in
                    _ = try realm.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 3])
                    _ = try realm.create(Dog.self, value: ["id": 2, "name": "Fido", "age": 1])
                }
            }.value
        }
        #expect(model.names == ["Rex", "Fido"])
        #expect(model.dogs.count == 2)

        // A live object kept on the main actor: a property another task changes is told.
        let rex = liveDog(1, in: realm)
        try await nextChange(of: { _ = rex.age }) {
            try await Task.detached {
                try await realm.write { realm in realm.object(ofType: Dog.self, forPrimaryKey: 1)?.age = 4 }
            }.value
        }
        #expect(rex.age == 4)

        // Main-actor code writes synchronously too.
        try realm.access { realm in
            try realm.write { realm in realm.object(ofType: Dog.self, forPrimaryKey: 2)?.name = "Fido II" }
        }
        #expect(model.names == ["Rex", "Fido II"])
        #expect(try await realm.read { $0.objects(Dog.self).count } == 2)
    }

    func liveDog(_ id: Int, in realm: Realm) -> Dog {
        realm.access { realm in realm.object(ofType: Dog.self, forPrimaryKey: id) }!
    }

    @Test func anIdentifierOpenOnAnotherActorIsRefused() async throws {
        let identifier = "elsewhere-\(UUID())"
        let realm = try await Realm.open(.init(identifier: identifier, objectTypes: petModelTypes))
        var code: LiveObjectsError.Code?
        do {
            _ = try await Realm.open(.init(identifier: identifier, objectTypes: petModelTypes), on: MainActor.shared)
        } catch {
            code = error.code
        }
        #expect(code == .schemaMismatch)
        #expect(try await Realm.open(.init(identifier: identifier, objectTypes: petModelTypes)) === realm)
    }
}
