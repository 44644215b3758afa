import LiveObjects
import LiveObjectsSync
import LiveObjectsSyncProtocol

// The list merge of the sync server for FakeServer: the server's own `ListMerge`
// (LiveObjectsSyncProtocol, docs/SYNC-PROTOCOL.md "Lists"), over the engine's values.

extension FakeServer {
    /// The values a create or an update stores: each list sent with a base merged into the
    /// record's list (per member for the properties in `sets`; a map per key), references to deleted
    /// records left out of every list of links, and nil for a key of a map of objects whose target is deleted.
    static func valuesToStore(
        _ change: SyncChange, record: Record?, records: [SyncObjectID: Record], sets: Set<String>,
        mapsWhole: Bool = false
    ) -> [String: SyncValue] {
        var values = change.values
        for (name, base) in change.bases {
            guard let record, !record.isDeleted, let current = record.values[name], let edited = values[name] else {
                continue
            }
            let isSet = sets.contains(name)
            switch (base, edited, current) {
            case (.references(let b), .references(let e), .references(let c)):
                values[name] = .references(
                    isSet
                        ? ListMerge.mergeSet(base: b, edited: e, current: c, key: \.object)
                        : ListMerge.merge(base: b, edited: e, current: c, key: \.object))
            case (.value(.list(let b)), .value(.list(let e)), .value(.list(let c))):
                values[name] = .value(
                    .list(
                        isSet
                            ? ListMerge.mergeSet(base: b, edited: e, current: c, key: { $0 })
                            : ListMerge.merge(base: b, edited: e, current: c, key: { $0 })))
            case (.mixedList(let b), .mixedList(let e), .mixedList(let c)):
                values[name] = .mixedList(
                    isSet
                        ? ListMerge.mergeSet(base: b, edited: e, current: c, key: \.memberKey)
                        : ListMerge.merge(base: b, edited: e, current: c, key: \.withoutServerIDs))
            case (.mixedMap(let b), .mixedMap(let e), .mixedMap(let c)) where !mapsWhole:
                values[name] = .mixedMap(ListMerge.mergeMap(base: b, edited: e, current: c, key: \.withoutServerIDs))
            case (.map(let b), .map(let e), .map(let c)) where !mapsWhole:
                values[name] = .map(ListMerge.mergeMap(base: b, edited: e, current: c))
            case (.referenceMap(let b), .referenceMap(let e), .referenceMap(let c)) where !mapsWhole:
                values[name] = .referenceMap(ListMerge.mergeMap(base: b, edited: e, current: c, key: { $0?.object }))
            default:
                continue
            }
        }
        for (name, value) in values {
            switch value {
            case .references(let list):
                values[name] = .references(list.filter { records[$0.object]?.isDeleted != true })
            case .referenceMap(let entries):
                // A key whose target was deleted on the server is kept with nil.
                values[name] = .referenceMap(
                    entries.mapValues { target in target.flatMap { records[$0.object]?.isDeleted == true ? nil : $0 } })
            default:
                continue
            }
        }
        return values
    }
}

extension SyncMixedValue {
    /// The value with its links naming their targets only, as the server compares them (not
    /// by the server ids they carry).
    var withoutServerIDs: SyncMixedValue { mappingReferences { SyncReference(object: $0.object) } }

    /// A set's member as the server compares it: a number whatever its kind, a link by its
    /// target.
    var memberKey: AnyHashable {
        guard let plain = anyValue else { return AnyHashable(withoutServerIDs) }
        return AnyHashable(plain.propertyValue.mixedMemberKey)
    }
}

extension AnyValue {
    /// The value on the sync side: an AnyValue of a test, which holds no link.
    var synced: SyncMixedValue { SyncMixedValue(self)! }
}

extension Array where Element == AnyValue {
    /// The values on the sync side.
    var synced: [SyncMixedValue] { map(\.synced) }
}

extension Dictionary where Value == AnyValue {
    /// The values on the sync side.
    var synced: [Key: SyncMixedValue] { mapValues(\.synced) }
}
