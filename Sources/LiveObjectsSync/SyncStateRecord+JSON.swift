import LiveObjectsJSON
import LiveObjectsSyncProtocol

// The JSON of a line of the state log: members in the order of their names, the absent ones left
// out (the form earlier versions wrote with Foundation's encoder, which this reads too).

extension SyncStateRecord {
    init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a state record")
        format = try object.optionalString("format")
        version = try object.optionalInt("version")
        device = try object.optionalString("device")
        guard let realmToken = try object.optionalUInt64("realmToken") else {
            throw SyncWireFormatError("a state record has no member \"realmToken\"")
        }
        self.realmToken = realmToken
        syncedToken = try object.uint64("syncedToken")
        cursor = try object.optionalString("cursor")
        acknowledgedReset = try object.optionalBool("acknowledgedReset")
        acknowledged = try Self.strings(object, "acknowledged")
        objects = try Self.list(object, "objects", ObjectState.init(json:))
        recreate = try Self.list(object, "recreate", ObjectRef.init(json:))
        conflicts = try Self.list(object, "conflicts", ConflictState.init(json:))
        links = try Self.list(object, "links", LinkState.init(json:))
        rejected = try Self.list(object, "rejected", RejectedState.init(json:))
        unconfirmed = try Self.list(object, "unconfirmed", WireChange.init(json:))
        view = try object["view"].map { (json) throws(SyncWireFormatError) in try ViewState(json: json) }
    }

    func json() throws(SyncWireFormatError) -> JSONValue {
        .members([
            ("acknowledged", Self.strings(acknowledged)),
            ("acknowledgedReset", acknowledgedReset.map(JSONValue.bool)),
            ("conflicts", try Self.json(conflicts) { (state) throws(SyncWireFormatError) in try state.json() }),
            ("cursor", cursor.map(JSONValue.string)), ("device", device.map(JSONValue.string)),
            ("format", format.map(JSONValue.string)),
            ("links", try Self.json(links) { (state) throws(SyncWireFormatError) in try state.json() }),
            ("objects", try Self.json(objects) { (state) throws(SyncWireFormatError) in try state.json() }),
            ("realmToken", .number(JSONNumber(realmToken))),
            ("recreate", try Self.json(recreate) { (ref) throws(SyncWireFormatError) in try ref.json() }),
            ("rejected", try Self.json(rejected) { (state) throws(SyncWireFormatError) in try state.json() }),
            ("syncedToken", .number(JSONNumber(syncedToken))),
            ("unconfirmed", try Self.json(unconfirmed) { (change) throws(SyncWireFormatError) in try change.json() }),
            ("version", version.map { .int(Int64($0)) }), ("view", view?.json()),
        ])
    }

    /// An optional array member, each element read by `read`.
    static func list<Element>(
        _ object: WireObject, _ key: String, _ read: (JSONValue) throws(SyncWireFormatError) -> Element
    ) throws(SyncWireFormatError) -> [Element]? {
        guard let elements = try object.optionalArray(key) else { return nil }
        var list: [Element] = []
        list.reserveCapacity(elements.count)
        for element in elements { list.append(try read(element)) }
        return list
    }

    /// The JSON of an optional array.
    static func json<Element>(
        _ list: [Element]?, _ write: (Element) throws(SyncWireFormatError) -> JSONValue
    ) throws(SyncWireFormatError) -> JSONValue? {
        guard let list else { return nil }
        var elements: [JSONValue] = []
        elements.reserveCapacity(list.count)
        for element in list { elements.append(try write(element)) }
        return .array(elements)
    }

    static func string(_ value: JSONValue, _ what: String) throws(SyncWireFormatError) -> String {
        guard let text = value.stringValue else { throw SyncWireFormatError("\(what) is not a string") }
        return text
    }

    /// An optional array of strings.
    static func strings(_ object: WireObject, _ key: String) throws(SyncWireFormatError) -> [String]? {
        try list(object, key) { (value) throws(SyncWireFormatError) in try string(value, "an element of \(key)") }
    }

    static func strings(_ list: [String]?) -> JSONValue? { list.map { .array($0.map(JSONValue.string)) } }
}

extension SyncStateRecord.ObjectRef {
    init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "an object of the state")
        type = try object.string("type")
        key = try WireValue(json: try object.required("key"))
    }

    func json() throws(SyncWireFormatError) -> JSONValue {
        .object([(key: "key", value: try key.json()), (key: "type", value: .string(type))])
    }
}

extension SyncStateRecord.ObjectState {
    init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "an object's state")
        self.object = try .init(json: try object.required("object"))
        serverID = try object.optionalString("serverID")
        serverVersion = try object.optionalUInt64("serverVersion")
        pushedVersion = try object.optionalUInt64("pushedVersion")
        bases = try WireSyncValue.values(object, "bases")
        root = try object.optionalBool("root")
        stale = try object.optionalBool("stale")
    }

    func json() throws(SyncWireFormatError) -> JSONValue {
        .members([
            ("bases", try bases.map { (bases) throws(SyncWireFormatError) in try WireSyncValue.json(bases) }),
            ("object", try object.json()), ("pushedVersion", pushedVersion.map { .number(JSONNumber($0)) }),
            ("root", root.map(JSONValue.bool)), ("serverID", serverID.map(JSONValue.string)),
            ("serverVersion", serverVersion.map { .number(JSONNumber($0)) }), ("stale", stale.map(JSONValue.bool)),
        ])
    }
}

extension SyncStateRecord.ViewState {
    /// `{"subscriptions": [{"name": …, "type": …, "where": …}], "walkPending": true}`; no
    /// `subscriptions`: the whole space.
    init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "the subscriptions' state")
        walkPending = try object.optionalBool("walkPending") ?? false
        subscriptions = try SyncStateRecord.list(object, "subscriptions") { (entry) throws(SyncWireFormatError) in
            let fields = try WireObject(entry, "a subscription")
            return SyncSubscription(
                name: try fields.string("name"), typeName: try fields.string("type"),
                where: try fields.optionalString("where"))
        }
    }

    func json() -> JSONValue {
        .members([
            (
                "subscriptions",
                subscriptions.map { list in
                    .array(
                        list.map {
                            .members([
                                ("name", .string($0.name)), ("type", .string($0.typeName)),
                                ("where", $0.query.map(JSONValue.string)),
                            ])
                        })
                }
            ),
            ("walkPending", walkPending ? .bool(true) : nil),
        ])
    }
}

extension SyncStateRecord.ConflictState {
    init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a conflict")
        self.object = try .init(json: try object.required("object"))
        serverID = try object.optionalString("serverID")
        guard let changes = try SyncStateRecord.strings(object, "localChanges") else {
            throw SyncWireFormatError("a conflict has no member \"localChanges\"")
        }
        localChanges = changes
    }

    func json() throws(SyncWireFormatError) -> JSONValue {
        .members([
            ("localChanges", SyncStateRecord.strings(localChanges)), ("object", try object.json()),
            ("serverID", serverID.map(JSONValue.string)),
        ])
    }
}

extension SyncStateRecord.LinkState {
    init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a pending link")
        self.object = try .init(json: try object.required("object"))
        property = try object.string("property")
        list = try object.optionalBool("list")
        targets = try SyncStateRecord.list(object, "targets", SyncStateRecord.ObjectRef.init(json:))
        map = try object["map"].map { (value) throws(SyncWireFormatError) in try WireSyncValue(json: value) }
        mixed = try object["mixed"].map { (value) throws(SyncWireFormatError) in try WireSyncValue(json: value) }
    }

    func json() throws(SyncWireFormatError) -> JSONValue {
        .members([
            ("list", list.map(JSONValue.bool)), ("map", try map?.json()), ("mixed", try mixed?.json()),
            ("object", try object.json()),
            ("property", .string(property)),
            ("targets", try SyncStateRecord.json(targets) { (ref) throws(SyncWireFormatError) in try ref.json() }),
        ])
    }
}

extension SyncStateRecord.RejectedState {
    init(json: JSONValue) throws(SyncWireFormatError) {
        let object = try WireObject(json, "a refused change")
        self.object = try .init(json: try object.required("object"))
        kind = try object.string("kind")
        properties = try SyncStateRecord.strings(object, "properties")
        code = try object.string("code")
        message = try object.string("message")
        retry = try object.optionalBool("retry")
        discardedAt = try object.optionalUInt64("discardedAt")
        local = try object.optionalBool("local")
    }

    func json() throws(SyncWireFormatError) -> JSONValue {
        .members([
            ("code", .string(code)), ("discardedAt", discardedAt.map { .number(JSONNumber($0)) }),
            ("kind", .string(kind)), ("local", local.map(JSONValue.bool)), ("message", .string(message)),
            ("object", try object.json()), ("properties", SyncStateRecord.strings(properties)),
            ("retry", retry.map(JSONValue.bool)),
        ])
    }
}
