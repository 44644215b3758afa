extension Object {
    /// The realm that manages the object; nil for an unmanaged, detached or frozen object.
    ///
    /// A live object is only used on its realm's executor, so a model's computed property can
    /// read its realm synchronously through ``Realm/access``, as Realm code reads `self.realm`:
    ///
    /// ```swift
    /// final class Player: Object {
    ///     @Persisted var teamName = ""
    ///     var team: Team? {
    ///         realm?.access { [teamName] in $0.object(ofType: Team.self, forPrimaryKey: teamName) }
    ///     }
    /// }
    /// ```
    public final var realm: Realm? {
        _handle?.store.owner as? Realm
    }
}
