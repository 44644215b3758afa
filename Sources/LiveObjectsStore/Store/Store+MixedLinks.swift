/// A mixed property of a table, that held a link to an object at some time.
struct MixedLinkSource: Hashable {
    /// The index of the table.
    let table: Int
    /// The index of the property.
    let property: Int
}

/// The rows of a mixed property whose values link to each object, as of a version of the
/// property's column: valid while the column is unchanged since, which a delete that clears
/// links keeps so by removing the objects it deletes.
struct MixedLinkHolders {
    /// The column's ``Column/version`` the rows are of.
    var version: UInt64
    /// For each linked object, the rows linking to it (a row once per link).
    var rowsByTarget: [RowID: [Int32]]
}

/// Links inside mixed (``AnyValue``) values: checking one when it is written, and making the
/// links to deleted objects null.
///
/// A delete looks at the mixed properties that ever held a link to a type of a deleted object
/// (`mixedLinkSources`, built from the data the first time a delete needs it, then grown as links
/// are written; it never shrinks): a store whose mixed values never held a link to that type looks
/// at nothing. For each such property it finds the rows that link to a deleted object through
/// ``MixedLinkHolders``, built by one scan of the property and kept while nothing else changes
/// the property's column, so that a run of deletes of linked objects costs one scan, then the
/// links each delete clears.
extension Store {
    /// Checks the stored form of a link in a mixed property: the type exists and is not embedded,
    /// and the object exists.
    ///
    /// - Throws: `typeMismatch` naming what is wrong.
    func checkMixedLink(_ stored: [PropertyValue], for property: Property, in table: Table)
        throws(LiveObjectsError) -> PropertyValue
    {
        func mismatch(_ why: String) -> LiveObjectsError {
            LiveObjectsError(.typeMismatch, why, objectType: table.name, property: property.name)
        }
        guard let link = MixedContainer.link(of: stored) else {
            throw mismatch("a link in an AnyValue is its marker, its type's name and its key")
        }
        guard let target = tablesByName[link.objectType] else {
            throw mismatch("an AnyValue links to an object of an unknown type '\(link.objectType)'")
        }
        guard !target.schema.isEmbedded else {
            throw mismatch("an AnyValue cannot link to an embedded object (\(link.objectType))")
        }
        guard target.row(for: link.key) != nil else {
            throw mismatch("an AnyValue links to \(link.objectType) \(link.key), which does not exist")
        }
        if mixedLinkSources != nil {
            mixedLinkSources![target.index, default: []].insert(
                MixedLinkSource(table: table.index, property: table.propertyIndex[property.name] ?? -1))
        }
        return .list(stored)
    }

    /// The mixed properties that ever held a link, by target table: found from the data the
    /// first time.
    private func linkSources() -> [Int: Set<MixedLinkSource>] {
        if let known = mixedLinkSources { return known }
        var sources: [Int: Set<MixedLinkSource>] = [:]
        for table in tables {
            for (p, property) in table.schema.properties.enumerated() where property.type == .mixed {
                let column = table.column(p)
                for row in table.liveRows {
                    Self.forEachMixedLink(in: column.value(at: Int(row)), of: property) { link in
                        if let target = tablesByName[link.objectType] {
                            sources[target.index, default: []].insert(MixedLinkSource(table: table.index, property: p))
                        }
                    }
                }
            }
        }
        mixedLinkSources = sources
        return sources
    }

    /// Sets every link in a mixed value to one of the `doomed` objects to null (logged: a
    /// rollback restores it; reported as a change of the holder's property). Deleted objects
    /// that hold such a link are left alone.
    ///
    /// - Complexity: O(*n*) in the objects of the tables whose mixed properties ever held a
    ///   link to a doomed object's type the first time, and again after another change of such
    ///   a property; then O(*k*) in the links to the doomed objects. None when no mixed property
    ///   ever held a link to their types.
    func clearMixedLinks(to doomed: Set<RowID>) {
        guard tables.contains(where: { $0.hasMixedProperty }) else { return }
        let sources = linkSources()
        let doomedTables = Set(doomed.map(\.table))
        var scanned: Set<MixedLinkSource> = []
        for t in doomedTables {
            for source in sources[t] ?? [] where source.property >= 0 && scanned.insert(source).inserted {
                let table = tables[source.table]
                let column = table.column(source.property)
                let property = table.schema.properties[source.property]
                var holders = linkHolders(source)
                var rows = Set<Int32>()
                for target in doomed {
                    for row in holders.rowsByTarget.removeValue(forKey: target) ?? [] { rows.insert(row) }
                }
                for row in rows.sorted() where !doomed.contains(RowID(table, row)) {
                    let cleared = Self.clearingMixedLinks(in: column.value(at: Int(row)), of: property) { link in
                        guard let target = tablesByName[link.objectType], let r = target.row(for: link.key) else {
                            return false
                        }
                        return doomed.contains(RowID(target, r))
                    }
                    if let cleared { setValue(cleared, table, row, source.property) }
                }
                // The column changed only by the links just cleared, which the holders no longer list.
                holders.version = column.version
                mixedLinkHolders[source] = holders
            }
        }
    }

    /// The rows of a mixed property that link to each object: kept from the last delete while
    /// the column is unchanged, else found by a scan of its live rows.
    private func linkHolders(_ source: MixedLinkSource) -> MixedLinkHolders {
        let table = tables[source.table]
        let column = table.column(source.property)
        if let kept = mixedLinkHolders[source], kept.version == column.version { return kept }
        let property = table.schema.properties[source.property]
        var rowsByTarget: [RowID: [Int32]] = [:]
        for row in table.liveRows {
            Self.forEachMixedLink(in: column.value(at: Int(row)), of: property) { link in
                if let target = tablesByName[link.objectType], let r = target.row(for: link.key) {
                    rowsByTarget[RowID(target, r), default: []].append(row)
                }
            }
        }
        return MixedLinkHolders(version: column.version, rowsByTarget: rowsByTarget)
    }

    /// Checks every link of the mixed values loaded from a file: its type exists and is not
    /// embedded, and its object exists.
    ///
    /// - Throws: `corruptFile` for the first link that fails, naming the holder.
    package func checkLoadedMixedLinks() throws(LiveObjectsError) {
        for table in tables where table.hasMixedProperty {
            for (p, property) in table.schema.properties.enumerated() where property.type == .mixed {
                let column = table.column(p)
                for row in table.liveRows {
                    var failure: String?
                    Self.forEachMixedLink(in: column.value(at: Int(row)), of: property) { link in
                        guard failure == nil else { return }
                        guard let target = tablesByName[link.objectType], !target.schema.isEmbedded else {
                            failure = "links to an object of an unknown type '\(link.objectType)'"
                            return
                        }
                        if target.row(for: link.key) == nil {
                            failure = "links to \(link.objectType) \(link.key), which does not exist"
                        }
                    }
                    if let failure {
                        throw LiveObjectsError(
                            .corruptFile, "the AnyValue of \(table.key(row)) \(failure)", objectType: table.name,
                            property: property.name, primaryKey: table.primaryKey(of: row))
                    }
                }
            }
        }
    }
}

extension Store {
    /// Calls `body` with every link of the stored value of a mixed property: of its value, or of
    /// each element of a list or set, or of each value of a map.
    package static func forEachMixedLink(
        in value: PropertyValue, of property: Property, _ body: (AnyValue.Link) -> Void
    ) {
        guard property.isList else { return MixedContainer.forEachLink(in: value, body) }
        guard case .list(let elements) = value else { return }
        for element in elements {
            if property.isMap {
                if case .list(let pair) = element, pair.count == 2 { MixedContainer.forEachLink(in: pair[1], body) }
            } else {
                MixedContainer.forEachLink(in: element, body)
            }
        }
    }

    /// The stored value of a mixed property with every link for which `isGone` holds made null
    /// (for a list's element or a map's value, and at any depth inside one); a set loses a member
    /// that is such a link, and keeps one member of those that become equal. Nil when no link
    /// was gone.
    static func clearingMixedLinks(
        in value: PropertyValue, of property: Property, where isGone: (AnyValue.Link) -> Bool
    ) -> PropertyValue? {
        guard property.isList else { return MixedContainer.clearingLinks(in: value, where: isGone) }
        guard case .list(let elements) = value else { return nil }
        var result: [PropertyValue] = []
        result.reserveCapacity(elements.count)
        var changed = false
        for element in elements {
            if property.isMap, case .list(let pair) = element, pair.count == 2,
                let cleared = MixedContainer.clearingLinks(in: pair[1], where: isGone)
            {
                result.append(.list([pair[0], cleared]))
                changed = true
            } else if !property.isMap, let cleared = MixedContainer.clearingLinks(in: element, where: isGone) {
                // A set loses a member that was a link to a gone object; a list keeps null.
                if !(property.isSet && MixedContainer.link(ofValue: element) != nil) { result.append(cleared) }
                changed = true
            } else {
                result.append(element)
            }
        }
        guard changed else { return nil }
        return .list(property.isSet ? Store.distinctMembers(result, mixed: true) : result)
    }
}

extension Table {
    /// Whether the table has a mixed (``AnyValue``) property.
    var hasMixedProperty: Bool { schema.properties.contains { $0.type == .mixed } }
}
