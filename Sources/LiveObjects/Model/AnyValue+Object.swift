extension AnyValue {
    /// A link to a managed object, for an ``AnyValue`` property (Realm's
    /// `AnyRealmValue.object(_:)`): the object's type name and key.
    ///
    /// ```swift
    /// try realm.write {
    ///     let rex = realm.create(Dog.self, value: ["name": "Rex"])
    ///     note.payload = try .object(rex)
    /// }
    /// let dog = realm.object(ofType: Dog.self, for: note.payload.link!)
    /// ```
    ///
    /// The link names the object by type and key, so set it only in the realm the object
    /// belongs to. When the object is deleted, the property holding the link becomes ``null``.
    ///
    /// - Throws: `invalidOperation` for an unmanaged object (add it first), `objectInvalidated`
    ///   for a deleted one.
    public static func object(_ object: some Object) throws(LiveObjectsError) -> AnyValue {
        guard let handle = object._handle else {
            throw LiveObjectsError(
                .invalidOperation, "an AnyValue links to a managed object: add the object first",
                objectType: type(of: object).className)
        }
        guard handle.isValid else { throw handle.invalidated(property: nil) }
        return .link(Link(objectType: handle.table.name, key: handle.key))
    }
}
