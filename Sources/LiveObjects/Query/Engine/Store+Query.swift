extension Store {
    /// The live rows of `table` that match a predicate in the string language, in row order:
    /// what `Results.filter(_:arguments:)` parses, binds and evaluates, without a realm.
    ///
    /// For tools that check the query engine on arbitrary text (the fuzz targets) and for tests.
    ///
    /// - Throws: ``LiveObjectsError`` as `Results.filter(_:arguments:)` does.
    package func rows(of table: Table, matching predicate: String, arguments: [PropertyValue] = [])
        throws(LiveObjectsError) -> [Int32]
    {
        let syntax = try PredicateParser.parse(predicate, arguments: arguments)
        let bound = try QueryCompiler.bind(syntax, to: table, store: self, text: predicate)
        return bound.filter(nil, table: table)
    }
}
