import Foundation
import LiveObjects

/// Generates operation sequences from a seed. It keeps a ``ReferenceModel`` of the state the
/// sequence has reached so that most steps name objects, list positions and notes that exist,
/// while some name missing ones, reach out of bounds, or break a rule on purpose.
///
/// The same seed always gives the same sequence.
package struct OperationGenerator {
    /// Node ids are drawn from `0..<nodeIDs`, part ids from `"p0"..<"p\(partIDs)"`: few enough
    /// that links, duplicates and collisions are frequent.
    static let nodeIDs = 10
    static let partIDs = 8
    /// Decimals the store must keep exactly: equal values spelled apart (2.5, 2.50), digits past
    /// what `Double` holds, a long integer, tiny and negative ones.
    static let amounts: [Decimal] = [
        "0", "2.5", "2.50", "0.30000000000000000000000000001", "-12345678901234567890123456789.25", "1e-30",
    ].map { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX"))! }
    /// A few object ids, so that a node often gets one another node has.
    static let codes: [ObjectID] = ["507f1f77bcf86cd799439011", "000000000000000000000001", "ffffffffffffffffffffffff"]
        .map { ObjectID(hex: $0)! }

    private var rng: SeededRandomNumberGenerator
    /// The state the operations generated so far lead to.
    package private(set) var model = ReferenceModel()

    package init(seed: UInt64) {
        rng = SeededRandomNumberGenerator(seed: seed)
    }

    /// The first `count` operations of the sequence of a seed.
    package static func operations(seed: UInt64, count: Int) -> [PropertyOperation] {
        var generator = OperationGenerator(seed: seed)
        return (0..<count).map { _ in generator.next() }
    }

    /// The next operation.
    package mutating func next() -> PropertyOperation {
        let roll = rng.below(100)
        let operation: PropertyOperation
        if roll < 8 {
            operation = .throwingWrite(steps(rng.int(in: 1...3)))
        } else if roll < 12 {
            operation = .cancelledWrite(steps(rng.int(in: 1...3)))
        } else if roll < 18 {
            operation = .manualWrite(steps(rng.int(in: 1...4)))
        } else if roll < 28 {
            operation = .write(steps(rng.int(in: 2...5)))
        } else {
            operation = .write(steps(1))
        }
        _ = model.apply(operation)
        return operation
    }

    /// Steps for one write; each sees the state the ones before it lead to.
    private mutating func steps(_ count: Int) -> [Step] {
        var scratch = model
        var result: [Step] = []
        for _ in 0..<count {
            let step = self.step(scratch)
            if case .thrown = scratch.apply(step) {
                result.append(step)
                break
            }
            result.append(step)
        }
        return result
    }

    // MARK: Steps

    /// Draws the next step for the model's state: its kind, its API, then its arguments.
    private mutating func step(_ m: ReferenceModel) -> Step {
        let kind = drawKind(m)
        let api: API = rng.chance(50) ? .typed : .dynamic
        switch kind {
        case .createNode, .upsertNode, .addNode, .createPart, .updateNode, .setAmount, .setLabel, .changeID, .setNext,
            .setPinned, .setSub, .deleteNodes, .deletePart, .deleteAll, .touchDeleted, .nestedWrite:
            return objectStep(kind, m, api: api)
        case .insertFriend, .removeFriend, .moveFriend, .replaceFriend, .insertNumber, .removeNumber, .moveNumber,
            .setFriends, .swapFriends, .clearList, .appendPart, .removePart:
            return listStep(kind, m, api: api)
        case .setNote, .appendNote, .removeNote, .moveNote, .setNotes, .replaceNote, .editNote, .setNoteRef,
            .appendSubnote, .adoptNote, .deleteNote:
            return noteStep(kind, m, api: api)
        case .insertLabel, .removeLabel, .insertAlly, .removeAlly, .setAttr, .removeAttr, .setPayload, .setMate,
            .removeMate:
            return collectionStep(kind, m, api: api)
        }
    }

    /// Draws the kind of the next step, weighted by the size of the graph.
    private mutating func drawKind(_ m: ReferenceModel) -> Kind {
        let nodeCount = m.nodes.count
        let partCount = m.parts.count
        // Weights: grow while the graph is small, churn once it is full.
        let kinds: [(Int, Kind)] = [
            (nodeCount < 4 ? 30 : nodeCount < Self.nodeIDs - 2 ? 8 : 2, .createNode),
            (3, .upsertNode), (3, .addNode),
            (partCount < 3 ? 14 : partCount < Self.partIDs - 2 ? 5 : 1, .createPart),
            (6, .updateNode), (3, .setAmount), (2, .setLabel), (1, .changeID),
            (6, .setNext), (4, .setPinned), (3, .setSub),
            (6, .insertFriend), (3, .removeFriend), (3, .moveFriend), (2, .replaceFriend),
            (3, .insertNumber), (2, .removeNumber), (2, .moveNumber),
            (2, .setFriends), (1, .swapFriends), (1, .clearList), (2, .setNotes), (1, .nestedWrite),
            (5, .appendPart), (2, .removePart),
            (4, .setNote), (4, .appendNote), (2, .removeNote), (1, .moveNote), (2, .replaceNote),
            (3, .editNote), (3, .setNoteRef), (2, .appendSubnote), (2, .adoptNote), (2, .deleteNote),
            (nodeCount > 6 ? 6 : 3, .deleteNodes), (3, .deletePart), (1, .deleteAll), (1, .touchDeleted),
            (3, .insertLabel), (2, .removeLabel), (4, .insertAlly), (2, .removeAlly),
            (4, .setAttr), (2, .removeAttr), (3, .setPayload), (4, .setMate), (2, .removeMate),
        ]
        var pick = rng.below(kinds.reduce(0) { $0 + $1.0 })
        var kind = Kind.createNode
        for (weight, k) in kinds {
            if pick < weight {
                kind = k
                break
            }
            pick -= weight
        }
        return kind
    }

    /// Draws a step that creates, changes or deletes objects.
    private mutating func objectStep(_ kind: Kind, _ m: ReferenceModel, api: API) -> Step {
        switch kind {
        case .createNode:
            let id = rng.chance(85) ? freshNode(m) : anyNode(m)
            let friends = (0..<rng.int(in: 0...2)).map { _ in rng.chance(20) ? id : anyNode(m) }
            return .createNode(
                id: id, tag: tag(), score: rng.below(4), next: rng.chance(50) ? anyNode(m) : nil,
                friends: friends, note: rng.chance(25) ? note(m) : nil, api: api)
        case .upsertNode:
            return .upsertNode(
                id: rng.chance(80) ? anyNode(m) : freshNode(m), score: rng.below(4),
                friends: rng.chance(40) ? (0..<rng.int(in: 0...3)).map { _ in anyNode(m) } : nil, api: api)
        case .addNode:
            let update: AddPolicy = rng.element(of: [AddPolicy.error, .modified, .all])
            let id = rng.chance(50) ? anyNode(m) : freshNode(m)
            let friends = (0..<rng.int(in: 0...3)).map { _ in
                rng.chance(15) ? id : rng.chance(30) ? freshNode(m) : anyNode(m)
            }
            return .addNode(
                id: id, tag: tag(), friends: friends, note: rng.chance(50) ? note(m, extra: friends + [id]) : nil,
                update: update)
        case .createPart:
            let id = rng.chance(85) ? freshPart(m) : anyPart(m)
            return .createPart(
                id: id, label: label(), sub: rng.chance(40) ? (rng.chance(10) ? id : anyPart(m)) : nil,
                api: api)
        case .updateNode:
            return .updateNode(
                id: anyNode(m), tag: rng.chance(60) ? tag() : nil, score: rng.chance(60) ? rng.below(4) : nil,
                api: api)
        case .setAmount:
            return .setAmount(
                node: anyNode(m), amount: rng.chance(80) ? rng.element(of: Self.amounts) : nil,
                code: rng.chance(80) ? rng.element(of: Self.codes) : nil, api: api)
        case .setLabel:
            return .setLabel(part: anyPart(m), label: label(), api: api)
        case .changeID:
            return .changeID(node: anyNode(m), to: rng.below(Self.nodeIDs), api: api)
        case .setNext:
            return .setNext(node: anyNode(m), to: rng.chance(75) ? anyNode(m) : nil, api: api)
        case .setPinned:
            return .setPinned(node: anyNode(m), to: rng.chance(70) ? anyPart(m) : nil, api: api)
        case .setSub:
            return .setSub(part: anyPart(m), to: rng.chance(70) ? anyPart(m) : nil, api: api)
        case .deleteNodes:
            return .deleteNodes(ids: (0..<rng.int(in: 1...3)).map { _ in anyNode(m) }, api: api)
        case .deletePart:
            return .deletePart(id: anyPart(m), api: api)
        case .deleteAll:
            return .deleteAll(kind: rng.element(of: [ObjectKind.nodes, .parts, .parts, .everything]), api: api)
        case .touchDeleted:
            return .touchDeleted(node: anyNode(m), api: api)
        case .nestedWrite:
            return .nestedWrite
        default:
            preconditionFailure("objectStep: not one of its cases: \(kind)")
        }
    }

    /// Draws a step that edits a list of links, numbers or parts.
    private mutating func listStep(_ kind: Kind, _ m: ReferenceModel, api: API) -> Step {
        switch kind {
        case .insertFriend:
            let id = anyNode(m)
            return .insertFriend(
                node: id, at: position(m.nodes[id]?.friends.count ?? 0, inserting: true), friend: anyNode(m),
                api: api)
        case .removeFriend:
            let id = anyNode(m)
            return .removeFriend(node: id, at: position(m.nodes[id]?.friends.count ?? 0), api: api)
        case .moveFriend:
            let id = anyNode(m)
            let count = m.nodes[id]?.friends.count ?? 0
            return .moveFriend(node: id, from: position(count), to: position(count), api: api)
        case .replaceFriend:
            let id = anyNode(m)
            return .replaceFriend(
                node: id, at: position(m.nodes[id]?.friends.count ?? 0), friend: anyNode(m), api: api)
        case .insertNumber:
            let id = anyNode(m)
            return .insertNumber(
                node: id, at: position(m.nodes[id]?.numbers.count ?? 0, inserting: true), value: rng.below(6),
                api: api)
        case .removeNumber:
            let id = anyNode(m)
            return .removeNumber(node: id, at: position(m.nodes[id]?.numbers.count ?? 0), api: api)
        case .moveNumber:
            let id = anyNode(m)
            let count = m.nodes[id]?.numbers.count ?? 0
            return .moveNumber(node: id, from: position(count), to: position(count), api: api)
        case .setFriends:
            return .setFriends(node: anyNode(m), to: (0..<rng.int(in: 0...4)).map { _ in anyNode(m) }, api: api)
        case .swapFriends:
            let id = anyNode(m)
            let count = m.nodes[id]?.friends.count ?? 0
            return .swapFriends(node: id, i: position(count), j: position(count))
        case .clearList:
            return .clearList(node: anyNode(m), list: rng.element(of: NodeList.allCases), api: api)
        case .appendPart:
            return .appendPart(node: anyNode(m), part: anyPart(m), api: api)
        case .removePart:
            let id = anyNode(m)
            return .removePart(node: id, at: position(m.nodes[id]?.parts.count ?? 0), api: api)
        default:
            preconditionFailure("listStep: not one of its cases: \(kind)")
        }
    }

    /// Draws a step on notes.
    private mutating func noteStep(_ kind: Kind, _ m: ReferenceModel, api: API) -> Step {
        switch kind {
        case .setNote:
            return .setNote(node: anyNode(m), note: rng.chance(80) ? note(m) : nil, api: api)
        case .appendNote:
            return .appendNote(node: anyNode(m), note: note(m), api: api)
        case .removeNote:
            let id = anyNode(m)
            return .removeNote(node: id, at: position(m.nodes[id]?.notes.count ?? 0), api: api)
        case .moveNote:
            let id = anyNode(m)
            let count = m.nodes[id]?.notes.count ?? 0
            return .moveNote(node: id, from: position(count), to: position(count), api: api)
        case .setNotes:
            let id = anyNode(m)
            let count = m.nodes[id]?.notes.count ?? 0
            var keep = (0..<count).filter { _ in rng.chance(70) }
            for i in keep.indices.reversed() { keep.swapAt(i, rng.below(i + 1)) }
            if count > 0 && rng.chance(8) { keep.append(rng.below(count)) }
            return .setNotes(
                node: id, keep: keep, new: (0..<rng.int(in: 0...2)).map { _ in note(m, depth: 1) }, api: api)
        case .replaceNote:
            let id = anyNode(m)
            return .replaceNote(node: id, at: position(m.nodes[id]?.notes.count ?? 0), note: note(m))
        case .editNote:
            let (id, path) = notePath(m)
            return .editNote(node: id, path: path, text: text(), api: api)
        case .setNoteRef:
            let (id, path) = notePath(m)
            return .setNoteRef(node: id, path: path, to: rng.chance(75) ? anyNode(m) : nil, api: api)
        case .appendSubnote:
            let (id, path) = notePath(m)
            return .appendSubnote(node: id, path: path, note: note(m, depth: 1), api: api)
        case .adoptNote:
            let (id, path) = notePath(m)
            return .adoptNote(
                node: id, path: path, into: rng.chance(30) ? id : anyNode(m), asList: rng.chance(50), api: api)
        case .deleteNote:
            let (id, path) = notePath(m)
            return .deleteNote(node: id, path: path, api: api)
        default:
            preconditionFailure("noteStep: not one of its cases: \(kind)")
        }
    }

    /// Draws a step that edits a set or the map, or sets the mixed value.
    private mutating func collectionStep(_ kind: Kind, _ m: ReferenceModel, api: API) -> Step {
        let id = anyNode(m)
        let node = m.nodes[id]
        switch kind {
        case .insertLabel:
            return .insertLabel(node: id, label: setLabel(), api: api)
        case .removeLabel:
            let held = node?.labels ?? []
            return .removeLabel(
                node: id, label: !held.isEmpty && rng.chance(80) ? rng.element(of: held) : setLabel(), api: api)
        case .insertAlly:
            return .insertAlly(node: id, ally: rng.chance(15) ? id : anyNode(m), api: api)
        case .removeAlly:
            let held = node?.allies ?? []
            return .removeAlly(
                node: id, ally: !held.isEmpty && rng.chance(80) ? rng.element(of: held) : anyNode(m), api: api)
        case .setAttr:
            let key = rng.chance(5) ? rng.element(of: ["", "a.b", "$x"]) : attrKey()
            return .setAttr(node: id, key: key, value: rng.chance(25) ? nil : rng.below(5) - 2, api: api)
        case .removeAttr:
            let held = node?.attrs.keys.sorted() ?? []
            return .removeAttr(
                node: id, key: !held.isEmpty && rng.chance(80) ? rng.element(of: held) : attrKey(), api: api)
        case .setPayload:
            return .setPayload(node: id, payload: payload(), api: api)
        case .setMate:
            let key = rng.chance(5) ? rng.element(of: ["", "a.b", "$x"]) : attrKey()
            return .setMate(node: id, key: key, to: rng.chance(80) ? anyNode(m) : nil, api: api)
        case .removeMate:
            let held = node?.mates.keys.sorted() ?? []
            return .removeMate(
                node: id, key: !held.isEmpty && rng.chance(80) ? rng.element(of: held) : attrKey(), api: api)
        default:
            preconditionFailure("collectionStep: not one of its cases: \(kind)")
        }
    }

    private enum Kind {
        case createNode, upsertNode, addNode, createPart, updateNode, setAmount, setLabel, changeID
        case setNext, setPinned, setSub
        case insertFriend, removeFriend, moveFriend, replaceFriend
        case insertNumber, removeNumber, moveNumber, appendPart, removePart
        case setFriends, swapFriends, clearList, setNotes, nestedWrite
        case setNote, appendNote, removeNote, moveNote, replaceNote
        case editNote, setNoteRef, appendSubnote, adoptNote, deleteNote
        case deleteNodes, deletePart, deleteAll, touchDeleted
        case insertLabel, removeLabel, insertAlly, removeAlly, setAttr, removeAttr, setPayload, setMate, removeMate
    }

    // MARK: Values

    /// An existing node most of the time, else any id.
    private mutating func anyNode(_ m: ReferenceModel) -> Int {
        if !m.nodes.isEmpty && rng.chance(90) { return rng.element(of: m.nodes.keys.sorted()) }
        return rng.below(Self.nodeIDs)
    }

    /// An id no node has, if there is one.
    private mutating func freshNode(_ m: ReferenceModel) -> Int {
        let free = (0..<Self.nodeIDs).filter { m.nodes[$0] == nil }
        return free.isEmpty ? rng.below(Self.nodeIDs) : rng.element(of: free)
    }

    private mutating func anyPart(_ m: ReferenceModel) -> String {
        if !m.parts.isEmpty && rng.chance(90) { return rng.element(of: m.parts.keys.sorted()) }
        return "p\(rng.below(Self.partIDs))"
    }

    private mutating func freshPart(_ m: ReferenceModel) -> String {
        let free = (0..<Self.partIDs).map { "p\($0)" }.filter { m.parts[$0] == nil }
        return free.isEmpty ? "p\(rng.below(Self.partIDs))" : rng.element(of: free)
    }

    /// A list position: in range most of the time (`0...count` when inserting), else just out.
    private mutating func position(_ count: Int, inserting: Bool = false) -> Int {
        let end = inserting ? count + 1 : count
        if end > 0 && rng.chance(95) { return rng.below(end) }
        return rng.chance(20) ? -1 : end + rng.below(2)
    }

    private mutating func tag() -> String { rng.element(of: ["a", "b", "c", "d"]) }
    private mutating func text() -> String { rng.element(of: ["x", "y", "z"]) }
    private mutating func label() -> String? { rng.element(of: [String?](["red", "green", "blue", nil])) }
    private mutating func setLabel() -> String { rng.element(of: ["red", "green", "Green", "blå", ""]) }
    private mutating func attrKey() -> String { rng.element(of: ["a", "b", "B", "ключ", "a b"]) }

    /// A mixed value of any kind, some equal across kinds (`1`, `1.0`, the decimal 1, `"1"`), and
    /// nested lists and dictionaries (empty ones, and ones that differ only inside).
    private mutating func payload() -> AnyValue {
        rng.element(of: [
            .null, .bool(true), .bool(false), .int(1), .int(-7), .double(1.0), .double(-0.5), .string("1"),
            .string(""), .decimal(Self.amounts[3]), .decimal(1), .objectID(Self.codes[0]),
            .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
            .uuid(UUID(uuidString: "00000000-0000-0000-0000-00000000002A")!), .data(Data([0, 1, 255])),
            [], [:], [1, "1", [.null]], [1, "1", [false]], ["a": 1, "b": [.decimal(1)]], ["a": 1, "b": [.int(1)]],
        ])
    }

    /// A note, maybe nested, maybe linking to a node (an existing one, or one of `extra`).
    private mutating func note(_ m: ReferenceModel, depth: Int = 0, extra: [Int] = []) -> NoteValue {
        let ref = rng.chance(40) ? (!extra.isEmpty && rng.chance(50) ? rng.element(of: extra) : anyNode(m)) : nil
        let subnotes =
            depth < 2 && rng.chance(25)
            ? (0..<rng.int(in: 1...2)).map { _ in note(m, depth: depth + 1, extra: extra) } : []
        return NoteValue(text(), ref: ref, subnotes)
    }

    /// A node and the path of one of its notes most of the time, else a path that leads nowhere.
    private mutating func notePath(_ m: ReferenceModel) -> (Int, NotePath) {
        let withNotes = m.nodes.values.filter { $0.note != nil || !$0.notes.isEmpty }.map(\.id).sorted()
        if !withNotes.isEmpty && rng.chance(90) {
            let id = rng.element(of: withNotes)
            let paths = m.nodes[id]!.allNotes.map(\.0)
            return (id, rng.element(of: paths))
        }
        let root: NotePath.Root = rng.chance(50) ? .note : .notes(rng.below(3))
        return (anyNode(m), NotePath(root, rng.chance(30) ? [rng.below(2)] : []))
    }
}
