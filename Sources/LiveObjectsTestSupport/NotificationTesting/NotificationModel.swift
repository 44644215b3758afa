import LiveObjects

// The reference side of the notification scenario: the live state read back through the dynamic
// API, and what every subscription should show after a write (the semantics are listed on
// `NotificationScenario`).

enum NotificationModel {
    static func keys(_ value: PropertyValue) -> [ObjectKey] {
        switch value {
        case .object(let key): [key]
        case .list(let items): items.compactMap(\.objectKey)
        default: []
        }
    }

    static func live(_ r: isolated Realm, _ type: String) -> [ObjRef] {
        (try? r.dynamicObjects(type))?.map { ObjRef(type: type, key: $0.key) } ?? []
    }

    static func object(_ r: isolated Realm, _ ref: ObjRef) -> DynamicObject? {
        (try? r.dynamicObject(ofType: ref.type, key: ref.key)) ?? nil
    }

    /// The objects `ref` links to through `property` (with repetition), after the write.
    static func linked(_ r: isolated Realm, _ ref: ObjRef, _ property: String) -> [ObjRef] {
        guard let object = object(r, ref), let target = r.schema[ref.type]?[property]?.objectType else { return [] }
        return keys(object[property]).map { ObjRef(type: target, key: $0) }
    }

    /// Every link into `target`: source object, property, and how many times.
    static func incoming(_ r: isolated Realm, _ target: ObjRef) -> [(source: ObjRef, property: String)] {
        var result: [(ObjRef, String)] = []
        for schema in r.schema.objectSchemas {
            for p in schema.properties where p.type == .object && p.objectType == target.type {
                for source in live(r, schema.name) where linked(r, source, p.name).contains(target) {
                    result.append((source, p.name))
                }
            }
        }
        return result
    }

    /// Whether the element's observed properties changed, per the semantics listed on
    /// `NotificationScenario`.
    static func isModified(
        _ r: isolated Realm, _ element: ObjRef, keyPaths: [String]?, touched: [ObjRef: Set<String>]
    ) -> Bool {
        guard let keyPaths else {
            if touched[element] != nil { return true }
            for p in r.schema[element.type]!.properties where p.objectType != nil {
                if linked(r, element, p.name).contains(where: { touched[$0] != nil }) { return true }
            }
            return false
        }
        for path in keyPaths {
            var frontier = [element]
            for name in path.split(separator: ".").map(String.init) {
                if frontier.contains(where: { touched[$0]?.contains(name) == true }) { return true }
                frontier = frontier.flatMap { linked(r, $0, name) }
            }
        }
        return false
    }

    static func values(_ r: isolated Realm, _ ref: ObjRef) -> [String: PropertyValue]? {
        object(r, ref)?.values
    }

    /// The expected state of a subscription now; `record` is the write just made (nil at start).
    static func expectation(_ r: isolated Realm, _ spec: SubSpec, record: WriteRecord?, deadOwners: Set<ObjRef>) throws
        -> SubExpectation
    {
        switch spec.kind {
        case .results, .list:
            let keys = try SubscriptionFactory.freshKeys(r, spec, deadOwners: deadOwners)
            var modified = Set<ObjectKey>()
            var values: [ObjectKey: [String: PropertyValue]] = [:]
            let type = spec.elementType!
            var touched: [ObjRef: Set<String>] = [:]
            for touch in record?.effectiveTouches ?? [] { touched[touch.object, default: []].insert(touch.property) }
            for key in Set(keys) {
                let ref = ObjRef(type: type, key: key)
                values[key] = NotificationModel.values(r, ref)
                if !touched.isEmpty && NotificationModel.isModified(r, ref, keyPaths: spec.keyPaths, touched: touched) {
                    modified.insert(key)
                }
            }
            return .collection(keys: keys, modified: modified, values: values)
        case .object(let type, let key):
            let ref = ObjRef(type: type, key: key)
            return .object(values: deadOwners.contains(ref) ? nil : NotificationModel.values(r, ref))
        case .realm:
            return .realm
        }
    }
}

/// What the test expects of one subscription after one write.
enum SubExpectation: Sendable {
    case collection(keys: [ObjectKey], modified: Set<ObjectKey>, values: [ObjectKey: [String: PropertyValue]])
    case object(values: [String: PropertyValue]?)
    case realm
}
