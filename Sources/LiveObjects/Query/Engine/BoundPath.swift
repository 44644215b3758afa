/// A key path resolved against a table: the properties to follow, table by table.
struct BoundPath {
    struct Step {
        let table: Table
        let property: Int
        /// For links, lists of links and `LinkingObjects`: the table the step leads to.
        let target: Table?
        /// Whether the step yields several values (a list or `LinkingObjects`).
        let isToMany: Bool
    }

    /// The steps; empty for `SELF`.
    let steps: [Step]
    /// The table the path starts from.
    let root: Table
    /// Whether following the path can yield several values.
    let isToMany: Bool

    init(steps: [Step], root: Table) {
        self.steps = steps
        self.root = root
        self.isToMany = steps.contains { $0.isToMany }
    }

    /// The property the path ends at, if any.
    var terminal: Property? { steps.last.map { $0.table.schema.properties[$0.property] } }

    /// The table whose objects the path yields, when it ends at a link (or is `SELF`).
    var objectTable: Table? { steps.isEmpty ? root : steps.last!.target }

    /// The name of the path, for messages.
    var name: String {
        steps.isEmpty ? "SELF" : steps.map { $0.table.schema.properties[$0.property].name }.joined(separator: ".")
    }

    /// Resolves property names against a table.
    static func resolve(_ components: [String], from root: Table, store: Store)
        throws(QueryBindingFailure) -> BoundPath
    {
        var steps: [Step] = []
        var table = root
        for (i, name) in components.enumerated() {
            guard let p = table.propertyIndex[name] else {
                throw QueryBindingFailure(
                    "\(table.name) has no property '\(name)'", code: .unknownProperty,
                    objectType: table.name, property: name)
            }
            let property = table.schema.properties[p]
            var target: Table?
            if property.type == .object || property.type == .linkingObjects {
                target = store.tablesByName[property.objectType!]
            }
            steps.append(Step(table: table, property: p, target: target, isToMany: property.isList))
            if i < components.count - 1 {
                guard let next = target else {
                    throw QueryBindingFailure(
                        "\(table.name).\(name) is not a link, so '\(components[i + 1])' cannot follow it",
                        code: .invalidQuery, objectType: table.name, property: name)
                }
                table = next
            }
        }
        return BoundPath(steps: steps, root: root)
    }

    /// Calls `visit` with every value the path yields from a row (links as `.object` keys).
    /// A nil link on the way yields nothing for a to-many path and `.null` otherwise.
    func forEachValue(from row: Int32, _ visit: (PropertyValue) -> Void) {
        if steps.isEmpty {
            visit(.object(root.key(row)))
            return
        }
        walk(0, row, visit)
    }

    private func walk(_ i: Int, _ row: Int32, _ visit: (PropertyValue) -> Void) {
        let step = steps[i]
        let last = i == steps.count - 1
        if last {
            if step.isToMany {
                if case .list(let items) = step.table.value(row, step.property) {
                    for item in items { visit(item) }
                }
            } else {
                visit(step.table.columns[step.property]!.value(at: Int(row)))
            }
            return
        }
        let targets = Self.targets(step, row)
        if targets.isEmpty && !isToMany {
            visit(.null)
            return
        }
        for next in targets { walk(i + 1, next, visit) }
    }

    /// The value of a path that yields at most one value (`.null` through a nil link).
    func value(from row: Int32) -> PropertyValue {
        if steps.isEmpty { return .object(root.key(row)) }
        var row = row
        for step in steps.dropLast() {
            guard let next = Self.targets(step, row).first else { return .null }
            row = next
        }
        let step = steps[steps.count - 1]
        return step.table.columns[step.property]!.value(at: Int(row))
    }

    /// Every value of the path from a row.
    func values(from row: Int32) -> [PropertyValue] {
        var result: [PropertyValue] = []
        forEachValue(from: row) { result.append($0) }
        return result
    }

    /// The rows of the target table that one step leads to from a row.
    static func targets(_ step: Step, _ row: Int32) -> [Int32] {
        switch step.table.columns[step.property] {
        case let link as LinkColumn:
            let t = link.targets[Int(row)]
            return t < 0 ? [] : [t]
        case let list as LinkListColumn:
            return list.lists[Int(row)]
        default:
            return step.table.linkingObjectsSources[step.property]?.rows[Int(row)] ?? []
        }
    }

    /// The rows of the objects a path ending at links (or `SELF`) yields.
    func objectRows(from row: Int32) -> [Int32] {
        if steps.isEmpty { return [row] }
        var rows: [Int32] = [row]
        for step in steps {
            rows = rows.flatMap { Self.targets(step, $0) }
        }
        return rows
    }
}

/// A problem found while binding a predicate or sort to a schema, located by the caller.
struct QueryBindingFailure: Error {
    var message: String
    var code: LiveObjectsError.Code
    var objectType: String?
    var property: String?

    init(
        _ message: String, code: LiveObjectsError.Code = .invalidQuery, objectType: String? = nil,
        property: String? = nil
    ) {
        self.message = message
        self.code = code
        self.objectType = objectType
        self.property = property
    }
}
