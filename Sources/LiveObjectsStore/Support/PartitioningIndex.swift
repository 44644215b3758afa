extension RandomAccessCollection {
    /// The index of the first element for which `belongsInSecondPartition` is true, or
    /// ``endIndex`` when there is none: a binary search. The predicate must be false for a
    /// prefix of the collection and true for the rest (the collection is partitioned by it), as
    /// `$0 >= x` is in ascending order, for which the result is the lower bound of `x`.
    ///
    /// - Complexity: O(log n) calls of the predicate.
    @inlinable
    package func partitioningIndex(where belongsInSecondPartition: (Element) throws -> Bool) rethrows -> Index {
        var low = startIndex
        var count = self.count
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if try belongsInSecondPartition(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
