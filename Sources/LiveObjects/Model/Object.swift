import LiveObjectsStore

/// The base class of model objects.
///
/// Subclass it and mark stored properties with `@Persisted`; properties without `@Persisted`
/// are not stored. Every model class must be constructible with `init()`.
///
/// ```swift
/// final class Dog: Object {
///     @Persisted(primaryKey: true) var id = 0
///     @Persisted(indexed: true) var name = ""
///     @Persisted var age = 0
///     @Persisted var owner: Person?
///     @Persisted(originProperty: "dogs") var walkers: LinkingObjects<Person>
///     var isSelected = false  // not stored
/// }
/// ```
///
/// An object made with `init()` is *unmanaged*: it keeps its own values until it is added to a
/// realm. A *managed* object is a handle onto the realm's storage: reading a property reads the
/// current stored value, so a change made through one handle is visible through every other
/// handle at once. Managed objects live inside their realm's isolation and cannot leave it;
/// ``detached()`` makes an unmanaged copy that can.
///
/// Setting a property of a managed object outside a write, or using a deleted object, cannot
/// throw from a property accessor: the accessor changes nothing (a read returns the type's
/// default) and the enclosing `Realm.write` or `Realm.read` call throws the
/// ``LiveObjectsError`` (`notInWriteTransaction` or `objectInvalidated`).
///
/// Objects are `Observable`: inside `withObservationTracking` (or a SwiftUI view's body),
/// reading a `@Persisted` property tracks it, and the tracker hears of the commit that changes
/// its value (see the conformance's documentation for the details).
open class Object: CustomStringConvertible, Hashable {
    @exclusivity(unchecked) @usableFromInline final var _handle: ObjectHandle?
    /// The registrar that reads of the instance's properties are tracked with, made on the
    /// first read (see ``ObjectObservation``).
    @exclusivity(unchecked) @usableFromInline final var _observation: ObjectObservation?

    /// The access context of the property stored by the `@Persisted` wrapper at the given
    /// offset in the object. Unresolved the first time a type's property is used; not usable
    /// when the object was deleted (the caller decides what that means for a read or a write).
    @inlinable @inline(__always)
    final func _context(forField field: Int) -> _AccessContext {
        let handle = _handle!
        // Borrowed, not retained: the handle's store and table outlive any access through it,
        // and retains and releases are atomic operations that would stall every read.
        let p = Unmanaged.passUnretained(handle.table)._withUnsafeGuaranteedRef { $0.property(forField: field) }
        guard let p else {
            return _AccessContext(handle: handle, property: _AccessContext.unresolved)
        }
        return Unmanaged.passUnretained(handle.store)._withUnsafeGuaranteedRef { store in
            if let recorder = store.readRecorder { recorder.record(handle.table, p) }
            if handle.validAt != store.mutationCount {
                guard handle.isValid else {
                    return _AccessContext(handle: handle, property: _AccessContext.invalid)
                }
                _handle!.validAt = store.mutationCount
            }
            return _AccessContext(handle: handle, property: p)
        }
    }

    /// Finds the property of a managed object's table that the `@Persisted` wrapper at this
    /// offset stores, once per table and property (which is also what tells observation which
    /// key path reports the property's changes).
    @usableFromInline
    final func _resolve(field: Int) {
        guard let table = _handle?.table else { return }
        let info = try! ModelInfo.info(for: type(of: self))
        guard let found = info.fields.first(where: { $0.offset == field }),
            let p = table.propertyIndex[found.property.name]
        else {
            preconditionFailure("no @Persisted property of \(type(of: self)) is stored at offset \(field)")
        }
        table.setProperty(p, forField: field)
    }

    /// Creates an unmanaged object with the properties' default values.
    public required init() {}

    /// Creates an unmanaged object (and the objects it links to) from its encoded form, such as
    /// JSON made by encoding a model object; see the `Codable` conformance of ``Object``.
    ///
    /// Every subclass inherits this initializer: there is nothing to write per model.
    ///
    /// - Throws: ``LiveObjectsError`` naming the type and property: `typeMismatch` for a value of
    ///   the wrong type (or `null` for a non-optional property), `missingValue` for a link given
    ///   by a primary key that the decoded data does not contain.
    public required convenience init(from decoder: any Decoder) throws {
        self.init()
        try ObjectCoding.decode(into: self, from: decoder)
    }

    /// Creates an unmanaged object from loosely typed values, as `create(_:value:)` takes them:
    /// a dictionary by property name (`Dog(value: ["name": "Rex"])`), or an array of the stored
    /// properties' values in declaration order (`Person(value: [1, "Jane", [rex]])`). Linked
    /// objects can be given as objects, nested dictionaries or arrays. Properties not given
    /// keep their defaults.
    ///
    /// - Throws: ``LiveObjectsError`` naming the type and property: `typeMismatch` for a value of
    ///   the wrong type, `unknownType` for a class that is not a valid model.
    public convenience init(value: Any) throws(LiveObjectsError) {
        self.init()
        try ObjectCoding.fill(self, value: value)
    }

    /// The name of the object type in a realm's schema: the class name, unless overridden.
    open class var className: String {
        String(describing: self)
    }

    /// Whether the object is managed by a realm.
    public final var isManaged: Bool { _handle != nil }

    /// Whether the object was deleted from its realm (or its creation rolled back).
    /// Unmanaged objects are never invalidated.
    public final var isInvalidated: Bool {
        guard let handle = _handle else { return false }
        return !handle.isValid
    }

    /// A property of an object that was deleted (or whose creation was rolled back) was read.
    /// Its values are gone, and a read never makes one up: the program stops with a message
    /// naming the type and property, as Realm does; check ``isInvalidated`` first where an
    /// object may have been deleted.
    ///
    /// One exception: when an accessor already recorded an error that the enclosing realm call
    /// will throw (a failed `append` whose rollback invalidated the object read, say), the read
    /// returns the property type's empty value, which that failing call discards.
    @usableFromInline @inline(never)
    final func _readOfInvalidatedObject(field: Int) {
        let handle = _handle!
        guard handle.store.pendingError == nil else { return }
        fatalError(
            "LiveObjects: \(describe(field, of: handle)) was read on an object that was deleted or whose "
                + "creation was rolled back; check isInvalidated before reading")
    }

    /// A property of an object that was deleted (or whose creation was rolled back) was set:
    /// the error is recorded, and the enclosing write throws it and changes nothing.
    @usableFromInline @inline(never)
    final func _writeOfInvalidatedObject(field: Int) {
        let handle = _handle!
        let property = handle.table.property(forField: field).map { handle.table.schema.properties[$0].name }
        handle.store.recordError(handle.invalidated(property: property))
    }

    /// `Type.property` for a field of a managed object.
    private func describe(_ field: Int, of handle: ObjectHandle) -> String {
        let property = handle.table.property(forField: field).map { handle.table.schema.properties[$0].name }
        return "\(handle.table.name).\(property ?? "?")"
    }

    /// The object's key in its realm, if it is managed and valid.
    public final var objectKey: ObjectKey? {
        guard let handle = _handle, handle.isValid else { return nil }
        return handle.key
    }

    /// The object's schema, if it is managed.
    public final var objectSchema: ObjectSchema? { _handle?.table.schema }

    /// Reads a stored property by name.
    ///
    /// - Throws: `unknownProperty`, or `objectInvalidated` for a deleted object.
    public final func value(forKey name: String) throws(LiveObjectsError) -> PropertyValue {
        guard let handle = _handle else {
            let info = try ModelInfo.info(for: type(of: self))
            guard let field = info.fields.first(where: { $0.property.name == name }) else {
                throw LiveObjectsError(
                    .unknownProperty, "there is no property '\(name)'",
                    objectType: info.schema.name, property: name)
            }
            return withExtendedLifetime(self) {
                let base = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
                return field.accessor._unmanagedValue(at: base + field.offset)
            }
        }
        guard handle.isValid else { throw handle.invalidated(property: name) }
        guard let p = handle.table.propertyIndex[name] else {
            throw LiveObjectsError(
                .unknownProperty, "there is no property '\(name)'", objectType: handle.table.name,
                property: name)
        }
        return handle.table.value(handle.row, p)
    }

    /// Sets a stored property of a managed object by name, inside a write.
    ///
    /// - Throws: `unknownProperty`, `typeMismatch`, `notInWriteTransaction`,
    ///   `objectInvalidated`, `primaryKeyChange`, or `invalidOperation` for an unmanaged object.
    public final func setValue(_ value: PropertyValue, forKey name: String) throws(LiveObjectsError) {
        guard let handle = _handle else {
            throw LiveObjectsError(
                .invalidOperation, "setValue(_:forKey:) needs a managed object; set the property instead",
                objectType: Self.className, property: name)
        }
        guard handle.isValid else { throw handle.invalidated(property: name) }
        guard let p = handle.table.propertyIndex[name] else {
            throw LiveObjectsError(
                .unknownProperty, "there is no property '\(name)'", objectType: handle.table.name,
                property: name)
        }
        let savepoint = handle.store.makeSavepoint()
        do {
            try handle.store.set(
                .value(value), handle.table, handle.row, p, context: AddContext(update: .error),
                force: false)
        } catch {
            if handle.store.isInWrite { handle.store.rollback(to: savepoint) }
            throw error
        }
    }

    /// An unmanaged copy of the object and of everything it links to.
    ///
    /// The copy can leave the realm's isolation (return it from `Realm.read`) and be added to
    /// another realm: this is how objects are copied between realms.
    public final func detached() -> sending Self {
        var copies: [Object: Object] = [:]
        let copy = DisconnectedCopy(value: Self.detachedCopy(of: self, copies: &copies))
        return copy.take()
    }

    private static func detachedCopy(of object: Object, copies: inout [Object: Object])
        -> Self
    {
        let copy = Self.init()
        copies[object] = copy
        guard let info = try? ModelInfo.info(for: Self.self) else { return copy }
        withExtendedLifetime(copy) {
            let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(copy).toOpaque())
            for field in info.fields where field.property.isStored {
                field.accessor._detach(from: object, field: field, into: base + field.offset, copies: &copies)
            }
        }
        return copy
    }

    /// Detaches a linked object, reusing copies already made (cycles).
    static func detachedLink(_ object: Object, copies: inout [Object: Object]) -> Object {
        if let copy = copies[object] { return copy }
        return type(of: object).detachedCopy(of: object, copies: &copies)
    }

    public var description: String {
        let name = objectSchema?.name ?? Self.className
        if isInvalidated { return "\(name) <invalidated>" }
        guard let info = try? ModelInfo.info(for: type(of: self)) else { return name }
        let body = info.fields.filter { $0.property.isStored }.map { field in
            let value = (try? self.value(forKey: field.property.name)) ?? .null
            // An AnyValue as itself (a nested list or dictionary, not its stored form).
            if field.property.type == .mixed, let mixed = AnyValue(value) { return "\(field.property.name) = \(mixed)" }
            return "\(field.property.name) = \(value)"
        }
        return "\(name) { " + body.joined(separator: "; ") + " }"
    }

    /// Two objects are equal when they are the same instance or handles of the same managed
    /// object.
    public static func == (lhs: Object, rhs: Object) -> Bool {
        if lhs === rhs { return true }
        guard let l = lhs._handle, let r = rhs._handle else { return false }
        return l.store === r.store && l.table === r.table && l.row == r.row
            && l.generation == r.generation
    }

    public func hash(into hasher: inout Hasher) {
        if let h = _handle {
            hasher.combine(ObjectIdentifier(h.table))
            hasher.combine(h.row)
            hasher.combine(h.generation)
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }
}

/// The base class of embedded model objects.
///
/// An embedded object has exactly one parent: the object whose link or list holds it. It is
/// deleted with its parent, or when the parent's link is pointed elsewhere or the list entry
/// removed. Embedded types cannot have a primary key and cannot be created on their own.
open class EmbeddedObject: Object {
    /// Creates an unmanaged embedded object.
    public required init() {
        super.init()
    }
}

extension Object: _Persistable {
    public static var _propertyTemplate: _PropertyTemplate {
        _PropertyTemplate(type: .object, objectType: className)
    }
    public static var _defaultValue: Self { Self.init() }
    public static func _decode(_ value: PropertyValue, _ context: _AccessContext) -> Self {
        guard case .object(let key) = value, let target = context.targetTable else {
            return Self.init()
        }
        let object = Self.init()
        object._handle = ObjectHandle(
            store: context.handle.store, table: target, row: Int32(bitPattern: key.row),
            generation: key.generation)
        return object
    }
    public func _encode() -> _Input { _Input(.object(self)) }
    public static func _linked(_ target: _AccessContext) -> Self {
        let object = Self.init()
        object._handle = target.handle
        return object
    }
}

/// Hands over a freshly made object graph as a `sending` result.
///
/// @unchecked: the graph holds only objects created by `detached()`, which nothing else
/// references once the copy table is dropped, so the receiver is its only owner.
struct DisconnectedCopy<T>: @unchecked Sendable {
    let value: T
    func take() -> sending T { value }
}

extension Sequence where Element: Object {
    /// Unmanaged copies of the objects and of everything they link to, handed over together
    /// (an object that several of them link to is copied once).
    ///
    /// `results.map { $0.detached() }` does not compile where the array must leave the realm
    /// (`map`'s result is not `sending`, so the compiler cannot see that the copies share
    /// nothing with the realm); write `results.detached()`.
    public func detached() -> sending [Element] {
        var copies: [Object: Object] = [:]
        var result: [Element] = []
        for object in self {
            guard let copy = Object.detachedLink(object, copies: &copies) as? Element else { continue }
            result.append(copy)
        }
        return DisconnectedCopy(value: result).take()
    }
}
