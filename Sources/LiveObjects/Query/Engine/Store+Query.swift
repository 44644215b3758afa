import LiveObjectsStore

extension Store {
    /// The live rows of `table` that match a predicate in the string language, in row order:
    /// what `Results.filter(_:arguments:)` parses, binds and evaluates, without a realm.
    ///
    /// For tools that check the query engine on arbitrary text (the fuzz targets) and for tests.
    ///
    /// - Throws: ``LiveObjectsError`` as `Results.filter(_:arguments:)` does, and
    ///   `limitExceeded` or `cancelled` when the evaluation is stopped (``QueryStop``).
    package func rows(of table: Table, matching predicate: String, arguments: [PropertyValue] = [])
        throws(LiveObjectsError) -> [Int32]
    {
        let syntax = try PredicateParser.parse(predicate, arguments: arguments)
        let bound = try QueryCompiler.bind(syntax, to: table, store: self, text: predicate)
        do {
            return try bound.filter(nil, table: table, budget: queries.maximumWork)
        } catch {
            throw error.error(query: predicate, table: table)
        }
    }

    /// ``rows(of:matching:arguments:)`` with a budget, and the work the evaluation did (in the
    /// units of ``Realm/Configuration/maximumQueryWork``): for tests that check how the work
    /// grows with the data and the shape of a query.
    package func evaluate(_ predicate: String, on table: Table, budget: Int = .max)
        throws(LiveObjectsError) -> (rows: [Int32], work: Int)
    {
        let syntax = try PredicateParser.parse(predicate, arguments: [])
        let bound = try QueryCompiler.bind(syntax, to: table, store: self, text: predicate)
        var work = 0
        do {
            let rows = try bound.filter(nil, table: table, budget: budget, work: &work)
            return (rows, work)
        } catch {
            throw error.error(query: predicate, table: table)
        }
    }
}
