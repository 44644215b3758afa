import Foundation
import LiveObjects

/// How a write ended.
package enum WriteOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The write committed.
    case committed
    /// The write threw and rolled back.
    case failed(WriteFailure)
    /// The write was cancelled (`cancelWrite()`).
    case cancelled

    package var description: String {
        switch self {
        case .committed: "committed"
        case .failed(let f): "failed with \(f)"
        case .cancelled: "cancelled"
        }
    }
}

/// Why a write threw.
package enum WriteFailure: Sendable, Hashable, CustomStringConvertible {
    /// A `LiveObjectsError` with this code.
    case code(LiveObjectsError.Code)
    /// The error the harness throws from a ``PropertyOperation/throwingWrite(_:)`` body.
    case userError
    /// Anything else (always a failure of the harness).
    case other(String)

    package var description: String {
        switch self {
        case .code(let c): c.rawValue
        case .userError: "the user error"
        case .other(let s): "unexpected error \(s)"
        }
    }
}

/// The error a ``PropertyOperation/throwingWrite(_:)`` body throws.
struct HarnessUserError: Error, Sendable {
    package init() {}
}

/// What one step did to the write around it.
enum StepResult {
    /// It succeeded.
    case ok
    /// An accessor failed: it changed nothing, recorded its error, and the write goes on (then
    /// throws the first recorded error at the end).
    case recorded(LiveObjectsError.Code)
    /// The call threw: the write stops and rolls back.
    case thrown(LiveObjectsError.Code)
}

/// A plain-Swift model of what a realm of ``propertyTestModelTypes`` should hold: nodes and parts
/// by primary key, links as primary keys, embedded notes as nested values (so each has exactly one
/// parent by construction), `LinkingObjects` computed by inverting the links.
package struct ReferenceModel: Sendable, Hashable {
    package struct Node: Sendable, Hashable {
        package var id: Int
        package var tag = ""
        package var score = 0
        package var amount: Decimal?
        package var code: ObjectID?
        package var next: Int?
        package var friends: [Int] = []
        package var numbers: [Int] = []
        package var parts: [String] = []
        package var pinned: String?
        package var note: NoteValue?
        package var notes: [NoteValue] = []
        /// Members in the order they were first inserted.
        package var labels: [String] = []
        package var allies: [Int] = []
        package var attrs: [String: Int?] = [:]
        package var mates: [String: Int?] = [:]
        package var payload: AnyValue = .null

        package init(id: Int) { self.id = id }
    }

    package struct Part: Sendable, Hashable {
        package var id: String
        package var label: String?
        package var sub: String?

        package init(id: String) { self.id = id }
    }

    package var nodes: [Int: Node] = [:]
    package var parts: [String: Part] = [:]

    package init() {}

    // MARK: Operations

    /// Applies an operation as a realm would and returns how its write ends. A write that does
    /// not commit leaves the model unchanged.
    package mutating func apply(_ operation: PropertyOperation) -> WriteOutcome {
        var scratch = self
        var recorded: LiveObjectsError.Code?
        var thrown: LiveObjectsError.Code?
        for step in operation.steps {
            switch scratch.apply(step) {
            case .ok: continue
            case .recorded(let code): recorded = recorded ?? code
            case .thrown(let code): thrown = code
            }
            if thrown != nil { break }
        }
        switch operation {
        case .write, .manualWrite:
            if let code = thrown ?? recorded { return .failed(.code(code)) }
            self = scratch
            return .committed
        case .throwingWrite:
            return .failed(thrown.map { .code($0) } ?? .userError)
        case .cancelledWrite:
            return .cancelled
        }
    }

    /// Applies one step inside a write.
    mutating func apply(_ step: Step) -> StepResult {
        switch step {
        case .createNode, .upsertNode, .addNode, .createPart:
            return applyCreation(step)
        case .updateNode, .setAmount, .setLabel, .changeID, .setNext, .setPinned, .setSub:
            return applyUpdate(step)
        case .insertFriend, .removeFriend, .moveFriend, .replaceFriend, .insertNumber, .removeNumber, .moveNumber,
            .setFriends, .swapFriends, .clearList, .appendPart, .removePart:
            return applyListEdit(step)
        case .insertLabel, .removeLabel, .insertAlly, .removeAlly, .setAttr, .removeAttr, .setPayload, .setMate,
            .removeMate:
            return applyCollectionEdit(step)
        case .setNote, .appendNote, .removeNote, .moveNote, .setNotes, .replaceNote:
            return applyNoteListEdit(step)
        case .editNote, .setNoteRef, .appendSubnote, .adoptNote, .deleteNote:
            return applyNoteEdit(step)
        case .deleteNodes, .deletePart, .deleteAll, .touchDeleted, .nestedWrite:
            return applyDeletion(step)
        }
    }

    /// Applies a step that creates objects (or updates them by primary key).
    private mutating func applyCreation(_ step: Step) -> StepResult {
        switch step {
        case let .createNode(id, tag, score, next, friends, note, _):
            if nodes[id] != nil { return .thrown(.duplicatePrimaryKey) }
            let existing = Set(nodes.keys)
            let known = { (n: Int) in n == id || existing.contains(n) }
            if let next, !known(next) { return .thrown(.missingValue) }
            if !friends.allSatisfy(known) { return .thrown(.missingValue) }
            if let note, !note.allRefs.allSatisfy(known) { return .thrown(.missingValue) }
            var node = Node(id: id)
            node.tag = tag
            node.score = score
            node.next = next
            node.friends = friends
            node.note = note
            nodes[id] = node
            return .ok
        case let .upsertNode(id, score, friends, _):
            if let friends, !friends.allSatisfy({ $0 == id || nodes[$0] != nil }) {
                return .thrown(.missingValue)
            }
            var node = nodes[id] ?? Node(id: id)
            node.score = score
            if let friends { node.friends = friends }
            nodes[id] = node
            return .ok
        case let .addNode(id, tag, friends, note, update):
            if nodes[id] != nil && update == .error { return .thrown(.duplicatePrimaryKey) }
            // Friends that do not exist are new nodes added with this one. The note links to
            // the node, one of its friends or an existing node; a link to any other is left out.
            let linkable = Set(nodes.keys).union(friends).union([id])
            var node = Node(id: id)
            node.tag = tag
            node.friends = friends
            node.note = note?.mappingRefs { linkable.contains($0) ? $0 : nil }
            for f in friends where f != id && nodes[f] == nil { nodes[f] = Node(id: f) }
            nodes[id] = node
            return .ok
        case let .createPart(id, label, sub, _):
            if parts[id] != nil { return .thrown(.duplicatePrimaryKey) }
            if let sub, sub != id, parts[sub] == nil { return .thrown(.missingValue) }
            var part = Part(id: id)
            part.label = label
            part.sub = sub
            parts[id] = part
            return .ok
        default:
            preconditionFailure("applyCreation: not one of its cases: \(step)")
        }
    }

    /// Applies a step that sets a property.
    private mutating func applyUpdate(_ step: Step) -> StepResult {
        switch step {
        case let .updateNode(id, tag, score, _):
            guard nodes[id] != nil else { return .ok }
            if let tag { nodes[id]!.tag = tag }
            if let score { nodes[id]!.score = score }
            return .ok
        case let .setAmount(id, amount, code, _):
            guard nodes[id] != nil else { return .ok }
            nodes[id]!.amount = amount
            nodes[id]!.code = code
            return .ok
        case let .setLabel(id, label, _):
            guard parts[id] != nil else { return .ok }
            parts[id]!.label = label
            return .ok
        case let .changeID(id, to, api):
            guard nodes[id] != nil, to != id else { return .ok }
            return fail(.primaryKeyChange, api)
        case let .setNext(id, to, api):
            guard nodes[id] != nil else { return .ok }
            if let to, nodes[to] == nil { return missing(api) }
            nodes[id]!.next = to
            return .ok
        case let .setPinned(id, to, api):
            guard nodes[id] != nil else { return .ok }
            if let to, parts[to] == nil { return missing(api) }
            nodes[id]!.pinned = to
            return .ok
        case let .setSub(id, to, api):
            guard parts[id] != nil else { return .ok }
            if let to, parts[to] == nil { return missing(api) }
            parts[id]!.sub = to
            return .ok
        default:
            preconditionFailure("applyUpdate: not one of its cases: \(step)")
        }
    }

    /// Applies a step that edits a list of links, numbers or parts.
    private mutating func applyListEdit(_ step: Step) -> StepResult {
        switch step {
        case let .insertFriend(id, at, friend, api):
            guard let node = nodes[id] else { return .ok }
            if api == .typed && nodes[friend] == nil { return .ok }
            guard (0...node.friends.count).contains(at) else { return fail(.indexOutOfBounds, api) }
            if nodes[friend] == nil { return .thrown(.missingValue) }
            nodes[id]!.friends.insert(friend, at: at)
            return .ok
        case let .removeFriend(id, at, api):
            guard let node = nodes[id] else { return .ok }
            guard node.friends.indices.contains(at) else { return fail(.indexOutOfBounds, api) }
            nodes[id]!.friends.remove(at: at)
            return .ok
        case let .moveFriend(id, from, to, api):
            guard let node = nodes[id] else { return .ok }
            guard node.friends.indices.contains(from), node.friends.indices.contains(to) else {
                return fail(.indexOutOfBounds, api)
            }
            nodes[id]!.friends.insert(nodes[id]!.friends.remove(at: from), at: to)
            return .ok
        case let .replaceFriend(id, at, friend, api):
            guard let node = nodes[id] else { return .ok }
            if api == .typed && nodes[friend] == nil { return .ok }
            guard node.friends.indices.contains(at) else { return fail(.indexOutOfBounds, api) }
            if nodes[friend] == nil { return .thrown(.missingValue) }
            nodes[id]!.friends[at] = friend
            return .ok
        case let .insertNumber(id, at, value, api):
            guard let node = nodes[id] else { return .ok }
            guard (0...node.numbers.count).contains(at) else { return fail(.indexOutOfBounds, api) }
            nodes[id]!.numbers.insert(value, at: at)
            return .ok
        case let .removeNumber(id, at, api):
            guard let node = nodes[id] else { return .ok }
            guard node.numbers.indices.contains(at) else { return fail(.indexOutOfBounds, api) }
            nodes[id]!.numbers.remove(at: at)
            return .ok
        case let .moveNumber(id, from, to, api):
            guard let node = nodes[id] else { return .ok }
            guard node.numbers.indices.contains(from), node.numbers.indices.contains(to) else {
                return fail(.indexOutOfBounds, api)
            }
            nodes[id]!.numbers.insert(nodes[id]!.numbers.remove(at: from), at: to)
            return .ok
        case let .setFriends(id, to, api):
            guard nodes[id] != nil else { return .ok }
            if api == .dynamic && !to.allSatisfy({ nodes[$0] != nil }) { return .thrown(.missingValue) }
            nodes[id]!.friends = to.filter { nodes[$0] != nil }
            return .ok
        case let .swapFriends(id, i, j):
            guard let node = nodes[id], i != j else { return .ok }
            guard node.friends.indices.contains(i), node.friends.indices.contains(j) else {
                return .recorded(.indexOutOfBounds)
            }
            nodes[id]!.friends.swapAt(i, j)
            return .ok
        case let .clearList(id, list, _):
            guard nodes[id] != nil else { return .ok }
            switch list {
            case .friends: nodes[id]!.friends = []
            case .numbers: nodes[id]!.numbers = []
            case .parts: nodes[id]!.parts = []
            case .notes: nodes[id]!.notes = []
            case .labels: nodes[id]!.labels = []
            case .allies: nodes[id]!.allies = []
            case .attrs: nodes[id]!.attrs = [:]
            case .mates: nodes[id]!.mates = [:]
            }
            return .ok
        case let .appendPart(id, part, api):
            guard nodes[id] != nil else { return .ok }
            if parts[part] == nil { return missing(api) }
            nodes[id]!.parts.append(part)
            return .ok
        case let .removePart(id, at, api):
            guard let node = nodes[id] else { return .ok }
            guard node.parts.indices.contains(at) else { return fail(.indexOutOfBounds, api) }
            nodes[id]!.parts.remove(at: at)
            return .ok
        default:
            preconditionFailure("applyListEdit: not one of its cases: \(step)")
        }
    }

    /// Applies a step that edits a set or the map, or sets the mixed value.
    private mutating func applyCollectionEdit(_ step: Step) -> StepResult {
        switch step {
        case let .insertLabel(id, label, _):
            guard nodes[id] != nil else { return .ok }
            if !nodes[id]!.labels.contains(label) { nodes[id]!.labels.append(label) }
            return .ok
        case let .removeLabel(id, label, _):
            nodes[id]?.labels.removeAll { $0 == label }
            return .ok
        case let .insertAlly(id, ally, api):
            guard nodes[id] != nil else { return .ok }
            if nodes[ally] == nil { return missing(api) }
            if !nodes[id]!.allies.contains(ally) { nodes[id]!.allies.append(ally) }
            return .ok
        case let .removeAlly(id, ally, _):
            nodes[id]?.allies.removeAll { $0 == ally }
            return .ok
        case let .setAttr(id, key, value, api):
            guard nodes[id] != nil else { return .ok }
            if key.isEmpty || key.contains(".") || key.hasPrefix("$") { return fail(.typeMismatch, api) }
            nodes[id]!.attrs[key] = .some(value)
            return .ok
        case let .removeAttr(id, key, _):
            nodes[id]?.attrs[key] = nil
            return .ok
        case let .setMate(id, key, to, api):
            guard nodes[id] != nil else { return .ok }
            // A missing node is found before a bad key, through either API.
            if let to, nodes[to] == nil { return missing(api) }
            if key.isEmpty || key.contains(".") || key.hasPrefix("$") { return fail(.typeMismatch, api) }
            nodes[id]!.mates[key] = .some(to)
            return .ok
        case let .removeMate(id, key, _):
            nodes[id]?.mates[key] = nil
            return .ok
        case let .setPayload(id, payload, _):
            nodes[id]?.payload = payload
            return .ok
        default:
            preconditionFailure("applyCollectionEdit: not one of its cases: \(step)")
        }
    }

    /// Applies a step that sets a node's notes or edits its list of them.
    private mutating func applyNoteListEdit(_ step: Step) -> StepResult {
        switch step {
        case let .setNote(id, note, api):
            guard nodes[id] != nil else { return .ok }
            guard let note = resolved(note, api) else { return .thrown(.missingValue) }
            nodes[id]!.note = note
            return .ok
        case let .appendNote(id, note, api):
            guard nodes[id] != nil else { return .ok }
            guard let note = resolved(note, api) else { return .thrown(.missingValue) }
            nodes[id]!.notes.append(note)
            return .ok
        case let .removeNote(id, at, api):
            guard let node = nodes[id] else { return .ok }
            guard node.notes.indices.contains(at) else { return fail(.indexOutOfBounds, api) }
            nodes[id]!.notes.remove(at: at)
            return .ok
        case let .moveNote(id, from, to, api):
            guard let node = nodes[id] else { return .ok }
            guard node.notes.indices.contains(from), node.notes.indices.contains(to) else {
                return fail(.indexOutOfBounds, api)
            }
            nodes[id]!.notes.insert(nodes[id]!.notes.remove(at: from), at: to)
            return .ok
        case let .setNotes(id, keep, new, api):
            guard let node = nodes[id] else { return .ok }
            let kept = keep.filter { node.notes.indices.contains($0) }
            if Set(kept).count != kept.count { return fail(.embeddedObjectAlreadyOwned, api) }
            var notes = kept.map { node.notes[$0] }
            for note in new {
                guard let note = resolved(note, api) else { return .thrown(.missingValue) }
                notes.append(note)
            }
            nodes[id]!.notes = notes
            return .ok
        case let .replaceNote(id, at, note):
            guard let node = nodes[id] else { return .ok }
            guard node.notes.indices.contains(at) else { return .recorded(.indexOutOfBounds) }
            nodes[id]!.notes[at] = resolved(note, .typed)!
            return .ok
        default:
            preconditionFailure("applyNoteListEdit: not one of its cases: \(step)")
        }
    }

    /// Applies a step on a note found by its path.
    private mutating func applyNoteEdit(_ step: Step) -> StepResult {
        switch step {
        case let .editNote(id, path, text, _):
            _ = nodes[id]?.updateNote(at: path) { $0.text = text }
            return .ok
        case let .setNoteRef(id, path, to, api):
            guard nodes[id]?.note(at: path) != nil else { return .ok }
            if let to, nodes[to] == nil { return missing(api) }
            _ = nodes[id]!.updateNote(at: path) { $0.ref = to }
            return .ok
        case let .appendSubnote(id, path, note, api):
            guard nodes[id]?.note(at: path) != nil else { return .ok }
            guard let note = resolved(note, api) else { return .thrown(.missingValue) }
            _ = nodes[id]!.updateNote(at: path) { $0.subnotes.append(note) }
            return .ok
        case let .adoptNote(id, path, into, asList, api):
            guard nodes[id]?.note(at: path) != nil, nodes[into] != nil else { return .ok }
            // Setting a node's note to the note it already has changes nothing.
            if !asList && into == id && path == NotePath(.note) { return .ok }
            return fail(.embeddedObjectAlreadyOwned, api)
        case let .deleteNote(id, path, _):
            _ = nodes[id]?.removeNote(at: path)
            return .ok
        default:
            preconditionFailure("applyNoteEdit: not one of its cases: \(step)")
        }
    }

    /// Applies a step that deletes objects, or writes inside a write.
    private mutating func applyDeletion(_ step: Step) -> StepResult {
        switch step {
        case let .deleteNodes(ids, api):
            if api == .typed {
                return delete(nodes: ids, parts: []) ? .ok : .thrown(.deleteDenied)
            }
            for id in ids where !delete(nodes: [id], parts: []) { return .thrown(.deleteDenied) }
            return .ok
        case let .deletePart(id, _):
            return delete(nodes: [], parts: [id]) ? .ok : .thrown(.deleteDenied)
        case let .deleteAll(kind, _):
            let ok =
                switch kind {
                case .nodes: delete(nodes: Array(nodes.keys), parts: [])
                case .parts: delete(nodes: [], parts: Array(parts.keys))
                case .everything: delete(nodes: Array(nodes.keys), parts: Array(parts.keys))
                }
            return ok ? .ok : .thrown(.deleteDenied)
        case let .touchDeleted(id, api):
            guard nodes[id] != nil else { return .ok }
            guard delete(nodes: [id], parts: []) else { return .thrown(.deleteDenied) }
            return fail(.objectInvalidated, api)
        case .nestedWrite:
            return .thrown(.alreadyInWriteTransaction)
        default:
            preconditionFailure("applyDeletion: not one of its cases: \(step)")
        }
    }

    private func fail(_ code: LiveObjectsError.Code, _ api: API) -> StepResult {
        api == .typed ? .recorded(code) : .thrown(code)
    }

    /// A link to a missing object: nothing to assign (typed), or a failed lookup (dynamic).
    private func missing(_ api: API) -> StepResult {
        api == .typed ? .ok : .thrown(.missingValue)
    }

    /// A note as it is stored: the typed API builds an unmanaged note and leaves out links to
    /// missing nodes; the dynamic API fails on them (nil).
    private func resolved(_ note: NoteValue?, _ api: API) -> NoteValue?? {
        guard let note else { return .some(nil) }
        guard let stored = resolved(note, api) else { return .none }
        return .some(stored)
    }

    private func resolved(_ note: NoteValue, _ api: API) -> NoteValue? {
        if api == .typed { return note.mappingRefs { nodes[$0] != nil ? $0 : nil } }
        return note.allRefs.allSatisfy { nodes[$0] != nil } ? note : nil
    }

    /// Deletes nodes and parts with the delete rules of the models: a node's `parts` and a
    /// part's `sub` cascade; a surviving node's `pinned` denies. Returns false, changing nothing,
    /// when denied.
    mutating func delete(nodes rootNodes: [Int], parts rootParts: [String]) -> Bool {
        let doomedNodes = Set(rootNodes.filter { nodes[$0] != nil })
        var doomedParts = Set<String>()
        var stack = rootParts + doomedNodes.flatMap { nodes[$0]!.parts }
        while let id = stack.popLast() {
            guard let part = parts[id], doomedParts.insert(id).inserted else { continue }
            if let sub = part.sub { stack.append(sub) }
        }
        for node in nodes.values where !doomedNodes.contains(node.id) {
            if let pinned = node.pinned, doomedParts.contains(pinned) { return false }
        }
        for id in doomedNodes { nodes[id] = nil }
        for id in doomedParts { parts[id] = nil }
        let keepNode = { (id: Int) -> Int? in doomedNodes.contains(id) ? nil : id }
        for id in Array(nodes.keys) {
            var node = nodes[id]!
            node.next = node.next.flatMap(keepNode)
            node.friends.removeAll { doomedNodes.contains($0) }
            node.allies.removeAll { doomedNodes.contains($0) }
            node.mates = node.mates.mapValues { $0.flatMap(keepNode) }
            node.parts.removeAll { doomedParts.contains($0) }
            if let pinned = node.pinned, doomedParts.contains(pinned) { node.pinned = nil }
            node.note = node.note?.mappingRefs(keepNode)
            node.notes = node.notes.map { $0.mappingRefs(keepNode) }
            nodes[id] = node
        }
        for id in Array(parts.keys) {
            if let sub = parts[id]!.sub, doomedParts.contains(sub) { parts[id]!.sub = nil }
        }
        return true
    }

    // MARK: The observable state

    /// What a realm holding this model shows: objects, and `LinkingObjects` computed by inverting
    /// the forward links.
    package var view: GraphView {
        var view = GraphView()
        view.nodes = nodes
        view.parts = parts
        for id in nodes.keys {
            view.referrers[id] = []
            view.followers[id] = []
            view.mentions[id] = []
            view.admirers[id] = []
            view.matedBy[id] = []
        }
        for id in parts.keys {
            view.holders[id] = []
            view.pinners[id] = []
            view.supers[id] = []
        }
        for node in nodes.values {
            if let next = node.next { view.referrers[next, default: []].append(node.id) }
            for f in node.friends { view.followers[f, default: []].append(node.id) }
            for a in node.allies { view.admirers[a, default: []].append(node.id) }
            for case let m? in node.mates.values { view.matedBy[m, default: []].append(node.id) }
            for p in node.parts { view.holders[p, default: []].append(node.id) }
            if let p = node.pinned { view.pinners[p, default: []].append(node.id) }
            for (path, note) in node.allNotes {
                view.noteCount += 1
                if let ref = note.ref {
                    view.mentions[ref, default: []].append("n\(node.id).\(path.display)")
                }
            }
        }
        for part in parts.values {
            if let sub = part.sub { view.supers[sub, default: []].append(part.id) }
        }
        view.normalize()
        return view
    }
}

extension ReferenceModel.Node {
    /// Every embedded note under the node with its path, parents first.
    var allNotes: [(NotePath, NoteValue)] {
        var result: [(NotePath, NoteValue)] = []
        func visit(_ note: NoteValue, _ path: NotePath) {
            result.append((path, note))
            for (i, sub) in note.subnotes.enumerated() {
                visit(sub, NotePath(path.root, path.sub + [i]))
            }
        }
        if let note { visit(note, NotePath(.note)) }
        for (i, note) in notes.enumerated() { visit(note, NotePath(.notes(i))) }
        return result
    }

    /// The note at a path, if there is one.
    package func note(at path: NotePath) -> NoteValue? {
        var current: NoteValue?
        switch path.root {
        case .note: current = note
        case .notes(let i): current = notes.indices.contains(i) ? notes[i] : nil
        }
        for i in path.sub {
            guard let c = current, c.subnotes.indices.contains(i) else { return nil }
            current = c.subnotes[i]
        }
        return current
    }

    /// Changes the note at a path; returns false if there is none.
    mutating func updateNote(at path: NotePath, _ body: (inout NoteValue) -> Void) -> Bool {
        func update(_ note: inout NoteValue, _ sub: ArraySlice<Int>) -> Bool {
            guard let i = sub.first else {
                body(&note)
                return true
            }
            guard note.subnotes.indices.contains(i) else { return false }
            return update(&note.subnotes[i], sub.dropFirst())
        }
        switch path.root {
        case .note:
            guard note != nil else { return false }
            return update(&note!, path.sub[...])
        case .notes(let i):
            guard notes.indices.contains(i) else { return false }
            return update(&notes[i], path.sub[...])
        }
    }

    /// Removes the note at a path (and the notes nested in it); returns false if there is none.
    mutating func removeNote(at path: NotePath) -> Bool {
        guard let last = path.sub.last else {
            switch path.root {
            case .note:
                guard note != nil else { return false }
                note = nil
            case .notes(let i):
                guard notes.indices.contains(i) else { return false }
                notes.remove(at: i)
            }
            return true
        }
        var removed = false
        _ = updateNote(at: NotePath(path.root, Array(path.sub.dropLast()))) { parent in
            if parent.subnotes.indices.contains(last) {
                parent.subnotes.remove(at: last)
                removed = true
            }
        }
        return removed
    }
}

/// What can be observed of a realm of ``propertyTestModelTypes``: every object with its values,
/// and every `LinkingObjects` as a sorted multiset (`LinkingObjects` promises no order).
package struct GraphView: Sendable, Hashable {
    package var nodes: [Int: ReferenceModel.Node] = [:]
    package var parts: [String: ReferenceModel.Part] = [:]
    /// The number of embedded notes.
    var noteCount = 0
    /// `PropNode.referrers` by node id.
    var referrers: [Int: [Int]] = [:]
    /// `PropNode.followers` by node id.
    var followers: [Int: [Int]] = [:]
    /// `PropNode.mentions` by node id, each note named by its path (`n3.notes[1]`).
    var mentions: [Int: [String]] = [:]
    /// `PropNode.admirers` (the nodes whose `allies` hold it) by node id.
    var admirers: [Int: [Int]] = [:]
    /// `PropNode.matedBy` (a node for each key of a `mates` map that holds it) by node id.
    var matedBy: [Int: [Int]] = [:]
    /// `PropPart.holders` by part id.
    package var holders: [String: [Int]] = [:]
    /// `PropPart.pinners` by part id.
    var pinners: [String: [Int]] = [:]
    /// `PropPart.supers` by part id.
    var supers: [String: [String]] = [:]

    package init() {}

    mutating func normalize() {
        referrers = referrers.mapValues { $0.sorted() }
        followers = followers.mapValues { $0.sorted() }
        mentions = mentions.mapValues { $0.sorted() }
        admirers = admirers.mapValues { $0.sorted() }
        matedBy = matedBy.mapValues { $0.sorted() }
        holders = holders.mapValues { $0.sorted() }
        pinners = pinners.mapValues { $0.sorted() }
        supers = supers.mapValues { $0.sorted() }
    }

    /// How `actual` differs from this (expected) view, one line per difference.
    package func differences(from actual: GraphView) -> [String] {
        if self == actual { return [] }
        var lines: [String] = []
        func compare<K: Hashable & Comparable, V: Equatable>(
            _ name: String, _ expected: [K: V], _ actual: [K: V]
        ) {
            for key in Set(expected.keys).union(actual.keys).sorted()
            where expected[key] != actual[key] {
                let e = expected[key].map { "\($0)" } ?? "absent"
                let a = actual[key].map { "\($0)" } ?? "absent"
                lines.append("\(name)[\(key)]: expected \(e), realm has \(a)")
            }
        }
        compare("node", nodes, actual.nodes)
        compare("part", parts, actual.parts)
        if noteCount != actual.noteCount {
            lines.append("embedded notes: expected \(noteCount), realm has \(actual.noteCount)")
        }
        compare("PropNode.referrers", referrers, actual.referrers)
        compare("PropNode.followers", followers, actual.followers)
        compare("PropNode.mentions", mentions, actual.mentions)
        compare("PropNode.admirers", admirers, actual.admirers)
        compare("PropNode.matedBy", matedBy, actual.matedBy)
        compare("PropPart.holders", holders, actual.holders)
        compare("PropPart.pinners", pinners, actual.pinners)
        compare("PropPart.supers", supers, actual.supers)
        return lines
    }
}
