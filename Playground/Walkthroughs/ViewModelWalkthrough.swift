import Foundation
import LiveObjects
import Observation

/// `viewmodel`: a realm on the main actor, a view model holding live results, and Observation
/// telling it about the writes of a background task.
enum ViewModelWalkthrough: Walkthrough {
    static let name = "viewmodel"
    static let summary =
        "a main-actor view model showing live results, told by Observation when a background task writes"

    final class Chore: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var title = ""
        @Persisted var isDone = false
    }

    /// A view model as a SwiftUI app has one: on the main actor, observable, keeping live
    /// results and deriving what the view shows.
    @MainActor @Observable final class ChoreListModel {
        let open: Results<Chore>
        let realm: Realm

        init(realm: Realm) {
            self.realm = realm
            open = realm.access { $0.objects(Chore.self).where { !$0.isDone }.sorted(by: \.id) }
        }

        /// What the view's body reads.
        var rows: [String] { open.map(\.title) }

        /// A button's action: a write, synchronously, on the main actor.
        func complete(_ id: Int) throws {
            try realm.access { realm in
                try realm.write { realm in realm.object(ofType: Chore.self, forPrimaryKey: id)?.isDone = true }
            }
        }
    }

    /// Counts the times a tracked read was told of a change, as a view's re-render would be.
    @MainActor final class RenderCounter {
        var renders = 0
        var seen: [[String]] = []

        /// Reads the model as a view's body does, and reads it again when told.
        func render(_ model: ChoreListModel) {
            renders += 1
            let rows = withObservationTracking {
                model.rows
            } onChange: {
                Task { @MainActor in self.render(model) }
            }
            seen.append(rows)
        }
    }

    static func run(_ narrator: Narrator) async throws {
        try await runOnMain(narrator)
    }

    @MainActor
    static func runOnMain(_ narrator: Narrator) async throws {
        narrator.step("Open the realm on the main actor.")
        narrator.code(
            """
            let realm = try await Realm.open(configuration, on: MainActor.shared)
            """)
        let realm = try await Realm.open(
            .init(identifier: "playground.viewmodel.\(UUID())", objectTypes: [Chore.self]), on: MainActor.shared)

        narrator.step("A view model keeps live results, read without await.")
        narrator.code(
            """
            @MainActor @Observable final class ChoreListModel {
                let open: Results<Chore>
                init(realm: Realm) {
                    open = realm.access { $0.objects(Chore.self).where { !$0.isDone }.sorted(by: \\.id) }
                }
                var rows: [String] { open.map(\\.title) }
            }
            """)
        let model = ChoreListModel(realm: realm)
        let view = RenderCounter()
        view.render(model)
        try narrator.expect(view.seen.last ?? ["?"], [], "the list starts empty")

        narrator.step("A background task writes; Observation tells the view, which reads again.")
        try await Task.detached {
            try await realm.write { realm in
                for (id, title) in [(1, "Buy milk"), (2, "Walk Rex"), (3, "Call Ann")] {
                    _ = try realm.create(Chore.self, value: ["id": id, "title": title])
                }
            }
        }.value
        try await waitForRender(view, count: 2)
        narrator.say("The view shows \(view.seen.last ?? []).")
        try narrator.expect(
            view.seen.last ?? [], ["Buy milk", "Walk Rex", "Call Ann"], "the view re-rendered with the new chores")

        narrator.step("A button completes a chore: a synchronous write on the main actor.")
        narrator.code("try model.complete(2)")
        try model.complete(2)
        try await waitForRender(view, count: 3)
        try narrator.expect(view.seen.last ?? [], ["Buy milk", "Call Ann"], "the done chore left the list")

        narrator.step("Other tasks still read the realm with await.")
        let done = try await Task.detached {
            try await realm.read { $0.objects(Chore.self).where { $0.isDone }.map(\.title) }
        }.value
        try narrator.expect(done, ["Walk Rex"], "a background read sees the main actor's write")
    }

    /// Lets the main actor run the re-render that Observation scheduled.
    @MainActor
    static func waitForRender(_ view: RenderCounter, count: Int) async throws {
        let deadline = Date().addingTimeInterval(600)
        while view.renders < count && Date() < deadline { try await Task.sleep(for: .milliseconds(1)) }
    }
}
