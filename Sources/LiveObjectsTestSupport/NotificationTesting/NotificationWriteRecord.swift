import LiveObjects

// What a write of the notification scenario did, as the scenario itself records it while it
// runs the operations: the reference the notifications are checked against.

struct ObjRef: Hashable, Sendable, CustomStringConvertible {
    let type: String
    let key: ObjectKey
    var description: String { "\(type)\(key)" }
}

struct Touch: Hashable, Sendable {
    let object: ObjRef
    let property: String
}

/// The test's own account of one write.
struct WriteRecord: Sendable {
    var touches = Set<Touch>()
    var inserted = Set<ObjRef>()
    var deleted = Set<ObjRef>()
    var log: [String] = []
    /// Operations that did not behave as the test predicted.
    var problems: [String] = []

    /// Touches of objects that existed before and after the write.
    var effectiveTouches: Set<Touch> {
        touches.filter { !inserted.contains($0.object) && !deleted.contains($0.object) }
    }

    /// Whether the write changed nothing that a changeset reports.
    var isNoOp: Bool {
        effectiveTouches.isEmpty && inserted.subtracting(deleted).isEmpty && deleted.subtracting(inserted).isEmpty
    }
}

/// Accumulates the record inside a write.
final class WriteRecorder {
    var record = WriteRecord()
    let schema: Schema
    /// For each link property (`Type.property`), the `LinkingObjects` properties inverting it.
    let inverses: [String: [(type: String, property: String)]]

    init(schema: Schema) {
        self.schema = schema
        var inverses: [String: [(String, String)]] = [:]
        for object in schema.objectSchemas {
            for p in object.properties where p.type == .linkingObjects {
                inverses["\(p.objectType!).\(p.originProperty!)", default: []].append((object.name, p.name))
            }
        }
        self.inverses = inverses
    }

    func log(_ text: String) { record.log.append(text) }
    func problem(_ text: String) { record.problems.append(text) }
    func touch(_ object: ObjRef, _ property: String) {
        record.touches.insert(Touch(object: object, property: property))
    }

    /// A link from `source.property` to `target` was made or removed: the target's inverse
    /// `LinkingObjects` changed.
    func linkChanged(_ source: ObjRef, _ property: String, _ target: ObjRef) {
        for inverse in inverses["\(source.type).\(property)"] ?? [] where inverse.type == target.type {
            touch(target, inverse.property)
        }
    }
}
