extension Realm {
    /// The fixed limits of every realm. Going past one is a ``LiveObjectsError`` with code
    /// ``LiveObjectsError/Code/limitExceeded`` and nothing is changed. The limits that can be
    /// set are ``Configuration/maximumSubscriptions``, ``Configuration/maximumQueryWork`` and the
    /// file storage's maximum file size;
    /// docs/LIMITS.md lists them all.
    public enum Limits {
        /// The longest string a property (or an element of a list of strings) holds, in UTF-8
        /// bytes: 16 MiB.
        public static var maximumStringLength: Int { Store.maximumStringLength }
        /// The largest `Data` a property (or an element of a list of data) holds, in bytes:
        /// 16 MiB.
        public static var maximumDataLength: Int { Store.maximumDataLength }
        /// The longest predicate string, in UTF-8 bytes: 1 MiB.
        public static var maximumPredicateLength: Int { PredicateParser.maxInputLength }
        /// The deepest nesting of a predicate, counting every `(`, `NOT`/`!`, `SUBQUERY` and `{`
        /// open at once: 256.
        public static var maximumPredicateNesting: Int { PredicateParser.maxNestingDepth }
        /// The most property names in one key path of a query, counting those before and after
        /// a collection operator (`owner.dogs.@max.age` has three): 256. It holds for string
        /// predicates, typed queries, Foundation predicates, sorts and `distinct`.
        public static var maximumKeyPathLength: Int { PredicateParser.maxKeyPathLength }
        /// The deepest nesting of `SUBQUERY` inside `SUBQUERY`: 16.
        public static var maximumSubqueryNesting: Int { PredicateParser.maxSubqueryDepth }
        /// The default of ``Configuration/maximumSubscriptions``: 10,000.
        public static let defaultMaximumSubscriptions = 10_000
        /// The default of ``Configuration/maximumQueryWork``: 100,000,000 units (objects and
        /// list elements visited), a few seconds of work.
        public static let defaultMaximumQueryWork = QueryCaches.defaultMaximumWork
    }
}
