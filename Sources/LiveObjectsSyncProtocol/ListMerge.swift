// The merge of a list edited on a device into the list the server holds (docs/SYNC-PROTOCOL.md,
// "Lists"): the device's edit is the difference between the list it started from (its base) and
// the list it sends; that difference, not the whole list, is applied to the current list. The
// server merges with it, and so does the root package's test double of the server.

/// The three-way merge of lists (docs/SYNC-PROTOCOL.md, "Lists").
public enum ListMerge {
    /// An element of the merged list: of the current list (`index`) or inserted (`inserted`,
    /// its index in the edited list).
    private struct Entry {
        var index: Int
        /// The index in the base of the current list's element matched with it.
        var fromBase: Int?
        var inserted: Int?
        var removed = false
    }

    /// Applies the difference `base` → `edited` to `current`.
    ///
    /// Elements are compared by `key` (a link's target, a plain value); equal keys count by
    /// occurrence. The difference is a longest common subsequence: an element of the base it
    /// leaves out is removed, an element of the edited list it leaves out is inserted, and an
    /// element both removed and inserted is moved.
    ///
    /// - A removal removes the base's occurrence from the current list, if it is still there.
    /// - An insertion goes after its anchor, the nearest element before it in the edited list
    ///   that came from the base and is still in the current list (none: the front), and after
    ///   the elements that follow the anchor and that the base did not hold (insertions the
    ///   device did not know of), so concurrent insertions keep their arrival order.
    /// - A move takes the base's occurrence if still there; otherwise an occurrence the base
    ///   did not hold (the element moved by another device: the last move wins); otherwise the
    ///   element was removed meanwhile, and stays removed.
    public static func merge<Element, Key: Hashable>(
        base: [Element], edited: [Element], current: [Element], key: (Element) -> Key
    ) -> [Element] {
        let baseKeys = base.map(key)
        let editedKeys = edited.map(key)
        let currentKeys = current.map(key)
        let (baseToEdited, editedToBase) = commonSubsequence(baseKeys, editedKeys)
        let (baseToCurrent, _) = commonSubsequence(baseKeys, currentKeys)

        var entries = current.indices.map { Entry(index: $0, fromBase: nil, inserted: nil) }
        // The entry of each base element still in the current list.
        var baseEntry = [Int?](repeating: nil, count: base.count)
        for (b, c) in baseToCurrent.enumerated() {
            guard let c else { continue }
            entries[c].fromBase = b
            baseEntry[b] = c
        }
        let removedBase = base.indices.filter { baseToEdited[$0] == nil }
        let insertedEdited = edited.indices.filter { editedToBase[$0] == nil }

        // Moves: an inserted element paired with a removed one of the same key, in order.
        var moveSource: [Int: Int] = [:]
        var paired = Set<Int>()
        var removedByKey: [Key: [Int]] = [:]
        for b in removedBase { removedByKey[baseKeys[b], default: []].append(b) }
        for d in insertedEdited {
            guard var sources = removedByKey[editedKeys[d]], !sources.isEmpty else { continue }
            let b = sources.removeFirst()
            removedByKey[editedKeys[d]] = sources
            moveSource[d] = b
            paired.insert(b)
        }
        for b in removedBase where !paired.contains(b) {
            if let e = baseEntry[b] { entries[e].removed = true }
        }
        // The current list's elements the base did not hold, by key, for moves whose element
        // another device moved.
        var unknown: [Key: [Int]] = [:]
        for (e, entry) in entries.enumerated() where entry.fromBase == nil {
            unknown[currentKeys[entry.index], default: []].append(e)
        }
        var dropped = Set<Int>()
        for d in insertedEdited {
            guard let b = moveSource[d] else { continue }
            if let e = baseEntry[b] {
                entries[e].removed = true
            } else if var others = unknown[editedKeys[d]], let e = others.first(where: { !entries[$0].removed }) {
                entries[e].removed = true
                others.removeAll { $0 == e }
                unknown[editedKeys[d]] = others
            } else {
                dropped.insert(d)
            }
        }
        // Insertions, grouped by anchor, in the edited list's order; each group's place is found
        // before any is inserted, then the groups go in from the end.
        var groups: [(anchor: Int?, elements: [Int])] = []
        var groupOfAnchor: [Int?: Int] = [:]
        var anchor: Int?
        for d in edited.indices {
            if let b = editedToBase[d] {
                if baseEntry[b] != nil { anchor = b }
                continue
            }
            guard !dropped.contains(d) else { continue }
            if let g = groupOfAnchor[anchor] {
                groups[g].elements.append(d)
            } else {
                groupOfAnchor[anchor] = groups.count
                groups.append((anchor, [d]))
            }
        }
        var placed: [(position: Int, elements: [Int])] = []
        for group in groups {
            var position = group.anchor.flatMap { baseEntry[$0] }.map { $0 + 1 } ?? 0
            while position < entries.count, entries[position].fromBase == nil { position += 1 }
            placed.append((position, group.elements))
        }
        for group in placed.sorted(by: { $0.position > $1.position }) {
            entries.insert(
                contentsOf: group.elements.map { Entry(index: -1, fromBase: nil, inserted: $0) }, at: group.position)
        }
        return entries.filter { !$0.removed }.map { entry in
            entry.inserted.map { edited[$0] } ?? current[entry.index]
        }
    }

    /// The most cells of the table of ``commonSubsequence(_:_:)``: two lists whose middles (after
    /// their common prefix and suffix) are 2,000 elements each.
    public static let maximumTable = 4_000_000

    /// A longest common subsequence of two lists: for each index of the first, the index of the
    /// second it is matched with, and the other way round. Ties go to the earliest elements of
    /// the first list, so the answer is one for given lists.
    public static func commonSubsequence<Key: Hashable>(_ a: [Key], _ b: [Key]) -> ([Int?], [Int?]) {
        var aToB = [Int?](repeating: nil, count: a.count)
        var bToA = [Int?](repeating: nil, count: b.count)
        // The common prefix and suffix need no table (the usual case: an append, one removal).
        var start = 0
        while start < a.count, start < b.count, a[start] == b[start] {
            aToB[start] = start
            bToA[start] = start
            start += 1
        }
        var endA = a.count
        var endB = b.count
        while endA > start, endB > start, a[endA - 1] == b[endB - 1] {
            endA -= 1
            endB -= 1
            aToB[endA] = endB
            bToA[endB] = endA
        }
        let n = endA - start
        let m = endB - start
        // Past this size the table would take too much memory: the middles are taken as
        // unmatched (every element there removed and inserted), a common subsequence if not the
        // longest one.
        guard n > 0, m > 0, n * m <= maximumTable else { return (aToB, bToA) }
        // The middles compared as numbers, one per distinct key.
        var numbers: [Key: Int32] = [:]
        func number(_ key: Key) -> Int32 {
            if let known = numbers[key] { return known }
            let new = Int32(numbers.count)
            numbers[key] = new
            return new
        }
        let middleA = a[start..<endA].map(number)
        let middleB = b[start..<endB].map(number)
        // lengths[i * (m + 1) + j]: the longest common subsequence of a[start + i...] and
        // b[start + j...].
        let width = m + 1
        var lengths = [Int32](repeating: 0, count: (n + 1) * width)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lengths[i * width + j] =
                    middleA[i] == middleB[j]
                    ? lengths[(i + 1) * width + j + 1] + 1
                    : max(lengths[(i + 1) * width + j], lengths[i * width + j + 1])
            }
        }
        var i = 0
        var j = 0
        while i < n, j < m {
            if middleA[i] == middleB[j] {
                aToB[start + i] = start + j
                bToA[start + j] = start + i
                i += 1
                j += 1
            } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
                i += 1
            } else {
                j += 1
            }
        }
        return (aToB, bToA)
    }
}

extension ListMerge {
    /// Applies the difference `base` → `edited` of a set to `current` (docs/SYNC-PROTOCOL.md,
    /// "Sets"): the members the device removed leave, the members it added join at the end
    /// unless `current` holds them already, and every other member stays where `current` has
    /// it. A member two devices add at once is held once; members different devices add are all
    /// kept; a member a device removes leaves even if another device changed the set meanwhile.
    ///
    /// Members are compared by `key`; a list given with a member twice counts it once (the first
    /// occurrence), so the result never holds a member twice.
    public static func mergeSet<Element, Key: Hashable>(
        base: [Element], edited: [Element], current: [Element], key: (Element) -> Key
    ) -> [Element] {
        let baseKeys = Set(base.map(key))
        let editedKeys = Set(edited.map(key))
        var result: [Element] = []
        var held = Set<Key>()
        for member in current {
            let k = key(member)
            guard baseKeys.contains(k) ? editedKeys.contains(k) : true, held.insert(k).inserted else { continue }
            result.append(member)
        }
        for member in edited where !baseKeys.contains(key(member)) && held.insert(key(member)).inserted {
            result.append(member)
        }
        return result
    }
}

extension ListMerge {
    /// Applies the difference `base` → `edited` of a map to `current` (docs/SYNC-PROTOCOL.md,
    /// "Maps"), key by key: a key the device set or changed (absent from `base`, or with another
    /// value there) takes the device's value, a key it removed (in `base`, not in `edited`)
    /// leaves, and every key it left as it was keeps the value `current` has, or stays absent.
    /// Keys different devices set are all kept; when two devices change the same key, the later
    /// merge wins, as for a property.
    public static func mergeMap<Value: Equatable>(
        base: [String: Value], edited: [String: Value], current: [String: Value]
    ) -> [String: Value] {
        mergeMap(base: base, edited: edited, current: current, key: { $0 })
    }

    /// ``mergeMap(base:edited:current:)`` with the values compared by a key: a map of objects'
    /// values by their targets' type and id, not the server ids the references may carry.
    public static func mergeMap<Value, Key: Equatable>(
        base: [String: Value], edited: [String: Value], current: [String: Value], key: (Value) -> Key
    ) -> [String: Value] {
        var result = current
        for (name, value) in edited where base[name].map(key) != key(value) { result[name] = value }
        for name in base.keys where edited[name] == nil { result[name] = nil }
        return result
    }

    /// The order of a map's keys on the wire and in files: increasing order of their Unicode
    /// scalars.
    public static func mapKeyPrecedes(_ a: String, _ b: String) -> Bool {
        a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
    }

    /// What is wrong with a key of a map, or nil: a key is not empty, holds no `.` and does not
    /// start with `$` (the rules of a device's `Map`).
    public static func mapKeyProblem(_ key: String) -> String? {
        if key.isEmpty { return "a key of a map is empty" }
        if key.contains(".") { return "the key \"\(key)\" of a map holds a \".\"" }
        if key.hasPrefix("$") { return "the key \"\(key)\" of a map starts with \"$\"" }
        return nil
    }
}
