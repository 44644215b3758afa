import Foundation

extension Results {
    /// Results sorted by Foundation sort descriptors, the first deciding first, replacing any
    /// earlier sort.
    ///
    /// ```swift
    /// let dogs = try realm.objects(Dog.self).sorted(using: [
    ///     SortDescriptor(\.age, order: .reverse), SortDescriptor(\.name),
    /// ])
    /// ```
    ///
    /// A descriptor's key path must read persisted properties (through to-one links). Values
    /// compare as with `sorted(by: [SortField])`: `nil` first in forward order. A string
    /// comparator whose options include `.numeric` sorts with ``StringComparison/natural``, one
    /// with `.caseInsensitive` with ``StringComparison/caseInsensitive``, and the lexical one
    /// (or none) with ``StringComparison/exact`` (Unicode code point order).
    ///
    /// - Parameter descriptors: The sort descriptors.
    /// - Returns: The sorted results.
    /// - Throws: `invalidQuery` for a descriptor made without a key path, a key path that does
    ///   not read a persisted single value, or a localized string comparator without `.numeric`
    ///   or `.caseInsensitive` (LiveObjects has no locale-tailored order); `unknownProperty`.
    public func sorted(using descriptors: [SortDescriptor<Element>]) throws(LiveObjectsError) -> Results {
        guard let table else { return self }
        var fields: [SortField] = []
        for descriptor in descriptors {
            guard let keyPath = descriptor.keyPath else {
                throw LiveObjectsError(
                    .invalidQuery, "a SortDescriptor made without a key path cannot sort results",
                    objectType: table.name)
            }
            let names = try store.propertyNames(of: keyPath, from: table)
            var comparison = StringComparison.exact
            if let comparator = descriptor.stringComparator {
                let options = String.Comparator(comparator)
                if options.options.contains(.numeric) {
                    comparison = .natural
                } else if options.options.contains(.caseInsensitive) {
                    comparison = .caseInsensitive
                } else if options.locale != nil || !options.options.isEmpty {
                    throw LiveObjectsError(
                        .invalidQuery,
                        "the string comparator of the SortDescriptor for \(keyPath) has no LiveObjects counterpart; "
                            + "use .lexical, or a comparator with .numeric or .caseInsensitive",
                        objectType: table.name, property: names.joined(separator: "."))
                }
            }
            fields.append(
                SortField(
                    names.joined(separator: "."), ascending: descriptor.order == .forward, comparison: comparison))
        }
        return try sorted(by: fields)
    }

    /// Results sorted by one Foundation sort descriptor, replacing any earlier sort.
    ///
    /// - Parameter descriptor: The sort descriptor.
    /// - Returns: The sorted results.
    /// - Throws: The errors of `sorted(using: [SortDescriptor<Element>])`.
    public func sorted(using descriptor: SortDescriptor<Element>) throws(LiveObjectsError) -> Results {
        try sorted(using: [descriptor])
    }
}
