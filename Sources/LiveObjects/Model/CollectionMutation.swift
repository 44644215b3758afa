import LiveObjectsStore

extension _AccessContext {
    /// Runs a change of a managed collection (`List`, `MutableSet`, `Map`) as property setters
    /// run theirs: on a deleted object it records the error; an error thrown part-way rolls the
    /// collection back to where the change began and is recorded, so that the enclosing
    /// `Realm.write` throws it and changes nothing.
    func mutateCollection(_ body: (ObjectHandle, Store, _AccessContext) throws(LiveObjectsError) -> Void) {
        let h = handle
        let store = h.store
        guard h.isValid else {
            store.recordError(h.invalidated(property: schema.name))
            return
        }
        let savepoint = store.makeSavepoint()
        do {
            try body(h, store, self)
        } catch {
            if store.isInWrite { store.rollback(to: savepoint) }
            store.recordError(error)
        }
    }
}
