/// What `Results` ask for: filters, sort, distinct, slice.
struct QuerySpec {
    struct Filter {
        enum Form {
            case syntax(PredicateSyntax)
            /// `property == value` on the object itself (the usual lookup), kept as its parts
            /// until its syntax is needed.
            case equality(property: String, value: PropertyValue)
        }

        var form: Form
        /// The predicate's text, for error messages that point into it.
        var text: String?

        init(syntax: PredicateSyntax, text: String?) {
            form = .syntax(syntax)
            self.text = text
        }

        init(equality property: String, value: PropertyValue) {
            form = .equality(property: property, value: value)
        }

        var syntax: PredicateSyntax {
            switch form {
            case .syntax(let syntax): syntax
            case .equality(let property, let value):
                .comparison(
                    ComparisonSyntax(.direct, .keyPath(KeyPathSyntax([property])), .equal, [], .value(value)))
            }
        }
    }

    /// The first filter, kept inline (results have one filter more often than several, and
    /// an array would be one more allocation for each).
    private var firstFilter: Filter?
    /// Everything else, which most results do not ask for: in one shared box (nil when there
    /// is nothing), so that a query of one filter copies and frees no more than that filter.
    private var rest: Rest?

    /// The rare parts of a query. Immutable: changing one makes a new box.
    private final class Rest {
        let parts: Parts

        init(_ parts: Parts) {
            self.parts = parts
        }
    }

    private struct Parts {
        var moreFilters: [Filter] = []
        var sorts: [SortField] = []
        var distinct: [String] = []
        var limit: Int?
        var offset = 0

        var isEmpty: Bool { moreFilters.isEmpty && sorts.isEmpty && distinct.isEmpty && limit == nil && offset == 0 }
    }

    private var parts: Parts {
        get { rest?.parts ?? Parts() }
        set { rest = newValue.isEmpty ? nil : Rest(newValue) }
    }

    private var moreFilters: [Filter] { rest?.parts.moreFilters ?? [] }

    var sorts: [SortField] {
        get { rest?.parts.sorts ?? [] }
        set { parts.sorts = newValue }
    }

    var distinct: [String] {
        get { rest?.parts.distinct ?? [] }
        set { parts.distinct = newValue }
    }

    var limit: Int? {
        get { rest?.parts.limit }
        set { parts.limit = newValue }
    }

    var offset: Int {
        get { rest?.parts.offset ?? 0 }
        set { parts.offset = newValue }
    }

    var isEmpty: Bool {
        firstFilter == nil && rest == nil
    }

    init() {}

    /// A query of one filter.
    init(filter: Filter) {
        firstFilter = filter
    }

    /// The number of filters.
    var filterCount: Int { firstFilter == nil ? 0 : 1 + moreFilters.count }

    /// The filters, in the order added.
    var predicates: [Filter] { firstFilter.map { [$0] + moreFilters } ?? [] }

    /// Adds a filter (all must hold).
    mutating func add(_ filter: Filter) {
        if firstFilter == nil { firstFilter = filter } else { parts.moreFilters.append(filter) }
    }

    /// The filters as one predicate (chained filters combine into one AND, so that the planner
    /// sees them together), with the text of a single filter; nil without filters.
    var combinedFilter: (syntax: PredicateSyntax, text: String?)? {
        guard let firstFilter else { return nil }
        if moreFilters.isEmpty { return (firstFilter.syntax, firstFilter.text) }
        return (.and(predicates.map(\.syntax)), nil)
    }

    /// Whether the query is one filter and nothing else (its count may come from an index).
    var isOneFilter: Bool {
        guard firstFilter != nil else { return false }
        guard let rest else { return true }
        let parts = rest.parts
        return parts.moreFilters.isEmpty && parts.distinct.isEmpty && parts.limit == nil && parts.offset == 0
    }
}
