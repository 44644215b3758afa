import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import Testing

@testable import LiveObjectsSyncServer

/// Seeded random pushes by three writers into a team space with rules (RulesTests' boards and
/// tasks): every receipt must be what a plain model of the rules says (applied, refused, or
/// deleted on the server), and after every few pushes every device must hold exactly the
/// objects its user may read, at their versions (RulesTests.readable). `SYNC_RULES_SEED`
/// replays a run; a failure prints its seed and the pushes.
@Suite struct RulesRandomTests {
    /// The team's objects as the rules see them: live boards and tasks.
    struct Model {
        var boards: [String: (owner: String, members: [String])] = [:]
        var tasks: [String: (owner: String, board: String?)] = [:]

        func isMember(_ user: String, of board: String?) -> Bool {
            board.flatMap { boards[$0] }?.members.contains(user) ?? false
        }

        /// The outcome the server must give a change, and the change applied to the model.
        mutating func apply(_ step: Step) -> String {
            let user = step.user
            switch step.object {
            case .board(let id, let owner, let members):
                let live = boards[id]
                if let live, live.owner != user { return "rejected forbidden" }
                if step.kind == .delete {
                    boards[id] = nil
                    return "applied"
                }
                if owner != user { return "rejected forbidden" }
                if live == nil && step.kind == .update { return "deletedOnServer" }
                boards[id] = (owner, members)
                return "applied"
            case .task(let id, let owner, let board):
                let live = tasks[id]
                if let live, !isMember(user, of: live.board) { return "rejected forbidden" }
                if step.kind == .delete {
                    tasks[id] = nil
                    return "applied"
                }
                if !isMember(user, of: board) { return "rejected forbidden" }
                if live == nil && step.kind == .update { return "deletedOnServer" }
                tasks[id] = (owner, board)
                return "applied"
            }
        }
    }

    struct Step: CustomStringConvertible {
        enum Object {
            case board(id: String, owner: String, members: [String])
            case task(id: String, owner: String, board: String?)
        }
        var user: String
        var kind: SyncChange.Kind
        var object: Object

        var description: String { "\(user) \(kind) \(object)" }

        func change(_ key: String) -> SyncChange {
            switch object {
            case .board(let id, let owner, let members):
                RulesTests.board(key, id, owner: owner, members: members, kind: kind)
            case .task(let id, let owner, let board):
                RulesTests.task(key, id, owner: owner, board: board, kind: kind)
            }
        }
    }

    static func randomStep(_ users: [String], _ random: inout SyncSeededGenerator) -> Step {
        let user = users.randomElement(using: &random)!
        let kinds: [SyncChange.Kind] = [.create, .create, .update, .update, .delete]
        let kind = kinds.randomElement(using: &random)!
        // The owner is most often the pushing user, so that boards get made.
        let owner = Int.random(in: 0..<3, using: &random) == 0 ? users.randomElement(using: &random)! : user
        if Bool.random(using: &random) {
            let members = users.filter { _ in Bool.random(using: &random) }
            return Step(
                user: user, kind: kind,
                object: .board(id: "b\(Int.random(in: 0..<3, using: &random))", owner: owner, members: members))
        }
        let board = Int.random(in: 0..<4, using: &random)
        return Step(
            user: user, kind: kind,
            object: .task(
                id: "t\(Int.random(in: 0..<5, using: &random))", owner: owner, board: board == 3 ? nil : "b\(board)"))
    }

    @Test func randomPushesAndPullsFollowTheRules() async throws {
        let seed =
            ProcessInfo.processInfo.environment["SYNC_RULES_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...999_999)
        var random = SyncSeededGenerator(seed: seed)
        let server = try await ServerHarness.start(types: ["Board", "TaskItem"])
        defer { Task { await server.stop() } }
        let users = try await RulesTests.team(server, [("ann", .writer), ("bob", .writer), ("cat", .writer)])
        let names = users.map(\.name)
        var devices = users.map { RulesTests.Device(transport: server.transport($0.token)) }
        var model = Model()
        var log: [String] = []
        func context() -> Comment {
            Comment(rawValue: "seed \(seed) (replay: SYNC_RULES_SEED=\(seed)); pushes:\n" + log.joined(separator: "\n"))
        }
        var key = 0
        for round in 0..<60 {
            let steps = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                Self.randomStep(names, &random)
            }
            // One push per user in a round: its changes in one batch.
            let user = steps[0].user
            let batch = steps.map { Step(user: user, kind: $0.kind, object: $0.object) }
            let changes = batch.map { step -> SyncChange in
                key += 1
                return step.change("k\(key)")
            }
            let expected = batch.map { model.apply($0) }
            let token = users[names.firstIndex(of: user)!].token
            let found = RulesTests.outcomes(try await server.transport(token).push(changes))
            log.append("round \(round): " + batch.map(\.description).joined(separator: "; ") + " -> \(found)")
            #expect(found == expected, context())
            guard found == expected else { return }
            if round % 2 == 1 {
                for index in devices.indices {
                    try await devices[index].sync()
                    let readable = try await RulesTests.readable(by: names[index], server)
                    #expect(devices[index].objects == readable, "\(names[index]) after round \(round); \(context())")
                }
            }
        }
    }
}
