import Foundation
import LiveObjects
import Synchronization

/// The keys of the objects the driver creates during an operation, whether or not its write
/// commits: the harness checks that the keys of objects that were deleted, or whose creation was
/// rolled back, never resolve again.
package final class CreationLog: Sendable {
    private let entries = Locked<[(type: String, key: ObjectKey)]>([])

    package init() {}

    /// The keys logged so far, with their type names.
    package var keys: [(type: String, key: ObjectKey)] { entries.withLock { $0 } }

    func add(_ type: String, _ key: ObjectKey?) {
        guard let key else { return }
        entries.withLock { $0.append((type, key)) }
    }

    func add(_ object: DynamicObject) { add(object.typeName, object.key) }

    /// Logs a managed note and the notes nested in it.
    func add(_ note: PropNote) {
        add("PropNote", note.objectKey)
        for sub in note.subnotes { add(sub) }
    }
}

/// Performs operations on a realm of ``propertyTestModelTypes`` through the public API, and
/// reads back what the realm shows.
package enum RealmDriver {
    /// Runs one operation (one write transaction) and reports how the write ended.
    package static func perform(
        _ operation: PropertyOperation, on realm: isolated Realm, log: CreationLog = CreationLog()
    ) -> WriteOutcome {
        do {
            switch operation {
            case .write(let steps):
                try realm.write { realm in
                    for step in steps { try perform(step, on: realm, log: log) }
                }
                return .committed
            case .manualWrite(let steps):
                try realm.beginWrite()
                do {
                    for step in steps { try perform(step, on: realm, log: log) }
                    try realm.commitWrite()
                } catch {
                    realm.cancelWrite()
                    throw error
                }
                return .committed
            case .throwingWrite(let steps):
                try realm.write { realm in
                    for step in steps { try perform(step, on: realm, log: log) }
                    throw HarnessUserError()
                }
                return .committed
            case .cancelledWrite(let steps):
                try realm.beginWrite()
                for step in steps {
                    do { try perform(step, on: realm, log: log) } catch { break }
                }
                realm.cancelWrite()
                return .cancelled
            }
        } catch let error as LiveObjectsError {
            return .failed(.code(error.code))
        } catch is HarnessUserError {
            return .failed(.userError)
        } catch {
            return .failed(.other(String(describing: error)))
        }
    }

    // MARK: Steps

    /// Performs one step inside an open write, logging the keys of the objects it creates.
    package static func perform(_ step: Step, on realm: isolated Realm, log: CreationLog = CreationLog()) throws {
        switch step {
        case .createNode, .upsertNode, .addNode, .createPart:
            try performCreation(step, on: realm, log: log)
        case .updateNode, .setAmount, .setLabel, .changeID, .setNext, .setPinned, .setSub:
            try performUpdate(step, on: realm, log: log)
        case .insertFriend, .removeFriend, .moveFriend, .replaceFriend, .insertNumber, .removeNumber, .moveNumber,
            .setFriends, .swapFriends, .clearList, .appendPart, .removePart:
            try performListEdit(step, on: realm, log: log)
        case .insertLabel, .removeLabel, .insertAlly, .removeAlly, .setAttr, .removeAttr, .setPayload, .setMate,
            .removeMate:
            try performCollectionEdit(step, on: realm)
        case .setNote, .appendNote, .removeNote, .moveNote, .setNotes, .replaceNote:
            try performNoteListEdit(step, on: realm, log: log)
        case .editNote, .setNoteRef, .appendSubnote, .adoptNote, .deleteNote:
            try performNoteEdit(step, on: realm, log: log)
        case .deleteNodes, .deletePart, .deleteAll, .touchDeleted, .nestedWrite:
            try performDeletion(step, on: realm, log: log)
        }
    }

    /// Performs a step that creates objects (or updates them by primary key).
    private static func performCreation(_ step: Step, on realm: isolated Realm, log: CreationLog) throws {
        switch step {
        case let .createNode(id, tag, score, next, friends, note, api):
            if api == .typed {
                var value: [String: Any] = ["id": id, "tag": tag, "score": score, "friends": friends]
                if let next { value["next"] = next }
                if let note { value["note"] = dictionary(note) }
                let node = try realm.create(PropNode.self, value: value)
                log.add("PropNode", node.objectKey)
                if let note = node.note { log.add(note) }
            } else {
                let object = try realm.dynamicCreate(
                    "PropNode",
                    value: [
                        "id": .int(Int64(id)), "tag": .string(tag), "score": .int(Int64(score)),
                        "next": next.map { .int(Int64($0)) } ?? .null,
                        "friends": .list(friends.map { .int(Int64($0)) }),
                    ])
                log.add(object)
                if let note { try createNote(note, in: object, "note", log) }
            }
        case let .upsertNode(id, score, friends, api):
            if api == .typed {
                var value: [String: Any] = ["id": id, "score": score]
                if let friends { value["friends"] = friends }
                log.add("PropNode", try realm.create(PropNode.self, value: value, update: .modified).objectKey)
            } else {
                var value: [String: PropertyValue] = ["id": .int(Int64(id)), "score": .int(Int64(score))]
                if let friends { value["friends"] = .list(friends.map { .int(Int64($0)) }) }
                log.add(try realm.dynamicCreate("PropNode", value: value, update: .modified))
            }
        case let .addNode(id, tag, friends, note, update):
            let node = PropNode()
            node.id = id
            node.tag = tag
            var fresh: [Int: PropNode] = [id: node]
            for f in friends {
                if let object = fresh[f] ?? self.node(f, realm) {
                    node.friends.append(object)
                } else {
                    let object = PropNode()
                    object.id = f
                    fresh[f] = object
                    node.friends.append(object)
                }
            }
            if let note { node.note = unmanagedNote(note, realm, fresh: fresh) }
            let policy: UpdatePolicy =
                switch update {
                case .error: .error
                case .modified: .modified
                case .all: .all
                }
            try realm.add(node, update: policy)
            for object in fresh.values { log.add("PropNode", object.objectKey) }
            if let note = node.note { log.add(note) }
        case let .createPart(id, label, sub, api):
            if api == .typed {
                var value: [String: Any] = ["id": id]
                if let label { value["label"] = label }
                if let sub { value["sub"] = sub }
                log.add("PropPart", try realm.create(PropPart.self, value: value).objectKey)
            } else {
                try log.add(
                    realm.dynamicCreate(
                        "PropPart",
                        value: [
                            "id": .string(id), "label": label.map { .string($0) } ?? .null,
                            "sub": sub.map { .string($0) } ?? .null,
                        ]))
            }
        default:
            preconditionFailure("performCreation: not one of its cases: \(step)")
        }
    }

    /// Performs a step that sets a property.
    private static func performUpdate(_ step: Step, on realm: isolated Realm, log: CreationLog) throws {
        switch step {
        case let .updateNode(id, tag, score, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                if let tag { node.tag = tag }
                if let score { node.score = score }
            } else {
                guard let node = try dynamicNode(id, realm) else { return }
                if let tag { try node.set("tag", to: .string(tag)) }
                if let score { try node.set("score", to: .int(Int64(score))) }
            }
        case let .setAmount(id, amount, code, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                node.amount = amount
                node.code = code
            } else {
                guard let node = try dynamicNode(id, realm) else { return }
                try node.set("amount", to: amount.map { .decimal($0) } ?? .null)
                try node.set("code", to: code.map { .objectID($0) } ?? .null)
            }
        case let .setLabel(id, label, api):
            if api == .typed {
                part(id, realm)?.label = label
            } else {
                try dynamicPart(id, realm)?.set("label", to: label.map { .string($0) } ?? .null)
            }
        case let .changeID(id, to, api):
            if api == .typed {
                node(id, realm)?.id = to
            } else {
                try dynamicNode(id, realm)?.set("id", to: .int(Int64(to)))
            }
        case let .setNext(id, to, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                if let to {
                    guard let target = self.node(to, realm) else { return }
                    node.next = target
                } else {
                    node.next = nil
                }
            } else {
                try dynamicNode(id, realm)?.set("next", to: to.map { .int(Int64($0)) } ?? .null)
            }
        case let .setPinned(id, to, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                if let to {
                    guard let target = part(to, realm) else { return }
                    node.pinned = target
                } else {
                    node.pinned = nil
                }
            } else {
                try dynamicNode(id, realm)?.set("pinned", to: to.map { .string($0) } ?? .null)
            }
        case let .setSub(id, to, api):
            if api == .typed {
                guard let part = part(id, realm) else { return }
                if let to {
                    guard let target = self.part(to, realm) else { return }
                    part.sub = target
                } else {
                    part.sub = nil
                }
            } else {
                try dynamicPart(id, realm)?.set("sub", to: to.map { .string($0) } ?? .null)
            }
        default:
            preconditionFailure("performUpdate: not one of its cases: \(step)")
        }
    }

    /// Performs a step that edits a list of links, numbers or parts.
    private static func performListEdit(_ step: Step, on realm: isolated Realm, log: CreationLog) throws {
        switch step {
        case let .insertFriend(id, at, friend, api):
            if api == .typed {
                guard let node = node(id, realm), let target = self.node(friend, realm) else { return }
                node.friends.insert(target, at: at)
            } else {
                try dynamicNode(id, realm)?.insert(.int(Int64(friend)), into: "friends", at: at)
            }
        case let .removeFriend(id, at, api):
            if api == .typed {
                node(id, realm)?.friends.remove(at: at)
            } else {
                try dynamicNode(id, realm)?.remove(from: "friends", at: at)
            }
        case let .moveFriend(id, from, to, api):
            if api == .typed {
                node(id, realm)?.friends.move(from: from, to: to)
            } else {
                try dynamicNode(id, realm)?.move(in: "friends", from: from, to: to)
            }
        case let .replaceFriend(id, at, friend, api):
            if api == .typed {
                guard let node = node(id, realm), let target = self.node(friend, realm) else { return }
                node.friends[at] = target
            } else {
                try dynamicNode(id, realm)?.replace(in: "friends", at: at, with: .int(Int64(friend)))
            }
        case let .insertNumber(id, at, value, api):
            if api == .typed {
                node(id, realm)?.numbers.insert(value, at: at)
            } else {
                try dynamicNode(id, realm)?.insert(.int(Int64(value)), into: "numbers", at: at)
            }
        case let .removeNumber(id, at, api):
            if api == .typed {
                node(id, realm)?.numbers.remove(at: at)
            } else {
                try dynamicNode(id, realm)?.remove(from: "numbers", at: at)
            }
        case let .moveNumber(id, from, to, api):
            if api == .typed {
                node(id, realm)?.numbers.move(from: from, to: to)
            } else {
                try dynamicNode(id, realm)?.move(in: "numbers", from: from, to: to)
            }
        case let .setFriends(id, to, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                node.friends = List(to.compactMap { self.node($0, realm) })
            } else {
                try dynamicNode(id, realm)?.set("friends", to: .list(to.map { .int(Int64($0)) }))
            }
        case let .swapFriends(id, i, j):
            node(id, realm)?.friends.swapAt(i, j)
        case let .clearList(id, list, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                switch list {
                case .friends: node.friends.removeAll()
                case .numbers: node.numbers.removeAll()
                case .parts: node.parts.removeAll()
                case .notes: node.notes.removeAll()
                case .labels: node.labels.removeAll()
                case .allies: node.allies.removeAll()
                case .attrs: node.attrs.removeAll()
                case .mates: node.mates.removeAll()
                }
            } else {
                try dynamicNode(id, realm)?.set(list.name, to: .list([]))
            }
        case let .appendPart(id, partID, api):
            if api == .typed {
                guard let node = node(id, realm), let part = part(partID, realm) else { return }
                node.parts.append(part)
            } else {
                try dynamicNode(id, realm)?.append(.string(partID), to: "parts")
            }
        case let .removePart(id, at, api):
            if api == .typed {
                node(id, realm)?.parts.remove(at: at)
            } else {
                try dynamicNode(id, realm)?.remove(from: "parts", at: at)
            }
        default:
            preconditionFailure("performListEdit: not one of its cases: \(step)")
        }
    }

    /// Performs a step that edits a set or the map, or sets the mixed value.
    private static func performCollectionEdit(_ step: Step, on realm: isolated Realm) throws {
        switch step {
        case let .insertLabel(id, label, api):
            if api == .typed {
                node(id, realm)?.labels.insert(label)
            } else {
                try dynamicNode(id, realm)?.append(.string(label), to: "labels")
            }
        case let .removeLabel(id, label, api):
            if api == .typed {
                node(id, realm)?.labels.remove(label)
            } else {
                try removeMember(.string(label), from: "labels", of: dynamicNode(id, realm))
            }
        case let .insertAlly(id, ally, api):
            if api == .typed {
                guard let node = node(id, realm), let target = self.node(ally, realm) else { return }
                node.allies.insert(target)
            } else {
                try dynamicNode(id, realm)?.append(.int(Int64(ally)), to: "allies")
            }
        case let .removeAlly(id, ally, api):
            if api == .typed {
                guard let node = node(id, realm), let target = self.node(ally, realm) else { return }
                node.allies.remove(target)
            } else {
                guard let target = try dynamicNode(ally, realm) else { return }
                try removeMember(.object(target.key), from: "allies", of: dynamicNode(id, realm))
            }
        case let .setAttr(id, key, value, api):
            if api == .typed {
                node(id, realm)?.attrs[key] = .some(value)
            } else {
                try editMap(of: dynamicNode(id, realm)) { $0[key] = value.map { .int(Int64($0)) } ?? .null }
            }
        case let .removeAttr(id, key, api):
            if api == .typed {
                node(id, realm)?.attrs.removeObject(for: key)
            } else {
                try editMap(of: dynamicNode(id, realm)) { $0[key] = nil }
            }
        case let .setMate(id, key, to, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                if let to {
                    guard let target = self.node(to, realm) else { return }
                    node.mates[key] = .some(target)
                } else {
                    node.mates[key] = .some(nil)
                }
            } else {
                try editMap("mates", of: dynamicNode(id, realm)) { $0[key] = to.map { .int(Int64($0)) } ?? .null }
            }
        case let .removeMate(id, key, api):
            if api == .typed {
                node(id, realm)?.mates.removeObject(for: key)
            } else {
                try editMap("mates", of: dynamicNode(id, realm)) { $0[key] = nil }
            }
        case let .setPayload(id, payload, api):
            if api == .typed {
                node(id, realm)?.payload = payload
            } else {
                try dynamicNode(id, realm)?.set("payload", to: payload.propertyValue)
            }
        default:
            preconditionFailure("performCollectionEdit: not one of its cases: \(step)")
        }
    }

    /// Removes a member from a set through the dynamic API: at its position, if the set holds it.
    private static func removeMember(_ member: PropertyValue, from property: String, of node: DynamicObject?) throws {
        guard let node, case .list(let members) = node[property], let index = members.firstIndex(of: member)
        else { return }
        try node.remove(from: property, at: index)
    }

    /// Sets a map through the dynamic API: its entries read, changed, and set whole.
    private static func editMap(
        _ property: String = "attrs", of node: DynamicObject?, _ change: (inout [String: PropertyValue]) -> Void
    ) throws {
        guard let node else { return }
        var entries: [String: PropertyValue] = [:]
        if case .list(let pairs) = node[property] {
            for case .list(let pair) in pairs where pair.count == 2 {
                if case .string(let key) = pair[0] { entries[key] = pair[1] }
            }
        }
        change(&entries)
        try node.set(property, to: .list(entries.keys.sorted().map { .list([.string($0), entries[$0]!]) }))
    }

    /// Performs a step that sets a node's notes or edits its list of them.
    private static func performNoteListEdit(_ step: Step, on realm: isolated Realm, log: CreationLog) throws {
        switch step {
        case let .setNote(id, note, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                let object = note.map { unmanagedNote($0, realm) }
                node.note = object
                if let object, object.isManaged { log.add(object) }
            } else {
                guard let node = try dynamicNode(id, realm) else { return }
                if let note {
                    try createNote(note, in: node, "note", log)
                } else {
                    try node.set("note", to: .null)
                }
            }
        case let .appendNote(id, note, api):
            if api == .typed {
                let object = unmanagedNote(note, realm)
                node(id, realm)?.notes.append(object)
                if object.isManaged { log.add(object) }
            } else {
                guard let node = try dynamicNode(id, realm) else { return }
                try createNote(note, in: node, "notes", log)
            }
        case let .removeNote(id, at, api):
            if api == .typed {
                node(id, realm)?.notes.remove(at: at)
            } else {
                try dynamicNode(id, realm)?.remove(from: "notes", at: at)
            }
        case let .moveNote(id, from, to, api):
            if api == .typed {
                node(id, realm)?.notes.move(from: from, to: to)
            } else {
                try dynamicNode(id, realm)?.move(in: "notes", from: from, to: to)
            }
        case let .setNotes(id, keep, new, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                let notes = node.notes
                let kept = keep.filter { notes.indices.contains($0) }.map { notes[$0] }
                let added = new.map { unmanagedNote($0, realm) }
                node.notes = List(kept + added)
                for object in added where object.isManaged { log.add(object) }
            } else {
                guard let node = try dynamicNode(id, realm) else { return }
                let notes = try node.linkedObjects("notes")
                let kept = keep.filter { notes.indices.contains($0) }.map { PropertyValue.object(notes[$0].key) }
                try node.set("notes", to: .list(kept))
                for note in new { try createNote(note, in: node, "notes", log) }
            }
        case let .replaceNote(id, at, note):
            guard let node = node(id, realm) else { return }
            let object = unmanagedNote(note, realm)
            node.notes[at] = object
            if object.isManaged { log.add(object) }
        default:
            preconditionFailure("performNoteListEdit: not one of its cases: \(step)")
        }
    }

    /// Performs a step on a note found by its path.
    private static func performNoteEdit(_ step: Step, on realm: isolated Realm, log: CreationLog) throws {
        switch step {
        case let .editNote(id, path, text, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                note(at: path, of: node)?.text = text
            } else {
                guard let node = try dynamicNode(id, realm) else { return }
                try dynamicNote(at: path, of: node)?.set("text", to: .string(text))
            }
        case let .setNoteRef(id, path, to, api):
            if api == .typed {
                guard let node = node(id, realm), let note = note(at: path, of: node) else { return }
                if let to {
                    guard let target = self.node(to, realm) else { return }
                    note.ref = target
                } else {
                    note.ref = nil
                }
            } else {
                guard let node = try dynamicNode(id, realm) else { return }
                try dynamicNote(at: path, of: node)?.set("ref", to: to.map { .int(Int64($0)) } ?? .null)
            }
        case let .appendSubnote(id, path, note, api):
            if api == .typed {
                guard let node = node(id, realm), let parent = self.note(at: path, of: node) else {
                    return
                }
                let object = unmanagedNote(note, realm)
                parent.subnotes.append(object)
                if object.isManaged { log.add(object) }
            } else {
                guard let node = try dynamicNode(id, realm),
                    let parent = try dynamicNote(at: path, of: node)
                else { return }
                try createNote(note, in: parent, "subnotes", log)
            }
        case let .adoptNote(id, path, into, asList, api):
            if api == .typed {
                guard let node = node(id, realm), let note = note(at: path, of: node),
                    let target = self.node(into, realm)
                else { return }
                if asList { target.notes.append(note) } else { target.note = note }
            } else {
                guard let node = try dynamicNode(id, realm), let note = try dynamicNote(at: path, of: node),
                    let target = try dynamicNode(into, realm)
                else { return }
                if asList {
                    try target.append(.object(note.key), to: "notes")
                } else {
                    try target.set("note", to: .object(note.key))
                }
            }
        case let .deleteNote(id, path, api):
            if api == .typed {
                guard let node = node(id, realm), let note = note(at: path, of: node) else { return }
                try realm.delete(note)
            } else {
                guard let node = try dynamicNode(id, realm), let note = try dynamicNote(at: path, of: node)
                else { return }
                try realm.delete(note)
            }
        default:
            preconditionFailure("performNoteEdit: not one of its cases: \(step)")
        }
    }

    /// Performs a step that deletes objects, or writes inside a write.
    private static func performDeletion(_ step: Step, on realm: isolated Realm, log: CreationLog) throws {
        switch step {
        case let .deleteNodes(ids, api):
            if api == .typed {
                let nodes = ids.compactMap { node($0, realm) }
                if !nodes.isEmpty { try realm.delete(nodes) }
            } else {
                for id in ids {
                    if let node = try dynamicNode(id, realm) { try realm.delete(node) }
                }
            }
        case let .deletePart(id, api):
            if api == .typed {
                if let part = part(id, realm) { try realm.delete(part) }
            } else {
                if let part = try dynamicPart(id, realm) { try realm.delete(part) }
            }
        case let .deleteAll(kind, api):
            switch (kind, api) {
            case (.nodes, .typed): try realm.deleteAll(PropNode.self)
            case (.parts, .typed): try realm.deleteAll(PropPart.self)
            case (.everything, .typed): try realm.deleteAll()
            case (.nodes, .dynamic): try realm.deleteAll("PropNode")
            case (.parts, .dynamic): try realm.deleteAll("PropPart")
            case (.everything, .dynamic):
                try realm.deleteAll("PropNode")
                try realm.deleteAll("PropPart")
            }
        case let .touchDeleted(id, api):
            if api == .typed {
                guard let node = node(id, realm) else { return }
                try realm.delete(node)
                node.tag = "stale"
            } else {
                guard let node = try dynamicNode(id, realm) else { return }
                try realm.delete(node)
                try node.set("tag", to: .string("stale"))
            }
        case .nestedWrite:
            try realm.write { _ in }
        default:
            preconditionFailure("performDeletion: not one of its cases: \(step)")
        }
    }

    // MARK: Lookups

    private static func node(_ id: Int, _ realm: isolated Realm) -> PropNode? {
        realm.object(ofType: PropNode.self, forPrimaryKey: id)
    }

    private static func part(_ id: String, _ realm: isolated Realm) -> PropPart? {
        realm.object(ofType: PropPart.self, forPrimaryKey: id)
    }

    private static func dynamicNode(_ id: Int, _ realm: isolated Realm) throws -> DynamicObject? {
        try realm.dynamicObject(ofType: "PropNode", forPrimaryKey: .int(Int64(id)))
    }

    private static func dynamicPart(_ id: String, _ realm: isolated Realm) throws -> DynamicObject? {
        try realm.dynamicObject(ofType: "PropPart", forPrimaryKey: .string(id))
    }

    private static func note(at path: NotePath, of node: PropNode) -> PropNote? {
        var current: PropNote?
        switch path.root {
        case .note:
            current = node.note
        case .notes(let i):
            current = node.notes.indices.contains(i) ? node.notes[i] : nil
        }
        for i in path.sub {
            guard let c = current, c.subnotes.indices.contains(i) else { return nil }
            current = c.subnotes[i]
        }
        return current
    }

    private static func dynamicNote(at path: NotePath, of node: DynamicObject) throws -> DynamicObject? {
        var current: DynamicObject?
        switch path.root {
        case .note:
            current = try node.linkedObject("note")
        case .notes(let i):
            let notes = try node.linkedObjects("notes")
            current = notes.indices.contains(i) ? notes[i] : nil
        }
        for i in path.sub {
            guard let c = current else { return nil }
            let subnotes = try c.linkedObjects("subnotes")
            current = subnotes.indices.contains(i) ? subnotes[i] : nil
        }
        return current
    }

    // MARK: Notes

    /// A note as `create` input.
    private static func dictionary(_ note: NoteValue) -> [String: Any] {
        var value: [String: Any] = ["text": note.text, "subnotes": note.subnotes.map(dictionary)]
        if let ref = note.ref { value["ref"] = ref }
        return value
    }

    /// An unmanaged note linking to existing nodes (or to `fresh` unmanaged nodes added with it);
    /// a link to a missing node is left out.
    private static func unmanagedNote(
        _ note: NoteValue, _ realm: isolated Realm, fresh: [Int: PropNode] = [:]
    ) -> PropNote {
        let object = PropNote()
        object.text = note.text
        if let ref = note.ref {
            object.ref = fresh[ref] ?? node(ref, realm)
        }
        for sub in note.subnotes {
            object.subnotes.append(unmanagedNote(sub, realm, fresh: fresh))
        }
        return object
    }

    /// Creates a note through the dynamic API: `setEmbedded` on the parent, then on the new note
    /// for each nested note.
    private static func createNote(
        _ note: NoteValue, in parent: DynamicObject, _ property: String, _ log: CreationLog
    ) throws {
        let created = try parent.setEmbedded(
            property,
            values: ["text": .string(note.text), "ref": note.ref.map { .int(Int64($0)) } ?? .null])
        log.add(created)
        for sub in note.subnotes { try createNote(sub, in: created, "subnotes", log) }
    }

    // MARK: Observing

    /// What the realm shows through one API: every object with its values, and every
    /// `LinkingObjects`. Problems found on the way (two objects with one primary key, a link that
    /// does not resolve, a `LinkingObjects` entry that is no reachable note) are returned too.
    package static func observe(_ realm: isolated Realm, through api: API) -> (view: GraphView, problems: [String]) {
        api == .typed ? observeTyped(realm) : observeDynamic(realm)
    }

    private static func observeTyped(_ realm: isolated Realm) -> (view: GraphView, problems: [String]) {
        var view = GraphView()
        var problems: [String] = []
        var notePaths: [ObjectKey: String] = [:]

        func value(of note: PropNote, at path: String) -> NoteValue {
            if let key = note.objectKey { notePaths[key] = path }
            let subnotes = note.subnotes.enumerated().map { i, sub in
                value(of: sub, at: path + ".subnotes[\(i)]")
            }
            return NoteValue(note.text, ref: note.ref?.id, subnotes)
        }

        let nodes = realm.objects(PropNode.self)
        for object in nodes {
            var node = ReferenceModel.Node(id: object.id)
            node.tag = object.tag
            node.score = object.score
            node.amount = object.amount
            node.code = object.code
            node.next = object.next?.id
            node.friends = object.friends.map(\.id)
            node.numbers = Array(object.numbers)
            node.parts = object.parts.map(\.id)
            node.pinned = object.pinned?.id
            node.note = object.note.map { value(of: $0, at: "n\(node.id).note") }
            node.notes = object.notes.enumerated().map { i, note in
                value(of: note, at: "n\(node.id).notes[\(i)]")
            }
            node.labels = Array(object.labels)
            node.allies = object.allies.map(\.id)
            node.attrs = object.attrs.dictionary
            node.mates = object.mates.dictionary.mapValues { $0?.id }
            node.payload = object.payload
            if view.nodes[node.id] != nil { problems.append("two PropNode objects have id \(node.id)") }
            view.nodes[node.id] = node
        }
        let parts = realm.objects(PropPart.self)
        for object in parts {
            var part = ReferenceModel.Part(id: object.id)
            part.label = object.label
            part.sub = object.sub?.id
            if view.parts[part.id] != nil { problems.append("two PropPart objects have id \(part.id)") }
            view.parts[part.id] = part
        }
        view.noteCount = realm.objects(PropNote.self).count
        for object in nodes {
            view.referrers[object.id] = object.referrers.map(\.id)
            view.followers[object.id] = object.followers.map(\.id)
            view.admirers[object.id] = object.admirers.map(\.id)
            view.matedBy[object.id] = object.matedBy.map(\.id)
            view.mentions[object.id] = object.mentions.map { note in
                note.objectKey.flatMap { notePaths[$0] } ?? "<unreachable note \(note)>"
            }
        }
        for object in parts {
            view.holders[object.id] = object.holders.map(\.id)
            view.pinners[object.id] = object.pinners.map(\.id)
            view.supers[object.id] = object.supers.map(\.id)
        }
        view.normalize()
        if let error = realm.store.takePendingError() {
            problems.append("reading the realm recorded an error: \(error)")
        }
        return (view, problems)
    }

    /// The items of a list value; none for any other value.
    private static func list(_ value: PropertyValue) -> [PropertyValue] {
        if case .list(let items) = value { return items }
        return []
    }

    /// Reads a node's `labels`, `allies`, `attrs`, `mates` and `payload` from its dynamic values;
    /// returns what does not read as their types.
    private static func readSetsMapAndMixedValue(
        _ values: [String: PropertyValue], into node: inout ReferenceModel.Node, nodeIDs: [ObjectKey: Int]
    ) -> [String] {
        var problems: [String] = []
        if case .list(let labels) = values["labels"] {
            node.labels = labels.map { $0.stringValue ?? "?" }
        }
        if case .list(let allies) = values["allies"] {
            node.allies = allies.map { ally in
                if let key = ally.objectKey, let id = nodeIDs[key] { return id }
                problems.append("PropNode[\(node.id)].allies holds \(ally), which is no PropNode")
                return -1
            }
        }
        if case .list(let entries) = values["attrs"] {
            for entry in entries {
                guard case .list(let pair) = entry, pair.count == 2, case .string(let key) = pair[0] else {
                    problems.append("PropNode[\(node.id)].attrs holds an entry that is no key and value: \(entry)")
                    continue
                }
                node.attrs[key] = .some(pair[1].intValue.map { Int($0) })
            }
        }
        if case .list(let entries) = values["mates"] {
            for entry in entries {
                guard case .list(let pair) = entry, pair.count == 2, case .string(let key) = pair[0] else {
                    problems.append("PropNode[\(node.id)].mates holds an entry that is no key and value: \(entry)")
                    continue
                }
                if pair[1].isNull {
                    node.mates[key] = .some(nil)
                } else if let target = pair[1].objectKey, let id = nodeIDs[target] {
                    node.mates[key] = id
                } else {
                    problems.append("PropNode[\(node.id)].mates[\(key)] holds \(pair[1]), which is no PropNode")
                }
            }
        }
        if let payload = AnyValue(values["payload"] ?? .null) {
            node.payload = payload
        } else {
            problems.append("PropNode[\(node.id)].payload is no mixed value: \(values["payload"] ?? .null)")
        }
        return problems
    }

    private static func observeDynamic(_ realm: isolated Realm) -> (view: GraphView, problems: [String]) {
        var view = GraphView()
        var problems: [String] = []
        let nodes: DynamicResults
        let parts: DynamicResults
        do {
            nodes = try realm.dynamicObjects("PropNode")
            parts = try realm.dynamicObjects("PropPart")
            view.noteCount = try realm.dynamicObjects("PropNote").count
        } catch {
            return (view, ["cannot list the objects: \(error)"])
        }
        var nodeIDs: [ObjectKey: Int] = [:]
        for object in nodes { nodeIDs[object.key] = Int(object["id"].intValue ?? -1) }
        var partIDs: [ObjectKey: String] = [:]
        for object in parts { partIDs[object.key] = object["id"].stringValue ?? "?" }
        var notePaths: [ObjectKey: String] = [:]

        func nodeID(_ value: PropertyValue, _ what: @autoclosure () -> String) -> Int? {
            guard case .object(let key) = value else { return nil }
            if let id = nodeIDs[key] { return id }
            problems.append("\(what()) links to \(key), which is no PropNode")
            return -1
        }
        func partID(_ value: PropertyValue, _ what: @autoclosure () -> String) -> String? {
            guard case .object(let key) = value else { return nil }
            if let id = partIDs[key] { return id }
            problems.append("\(what()) links to \(key), which is no PropPart")
            return "?"
        }
        func value(of note: DynamicObject, at path: String) -> NoteValue {
            notePaths[note.key] = path
            let values = note.values
            let subnotes = ((try? note.linkedObjects("subnotes")) ?? []).enumerated().map { i, sub in
                value(of: sub, at: path + ".subnotes[\(i)]")
            }
            if subnotes.count != list(values["subnotes"] ?? .null).count {
                problems.append("\(path).subnotes: not every entry resolves to a note")
            }
            return NoteValue(
                values["text"]?.stringValue ?? "?", ref: nodeID(values["ref"] ?? .null, "\(path).ref"), subnotes)
        }

        let nodeValues = nodes.map(\.values)
        let partValues = parts.map(\.values)
        for (object, values) in zip(nodes, nodeValues) {
            let id = Int(values["id"]?.intValue ?? -1)
            var node = ReferenceModel.Node(id: id)
            node.tag = values["tag"]?.stringValue ?? "?"
            node.score = Int(values["score"]?.intValue ?? -1)
            if case .decimal(let amount) = values["amount"] { node.amount = amount }
            if case .objectID(let code) = values["code"] { node.code = code }
            node.next = nodeID(values["next"] ?? .null, "PropNode[\(id)].next")
            node.friends = list(values["friends"] ?? .null).map { nodeID($0, "PropNode[\(id)].friends") ?? -1 }
            node.numbers = list(values["numbers"] ?? .null).map { Int($0.intValue ?? -1) }
            node.parts = list(values["parts"] ?? .null).map { partID($0, "PropNode[\(id)].parts") ?? "?" }
            node.pinned = partID(values["pinned"] ?? .null, "PropNode[\(id)].pinned")
            node.note = (try? object.linkedObject("note"))?.map { value(of: $0, at: "n\(id).note") }
            node.notes = ((try? object.linkedObjects("notes")) ?? []).enumerated().map { i, note in
                value(of: note, at: "n\(id).notes[\(i)]")
            }
            problems += readSetsMapAndMixedValue(values, into: &node, nodeIDs: nodeIDs)
            if view.nodes[id] != nil { problems.append("two PropNode objects have id \(id)") }
            view.nodes[id] = node
        }
        for values in partValues {
            let id = values["id"]?.stringValue ?? "?"
            var part = ReferenceModel.Part(id: id)
            part.label = values["label"]?.stringValue
            part.sub = partID(values["sub"] ?? .null, "PropPart[\(id)].sub")
            if view.parts[id] != nil { problems.append("two PropPart objects have id \(id)") }
            view.parts[id] = part
        }
        for values in nodeValues {
            let id = Int(values["id"]?.intValue ?? -1)
            view.referrers[id] = list(values["referrers"] ?? .null).map {
                nodeID($0, "PropNode[\(id)].referrers") ?? -1
            }
            view.followers[id] = list(values["followers"] ?? .null).map {
                nodeID($0, "PropNode[\(id)].followers") ?? -1
            }
            view.admirers[id] = list(values["admirers"] ?? .null).map {
                nodeID($0, "PropNode[\(id)].admirers") ?? -1
            }
            view.matedBy[id] = list(values["matedBy"] ?? .null).map {
                nodeID($0, "PropNode[\(id)].matedBy") ?? -1
            }
            view.mentions[id] = list(values["mentions"] ?? .null).map { item in
                item.objectKey.flatMap { notePaths[$0] } ?? "<unreachable note \(item)>"
            }
        }
        for values in partValues {
            let id = values["id"]?.stringValue ?? "?"
            view.holders[id] = list(values["holders"] ?? .null).map { nodeID($0, "PropPart[\(id)].holders") ?? -1 }
            view.pinners[id] = list(values["pinners"] ?? .null).map { nodeID($0, "PropPart[\(id)].pinners") ?? -1 }
            view.supers[id] = list(values["supers"] ?? .null).map { partID($0, "PropPart[\(id)].supers") ?? "?" }
        }
        view.normalize()
        return (view, problems)
    }
}
