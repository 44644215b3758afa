// The vocabulary of the property-based harness: steps (one API call each, or a few that belong
// together) grouped into operations (one write transaction each).
//
// Every description is Swift source: a printed operation list can be pasted back into
// `PropertyHarness.run([...])` to replay it.

import Foundation
import LiveObjects

/// Which API a step goes through.
package enum API: Sendable, Hashable, CustomStringConvertible {
    /// Model classes: `realm.create(PropNode.self, ...)`, property setters, `List` methods.
    /// Accessors that fail record their error (the write throws it at the end) and go on.
    case typed
    /// `dynamicCreate`, `DynamicObject.set`, `insert(_:into:at:)`, `setEmbedded`…, which throw.
    case dynamic

    package var description: String { self == .typed ? ".typed" : ".dynamic" }
}

/// The update policy of `Realm.add`.
package enum AddPolicy: Sendable, Hashable, CustomStringConvertible {
    case error, modified, all

    package var description: String {
        switch self {
        case .error: ".error"
        case .modified: ".modified"
        case .all: ".all"
        }
    }
}

/// Which objects `deleteAll` deletes.
package enum ObjectKind: Sendable, Hashable, CustomStringConvertible {
    case nodes, parts, everything

    package var description: String {
        switch self {
        case .nodes: ".nodes"
        case .parts: ".parts"
        case .everything: ".everything"
        }
    }
}

/// A collection property of `PropNode`: a list, a set or the map.
package enum NodeList: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case friends, numbers, parts, notes, labels, allies, attrs, mates

    package var description: String { "." + name }

    /// The property name.
    package var name: String {
        switch self {
        case .friends: "friends"
        case .numbers: "numbers"
        case .parts: "parts"
        case .notes: "notes"
        case .labels: "labels"
        case .allies: "allies"
        case .attrs: "attrs"
        case .mates: "mates"
        }
    }
}

/// The value of an embedded note and of the notes nested in it.
package struct NoteValue: Sendable, Hashable, CustomStringConvertible {
    package var text: String
    /// The id of the node the note links to.
    package var ref: Int?
    var subnotes: [NoteValue]

    package init(_ text: String, ref: Int? = nil, _ subnotes: [NoteValue] = []) {
        self.text = text
        self.ref = ref
        self.subnotes = subnotes
    }

    /// Every node id linked from this note or the notes nested in it.
    var allRefs: [Int] {
        (ref.map { [$0] } ?? []) + subnotes.flatMap(\.allRefs)
    }

    /// The note with its links (and nested notes' links) mapped.
    func mappingRefs(_ transform: (Int) -> Int?) -> NoteValue {
        NoteValue(text, ref: ref.flatMap(transform), subnotes.map { $0.mappingRefs(transform) })
    }

    package var description: String {
        var text = "NoteValue(\(String(reflecting: self.text))"
        if let ref { text += ", ref: \(ref)" }
        if !subnotes.isEmpty { text += ", " + swiftList(subnotes) }
        return text + ")"
    }
}

/// Where an embedded note sits under its node: the `note` property or an element of `notes`,
/// then indices into nested `subnotes`.
package struct NotePath: Sendable, Hashable, CustomStringConvertible {
    package enum Root: Sendable, Hashable {
        case note
        case notes(Int)
    }

    package var root: Root
    package var sub: [Int]

    package init(_ root: Root, _ sub: [Int] = []) {
        self.root = root
        self.sub = sub
    }

    package var description: String {
        let root =
            switch root {
            case .note: ".note"
            case .notes(let i): ".notes(\(i))"
            }
        return sub.isEmpty ? "NotePath(\(root))" : "NotePath(\(root), \(sub))"
    }

    /// The path as property accesses: `notes[1].subnotes[0]`.
    package var display: String {
        var text =
            switch root {
            case .note: "note"
            case .notes(let i): "notes[\(i)]"
            }
        for i in sub { text += ".subnotes[\(i)]" }
        return text
    }
}

/// One step of a write: a call (or a few calls that belong together) on the realm.
///
/// A step on an object that does not exist does nothing. A link to a missing object does nothing
/// through the typed API (there is no object to assign) and fails with `missingValue` through the
/// dynamic API (which links by primary key). Out-of-range list indices fail with
/// `indexOutOfBounds`.
package enum Step: Sendable, Hashable, CustomStringConvertible {
    /// `create` from a dictionary (typed) or `dynamicCreate` then `setEmbedded` (dynamic).
    case createNode(id: Int, tag: String, score: Int, next: Int?, friends: [Int], note: NoteValue?, api: API)
    /// `create(..., update: .modified)`: creates or updates the score (and replaces the friends).
    case upsertNode(id: Int, score: Int, friends: [Int]?, api: API)
    /// `add` of an unmanaged node (typed only); with `.modified`/`.all` it overwrites every property.
    /// Its friends are the existing nodes, or new unmanaged nodes added with it (the same
    /// object for the same id, the node itself for its own id); the note links to one of them.
    case addNode(id: Int, tag: String, friends: [Int], note: NoteValue?, update: AddPolicy)
    case createPart(id: String, label: String?, sub: String?, api: API)
    case updateNode(id: Int, tag: String?, score: Int?, api: API)
    /// Sets a node's decimal and object id (nil clears them).
    case setAmount(node: Int, amount: Decimal?, code: ObjectID?, api: API)
    case setLabel(part: String, label: String?, api: API)
    /// Setting the primary key of an existing object: `primaryKeyChange` unless it is the same.
    case changeID(node: Int, to: Int, api: API)
    case setNext(node: Int, to: Int?, api: API)
    case setPinned(node: Int, to: String?, api: API)
    case setSub(part: String, to: String?, api: API)
    case insertFriend(node: Int, at: Int, friend: Int, api: API)
    case removeFriend(node: Int, at: Int, api: API)
    case moveFriend(node: Int, from: Int, to: Int, api: API)
    case replaceFriend(node: Int, at: Int, friend: Int, api: API)
    case insertNumber(node: Int, at: Int, value: Int, api: API)
    case removeNumber(node: Int, at: Int, api: API)
    case moveNumber(node: Int, from: Int, to: Int, api: API)
    /// Assigns the whole list: `node.friends = List(...)` (typed, missing nodes left out) or
    /// `set("friends", .list(...))` (dynamic).
    case setFriends(node: Int, to: [Int], api: API)
    /// `swapAt` (typed only).
    case swapFriends(node: Int, i: Int, j: Int)
    /// Empties a list: `removeAll()` (typed) or `set(_, .list([]))` (dynamic).
    case clearList(node: Int, list: NodeList, api: API)
    case appendPart(node: Int, part: String, api: API)
    case removePart(node: Int, at: Int, api: API)
    /// `labels.insert(_:)` (typed) or `append(_:to:)` (dynamic): nothing when the set holds it.
    case insertLabel(node: Int, label: String, api: API)
    /// `labels.remove(_:)` (typed) or `remove(from:at:)` at the member's position (dynamic).
    case removeLabel(node: Int, label: String, api: API)
    /// `allies.insert(_:)` of an existing node (typed) or `append(.int(id), to:)` (dynamic).
    case insertAlly(node: Int, ally: Int, api: API)
    case removeAlly(node: Int, ally: Int, api: API)
    /// `attrs[key] = .some(value)` (typed: nil keeps the key with nil), or the whole map set with
    /// the entry changed (dynamic). A key with `.` or starting with `$` is a `typeMismatch`.
    case setAttr(node: Int, key: String, value: Int?, api: API)
    /// `attrs.removeObject(for:)` (typed) or the whole map set without the key (dynamic).
    case removeAttr(node: Int, key: String, api: API)
    /// `mates[key] = .some(node)` (typed: nil keeps the key with nil; a missing node does
    /// nothing), or the whole map set with the entry's primary key (dynamic: `missingValue`).
    case setMate(node: Int, key: String, to: Int?, api: API)
    case removeMate(node: Int, key: String, api: API)
    /// `payload = value` (typed) or `set("payload", to: value.propertyValue)` (dynamic).
    case setPayload(node: Int, payload: AnyValue, api: API)
    /// Creates, replaces (deleting the old one) or clears the embedded `note`.
    case setNote(node: Int, note: NoteValue?, api: API)
    case appendNote(node: Int, note: NoteValue, api: API)
    case removeNote(node: Int, at: Int, api: API)
    case moveNote(node: Int, from: Int, to: Int, api: API)
    /// Assigns the whole `notes` list: the existing notes at `keep` (reordered, or twice: then
    /// `embeddedObjectAlreadyOwned`), then new notes. Notes left out are deleted. Indices out of
    /// range are skipped.
    case setNotes(node: Int, keep: [Int], new: [NoteValue], api: API)
    /// `notes[at] = newNote` (typed only): replaces and deletes the old note.
    case replaceNote(node: Int, at: Int, note: NoteValue)
    case editNote(node: Int, path: NotePath, text: String, api: API)
    case setNoteRef(node: Int, path: NotePath, to: Int?, api: API)
    case appendSubnote(node: Int, path: NotePath, note: NoteValue, api: API)
    /// Gives an existing embedded note a second parent: `embeddedObjectAlreadyOwned`.
    case adoptNote(node: Int, path: NotePath, into: Int, asList: Bool, api: API)
    /// `delete` of an embedded note.
    case deleteNote(node: Int, path: NotePath, api: API)
    /// Typed: one `delete` of all the nodes; dynamic: one `delete` per node.
    case deleteNodes(ids: [Int], api: API)
    case deletePart(id: String, api: API)
    case deleteAll(kind: ObjectKind, api: API)
    /// Deletes a node, then sets a property through the deleted handle: `objectInvalidated`.
    case touchDeleted(node: Int, api: API)
    /// Opens a write inside the write: `alreadyInWriteTransaction`.
    case nestedWrite

    package var description: String {
        switch self {
        case let .createNode(id, tag, score, next, friends, note, api):
            ".createNode(id: \(id), tag: \(q(tag)), score: \(score), next: \(o(next)), friends: \(friends), note: \(o(note)), api: \(api))"
        case let .upsertNode(id, score, friends, api):
            ".upsertNode(id: \(id), score: \(score), friends: \(o(friends)), api: \(api))"
        case let .addNode(id, tag, friends, note, update):
            ".addNode(id: \(id), tag: \(q(tag)), friends: \(friends), note: \(o(note)), update: \(update))"
        case let .createPart(id, label, sub, api):
            ".createPart(id: \(q(id)), label: \(o(label)), sub: \(o(sub)), api: \(api))"
        case let .updateNode(id, tag, score, api):
            ".updateNode(id: \(id), tag: \(o(tag)), score: \(o(score)), api: \(api))"
        case let .setAmount(node, amount, code, api):
            ".setAmount(node: \(node), amount: \(amount.map { "Decimal(string: \"\($0)\")!" } ?? "nil"), "
                + "code: \(code.map { "ObjectID(hex: \"\($0.hexString)\")!" } ?? "nil"), api: \(api))"
        case let .setLabel(part, label, api):
            ".setLabel(part: \(q(part)), label: \(o(label)), api: \(api))"
        case let .changeID(node, to, api):
            ".changeID(node: \(node), to: \(to), api: \(api))"
        case let .setNext(node, to, api):
            ".setNext(node: \(node), to: \(o(to)), api: \(api))"
        case let .setPinned(node, to, api):
            ".setPinned(node: \(node), to: \(o(to)), api: \(api))"
        case let .setSub(part, to, api):
            ".setSub(part: \(q(part)), to: \(o(to)), api: \(api))"
        case let .insertFriend(node, at, friend, api):
            ".insertFriend(node: \(node), at: \(at), friend: \(friend), api: \(api))"
        case let .removeFriend(node, at, api):
            ".removeFriend(node: \(node), at: \(at), api: \(api))"
        case let .moveFriend(node, from, to, api):
            ".moveFriend(node: \(node), from: \(from), to: \(to), api: \(api))"
        case let .replaceFriend(node, at, friend, api):
            ".replaceFriend(node: \(node), at: \(at), friend: \(friend), api: \(api))"
        case let .insertNumber(node, at, value, api):
            ".insertNumber(node: \(node), at: \(at), value: \(value), api: \(api))"
        case let .removeNumber(node, at, api):
            ".removeNumber(node: \(node), at: \(at), api: \(api))"
        case let .moveNumber(node, from, to, api):
            ".moveNumber(node: \(node), from: \(from), to: \(to), api: \(api))"
        case let .setFriends(node, to, api):
            ".setFriends(node: \(node), to: \(to), api: \(api))"
        case let .swapFriends(node, i, j):
            ".swapFriends(node: \(node), i: \(i), j: \(j))"
        case let .clearList(node, list, api):
            ".clearList(node: \(node), list: \(list), api: \(api))"
        case let .appendPart(node, part, api):
            ".appendPart(node: \(node), part: \(q(part)), api: \(api))"
        case let .removePart(node, at, api):
            ".removePart(node: \(node), at: \(at), api: \(api))"
        case .insertLabel, .removeLabel, .insertAlly, .removeAlly, .setAttr, .removeAttr, .setMate, .removeMate,
            .setPayload:
            collectionDescription
        case let .setNote(node, note, api):
            ".setNote(node: \(node), note: \(o(note)), api: \(api))"
        case let .appendNote(node, note, api):
            ".appendNote(node: \(node), note: \(note), api: \(api))"
        case let .removeNote(node, at, api):
            ".removeNote(node: \(node), at: \(at), api: \(api))"
        case let .moveNote(node, from, to, api):
            ".moveNote(node: \(node), from: \(from), to: \(to), api: \(api))"
        case let .setNotes(node, keep, new, api):
            ".setNotes(node: \(node), keep: \(keep), new: \(swiftList(new)), api: \(api))"
        case let .replaceNote(node, at, note):
            ".replaceNote(node: \(node), at: \(at), note: \(note))"
        case let .editNote(node, path, text, api):
            ".editNote(node: \(node), path: \(path), text: \(q(text)), api: \(api))"
        case let .setNoteRef(node, path, to, api):
            ".setNoteRef(node: \(node), path: \(path), to: \(o(to)), api: \(api))"
        case let .appendSubnote(node, path, note, api):
            ".appendSubnote(node: \(node), path: \(path), note: \(note), api: \(api))"
        case let .adoptNote(node, path, into, asList, api):
            ".adoptNote(node: \(node), path: \(path), into: \(into), asList: \(asList), api: \(api))"
        case let .deleteNote(node, path, api):
            ".deleteNote(node: \(node), path: \(path), api: \(api))"
        case let .deleteNodes(ids, api):
            ".deleteNodes(ids: \(ids), api: \(api))"
        case let .deletePart(id, api):
            ".deletePart(id: \(q(id)), api: \(api))"
        case let .deleteAll(kind, api):
            ".deleteAll(kind: \(kind), api: \(api))"
        case let .touchDeleted(node, api):
            ".touchDeleted(node: \(node), api: \(api))"
        case .nestedWrite:
            ".nestedWrite"
        }
    }

    /// The description of a step on a set, a map or the mixed value.
    private var collectionDescription: String {
        switch self {
        case let .insertLabel(node, label, api):
            ".insertLabel(node: \(node), label: \(q(label)), api: \(api))"
        case let .removeLabel(node, label, api):
            ".removeLabel(node: \(node), label: \(q(label)), api: \(api))"
        case let .insertAlly(node, ally, api):
            ".insertAlly(node: \(node), ally: \(ally), api: \(api))"
        case let .removeAlly(node, ally, api):
            ".removeAlly(node: \(node), ally: \(ally), api: \(api))"
        case let .setAttr(node, key, value, api):
            ".setAttr(node: \(node), key: \(q(key)), value: \(o(value)), api: \(api))"
        case let .removeAttr(node, key, api):
            ".removeAttr(node: \(node), key: \(q(key)), api: \(api))"
        case let .setMate(node, key, to, api):
            ".setMate(node: \(node), key: \(q(key)), to: \(o(to)), api: \(api))"
        case let .removeMate(node, key, api):
            ".removeMate(node: \(node), key: \(q(key)), api: \(api))"
        case let .setPayload(node, payload, api):
            ".setPayload(node: \(node), payload: \(swiftSource(payload)), api: \(api))"
        default: preconditionFailure("collectionDescription: not one of its cases")
        }
    }
}

/// One write transaction of a generated sequence.
package enum PropertyOperation: Sendable, Hashable, CustomStringConvertible {
    /// `realm.write { ... }` running the steps.
    case write([Step])
    /// `beginWrite()`, the steps, `commitWrite()` (or `cancelWrite()` when a step throws).
    case manualWrite([Step])
    /// `realm.write { ... }` whose body throws a user error after the steps: rolls back.
    case throwingWrite([Step])
    /// `beginWrite()`, the steps (stopping at the first error), `cancelWrite()`.
    case cancelledWrite([Step])

    /// The steps of the operation.
    package var steps: [Step] {
        switch self {
        case .write(let s), .manualWrite(let s), .throwingWrite(let s), .cancelledWrite(let s): s
        }
    }

    /// The same kind of operation with other steps.
    package func with(steps: [Step]) -> PropertyOperation {
        switch self {
        case .write: .write(steps)
        case .manualWrite: .manualWrite(steps)
        case .throwingWrite: .throwingWrite(steps)
        case .cancelledWrite: .cancelledWrite(steps)
        }
    }

    package var description: String {
        switch self {
        case .write(let s): ".write(\(swiftList(s)))"
        case .manualWrite(let s): ".manualWrite(\(swiftList(s)))"
        case .throwingWrite(let s): ".throwingWrite(\(swiftList(s)))"
        case .cancelledWrite(let s): ".cancelledWrite(\(swiftList(s)))"
        }
    }
}

extension Array where Element == PropertyOperation {
    /// The operations as a Swift array literal, one per line, numbered.
    package var swiftSource: String {
        if isEmpty { return "[]" }
        var lines = ["["]
        for (i, op) in enumerated() { lines.append("    \(op),  // \(i)") }
        lines.append("]")
        return lines.joined(separator: "\n")
    }
}

private func q(_ s: String) -> String { String(reflecting: s) }

/// A mixed value as Swift source, for the kinds the generator draws.
func swiftSource(_ value: AnyValue) -> String {
    switch value {
    case .list(let items): return ".list([" + items.map(swiftSource).joined(separator: ", ") + "])"
    case .dictionary(let values):
        let entries = values.sorted { $0.key < $1.key }.map { "\(q($0.key)): \(swiftSource($0.value))" }
        return ".dictionary([" + (entries.isEmpty ? ":" : entries.joined(separator: ", ")) + "])"
    default: break
    }
    return switch value.propertyValue {
    case .null: ".null"
    case .bool(let v): ".bool(\(v))"
    case .int(let v): ".int(\(v))"
    case .double(let v): ".double(\(v))"
    case .string(let v): ".string(\(q(v)))"
    case .decimal(let v): ".decimal(Decimal(string: \"\(v)\")!)"
    case .objectID(let v): ".objectID(ObjectID(hex: \"\(v.hexString)\")!)"
    case .date(let v): ".date(Date(timeIntervalSince1970: \(v.timeIntervalSince1970)))"
    case .uuid(let v): ".uuid(UUID(uuidString: \"\(v.uuidString)\")!)"
    case .data(let v): ".data(Data(\(Array(v))))"
    default: "AnyValue(\(value.propertyValue))!"
    }
}

private func o<T: CustomStringConvertible>(_ value: T?) -> String {
    value.map { $0 is String ? q($0 as! String) : $0.description } ?? "nil"
}

private func o(_ value: [Int]?) -> String { value.map { "\($0)" } ?? "nil" }

private func swiftList<T: CustomStringConvertible>(_ items: [T]) -> String {
    "[" + items.map(\.description).joined(separator: ", ") + "]"
}
