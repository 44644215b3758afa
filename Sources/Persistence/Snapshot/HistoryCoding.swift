import Foundation
import LiveObjects
import LiveObjectsJSON

/// The optional `history` member of a snapshot: see docs/FORMAT.md, "Change history".
enum HistoryCoding {
    private static let kindNames: [UInt8: String] = [
        HistoryLog.Kind.insert.rawValue: "i", HistoryLog.Kind.update.rawValue: "u",
        HistoryLog.Kind.delete.rawValue: "d",
        HistoryLog.Kind.insert.rawValue | HistoryLog.remoteFlag: "I",
        HistoryLog.Kind.update.rawValue | HistoryLog.remoteFlag: "U",
        HistoryLog.Kind.delete.rawValue | HistoryLog.remoteFlag: "D",
    ]

    /// Writes `"history": {...}` (the key included), flushing big histories to `sink`.
    static func write(
        _ history: HistoryLog, store: Store, into writer: inout JSONWriter,
        sink: (UnsafeRawBufferPointer) throws(LiveObjectsError) -> Void
    ) throws(LiveObjectsError) {
        writer.key("history")
        writer.beginObject()
        writer.key("token")
        writer.uint(history.token)
        writer.key("start")
        writer.uint(history.startToken)
        writer.key("types")
        writer.beginObject()
        for table in store.tables {
            guard let log = history.types[table.name], log.count > 0 else { continue }
            writer.key(table.name)
            writer.beginArray()
            for i in 0..<log.count {
                writer.beginArray(singleLine: true)
                writer.uint(log.tokens[i])
                writer.string(kindNames[log.kinds[i]] ?? "u")
                ValueCoding.writePlain(log.keys[i], &writer)
                if log.properties[i] >= 0 {
                    writer.beginArray(singleLine: true)
                    for name in history.propertySets[Int(log.properties[i])] { writer.string(name) }
                    writer.endArray()
                }
                writer.endArray()
                if writer.count >= 1 << 20 {
                    try writer.withUnsafeBytes(sink)
                    writer.removeAllBytes()
                }
            }
            writer.endArray()
        }
        writer.endObject()
        writer.endObject()
    }
}

extension SnapshotDecoder {
    /// Reads the value of a `history` member into the store's history, or skips it when the
    /// store keeps none.
    mutating func readHistory(into store: Store) throws(LiveObjectsError) {
        guard let history = store.history else {
            try reader.skipValue()
            return
        }
        var token: Int64?
        var start: Int64?
        var entries:
            [(
                type: String, token: UInt64, key: PropertyValue, kind: HistoryLog.Kind, remote: Bool,
                properties: [String]
            )] = []
        var members: Set<String> = []
        try reader.beginObject()
        while let member = try reader.nextKey() {
            guard members.insert(member).inserted else { throw duplicate(member) }
            switch member {
            case "token": token = try reader.readInt64()
            case "start": start = try reader.readInt64()
            case "types":
                try reader.beginObject()
                var types: Set<String> = []
                while let name = try reader.nextKey() {
                    guard let table = store.tablesByName[name], let pk = table.primaryKeyProperty else {
                        throw corrupt("history of an unknown type or a type without a primary key '\(name)'")
                    }
                    guard types.insert(name).inserted else { throw duplicate(name) }
                    let pkProperty = table.schema.properties[pk]
                    var previous: UInt64 = 0
                    try reader.beginArray()
                    while try reader.nextElement() {
                        try reader.beginArray()
                        guard try reader.nextElement() else { throw corrupt("an empty history entry", type: name) }
                        let entryToken = try reader.readInt64()
                        guard entryToken > 0, UInt64(entryToken) >= previous else {
                            throw corrupt("history tokens must be positive and ascending", type: name)
                        }
                        previous = UInt64(entryToken)
                        guard try reader.nextElement() else {
                            throw corrupt("a history entry without its kind", type: name)
                        }
                        let code = try reader.readString()
                        let kind: HistoryLog.Kind
                        switch code.lowercased() {
                        case "i": kind = .insert
                        case "u": kind = .update
                        case "d": kind = .delete
                        default: throw corrupt("unknown history entry kind '\(code)'", type: name)
                        }
                        guard try reader.nextElement() else {
                            throw corrupt("a history entry without its key", type: name)
                        }
                        let key = try ValueCoding.readPlain(pkProperty, element: false, &reader, table: name)
                        var properties: [String] = []
                        if try reader.nextElement() {
                            try reader.beginArray()
                            while try reader.nextElement() { properties.append(try reader.readString()) }
                            guard try !reader.nextElement() else {
                                throw corrupt("a history entry has too many members", type: name)
                            }
                        }
                        entries.append((name, UInt64(entryToken), key, kind, code != code.lowercased(), properties))
                    }
                }
            default:
                throw corrupt("unknown member '\(member)' in the history")
            }
        }
        guard let token, token >= 0, let start, start >= 0, start <= token else {
            throw corrupt("the history needs token and start (start at most token)")
        }
        if let last = entries.max(by: { $0.token < $1.token }), last.token > UInt64(token) {
            throw corrupt("a history entry is newer than the history's token")
        }
        history.load(token: UInt64(token), startToken: UInt64(start))
        for entry in entries where entry.token > UInt64(start) {
            history.loadEntry(
                type: entry.type, token: entry.token, key: entry.key, kind: entry.kind, isRemote: entry.remote,
                properties: entry.properties)
        }
    }
}
