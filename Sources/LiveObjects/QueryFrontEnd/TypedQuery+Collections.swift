extension Query where Value: _QueryCollection {
    /// Whether any element is one of `values` (`ANY tags IN {'red', 'green'}`), as Realm's
    /// `containsAny(in:)`; false for no values. For a map, its values are the elements.
    ///
    /// ```swift
    /// realm.objects(Item.self).where { $0.tags.containsAny(in: ["red", "green"]) }
    /// ```
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element: _QueryValue {
        comparison(.in, .value(.list(values.map(\._queryValue))))
    }
}
