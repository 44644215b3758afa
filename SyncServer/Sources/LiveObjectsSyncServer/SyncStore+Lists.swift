import Foundation
import LiveObjectsJSON
import LiveObjectsSyncProtocol
import Logging
import PostgresNIO

// Lists merged per operation (docs/SYNC-PROTOCOL.md, "Lists"): a pushed list with a base is
// merged into the stored one; a reference to a deleted object leaves every stored list.

extension SyncStore {
    /// The merge of one list (per member when `isSet`: docs/SYNC-PROTOCOL.md, "Sets"), or nil
    /// when the three values are not lists of one kind (the pushed value then replaces the
    /// stored one).
    static func mergedList(base: JSONValue, edited: JSONValue, current: JSONValue, isSet: Bool = false) -> JSONValue? {
        if let merged = mergedMap(base: base, edited: edited, current: current) { return merged }
        guard let b = base.fields, let e = edited.fields, let c = current.fields,
            b.count == 1, let tag = b.keys.first, tag == "list" || tag == "refs",
            case .array(let baseList)? = b[tag], case .array(let editedList)? = e[tag],
            case .array(let currentList)? = c[tag]
        else { return nil }
        let key: (JSONValue) -> JSONValue = {
            tag == "refs" ? $0.referenceKey : isSet ? $0.setMemberKey : $0.withReferenceKeys
        }
        let merged =
            isSet
            ? ListMerge.mergeSet(base: baseList, edited: editedList, current: currentList, key: key)
            : ListMerge.merge(base: baseList, edited: editedList, current: currentList, key: key)
        return .object([(key: tag, value: .array(merged))])
    }

    /// The merge of one map, per key (docs/SYNC-PROTOCOL.md, "Maps"), its keys in order; nil when
    /// the three values are not all maps. A map needs no schema to be merged so: its tag says
    /// what it is.
    static func mergedMap(base: JSONValue, edited: JSONValue, current: JSONValue) -> JSONValue? {
        func entries(_ value: JSONValue) -> [String: JSONValue]? {
            guard case .array(let pairs)? = value.fields?["map"] else { return nil }
            var entries: [String: JSONValue] = [:]
            for pair in pairs {
                guard case .array(let entry) = pair, entry.count == 2, case .string(let key) = entry[0] else {
                    return nil
                }
                if entries[key] == nil { entries[key] = entry[1] }
            }
            return entries
        }
        guard let b = entries(base), let e = entries(edited), let c = entries(current) else { return nil }
        // A map of objects' values, and links in AnyValues, compare by their targets (not the
        // server ids they carry).
        let merged = ListMerge.mergeMap(base: b, edited: e, current: c) { $0.withReferenceKeys }
        let pairs = merged.sorted { ListMerge.mapKeyPrecedes($0.key, $1.key) }.map {
            JSONValue.array([.string($0.key), $0.value])
        }
        return .object([(key: "map", value: .array(pairs))])
    }

    /// Which of some references name objects deleted in the space, by ``JSONValue/referenceKey``.
    static func deletedObjects(
        among targets: [JSONValue], spaceID: Int64, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> Set<JSONValue> {
        var types: [String] = []
        var ids: [String] = []
        for target in Set(targets.map(\.referenceKey)) {
            guard let fields = target.fields, case .string(let type)? = fields["type"], let id = fields["id"]
            else { continue }
            types.append(type)
            ids.append(id.text)
        }
        let rows = try await connection.query(
            """
            SELECT objects.type, objects.local_id::text FROM objects
            JOIN unnest(\(types)::text[], \(ids)::text[]) AS target(type, id)
              ON objects.type = target.type AND objects.local_id = target.id::jsonb
            WHERE objects.space_id = \(spaceID) AND objects.deleted
            """, logger: logger)
        var deleted = Set<JSONValue>()
        for try await (type, idText) in rows.decode((String, String).self) {
            let id = try JSONValue.canonical(parsing: idText, "a stored id")
            deleted.insert(.sortedObject(["type": .string(type), "id": id]))
        }
        return deleted
    }

    /// Takes a deleted object out of every list of links of the space, and sets every key of a
    /// map of objects naming it to nil: each object changed gets the next version, so that
    /// devices pull it.
    static func dropReferences(
        toType type: String, id: JSONValue, spaceID: Int64, version: inout Int64, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        let key = JSONValue.sortedObject(["type": .string(type), "id": id])
        let rows = try await connection.query(
            """
            SELECT id, "values"::text FROM objects
            WHERE space_id = \(spaceID) AND NOT deleted
              AND (jsonb_path_exists("values", '$.*.refs[*] ? (@.type == $type)', jsonb_build_object('type', \(type)::text))
                OR jsonb_path_exists("values", '$.*.map[*][1].ref ? (@.type == $type)', jsonb_build_object('type', \(type)::text)))
            ORDER BY id
            """, logger: logger)
        var changed: [(Int64, String)] = []
        for try await (objectID, text) in rows.decode((Int64, String).self) {
            guard var values = try JSONValue.canonical(parsing: text, "a stored object").fields else { continue }
            var dropped = false
            for (name, value) in values {
                let kept = value.droppingReferences { $0.referenceKey == key }
                if kept != value {
                    values[name] = kept
                    dropped = true
                }
            }
            if dropped { changed.append((objectID, JSONValue.sortedObject(values).text)) }
        }
        guard !changed.isEmpty else { return }
        let versions = changed.indices.map { version + Int64($0) + 1 }
        version += Int64(changed.count)
        try await connection.query(
            """
            UPDATE objects SET "values" = u.written::jsonb, version = u.version
            FROM unnest(\(changed.map(\.0))::bigint[], \(changed.map(\.1))::text[], \(versions)::bigint[])
                 AS u(id, written, version)
            WHERE objects.id = u.id
            """, logger: logger)
    }
}

extension JSONValue {
    /// What names a reference's target: its type and id (not the server id it may carry).
    var referenceKey: JSONValue {
        guard let fields, let type = fields["type"], let id = fields["id"] else { return self }
        return .sortedObject(["type": type, "id": id])
    }

    /// The references of a list of links; none for any other value.
    var listReferences: [JSONValue] {
        guard case .array(let list)? = self["refs"] else { return [] }
        return list
    }

    /// The references of a list of links or of a map of objects (its `[key, {"ref": …}]`
    /// entries); none for any other value.
    var containedReferences: [JSONValue] {
        guard case .array(let pairs)? = self["map"] else { return listReferences }
        return pairs.compactMap { pair in
            guard case .array(let entry) = pair, entry.count == 2, let target = entry[1]["ref"], target != .null
            else { return nil }
            return target
        }
    }

    /// The value without the references `isGone` picks: a list of links without them, a map of
    /// objects with nil (`{"null": true}`) for their keys; any other value as it is.
    func droppingReferences(_ isGone: (JSONValue) -> Bool) -> JSONValue {
        if case .array(let list)? = self["refs"] {
            let kept = list.filter { !isGone($0) }
            return kept.count == list.count ? self : .object([(key: "refs", value: .array(kept))])
        }
        guard case .array(let pairs)? = self["map"] else { return self }
        var changed = false
        let entries = pairs.map { pair -> JSONValue in
            guard case .array(let entry) = pair, entry.count == 2, let target = entry[1]["ref"], target != .null,
                isGone(target)
            else { return pair }
            changed = true
            return .array([entry[0], .object([(key: "null", value: .bool(true))])])
        }
        return changed ? .object([(key: "map", value: .array(entries))]) : self
    }
}

extension JSONValue {
    /// A value with each link in it (`{"ref": reference}`, at any depth of an AnyValue's lists
    /// and dictionaries) naming its target only (``referenceKey``): as the merges compare
    /// values. A value that holds no link is itself.
    var withReferenceKeys: JSONValue {
        guard case .object(let members) = self, members.count == 1, let (kind, payload) = members.first else {
            return self
        }
        switch (kind, payload) {
        case ("ref", .object): return .object([(key: "ref", value: payload.referenceKey)])
        case ("list", .array(let items)):
            let keyed = items.map(\.withReferenceKeys)
            return keyed == items ? self : .object([(key: "list", value: .array(keyed))])
        case ("dictionary", .array(let pairs)):
            let keyed = pairs.map { pair -> JSONValue in
                guard case .array(let entry) = pair, entry.count == 2 else { return pair }
                return .array([entry[0], entry[1].withReferenceKeys])
            }
            return keyed == pairs ? self : .object([(key: "dictionary", value: .array(keyed))])
        default: return self
        }
    }

    /// A set's member as a device's set compares members: a number by its value, whatever its
    /// kind (`{"int": 1}`, `{"double": 1}` and `{"decimal": "1.0"}` are one member of a set of
    /// `AnyValue`s; within a set of one kind, each value is its own), a link by its target
    /// (``withReferenceKeys``), any other value as it is.
    var setMemberKey: JSONValue {
        guard case .object(let members) = self, members.count == 1, let (kind, payload) = members.first,
            ["int", "float", "double", "decimal"].contains(kind)
        else { return withReferenceKeys }
        let text: String
        switch payload {
        case .number(let number): text = number.text
        case .string(let string) where kind == "decimal": text = string
        default: return self  // a number that is not finite
        }
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN else {
            return self
        }
        return .object([(key: "number", value: .string(value.description))])
    }
}
