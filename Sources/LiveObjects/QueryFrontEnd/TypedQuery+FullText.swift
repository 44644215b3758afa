extension Query where Value: _QueryString {
    /// Whether the string's words match a full-text query: the predicate language's `TEXT`.
    ///
    /// Terms separated by spaces must all appear; `-term` leaves out the rows that have it,
    /// `caf*` is a prefix and `"flat white"` a phrase. Words are compared with case and
    /// diacritics folded, and found in any script (each Han ideograph and Hiragana character is
    /// a word). An empty query, or one of exclusions only, makes the query fail with
    /// ``LiveObjectsError/Code/invalidQuery``. The query reference ("Full-text search") has
    /// the details.
    ///
    /// ```swift
    /// let notes = realm.objects(Note.self).where { $0.body.matches("coffee -decaf") }
    /// ```
    public func matches(_ query: String) -> Query<Bool> {
        comparison(.text, .value(.string(query)))
    }
}
