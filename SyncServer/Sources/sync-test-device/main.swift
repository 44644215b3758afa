// A device for the sync server's end-to-end tests, in a process of its own: a realm kept in a
// file, a sync engine and an HTTP transport to the server, driven by commands on standard input,
// one answer line per command on standard output.
//
//   sync-test-device --realm PATH --server URL --space NAME --token TOKEN --name DEVICE
//                    [--log PATH] [--kill-after-push-responses N] [--kill-after-pulls N]
//                    [--page-size N]
//
// Commands:
//   board             creates the shared board (one device does, before the others pull it)
//   edit SEED COUNT   COUNT random edits of cards and holders, and of the board's lists when the
//                     device has the board: appends, removals and moves (seeded; ids start with
//                     DEVICE)
//   drops RATE SEED   from now on, lose each response with probability RATE (the request is
//                     served; the device sees an error), drawn from SEED
//   sync              one engine sync; open conflicts are then settled (seeded by the edits);
//                     `error …` when its pull failed
//   dump              the holders, cards and boards (their lists in order), one line each,
//                     then `end`
//   quit
//
// With --log, every push (its keys) and pull (its cursor) is written to the log before it is
// sent, and every push response (the keys acknowledged) when it arrives, before the engine sees
// it; each line is synced. Before a push, each list it carries is logged too, as what the change
// does to the server's list, by element: `list KEY PROPERTY +x -y` (elements the sent list holds
// more often than its base, and less often; a list without a base adds all of its elements),
// and each deletion, `delete TYPE ID`. --kill-after-push-responses N kills the process (SIGKILL) right after
// the N-th push response is logged, --kill-after-pulls N right after the N-th pull answer.
// --page-size N pulls N changes a page (7 by default): small pages bring cards before the
// holders they link to.
import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncTestSupport
import Persistence

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The models (Holder, Card, Board) and the seeded generator are LiveObjectsSyncTestSupport's,
// shared with the tests.

struct LostResponse: Error, CustomStringConvertible {
    var description: String { "the response was lost" }
}

/// The test's log: one synced line per event.
final class EventLog: @unchecked Sendable {
    // @unchecked: written only from the transport actor.
    private let handle: FileHandle?

    init(path: String?) {
        guard let path else {
            handle = nil
            return
        }
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        handle = FileHandle(forWritingAtPath: path)
        handle?.seekToEndOfFile()
    }

    func write(_ line: String) {
        guard let handle else { return }
        handle.write(Data((line + "\n").utf8))
        try? handle.synchronize()
    }
}

/// The HTTP transport, with lost responses, the log and the kill points.
actor TestTransport: SyncTransport {
    let base: HTTPSyncTransport
    let log: EventLog
    var dropRate = 0.0
    var generator = SyncSeededGenerator(seed: 1)
    var pushResponses = 0
    var pulls = 0
    let killAfterPushResponses: Int?
    let killAfterPulls: Int?

    init(base: HTTPSyncTransport, log: EventLog, killAfterPushResponses: Int?, killAfterPulls: Int?) {
        self.base = base
        self.log = log
        self.killAfterPushResponses = killAfterPushResponses
        self.killAfterPulls = killAfterPulls
    }

    func setDrops(_ rate: Double, seed: UInt64) {
        dropRate = rate
        generator = SyncSeededGenerator(seed: seed)
    }

    private func drawLoss() -> Bool {
        dropRate > 0 && Double(generator.next() % 1_000_000) / 1_000_000 < dropRate
    }

    func push(_ changes: [SyncChange]) async throws -> [SyncReceipt] {
        for change in changes {
            if change.kind == .delete, case .string(let id) = change.object.primaryKey {
                log.write("delete \(change.object.typeName) \(id)")
            }
            for (property, value) in change.values.sorted(by: { $0.key < $1.key }) {
                guard let sent = listElements(value) else { continue }
                let base = change.bases[property].flatMap(listElements) ?? []
                let added = sent.subtractingOccurrences(base).map { "+" + $0 }
                let removed = base.subtractingOccurrences(sent).map { "-" + $0 }
                log.write((["list", change.idempotencyKey, property] + added + removed).joined(separator: " "))
            }
        }
        log.write("push " + changes.map(\.idempotencyKey).joined(separator: " "))
        let receipts = try await base.push(changes)
        let acknowledged = receipts.filter {
            if case .rejected = $0.outcome { return false }
            return true
        }
        log.write("ack " + acknowledged.map(\.idempotencyKey).joined(separator: " "))
        pushResponses += 1
        if pushResponses == killAfterPushResponses { kill(getpid(), SIGKILL) }
        if drawLoss() { throw LostResponse() }
        return receipts
    }

    func pull(after cursor: String?) async throws -> SyncPull {
        log.write("pull \(cursor ?? "-")")
        let pulled = try await base.pull(after: cursor)
        pulls += 1
        if pulls == killAfterPulls { kill(getpid(), SIGKILL) }
        if drawLoss() { throw LostResponse() }
        return pulled
    }
}

/// A list's elements as the log names them (a string, or a link's target id), nil for a value
/// that is not a list.
func listElements(_ value: SyncValue) -> [String]? {
    switch value {
    case .value(.list(let elements)):
        elements.map {
            if case .string(let text) = $0 { text } else { "\($0)" }
        }
    case .references(let references):
        references.map {
            if case .string(let id) = $0.object.primaryKey { id } else { "\($0.object.primaryKey)" }
        }
    case .value, .reference, .map, .referenceMap, .mixed, .mixedList, .mixedMap: nil
    }
}

extension Array where Element == String {
    /// The elements of this array left after taking out, occurrence by occurrence, those of
    /// another.
    func subtractingOccurrences(_ other: [String]) -> [String] {
        var counts: [String: Int] = [:]
        for element in other { counts[element, default: 0] += 1 }
        return filter { element in
            guard let count = counts[element], count > 0 else { return true }
            counts[element] = count - 1
            return false
        }
    }
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}

func required(_ name: String) -> String {
    guard let value = option(name) else {
        FileHandle.standardError.write(Data("missing \(name)\n".utf8))
        exit(64)
    }
    return value
}

func answer(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Random edits: new cards and holders, changed names, discounts and owners, renamed holders,
/// deletions; on the board (once the device has it), appended, removed and moved tags and cards.
func edit(_ realm: Realm, device: String, seed: UInt64, count: Int) async throws {
    try await realm.write { realm in
        var random = SyncSeededGenerator(seed: seed)
        let holderID = "\(device)-holder"
        if realm.object(ofType: Holder.self, forPrimaryKey: holderID) == nil {
            _ = try realm.create(Holder.self, value: ["id": holderID, "name": device])
        }
        for step in 0..<count {
            let cards = Array(realm.objects(Card.self))
            let holders = Array(realm.objects(Holder.self))
            if let board = realm.objects(Board.self).first, random.next() % 3 == 0 {
                editLists(of: board, cards: cards, tag: "\(device).\(seed).\(step)", random: &random)
                continue
            }
            let roll = random.next() % 100
            if roll < 40 || cards.isEmpty {
                let card = Card()
                card.id = "\(device)-\(seed)-\(step)"
                card.name = "card \(random.next() % 1000)"
                card.discount = Int(random.next() % 50)
                card.owner = holders.randomElement(using: &random)
                _ = try realm.add(card)
            } else if roll < 65 {
                cards.randomElement(using: &random)!.discount = Int(random.next() % 50)
            } else if roll < 80 {
                cards.randomElement(using: &random)!.name = "renamed \(random.next() % 1000)"
            } else if roll < 88 {
                cards.randomElement(using: &random)!.owner =
                    random.next() % 4 == 0 ? nil : holders.randomElement(using: &random)
            } else if roll < 92 {
                // A holder renamed: its new version comes after the cards that link to it.
                holders.randomElement(using: &random)!.name = "\(device)-\(random.next() % 1000)"
            } else {
                try realm.delete(cards.randomElement(using: &random)!)
            }
        }
    }
}

/// One edit of the board's lists: an append (most often), a removal or a move, of a tag or of a
/// card.
func editLists(of board: Board, cards: [Card], tag: String, random: inout SyncSeededGenerator) {
    let roll = random.next() % 100
    if roll < 30 {
        board.tags.append(tag)
    } else if roll < 50, let card = cards.randomElement(using: &random) {
        board.cards.append(card)
    } else if roll < 65, !board.tags.isEmpty {
        board.tags.remove(at: Int(random.next() % UInt64(board.tags.count)))
    } else if roll < 75, !board.cards.isEmpty {
        board.cards.remove(at: Int(random.next() % UInt64(board.cards.count)))
    } else if roll < 90, board.tags.count > 1 {
        let count = UInt64(board.tags.count)
        board.tags.move(from: Int(random.next() % count), to: Int(random.next() % count))
    } else if board.cards.count > 1 {
        let count = UInt64(board.cards.count)
        board.cards.move(from: Int(random.next() % count), to: Int(random.next() % count))
    } else {
        board.tags.append(tag)
    }
}

func dump(_ realm: Realm) async throws -> [String] {
    try await realm.read { realm in
        realm.objects(Board.self).map {
            "board \($0.id) tags \($0.tags.joined(separator: ",")) cards \($0.cards.map(\.id).joined(separator: ","))"
        }
        .sorted()
            + realm.objects(Holder.self).map { "holder \($0.id) \($0.name)" }.sorted()
            + realm.objects(Card.self).map {
                "card \($0.id) \($0.name.replacingOccurrences(of: " ", with: "_")) \($0.discount) \($0.owner?.id ?? "-")"
            }
            .sorted()
    }
}

let realmPath = required("--realm")
let device = required("--name")
guard let serverURL = URL(string: required("--server")) else { exit(64) }
let http = HTTPSyncTransport(
    configuration: .init(
        baseURL: serverURL, space: required("--space"), requestTimeout: .seconds(20), longPollWait: .seconds(1),
        pageSize: option("--page-size").flatMap { Int($0) } ?? 7, token: { [token = required("--token")] _ in token }))
let transport = TestTransport(
    base: http, log: EventLog(path: option("--log")),
    killAfterPushResponses: option("--kill-after-push-responses").flatMap { Int($0) },
    killAfterPulls: option("--kill-after-pulls").flatMap { Int($0) })

var configuration = Realm.Configuration(
    file: URL(fileURLWithPath: realmPath), objectTypes: [Holder.self, Card.self, Board.self])
configuration.keepsHistory = true
let realm = try await Realm.open(configuration)
// Small batches, so that a round has several; one attempt each, so that a lost response ends the
// round (the next `sync` sends the rest).
let engine = try await SyncEngine(
    realm: realm, transport: transport, types: [Holder.self, Card.self, Board.self],
    configuration: .init(maxAttempts: 1, batchSize: 5, sleep: { _ in }))
var settle = SyncSeededGenerator(seed: 7)
answer("ready")

while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    guard let command = words.first else { continue }
    do {
        switch command {
        case "edit":
            try await edit(realm, device: device, seed: UInt64(words[1])!, count: Int(words[2])!)
            settle = SyncSeededGenerator(seed: UInt64(words[1])!)
            answer("ok")
        case "board":
            try await realm.write { realm in
                _ = try realm.create(Board.self, value: ["id": "board"], update: .modified)
            }
            answer("ok")
        case "drops":
            await transport.setDrops(Double(words[1])!, seed: UInt64(words[2])!)
            answer("ok")
        case "sync":
            let report = try await engine.sync()
            for conflict in await engine.conflictsToResolve {
                try await engine.resolve(
                    conflict.object, with: settle.next() % 2 == 0 ? .acceptDeletion : .keepLocal)
            }
            // A failed pull is reported, not thrown: answered as an error, as a failed sync.
            if let failure = report.pullFailure {
                answer("error pull failed: \(failure)".replacingOccurrences(of: "\n", with: " "))
            } else {
                answer(
                    "ok pushed \(report.pushed) pulled \(report.pulled) conflicts \(report.conflicts) failed \(report.failed.count)"
                )
            }
        case "dump":
            for entry in try await dump(realm) { answer(entry) }
            answer("end")
        case "quit":
            try await realm.close()
            answer("bye")
            exit(0)
        default:
            answer("error unknown command \(command)")
        }
    } catch {
        answer("error \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
    }
}
try await realm.close()
