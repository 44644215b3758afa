/// The three groups of a predicate tree.
enum PredicateGroupKind {
    case not, and, or
}

/// A predicate tree as ``walkPredicateGroups(_:_:)`` sees it: groups (`NOT`, `AND`, `OR`) with
/// their operands, and leaves.
protocol PredicateGroupTree {
    /// The group this node is, with its operands; nil for a leaf.
    var group: (kind: PredicateGroupKind, operands: [Self])? { get }
}

/// What a walk of a predicate's groups computes: a result for each leaf, combined group by
/// group.
protocol PredicateGroupFold {
    associatedtype Node: PredicateGroupTree
    associatedtype Result
    /// What a group keeps while its operands are walked.
    associatedtype Partial
    associatedtype Failure: Error

    /// The result of a leaf.
    mutating func leaf(_ node: Node) throws(Failure) -> Result
    /// The state of a group before its first operand.
    func start(_ kind: PredicateGroupKind) -> Partial
    /// Adds an operand's result to its group; returns the group's result when this operand
    /// decides it (the rest are then not walked).
    func add(_ result: Result, to partial: inout Partial, of kind: PredicateGroupKind) -> Result?
    /// The result of a group whose operands all were added without deciding it.
    func finish(_ partial: Partial, of kind: PredicateGroupKind) -> Result
}

/// Walks a predicate's groups with an explicit stack, so that the depth of the tree (up to the
/// parser's nesting limit) costs no thread stack: operands in order, each group ended by a
/// deciding operand or after its last one. Binding a parsed predicate and evaluating a bound
/// one both walk this way.
func walkPredicateGroups<Fold: PredicateGroupFold>(
    _ root: Fold.Node, _ fold: inout Fold
) throws(Fold.Failure) -> Fold.Result {
    var stack: [PredicateGroupFrame<Fold>] = []
    var next = root
    while true {
        let result: Fold.Result
        if let (kind, operands) = next.group {
            if let first = operands.first {
                stack.append(PredicateGroupFrame(kind: kind, operands: operands, index: 0, partial: fold.start(kind)))
                next = first
                continue
            }
            result = fold.finish(fold.start(kind), of: kind)
        } else {
            result = try fold.leaf(next)
        }
        if let value = hand(result) { return value }
    }

    /// Hands a result to the enclosing groups, ending those it completes; returns the root's
    /// result when the walk is over, else sets `next` to the operand to walk.
    func hand(_ value: Fold.Result) -> Fold.Result? {
        var result = value
        while let top = stack.indices.last {
            if let decided = fold.add(result, to: &stack[top].partial, of: stack[top].kind) {
                stack.removeLast()
                result = decided
                continue
            }
            stack[top].index += 1
            if stack[top].index < stack[top].operands.count {
                next = stack[top].operands[stack[top].index]
                return nil
            }
            let frame = stack.removeLast()
            result = fold.finish(frame.partial, of: frame.kind)
        }
        return result
    }
}

/// A group of ``walkPredicateGroups(_:_:)`` being walked: its operands, the one being walked,
/// and what the fold keeps for it.
private struct PredicateGroupFrame<Fold: PredicateGroupFold> {
    let kind: PredicateGroupKind
    let operands: [Fold.Node]
    var index: Int
    var partial: Fold.Partial
}
