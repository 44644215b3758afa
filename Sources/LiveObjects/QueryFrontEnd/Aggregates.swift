import Foundation
import LiveObjectsStore

extension ObjectCollection {
    /// The values of a property (by name) over the collection's objects, without nils.
    func values(ofProperty name: String) -> [PropertyValue] {
        var result: [PropertyValue] = []
        for object in self {
            if let value = try? object.value(forKey: name), !value.isNull { result.append(value) }
        }
        return result
    }

    /// The smallest value of a property.
    ///
    /// ```swift
    /// let youngest = person.dogs.min(of: \.age)
    /// ```
    ///
    /// - Complexity: O(n).
    public func min<V: Comparable>(of keyPath: KeyPath<Element, V>) -> V? {
        map { $0[keyPath: keyPath] }.min()
    }

    /// The largest value of a property.
    ///
    /// - Complexity: O(n).
    public func max<V: Comparable>(of keyPath: KeyPath<Element, V>) -> V? {
        map { $0[keyPath: keyPath] }.max()
    }

    /// The smallest non-nil value of an optional property.
    public func min<V: Comparable>(of keyPath: KeyPath<Element, V?>) -> V? {
        compactMap { $0[keyPath: keyPath] }.min()
    }

    /// The largest non-nil value of an optional property.
    public func max<V: Comparable>(of keyPath: KeyPath<Element, V?>) -> V? {
        compactMap { $0[keyPath: keyPath] }.max()
    }

    /// The sum of a numeric property (0 for an empty collection).
    ///
    /// - Complexity: O(n).
    public func sum<V: AdditiveArithmetic>(of keyPath: KeyPath<Element, V>) -> V {
        reduce(V.zero) { $0 + $1[keyPath: keyPath] }
    }

    /// The sum of the non-nil values of an optional numeric property.
    public func sum<V: AdditiveArithmetic>(of keyPath: KeyPath<Element, V?>) -> V {
        reduce(V.zero) { $0 + ($1[keyPath: keyPath] ?? .zero) }
    }

    /// The average of an integer property, or nil for an empty collection.
    ///
    /// - Complexity: O(n).
    public func average<V: BinaryInteger>(of keyPath: KeyPath<Element, V>) -> Double? {
        isEmpty ? nil : Double(reduce(0.0) { $0 + Double($1[keyPath: keyPath]) }) / Double(count)
    }

    /// The average of a floating-point property, or nil for an empty collection.
    public func average<V: BinaryFloatingPoint>(of keyPath: KeyPath<Element, V>) -> Double? {
        isEmpty ? nil : reduce(0.0) { $0 + Double($1[keyPath: keyPath]) } / Double(count)
    }

    /// The average of a `Decimal` property, computed exactly as a decimal, or nil for an empty
    /// collection.
    public func average(of keyPath: KeyPath<Element, Decimal>) -> Decimal? {
        isEmpty ? nil : reduce(Decimal.zero) { $0 + $1[keyPath: keyPath] } / Decimal(count)
    }

    /// The average of the non-nil values of an optional `Decimal` property, or nil if there are
    /// none.
    public func average(of keyPath: KeyPath<Element, Decimal?>) -> Decimal? {
        let values = compactMap { $0[keyPath: keyPath] }
        return values.isEmpty ? nil : values.reduce(Decimal.zero, +) / Decimal(values.count)
    }

    /// The average of the non-nil values of an optional integer property, or nil if there
    /// are none.
    public func average<V: BinaryInteger>(of keyPath: KeyPath<Element, V?>) -> Double? {
        let values = compactMap { $0[keyPath: keyPath] }
        return values.isEmpty ? nil : values.reduce(0.0) { $0 + Double($1) } / Double(values.count)
    }

    /// The average of the non-nil values of an optional floating-point property, or nil if
    /// there are none.
    public func average<V: BinaryFloatingPoint>(of keyPath: KeyPath<Element, V?>) -> Double? {
        let values = compactMap { $0[keyPath: keyPath] }
        return values.isEmpty ? nil : values.reduce(0.0) { $0 + Double($1) } / Double(values.count)
    }

    /// The earliest or latest date, or the extreme value of any property, by name, as a
    /// dynamic value (nil values are skipped; `.null` for none).
    public func min(ofProperty name: String) -> PropertyValue {
        values(ofProperty: name).min { (compareValues($0, $1) ?? 0) < 0 } ?? .null
    }

    /// The largest value of a property, by name, as a dynamic value (`.null` for none).
    public func max(ofProperty name: String) -> PropertyValue {
        values(ofProperty: name).max { (compareValues($0, $1) ?? 0) < 0 } ?? .null
    }
}

extension Results {
    /// Results sorted by a key path of the model, replacing any earlier sort.
    ///
    /// ```swift
    /// realm.objects(Dog.self).sorted(by: \.name, comparison: .natural)
    /// realm.objects(Dog.self).sorted(by: \.owner?.name, ascending: false)
    /// ```
    ///
    /// A key path through a property that is not persisted sorts nothing and makes the
    /// enclosing realm call throw `invalidQuery`.
    public func sorted<V>(
        by keyPath: KeyPath<Element, V>, ascending: Bool = true, comparison: StringComparison = .exact
    ) -> Results {
        sorted(by: [(keyPath as PartialKeyPath<Element>, ascending, comparison)])
    }

    /// Results sorted by several key paths of the model, the first deciding first.
    public func sorted(by fields: [(PartialKeyPath<Element>, ascending: Bool, comparison: StringComparison)])
        -> Results
    {
        guard let table else { return self }
        do {
            var sorts: [SortField] = []
            for (keyPath, ascending, comparison) in fields {
                let names = try store.propertyNames(of: keyPath, from: table)
                sorts.append(SortField(names.joined(separator: "."), ascending: ascending, comparison: comparison))
            }
            return try sorted(by: sorts)
        } catch {
            store.recordError(error)
            return self
        }
    }

    /// Results with one object per distinct combination of the key paths' values.
    public func distinct(by keyPaths: [PartialKeyPath<Element>]) -> Results {
        guard let table else { return self }
        do {
            var names: [String] = []
            for keyPath in keyPaths {
                names.append(try store.propertyNames(of: keyPath, from: table).joined(separator: "."))
            }
            return try distinct(byKeyPaths: names)
        } catch {
            store.recordError(error)
            return self
        }
    }
}
