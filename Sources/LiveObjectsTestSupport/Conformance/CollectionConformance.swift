/// Checks that a collection keeps the rules of `RandomAccessCollection` and holds the expected
/// elements, as seen through `key` (objects are compared by a value of theirs, such as the
/// primary key). Returns every broken rule, one line each; empty when the collection is sound.
///
/// Checked: `count`, `isEmpty`, `first`, `last`; iteration; `startIndex`, `endIndex`,
/// `indices`; `index(after:)` and `index(before:)` over every position; `index(_:offsetBy:)` and
/// `distance(from:to:)` for every pair of positions, forward and backward;
/// `index(_:offsetBy:limitedBy:)` at, inside and past its limit; the subscript at every
/// position; slices (`dropFirst`, `dropLast`, `prefix`, `suffix` and a middle range) and
/// `reversed()`.
package func collectionViolations<C: RandomAccessCollection, Key: Equatable>(
    _ collection: C, expected: [Key], key: (C.Element) -> Key
) -> [String] {
    var problems: [String] = []
    func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition && problems.count < 20 { problems.append(message()) }
    }
    let n = expected.count
    check(collection.count == n, "count is \(collection.count), expected \(n)")
    check(collection.isEmpty == (n == 0), "isEmpty is \(collection.isEmpty) for \(n) elements")
    check(collection.first.map(key) == expected.first, "first differs")
    check(collection.last.map(key) == expected.last, "last differs")
    check(collection.map(key) == expected, "iteration gives \(collection.map(key)), expected \(expected)")
    guard collection.count == n else { return problems }

    var positions: [C.Index] = []
    var i = collection.startIndex
    while i != collection.endIndex && positions.count <= n {
        positions.append(i)
        i = collection.index(after: i)
    }
    check(positions.count == n, "index(after:) reaches endIndex after \(positions.count) steps, not \(n)")
    check(Array(collection.indices) == positions, "indices differ from the walk by index(after:)")
    let all = positions + [collection.endIndex]
    for (k, position) in positions.enumerated() {
        check(key(collection[position]) == expected[k], "subscript at position \(k) differs")
        check(collection.index(before: all[k + 1]) == position, "index(before:) of position \(k + 1) is wrong")
    }
    for a in 0...n {
        for b in 0...n {
            check(collection.index(all[a], offsetBy: b - a) == all[b], "index(offsetBy: \(b - a)) from \(a) is wrong")
            check(collection.distance(from: all[a], to: all[b]) == b - a, "distance from \(a) to \(b) is wrong")
            let limit = all[b]
            let reached = collection.index(all[a], offsetBy: b - a, limitedBy: limit)
            check(reached == all[b], "index(offsetBy: \(b - a), limitedBy: \(b)) from \(a) is wrong")
            let past = b >= a ? 1 : -1
            if (b - a + past) + a >= 0 && (b - a + past) + a <= n && b != a {
                let beyond = collection.index(all[a], offsetBy: b - a + past, limitedBy: limit)
                check(beyond == nil, "index(offsetBy:limitedBy:) from \(a) goes past its limit \(b)")
            }
        }
    }
    check(collection.dropFirst().map(key) == Array(expected.dropFirst()), "dropFirst differs")
    check(collection.dropLast().map(key) == Array(expected.dropLast()), "dropLast differs")
    check(collection.prefix(2).map(key) == Array(expected.prefix(2)), "prefix(2) differs")
    check(collection.suffix(2).map(key) == Array(expected.suffix(2)), "suffix(2) differs")
    if n >= 3 {
        let middle = collection[all[1]..<all[n - 1]]
        check(middle.map(key) == Array(expected[1..<(n - 1)]), "a middle slice differs")
        check(middle.count == n - 2, "a middle slice counts \(middle.count)")
    }
    check(collection.reversed().map(key) == expected.reversed(), "reversed() differs")
    return problems
}
