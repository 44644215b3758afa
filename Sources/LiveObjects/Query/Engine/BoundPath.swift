import LiveObjectsStore

/// A key path resolved against a table: the properties to follow, table by table.
struct BoundPath {
    struct Step {
        let table: Table
        let property: Int
        /// For links, lists of links and `LinkingObjects`: the table the step leads to.
        let target: Table?
        /// Whether the step yields several values (a list or `LinkingObjects`, or `[*]` into an
        /// `AnyValue`).
        var isToMany: Bool
        /// For a map: the value of one key (`settings['theme']`), or the keys (`settings.@keys`).
        var mapAccess: MapAccess? = nil
        /// For a mixed property: whether the step reads the kind of its value (`payload.@type`,
        /// ``AnyValue/kindName``) instead of the value.
        var readsKind = false
        /// For a mixed property: the way into its value, one subscript after another
        /// (`payload[0]['name']`, `payload[*]`); empty for the value itself.
        var mixedAccess: [MixedAccess] = []
    }

    /// A subscript into an `AnyValue`'s nested list or dictionary.
    enum MixedAccess {
        /// A list's element by position (null when the value is no list or too short).
        case index(Int)
        /// A dictionary's value by key (null when the value is no dictionary or lacks the key).
        case key(String)
        /// Every element of a list, every value of a dictionary (nothing for another value).
        case every
    }

    /// What a step reads of a map besides its values.
    enum MapAccess: Equatable {
        /// The value of a key (null when the map lacks the key).
        case key(String)
        /// The keys.
        case keys
    }

    /// The steps; empty for `SELF`.
    let steps: [Step]
    /// The table the path starts from.
    let root: Table
    /// Whether following the path can yield several values.
    let isToMany: Bool
    /// How many steps yield several values. With two or more, the same row can be reached in
    /// many ways (as many as the product of the lists' lengths), so rows are followed as a set,
    /// each with the number of ways it is reached, rather than way by way.
    let toManyCount: Int

    /// The most property names one key path may have (before and after a collection operator
    /// together): ``Realm/Limits/maximumKeyPathLength``.
    static var maximumLength: Int { PredicateParser.maxKeyPathLength }

    init(steps: [Step], root: Table) {
        self.steps = steps
        self.root = root
        var count = 0
        for step in steps where step.isToMany { count += 1 }
        self.toManyCount = count
        self.isToMany = count > 0
    }

    /// The property the path ends at, if any.
    var terminal: Property? {
        guard let last = steps.last else { return nil }
        var property = last.table.schema.properties[last.property]
        switch last.mapAccess {
        case .key:
            // One value, or null when the map lacks the key.
            property.isList = false
            property.isMap = false
            property.isOptional = true
        case .keys:
            property.type = .string
            property.isOptional = false
        case nil:
            break
        }
        if last.readsKind {
            property.type = .string
            property.isOptional = false
        }
        return property
    }

    /// The table whose objects the path yields, when it ends at a link (or is `SELF`).
    var objectTable: Table? { steps.isEmpty ? root : steps.last!.target }

    /// The name of the path, for messages.
    var name: String {
        steps.isEmpty ? "SELF" : steps.map { $0.table.schema.properties[$0.property].name }.joined(separator: ".")
    }

    /// The error for a key path of more than ``maximumLength`` names.
    static func tooLong(_ count: Int, objectType: String) -> QueryBindingFailure {
        QueryBindingFailure(
            "a key path has at most \(maximumLength) property names, and this one has \(count)",
            code: .limitExceeded, objectType: objectType)
    }

    /// Resolves property names against a table.
    static func resolve(_ components: [String], from root: Table, store: Store)
        throws(QueryBindingFailure) -> BoundPath
    {
        guard components.count <= maximumLength else { throw tooLong(components.count, objectType: root.name) }
        var steps: [Step] = []
        steps.reserveCapacity(components.count)
        var table = root
        for (i, name) in components.enumerated() {
            if name == KeyPathSyntax.typeStep {
                // After an AnyValue, its subscripts, or the elements or a key's value of a
                // collection of AnyValues (not after a map's keys).
                guard let last = steps.last, !last.readsKind, last.mapAccess != .keys,
                    last.table.schema.properties[last.property].type == .mixed, i == components.count - 1
                else {
                    throw QueryBindingFailure(
                        "@type follows only an AnyValue property, at the end of a key path", code: .invalidQuery,
                        objectType: table.name,
                        property: steps.last.map { $0.table.schema.properties[$0.property].name })
                }
                steps[steps.count - 1].readsKind = true
                continue
            }
            if KeyPathSyntax.isSubscript(name), let last = steps.last, last.mapAccess == nil, !last.readsKind,
                last.table.schema.properties[last.property].type == .mixed,
                !last.table.schema.properties[last.property].isList
            {
                steps[steps.count - 1].mixedAccess.append(mixedAccess(name))
                if case .every = steps[steps.count - 1].mixedAccess.last { steps[steps.count - 1].isToMany = true }
                if i < components.count - 1, !KeyPathSyntax.isSubscript(components[i + 1]),
                    components[i + 1] != KeyPathSyntax.typeStep
                {
                    throw QueryBindingFailure(
                        "an AnyValue holds no links, so '\(components[i + 1])' cannot follow its subscript",
                        code: .invalidQuery, objectType: table.name,
                        property: last.table.schema.properties[last.property].name)
                }
                continue
            }
            if KeyPathSyntax.index(name) != nil || name == KeyPathSyntax.everyElementComponent {
                throw misplacedSubscript(after: steps.last, in: table)
            }
            if KeyPathSyntax.mapKey(name) != nil || KeyPathSyntax.mapSteps.contains(name) {
                if let access = try mapAccess(name, after: steps.last) {
                    let last = steps.removeLast()
                    var isToMany = true
                    var target: Table?
                    if case .key = access {
                        isToMany = false
                        // The value of one key of a map of objects is a link.
                        target = last.target
                    }
                    steps.append(
                        Step(
                            table: last.table, property: last.property, target: target, isToMany: isToMany,
                            mapAccess: access))
                }
                if i < components.count - 1, components[i + 1] != KeyPathSyntax.typeStep {
                    // A map of objects' values (`friends.@values`, `friends['a']`) are links.
                    guard let next = steps.last?.target else {
                        throw QueryBindingFailure(
                            "a map's values are not links, so '\(components[i + 1])' cannot follow them",
                            code: .invalidQuery, objectType: table.name, property: name)
                    }
                    table = next
                }
                continue
            }
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
            let nextIsMapStep =
                i < components.count - 1
                && (KeyPathSyntax.mapKey(components[i + 1]) != nil
                    || KeyPathSyntax.mapSteps.contains(components[i + 1]))
            let nextIsTypeStep = i < components.count - 1 && components[i + 1] == KeyPathSyntax.typeStep
            let nextIsSubscript =
                property.type == .mixed && i < components.count - 1 && KeyPathSyntax.isSubscript(components[i + 1])
            if i < components.count - 1 && !(property.isMap && nextIsMapStep) && !nextIsTypeStep && !nextIsSubscript {
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

    /// The error for an index or `[*]` that follows no `AnyValue` (or follows a collection of
    /// them, or a map's value).
    private static func misplacedSubscript(after last: Step?, in table: Table) -> QueryBindingFailure {
        let property = last.map { $0.table.schema.properties[$0.property] }
        guard let property, property.type == .mixed else {
            return QueryBindingFailure(
                "an index or [*] follows only an AnyValue property", code: .invalidQuery, objectType: table.name,
                property: property?.name)
        }
        return QueryBindingFailure(
            "a collection of AnyValues is read with ANY, ALL or NONE, not by position or [*], and a map's value"
                + " is compared whole", code: .invalidQuery, objectType: table.name, property: property.name)
    }

    /// The subscript into an `AnyValue` a component names.
    private static func mixedAccess(_ component: String) -> MixedAccess {
        if let index = KeyPathSyntax.index(component) { return .index(index) }
        if let key = KeyPathSyntax.mapKey(component) { return .key(key) }
        return .every
    }

    /// Calls `visit` with what a step with subscripts into an `AnyValue` reads from a row: the
    /// value each subscript leads to in turn (`.null` for a missing key or position; nothing
    /// for `[*]` into a value that is no list or dictionary), or its kind name.
    static func mixedValues(_ step: Step, _ row: Int32, _ visit: (PropertyValue) -> Void) {
        let value = step.table.columns[step.property]!.value(at: Int(row))
        if !step.isToMany {
            // No [*]: one value all the way, without an array per row.
            var one = value
            for access in step.mixedAccess {
                switch access {
                case .index(let index): one = MixedContainer.element(of: one, at: index) ?? .null
                case .key(let key): one = MixedContainer.value(of: one, forKey: key) ?? .null
                case .every: return
                }
            }
            visit(step.readsKind ? .string(AnyValue.kindName(of: one)) : one)
            return
        }
        var current = [value]
        for access in step.mixedAccess {
            switch access {
            case .index(let index):
                current = current.map { MixedContainer.element(of: $0, at: index) ?? .null }
            case .key(let key):
                current = current.map { MixedContainer.value(of: $0, forKey: key) ?? .null }
            case .every:
                current = current.flatMap { value -> [PropertyValue] in
                    guard case .list(let stored) = value else { return [] }
                    return MixedContainer.elements(of: stored)
                }
            }
        }
        for value in current { visit(step.readsKind ? .string(AnyValue.kindName(of: value)) : value) }
    }

    /// The map access a component names (`[key`, `@keys`; nil for `@values`, the map itself,
    /// and for a property name), after the step of a map.
    private static func mapAccess(_ component: String, after last: Step?) throws(QueryBindingFailure) -> MapAccess? {
        let key = KeyPathSyntax.mapKey(component)
        guard let last, last.mapAccess == nil, last.table.schema.properties[last.property].isMap else {
            let table = last?.table
            throw QueryBindingFailure(
                "\(component.hasPrefix("[") ? "a key in '[…]'" : component) follows only a map property",
                code: .invalidQuery, objectType: table?.name,
                property: last.map { $0.table.schema.properties[$0.property].name })
        }
        if let key { return .key(key) }
        return component == "@keys" ? .keys : nil
    }

    /// Calls `visit` with what a map step reads from a row: the value of a key (`.null` when
    /// the map lacks it), or each key.
    @inline(__always)
    static func mapValues(_ step: Step, _ access: MapAccess, _ row: Int32, _ visit: (PropertyValue) -> Void) {
        let keys: [String]
        let links: LinkListColumn?
        switch step.table.columns[step.property] {
        case let column as ValueListColumn:
            (keys, links) = (column.keys[Int(row)], nil)
        case let column as LinkListColumn where column.isMap:
            (keys, links) = (column.keys[Int(row)], column)
        default:
            return
        }
        switch access {
        case .keys:
            for key in keys { visit(.string(key)) }
        case .key(let key):
            guard let index = keyIndex(key, in: keys) else { return visit(.null) }
            if let links { return visit(links.element(links.lists[Int(row)][index])) }
            visit(unsafeDowncast(step.table.columns[step.property]!, to: ValueListColumn.self).lists[Int(row)][index])
        }
    }

    /// The position of a key among a map's sorted keys, if the map has it.
    @inline(__always)
    static func keyIndex(_ key: String, in keys: [String]) -> Int? {
        var low = 0
        var high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid] < key { low = mid + 1 } else { high = mid }
        }
        return low < keys.count && keys[low] == key ? low : nil
    }

    // MARK: Evaluation
    //
    // Every walk is a loop over the steps, one frontier of rows at a time: no recursion, and
    // with several lists on the way each row is followed once per step (with the number of
    // ways it was reached), so the cost is at most the path's length times the links followed,
    // never the product of the lists' lengths.

    /// A row reached by following links, and in how many ways (saturating at `Int64.max`).
    typealias Reached = (row: Int32, ways: Int64)

    /// Follows link steps from rows. With `merge`, a row reached several times is kept once (in
    /// the place it was first reached), with the ways added up; without it, once per way, in
    /// the order of the links (which is what paths with at most one list need: they reach each
    /// row through distinct links only).
    static func follow(_ steps: ArraySlice<Step>, from start: [Reached], merge: Bool) -> [Reached] {
        var frontier = start
        for step in steps {
            if frontier.isEmpty { break }
            var next: [Reached] = []
            if merge {
                var position: [Int32: Int] = [:]
                for (row, ways) in frontier {
                    for target in targets(step, row) {
                        if let p = position[target] {
                            next[p].ways = saturatingAdd(next[p].ways, ways)
                        } else {
                            position[target] = next.count
                            next.append((target, ways))
                        }
                    }
                }
            } else {
                for (row, ways) in frontier {
                    for target in targets(step, row) { next.append((target, ways)) }
                }
            }
            frontier = next
        }
        return frontier
    }

    /// Follows link steps from rows once per way, for paths with at most one list (which reach
    /// each row through distinct links only): rows without counts, in the order of the links.
    static func followEachWay(_ steps: ArraySlice<Step>, from rows: [Int32]) -> [Int32] {
        var frontier = rows
        for step in steps {
            if frontier.isEmpty { break }
            if let link = step.table.columns[step.property] as? LinkColumn {
                var next: [Int32] = []
                next.reserveCapacity(frontier.count)
                for row in frontier {
                    let target = link.targets[Int(row)]
                    if target >= 0 { next.append(target) }
                }
                frontier = next
            } else if frontier.count == 1 {
                frontier = targets(step, frontier[0])
            } else {
                var next: [Int32] = []
                for row in frontier { next.append(contentsOf: targets(step, row)) }
                frontier = next
            }
        }
        return frontier
    }

    /// The rows a path's steps but the last reach from a row, once per way (at most one list).
    private func eachWayBeforeLast(from row: Int32) -> [Int32] {
        steps.count == 1 ? [row] : Self.followEachWay(steps.dropLast().dropFirst(), from: Self.targets(steps[0], row))
    }

    static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    static func saturatingMultiply(_ a: Int64, _ b: Int64) -> Int64 {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max : product
    }

    /// The values of the last step from each reached row, with the ways of its row: a list's
    /// elements (links as `.object` keys), or the property's value.
    private static func lastValues(_ step: Step, _ rows: [Reached], _ visit: (PropertyValue, Int64) -> Void) {
        for (row, ways) in rows { lastValues(step, row) { visit($0, ways) } }
    }

    /// The values of the last step from one row.
    @inline(__always)
    static func lastValues(_ step: Step, _ row: Int32, _ visit: (PropertyValue) -> Void) {
        if step.readsKind && step.mixedAccess.isEmpty && (step.isToMany || step.mapAccess != nil) {
            // The kinds of a collection of AnyValues' elements, or of a map's value for a key.
            var elements = step
            elements.readsKind = false
            return lastValues(elements, row) { visit(.string(AnyValue.kindName(of: $0))) }
        }
        if !step.mixedAccess.isEmpty {
            mixedValues(step, row, visit)
        } else if let access = step.mapAccess {
            mapValues(step, access, row, visit)
        } else if step.isToMany {
            // A map's elements are its values (its whole value is a list of key and value pairs).
            if let column = step.table.columns[step.property] as? ValueListColumn {
                for item in column.lists[Int(row)] { visit(item) }
            } else if let column = step.table.columns[step.property] as? LinkListColumn, column.isMap {
                // A map of objects' values: links, and null for a key with no object.
                for t in column.lists[Int(row)] { visit(column.element(t)) }
            } else if case .list(let items) = step.table.value(row, step.property) {
                for item in items { visit(item) }
            }
        } else if step.readsKind {
            visit(.string(AnyValue.kindName(of: step.table.columns[step.property]!.value(at: Int(row)))))
        } else {
            visit(step.table.columns[step.property]!.value(at: Int(row)))
        }
    }

    /// The values the path yields from a row, each once per row it is read from (links as
    /// `.object` keys). For `ANY`, `ALL`, `NONE`, `IN` and comparisons, which depend only on
    /// which values there are. A nil link on the way yields nothing for a to-many path and
    /// `.null` otherwise.
    func values(from row: Int32) -> [PropertyValue] {
        if !isToMany { return [value(from: row)] }
        var result: [PropertyValue] = []
        let last = steps[steps.count - 1]
        if toManyCount == 1 {
            for row in eachWayBeforeLast(from: row) { Self.lastValues(last, row) { value in result.append(value) } }
            return result
        }
        let rows = Self.follow(steps.dropLast(), from: [(row, 1)], merge: true)
        for (row, _) in rows { Self.lastValues(last, row) { value in result.append(value) } }
        return result
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
        if !step.mixedAccess.isEmpty {
            var value = PropertyValue.null
            Self.mixedValues(step, row) { value = $0 }
            return value
        }
        if let access = step.mapAccess {
            var value = PropertyValue.null
            Self.mapValues(step, access, row) { value = $0 }
            return step.readsKind ? .string(AnyValue.kindName(of: value)) : value
        }
        if step.readsKind {
            return .string(AnyValue.kindName(of: step.table.columns[step.property]!.value(at: Int(row))))
        }
        return step.table.columns[step.property]!.value(at: Int(row))
    }

    /// The rows of the target table that one step leads to from a row.
    static func targets(_ step: Step, _ row: Int32) -> [Int32] {
        switch step.table.columns[step.property] {
        case let link as LinkColumn:
            let t = link.targets[Int(row)]
            return t < 0 ? [] : [t]
        case let list as LinkListColumn:
            guard list.isMap else { return list.lists[Int(row)] }
            // A map of objects: the target of one key, or of every key that has one.
            if case .key(let key) = step.mapAccess {
                guard let index = keyIndex(key, in: list.keys[Int(row)]) else { return [] }
                let t = list.lists[Int(row)][index]
                return t < 0 ? [] : [t]
            }
            return list.lists[Int(row)].filter { $0 >= 0 }
        default:
            return step.table.linkingObjectsSources[step.property]?.rows[Int(row)] ?? []
        }
    }

    /// The objects a path ending at links (or `SELF`) yields from a row, each with the number of
    /// ways the path reaches it (for `SUBQUERY(…).@count`, which counts an object once per way,
    /// as a list that holds it twice counts it twice).
    func weightedObjectRows(from row: Int32) -> [Reached] {
        if toManyCount <= 1 { return Self.followEachWay(steps[...], from: [row]).map { ($0, 1) } }
        return Self.follow(steps[...], from: [(row, 1)], merge: true)
    }

    /// The values of `collection`, or of `element` from each object of `collection`, each with
    /// the number of ways it is reached: the multiset that collection operators (`@count`,
    /// `@sum`, `@avg`, `@min`, `@max`) work on.
    static func weightedValues(
        _ collection: BoundPath, element: BoundPath?, from row: Int32, _ visit: (PropertyValue, Int64) -> Void
    ) {
        let merge = collection.toManyCount + (element?.toManyCount ?? 0) > 1
        guard let element else {
            if !collection.isToMany {
                visit(collection.value(from: row), 1)
                return
            }
            let last = collection.steps[collection.steps.count - 1]
            if !merge {
                for row in collection.eachWayBeforeLast(from: row) { lastValues(last, row) { visit($0, 1) } }
                return
            }
            lastValues(last, follow(collection.steps.dropLast(), from: [(row, 1)], merge: true), visit)
            return
        }
        let objects = follow(collection.steps[...], from: [(row, 1)], merge: merge)
        if !element.isToMany {
            for (object, ways) in objects { visit(element.value(from: object), ways) }
            return
        }
        let rows = follow(element.steps.dropLast(), from: objects, merge: merge)
        lastValues(element.steps[element.steps.count - 1], rows, visit)
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
