import Foundation

extension Results {
    /// The results sorted by a key path and grouped into sections by its value, for a list with
    /// section headers: live as results are, with change sets of sections and rows.
    ///
    /// ```swift
    /// let byAge = realm.objects(Dog.self).sorted(by: \.name).sectioned(by: \.age)
    /// for section in byAge {
    ///     print(section.key, section.map(\.name))
    /// }
    /// ```
    ///
    /// As Realm's `sectioned(by:ascending:)`: the sections come in the key's order (ascending
    /// unless `ascending` is false), and a sort the results already had orders the elements
    /// within a section (above: by name within an age). The key path names a persisted property
    /// (through to-one links: `\.owner?.name`), or is a computed property that the sort reads
    /// through the first persisted property it reads (`var initial: String { String(name.prefix(1)) }`
    /// sorts by `name`); one that reads none makes the enclosing realm call throw
    /// `invalidQuery`. For any other key, use ``sectioned(by:sortDescriptors:)-((Element)->Key,_)``.
    ///
    /// - Complexity: O(n) to group the n results, once per change of the realm.
    public func sectioned<Key: Hashable & Sendable>(
        by keyPath: KeyPath<Element, Key> & Sendable, ascending: Bool = true
    ) -> SectionedResults<Key, Element> {
        var sorted = self
        if let table {
            do {
                let name = try store.propertyNames(of: keyPath, from: table).joined(separator: ".")
                let earlier = query.sorts.filter { $0.keyPath != name }
                sorted = try self.sorted(by: [SortField(name, ascending: ascending)] + earlier)
            } catch {
                store.recordError(error)
            }
        }
        return SectionedResults(results: sorted) { $0[keyPath: keyPath] }
    }

    /// The results sorted by `sortDescriptors` and grouped into sections by a key path's
    /// value, as Realm's `sectioned(by:sortDescriptors:)`: the first sort field must be the key
    /// path's (the sections would otherwise split), else the enclosing realm call throws
    /// `invalidQuery`.
    public func sectioned<Key: Hashable & Sendable>(
        by keyPath: KeyPath<Element, Key> & Sendable, sortDescriptors: [SortField]
    ) -> SectionedResults<Key, Element> {
        var sorted = self
        if let table {
            do throws(LiveObjectsError) {
                let name = try store.propertyNames(of: keyPath, from: table).joined(separator: ".")
                guard sortDescriptors.first?.keyPath == name else {
                    throw LiveObjectsError(
                        .invalidQuery,
                        "sections by '\(name)' need '\(name)' as the first sort field, not "
                            + (sortDescriptors.first.map { "'\($0.keyPath)'" } ?? "none"),
                        objectType: table.name)
                }
                sorted = try self.sorted(by: sortDescriptors)
            } catch {
                store.recordError(error)
            }
        }
        return SectionedResults(results: sorted) { $0[keyPath: keyPath] }
    }

    /// The results sorted by `sortDescriptors` and grouped into sections by the key a function
    /// gives each element (a computed value: the first letter of a name, a month of a date),
    /// as Realm's `sectioned(by:sortDescriptors:)` with a block.
    ///
    /// ```swift
    /// let byInitial = realm.objects(Dog.self).sectioned(by: { String($0.name.prefix(1)) },
    ///                                                   sortDescriptors: [SortField("name")])
    /// ```
    ///
    /// Sections come in the order of their first element, so the sort should order the keys
    /// (above: names sorted sort their first letters); with no sort field the results keep
    /// their order. The function runs on the realm's actor for live sections and on a frozen
    /// copy of each element for ``SectionedResults/changes()``: it must read only the element.
    /// A sort field that names no property makes the enclosing realm call throw.
    public func sectioned<Key: Hashable & Sendable>(
        by sectionKey: @escaping @Sendable (Element) -> Key, sortDescriptors: [SortField]
    ) -> SectionedResults<Key, Element> {
        var sorted = self
        if !sortDescriptors.isEmpty {
            do { sorted = try self.sorted(by: sortDescriptors) } catch { store.recordError(error) }
        }
        return SectionedResults(results: sorted, sectionKey: sectionKey)
    }

    /// ``sectioned(by:sortDescriptors:)-((Element)->Key,_)`` with the function last, as Realm's
    /// `sectioned(sortDescriptors:_:)`.
    public func sectioned<Key: Hashable & Sendable>(
        sortDescriptors: [SortField], _ sectionKey: @escaping @Sendable (Element) -> Key
    ) -> SectionedResults<Key, Element> {
        sectioned(by: sectionKey, sortDescriptors: sortDescriptors)
    }
}

/// Results grouped into sections by the value of a key path: a live collection of
/// ``ResultsSection``s (see ``Results/sectioned(by:ascending:)``).
public struct SectionedResults<Key: Hashable & Sendable, Element: Object>: RandomAccessCollection {
    /// The results grouped, in the order the sections were asked for.
    public let results: Results<Element>
    /// The key of an element's section.
    let sectionKey: @Sendable (Element) -> Key
    private let cache = SectionCache<Key>()

    init(results: Results<Element>, sectionKey: @escaping @Sendable (Element) -> Key) {
        self.results = results
        self.sectionKey = sectionKey
    }

    /// The sections now: recomputed when the realm changed since the last read.
    private var sections: [(key: Key, positions: [Int])] {
        results.store.observeResultsRead()
        let version = results.store.mutationCount
        if let cached = cache.sections, cache.version == version { return cached }
        var order: [Key] = []
        var positions: [Key: [Int]] = [:]
        for (position, element) in results.enumerated() {
            let key = sectionKey(element)
            if positions[key] == nil { order.append(key) }
            positions[key, default: []].append(position)
        }
        let sections = order.map { (key: $0, positions: positions[$0]!) }
        cache.version = version
        cache.sections = sections
        return sections
    }

    public var startIndex: Int { 0 }

    /// The number of sections.
    ///
    /// - Complexity: O(n) for the first read after a change of the realm, then O(1).
    public var endIndex: Int { sections.count }

    /// The section at a position.
    public subscript(position: Int) -> ResultsSection<Key, Element> {
        let section = sections[position]
        return ResultsSection(key: section.key, results: results, positions: section.positions)
    }

    /// The keys of the sections, in order.
    public var allKeys: [Key] { sections.map(\.key) }

    /// The section of a key, if one has elements.
    ///
    /// - Complexity: O(number of sections).
    public subscript(key: Key) -> ResultsSection<Key, Element>? {
        guard let index = sections.firstIndex(where: { $0.key == key }) else { return nil }
        return self[index]
    }

    /// Subscribes to the changes of the sections: the first element describes the sections as
    /// they are, each later one what a commit changed, as UIKit's and SwiftUI's batch updates
    /// take them (see ``SectionedResultsChange``).
    ///
    /// An element changed in a way that moves it to another section, or to another place in
    /// its section, is a deletion at its old index path and an insertion at its new one.
    ///
    /// - Complexity: per commit that changes the results, O(n log n) for n results, reading
    ///   the key of the inserted and modified elements only.
    public func changes() -> SectionedResultsChanges<Key, Element> {
        SectionedResultsChanges(changes: results.changes(), sectionKey: sectionKey)
    }
}

/// The sections last computed, with the realm's mutation count they were computed at.
final class SectionCache<Key: Hashable> {
    var version: UInt64 = 0
    var sections: [(key: Key, positions: [Int])]?
}

/// One section of ``SectionedResults``: its key and its elements, in the results' order.
public struct ResultsSection<Key: Hashable & Sendable, Element: Object>: RandomAccessCollection, Identifiable {
    /// The value of the key path that the section's elements share.
    public let key: Key
    let results: Results<Element>
    let positions: [Int]

    /// The section's key, as SwiftUI's `ForEach` asks for an id.
    public var id: Key { key }

    public var startIndex: Int { 0 }
    public var endIndex: Int { positions.count }

    /// The element at a position of the section.
    public subscript(position: Int) -> Element { results[positions[position]] }
}

/// What one commit changed in sectioned results, by UIKit's batch-update conventions: delete
/// the sections and rows listed by their old indices, then insert the sections and rows listed
/// by their new indices, in ascending order. The rows of a deleted or inserted section are not
/// listed: they go and come with it.
public struct SectionedResultsChange<Key: Hashable & Sendable>: Sendable, Hashable {
    /// The realm version after the commit (for the first element: the version it shows).
    public let version: UInt64
    /// Whether this is the first element, the sections when the subscription started.
    public let isInitial: Bool
    /// The keys of the sections after the change, in order.
    public let sectionKeys: [Key]
    /// The number of rows of each section after the change.
    public let sectionCounts: [Int]
    /// Old indices of the sections that are gone (or moved), ascending.
    public let sectionsToDelete: [Int]
    /// New indices of the sections that are new (or moved), ascending.
    public let sectionsToInsert: [Int]
    /// Old index paths (section, row) of the rows that are gone from a section that stays,
    /// ascending.
    public let deletions: [IndexPath]
    /// New index paths of the rows that are new in a section that stays, ascending.
    public let insertions: [IndexPath]
    /// New index paths of the rows that stayed in place and whose values changed, ascending.
    public let modifications: [IndexPath]
}

/// A subscription to the changes of ``SectionedResults``: an `AsyncSequence` of
/// ``SectionedResultsChange``s.
public struct SectionedResultsChanges<Key: Hashable & Sendable, Element: Object>: AsyncSequence, Sendable {
    let changes: CollectionChanges<Element>
    let sectionKey: @Sendable (Element) -> Key

    /// Names the subscription, for ``Realm/write(withoutNotifying:_:)``.
    public var token: SubscriptionToken { changes.token }

    public func makeAsyncIterator() -> Iterator {
        Iterator(changes: changes.makeAsyncIterator(), grouping: SectionGrouping(sectionKey: sectionKey))
    }

    /// Reads the results' change sets and turns each into a change of the sections.
    public struct Iterator: AsyncIteratorProtocol {
        var changes: CollectionChanges<Element>.AsyncIterator
        var grouping: SectionGrouping<Key, Element>

        public mutating func next() async -> SectionedResultsChange<Key>? {
            guard let change = await changes.next() else { return nil }
            return grouping.apply(change)
        }
    }
}

/// The sections of the elements last seen by a subscription, by object key, and the diff of
/// one change set against them.
struct SectionGrouping<Key: Hashable & Sendable, Element: Object>: Sendable {
    let sectionKey: @Sendable (Element) -> Key
    /// The sections: their keys and the object keys of their rows, in order.
    var sections: [(key: Key, rows: [ObjectKey])] = []
    /// The section key of each object.
    var keys: [ObjectKey: Key] = [:]

    init(sectionKey: @escaping @Sendable (Element) -> Key) {
        self.sectionKey = sectionKey
    }

    /// Groups the snapshot of a change, reading the key of the elements not seen before and
    /// of those the change modified.
    mutating func group(_ change: CollectionChange<Element>) -> [(key: Key, rows: [ObjectKey])] {
        let snapshot = change.snapshot
        var reread = Set(change.insertions)
        reread.formUnion(change.modificationsInNewIndices)
        var newKeys: [ObjectKey: Key] = [:]
        newKeys.reserveCapacity(snapshot.count)
        var order: [Key] = []
        var rows: [Key: [ObjectKey]] = [:]
        for position in 0..<snapshot.count {
            let object = snapshot.key(at: position)
            let key: Key
            if !change.isInitial, !reread.contains(position), let known = keys[object] {
                key = known
            } else {
                key = snapshot[position].reading(sectionKey)
            }
            newKeys[object] = key
            if rows[key] == nil { order.append(key) }
            rows[key, default: []].append(object)
        }
        keys = newKeys
        return order.map { (key: $0, rows: rows[$0]!) }
    }

    /// The change of the sections that a change set of the results makes.
    mutating func apply(_ change: CollectionChange<Element>) -> SectionedResultsChange<Key> {
        let old = sections
        let new = group(change)
        sections = new
        guard !change.isInitial else {
            return SectionedResultsChange(
                version: change.version, isInitial: true, sectionKeys: new.map(\.key),
                sectionCounts: new.map(\.rows.count), sectionsToDelete: [], sectionsToInsert: [], deletions: [],
                insertions: [], modifications: [])
        }
        // Sections kept in place: the longest run of common keys in the same order.
        var oldIndex: [Key: Int] = [:]
        for (index, section) in old.enumerated() { oldIndex[section.key] = index }
        let common = new.indices.compactMap { index in oldIndex[new[index].key].map { (new: index, old: $0) } }
        let kept = Self.increasingRun(common.map(\.old))
        var keptNew = Set<Int>()
        var keptOld = Set<Int>()
        for i in kept {
            keptNew.insert(common[i].new)
            keptOld.insert(common[i].old)
        }
        var deletions: [IndexPath] = []
        var insertions: [IndexPath] = []
        var modifications: [IndexPath] = []
        let modified = Set(change.modificationsInNewIndices.map { change.snapshot.key(at: $0) })
        for newSection in keptNew.sorted() {
            let oldSection = oldIndex[new[newSection].key]!
            var oldRow: [ObjectKey: Int] = [:]
            for (row, object) in old[oldSection].rows.enumerated() { oldRow[object] = row }
            let newRows = new[newSection].rows
            // Rows kept in place: the longest run of common rows in the same order.
            let common = newRows.indices.compactMap { row in oldRow[newRows[row]].map { (new: row, old: $0) } }
            let stays = Set(Self.increasingRun(common.map(\.old)).map { common[$0].new })
            var staying = Set<Int>()
            for row in newRows.indices {
                if stays.contains(row) {
                    staying.insert(oldRow[newRows[row]]!)
                    if modified.contains(newRows[row]) { modifications.append(IndexPath(indexes: [newSection, row])) }
                } else {
                    insertions.append(IndexPath(indexes: [newSection, row]))
                }
            }
            for row in old[oldSection].rows.indices where !staying.contains(row) {
                deletions.append(IndexPath(indexes: [oldSection, row]))
            }
        }
        return SectionedResultsChange(
            version: change.version, isInitial: false, sectionKeys: new.map(\.key),
            sectionCounts: new.map(\.rows.count), sectionsToDelete: old.indices.filter { !keptOld.contains($0) },
            sectionsToInsert: new.indices.filter { !keptNew.contains($0) }, deletions: deletions.sorted(),
            insertions: insertions.sorted(), modifications: modifications.sorted())
    }

    /// The positions of a longest strictly increasing subsequence of `values`.
    ///
    /// - Complexity: O(n log n).
    static func increasingRun(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // positions of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var run: [Int] = []
        var position = tails.last ?? -1
        while position >= 0 {
            run.append(position)
            position = previous[position]
        }
        return run.reversed()
    }
}
